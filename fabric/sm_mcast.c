/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The SM programming multicast forwarding into the ports (sa_mcast.h,
 * mgmt/mcast_ports.h): the way a real SM Sets MulticastForwardingTable
 * blocks on switches (IBA 14.2.5.12), softib-sm Sets SoftibMulticastPorts
 * on the member ports, whose senders fan packets out themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fabric/sa_mcast.h"
#include "mgmt/mcast_ports.h"
#include "wire/smp.h"

static bool port_live(const struct sib_sm_port *p)
{
	return p && p->state == SIB_SMP_ACTIVE;
}

/* One LID-routed SubnSet(SoftibMulticastPorts) to p with the subnet's
 * M_Key (as every Set the SM sends); returns its TID. */
static uint64_t send_block(struct sib_sm *sm, struct sib_sm_port *p, uint16_t mlid,
			   uint16_t block, const struct sib_mcast_ports *b)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	smp.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	smp.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp.hdr.ClassVersion = IB_SMP_CLASS_VERSION;
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_SET);
	smp.hdr.TransactionID = sm->tid_next++;
	smp.hdr.AttributeID = SIB_SMP_ATTR_MULTICAST_PORTS;
	smp.hdr.AttributeModifier = sib_mcast_ports_mod(mlid, block);
	smp.M_Key = p->port_m_key ? p->port_m_key : sm->m_key;
	sib_mcast_ports_encode(b, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, p->lid, sm->lid);
	sib_mgmt_send(sm->link, &a, mad, &p->ep);
	sm->act_count++;
	sm->sa->mcast->program_sets++;
	return smp.hdr.TransactionID;
}

/* The ports that receive the group: FullMember and NonMember, live. */
static unsigned receivers(struct sib_sm *sm, const struct sib_sa_mgroup *g,
			  struct sib_endpoint *eps, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < g->nmembers && n < max; i++) {
		struct sib_sm_port *p;

		if (!(g->members[i].JoinState & (IB_MCR_JOIN_FULL_MEMBER | IB_MCR_JOIN_NON_MEMBER)))
			continue;
		p = sib_sm_port_by_guid(sm, g->members[i].port_guid);
		if (port_live(p))
			eps[n++] = p->ep;
	}
	return n;
}

static void program_member(struct sib_sm *sm, struct sib_sa_mgroup *g, struct sib_sa_mcmember *m,
			   const struct sib_endpoint *eps, unsigned n)
{
	struct sib_sm_port *p = sib_sm_port_by_guid(sm, m->port_guid);
	unsigned blocks = n ? (n + SIB_MCAST_PORTS_PER_BLOCK - 1) / SIB_MCAST_PORTS_PER_BLOCK : 1;

	if (!port_live(p))
		return;
	for (unsigned b = 0; b < blocks; b++) {
		struct sib_mcast_ports blk = { .Generation = (uint32_t)g->generation,
					       .NumPorts = (uint16_t)n };

		for (unsigned i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++)
			if (b * SIB_MCAST_PORTS_PER_BLOCK + i < n)
				blk.ep[i] = eps[b * SIB_MCAST_PORTS_PER_BLOCK + i];
		m->tid = send_block(sm, p, g->rec.MLID, (uint16_t)b, &blk);
	}
	m->pending_gen = g->generation;
	m->resend_ns = sm->now_ns + SIB_SM_TIMEOUT_NS;
}

void sib_sm_mcast_program(struct sib_sm *sm)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	struct sib_endpoint *eps;

	if (!mc)
		return;
	eps = malloc(SIB_MCAST_PORTS_MAX * sizeof(*eps));
	if (!eps)
		return;
	for (unsigned i = 0; i < mc->ngroups; i++) {
		struct sib_sa_mgroup *g = &mc->groups[i];
		unsigned n = 0;
		bool counted = false;

		for (unsigned k = 0; k < g->nmembers; k++) {
			struct sib_sa_mcmember *m = &g->members[k];

			if (m->programmed_gen == g->generation)
				continue;
			if (m->pending_gen == g->generation && m->resend_ns > sm->now_ns)
				continue;
			if (!counted) {
				n = receivers(sm, g, eps, SIB_MCAST_PORTS_MAX);
				counted = true;
			}
			program_member(sm, g, m, eps, n);
		}
	}
	free(eps);
	sib_sa_mcast_answer_waiting(sm);
	for (unsigned i = 0; i < mc->ndeparted;) {
		struct sib_sa_mcast_departed *d = &mc->departed[i];
		struct sib_sm_port *p = sib_sm_port_by_guid(sm, d->port_guid);

		if (d->resend_ns > sm->now_ns) {
			i++;
			continue;
		}
		if (!port_live(p) || !d->tries) {
			mc->departed[i] = mc->departed[--mc->ndeparted];
			continue;
		}
		struct sib_mcast_ports blk = { .Generation = 0, .NumPorts = 0 };

		d->tid = send_block(sm, p, d->mlid, 0, &blk);
		d->tries--;
		d->resend_ns = sm->now_ns + SIB_SM_TIMEOUT_NS;
		i++;
	}
}

void sib_sm_mcast_resp_rx(struct sib_sm *sm, const uint8_t *mad, const struct sib_endpoint *from)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	struct sib_mcast_ports b;
	struct ib_smp smp;

	ib_smp_decode(&smp, mad);
	if (!mc) {
		sm->resp_misrouted++;
		return;
	}
	sib_mcast_ports_decode(&b, smp.SMPData);
	for (unsigned i = 0; i < mc->ngroups; i++) {
		struct sib_sa_mgroup *g = &mc->groups[i];

		for (unsigned k = 0; k < g->nmembers; k++) {
			struct sib_sa_mcmember *m = &g->members[k];
			struct sib_sm_port *p;

			if (m->tid != smp.hdr.TransactionID)
				continue;
			p = sib_sm_port_by_guid(sm, m->port_guid);
			/* Believed only from where the Set went (sm.h). */
			if (!p || !sib_endpoint_equal(&p->ep, from)) {
				sm->resp_misrouted++;
				return;
			}
			if (!smp.hdr.Status && b.Installed &&
			    b.Generation == (uint32_t)m->pending_gen &&
			    m->programmed_gen != m->pending_gen) {
				m->programmed_gen = m->pending_gen;
				mc->programmed++;
				sib_sa_mcast_answer_waiting(sm);
			}
			return;
		}
	}
	for (unsigned i = 0; i < mc->ndeparted; i++) {
		struct sib_sa_mcast_departed *d = &mc->departed[i];
		struct sib_sm_port *p = sib_sm_port_by_guid(sm, d->port_guid);

		if (d->tid != smp.hdr.TransactionID || !p || !sib_endpoint_equal(&p->ep, from))
			continue;
		if (!smp.hdr.Status)
			mc->departed[i] = mc->departed[--mc->ndeparted];
		return;
	}
	/* An answer to a Set that was superseded since: nothing to do. */
}

uint64_t sib_sm_mcast_next_deadline(const struct sib_sm *sm)
{
	const struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	uint64_t d = 0;

	if (!mc)
		return 0;
	for (unsigned i = 0; i < mc->ngroups; i++)
		for (unsigned k = 0; k < mc->groups[i].nmembers; k++) {
			const struct sib_sa_mcmember *m = &mc->groups[i].members[k];

			if (m->programmed_gen != mc->groups[i].generation && m->resend_ns &&
			    (!d || m->resend_ns < d))
				d = m->resend_ns;
		}
	for (unsigned i = 0; i < mc->ndeparted; i++)
		if (!d || mc->departed[i].resend_ns < d)
			d = mc->departed[i].resend_ns ? mc->departed[i].resend_ns : 1;
	for (unsigned i = 0; i < mc->nwaits; i++)
		if (!d || mc->waits[i].deadline_ns < d)
			d = mc->waits[i].deadline_ns;
	return d;
}

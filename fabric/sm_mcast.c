/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The SM programming multicast forwarding into the ports (sa_mcast.h,
 * mgmt/mcast_ports.h): the way a real SM Sets MulticastForwardingTable
 * blocks on switches (IBA 14.2.5.12), softib-sm Sets SoftibMulticastPorts
 * on the member ports, whose senders fan packets out themselves.
 *
 * Each Set is a send of the SM's MAD layer (mgmt/mad_send.h), posted with
 * the MLID as its context: the answer comes back to the block's handler
 * from where the Set went, and a newer list for the port ends the older
 * one's Sets still out (sib_mad_cancel_to).
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fabric/sa_mcast.h"
#include "mgmt/mad_send.h"
#include "mgmt/mcast_ports.h"
#include "wire/smp.h"

static bool port_live(const struct sib_sm_port *p)
{
	return p && p->state == SIB_SMP_ACTIVE;
}

static void *mlid_context(uint16_t mlid)
{
	return (void *)(uintptr_t)mlid;
}

/* One LID-routed SubnSet(SoftibMulticastPorts) to p with the subnet's
 * M_Key (as every Set the SM sends), sent again after SIB_SM_TIMEOUT_NS
 * up to retries times. */
static void send_block(struct sib_sm *sm, struct sib_sm_port *p, uint16_t mlid, uint16_t block,
		       const struct sib_mcast_ports *b, unsigned retries, sib_mad_send_fn fn)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	sib_mad_request_hdr(&smp.hdr, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_SMP_CLASS_VERSION,
			    IB_MAD_METHOD_SET, SIB_SMP_ATTR_MULTICAST_PORTS,
			    sib_mcast_ports_mod(mlid, block));
	smp.M_Key = p->port_m_key ? p->port_m_key : sm->m_key;
	sib_mcast_ports_encode(b, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, p->lid, sm->lid);
	sm->act_count++;
	sm->sa->mcast->program_sets++;
	if (sib_sm_post(sm, &a, &p->ep, mad, retries, fn, mlid_context(mlid), NULL))
		sib_dbg("softib-sm: SubnSet(SoftibMulticastPorts) MLID 0x%04x not sent", mlid);
}

/* The Set a send carried: its MLID, block and list. */
static void sent_block(const struct sib_mad_send_wc *wc, uint16_t *mlid, uint16_t *block,
		       struct sib_mcast_ports *b)
{
	struct ib_smp smp;

	ib_smp_decode(&smp, wc->mad);
	*mlid = (uint16_t)(smp.hdr.AttributeModifier & 0xffff);
	*block = (uint16_t)(smp.hdr.AttributeModifier >> 16);
	sib_mcast_ports_decode(b, smp.SMPData);
}

/* The member of MLID mlid whose Sets went to ep. */
static struct sib_sa_mcmember *member_at(struct sib_sm *sm, uint16_t mlid,
					 const struct sib_endpoint *ep)
{
	struct sib_sa_mgroup *g = sib_sa_mcast_by_mlid(sm, mlid);

	for (unsigned k = 0; g && k < g->nmembers; k++)
		if (sib_endpoint_equal(&g->members[k].ep, ep))
			return &g->members[k];
	return NULL;
}

/*
 * A block of a member's list: answered Installed (the port has the whole
 * list), answered Busy or not Installed for the last block (sent again
 * after its wait), or ended unanswered: the member is programmed again.
 */
static enum sib_mad_verdict block_answered(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_sm *sm = owner;
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	struct sib_sa_mcmember *m;
	struct sib_mcast_ports sent, got;
	uint16_t mlid, block, blocks;
	struct ib_smp smp;

	sent_block(wc, &mlid, &block, &sent);
	m = mc ? member_at(sm, mlid, wc->dst) : NULL;
	if (wc->status == SIB_MAD_RESENT) {
		sm->act_count++;
		if (mc)
			mc->program_sets++;
		return SIB_MAD_DONE;
	}
	if (!m || (uint32_t)m->pending_gen != sent.Generation)
		return SIB_MAD_DONE; /* superseded, or the member left */
	if (wc->status != SIB_MAD_RESPONSE) {
		m->pending_gen = 0; /* canceled with its port: programmed anew */
		return SIB_MAD_DONE;
	}
	ib_smp_decode(&smp, wc->resp->mad);
	sib_mcast_ports_decode(&got, smp.SMPData);
	blocks = sent.NumPorts ? (sent.NumPorts + SIB_MCAST_PORTS_PER_BLOCK - 1) /
					 SIB_MCAST_PORTS_PER_BLOCK
			       : 1;
	if (smp.hdr.Status || (block + 1 == blocks && !got.Installed))
		return SIB_MAD_MORE;
	if (got.Installed && got.Generation == sent.Generation &&
	    m->programmed_gen != m->pending_gen) {
		m->programmed_gen = m->pending_gen;
		mc->programmed++;
		sib_sa_mcast_answer_waiting(sm);
	}
	return SIB_MAD_DONE;
}

static void program_member(struct sib_sm *sm, struct sib_sa_mgroup *g, struct sib_sa_mcmember *m,
			   const struct sib_endpoint *eps, unsigned n)
{
	struct sib_sm_port *p = sib_sm_port_by_guid(sm, m->port_guid);
	unsigned blocks = n ? (n + SIB_MCAST_PORTS_PER_BLOCK - 1) / SIB_MCAST_PORTS_PER_BLOCK : 1;

	if (!port_live(p))
		return;
	/* Only the newest list may land: the older one's Sets end. */
	sib_mad_cancel_to(&sm->mads, &p->ep, mlid_context(g->rec.MLID));
	m->pending_gen = g->generation;
	m->ep = p->ep;
	for (unsigned b = 0; b < blocks; b++) {
		struct sib_mcast_ports blk = { .Generation = (uint32_t)g->generation,
					       .NumPorts = (uint16_t)n };

		for (unsigned i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++)
			if (b * SIB_MCAST_PORTS_PER_BLOCK + i < n)
				blk.ep[i] = eps[b * SIB_MCAST_PORTS_PER_BLOCK + i];
		send_block(sm, p, g->rec.MLID, (uint16_t)b, &blk, SIB_MAD_RETRY_FOREVER,
			   block_answered);
	}
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

/* A port that left was told (or tried SIB_SM_RETRIES times, or is gone):
 * its entry goes.  Busy: told again after the wait. */
static enum sib_mad_verdict departed_answered(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_sm *sm = owner;
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	struct sib_mcast_ports sent;
	uint16_t mlid, block;
	struct ib_smp smp;

	if (wc->status == SIB_MAD_RESENT) {
		sm->act_count++;
		if (mc)
			mc->program_sets++;
		return SIB_MAD_DONE;
	}
	if (wc->status == SIB_MAD_RESPONSE) {
		ib_smp_decode(&smp, wc->resp->mad);
		if (smp.hdr.Status)
			return SIB_MAD_MORE;
	}
	sent_block(wc, &mlid, &block, &sent);
	for (unsigned i = 0; mc && i < mc->ndeparted; i++) {
		struct sib_sa_mcast_departed *d = &mc->departed[i];

		if (d->sent && d->mlid == mlid && sib_endpoint_equal(&d->ep, wc->dst)) {
			mc->departed[i] = mc->departed[--mc->ndeparted];
			break;
		}
	}
	return SIB_MAD_DONE;
}

static void tell_departed(struct sib_sm *sm, struct sib_sa_mcast *mc)
{
	for (unsigned i = 0; i < mc->ndeparted;) {
		struct sib_sa_mcast_departed *d = &mc->departed[i];
		struct sib_sm_port *p = sib_sm_port_by_guid(sm, d->port_guid);
		struct sib_mcast_ports blk = { .Generation = 0, .NumPorts = 0 };

		if (d->sent) {
			i++;
			continue;
		}
		if (!port_live(p)) {
			mc->departed[i] = mc->departed[--mc->ndeparted];
			continue;
		}
		d->sent = true;
		d->ep = p->ep;
		send_block(sm, p, d->mlid, 0, &blk, SIB_SM_RETRIES - 1, departed_answered);
		i++;
	}
}

void sib_sm_mcast_program(struct sib_sm *sm)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	struct sib_endpoint *eps;

	/* On a fabric the switches' MFTs carry the groups (mft_plan.h),
	 * written by the fabric's sweeps (sm_fabric.c). */
	if (!mc || sm->fabric)
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

			/* Installed, or its Sets are out (until answered). */
			if (m->programmed_gen == g->generation || m->pending_gen == g->generation)
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
	tell_departed(sm, mc);
}

uint64_t sib_sm_mcast_next_deadline(const struct sib_sm *sm)
{
	const struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;
	uint64_t d = 0;

	for (unsigned i = 0; mc && i < mc->nwaits; i++)
		if (!d || mc->waits[i].deadline_ns < d)
			d = mc->waits[i].deadline_ns;
	return d;
}

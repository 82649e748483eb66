/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/sa.h"
#include "fabric/partitions.h"
#include "fabric/sa_mcast.h"
#include "mgmt/mcast_ports.h"
#include "fabric/sm.h"
#include "base/log.h"
#include "mgmt/mad_send.h"
#include "wire/bitfield.h"
#include "wire/packet.h"
#include "wire/smp.h"

#define SM_MAX_PORTS 4096

static char *guid_str(uint64_t guid, char *buf)
{
	snprintf(buf, 20, "0x%016llx", (unsigned long long)guid);
	return buf;
}

void sib_sm_port_gid(const struct sib_sm_port *p, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	for (int i = 0; i < 8; i++)
		gid[8 + i] = (uint8_t)(p->guid >> (56 - 8 * i));
}

static bool lid_is_used(const struct sib_sm *sm, uint16_t lid)
{
	return (sm->lid_used[lid / 8] >> (lid % 8)) & 1;
}

static void lid_mark(struct sib_sm *sm, uint16_t lid, bool used)
{
	if (used)
		sm->lid_used[lid / 8] |= (uint8_t)(1u << (lid % 8));
	else
		sm->lid_used[lid / 8] &= (uint8_t)~(1u << (lid % 8));
}

/* ---------------------------------------------------------------- the MAD layer */

static bool sm_rx(void *owner, const struct sib_mad_recv *r);
static bool sa_rx(void *owner, const struct sib_mad_recv *r);

/* SMInfo Gets and traps on QP0 (every version: SMInfo answers a wrong one
 * with BAD_VERSION); directed-route SMPs only come back as responses. */
static const struct sib_mad_agent sm_agent = {
	.name = "SM",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED,
	.methods = SIB_MAD_METHOD(IB_MAD_METHOD_GET) | SIB_MAD_METHOD(IB_MAD_METHOD_TRAP),
	.rx = sm_rx,
};
static const struct sib_mad_agent sm_dr_agent = {
	.name = "SM",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
	.rx = sm_rx,
};
/* The SA answers every method and version, with a status where it must
 * (sa.c), and hears the requesters' RMPP ACKs (sa_rmpp.c). */
static const struct sib_mad_agent sa_agent = {
	.name = "SA",
	.qp = SIB_QP1,
	.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
	.methods = SIB_MAD_METHODS_ALL,
	.rx = sa_rx,
};

static uint64_t sm_clock(void *owner)
{
	return ((struct sib_sm *)owner)->now_ns;
}

static int sm_xmit(void *owner, unsigned port_num, const struct sib_mad_addr *a,
		   const uint8_t *mad, const struct sib_endpoint *dst)
{
	(void)port_num; /* the SM has one port */
	return sib_mgmt_send(((struct sib_sm *)owner)->link, a, mad, dst);
}

/* No timer: sib_sm_step runs the layer, sib_sm_next_deadline waits for it. */
static const struct sib_mad_ops sm_mad_ops = {
	.now = sm_clock,
	.xmit = sm_xmit,
};

int sib_sm_post(struct sib_sm *sm, const struct sib_mad_addr *a, const struct sib_endpoint *dst,
		const uint8_t *mad, unsigned retries, sib_mad_send_fn fn, void *context,
		uint64_t *tid)
{
	struct sib_mad_send_req req = {
		.port_num = 1,
		.addr = *a,
		.dst = *dst,
		.mad = mad,
		.timeout_ns = SIB_SM_TIMEOUT_NS,
		.retries = retries,
		.fn = fn,
		.context = context,
	};

	return sib_mad_post(&sm->mads,
			    mad[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE ? &sm_dr_agent : &sm_agent,
			    &req, tid);
}

int sib_sm_init(struct sib_sm *sm, struct sib_link *link, uint64_t guid, uint64_t now_ns)
{
	memset(sm, 0, sizeof(*sm));
	sm->ports = calloc(SM_MAX_PORTS, sizeof(*sm->ports));
	if (!sm->ports)
		return -ENOMEM;
	sm->cap = SM_MAX_PORTS;
	sm->link = link;
	sm->lid = SIB_SM_LID;
	sm->guid = guid;
	sm->sweep_ns = SIB_SM_SWEEP_NS_DEFAULT;
	sm->now_ns = now_ns;
	sm->next_sweep_ns = now_ns + sm->sweep_ns;
	sib_mad_layer_init(&sm->mads, sm, &sm_mad_ops);
	if (sib_mad_register(&sm->mads, &sm_agent) || sib_mad_register(&sm->mads, &sm_dr_agent) ||
	    sib_mad_register(&sm->mads, &sa_agent)) {
		sib_mad_layer_fini(&sm->mads);
		free(sm->ports);
		sm->ports = NULL;
		return -ENOMEM;
	}
	sm->state = IB_SM_STATE_MASTER; /* alone, until a peer is added */
	lid_mark(sm, 0, true);
	lid_mark(sm, sm->lid, true);
	sm->next_lid = sm->lid + 1;
	return 0;
}

int sib_sm_add_peer(struct sib_sm *sm, const struct sib_endpoint *ep)
{
	if (sm->npeers == SIB_SM_MAX_PEERS)
		return -ENOSPC;
	memset(&sm->peers[sm->npeers], 0, sizeof(sm->peers[0]));
	sm->peers[sm->npeers++].ep = *ep;
	sm->state = IB_SM_STATE_DISCOVERING;
	return 0;
}

const char *sib_sm_state_str(uint8_t state)
{
	switch (state) {
	case IB_SM_STATE_MASTER:
		return "MASTER";
	case IB_SM_STATE_STANDBY:
		return "STANDBY";
	case IB_SM_STATE_DISCOVERING:
		return "DISCOVERING";
	default:
		return "NOT_ACTIVE";
	}
}

void sib_sm_fini(struct sib_sm *sm)
{
	sib_mad_layer_fini(&sm->mads); /* the requests out end first: they name ports */
	sib_sa_mcast_free(sm);
	sib_sa_state_free(sm);
	free(sm->ports);
	free(sm->memory);
	sm->ports = NULL;
	sm->memory = NULL;
}

unsigned sib_sm_active_ports(const struct sib_sm *sm)
{
	unsigned n = 0;

	for (unsigned i = 0; i < sm->nports; i++)
		n += sm->ports[i].state == SIB_SMP_ACTIVE;
	return n;
}

unsigned sib_sm_known_ports(const struct sib_sm *sm)
{
	unsigned n = 0;

	for (unsigned i = 0; i < sm->nports; i++)
		n += sm->ports[i].state != SIB_SMP_FREE;
	return n;
}

/*
 * Any port holding the LID, as sib_sm_port_by_guid: the SA decides what is
 * reachable (sa.c port_reachable).  Only ACTIVE here made the SA answer "no
 * such LID" for a port told ACTIVE whose GetResp was still on its way,
 * though the port already counted itself ACTIVE and its peer had its LID.
 */
struct sib_sm_port *sib_sm_port_by_lid(struct sib_sm *sm, uint16_t lid)
{
	for (unsigned i = 0; i < sm->nports && lid; i++)
		if (sm->ports[i].state != SIB_SMP_FREE && sm->ports[i].lid == lid)
			return &sm->ports[i];
	return NULL;
}

struct sib_sm_port *sib_sm_port_by_guid(struct sib_sm *sm, uint64_t guid)
{
	for (unsigned i = 0; i < sm->nports && guid; i++)
		if (sm->ports[i].state != SIB_SMP_FREE && sm->ports[i].guid == guid)
			return &sm->ports[i];
	return NULL;
}

static struct sib_sm_port *port_by_ep(struct sib_sm *sm, const struct sib_endpoint *ep)
{
	for (unsigned i = 0; i < sm->nports; i++)
		if (sm->ports[i].state != SIB_SMP_FREE && sib_endpoint_equal(&sm->ports[i].ep, ep))
			return &sm->ports[i];
	return NULL;
}

static struct sib_sm_port *port_new(struct sib_sm *sm, const struct sib_endpoint *ep)
{
	struct sib_sm_port *p = NULL;

	for (unsigned i = 0; i < sm->nports && !p; i++)
		if (sm->ports[i].state == SIB_SMP_FREE)
			p = &sm->ports[i];
	if (!p && sm->nports < sm->cap)
		p = &sm->ports[sm->nports++];
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->ep = *ep;
	return p;
}

static void memory_forget_lid(struct sib_sm *sm, uint16_t lid)
{
	for (unsigned i = 0; i < sm->nmemory; i++)
		if (sm->memory[i].lid == lid) {
			sm->memory[i] = sm->memory[--sm->nmemory];
			return; /* a LID is kept for one GUID at most */
		}
}

static uint16_t memory_lid(const struct sib_sm *sm, uint64_t guid)
{
	for (unsigned i = 0; i < sm->nmemory; i++)
		if (sm->memory[i].guid == guid)
			return sm->memory[i].lid;
	return 0;
}

static bool memory_has_lid(const struct sib_sm *sm, uint16_t lid)
{
	for (unsigned i = 0; i < sm->nmemory; i++)
		if (sm->memory[i].lid == lid)
			return true;
	return false;
}

static void memory_keep(struct sib_sm *sm, uint64_t guid, uint16_t lid)
{
	if (!guid || !lid)
		return;
	for (unsigned i = 0; i < sm->nmemory; i++)
		if (sm->memory[i].guid == guid) {
			sm->memory[i].lid = lid;
			return;
		}
	if (sm->nmemory >= SIB_SM_MEMORY_MAX) {
		/* The longest-remembered port gives its reservation up. */
		memmove(sm->memory, sm->memory + 1, (sm->nmemory - 1) * sizeof(*sm->memory));
		sm->nmemory--;
	}
	if (sm->nmemory == sm->memory_cap) {
		unsigned cap = sm->memory_cap ? sm->memory_cap * 2 : 64;
		struct sib_sm_lid_memory *m = realloc(sm->memory, cap * sizeof(*m));

		if (!m)
			return; /* only a preference is lost */
		sm->memory = m;
		sm->memory_cap = cap;
	}
	sm->memory[sm->nmemory++] = (struct sib_sm_lid_memory){ guid, lid };
}

/* The LID a port reports (PortInfo:LID) is its own when it is a unicast
 * LID that no other live port holds: its peers use it now. */
static bool lid_claimable(const struct sib_sm *sm, uint16_t lid)
{
	return lid && lid != sm->lid && lid <= SIB_LID_UNICAST_MAX && !lid_is_used(sm, lid);
}

/* A LID for guid: the one it reports when it can have it, else its old one
 * when free, else a fresh one, preferring LIDs nobody had before (so a
 * departed port can come back to its own). */
static uint16_t lid_alloc(struct sib_sm *sm, uint64_t guid, uint16_t reported)
{
	uint16_t lid = reported;

	if (lid_claimable(sm, lid))
		goto take;
	lid = memory_lid(sm, guid);
	if (lid && !lid_is_used(sm, lid))
		goto take;
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned n = 0; n < SIB_LID_UNICAST_MAX; n++) {
			lid = sm->next_lid;
			sm->next_lid = sm->next_lid >= SIB_LID_UNICAST_MAX ? 1 : sm->next_lid + 1;
			if (!lid_is_used(sm, lid) && (pass || !memory_has_lid(sm, lid)))
				goto take;
		}
	}
	return 0;
take:
	lid_mark(sm, lid, true);
	memory_forget_lid(sm, lid);
	sm->lid_changes++;
	return lid;
}

void sib_sm_remember_lid(struct sib_sm *sm, uint64_t guid, uint16_t lid)
{
	if (!guid || !lid || lid > SIB_LID_UNICAST_MAX || lid == sm->lid || lid_is_used(sm, lid) ||
	    memory_has_lid(sm, lid))
		return;
	memory_keep(sm, guid, lid);
}

void sib_sm_lids_foreach(const struct sib_sm *sm, sib_sm_lid_fn fn, void *arg)
{
	for (unsigned i = 0; i < sm->nports; i++)
		if (sm->ports[i].state != SIB_SMP_FREE && sm->ports[i].guid && sm->ports[i].lid)
			fn(arg, sm->ports[i].guid, sm->ports[i].lid);
	for (unsigned i = 0; i < sm->nmemory; i++)
		fn(arg, sm->memory[i].guid, sm->memory[i].lid);
}

static void port_free(struct sib_sm *sm, struct sib_sm_port *p)
{
	/* What is still out to it ends: its configuration step, the
	 * multicast lists on their way (mgmt/mad_send.h). */
	if (p->state != SIB_SMP_FREE)
		sib_mad_cancel_to(&sm->mads, &p->ep, SIB_MAD_ANY);
	if (p->lid) {
		memory_keep(sm, p->guid, p->lid);
		lid_mark(sm, p->lid, false);
	}
	memset(p, 0, sizeof(*p));
}

static enum sib_mad_verdict port_answered(void *owner, const struct sib_mad_send_wc *wc);

/* Sends SMP (attr, mod, data) to port p, at most `tries` times, as p's one
 * request out (one still out ends: its answer would pass for this one's). */
static void send_smp(struct sib_sm *sm, struct sib_sm_port *p, bool directed, uint8_t method,
		     uint16_t attr, uint32_t mod, const uint8_t *data, unsigned tries)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;

	/* The port's M_Key: ours, or the one it still holds from an SM whose
	 * lease ran out (read at ProtectBits 0) until our Set replaces it. */
	uint64_t m_key = p->port_m_key ? p->port_m_key : sm->m_key;

	if (p->tid)
		sib_mad_cancel(&sm->mads, p->tid, p);
	p->tid = 0;
	sm->act_count++;
	if (directed) {
		struct ib_dr_smp dr;

		memset(&dr, 0, sizeof(dr));
		dr.BaseVersion = IB_MAD_BASE_VERSION;
		dr.MgmtClass = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
		dr.ClassVersion = IB_SMP_CLASS_VERSION;
		dr.Method = method & 0x7f;
		/* One hop out of the SM's port 1, already taken (IBA 14.2.2.2:
		 * the SM's SMI advanced HopPointer to 1 as it sent). */
		dr.HopCount = 1;
		dr.HopPointer = 1;
		dr.InitialPath[1] = 1;
		dr.AttributeID = attr;
		dr.AttributeModifier = mod;
		dr.M_Key = m_key;
		dr.DrSLID = SIB_LID_PERMISSIVE;
		dr.DrDLID = SIB_LID_PERMISSIVE;
		if (data)
			memcpy(dr.SMPData, data, IB_SMP_DATA_BYTES);
		ib_dr_smp_encode(&dr, mad);
		sib_mad_addr_init(&a, SIB_QP0, SIB_LID_PERMISSIVE, SIB_LID_PERMISSIVE);
	} else {
		struct ib_smp smp;

		memset(&smp, 0, sizeof(smp));
		sib_mad_request_hdr(&smp.hdr, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_SMP_CLASS_VERSION,
				    method, attr, mod);
		smp.M_Key = m_key;
		if (data)
			memcpy(smp.SMPData, data, IB_SMP_DATA_BYTES);
		ib_smp_encode(&smp, mad);
		sib_mad_addr_init(&a, SIB_QP0, p->lid, sm->lid);
	}
	sib_sm_post(sm, &a, &p->ep, mad, tries - 1, port_answered, p, &p->tid);
}

/* rereg: ClientReregister (IBA 14.4.11), for a port that was ACTIVE
 * before this SM configured it (the SM restarted, or dropped it): the SA
 * here does not hold what the port registered, so the port registers it
 * again (its ServiceRecords, its multicast memberships). */
static void set_port_info(struct sib_sm *sm, struct sib_sm_port *p, bool directed,
			  uint8_t state, bool rereg)
{
	struct ib_port_info pi;
	uint8_t data[IB_SMP_DATA_BYTES];

	memset(&pi, 0, sizeof(pi));
	memset(data, 0, sizeof(data));
	pi.LID = p->lid;
	pi.MasterSMLID = sm->lid;
	pi.MasterSMSL = 0;
	pi.PortState = state;
	pi.SubnetTimeOut = SIB_SM_SUBNET_TIMEOUT;
	pi.NeighborMTU = p->mtu_cap;
	pi.M_Key = sm->m_key;
	pi.M_KeyProtectBits = sm->protect_bits;
	pi.M_KeyLeasePeriod = sm->lease_period;
	pi.ClientReregister = rereg;
	ib_port_info_encode(&pi, data);
	send_smp(sm, p, directed, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data,
		 SIB_SM_RETRIES);
}

/* The port's P_Key table from the partitions (IBA 10.9.2: the SM sets
 * the tables; partitions.h says which entries a port gets). */
static struct sib_partitions dflt_partitions;

static void default_partitions_init(void)
{
	sib_partitions_default(&dflt_partitions);
}

const struct sib_partitions *sib_sm_partitions(const struct sib_sm *sm)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (sm->partitions)
		return sm->partitions;
	pthread_once(&once, default_partitions_init);
	return &dflt_partitions;
}

static void set_pkeys(struct sib_sm *sm, struct sib_sm_port *p, unsigned tries)
{
	struct ib_p_key_table pt;
	uint16_t t[SIB_MAX_PKEYS];
	uint8_t data[IB_SMP_DATA_BYTES];
	char g[20];
	unsigned n;

	n = sib_partitions_table(sib_sm_partitions(sm), p->guid, t, SIB_MAX_PKEYS);
	if (n > SIB_MAX_PKEYS)
		sib_warn("softib-sm: port %s is in %u partitions, its P_Key table holds %d: the "
			 "rest are left out",
			 guid_str(p->guid, g), n, SIB_MAX_PKEYS);
	memset(&pt, 0, sizeof(pt));
	for (unsigned i = 0; i < SIB_MAX_PKEYS; i++)
		pt.P_KeyTableBlock[i] = t[i];
	memset(data, 0, sizeof(data));
	ib_p_key_table_encode(&pt, data);
	send_smp(sm, p, true, IB_MAD_METHOD_SET, IB_SMP_ATTR_P_KEY_TABLE, 0, data, tries);
}

static void configure(struct sib_sm *sm, struct sib_sm_port *p)
{
	p->state = SIB_SMP_GET_NODE_INFO;
	p->missed = 0;
	send_smp(sm, p, true, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, SIB_SM_RETRIES);
}

static void drop_port(struct sib_sm *sm, struct sib_sm_port *p, const char *why)
{
	char g[20], e[SIB_ENDPOINT_STRLEN];

	/* A port that was said to have joined is said to leave, whatever
	 * step it was in again. */
	if (p->joined_lid) {
		sm->leaves++;
		if (sm->out) {
			fprintf(sm->out, "softib-sm: port %s left: LID %u at %s (%s)\n",
				guid_str(p->guid, g), p->joined_lid, sib_endpoint_str(&p->ep, e), why);
			fflush(sm->out);
		}
	}
	sib_sa_port_gone(sm, p->guid);
	sib_sa_mcast_port_gone(sm, p->guid);
	port_free(sm, p);
}

int sib_sm_port_found(struct sib_sm *sm, uint64_t guid, uint64_t node_guid, uint16_t lid,
		      uint8_t mtu_cap, const struct sib_endpoint *ep)
{
	struct sib_sm_port *p = sib_sm_port_by_guid(sm, guid);
	struct sib_sm_port *holder = sib_sm_port_by_lid(sm, lid);

	if (!guid || !lid || lid > SIB_LID_UNICAST_MAX)
		return -EINVAL;
	/* The sweep gave the LID to another port: the old holder is gone. */
	if (holder && holder != p)
		drop_port(sm, holder, "its LID went to another port");
	if (!p && !(p = port_new(sm, ep)))
		return -ENOSPC;
	if (p->lid != lid) {
		if (p->lid)
			lid_mark(sm, p->lid, false);
		lid_mark(sm, lid, true);
		p->lid = lid;
	}
	p->ep = *ep;
	p->guid = guid;
	p->node_guid = node_guid;
	p->mtu_cap = mtu_cap;
	p->state = SIB_SMP_ACTIVE;
	p->joined_lid = lid;
	p->missed = 0;
	p->seen = true;
	return 0;
}

void sib_sm_sweep_end(struct sib_sm *sm)
{
	for (unsigned i = 0; i < sm->nports; i++) {
		struct sib_sm_port *p = &sm->ports[i];

		if (p->state == SIB_SMP_FREE)
			continue;
		/* (drop_port cancels nothing: no MAD goes out through
		 * sm->mads on a fabric) */
		if (!p->seen && ++p->missed >= SIB_SM_MAX_MISSED)
			drop_port(sm, p, "not found by 3 sweeps");
		p->seen = false;
	}
}

static void trap_rx(struct sib_sm *sm, const struct sib_mad_addr *a, const uint8_t *in,
		    const struct sib_endpoint *from)
{
	char g[20], e[SIB_ENDPOINT_STRLEN];
	struct ib_smp smp;
	struct ib_notice n;
	struct sib_mad_addr ra;
	uint8_t out[IB_MAD_BYTES];
	struct sib_sm_port *p;

	/* Traps are the master's (IBA 14.4.1): a standby neither represses
	 * them nor configures anything; the port asks every SM who is
	 * master and traps there. */
	if (sm->state != IB_SM_STATE_MASTER)
		return;
	ib_smp_decode(&smp, in);
	ib_notice_decode(&n, smp.SMPData);
	/* IBA 14.2.5.1 / 13.4.9: a trap is answered with TrapRepress, same
	 * TID and attribute. */
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP_REPRESS);
	smp.M_Key = sm->m_key;
	ib_smp_encode(&smp, out);
	sib_mad_addr_reply(a, sm->lid, &ra);
	sib_mgmt_send(sm->link, &ra, out, from);

	p = port_by_ep(sm, from);
	if (n.TrapNumber == IB_TRAP_BAD_M_KEY) {
		struct ib_notice_bad_m_key d;

		ib_notice_bad_m_key_decode(&d, n.DataDetails);
		sm->bad_m_key_traps++;
		sib_warn("softib-sm: port %s (LID %u at %s) reports a bad M_Key: %s(%s) from LID %u "
			 "with M_Key 0x%016llx",
			 p ? guid_str(p->guid, g) : "?", n.IssuerLID, sib_endpoint_str(from, e),
			 ib_mad_method_str(d.Method), ib_mad_attr_str(IB_MGMT_CLASS_SUBN_LID_ROUTED,
								       d.AttributeID),
			 d.LIDADDR, (unsigned long long)d.M_Key);
		return;
	}
	if (n.TrapNumber == IB_TRAP_BAD_P_KEY) {
		struct ib_notice_bad_key d;

		ib_notice_bad_key_decode(&d, n.DataDetails);
		sm->bad_p_key_traps++;
		sib_warn("softib-sm: port %s (LID %u at %s) reports a bad P_Key: P_Key 0x%04x "
			 "from LID %u QP 0x%06x to LID %u QP 0x%06x (trap 257)",
			 p ? guid_str(p->guid, g) : "?", n.IssuerLID, sib_endpoint_str(from, e),
			 d.Key & 0xffff, d.LID1, d.QP1, d.LID2, d.QP2);
		return;
	}
	if (n.TrapNumber != IB_TRAP_LINK_STATE_CHANGE)
		return;
	if (p && p->state != SIB_SMP_ACTIVE)
		return; /* being configured already: the repeat is a retry */
	if (!p)
		p = port_new(sm, from);
	if (!p) {
		sib_warn("softib-sm: %u ports already; ignoring one more", sm->cap);
		return;
	}
	configure(sm, p);
}

/* Sweeps `other` now: a port whose GUID is claimed from elsewhere must
 * show it is still there, else it is gone and the GUID free. */
static void challenge(struct sib_sm *sm, struct sib_sm_port *other)
{
	other->challenged = true;
	if (other->state == SIB_SMP_ACTIVE && !other->tid)
		send_smp(sm, other, false, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, 1);
}

/* NodeInfo came back from p's endpoint: bind its port GUID to it, unless
 * a live port holds that GUID.  False when p was dropped. */
static bool bind_guid(struct sib_sm *sm, struct sib_sm_port *p, const struct ib_node_info *ni)
{
	char g[20], e[SIB_ENDPOINT_STRLEN], o[SIB_ENDPOINT_STRLEN];
	struct sib_sm_port *other;

	if (p->guid && p->guid != ni->PortGUID) {
		/* The endpoint answers with another GUID: its old port left
		 * (a process ended and another got its UDP port).  The new one
		 * is configured when it traps. */
		drop_port(sm, p, "its endpoint now answers with another GUID");
		return false;
	}
	other = sib_sm_port_by_guid(sm, ni->PortGUID);
	if (other && other != p) {
		sm->claims_refused++;
		sib_warn("softib-sm: the port at %s claims GUID %s, which the live port LID %u at %s "
			 "holds; refused (a GUID stays where the SM found it until that port is gone)",
			 sib_endpoint_str(&p->ep, e), guid_str(ni->PortGUID, g), other->lid,
			 sib_endpoint_str(&other->ep, o));
		challenge(sm, other);
		port_free(sm, p);
		return false;
	}
	p->guid = ni->PortGUID;
	p->node_guid = ni->NodeGUID;
	return true;
}

/* Port p answered its request: the next step. */
static void smp_resp_rx(struct sib_sm *sm, struct sib_sm_port *p, const uint8_t *in)
{
	char g[20], e[SIB_ENDPOINT_STRLEN];
	uint8_t data[IB_SMP_DATA_BYTES];
	struct ib_node_info ni;
	struct ib_port_info pi;
	uint16_t status;

	if (in[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		struct ib_dr_smp dr;

		ib_dr_smp_decode(&dr, in);
		status = dr.Status;
		memcpy(data, dr.SMPData, sizeof(data));
	} else {
		struct ib_smp smp;

		ib_smp_decode(&smp, in);
		status = smp.hdr.Status;
		memcpy(data, smp.SMPData, sizeof(data));
	}
	if (status && p->state != SIB_SMP_ACTIVE) {
		/* It starts over from its next trap. */
		sib_warn("softib-sm: port at %s refused a configuration step (status 0x%04x); "
			 "dropped until it traps again", sib_endpoint_str(&p->ep, e), status);
		drop_port(sm, p, "refused a configuration step");
		return;
	}
	switch (p->state) {
	case SIB_SMP_GET_NODE_INFO:
		ib_node_info_decode(&ni, data);
		if (!ni.PortGUID) {
			drop_port(sm, p, "NodeInfo without a port GUID");
			return;
		}
		if (!bind_guid(sm, p, &ni))
			return;
		p->state = SIB_SMP_GET_PORT_INFO;
		send_smp(sm, p, true, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL,
			 SIB_SM_RETRIES);
		break;
	case SIB_SMP_GET_PORT_INFO:
		ib_port_info_decode(&pi, data);
		p->mtu_cap = pi.MTUCap >= IB_MTU_256 && pi.MTUCap <= IB_MTU_4096 ? pi.MTUCap
									    : IB_MTU_256;
		/* A key we can read that is not ours: the port's lease ran out
		 * (IBA 14.2.4.2), so it is ours to replace. */
		p->port_m_key = pi.M_Key && pi.M_Key != sm->m_key ? pi.M_Key : 0;
		if (!p->lid)
			p->lid = lid_alloc(sm, p->guid, pi.LID);
		if (!p->lid) {
			sib_warn("softib-sm: no unicast LID left for port %s", guid_str(p->guid, g));
			port_free(sm, p);
			return;
		}
		/* Its partitions first, then the state: a port is ACTIVE
		 * with the P_Keys it will keep. */
		p->was_active = pi.PortState == IB_PORT_STATE_ACTIVE;
		p->state = SIB_SMP_SET_PKEYS;
		set_pkeys(sm, p, SIB_SM_RETRIES);
		break;
	case SIB_SMP_SET_PKEYS:
		/* IBA 7.2: INIT -> ARMED -> ACTIVE.  A port already ACTIVE
		 * (its SM restarted) may only be told ACTIVE again. */
		if (p->was_active) {
			p->state = SIB_SMP_SET_ACTIVE;
			set_port_info(sm, p, true, IB_PORT_STATE_ACTIVE, true);
		} else {
			p->state = SIB_SMP_SET_ARMED;
			set_port_info(sm, p, true, IB_PORT_STATE_ARMED, false);
		}
		break;
	case SIB_SMP_SET_ARMED:
		/* The port has its LID (and our M_Key) now: LID-routed from here on. */
		p->port_m_key = 0;
		p->state = SIB_SMP_SET_ACTIVE;
		set_port_info(sm, p, false, IB_PORT_STATE_ACTIVE, false);
		break;
	case SIB_SMP_SET_ACTIVE:
		p->port_m_key = 0;
		p->state = SIB_SMP_ACTIVE;
		p->missed = 0;
		/* A port configured again (it trapped while ACTIVE) with the
		 * same LID is no news. */
		if (p->joined_lid == p->lid)
			break;
		p->joined_lid = p->lid;
		sm->joins++;
		if (sm->out) {
			fprintf(sm->out, "softib-sm: port %s joined: LID %u at %s\n",
				guid_str(p->guid, g), p->lid, sib_endpoint_str(&p->ep, e));
			fflush(sm->out);
		}
		break;
	case SIB_SMP_ACTIVE:
		/* A sweep's answer. */
		ib_port_info_decode(&pi, data);
		p->missed = 0;
		p->challenged = false;
		if (status || pi.PortState != IB_PORT_STATE_ACTIVE || pi.LID != p->lid) {
			sib_info("softib-sm: port %s is no longer ACTIVE with LID %u; "
				 "configuring it again", guid_str(p->guid, g), p->lid);
			configure(sm, p);
		}
		break;
	case SIB_SMP_FREE:
		break;
	}
}

/* ---------------------------------------------------------------- SMInfo */

static void sm_info_fill(const struct sib_sm *sm, bool authenticated, uint8_t *data)
{
	struct ib_sm_info si = {
		.GUID = sm->guid,
		/* IBA 14.4.1: the SM_Key only to a requester that shows it. */
		.SM_Key = authenticated ? sm->sm_key : 0,
		.ActCount = sm->act_count,
		.Priority = sm->priority,
		.SMState = sm->state,
	};

	memset(data, 0, IB_SMP_DATA_BYTES);
	ib_sm_info_encode(&si, data);
}

/* SubnGet(SMInfo) from a port or another SM: who we are and what state. */
static void sm_info_get_rx(struct sib_sm *sm, const struct sib_mad_addr *a, const uint8_t *in,
			   const struct sib_endpoint *from)
{
	struct sib_mad_addr ra;
	uint8_t out[IB_MAD_BYTES];
	struct ib_smp smp;

	ib_smp_decode(&smp, in);
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_GET_RESP);
	smp.hdr.Status = smp.hdr.ClassVersion == IB_SMP_CLASS_VERSION ? 0 : IB_MAD_STATUS_BAD_VERSION;
	sm_info_fill(sm, sm->sm_key && smp.M_Key == sm->sm_key, smp.SMPData);
	ib_smp_encode(&smp, out);
	sib_mad_addr_reply(a, sm->lid, &ra);
	sib_mgmt_send(sm->link, &ra, out, from);
}

static enum sib_mad_verdict peer_answered(void *owner, const struct sib_mad_send_wc *wc);

static void peer_poll(struct sib_sm *sm, struct sib_sm_peer *pe)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	sib_mad_request_hdr(&smp.hdr, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_SMP_CLASS_VERSION,
			    IB_MAD_METHOD_GET, IB_SMP_ATTR_SM_INFO, 0);
	smp.M_Key = sm->sm_key; /* authenticates us as an SM of this subnet */
	sm_info_fill(sm, true, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, SIB_LID_PERMISSIVE, sm->lid);
	pe->asking =
		!sib_sm_post(sm, &a, &pe->ep, mad, SIB_SM_RETRIES - 1, peer_answered, pe, NULL);
}

/* Whether peer pe goes before us (IBA 14.4.1.1: higher Priority, then the
 * lower GUID). */
static bool peer_precedes(const struct sib_sm *sm, const struct sib_sm_peer *pe)
{
	if (pe->priority != sm->priority)
		return pe->priority > sm->priority;
	return pe->guid < sm->guid;
}

static void set_state(struct sib_sm *sm, uint8_t state, const char *why)
{
	if (sm->state == state)
		return;
	if (sm->out) {
		fprintf(sm->out, "softib-sm: %s (%s)\n", sib_sm_state_str(state), why);
		fflush(sm->out);
	}
	if (state != IB_SM_STATE_MASTER) {
		/* A standby configures nothing; the master owns the ports.
		 * What we knew stays as LID memory for when we take over. */
		for (unsigned i = 0; i < sm->nports; i++)
			if (sm->ports[i].state != SIB_SMP_FREE)
				port_free(sm, &sm->ports[i]);
	}
	sm->state = state;
	sm->master_missed = 0;
}

/* Every peer answered this round or gave up: decide (IBA 14.4.1.1). */
static void poll_round_done(struct sib_sm *sm)
{
	const struct sib_sm_peer *master = NULL, *first = NULL;

	sm->polling = false;
	for (unsigned i = 0; i < sm->npeers; i++) {
		const struct sib_sm_peer *pe = &sm->peers[i];

		if (!pe->answered || !pe->same_subnet)
			continue;
		if (pe->state == IB_SM_STATE_MASTER && (!master || peer_precedes(sm, pe)))
			master = pe;
		if ((pe->state == IB_SM_STATE_DISCOVERING || pe->state == IB_SM_STATE_STANDBY) &&
		    peer_precedes(sm, pe))
			first = pe;
	}
	switch (sm->state) {
	case IB_SM_STATE_MASTER:
		/* Two masters (they started apart): the one that goes first
		 * stays. */
		if (master && peer_precedes(sm, master))
			set_state(sm, IB_SM_STATE_STANDBY, "another master of this subnet goes first");
		break;
	case IB_SM_STATE_DISCOVERING:
		if (master)
			set_state(sm, IB_SM_STATE_STANDBY, "this subnet has a master");
		else if (first)
			set_state(sm, IB_SM_STATE_STANDBY, "another SM of this subnet goes first");
		else
			set_state(sm, IB_SM_STATE_MASTER, "no other SM of this subnet is master");
		break;
	case IB_SM_STATE_STANDBY:
		if (master || first) {
			sm->master_missed = 0;
		} else if (++sm->master_missed >= SIB_SM_MAX_MISSED) {
			set_state(sm, IB_SM_STATE_MASTER, "the master stopped answering");
		}
		break;
	default:
		break;
	}
}

static bool peers_asking(const struct sib_sm *sm)
{
	for (unsigned i = 0; i < sm->npeers; i++)
		if (sm->peers[i].asking)
			return true;
	return false;
}

static void poll_peers(struct sib_sm *sm)
{
	if (!sm->npeers || sm->polling)
		return;
	sm->polling = true;
	for (unsigned i = 0; i < sm->npeers; i++) {
		sm->peers[i].answered = false;
		peer_poll(sm, &sm->peers[i]);
	}
	if (!peers_asking(sm))
		poll_round_done(sm);
}

/* A peer's SMInfo, from the address it was asked at. */
static void peer_heard(struct sib_sm *sm, struct sib_sm_peer *pe, const uint8_t *in)
{
	char e[SIB_ENDPOINT_STRLEN];
	struct ib_sm_info si;
	struct ib_smp smp;

	ib_smp_decode(&smp, in);
	ib_sm_info_decode(&si, smp.SMPData);
	pe->answered = !smp.hdr.Status;
	pe->same_subnet = sm->sm_key && si.SM_Key == sm->sm_key;
	pe->state = si.SMState;
	pe->priority = si.Priority;
	pe->guid = si.GUID;
	if (pe->answered && !pe->same_subnet && !pe->foreign_logged) {
		pe->foreign_logged = true;
		sib_warn("softib-sm: the SM at %s (GUID 0x%016llx) does not share this subnet's "
			 "SM_Key; ignoring it (give both the same --key-file to make one a "
			 "standby of the other)",
			 sib_endpoint_str(&pe->ep, e), (unsigned long long)si.GUID);
	}
}

/* A peer answered or gave up; the round is decided once all did. */
static enum sib_mad_verdict peer_answered(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_sm *sm = owner;
	struct sib_sm_peer *pe = wc->context;

	if (wc->status == SIB_MAD_RESENT || wc->status == SIB_MAD_CANCELED)
		return SIB_MAD_DONE;
	if (wc->status == SIB_MAD_RESPONSE)
		peer_heard(sm, pe, wc->resp->mad);
	pe->asking = false;
	if (sm->polling && !peers_asking(sm))
		poll_round_done(sm);
	return SIB_MAD_DONE;
}

/* Port p's request ended without an answer (every try). */
static void port_timed_out(struct sib_sm *sm, struct sib_sm_port *p)
{
	if (p->state != SIB_SMP_ACTIVE)
		drop_port(sm, p, "stopped answering");
	else if (p->challenged)
		drop_port(sm, p, "did not answer when its GUID was claimed elsewhere");
	else if (++p->missed >= SIB_SM_MAX_MISSED)
		drop_port(sm, p, "missed 3 sweeps");
}

static enum sib_mad_verdict port_answered(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_sm *sm = owner;
	struct sib_sm_port *p = wc->context;

	/* Canceled: p let go of it (a newer request, or p is gone). */
	switch (wc->status) {
	case SIB_MAD_RESENT:
		sm->act_count++;
		break;
	case SIB_MAD_RESPONSE:
		p->tid = 0;
		smp_resp_rx(sm, p, wc->resp->mad);
		break;
	case SIB_MAD_TIMEOUT:
		p->tid = 0;
		port_timed_out(sm, p);
		break;
	case SIB_MAD_CANCELED:
		break;
	}
	return SIB_MAD_DONE;
}

/* QP0's requests to the SM: SMInfo Gets and traps; a response here
 * answered nothing the SM asked (a late answer to an abandoned request,
 * one from elsewhere than where it went, or a forgery). */
static bool sm_rx(void *owner, const struct sib_mad_recv *r)
{
	struct sib_sm *sm = owner;
	const uint8_t *mad = r->mad;

	if (sib_mad_is_response(mad)) {
		sm->resp_misrouted++;
		return true;
	}
	/* SMInfo is the one attribute of the SM's own port it serves. */
	if (mad[3] == IB_MAD_METHOD_GET && ib_bits_get(mad, 128, 16) == IB_SMP_ATTR_SM_INFO) {
		sm_info_get_rx(sm, r->a, mad, r->from);
		return true;
	}
	if (mad[3] == IB_MAD_METHOD_TRAP) {
		trap_rx(sm, r->a, mad, r->from);
		return true;
	}
	return false; /* the SM's own SMA is not modelled beyond SMInfo */
}

static bool sa_rx(void *owner, const struct sib_mad_recv *r)
{
	sib_sa_serve(owner, r->a, r->mad, r->from);
	return true;
}

void sib_sm_rx(struct sib_sm *sm, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct ib_packet pkt;
	struct sib_mad_addr a;
	struct sib_mad_recv r;
	const uint8_t *mad;
	enum ib_pkt_err err = ib_packet_decode(buf, len, &pkt);

	if (err != IB_PKT_OK) {
		sib_link_count_pkt_err(sm->link, err);
		return;
	}
	mad = sib_mgmt_parse(&pkt, &a);
	if (!mad) {
		sm->dropped++;
		return;
	}
	r = (struct sib_mad_recv){ .port_num = 1, .a = &a, .mad = mad, .from = from };
	if (!sib_mad_deliver(&sm->mads, &r))
		sm->dropped++;
}

static void rx_cb(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct sib_sm *sm = arg;
	char e[SIB_ENDPOINT_STRLEN];
	uint64_t n;

	if (sib_sm_admit(&sm->admit, from, sm->now_ns)) {
		sib_sm_rx(sm, pkt, len, from);
		return;
	}
	n = sm->admit.over_rate;
	sib_log(sib_log_nth(n),
		"softib-sm: %s sends more than %u MADs a second: dropped one (%llu so far)",
		sib_endpoint_str(from, e), SIB_SM_SOURCE_RATE, (unsigned long long)n);
}

static void sweep(struct sib_sm *sm)
{
	for (unsigned i = 0; i < sm->nports; i++) {
		struct sib_sm_port *p = &sm->ports[i];

		if (p->state != SIB_SMP_ACTIVE || p->tid)
			continue;
		send_smp(sm, p, false, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, 1);
	}
}

void sib_sm_reconfigure(struct sib_sm *sm)
{
	if (sm->state != IB_SM_STATE_MASTER)
		return;
	for (unsigned i = 0; i < sm->nports; i++)
		if (sm->ports[i].state == SIB_SMP_ACTIVE)
			configure(sm, &sm->ports[i]);
}

int sib_sm_step(struct sib_sm *sm, uint64_t now_ns)
{
	int n, total = 0;

	sm->now_ns = now_ns;
	/* One budget a pass (sm_admit.h): what is left waits for the next
	 * pass, after the timers and sends below. */
	while (total < SIB_SM_RX_BUDGET && (n = sib_link_poll(sm->link, 64, rx_cb, sm)) > 0) {
		total += n;
		if (n < 64)
			break;
	}
	sib_mad_tick(&sm->mads); /* resends, and what they ended: a port, a round */
	if (sm->state == IB_SM_STATE_DISCOVERING)
		poll_peers(sm);
	sib_sa_step(sm);
	if (sm->state == IB_SM_STATE_MASTER)
		sib_sm_mcast_program(sm);
	if (now_ns >= sm->next_sweep_ns) {
		if (sm->state == IB_SM_STATE_MASTER)
			sweep(sm);
		poll_peers(sm);
		sm->next_sweep_ns = now_ns + sm->sweep_ns;
	}
	sib_link_flush(sm->link);
	return total;
}

uint64_t sib_sm_next_deadline(struct sib_sm *sm)
{
	uint64_t d = sm->next_sweep_ns, sa = sib_sa_next_deadline(sm);
	uint64_t mc = sib_sm_mcast_next_deadline(sm), mad = sib_mad_next_deadline(&sm->mads);

	if (mc && mc < d)
		d = mc;
	if (sa && sa < d)
		d = sa;
	if (mad && mad < d)
		d = mad;
	return d;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * MCMemberRecord: multicast groups and their members (sa_mcast.h has the
 * rules).
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fabric/partitions.h"
#include "fabric/sa_mcast.h"
#include "transport/caps.h"

#define JOIN_MASK (IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID | IB_MCR_COMP_JOIN_STATE)
#define CREATE_MASK                                                                                \
	(JOIN_MASK | IB_MCR_COMP_Q_KEY | IB_MCR_COMP_TCLASS | IB_MCR_COMP_P_KEY |                  \
	 IB_MCR_COMP_FLOW_LABEL | IB_MCR_COMP_SL)
#define JOIN_BITS                                                                                  \
	(IB_MCR_JOIN_FULL_MEMBER | IB_MCR_JOIN_NON_MEMBER | IB_MCR_JOIN_SEND_ONLY_NON_MEMBER)
#define MLID_BASE 0xc000

/* RFC 4391 section 4: IPv4 broadcast, link-local scope (2), P_Key 0xFFFF. */
static const uint8_t ipoib_bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					 0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff };

static void group_defaults(struct ib_mcmember_record *r)
{
	r->MTUSelector = IB_SA_SELECTOR_EQ;
	r->RateSelector = IB_SA_SELECTOR_EQ;
	r->Rate = SIB_SM_RATE;
	r->PacketLifeTimeSelector = IB_SA_SELECTOR_EQ;
	r->PacketLifeTime = SIB_SM_PACKET_LIFE_TIME;
	r->Scope = 2; /* link-local: a softib subnet has no routers */
}

static uint16_t mlid_free(const struct sib_sa_mcast *mc)
{
	for (uint16_t i = 0; i < SIB_SA_MCAST_GROUPS_MAX; i++) {
		bool used = false;

		for (unsigned g = 0; g < mc->ngroups && !used; g++)
			used = mc->groups[g].rec.MLID == MLID_BASE + i;
		if (!used)
			return (uint16_t)(MLID_BASE + i);
	}
	return 0;
}

static struct sib_sa_mgroup *group_add(struct sib_sa_mcast *mc, const struct ib_mcmember_record *r)
{
	struct sib_sa_mgroup *g;
	uint16_t mlid = mlid_free(mc);

	if (!mlid || mc->ngroups >= SIB_SA_MCAST_GROUPS_MAX)
		return NULL;
	if (mc->ngroups == mc->cap) {
		unsigned cap = mc->cap ? mc->cap * 2 : 8;
		struct sib_sa_mgroup *n = realloc(mc->groups, cap * sizeof(*n));

		if (!n)
			return NULL;
		mc->groups = n;
		mc->cap = cap;
	}
	g = &mc->groups[mc->ngroups++];
	memset(g, 0, sizeof(*g));
	g->rec = *r;
	memset(g->rec.PortGID.raw, 0, 16);
	g->rec.JoinState = 0;
	g->rec.ProxyJoin = 0;
	g->rec.MLID = mlid;
	g->generation = ++mc->generation;
	return g;
}

static struct sib_sa_mgroup *group_by_mgid(struct sib_sa_mcast *mc, const uint8_t *mgid);

struct sib_sa_mcast *sib_sa_mcast(struct sib_sm *sm)
{
	struct sib_sa_state *s = sib_sa_state(sm);
	struct ib_mcmember_record r;

	if (!s)
		return NULL;
	if (s->mcast)
		return s->mcast;
	s->mcast = calloc(1, sizeof(*s->mcast));
	if (!s->mcast)
		return NULL;
	memset(&r, 0, sizeof(r));
	memcpy(r.MGID.raw, ipoib_bcast, 16);
	r.Q_Key = SIB_IPOIB_QKEY;
	r.P_Key = 0xffff;
	group_defaults(&r);
	r.MTU = IB_MTU_2048;
	struct sib_sa_mgroup *g = group_add(s->mcast, &r);

	if (g)
		g->well_known = true;
	/* And one for each other partition flagged ipoib, as OpenSM makes
	 * them: ff12:401b:<P_Key|0x8000>::ffff:ffff. */
	const struct sib_partitions *ps = sib_sm_partitions(sm);

	for (unsigned i = 0; i < ps->n; i++) {
		uint16_t pk = (uint16_t)(ps->p[i].pkey | 0x8000);

		if (!ps->p[i].ipoib || pk == 0xffff)
			continue;
		r.MGID.raw[4] = (uint8_t)(pk >> 8);
		r.MGID.raw[5] = (uint8_t)pk;
		r.P_Key = pk;
		g = group_by_mgid(s->mcast, r.MGID.raw) ? NULL : group_add(s->mcast, &r);
		if (g)
			g->well_known = true;
	}
	return s->mcast;
}

void sib_sa_mcast_free(struct sib_sm *sm)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;

	if (!mc)
		return;
	for (unsigned i = 0; i < mc->ngroups; i++)
		free(mc->groups[i].members);
	free(mc->groups);
	free(mc->departed);
	free(mc->waits);
	free(mc);
	sm->sa->mcast = NULL;
}

static struct sib_sa_mgroup *group_by_mgid(struct sib_sa_mcast *mc, const uint8_t *mgid)
{
	for (unsigned i = 0; i < mc->ngroups; i++)
		if (!memcmp(mc->groups[i].rec.MGID.raw, mgid, 16))
			return &mc->groups[i];
	return NULL;
}

struct sib_sa_mgroup *sib_sa_mcast_by_mlid(struct sib_sm *sm, uint16_t mlid)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;

	for (unsigned i = 0; mc && i < mc->ngroups; i++)
		if (mc->groups[i].rec.MLID == mlid)
			return &mc->groups[i];
	return NULL;
}

static struct sib_sa_mcmember *member_find(struct sib_sa_mgroup *g, const uint8_t *port_gid)
{
	for (unsigned i = 0; i < g->nmembers; i++)
		if (!memcmp(g->members[i].PortGID, port_gid, 16))
			return &g->members[i];
	return NULL;
}

static void group_remove(struct sib_sa_mcast *mc, struct sib_sa_mgroup *g)
{
	free(g->members);
	*g = mc->groups[--mc->ngroups];
	mc->generation++;
}

/* The member at index i leaves; the group goes with its last member. */
static void member_remove(struct sib_sa_mcast *mc, struct sib_sa_mgroup *g, unsigned i)
{
	g->members[i] = g->members[--g->nmembers];
	g->generation = ++mc->generation;
	mc->leaves++;
	if (!g->nmembers && !g->well_known)
		group_remove(mc, g);
}

static bool gid_zero(const uint8_t *g)
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return false;
	return true;
}

/* Does value v satisfy "selector sel, value want" (IBA 15.2.5.16)? */
static bool selected(uint8_t sel, uint8_t want, uint8_t v)
{
	switch (sel) {
	case IB_SA_SELECTOR_GT:
		return v > want;
	case IB_SA_SELECTOR_LT:
		return v < want;
	case IB_SA_SELECTOR_EQ:
		return v == want;
	default: /* the largest available: any */
		return true;
	}
}

/* A creator's MTU / Rate: the value its selector asks for. */
static uint8_t choose(bool given_sel, uint8_t sel, bool given, uint8_t want, uint8_t dflt,
		      uint8_t lo, uint8_t hi)
{
	if (!given)
		return dflt;
	switch (given_sel ? sel : IB_SA_SELECTOR_EQ) {
	case IB_SA_SELECTOR_GT:
		return want < hi ? (uint8_t)(want + 1) : 0;
	case IB_SA_SELECTOR_LT:
		return want > lo ? (uint8_t)(want - 1) : 0;
	case IB_SA_SELECTOR_EQ:
		return want >= lo && want <= hi ? want : 0;
	default:
		return dflt;
	}
}

/* Does the group agree with every component q names (a join, or a query)? */
static bool group_matches(const struct ib_mcmember_record *g, const struct ib_mcmember_record *q,
			  uint64_t cm, bool join)
{
	if ((cm & IB_MCR_COMP_MGID) && memcmp(g->MGID.raw, q->MGID.raw, 16))
		return false;
	if ((cm & IB_MCR_COMP_Q_KEY) && g->Q_Key != q->Q_Key)
		return false;
	if ((cm & IB_MCR_COMP_MLID) && g->MLID != q->MLID)
		return false;
	if ((cm & IB_MCR_COMP_TCLASS) && g->TClass != q->TClass)
		return false;
	if ((cm & IB_MCR_COMP_P_KEY) && g->P_Key != q->P_Key)
		return false;
	if ((cm & IB_MCR_COMP_SL) && g->SL != q->SL)
		return false;
	if ((cm & IB_MCR_COMP_FLOW_LABEL) && g->FlowLabel != q->FlowLabel)
		return false;
	if ((cm & IB_MCR_COMP_HOP_LIMIT) && g->HopLimit != q->HopLimit)
		return false;
	if ((cm & IB_MCR_COMP_SCOPE) && g->Scope != q->Scope)
		return false;
	/* A join's selectors say what it accepts; a query compares values. */
	if (cm & IB_MCR_COMP_MTU) {
		uint8_t sel = join && (cm & IB_MCR_COMP_MTU_SELECTOR) ? q->MTUSelector
								       : IB_SA_SELECTOR_EQ;
		if (!selected(sel, q->MTU, g->MTU))
			return false;
	}
	if (cm & IB_MCR_COMP_RATE) {
		uint8_t sel = join && (cm & IB_MCR_COMP_RATE_SELECTOR) ? q->RateSelector
									: IB_SA_SELECTOR_EQ;
		if (!selected(sel, q->Rate, g->Rate))
			return false;
	}
	if (cm & IB_MCR_COMP_PACKET_LIFE_TIME) {
		uint8_t sel = join && (cm & IB_MCR_COMP_PACKET_LIFE_TIME_SELECTOR)
				      ? q->PacketLifeTimeSelector
				      : IB_SA_SELECTOR_EQ;
		if (!selected(sel, q->PacketLifeTime, g->PacketLifeTime))
			return false;
	}
	return true;
}

static void respond_now(struct sib_sm *sm, const struct sib_mad_addr *a,
			const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
			uint16_t status, const struct ib_mcmember_record *rec)
{
	uint8_t buf[IB_MCMEMBER_RECORD_BYTES];

	if (rec)
		ib_mcmember_record_encode(rec, buf);
	sib_sa_respond(sm, a, from, m, method, status, rec ? buf : NULL,
		       rec ? IB_MCMEMBER_RECORD_BYTES : 0, rec ? 1 : 0);
}

/* Every live member of g has installed generation gen (or a later one). */
static bool group_installed(struct sib_sm *sm, const struct sib_sa_mgroup *g, uint64_t gen)
{
	for (unsigned i = 0; i < g->nmembers; i++) {
		struct sib_sm_port *p = sib_sm_port_by_guid(sm, g->members[i].port_guid);

		if (p && p->state == SIB_SMP_ACTIVE && g->members[i].programmed_gen < gen)
			return false;
	}
	return true;
}

/*
 * A join or leave is answered once every member port has installed the
 * group's new port list (the SM programs them first: sm_mcast.c), so
 * that when a program hears it joined, every member can reach it and it
 * can reach every member; after SIB_SA_MCAST_WAIT_NS it is answered
 * anyway (a port that stays silent is dropped by the sweeps).  Other
 * answers go at once.
 */
static void answer(struct sib_sm *sm, const struct sib_mad_addr *a,
		   const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		   uint16_t status, const struct ib_mcmember_record *rec)
{
	struct sib_sa_mcast *mc = sm->sa->mcast;
	struct sib_sa_mgroup *g;
	struct sib_sa_mcast_wait *w;

	if (status)
		mc->refused++;
	if (status || !rec ||
	    (method != IB_MAD_METHOD_GET_RESP && method != IB_MAD_METHOD_DELETE_RESP)) {
		respond_now(sm, a, from, m, method, status, rec);
		return;
	}
	sib_sm_mcast_program(sm);
	g = sib_sa_mcast_by_mlid(sm, rec->MLID);
	if (!g || group_installed(sm, g, g->generation) || mc->nwaits >= SIB_SA_MCAST_WAITS_MAX) {
		respond_now(sm, a, from, m, method, status, rec);
		return;
	}
	if (mc->nwaits == mc->waits_cap) {
		unsigned cap = mc->waits_cap ? mc->waits_cap * 2 : 8;
		struct sib_sa_mcast_wait *n = realloc(mc->waits, cap * sizeof(*n));

		if (!n) {
			respond_now(sm, a, from, m, method, status, rec);
			return;
		}
		mc->waits = n;
		mc->waits_cap = cap;
	}
	w = &mc->waits[mc->nwaits++];
	w->a = *a;
	w->from = *from;
	w->m = *m;
	w->method = method;
	w->rec = *rec;
	w->gen = g->generation;
	w->deadline_ns = sm->now_ns + SIB_SA_MCAST_WAIT_NS;
}

void sib_sa_mcast_answer_waiting(struct sib_sm *sm)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;

	for (unsigned i = 0; mc && i < mc->nwaits;) {
		struct sib_sa_mcast_wait *w = &mc->waits[i];
		struct sib_sa_mgroup *g = sib_sa_mcast_by_mlid(sm, w->rec.MLID);

		if (g && !group_installed(sm, g, w->gen) && w->deadline_ns > sm->now_ns) {
			i++;
			continue;
		}
		struct sib_sa_mcast_wait done = *w;

		mc->waits[i] = mc->waits[--mc->nwaits];
		respond_now(sm, &done.a, &done.from, &done.m, done.method, 0, &done.rec);
	}
}

/* The requester's port (by the MAD's SLID, vouched for by the source check:
 * sa.c), when port_gid is its own. */
static struct sib_sm_port *requester(struct sib_sm *sm, const struct sib_mad_addr *a,
				     const uint8_t *port_gid)
{
	struct sib_sm_port *p = sib_sm_port_by_lid(sm, a->SLID);
	uint8_t pg[16];

	if (!p)
		return NULL;
	sib_sm_port_gid(p, pg);
	return memcmp(pg, port_gid, 16) ? NULL : p;
}

static unsigned members_in_all(const struct sib_sa_mcast *mc)
{
	unsigned n = 0;

	for (unsigned i = 0; i < mc->ngroups; i++)
		n += mc->groups[i].nmembers;
	return n;
}

static unsigned members_of_port(const struct sib_sa_mcast *mc, uint64_t guid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < mc->ngroups; i++)
		for (unsigned k = 0; k < mc->groups[i].nmembers; k++)
			n += mc->groups[i].members[k].port_guid == guid;
	return n;
}

static struct sib_sa_mgroup *group_create(struct sib_sa_mcast *mc,
					  const struct ib_mcmember_record *q, uint64_t cm,
					  uint16_t *status)
{
	struct ib_mcmember_record r = *q;
	struct sib_sa_mgroup *g;

	if ((cm & CREATE_MASK) != CREATE_MASK) {
		*status = IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS;
		return NULL;
	}
	if (!(q->JoinState & IB_MCR_JOIN_FULL_MEMBER)) {
		sib_dbg("softib-sm: MCMemberRecord: only a FullMember creates a group");
		*status = IB_SA_STATUS_REQ_INVALID;
		return NULL;
	}
	group_defaults(&r);
	r.Q_Key = q->Q_Key;
	r.TClass = q->TClass;
	r.P_Key = q->P_Key;
	r.FlowLabel = q->FlowLabel & 0xfffff;
	r.SL = q->SL & 0xf;
	r.HopLimit = (cm & IB_MCR_COMP_HOP_LIMIT) ? q->HopLimit : 0;
	r.MTU = choose(cm & IB_MCR_COMP_MTU_SELECTOR, q->MTUSelector, cm & IB_MCR_COMP_MTU, q->MTU,
		       IB_MTU_2048, IB_MTU_256, IB_MTU_4096);
	r.Rate = choose(cm & IB_MCR_COMP_RATE_SELECTOR, q->RateSelector, cm & IB_MCR_COMP_RATE,
			q->Rate, SIB_SM_RATE, 2, 16);
	if (cm & IB_MCR_COMP_PACKET_LIFE_TIME)
		r.PacketLifeTime = q->PacketLifeTime & 0x3f;
	if (!r.MTU || !r.Rate) {
		*status = IB_SA_STATUS_REQ_INVALID;
		return NULL;
	}
	if (gid_zero(q->MGID.raw)) {
		/* The SA chooses: ff12:601b:ffff::<n>, as OpenSM's 0xA01B-style
		 * SA-assigned prefix keeps them apart from IPoIB's. */
		static const uint8_t prefix[6] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff };

		memset(r.MGID.raw, 0, 16);
		memcpy(r.MGID.raw, prefix, sizeof(prefix));
		do {
			uint32_t n = ++mc->next_mgid;

			r.MGID.raw[12] = (uint8_t)(n >> 24);
			r.MGID.raw[13] = (uint8_t)(n >> 16);
			r.MGID.raw[14] = (uint8_t)(n >> 8);
			r.MGID.raw[15] = (uint8_t)n;
		} while (group_by_mgid(mc, r.MGID.raw));
	}
	g = group_add(mc, &r);
	if (!g)
		*status = IB_SA_STATUS_NO_RESOURCES;
	else
		sib_dbg("softib-sm: multicast group MLID 0x%04x created", g->rec.MLID);
	return g;
}

/* The P_Key of the group a join is for: the group's when it exists, else
 * the one the creator names (0: none named). */
static uint16_t g_pkey_of(struct sib_sa_mcast *mc, const struct ib_mcmember_record *q, uint64_t cm)
{
	struct sib_sa_mgroup *g = gid_zero(q->MGID.raw) ? NULL : group_by_mgid(mc, q->MGID.raw);

	if (g)
		return g->rec.P_Key;
	return (cm & IB_MCR_COMP_P_KEY) ? q->P_Key : 0;
}

/* IBA 15.2.5.17 / 10.9: a port joins only groups of a partition it is in
 * (either membership), as its P_Key table says. */
static bool in_partition(struct sib_sm *sm, uint64_t guid, uint16_t pkey)
{
	uint16_t t[SIB_MAX_PKEYS];

	if (!pkey)
		return true; /* a creation without P_Key fails its own check */
	sib_partitions_table(sib_sm_partitions(sm), guid, t, SIB_MAX_PKEYS);
	for (unsigned i = 0; i < SIB_MAX_PKEYS; i++)
		if (t[i] && (t[i] & 0x7fff) == (pkey & 0x7fff))
			return true;
	return false;
}

static void mc_join(struct sib_sm *sm, struct sib_sa_mcast *mc, const struct sib_mad_addr *a,
		    const struct sib_endpoint *from, struct ib_sa_mad *m,
		    const struct ib_mcmember_record *q)
{
	uint64_t cm = m->ComponentMask;
	struct sib_sm_port *p;
	struct sib_sa_mgroup *g;
	struct sib_sa_mcmember *mem;
	struct ib_mcmember_record out;
	uint16_t status = 0;

	if ((cm & JOIN_MASK) != JOIN_MASK) {
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
		       IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS, NULL);
		return;
	}
	if (!q->JoinState || (q->JoinState & ~JOIN_BITS)) {
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_INVALID, NULL);
		return;
	}
	p = requester(sm, a, q->PortGID.raw);
	if (!p || q->ProxyJoin) {
		sib_dbg("softib-sm: MCMemberRecord join from LID 0x%04x for a PortGID that is not "
			"its own, refused",
			a->SLID);
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_DENIED, NULL);
		return;
	}
	if (!in_partition(sm, p->guid, g_pkey_of(mc, q, cm))) {
		sib_dbg("softib-sm: MCMemberRecord join from LID 0x%04x: the port is not in the "
			"group's partition",
			a->SLID);
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_INVALID, NULL);
		return;
	}
	if (!gid_zero(q->MGID.raw) && q->MGID.raw[0] != 0xff) {
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_INVALID_GID, NULL);
		return;
	}
	g = gid_zero(q->MGID.raw) ? NULL : group_by_mgid(mc, q->MGID.raw);
	if (g && !group_matches(&g->rec, q, cm & ~(IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID), true)) {
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_INVALID, NULL);
		return;
	}
	mem = g ? member_find(g, q->PortGID.raw) : NULL;
	if (!mem && (members_in_all(mc) >= SIB_SA_MCAST_MEMBERS_MAX ||
		     members_of_port(mc, p->guid) >= SIB_SA_MCAST_MEMBERS_PER_PORT)) {
		mc->no_room++;
		sib_log(sib_log_nth(mc->no_room),
			"softib-sm: MCMemberRecord join from LID 0x%04x: no room (%u groups per "
			"port, %u members in all; %llu so far)",
			a->SLID, SIB_SA_MCAST_MEMBERS_PER_PORT, SIB_SA_MCAST_MEMBERS_MAX,
			(unsigned long long)mc->no_room);
		answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_NO_RESOURCES, NULL);
		return;
	}
	if (!g) {
		g = group_create(mc, q, cm, &status);
		if (!g) {
			answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, status, NULL);
			return;
		}
	}
	if (!mem) {
		if (g->nmembers == g->cap) {
			unsigned cap = g->cap ? g->cap * 2 : 4;
			struct sib_sa_mcmember *n = realloc(g->members, cap * sizeof(*n));

			if (!n) {
				if (!g->nmembers && !g->well_known)
					group_remove(mc, g);
				answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
				       IB_SA_STATUS_NO_RESOURCES, NULL);
				return;
			}
			g->members = n;
			g->cap = cap;
		}
		mem = &g->members[g->nmembers++];
		memset(mem, 0, sizeof(*mem));
		memcpy(mem->PortGID, q->PortGID.raw, 16);
		mem->port_guid = p->guid;
	}
	if ((mem->JoinState | q->JoinState) != mem->JoinState)
		g->generation = ++mc->generation;
	/* A port that comes back is no longer told the MLID is gone. */
	for (unsigned i = 0; i < mc->ndeparted; i++)
		if (mc->departed[i].port_guid == p->guid && mc->departed[i].mlid == g->rec.MLID)
			mc->departed[i--] = mc->departed[--mc->ndeparted];
	mem->JoinState |= q->JoinState;
	mc->joins++;
	out = g->rec;
	memcpy(out.PortGID.raw, mem->PortGID, 16);
	out.JoinState = mem->JoinState;
	answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, 0, &out);
}

static void mc_leave(struct sib_sm *sm, struct sib_sa_mcast *mc, const struct sib_mad_addr *a,
		     const struct sib_endpoint *from, struct ib_sa_mad *m,
		     const struct ib_mcmember_record *q)
{
	uint64_t cm = m->ComponentMask;
	struct sib_sa_mgroup *g;
	struct sib_sa_mcmember *mem;
	struct ib_mcmember_record out;

	if ((cm & JOIN_MASK) != JOIN_MASK) {
		answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP,
		       IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS, NULL);
		return;
	}
	if (!requester(sm, a, q->PortGID.raw)) {
		answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP, IB_SA_STATUS_REQ_DENIED, NULL);
		return;
	}
	g = group_by_mgid(mc, q->MGID.raw);
	mem = g ? member_find(g, q->PortGID.raw) : NULL;
	if (!mem || !(mem->JoinState & q->JoinState)) {
		answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP, IB_SA_STATUS_REQ_INVALID, NULL);
		return;
	}
	out = g->rec;
	memcpy(out.PortGID.raw, mem->PortGID, 16);
	mem->JoinState &= (uint8_t)~q->JoinState;
	out.JoinState = mem->JoinState;
	if (!mem->JoinState) {
		sib_sa_mcast_departed_add(mc, mem->port_guid, g->rec.MLID);
		member_remove(mc, g, (unsigned)(mem - g->members));
	}
	else
		g->generation = ++mc->generation;
	answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP, 0, &out);
}

/* Get / GetTable: one record per member (PortGID, JoinState), and one
 * for a group kept without members. */
static void mc_lookup(struct sib_sm *sm, struct sib_sa_mcast *mc, const struct sib_mad_addr *a,
		      const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		      const struct ib_mcmember_record *q)
{
	uint64_t cm = m->ComponentMask;
	uint8_t *recs = NULL;
	unsigned n = 0;

	for (unsigned i = 0; i < mc->ngroups; i++) {
		struct sib_sa_mgroup *g = &mc->groups[i];

		if (!group_matches(&g->rec, q, cm, false))
			continue;
		for (unsigned k = 0; k < (g->nmembers ? g->nmembers : 1); k++) {
			struct ib_mcmember_record r = g->rec;
			uint8_t *nr;

			if (g->nmembers) {
				memcpy(r.PortGID.raw, g->members[k].PortGID, 16);
				r.JoinState = g->members[k].JoinState;
			}
			if ((cm & IB_MCR_COMP_PORT_GID) && memcmp(r.PortGID.raw, q->PortGID.raw, 16))
				continue;
			if ((cm & IB_MCR_COMP_JOIN_STATE) && !(r.JoinState & q->JoinState))
				continue;
			nr = realloc(recs, (size_t)(n + 1) * IB_MCMEMBER_RECORD_BYTES);
			if (!nr) {
				free(recs);
				answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
				       IB_SA_STATUS_NO_RESOURCES, NULL);
				return;
			}
			recs = nr;
			ib_mcmember_record_encode(&r, recs + n * IB_MCMEMBER_RECORD_BYTES);
			n++;
		}
	}
	if (method == IB_MAD_METHOD_GET) {
		uint16_t status = n == 0 ? IB_SA_STATUS_NO_RECORDS
				  : n > 1 ? IB_SA_STATUS_TOO_MANY_RECORDS
					  : 0;

		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, status, n == 1 ? recs : NULL,
			       n == 1 ? IB_MCMEMBER_RECORD_BYTES : 0, n == 1 ? 1 : 0);
	} else {
		sib_sa_send_table(sm, a, from, m, recs, IB_MCMEMBER_RECORD_BYTES, n);
	}
	free(recs);
}

void sib_sa_mcmember_record(struct sib_sm *sm, const struct sib_mad_addr *a,
			    const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method)
{
	struct sib_sa_mcast *mc = sib_sa_mcast(sm);
	struct ib_mcmember_record q;

	if (!mc) {
		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_NO_RESOURCES,
			       NULL, 0, 0);
		return;
	}
	ib_mcmember_record_decode(&q, m->SubnAdmData);
	switch (method) {
	case IB_MAD_METHOD_SET:
		mc_join(sm, mc, a, from, m, &q);
		break;
	case IB_MAD_METHOD_DELETE:
		mc_leave(sm, mc, a, from, m, &q);
		break;
	case IB_MAD_METHOD_GET:
	case IB_MAD_METHOD_GET_TABLE:
		mc_lookup(sm, mc, a, from, m, method, &q);
		break;
	default:
		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
			       IB_MAD_STATUS_UNSUP_METHOD_ATTR, NULL, 0, 0);
		break;
	}
}

void sib_sa_mcast_port_gone(struct sib_sm *sm, uint64_t port_guid)
{
	struct sib_sa_mcast *mc = sm->sa ? sm->sa->mcast : NULL;

	if (!mc || !port_guid)
		return;
	for (unsigned i = mc->ngroups; i-- > 0;) {
		struct sib_sa_mgroup *g = &mc->groups[i];

		for (unsigned k = g->nmembers; k-- > 0;) {
			if (g->members[k].port_guid != port_guid)
				continue;
			member_remove(mc, g, k); /* may remove g (swapped with the last) */
			break;
		}
	}
}

void sib_sa_mcast_departed_add(struct sib_sa_mcast *mc, uint64_t port_guid, uint16_t mlid)
{
	if (mc->ndeparted == mc->departed_cap) {
		unsigned cap = mc->departed_cap ? mc->departed_cap * 2 : 8;
		struct sib_sa_mcast_departed *n;

		if (cap > SIB_SA_MCAST_MEMBERS_MAX)
			return; /* best effort: the port keeps a stale list */
		n = realloc(mc->departed, cap * sizeof(*n));
		if (!n)
			return;
		mc->departed = n;
		mc->departed_cap = cap;
	}
	mc->departed[mc->ndeparted++] = (struct sib_sa_mcast_departed){
		.port_guid = port_guid, .mlid = mlid,
	};
}

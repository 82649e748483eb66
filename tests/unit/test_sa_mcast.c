/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's MCMemberRecord (fabric/sa_mcast.c) against real ports over
 * the in-memory link: creation and its component rules, joins that must
 * agree with the group, JoinState bits added and taken away, the group
 * deleted with its last member, the IPoIB broadcast group kept, queries,
 * and a dropped port leaving its groups.
 *
 * The fabric sources are compiled into this test (the build links only
 * wire/, memreg/ and transport/ into test programs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric/sa.c"
#include "fabric/sa_mcast.c"
#include "fabric/sm_mcast.c"
#include "fabric/sa_rmpp.c"
#include "fabric/sa_service.c"
#include "fabric/sa_nodes.c"
#include "fabric/partitions.c"
#include "fabric/sm.c"
#include "fabric/sm_admit.c"
#include "hca/hca.h"
#include "mgmt/mad_packet.h"
#include "mgmt/mcast_ports.h"
#include "transport/cq.h"
#include "transport/mcast.h"
#include "transport/qp.h"
#include "wire/sa.h"

#define SEC 1000000000ull

struct fixture {
	struct sib_mem_hub *hub;
	struct sib_link *sm_link, *probe;
	struct sib_sm sm;
	uint64_t now;
	struct sib_hca *h[3];
};

static struct sib_hca *hca_port_new(struct fixture *f, uint64_t node_guid)
{
	struct sib_link *link;
	char sm[SIB_ENDPOINT_STRLEN];
	struct sib_hca_opts o = { 0 };
	struct sib_hca *hca;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &link), 0);
	sib_endpoint_str(&f->sm_link->local, sm);
	o.link = link;
	o.sm = sm;
	o.no_thread = true;
	o.no_bringup_wait = true;
	o.no_spawn = true;
	o.node_guid = node_guid;
	hca = sib_hca_new(&o);
	assert_non_null(hca);
	return hca;
}

static void settle(struct fixture *f)
{
	for (int round = 0; round < 50; round++) {
		int moved = sib_sm_step(&f->sm, f->now);

		for (unsigned i = 0; i < 3; i++)
			if (f->h[i])
				moved += sib_progress_poll(f->h[i]);
		if (!moved)
			return;
	}
}

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.hub = sib_mem_hub_new();
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.sm_link), 0);
	f.now = 1000 * SEC;
	assert_int_equal(sib_sm_init(&f.sm, f.sm_link, 0x0200000000000100ull, f.now), 0);
	for (unsigned i = 0; i < 3; i++)
		f.h[i] = hca_port_new(&f, 0x0200000000000500ull + i * 0x100);
	settle(&f);
	assert_int_equal(sib_sm_active_ports(&f.sm), 3);
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.probe), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	for (unsigned i = 0; i < 3; i++)
		if (f->h[i])
			sib_hca_free(f->h[i]);
	sib_link_close(f->probe);
	sib_sm_fini(&f->sm);
	sib_link_close(f->sm_link);
	sib_mem_hub_free(f->hub);
	return 0;
}

struct got {
	int n;
	uint8_t mad[IB_MAD_BYTES];
};

static void got_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	struct ib_packet pkt;
	struct sib_mad_addr a;
	const uint8_t *mad;

	(void)from;
	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	mad = sib_mgmt_parse(&pkt, &a);
	assert_non_null(mad);
	memcpy(g->mad, mad, IB_MAD_BYTES);
	g->n++;
}

/* What reaches port i while it asks: the SA's answer to the test, the rest
 * to the port (the SM's Sets that install a group). */
struct split {
	struct sib_hca *hca;
	struct got g;
};

static void split_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct split *sp = arg;
	struct ib_packet pkt;
	struct sib_mad_addr a;
	const uint8_t *mad;

	if (ib_packet_decode(buf, len, &pkt) == IB_PKT_OK && (mad = sib_mgmt_parse(&pkt, &a)) &&
	    mad[1] == IB_MGMT_CLASS_SUBN_ADM && (mad[3] & IB_MAD_METHOD_RESP) &&
	    ib_bits_get(mad, 64, 32) == 0 && ib_bits_get(mad, 96, 32) == 77) {
		got_rx(&sp->g, buf, len, from);
		return;
	}
	sib_progress_rx(sp->hca, 1, buf, len, from);
}

/* An MCMemberRecord request from link with SLID slid, to the SM. */
static void send_mcr(struct fixture *f, struct sib_link *link, uint16_t slid, uint64_t tid,
		     uint8_t method, uint64_t comp, const struct ib_mcmember_record *q)
{
	struct ib_sa_mad m;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];

	memset(&m, 0, sizeof(m));
	m.hdr.BaseVersion = 1;
	m.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	m.hdr.ClassVersion = IB_SA_CLASS_VERSION;
	ib_mad_set_method(&m.hdr, method);
	m.hdr.TransactionID = tid;
	m.hdr.AttributeID = IB_SA_ATTR_MCMEMBER_RECORD;
	m.ComponentMask = comp;
	ib_mcmember_record_encode(q, m.SubnAdmData);
	ib_sa_mad_encode(&m, mad);
	sib_mad_addr_init(&a, SIB_QP1, SIB_SM_LID, slid);
	assert_int_equal(sib_mgmt_send(link, &a, mad, &f->sm_link->local), 0);
}

/* An MCMemberRecord request as port i, from its own socket (the SA
 * believes nothing else, fabric/sa.c). */
static uint16_t ask(struct fixture *f, int i, uint8_t method, uint64_t comp,
		    const struct ib_mcmember_record *q, struct ib_sa_mad *resp)
{
	struct split sp = { .hca = f->h[i] };
	struct sib_link *link = f->h[i]->node.mgmt[0].link;

	send_mcr(f, link, f->h[i]->node.ports[0].LID, 77, method, comp, q);
	/* A join or leave is answered once the member ports installed it:
	 * run the ports too until the answer comes. */
	for (int round = 0; round < 200 && !sp.g.n; round++) {
		sib_sm_step(&f->sm, f->now);
		while (sib_link_poll(link, 16, split_rx, &sp) > 0)
			;
		for (unsigned k = 0; k < 3 && !sp.g.n; k++)
			if (f->h[k])
				sib_progress_poll(f->h[k]);
	}
	assert_int_equal(sp.g.n, 1);
	ib_sa_mad_decode(resp, sp.g.mad);
	assert_int_equal(resp->hdr.TransactionID, 77);
	return resp->hdr.Status;
}

#define CREATE                                                                                     \
	(IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID | IB_MCR_COMP_JOIN_STATE | IB_MCR_COMP_Q_KEY |    \
	 IB_MCR_COMP_TCLASS | IB_MCR_COMP_P_KEY | IB_MCR_COMP_FLOW_LABEL | IB_MCR_COMP_SL)
#define JOIN (IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID | IB_MCR_COMP_JOIN_STATE)

static const uint8_t G1[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xe0, 0, 0, 1 };

static struct ib_mcmember_record rec(struct fixture *f, int i, const uint8_t *mgid, uint8_t js)
{
	struct ib_mcmember_record r;

	memset(&r, 0, sizeof(r));
	if (mgid)
		memcpy(r.MGID.raw, mgid, 16);
	memcpy(r.PortGID.raw, f->h[i]->node.ports[0].GID[0], 16);
	r.Q_Key = 0x12345678;
	r.P_Key = 0xffff;
	r.SL = 0;
	r.JoinState = js;
	return r;
}

static unsigned table(struct fixture *f, uint64_t comp, const struct ib_mcmember_record *q)
{
	struct ib_sa_mad r;

	assert_int_equal(ask(f, 0, IB_MAD_METHOD_GET_TABLE, comp, q, &r), 0);
	return (r.rmpp.Data2 - IB_SA_CLASS_HDR_BYTES) / IB_MCMEMBER_RECORD_BYTES;
}

static void a_group_is_created_joined_left_and_deleted_with_its_last_member(void **state)
{
	struct fixture *f = *state;
	struct ib_mcmember_record q, got;
	struct ib_sa_mad r;
	uint16_t mlid;

	/* A join to a group nobody made, without the creation components. */
	q = rec(f, 0, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, JOIN, &q, &r),
			 IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS);
	/* A NonMember cannot create it. */
	q.JoinState = IB_MCR_JOIN_NON_MEMBER;
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), IB_SA_STATUS_REQ_INVALID);
	/* The FullMember creator: the SA gives the MLID. */
	q.JoinState = IB_MCR_JOIN_FULL_MEMBER;
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), 0);
	assert_int_equal(ib_mad_method(&r.hdr), IB_MAD_METHOD_GET_RESP);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	mlid = got.MLID;
	assert_true(mlid >= 0xc000 && mlid <= 0xfffe);
	assert_memory_equal(got.MGID.raw, G1, 16);
	assert_int_equal(got.Q_Key, 0x12345678);
	assert_int_equal(got.JoinState, IB_MCR_JOIN_FULL_MEMBER);
	/* Port 1 joins as NonMember, port 2 as SendOnlyNonMember; port 1
	 * naming another Q_Key is refused. */
	q = rec(f, 1, G1, IB_MCR_JOIN_NON_MEMBER);
	q.Q_Key = 0x1;
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, JOIN | IB_MCR_COMP_Q_KEY, &q, &r),
			 IB_SA_STATUS_REQ_INVALID);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.MLID, mlid);
	assert_int_equal(got.Q_Key, 0x12345678); /* the group's, for the joiner to use */
	q = rec(f, 2, G1, IB_MCR_JOIN_SEND_ONLY_NON_MEMBER);
	assert_int_equal(ask(f, 2, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	/* Port 1 adds FullMember to its NonMember: one member, both bits. */
	q = rec(f, 1, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.JoinState, IB_MCR_JOIN_FULL_MEMBER | IB_MCR_JOIN_NON_MEMBER);
	q = rec(f, 0, G1, 0);
	assert_int_equal(table(f, IB_MCR_COMP_MGID, &q), 3);
	assert_non_null(sib_sa_mcast_by_mlid(&f->sm, mlid));
	/* Someone else's membership cannot be deleted. */
	q = rec(f, 1, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_DELETE, JOIN, &q, &r), IB_SA_STATUS_REQ_DENIED);
	/* Leaves: port 1 drops FullMember (NonMember stays), then the rest. */
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_DELETE, JOIN, &q, &r), 0);
	assert_int_equal(ib_mad_method(&r.hdr), IB_MAD_METHOD_DELETE_RESP);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.JoinState, IB_MCR_JOIN_NON_MEMBER);
	q.JoinState = IB_MCR_JOIN_NON_MEMBER;
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_DELETE, JOIN, &q, &r), 0);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_DELETE, JOIN, &q, &r), IB_SA_STATUS_REQ_INVALID);
	q = rec(f, 2, G1, IB_MCR_JOIN_SEND_ONLY_NON_MEMBER);
	assert_int_equal(ask(f, 2, IB_MAD_METHOD_DELETE, JOIN, &q, &r), 0);
	assert_non_null(sib_sa_mcast_by_mlid(&f->sm, mlid));
	q = rec(f, 0, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_DELETE, JOIN, &q, &r), 0);
	/* The last member left: the group is gone. */
	assert_null(sib_sa_mcast_by_mlid(&f->sm, mlid));
	q = rec(f, 0, G1, 0);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_GET, IB_MCR_COMP_MGID, &q, &r),
			 IB_SA_STATUS_NO_RECORDS);
}

/* A forged leave: port 1's socket, with port 0's SLID, asks the SA to end
 * port 0's membership.  The SA believes the checked source only (sa.c): no
 * answer, the membership stays, the request is counted. */
static void a_leave_counts_only_from_the_member(void **state)
{
	struct fixture *f = *state;
	struct ib_mcmember_record q;
	struct ib_sa_mad r;
	struct got g = { 0 };
	struct sib_link *l1 = f->h[1]->node.mgmt[0].link;
	uint16_t victim = f->h[0]->node.ports[0].LID;

	q = rec(f, 0, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), 0);
	send_mcr(f, l1, victim, 78, IB_MAD_METHOD_DELETE, JOIN, &q);
	send_mcr(f, f->probe, victim, 78, IB_MAD_METHOD_DELETE, JOIN, &q);
	sib_sm_step(&f->sm, f->now);
	assert_int_equal(f->sm.sa_wrong_source, 2);
	assert_int_equal(sib_link_poll(f->probe, 4, got_rx, &g), 0);
	assert_int_equal(sib_link_poll(l1, 4, got_rx, &g), 0);
	q = rec(f, 0, G1, 0);
	assert_int_equal(table(f, IB_MCR_COMP_MGID, &q), 1);
}

/* One port cannot take the subnet's groups (sa_mcast.h): its 257th
 * membership is refused, another port still creates a group. */
static void a_port_has_at_most_256_memberships(void **state)
{
	struct fixture *f = *state;
	struct ib_mcmember_record q;
	struct ib_sa_mad r;
	uint8_t mgid[16];

	memcpy(mgid, G1, 16);
	for (unsigned i = 0; i <= SIB_SA_MCAST_MEMBERS_PER_PORT; i++) {
		mgid[14] = (uint8_t)(i >> 8);
		mgid[15] = (uint8_t)(i + 2);
		q = rec(f, 0, mgid, IB_MCR_JOIN_FULL_MEMBER);
		assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r),
				 i < SIB_SA_MCAST_MEMBERS_PER_PORT ? 0 : IB_SA_STATUS_NO_RESOURCES);
	}
	q = rec(f, 1, mgid, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, CREATE, &q, &r), 0);
}

static void joins_are_checked_against_the_rules(void **state)
{
	struct fixture *f = *state;
	struct ib_mcmember_record q, got;
	struct ib_sa_mad r;

	/* Another port's PortGID: denied. */
	q = rec(f, 1, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), IB_SA_STATUS_REQ_DENIED);
	/* JoinState 0, or bits beyond the three: invalid. */
	q = rec(f, 0, G1, 0);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), IB_SA_STATUS_REQ_INVALID);
	q.JoinState = 8;
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), IB_SA_STATUS_REQ_INVALID);
	/* A unicast MGID. */
	q = rec(f, 0, NULL, IB_MCR_JOIN_FULL_MEMBER);
	q.MGID.raw[0] = 0xfe;
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r),
			 IB_SA_STATUS_REQ_INVALID_GID);
	/* MGID 0: the SA chooses one; MTU selector "greater than 1024". */
	q = rec(f, 0, NULL, IB_MCR_JOIN_FULL_MEMBER);
	q.MTUSelector = IB_SA_SELECTOR_GT;
	q.MTU = IB_MTU_1024;
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET,
			     CREATE | IB_MCR_COMP_MTU_SELECTOR | IB_MCR_COMP_MTU, &q, &r),
			 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.MGID.raw[0], 0xff);
	assert_int_equal(got.MTU, IB_MTU_2048);
	/* A joiner that wants MTU greater than 2048 does not fit the group. */
	q = rec(f, 1, got.MGID.raw, IB_MCR_JOIN_FULL_MEMBER);
	q.MTUSelector = IB_SA_SELECTOR_GT;
	q.MTU = IB_MTU_2048;
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET,
			     JOIN | IB_MCR_COMP_MTU_SELECTOR | IB_MCR_COMP_MTU, &q, &r),
			 IB_SA_STATUS_REQ_INVALID);
	q.MTUSelector = IB_SA_SELECTOR_LT;
	q.MTU = IB_MTU_4096;
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET,
			     JOIN | IB_MCR_COMP_MTU_SELECTOR | IB_MCR_COMP_MTU, &q, &r),
			 0);
}

static void the_ipoib_broadcast_group_is_there_and_stays(void **state)
{
	struct fixture *f = *state;
	static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					   0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff };
	struct ib_mcmember_record q, got;
	struct ib_sa_mad r;

	q = rec(f, 0, bcast, 0);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_GET, IB_MCR_COMP_MGID, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.Q_Key, SIB_IPOIB_QKEY);
	assert_int_equal(got.P_Key, 0xffff);
	assert_int_equal(got.MTU, IB_MTU_2048);
	/* IPoIB joins it without creation components, and may leave it. */
	q = rec(f, 2, bcast, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 2, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.Q_Key, SIB_IPOIB_QKEY);
	assert_int_equal(ask(f, 2, IB_MAD_METHOD_DELETE, JOIN, &q, &r), 0);
	q = rec(f, 0, bcast, 0);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_GET, IB_MCR_COMP_MGID, &q, &r), 0);
}

static void a_dropped_port_leaves_its_groups(void **state)
{
	struct fixture *f = *state;
	struct ib_mcmember_record q, got;
	struct ib_sa_mad r;
	uint16_t mlid;

	q = rec(f, 2, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 2, IB_MAD_METHOD_SET, CREATE, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	mlid = got.MLID;
	/* Port 2 goes silent: the sweeps drop it, and its group with it. */
	sib_hca_free(f->h[2]);
	f->h[2] = NULL;
	for (int i = 0; i < 20 && sib_sm_active_ports(&f->sm) != 2; i++) {
		f->now += f->sm.sweep_ns;
		settle(f);
		f->now += SIB_SM_TIMEOUT_NS;
		settle(f);
	}
	assert_int_equal(sib_sm_active_ports(&f->sm), 2);
	assert_null(sib_sa_mcast_by_mlid(&f->sm, mlid));
}

/* A UD QP at RTS on h's engine, receiving into buf, with its own CQ. */
struct mqp {
	struct sib_cq *cq;
	struct sib_qp *qp;
	uint32_t lkey;
	uint8_t buf[4][40 + 64];
};

static void mqp_new(struct sib_hca *h, struct mqp *q, uint32_t qkey)
{
	struct sib_cq_init ci = { .cqe = 64 };
	char why[160];
	struct sib_qp_init in = {
		.type = SIB_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.pd = 3,
		.qpns = h->qpns,
		.engine = h->engine,
	};
	struct memreg_mr_attr ma = { .host = q->buf, .iova = (uint64_t)(uintptr_t)q->buf,
				     .length = sizeof(q->buf), .access = MEMREG_ACCESS_LOCAL_WRITE,
				     .pd = 3 };
	struct sib_qp_limits lim = { .active_mtu = SIB_MTU_4096, .pkey_tbl_len = 1,
				     .gid_tbl_len = 1, .phys_port_cnt = 1 };
	struct sib_qp_attr a = { .qp_state = SIB_QPS_INIT, .port_num = 1, .qkey = qkey };

	assert_int_equal(sib_cq_create(&ci, &q->cq), 0);
	in.send_cq = in.recv_cq = q->cq;
	assert_int_equal(sib_qp_create(&in, &q->qp, why, sizeof(why)), 0);
	assert_int_equal(memreg_mr_register(h->memreg, &ma, &q->lkey), 0);
	assert_int_equal(sib_qp_modify(q->qp, &a, SIB_QP_STATE | SIB_QP_PKEY_INDEX | SIB_QP_PORT |
							  SIB_QP_QKEY,
				       &lim, why, sizeof(why)),
			 0);
	a.qp_state = SIB_QPS_RTR;
	assert_int_equal(sib_qp_modify(q->qp, &a, SIB_QP_STATE, &lim, why, sizeof(why)), 0);
	a.qp_state = SIB_QPS_RTS;
	assert_int_equal(sib_qp_modify(q->qp, &a, SIB_QP_STATE | SIB_QP_SQ_PSN, &lim, why,
				       sizeof(why)),
			 0);
	for (int k = 0; k < 4; k++) {
		struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)q->buf[k],
				       .length = sizeof(q->buf[k]), .lkey = q->lkey };

		assert_int_equal(sib_qp_post_recv(q->qp, (uint64_t)k, &sge, 1, why, sizeof(why)),
				 0);
	}
}

static void mqp_free(struct mqp *q)
{
	sib_qp_destroy(q->qp);
	assert_int_equal(sib_cq_destroy(q->cq), 0);
}

static int mqp_recvs(struct mqp *q)
{
	struct sib_cqe c;
	int n = 0;

	while (sib_cq_poll(q->cq, &c, 1) == 1)
		n += c.opcode == SIB_WC_RECV && c.status == SIB_WC_SUCCESS;
	return n;
}

/* Runs the subnet until each QP got want[i] datagrams (or 10 s passed:
 * a datagram from a source not yet known waits for the SA's answer);
 * then checks that nobody got more. */
static void expect_recvs(struct fixture *f, struct mqp *m, const int *want)
{
	int have[3] = { 0 };

	for (int round = 0; round < 10000; round++) {
		bool done = true;

		settle(f);
		for (int i = 0; i < 3; i++) {
			have[i] += mqp_recvs(&m[i]);
			done &= have[i] >= want[i];
		}
		if (done)
			break;
		usleep(1000);
	}
	settle(f);
	for (int i = 0; i < 3; i++)
		assert_int_equal(have[i] + mqp_recvs(&m[i]), want[i]);
}

static void mc_send_from(struct mqp *q, uint16_t mlid, const uint8_t *mgid, uint32_t qkey)
{
	struct sib_send_wqe w = { .wr_id = 1, .opcode = SIB_WR_SEND,
				  .send_flags = SIB_SEND_INLINE, .length = 8 };
	char why[160] = "";

	w.ud.av.DLID = mlid;
	w.ud.av.port_num = 1;
	w.ud.av.is_global = 1;
	memcpy(w.ud.av.DGID, mgid, 16);
	w.ud.remote_qpn = SIB_MCAST_QPN;
	w.ud.remote_qkey = qkey;
	static char payload[8] = "mcastpk";
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)payload, .length = 8 };

	w.num_sge = 1;
	if (sib_qp_post_send(q->qp, &w, &sge, why, sizeof(why)))
		fail_msg("post_send: %s", why);
	sib_qp_kick(q->qp);
}

static void the_sm_programs_member_ports_and_a_send_only_member_reaches_the_receivers(
	void **state)
{
	struct fixture *f = *state;
	struct ib_mcmember_record q, got;
	struct ib_sa_mad r;
	struct mqp m[3];
	char why[160];
	uint16_t mlid;

	/* 0 FullMember (creates), 1 NonMember, 2 SendOnlyNonMember. */
	q = rec(f, 0, G1, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, CREATE, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	mlid = got.MLID;
	q = rec(f, 1, G1, IB_MCR_JOIN_NON_MEMBER);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	q = rec(f, 2, G1, IB_MCR_JOIN_SEND_ONLY_NON_MEMBER);
	assert_int_equal(ask(f, 2, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	/* The answer came once every member installed the latest list. */
	assert_true(f->sm.sa->mcast->program_sets >= 3);
	struct sib_sa_mgroup *g = sib_sa_mcast_by_mlid(&f->sm, mlid);

	assert_non_null(g);
	for (unsigned k = 0; k < g->nmembers; k++)
		assert_true(g->members[k].programmed_gen == g->generation);
	for (int i = 0; i < 3; i++) {
		mqp_new(f->h[i], &m[i], 0x12345678);
		assert_int_equal(sib_qp_mcast_attach(m[i].qp, G1, mlid, why, sizeof(why)), 0);
	}
	/* From the send-only port: ports 0 and 1 receive, port 2's own QP gets
	 * the loopback copy (the HCA loops back whatever its QPs attached). */
	mc_send_from(&m[2], mlid, G1, 0x12345678);
	expect_recvs(f, m, (const int[]){ 1, 1, 1 });
	/* Port 1 leaves: the SM reprograms the others, and tells port 1. */
	q = rec(f, 1, G1, IB_MCR_JOIN_NON_MEMBER);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_DELETE, JOIN, &q, &r), 0);
	settle(f);
	assert_int_equal(f->sm.sa->mcast->ndeparted, 0);
	/* Port 1's QP is still attached, but its port is no member now. */
	mc_send_from(&m[2], mlid, G1, 0x12345678);
	expect_recvs(f, m, (const int[]){ 1, 0, 1 });
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sib_qp_mcast_detach(m[i].qp, G1, mlid, why, sizeof(why)), 0);
		mqp_free(&m[i]);
	}
}

static void a_multicast_ports_set_without_the_m_key_is_refused(void **state)
{
	struct fixture *f = *state;
	struct ib_smp smp;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mcast_ports b = { .Generation = 7, .NumPorts = 1 };
	uint64_t refused = f->h[0]->node.mgmt[0].smp_refused;

	/* A stranger (the probe) Sets a list on port 0 with a wrong M_Key. */
	b.ep[0] = f->probe->local;
	memset(&smp, 0, sizeof(smp));
	smp.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	smp.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp.hdr.ClassVersion = IB_SMP_CLASS_VERSION;
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_SET);
	smp.hdr.TransactionID = 99;
	smp.hdr.AttributeID = SIB_SMP_ATTR_MULTICAST_PORTS;
	smp.hdr.AttributeModifier = sib_mcast_ports_mod(0xc005, 0);
	smp.M_Key = 0x1234;
	sib_mcast_ports_encode(&b, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, f->h[0]->node.ports[0].LID, 1);
	assert_int_equal(sib_mgmt_send(f->probe, &a, mad, &f->h[0]->node.mgmt[0].link->local), 0);
	sib_link_flush(f->probe);
	settle(f);
	assert_int_equal(f->h[0]->node.mgmt[0].smp_refused, refused + 1);
	assert_null(f->h[0]->node.mgmt[0].mcast_stages);
}

static void joins_need_the_partition_and_ipoib_partitions_have_their_broadcast_group(void **state)
{
	struct fixture *f = *state;
	static struct sib_partitions ps;
	static const uint8_t red_bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x11, 0, 0,
					       0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff };
	struct ib_mcmember_record q, got;
	struct ib_sa_mad r;
	char conf[256], err[160];

	snprintf(conf, sizeof(conf), "Default=0x7fff : ALL=full ; red=0x0011, ipoib : 0x%llx=full ;",
		 (unsigned long long)f->h[0]->node.ports[0].port_guid);
	assert_int_equal(sib_partitions_parse(conf, &ps, err, sizeof(err)), 0);
	f->sm.partitions = &ps;
	/* red's IPoIB broadcast group is there from the start. */
	q = rec(f, 0, red_bcast, 0);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_GET, IB_MCR_COMP_MGID, &q, &r), 0);
	ib_mcmember_record_decode(&got, r.SubnAdmData);
	assert_int_equal(got.P_Key, 0x8011);
	assert_int_equal(got.Q_Key, SIB_IPOIB_QKEY);
	/* Port 1 is not in red: it joins neither that group nor creates one. */
	q = rec(f, 1, red_bcast, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, JOIN, &q, &r), IB_SA_STATUS_REQ_INVALID);
	q = rec(f, 1, G1, IB_MCR_JOIN_FULL_MEMBER);
	q.P_Key = 0x8011;
	assert_int_equal(ask(f, 1, IB_MAD_METHOD_SET, CREATE, &q, &r), IB_SA_STATUS_REQ_INVALID);
	/* Port 0 is. */
	q = rec(f, 0, red_bcast, IB_MCR_JOIN_FULL_MEMBER);
	assert_int_equal(ask(f, 0, IB_MAD_METHOD_SET, JOIN, &q, &r), 0);
	f->sm.partitions = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			a_group_is_created_joined_left_and_deleted_with_its_last_member, setup,
			teardown),
		cmocka_unit_test_setup_teardown(joins_are_checked_against_the_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(a_leave_counts_only_from_the_member, setup, teardown),
		cmocka_unit_test_setup_teardown(a_port_has_at_most_256_memberships, setup, teardown),
		cmocka_unit_test_setup_teardown(the_ipoib_broadcast_group_is_there_and_stays, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_dropped_port_leaves_its_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(
			joins_need_the_partition_and_ipoib_partitions_have_their_broadcast_group,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			the_sm_programs_member_ports_and_a_send_only_member_reaches_the_receivers,
			setup, teardown),
		cmocka_unit_test_setup_teardown(a_multicast_ports_set_without_the_m_key_is_refused,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

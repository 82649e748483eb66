/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * UD multicast in the HCA (transport/mcast.h) over the in-memory link: two
 * ports, several UD QPs each, attach / detach and their rules, the fan-out
 * to member ports, loopback to the sending port and the
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB rule.  No threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "engine_world.h"
#include "transport/mcast.h"

#define T_MLID 0xc001
#define QKEY 0x1111

static const uint8_t T_MGID[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
				  0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff };

/* What went over the wire: every data packet a node received. */
struct seen {
	unsigned n;
	uint16_t DLID[16];
	uint32_t DestQP[16];
	bool grh[16];
	uint8_t DGID[16][16];
	int node[16];
};

static bool record(int node, uint64_t idx, const struct ib_packet *pkt, void *arg)
{
	struct seen *s = arg;

	(void)idx;
	if (s->n < 16) {
		s->DLID[s->n] = pkt->lrh.DLID;
		s->DestQP[s->n] = pkt->bth.DestQP;
		s->grh[s->n] = pkt->has_grh;
		memcpy(s->DGID[s->n], pkt->grh.DGID.raw, 16);
		s->node[s->n] = node;
		s->n++;
	}
	return false;
}

static struct sib_qp *mc_qp_typed(struct world *w, int i, enum sib_qp_type t, bool block,
				  uint32_t qkey)
{
	struct node *n = &w->n[i];
	struct sib_qp *qp;
	char why[160];
	struct sib_qp_init in = {
		.type = t,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
		.block_self_mcast_lb = block,
		.send_cq = n->scq,
		.recv_cq = n->rcq,
		.pd = n->pd,
		.qpns = n->qpns,
		.engine = n->eng,
	};

	assert_int_equal(sib_qp_create(&in, &qp, why, sizeof(why)), 0);
	if (t != SIB_QPT_UD)
		return qp;
	struct sib_qp_attr a = { .qp_state = SIB_QPS_INIT, .port_num = 1, .qkey = qkey };

	world_modify(qp, &a, SIB_QP_PKEY_INDEX | SIB_QP_PORT | SIB_QP_QKEY);
	a.qp_state = SIB_QPS_RTR;
	world_modify(qp, &a, 0);
	a.qp_state = SIB_QPS_RTS;
	a.sq_psn = 1;
	world_modify(qp, &a, SIB_QP_SQ_PSN);
	return qp;
}

static struct sib_qp *mc_qp(struct world *w, int i, bool block)
{
	return mc_qp_typed(w, i, SIB_QPT_UD, block, QKEY);
}

static void attach(struct sib_qp *qp)
{
	char why[160] = "";

	if (sib_qp_mcast_attach(qp, T_MGID, T_MLID, why, sizeof(why)))
		fail_msg("attach: %s", why);
}

/* Both ports are members of T_MLID, as the SM would program them. */
static void program_both(struct world *w)
{
	struct sib_endpoint eps[2] = { w->n[0].link->local, w->n[1].link->local };

	for (int i = 0; i < 2; i++)
		assert_int_equal(sib_engine_mcast_set_ports(w->n[i].eng, T_MLID, eps, 2), 0);
}

static uint8_t rbuf[2][8][40 + 64];
static uint8_t sbuf[64];
static uint32_t rkey[2], skey;

static struct world *mc_world(void)
{
	struct world *w = world_new();

	for (int i = 0; i < 2; i++)
		rkey[i] = world_reg(&w->n[i], rbuf[i], sizeof(rbuf[i]), MEMREG_ACCESS_LOCAL_WRITE);
	skey = world_reg(&w->n[0], sbuf, sizeof(sbuf), MEMREG_ACCESS_LOCAL_WRITE);
	return w;
}

/* Receive slot k of node i posted on qp. */
static void post_recv(int i, struct sib_qp *qp, int k)
{
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)rbuf[i][k],
			       .length = sizeof(rbuf[i][k]), .lkey = rkey[i] };
	char why[160];

	assert_int_equal(sib_qp_post_recv(qp, (uint64_t)k, &sge, 1, why, sizeof(why)), 0);
}

/* A multicast SEND of 32 bytes from qp on node 0 (qkey 0: the QP's own,
 * as the high bit asks), with or without GRH, then the wire runs. */
static void mc_send(struct world *w, struct sib_qp *qp, bool grh)
{
	struct sib_send_wqe s = { .wr_id = 9, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)sbuf, .length = 32, .lkey = skey };
	char why[160] = "";
	struct sib_cqe c;

	memset(sbuf, 0x5a, sizeof(sbuf));
	s.ud.av.DLID = T_MLID;
	s.ud.av.port_num = 1;
	if (grh) {
		s.ud.av.is_global = 1;
		s.ud.av.hop_limit = 1;
		memcpy(s.ud.av.DGID, T_MGID, 16);
	}
	s.ud.remote_qpn = SIB_MCAST_QPN;
	s.ud.remote_qkey = 0x80000000u;
	assert_int_equal(sib_engine_resolve(w->n[0].eng, &s.ud.av, &s.ud.dest), 0);
	s.num_sge = 1;
	if (sib_qp_post_send(qp, &s, &sge, why, sizeof(why)))
		fail_msg("post_send: %s", why);
	sib_qp_kick(qp);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
}

/* Receive completions of node i, by QP: how many each of qps got. */
static void drain(struct world *w, int i, struct sib_qp *const *qps, unsigned nq, unsigned *got)
{
	struct sib_cqe c;

	memset(got, 0, nq * sizeof(*got));
	while (world_poll(w->n[i].rcq, &c) == 1) {
		bool known = false;

		assert_int_equal(c.status, SIB_WC_SUCCESS);
		assert_int_equal(c.byte_len, 40 + 32);
		for (unsigned q = 0; q < nq; q++) {
			if (c.qp_num == sib_qp_num(qps[q])) {
				got[q]++;
				known = true;
			}
		}
		assert_true(known);
	}
}

static void a_multicast_reaches_every_attached_qp_on_every_member_port(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *a = mc_qp(w, 0, false), *b = mc_qp(w, 0, false);
	struct sib_qp *c = mc_qp(w, 1, false), *d = mc_qp(w, 1, false);
	struct sib_qp *q0[2] = { a, b }, *q1[2] = { c, d };
	struct seen seen = { 0 };
	unsigned got[2];
	struct sib_cqe cqe;

	(void)state;
	program_both(w);
	attach(a);
	attach(b);
	attach(c);
	post_recv(0, a, 0);
	post_recv(0, b, 1);
	post_recv(1, c, 0);
	post_recv(1, d, 1); /* d is not attached: gets nothing */
	w->drop = record;
	w->drop_arg = &seen;
	mc_send(w, a, true);
	/* One packet per member port, each with the T_MLID, QP 0xFFFFFF and the T_MGID. */
	assert_int_equal(seen.n, 2);
	for (unsigned k = 0; k < seen.n; k++) {
		assert_int_equal(seen.DLID[k], T_MLID);
		assert_int_equal(seen.DestQP[k], SIB_MCAST_QPN);
		assert_true(seen.grh[k]);
		assert_memory_equal(seen.DGID[k], T_MGID, 16);
	}
	assert_int_not_equal(seen.node[0], seen.node[1]);
	/* Counted for PortCountersExtended: a copy per port sent, one received each. */
	{
		struct sib_engine_counters ec0, ec1;

		sib_engine_counters_get(w->n[0].eng, &ec0);
		sib_engine_counters_get(w->n[1].eng, &ec1);
		assert_int_equal(ec0.tx_mcast, 2);
		assert_int_equal(ec0.rx_mcast, 1);
		assert_int_equal(ec1.rx_mcast, 1);
	}
	/* The sending QP gets its own copy (mcast.h), and so does its neighbour. */
	drain(w, 0, q0, 2, got);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 1);
	drain(w, 1, q1, 2, got);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 0);
	/* What arrived: the GRH with the T_MGID, then the payload. */
	assert_memory_equal(rbuf[1][0] + 24, T_MGID, 16);
	assert_int_equal(rbuf[1][0][40], 0x5a);
	(void)cqe;
	sib_qp_destroy(a);
	sib_qp_destroy(b);
	sib_qp_destroy(c);
	sib_qp_destroy(d);
	world_free(w);
}

static void block_self_mcast_lb_blocks_only_the_senders_own_copy(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *a = mc_qp(w, 0, true), *b = mc_qp(w, 0, false), *c = mc_qp(w, 1, false);
	struct sib_qp *q0[2] = { a, b }, *q1[1] = { c };
	unsigned got[2];

	(void)state;
	program_both(w);
	attach(a);
	attach(b);
	attach(c);
	post_recv(0, a, 0);
	post_recv(0, b, 1);
	post_recv(1, c, 0);
	mc_send(w, a, true);
	drain(w, 0, q0, 2, got);
	assert_int_equal(got[0], 0); /* a blocks what it sent itself */
	assert_int_equal(got[1], 1); /* b on the same port still gets it */
	drain(w, 1, q1, 1, got);
	assert_int_equal(got[0], 1);
	/* a still receives what another QP sends */
	mc_send(w, b, true);
	drain(w, 0, q0, 2, got);
	assert_int_equal(got[0], 1);
	sib_qp_destroy(a);
	sib_qp_destroy(b);
	sib_qp_destroy(c);
	world_free(w);
}

static void attached_twice_is_one_copy_and_detach_stops_delivery(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *a = mc_qp(w, 0, false), *c = mc_qp(w, 1, false);
	struct sib_qp *q1[1] = { c };
	struct sib_mcast_group_info gi[2];
	struct sib_engine_counters ec;
	unsigned got[1];
	char why[160];

	(void)state;
	program_both(w);
	attach(c);
	attach(c);
	assert_int_equal(sib_qp_mcast_groups(c), 1);
	post_recv(1, c, 0);
	post_recv(1, c, 1);
	mc_send(w, a, true);
	drain(w, 1, q1, 1, got);
	assert_int_equal(got[0], 1);
	assert_int_equal(sib_engine_mcast_groups(w->n[1].eng, gi, 2), 1);
	assert_int_equal(gi[0].MLID, T_MLID);
	assert_int_equal(gi[0].nqp, 1);
	assert_int_equal(gi[0].ports, 2);
	assert_int_equal(sib_qp_mcast_detach(c, T_MGID, T_MLID, why, sizeof(why)), 0);
	assert_int_equal(sib_qp_mcast_detach(c, T_MGID, T_MLID, why, sizeof(why)), EINVAL);
	assert_int_equal(sib_engine_mcast_groups(w->n[1].eng, gi, 2), 0);
	mc_send(w, a, true);
	drain(w, 1, q1, 1, got);
	assert_int_equal(got[0], 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_bad_mcast, 1); /* the port is still programmed: counted */
	sib_qp_destroy(a);
	sib_qp_destroy(c);
	world_free(w);
}

static void a_port_the_sm_has_not_listed_gets_nothing_but_loopback_works(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *a = mc_qp(w, 0, false), *b = mc_qp(w, 0, false), *c = mc_qp(w, 1, false);
	struct sib_qp *q0[2] = { a, b }, *q1[1] = { c };
	unsigned got[2];

	(void)state;
	attach(b);
	attach(c);
	post_recv(0, b, 0);
	post_recv(1, c, 0);
	mc_send(w, a, false); /* no GRH: the T_MLID selects the group */
	drain(w, 0, q0, 2, got);
	assert_int_equal(got[0], 0); /* a is not attached */
	assert_int_equal(got[1], 1);
	drain(w, 1, q1, 1, got);
	assert_int_equal(got[0], 0);
	sib_qp_destroy(a);
	sib_qp_destroy(b);
	sib_qp_destroy(c);
	world_free(w);
}

static void each_copy_passes_its_own_qps_q_key_check(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *a = mc_qp(w, 0, false);
	struct sib_qp *c = mc_qp(w, 1, false), *e = mc_qp_typed(w, 1, SIB_QPT_UD, false, 0x2222);
	struct sib_qp *q1[2] = { c, e };
	struct sib_engine_counters ec;
	unsigned got[2];

	(void)state;
	program_both(w);
	attach(c);
	attach(e);
	post_recv(1, c, 0);
	post_recv(1, e, 1);
	mc_send(w, a, true);
	drain(w, 1, q1, 2, got);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.Q_KeyViolations, 1);
	sib_qp_destroy(a);
	sib_qp_destroy(c);
	sib_qp_destroy(e);
	world_free(w);
}

static void attach_refuses_what_hardware_refuses(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *rc = mc_qp_typed(w, 0, SIB_QPT_RC, false, 0);
	struct sib_qp *ud = mc_qp(w, 0, false);
	uint8_t unicast[16] = { 0xfe, 0x80 };
	char why[160];

	(void)state;
	assert_int_equal(sib_qp_mcast_attach(rc, T_MGID, T_MLID, why, sizeof(why)), EINVAL);
	assert_non_null(strstr(why, "UD"));
	assert_int_equal(sib_qp_mcast_attach(ud, unicast, T_MLID, why, sizeof(why)), EINVAL);
	assert_non_null(strstr(why, "multicast GID"));
	assert_int_equal(sib_qp_mcast_attach(ud, T_MGID, 0x0011, why, sizeof(why)), EINVAL);
	assert_non_null(strstr(why, "multicast LID"));
	assert_int_equal(sib_qp_mcast_attach(ud, T_MGID, 0xffff, why, sizeof(why)), EINVAL);
	attach(ud);
	/* The same T_MGID under another T_MLID on this port. */
	assert_int_equal(sib_qp_mcast_attach(ud, T_MGID, T_MLID + 1, why, sizeof(why)), EINVAL);
	assert_int_equal(sib_qp_mcast_detach(ud, T_MGID, T_MLID + 1, why, sizeof(why)), EINVAL);
	sib_qp_destroy(rc);
	sib_qp_destroy(ud);
	world_free(w);
}

static void limits_are_the_advertised_ones(void **state)
{
	struct world *w = mc_world();
	struct sib_qp *qps[SIB_MAX_MCAST_QP_ATTACH + 1];
	struct sib_mcast_group_info gi;
	uint8_t g[16];
	char why[160];

	(void)state;
	for (int i = 0; i <= SIB_MAX_MCAST_QP_ATTACH; i++)
		qps[i] = mc_qp(w, 0, false);
	for (int i = 0; i < SIB_MAX_MCAST_QP_ATTACH; i++)
		attach(qps[i]);
	assert_int_equal(sib_qp_mcast_attach(qps[SIB_MAX_MCAST_QP_ATTACH], T_MGID, T_MLID, why,
					     sizeof(why)),
			 ENOMEM);
	assert_non_null(strstr(why, "max_mcast_qp_attach"));
	/* Groups: max_mcast_grp of them, then no more. */
	memcpy(g, T_MGID, 16);
	for (int i = 1; i < SIB_MAX_MCAST_GRP; i++) {
		g[14] = (uint8_t)(i >> 8);
		g[15] = (uint8_t)i;
		assert_int_equal(sib_qp_mcast_attach(qps[SIB_MAX_MCAST_QP_ATTACH], g,
						     (uint16_t)(T_MLID + i), why, sizeof(why)),
				 0);
	}
	g[13] = 1;
	assert_int_equal(sib_qp_mcast_attach(qps[SIB_MAX_MCAST_QP_ATTACH], g, T_MLID, why,
					     sizeof(why)),
			 ENOMEM);
	assert_non_null(strstr(why, "max_mcast_grp"));
	assert_int_equal(sib_engine_mcast_groups(w->n[0].eng, &gi, 1), SIB_MAX_MCAST_GRP);
	/* A destroyed QP leaves every group; the last one out deletes them. */
	for (int i = 0; i <= SIB_MAX_MCAST_QP_ATTACH; i++)
		sib_qp_destroy(qps[i]);
	assert_int_equal(sib_engine_mcast_groups(w->n[0].eng, &gi, 1), 0);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_multicast_reaches_every_attached_qp_on_every_member_port),
		cmocka_unit_test(block_self_mcast_lb_blocks_only_the_senders_own_copy),
		cmocka_unit_test(attached_twice_is_one_copy_and_detach_stops_delivery),
		cmocka_unit_test(a_port_the_sm_has_not_listed_gets_nothing_but_loopback_works),
		cmocka_unit_test(each_copy_passes_its_own_qps_q_key_check),
		cmocka_unit_test(attach_refuses_what_hardware_refuses),
		cmocka_unit_test(limits_are_the_advertised_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * UC and UD over the in-memory link, and the receive checks every packet
 * passes (P_Key, Q_Key, the source check): two HCAs in one process, no
 * threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "engine_world.h"
#include "transport/rxq.h"

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

struct drop_plan {
	int node;
	uint64_t which;
};

static bool drop_nth(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct drop_plan *p = arg;

	(void)pkt;
	return node == p->node && n == p->which;
}

static void uc_message_missing_a_middle_packet_is_dropped_and_the_next_arrives(void **state)
{
	struct world *w = world_new();
	enum { LEN = 256 * 5 };
	static uint8_t src[LEN], dst[2][LEN];
	struct drop_plan plan = { .node = 1, .which = 2 }; /* the third packet: a Middle */
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	world_qp(w, 0, SIB_QPT_UC, 16);
	world_qp(w, 1, SIB_QPT_UC, 16);
	world_connect(w, SIB_MTU_256);
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);

	world_post_recv(&w->n[1], 1, dst[0], LEN, rk);
	world_post_recv(&w->n[1], 2, dst[1], LEN, rk);
	w->drop = drop_nth;
	w->drop_arg = &plan;
	fill(src, LEN, 1);
	struct sib_send_wqe s = { .wr_id = 10, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };

	world_post_send(&w->n[0], &s, src, LEN, sk);
	world_pump(w);
	/* The requester completes at once: UC has no ACKs. */
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_uc_dropped, 2); /* the Middle and Last after the gap */

	fill(src, LEN, 2);
	s.wr_id = 11;
	world_post_send(&w->n[0], &s, src, LEN, sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 1); /* the abandoned message's WQE is reused */
	assert_int_equal(c.byte_len, LEN);
	assert_memory_equal(dst[0], src, LEN);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	world_free(w);
}

static void uc_write_with_immediate_lands_and_completes(void **state)
{
	struct world *w = world_new();
	static uint8_t src[600], dst[600], rb[4];
	struct sib_cqe c;

	(void)state;
	world_qp(w, 0, SIB_QPT_UC, 16);
	world_qp(w, 1, SIB_QPT_UC, 16);
	world_connect(w, SIB_MTU_512);
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst),
				MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE);

	world_post_recv(&w->n[1], 3, rb, sizeof(rb), world_reg(&w->n[1], rb, 4, MEMREG_ACCESS_LOCAL_WRITE));
	fill(src, sizeof(src), 3);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_RDMA_WRITE_WITH_IMM,
				  .imm_data = 0x04030201 };

	s.rdma.remote_addr = (uint64_t)(uintptr_t)dst;
	s.rdma.rkey = rk;
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.opcode, SIB_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(c.imm_data, 0x04030201);
	assert_int_equal(c.byte_len, sizeof(src));
	assert_memory_equal(dst, src, sizeof(src));
	world_free(w);
}

/* IBA C9-88 on UC: a zero-length WRITE with immediate lands whatever its
 * R_Key and VA, and still consumes a receive WQE. */
static void uc_zero_length_write_with_immediate_needs_no_rkey(void **state)
{
	struct world *w = world_new();
	static uint8_t rb[4];
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = SIB_SEND_SIGNALED, .imm_data = 0x0a0b0c0d };
	struct sib_engine_counters ec;
	struct sib_cqe c;
	char why[160] = "";

	(void)state;
	world_qp(w, 0, SIB_QPT_UC, 16);
	world_qp(w, 1, SIB_QPT_UC, 16);
	world_connect(w, SIB_MTU_512);
	world_post_recv(&w->n[1], 3, rb, sizeof(rb), world_reg(&w->n[1], rb, 4, MEMREG_ACCESS_LOCAL_WRITE));
	s.rdma.remote_addr = 0x7fffab14a010ull;
	s.rdma.rkey = 0xab149fd0;
	s.num_sge = 0;
	assert_int_equal(sib_qp_post_send(w->n[0].qp, &s, NULL, why, sizeof(why)), 0);
	sib_qp_kick(w->n[0].qp);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 3);
	assert_int_equal(c.opcode, SIB_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(c.imm_data, 0x0a0b0c0d);
	assert_int_equal(c.byte_len, 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_uc_dropped, 0);
	world_free(w);
}

/* Two UD QPs with Q_Key 0x1111 (receiver qkey given). */
static struct world *ud_world(uint32_t rcv_qkey)
{
	struct world *w = world_new();

	world_qp(w, 0, SIB_QPT_UD, 16);
	world_qp(w, 1, SIB_QPT_UD, 16);
	for (int i = 0; i < 2; i++) {
		struct sib_qp_attr a = { .qp_state = SIB_QPS_INIT, .port_num = 1 };

		a.qkey = i ? rcv_qkey : 0x1111;
		world_modify(w->n[i].qp, &a, SIB_QP_PKEY_INDEX | SIB_QP_PORT | SIB_QP_QKEY);
		a.qp_state = SIB_QPS_RTR;
		world_modify(w->n[i].qp, &a, 0);
		a.qp_state = SIB_QPS_RTS;
		a.sq_psn = 5;
		world_modify(w->n[i].qp, &a, SIB_QP_SQ_PSN);
	}
	return w;
}

/* A UD SEND from node 0 to QP number qpn of node 1, then the wire runs. */
static void ud_send_to(struct world *w, uint32_t qpn, bool grh, uint32_t qkey, const void *src,
		       uint32_t len, uint32_t sk)
{
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND_WITH_IMM,
				  .send_flags = SIB_SEND_SIGNALED, .imm_data = 0x0d0c0b0a };

	s.ud.av.DLID = w->n[1].port.LID;
	s.ud.av.SL = 3;
	s.ud.av.port_num = 1;
	if (grh) {
		s.ud.av.is_global = 1;
		s.ud.av.hop_limit = 64;
		s.ud.av.flow_label = 0x12345;
		memcpy(s.ud.av.DGID, w->n[1].port.GID[0], 16);
	}
	s.ud.remote_qpn = qpn;
	s.ud.remote_qkey = qkey;
	s.ud.dest = w->n[1].link->local;
	world_post_send(&w->n[0], &s, (void *)src, len, sk);
	world_pump(w);
}

static void ud_send(struct world *w, bool grh, uint32_t qkey, const void *src, uint32_t len,
		    uint32_t sk)
{
	ud_send_to(w, sib_qp_num(w->n[1].qp), grh, qkey, src, len, sk);
}

static void ud_send_fills_the_grh_area_and_the_completion(bool grh)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[300], dst[40 + 300];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_cqe c;

	memset(dst, 0xee, sizeof(dst));
	fill(src, sizeof(src), 4);
	world_post_recv(&w->n[1], 6, dst, sizeof(dst), rk);
	ud_send(w, grh, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 6);
	assert_int_equal(c.byte_len, 40 + sizeof(src));
	assert_int_equal(c.src_qp, sib_qp_num(w->n[0].qp));
	assert_int_equal(c.slid, w->n[0].port.LID);
	assert_int_equal(c.sl, 3);
	assert_int_equal(c.pkey_index, 0);
	assert_true(c.wc_flags & SIB_WC_WITH_IMM);
	assert_int_equal(c.imm_data, 0x0d0c0b0a);
	assert_memory_equal(dst + 40, src, sizeof(src));
	if (grh) {
		assert_true(c.wc_flags & SIB_WC_GRH);
		assert_int_equal(dst[0] >> 4, 6); /* IPVer */
		assert_memory_equal(dst + 8, w->n[0].port.GID[0], 16);  /* SGID */
		assert_memory_equal(dst + 24, w->n[1].port.GID[0], 16); /* DGID */
	} else {
		assert_false(c.wc_flags & SIB_WC_GRH);
	}
	world_free(w);
}

static void ud_send_with_grh_fills_the_grh_area(void **state)
{
	(void)state;
	ud_send_fills_the_grh_area_and_the_completion(true);
}

static void ud_send_without_grh_reports_no_grh(void **state)
{
	(void)state;
	ud_send_fills_the_grh_area_and_the_completion(false);
}

static void ud_q_key_mismatch_is_dropped_and_counted(void **state)
{
	struct world *w = ud_world(0x2222);
	static uint8_t src[16], dst[64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	world_post_recv(&w->n[1], 6, dst, sizeof(dst), rk);
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.Q_KeyViolations, 1);
	/* The WR's Q_Key with the high bit set means "the QP's own" (0x1111 here). */
	ud_send(w, false, 0x80000000u, src, sizeof(src), sk);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.Q_KeyViolations, 2);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	ud_send(w, false, 0x2222, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	world_free(w);
}

static void p_key_mismatch_is_dropped_and_counted(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[16], dst[64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	w->n[1].port.P_Key[0] = 0x8001; /* another partition */
	world_post_recv(&w->n[1], 6, dst, sizeof(dst), rk);
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.P_KeyViolations, 1);
	/* Limited members of the same partition do not talk (IBA 10.9.3). */
	w->n[0].port.P_Key[0] = 0x0001;
	w->n[1].port.P_Key[0] = 0x0001;
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.P_KeyViolations, 2);
	/* A full member and a limited one do. */
	w->n[0].port.P_Key[0] = 0x8001;
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	world_free(w);
}

static void ud_datagram_larger_than_the_mtu_is_a_local_length_error(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[4097];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_cqe c;

	(void)state;
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_LOC_LEN_ERR);
	world_free(w);
}

static void packet_to_an_unknown_qp_is_dropped_and_counted(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[16];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_engine_counters ec;

	(void)state;
	ud_send_to(w, 0x777, false, 0x1111, src, sizeof(src), sk);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_no_qp, 1);
	world_free(w);
}

/* The engine remembers the QP the last packet went to; once that QP is
 * destroyed, a packet for its number finds nothing (and touches no freed
 * memory: the sanitizer build runs this too). */
static void destroyed_qp_gets_nothing_even_right_after_a_packet(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[16], dst[40 + 16];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_engine_counters ec;
	struct sib_cqe c;
	uint32_t qpn;

	(void)state;
	world_post_recv(&w->n[1], 6, dst, sizeof(dst), rk);
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(w->n[1].rx_count, 1);
	qpn = sib_qp_num(w->n[1].qp);
	sib_qp_destroy(w->n[1].qp);
	w->n[1].qp = NULL;
	ud_send_to(w, qpn, false, 0x1111, src, sizeof(src), sk);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_no_qp, 1);
	world_free(w);
}

/* A packet built by hand (an attacker's), sent from link `from` to node 1. */
static void forge(struct world *w, struct sib_link *from, struct ib_packet *pkt,
		  const void *payload, uint32_t len)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t n = ib_packet_encode(pkt, payload, len, buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(sib_link_send(from, buf, n, &w->n[1].link->local), 0);
	sib_link_flush(from);
	world_pump(w);
}

/*
 * The attack: an RDMA WRITE with the peer's SLID, the right QP, PSN and
 * R_Key (all of which a sniffer sees), sent from another socket.  It is
 * dropped and counted; the same bytes from the peer's own socket land.
 */
static void a_forged_rc_write_from_another_socket_is_dropped(void **state)
{
	struct world *w = world_new();
	static uint8_t dst[64], evil_bytes[16];
	struct sib_engine_counters ec;
	struct sib_link *evil;
	struct ib_packet pkt;
	uint32_t rk;

	(void)state;
	world_qp(w, 0, SIB_QPT_RC, 16);
	world_qp(w, 1, SIB_QPT_RC, 16);
	world_connect(w, SIB_MTU_4096);
	rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE |
						  MEMREG_ACCESS_REMOTE_WRITE);
	memset(dst, 0x11, sizeof(dst));
	memset(evil_bytes, 0xee, sizeof(evil_bytes));
	assert_int_equal(sib_link_mem_open(w->hub, 4096, &evil), 0);

	memset(&pkt, 0, sizeof(pkt));
	pkt.lrh.LNH = IB_LNH_IBA_LOCAL;
	pkt.lrh.SLID = w->n[0].port.LID;
	pkt.lrh.DLID = w->n[1].port.LID;
	pkt.bth.OpCode = IB_OPCODE(IB_TRANSPORT_RC, IB_OP_WRITE_ONLY);
	pkt.bth.P_Key = 0xffff;
	pkt.bth.DestQP = sib_qp_num(w->n[1].qp);
	pkt.bth.PSN = 0xfffff1; /* the responder's expected PSN (world_connect) */
	pkt.reth.VA = (uint64_t)(uintptr_t)dst;
	pkt.reth.R_Key = rk;
	pkt.reth.DMALen = sizeof(evil_bytes);
	forge(w, evil, &pkt, evil_bytes, sizeof(evil_bytes));
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_wrong_endpoint, 1);
	for (size_t i = 0; i < sizeof(dst); i++)
		assert_int_equal(dst[i], 0x11);

	/* The very same packet from the peer's socket is a WRITE like any. */
	forge(w, w->n[0].link, &pkt, evil_bytes, sizeof(evil_bytes));
	assert_memory_equal(dst, evil_bytes, sizeof(evil_bytes));
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_wrong_endpoint, 1);
	sib_link_close(evil);
	world_free(w);
}

/* A UD datagram counts only from where its SLID lives (as the SA knows
 * it); one from an SLID nobody knows is dropped too. */
static void a_forged_ud_datagram_is_dropped_by_its_source(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t dst[40 + 16], payload[16];
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_engine_counters ec;
	struct sib_link *evil;
	struct ib_packet pkt;
	struct sib_cqe c;

	(void)state;
	assert_int_equal(sib_link_mem_open(w->hub, 4096, &evil), 0);
	world_post_recv(&w->n[1], 6, dst, sizeof(dst), rk);
	memset(&pkt, 0, sizeof(pkt));
	pkt.lrh.LNH = IB_LNH_IBA_LOCAL;
	pkt.lrh.SLID = w->n[0].port.LID;
	pkt.lrh.DLID = w->n[1].port.LID;
	pkt.bth.OpCode = IB_OPCODE(IB_TRANSPORT_UD, IB_OP_SEND_ONLY);
	pkt.bth.P_Key = 0xffff;
	pkt.bth.DestQP = sib_qp_num(w->n[1].qp);
	pkt.deth.Q_Key = 0x1111;
	pkt.deth.SrcQP = sib_qp_num(w->n[0].qp);
	forge(w, evil, &pkt, payload, sizeof(payload));
	pkt.lrh.SLID = 0x99;
	forge(w, evil, &pkt, payload, sizeof(payload));
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_wrong_endpoint, 1);
	assert_int_equal(ec.rx_unknown_source, 1);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	/* From node 0's own socket it is delivered. */
	pkt.lrh.SLID = w->n[0].port.LID;
	forge(w, w->n[0].link, &pkt, payload, sizeof(payload));
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	sib_link_close(evil);
	world_free(w);
}

/* The answer comes in after the First packet of a message was parked. */
static bool answer_after_the_first(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct world *w = arg;

	(void)pkt;
	if (node == 1 && n == 1)
		w->slow_lid = 0;
	return false;
}

/*
 * A UC message whose First packet waits in its QP's queue for the SA's
 * answer, while the answer comes in before its Middle and Last arrive:
 * they go behind the First (same QP, same source: rxq.h), the First is
 * applied before them, and the message lands whole.  Before the
 * order rule, they passed it, were dropped out of sequence, and the
 * message was lost: ibv_uc_pingpong -g hung under load.
 */
static void uc_packets_wait_behind_a_waiting_first(void **state)
{
	struct world *w = world_new();
	enum { LEN = 256 * 4 };
	static uint8_t src[LEN], dst[LEN];
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	world_qp(w, 0, SIB_QPT_UC, 16);
	world_qp(w, 1, SIB_QPT_UC, 16);
	w->slow_lid = w->n[0].port.LID; /* node 1 cannot place node 0 yet */
	world_connect(w, SIB_MTU_256);
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, LEN, MEMREG_ACCESS_LOCAL_WRITE);

	fill(src, LEN, 3);
	world_post_recv(&w->n[1], 2, dst, LEN, rk);
	w->drop = answer_after_the_first;
	w->drop_arg = w;
	world_post_send(&w->n[0], &s, src, LEN, sk);
	world_pump(w);
	/* The Middle found the First waiting and went behind it; its arrival
	 * had the QP look again, and the answer was in by then. */
	sib_engine_source_known(w->n[1].eng, w->n[0].port.LID);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.byte_len, LEN);
	assert_memory_equal(dst, src, LEN);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_uc_dropped, 0);
	assert_int_equal(sib_engine_next_deadline(w->n[1].eng), 0);
	world_free(w);
}

/* A datagram from a source the SA has not placed yet waits for the answer
 * (the first SENDs of a new peer are not lost), then passes the checks;
 * one whose answer never comes is dropped after a second. */
static void a_datagram_waits_for_its_source_to_be_known(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[16], dst[2][40 + 16];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_engine_counters ec;
	struct sib_cqe c;
	uint64_t d;

	(void)state;
	world_post_recv(&w->n[1], 6, dst[0], sizeof(dst[0]), rk);
	world_post_recv(&w->n[1], 7, dst[1], sizeof(dst[1]), rk);
	w->lookup_pending = true;
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	d = sib_engine_next_deadline(w->n[1].eng);
	assert_true(d > 0 && d <= w->now + SIB_RXQ_WAIT_NS);
	/* Still asked: a tick before its time is up leaves it waiting. */
	w->now += SIB_RXQ_WAIT_NS / 2;
	sib_engine_tick(w->n[1].eng);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	/* The answer is in: delivered, nothing counted as dropped. */
	w->lookup_pending = false;
	sib_engine_source_known(w->n[1].eng, w->n[0].port.LID);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 6);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_unknown_source, 0);
	assert_int_equal(ec.rx_waited, 1);
	/* No answer within SIB_RXQ_WAIT_NS: dropped and counted.  (Later,
	 * when the QP no longer trusts the source it saw a second ago.) */
	w->now += 2 * SIB_RXQ_WAIT_NS;
	w->lookup_pending = true;
	ud_send(w, false, 0x1111, src, sizeof(src), sk);
	w->now += SIB_RXQ_WAIT_NS;
	sib_engine_tick(w->n[1].eng);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_unknown_source, 1);
	assert_int_equal(sib_engine_next_deadline(w->n[1].eng), 0);
	world_free(w);
}

/*
 * A UD send whose AH the SA had not placed by the time of the post (the SM
 * was starved: Open MPI's ranks under load) waits on its send queue and
 * leaves once the answer is in, instead of going nowhere; a verb never
 * waits on the SA.  A LID no port has loses the datagram, counted, and the
 * WQE completes, as on a fabric.
 */
static void a_ud_send_waits_for_the_sa_to_place_its_destination(void **state)
{
	struct world *w = ud_world(0x1111);
	static uint8_t src[16], dst[40 + 16];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;
	uint64_t d;

	(void)state;
	fill(src, sizeof(src), 9);
	world_post_recv(&w->n[1], 6, dst, sizeof(dst), rk);
	s.ud.av.DLID = w->n[1].port.LID;
	s.ud.av.port_num = 1;
	s.ud.remote_qpn = sib_qp_num(w->n[1].qp);
	s.ud.remote_qkey = 0x1111; /* s.ud.dest: none, the SA had not answered */
	w->lookup_pending = true;
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0); /* waiting, not sent */
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	d = sib_engine_next_deadline(w->n[0].eng);
	assert_true(d > w->now); /* it looks again later, not in a busy loop */
	w->now = d;
	sib_engine_tick(w->n[0].eng);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0); /* still asked */
	w->lookup_pending = false;
	w->now = sib_engine_next_deadline(w->n[0].eng);
	sib_engine_tick(w->n[0].eng);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_memory_equal(dst + 40, src, sizeof(src));

	/* No port has the LID: lost and counted; the WQE completes. */
	s.wr_id = 2;
	s.ud.av.DLID = 0x0999;
	world_post_recv(&w->n[1], 7, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 2);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	sib_engine_counters_get(w->n[0].eng, &ec);
	assert_int_equal(ec.tx_ud_no_path, 1);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(destroyed_qp_gets_nothing_even_right_after_a_packet),
		cmocka_unit_test(a_forged_rc_write_from_another_socket_is_dropped),
		cmocka_unit_test(a_forged_ud_datagram_is_dropped_by_its_source),
		cmocka_unit_test(a_datagram_waits_for_its_source_to_be_known),
		cmocka_unit_test(uc_packets_wait_behind_a_waiting_first),
		cmocka_unit_test(a_ud_send_waits_for_the_sa_to_place_its_destination),
		cmocka_unit_test(uc_message_missing_a_middle_packet_is_dropped_and_the_next_arrives),
		cmocka_unit_test(uc_write_with_immediate_lands_and_completes),
		cmocka_unit_test(uc_zero_length_write_with_immediate_needs_no_rkey),
		cmocka_unit_test(ud_send_with_grh_fills_the_grh_area),
		cmocka_unit_test(ud_send_without_grh_reports_no_grh),
		cmocka_unit_test(ud_q_key_mismatch_is_dropped_and_counted),
		cmocka_unit_test(p_key_mismatch_is_dropped_and_counted),
		cmocka_unit_test(ud_datagram_larger_than_the_mtu_is_a_local_length_error),
		cmocka_unit_test(packet_to_an_unknown_qp_is_dropped_and_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RC over the in-memory link, two HCAs in one process, no threads: SEND,
 * WRITE, READ and atomics, segmentation, RNR, go-back-N after a lost
 * packet, NAKs mapped to completion statuses on both sides, and retry
 * exhaustion driven by a test clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>

#include "engine_world.h"
#include "base/log.h"
#include "transport/qp_impl.h"
#include "transport/rxq.h"

#define ALL_ACCESS                                                                                 \
	(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ |     \
	 MEMREG_ACCESS_REMOTE_ATOMIC)

static struct world *rc_world(enum sib_mtu mtu)
{
	struct world *w = world_new();

	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	world_connect(w, mtu);
	return w;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 8));
}

/* Send of `len` bytes at a path MTU; checks data and both completions. */
static void send_and_check(enum sib_mtu mtu, uint32_t len, bool imm)
{
	struct world *w = rc_world(mtu);
	uint8_t *src = malloc(len), *dst = calloc(1, len + 16);
	uint32_t sk = world_reg(&w->n[0], src, len, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, len + 16, MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = imm ? SIB_WR_SEND_WITH_IMM : SIB_WR_SEND,
				  .send_flags = SIB_SEND_SIGNALED | SIB_SEND_SOLICITED,
				  .imm_data = 0x78563412 };
	struct sib_cqe c;

	fill(src, len, 3);
	world_post_recv(&w->n[1], 77, dst, len + 16, rk);
	world_post_send(&w->n[0], &s, src, len, sk);
	world_pump(w);

	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 77);
	assert_int_equal(c.opcode, SIB_WC_RECV);
	assert_int_equal(c.byte_len, len);
	assert_int_equal(c.src_qp, sib_qp_num(w->n[0].qp));
	assert_int_equal(c.slid, w->n[0].port.LID);
	assert_int_equal(c.qp_num, sib_qp_num(w->n[1].qp));
	if (imm) {
		assert_true(c.wc_flags & SIB_WC_WITH_IMM);
		assert_int_equal(c.imm_data, 0x78563412);
	} else {
		assert_false(c.wc_flags & SIB_WC_WITH_IMM);
	}
	assert_memory_equal(src, dst, len);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_RTS);
	free(src);
	free(dst);
	world_free(w);
}

static void rc_send_delivers_bytes_and_both_completions(void **state)
{
	(void)state;
	send_and_check(SIB_MTU_1024, 100, false);
	send_and_check(SIB_MTU_1024, 0, true);
}

/*
 * An RC QP that reached RTR before the SA placed its peer (a starved SM:
 * Open MPI's rc_verbs under load) holds its first SEND until the answer
 * comes, then sends it: no request went nowhere, so no retry is spent and
 * the QP never ends in RETRY_EXC_ERR for the SM's slowness.
 */
static void rc_send_waits_for_the_sa_to_place_the_peer(void **state)
{
	struct world *w = world_new();
	static uint8_t src[100], dst[100];
	uint32_t sk, rk;
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;
	uint64_t d;

	(void)state;
	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	w->resolve_timeout = true; /* modify_qp: no answer within the SA client's budget */
	w->lookup_pending = true; /* ... and none since */
	world_connect(w, SIB_MTU_1024);
	sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	fill(src, sizeof(src), 5);
	world_post_recv(&w->n[1], 2, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	d = sib_engine_next_deadline(w->n[0].eng);
	assert_true(d > w->now); /* looks again later, not in a busy loop */
	/* Longer than the whole retry budget (timeout 14, retry_cnt 3). */
	for (int i = 0; i < 1000; i++) {
		w->now += 10000000ull;
		sib_engine_tick(w->n[0].eng);
		world_pump(w);
	}
	assert_int_equal(world_poll(w->n[0].scq, &c), 0);
	w->lookup_pending = false;
	w->now = sib_engine_next_deadline(w->n[0].eng);
	sib_engine_tick(w->n[0].eng);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_memory_equal(dst, src, sizeof(src));
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	sib_engine_counters_get(w->n[0].eng, &ec);
	assert_int_equal(ec.retransmits, 0);
	assert_int_equal(ec.timeouts, 0);
	world_free(w);
}

/*
 * ... and the responder: a request from a peer the SA has not placed yet
 * waits for the answer in its QP's queue (rxq.h), is applied when the SA
 * answers (sib_engine_source_known), and costs the requester no retry.  Before, it was dropped as from an unknown
 * source, and a starved SM spent the requester's retries (rc_write_bw's
 * RETRY_EXC_ERR under load).
 */
static void rc_request_waits_for_the_sa_to_place_its_source(void **state)
{
	struct world *w = world_new();
	static uint8_t src[100], dst[100];
	uint32_t sk, rk;
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	w->slow_lid = w->n[0].port.LID; /* node 1 cannot place node 0 yet */
	world_connect(w, SIB_MTU_1024);
	sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	fill(src, sizeof(src), 6);
	world_post_recv(&w->n[1], 2, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0); /* waiting, not dropped */
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_unknown_source, 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_waited, 1);
	w->slow_lid = 0; /* the answer is in */
	sib_engine_source_known(w->n[1].eng, w->n[0].port.LID);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_memory_equal(dst, src, sizeof(src));
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	sib_engine_counters_get(w->n[0].eng, &ec);
	assert_int_equal(ec.retransmits, 0);
	world_free(w);
}

static void rc_send_segments_at_mtu_256_and_4096(void **state)
{
	(void)state;
	send_and_check(SIB_MTU_256, 256 * 40 + 17, true);
	send_and_check(SIB_MTU_4096, 4096 * 30, false);
}

static void rc_unsignaled_sends_complete_silently_signaled_ones_in_order(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t src[64], dst[4][64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_cqe c;

	(void)state;
	for (int i = 0; i < 4; i++)
		world_post_recv(&w->n[1], (uint64_t)i, dst[i], 64, rk);
	for (int i = 0; i < 4; i++) {
		struct sib_send_wqe s = { .wr_id = 10 + (uint64_t)i, .opcode = SIB_WR_SEND,
					  .send_flags = i == 3 ? SIB_SEND_SIGNALED : 0 };

		world_post_send(&w->n[0], &s, src, 64, sk);
	}
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 13, SIB_WC_SUCCESS, SIB_WC_SEND);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0);
	assert_int_equal(sib_qp_sq_count(w->n[0].qp), 0);
	for (int i = 0; i < 4; i++)
		world_expect_cqe(w->n[1].rcq, (uint64_t)i, SIB_WC_SUCCESS, SIB_WC_RECV);
	world_free(w);
}

static void rc_write_places_data_and_write_imm_consumes_a_receive(void **state)
{
	struct world *w = rc_world(SIB_MTU_256);
	enum { LEN = 256 * 9 + 5 };
	static uint8_t src[LEN], dst[LEN + 64];
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 5, .opcode = SIB_WR_RDMA_WRITE,
				  .send_flags = SIB_SEND_SIGNALED };
	struct sib_cqe c;

	(void)state;
	fill(src, LEN, 9);
	s.rdma.remote_addr = (uint64_t)(uintptr_t)dst + 32;
	s.rdma.rkey = rk;
	world_post_send(&w->n[0], &s, src, LEN, sk);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 5, SIB_WC_SUCCESS, SIB_WC_RDMA_WRITE);
	assert_memory_equal(dst + 32, src, LEN);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0); /* plain WRITE: no receive completion */

	static uint8_t rbuf[8];
	world_post_recv(&w->n[1], 99, rbuf, sizeof(rbuf), world_reg(&w->n[1], rbuf, 8, ALL_ACCESS));
	s.wr_id = 6;
	s.opcode = SIB_WR_RDMA_WRITE_WITH_IMM;
	s.imm_data = 0xefbeadde;
	fill(src, LEN, 1);
	world_post_send(&w->n[0], &s, src, 300, sk);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 6, SIB_WC_SUCCESS, SIB_WC_RDMA_WRITE);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.wr_id, 99);
	assert_int_equal(c.opcode, SIB_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(c.byte_len, 300);
	assert_int_equal(c.imm_data, 0xefbeadde);
	assert_true(c.wc_flags & SIB_WC_WITH_IMM);
	assert_memory_equal(dst + 32, src, 300);
	world_free(w);
}

static void rc_read_fetches_multi_packet_data(void **state)
{
	struct world *w = rc_world(SIB_MTU_512);
	enum { LEN = 512 * 20 + 100 };
	static uint8_t remote[LEN], local[LEN];
	uint32_t lk = world_reg(&w->n[0], local, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], remote, LEN, ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 8, .opcode = SIB_WR_RDMA_READ,
				  .send_flags = SIB_SEND_SIGNALED };
	struct sib_cqe c;

	(void)state;
	fill(remote, LEN, 5);
	s.rdma.remote_addr = (uint64_t)(uintptr_t)remote;
	s.rdma.rkey = rk;
	world_post_send(&w->n[0], &s, local, LEN, lk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.opcode, SIB_WC_RDMA_READ);
	assert_int_equal(c.byte_len, LEN);
	assert_memory_equal(local, remote, LEN);
	world_free(w);
}

static void rc_atomics_return_the_old_value_and_update_memory(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint64_t target[2], result;
	uint32_t lk = world_reg(&w->n[0], &result, 8, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], target, sizeof(target), ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	target[1] = 40;
	s.atomic.remote_addr = (uint64_t)(uintptr_t)&target[1];
	s.atomic.rkey = rk;
	s.atomic.compare_add = 2;
	world_post_send(&w->n[0], &s, &result, 8, lk);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_FETCH_ADD);
	assert_int_equal(result, 40);
	assert_int_equal(target[1], 42);

	s.wr_id = 2;
	s.opcode = SIB_WR_ATOMIC_CMP_AND_SWP;
	s.atomic.compare_add = 42;
	s.atomic.swap = 0x1122334455667788ull;
	world_post_send(&w->n[0], &s, &result, 8, lk);
	s.wr_id = 3; /* compare fails now: memory unchanged, old value returned */
	s.atomic.swap = 7;
	world_post_send(&w->n[0], &s, &result, 8, lk);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_SUCCESS, SIB_WC_COMP_SWAP);
	world_expect_cqe(w->n[0].scq, 3, SIB_WC_SUCCESS, SIB_WC_COMP_SWAP);
	assert_int_equal(result, 0x1122334455667788ull);
	assert_int_equal(target[1], 0x1122334455667788ull);
	world_free(w);
}

static void rc_misaligned_atomic_is_sent_and_refused_by_the_responder(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint64_t target[2], result;
	uint32_t lk = world_reg(&w->n[0], &result, 8, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], target, sizeof(target), ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 4, .opcode = SIB_WR_ATOMIC_FETCH_AND_ADD };

	(void)state;
	s.atomic.remote_addr = (uint64_t)(uintptr_t)target + 4;
	s.atomic.rkey = rk;
	world_post_send(&w->n[0], &s, &result, 8, lk);
	world_pump(w);
	/* Sent, and refused by the responder (NAK Invalid Request, IBA
	 * 9.4.5): REM_INV_REQ_ERR, both QPs in ERR, the target untouched. */
	world_expect_cqe(w->n[0].scq, 4, SIB_WC_REM_INV_REQ_ERR, 0);
	assert_int_equal(target[0], 0);
	assert_int_equal(target[1], 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_ERR);
	world_free(w);
}

static void rc_rnr_nak_then_retry_succeeds_once_a_receive_is_posted(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t src[2000], dst[2000];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	fill(src, sizeof(src), 4);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_true(ec.tx_rnr_naks >= 1);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0); /* waiting out the RNR timer */
	world_post_recv(&w->n[1], 5, dst, sizeof(dst), rk);
	assert_true(world_advance(w)); /* the RNR timer expires: resend */
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(w->n[1].rcq, 5, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(src, dst, sizeof(src));
	world_free(w);
}

static void rc_rnr_retry_exhausted_is_rnr_retry_exc_err(void **state)
{
	struct world *w = world_new();
	static uint8_t src[16];
	struct sib_send_wqe s = { .wr_id = 9, .opcode = SIB_WR_SEND };
	struct sib_cqe c;
	int rounds = 0;

	(void)state;
	w->rnr_retry = 2;
	world_qp(w, 0, SIB_QPT_RC, 16);
	world_qp(w, 1, SIB_QPT_RC, 16);
	world_connect(w, SIB_MTU_1024);
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);

	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	while (world_poll(w->n[0].scq, &c) == 0 && rounds++ < 10)
		assert_true(world_advance(w));
	assert_int_equal(c.status, SIB_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(c.wr_id, 9);
	assert_int_equal(rounds, 2); /* the first try and two retries were NAKed */
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	world_free(w);
}

struct drop_plan {
	int node;
	uint64_t which; /* drop the which-th data packet arriving at node */
	int dropped;
};

static bool drop_one(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct drop_plan *p = arg;

	(void)pkt;
	if (node == p->node && n == p->which && !p->dropped) {
		p->dropped = 1;
		return true;
	}
	return false;
}

static void rc_lost_packet_is_recovered_by_go_back_n(void **state)
{
	struct world *w = rc_world(SIB_MTU_256);
	enum { LEN = 256 * 30 };
	static uint8_t src[LEN], dst[LEN];
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct drop_plan plan = { .node = 1, .which = 7 };
	struct sib_engine_counters ec;

	(void)state;
	fill(src, LEN, 8);
	w->drop = drop_one;
	w->drop_arg = &plan;
	world_post_recv(&w->n[1], 2, dst, LEN, rk);
	world_post_send(&w->n[0], &s, src, LEN, sk);
	world_pump(w);
	assert_int_equal(plan.dropped, 1);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_true(ec.tx_seq_naks >= 1);
	sib_engine_counters_get(w->n[0].eng, &ec);
	assert_true(ec.retransmits >= 1);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(w->n[1].rcq, 2, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(src, dst, LEN);
	world_free(w);
}

static void rc_lost_last_packet_is_resent_after_the_ack_timeout(void **state)
{
	struct world *w = rc_world(SIB_MTU_256);
	enum { LEN = 256 * 3 };
	static uint8_t src[LEN], dst[LEN];
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct drop_plan plan = { .node = 1, .which = 2 };
	struct sib_cqe c;

	(void)state;
	fill(src, LEN, 2);
	w->drop = drop_one;
	w->drop_arg = &plan;
	world_post_recv(&w->n[1], 2, dst, LEN, rk);
	world_post_send(&w->n[0], &s, src, LEN, sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0);
	uint64_t before = w->now;

	assert_true(world_advance(w));
	/* 4.096 us * 2^14 = 67.1 ms (IBA 9.7.6.1.3) */
	assert_int_equal(w->now - before, 4096ull << 14);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(w->n[1].rcq, 2, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(src, dst, LEN);
	world_free(w);
}

static void lost_read_response_is_requested_again(void **state)
{
	struct world *w = rc_world(SIB_MTU_256);
	enum { LEN = 256 * 12 };
	static uint8_t remote[LEN], local[LEN];
	uint32_t lk = world_reg(&w->n[0], local, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], remote, LEN, ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 8, .opcode = SIB_WR_RDMA_READ,
				  .send_flags = SIB_SEND_SIGNALED };
	struct drop_plan plan = { .node = 0, .which = 4 };

	(void)state;
	fill(remote, LEN, 6);
	w->drop = drop_one;
	w->drop_arg = &plan;
	s.rdma.remote_addr = (uint64_t)(uintptr_t)remote;
	s.rdma.rkey = rk;
	world_post_send(&w->n[0], &s, local, LEN, lk);
	world_pump(w);
	assert_int_equal(plan.dropped, 1);
	world_expect_cqe(w->n[0].scq, 8, SIB_WC_SUCCESS, SIB_WC_RDMA_READ);
	assert_memory_equal(local, remote, LEN);
	world_free(w);
}

static void lost_atomic_ack_is_answered_from_the_saved_result(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint64_t target, result;
	uint32_t lk = world_reg(&w->n[0], &result, 8, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], &target, 8, ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = SIB_SEND_SIGNALED };
	struct drop_plan plan = { .node = 0, .which = 0 };
	struct sib_engine_counters ec;

	(void)state;
	target = 100;
	w->drop = drop_one;
	w->drop_arg = &plan;
	s.atomic.remote_addr = (uint64_t)(uintptr_t)&target;
	s.atomic.rkey = rk;
	s.atomic.compare_add = 1;
	world_post_send(&w->n[0], &s, &result, 8, lk);
	world_pump(w);
	assert_int_equal(plan.dropped, 1);
	assert_true(world_advance(w)); /* ACK timeout: the atomic is sent again */
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_FETCH_ADD);
	assert_int_equal(result, 100);
	assert_int_equal(target, 101); /* executed once */
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_duplicates, 1);
	world_free(w);
}

/* A WRITE the responder refuses: status on the requester, responder in ERR. */
static void write_refused(void *dst_base, uint64_t addr, uint32_t rkey, struct world *w, const char *rule)
{
	static uint8_t src[64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 3, .opcode = SIB_WR_RDMA_WRITE };
	char line[256] = "";

	(void)dst_base;
	s.rdma.remote_addr = addr;
	s.rdma.rkey = rkey;
	sib_log_capture(line, sizeof(line));
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	sib_log_capture(NULL, 0);
	world_expect_cqe(w->n[0].scq, 3, SIB_WC_REM_ACCESS_ERR, 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_ERR);
	assert_non_null(strstr(line, "softib:"));
	(void)rule;
}

static void rc_bad_rkey_is_rem_access_err_and_responder_enters_error(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t dst[64];
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), ALL_ACCESS);

	(void)state;
	write_refused(dst, (uint64_t)(uintptr_t)dst, rk ^ 0x1, w, "stale key");
	assert_int_equal(dst[0], 0);
	world_free(w);
}

static void rc_write_outside_the_region_is_rem_access_err(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t dst[128];
	uint32_t rk = world_reg(&w->n[1], dst, 64, ALL_ACCESS);

	(void)state;
	write_refused(dst, (uint64_t)(uintptr_t)dst + 32, rk, w, "bounds");
	assert_int_equal(dst[100], 0);
	world_free(w);
}

static void rc_write_without_remote_write_right_is_rem_access_err(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t dst[64];
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst),
				MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_READ);

	(void)state;
	write_refused(dst, (uint64_t)(uintptr_t)dst, rk, w, "rights");
	world_free(w);
}

/* IBA 9.7.5.2.4 / 10.3.1: after the NAK both QPs are in ERR and all their
 * outstanding work completes with WR_FLUSH_ERR, on both sides. */
static void rc_access_error_flushes_outstanding_work_on_both_sides(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t src[64], dst[64], rbuf[2][64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), ALL_ACCESS);
	uint32_t rbk = world_reg(&w->n[1], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe bad = { .wr_id = 1, .opcode = SIB_WR_RDMA_WRITE,
				    .send_flags = SIB_SEND_SIGNALED };
	struct sib_send_wqe next = { .wr_id = 2, .opcode = SIB_WR_SEND,
				     .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	world_post_recv(&w->n[1], 10, rbuf[0], 64, rbk);
	world_post_recv(&w->n[1], 11, rbuf[1], 64, rbk);
	bad.rdma.remote_addr = (uint64_t)(uintptr_t)dst;
	bad.rdma.rkey = rk ^ 0x100; /* a key that was never handed out */
	world_post_send(&w->n[0], &bad, src, sizeof(src), sk);
	world_post_send(&w->n[0], &next, src, sizeof(src), sk);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_REM_ACCESS_ERR, 0);
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_WR_FLUSH_ERR, 0);
	world_expect_cqe(w->n[1].rcq, 10, SIB_WC_WR_FLUSH_ERR, 0);
	world_expect_cqe(w->n[1].rcq, 11, SIB_WC_WR_FLUSH_ERR, 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_ERR);
	world_free(w);
}

static void rc_send_longer_than_the_receive_is_rem_inv_req_and_loc_len(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t src[100], dst[50];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND };

	(void)state;
	world_post_recv(&w->n[1], 2, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_REM_INV_REQ_ERR, 0);
	world_expect_cqe(w->n[1].rcq, 2, SIB_WC_LOC_LEN_ERR, 0);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_ERR);
	world_free(w);
}

static void rc_peer_gone_ends_in_retry_exc_err_after_retry_cnt_timeouts(void **state)
{
	struct world *w = rc_world(SIB_MTU_1024);
	static uint8_t src[64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND };
	struct sib_send_wqe s2 = { .wr_id = 2, .opcode = SIB_WR_SEND };
	struct sib_cqe c;
	uint64_t start = w->now;
	int timeouts = 0;

	(void)state;
	sib_qp_destroy(w->n[1].qp); /* the peer vanishes */
	w->n[1].qp = NULL;
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_post_send(&w->n[0], &s2, src, sizeof(src), sk);
	world_pump(w);
	while (world_poll(w->n[0].scq, &c) == 0 && timeouts < 20) {
		assert_true(world_advance(w));
		timeouts++;
	}
	assert_int_equal(c.status, SIB_WC_RETRY_EXC_ERR);
	assert_int_equal(c.wr_id, 1);
	/* retry_cnt 3: the first try and three retries each wait one timeout */
	assert_int_equal(timeouts, 4);
	assert_int_equal(w->now - start, 4 * (4096ull << 14));
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_WR_FLUSH_ERR, 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	world_free(w);
}

/* Two RC QPs connected at MTU 1024, node 1's receiving from an SRQ in PD
 * srq_pd (0: node 1's own). */
static struct world *srq_world(uint32_t srq_pd)
{
	struct world *w = world_new();
	struct sib_srq_init si = { .max_wr = 8, .max_sge = 2, .pd = srq_pd ? srq_pd : w->n[1].pd };
	char why[160];

	assert_int_equal(sib_srq_create(&si, &w->n[1].srq, why, sizeof(why)), 0);
	world_qp(w, 0, SIB_QPT_RC, 16);
	world_qp(w, 1, SIB_QPT_RC, 16);
	world_connect(w, SIB_MTU_1024);
	return w;
}

static void rc_srq_receive_takes_the_oldest_srq_wqe(void **state)
{
	struct world *w = srq_world(0);
	static uint8_t src[32], dst[3][32];
	char why[160];
	struct sib_cqe c;

	(void)state;
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);

	for (int i = 0; i < 3; i++)
		world_post_recv(&w->n[1], 40 + (uint64_t)i, dst[i], 32, rk);
	assert_int_equal(sib_srq_modify(w->n[1].srq, 0, 3, SIB_SRQ_LIMIT, why, sizeof(why)), 0);
	memcpy(src, "through the shared receive queue", 32);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND };

	world_post_send(&w->n[0], &s, src, 32, sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 40);
	assert_memory_equal(dst[0], src, 32);
	assert_int_equal(sib_srq_count(w->n[1].srq), 2);
	sib_qp_destroy(w->n[1].qp);
	w->n[1].qp = NULL;
	world_free(w);
}

/* IBA 10.2.9: WQEs taken from an SRQ are checked against the SRQ's PD, not
 * the QP's: a buffer registered in the SRQ's PD takes the message, one in
 * the QP's PD is refused (LOC_PROT_ERR). */
static void rc_srq_receives_are_checked_against_the_srqs_pd(void **state)
{
	struct world *w = srq_world(100);
	static uint8_t src[32], dst[2][32];
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND };
	uint32_t qp_pd, sk, in_srq_pd, in_qp_pd;
	struct sib_cqe c;

	(void)state;
	sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	qp_pd = w->n[1].pd;
	assert_int_not_equal(qp_pd, 100);
	in_qp_pd = world_reg(&w->n[1], dst[1], 32, MEMREG_ACCESS_LOCAL_WRITE);
	w->n[1].pd = 100; /* the next MR is the SRQ's */
	in_srq_pd = world_reg(&w->n[1], dst[0], 32, MEMREG_ACCESS_LOCAL_WRITE);
	w->n[1].pd = qp_pd;

	world_post_recv(&w->n[1], 50, dst[0], 32, in_srq_pd);
	memcpy(src, "into a buffer of the SRQ's PD...", 32);
	world_post_send(&w->n[0], &s, src, 32, sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.wr_id, 50);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_memory_equal(dst[0], src, 32);

	world_post_recv(&w->n[1], 51, dst[1], 32, in_qp_pd);
	s.wr_id = 2;
	world_post_send(&w->n[0], &s, src, 32, sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.wr_id, 51);
	assert_int_equal(c.status, SIB_WC_LOC_PROT_ERR);
	sib_qp_destroy(w->n[1].qp);
	w->n[1].qp = NULL;
	world_free(w);
}

/* ... and one whose source stays unknown is dropped when its wait is over
 * (counted as unknown_source); the requester's retry then gets through. */
static void rc_request_whose_source_stays_unknown_is_dropped_in_time(void **state)
{
	struct world *w = world_new();
	static uint8_t src[100], dst[100];
	uint32_t sk, rk;
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	w->slow_lid = w->n[0].port.LID;
	world_connect(w, SIB_MTU_1024);
	sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	world_post_recv(&w->n[1], 2, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_true(sib_engine_next_deadline(w->n[1].eng) <= w->now + SIB_RXQ_WAIT_NS);
	w->now += SIB_RXQ_WAIT_NS;
	sib_engine_tick(w->n[1].eng);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_unknown_source, 1);
	w->slow_lid = 0;
	w->now += 10ull * 1000000000ull; /* the requester's ACK timeout: it retries */
	sib_engine_tick(w->n[0].eng);
	world_pump(w);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	world_free(w);
}

/* What node 0 receives, in order. */
struct order {
	uint8_t op[8];
	unsigned n;
};

static bool record_order(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct order *o = arg;

	(void)n;
	if (node == 0 && o->n < 8)
		o->op[o->n++] = pkt->bth.OpCode;
	return false;
}

/*
 * The transmit rule: an ACK never leaves after a request made after it.
 * Node 1 receives a SEND (its ACK is queued on the link, whenever the
 * link hands it to the kernel), then posts a SEND of its own: node 0 sees
 * the ACK first, so its SEND completes before its next receive does
 * (librpma's receive-completion example relies on it; before, the ACK
 * followed the reply).
 */
static void an_ack_leaves_ahead_of_a_request_made_after_it(void **state)
{
	static uint8_t src[64], dst[64], back[64];
	struct world *w = rc_world(SIB_MTU_1024);
	uint32_t sk = world_reg(&w->n[0], src, 64, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, 64, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t sk1 = world_reg(&w->n[1], src, 64, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t bk = world_reg(&w->n[0], back, 64, MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND,
				  .send_flags = SIB_SEND_SIGNALED };
	struct order o = { 0 };

	(void)state;
	world_post_recv(&w->n[1], 7, dst, 64, rk);
	world_post_recv(&w->n[0], 8, back, 64, bk);
	w->drop = record_order;
	w->drop_arg = &o;
	world_post_send(&w->n[0], &s, src, 64, sk);
	/* Node 1 takes the SEND and makes its ACK at once. */
	assert_true(sib_engine_poll(w->n[1].eng, 64) > 0);
	world_expect_cqe(w->n[1].rcq, 7, SIB_WC_SUCCESS, SIB_WC_RECV);
	s.wr_id = 2;
	world_post_send(&w->n[1], &s, src, 64, sk1);
	world_pump(w);
	assert_true(o.n >= 2);
	assert_int_equal(o.op[0], IB_OPCODE(IB_TRANSPORT_RC, IB_OP_ACKNOWLEDGE));
	assert_int_equal(o.op[1], IB_OPCODE(IB_TRANSPORT_RC, IB_OP_SEND_ONLY));
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(w->n[0].rcq, 8, SIB_WC_SUCCESS, SIB_WC_RECV);
	world_expect_cqe(w->n[1].scq, 2, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_free(w);
}

/* Affiliated events a QP raised, by kind. */
struct qp_events {
	struct sib_event_sink sink;
	unsigned count[SIB_EV_GID_CHANGE + 1];
};

static void count_event(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port)
{
	(void)obj;
	(void)port;
	((struct qp_events *)sink)->count[ev]++;
}

/*
 * IBA 10.3.1.4: SQD starts no new WQE, finishes the ones that began, and
 * the drain ends (SQ_DRAINED, once) only when every one of them is
 * acknowledged.  Two 4 KiB SENDs are in flight when the QP enters SQD; a
 * third posted in SQD stays on the queue until the QP is back in RTS.
 * Before, SQD kept sending and raised SQ_DRAINED at once.
 */
static void sqd_drains_what_began_and_raises_sq_drained_when_acknowledged(void **state)
{
	struct world *w = world_new();
	static uint8_t src[3][4096], dst[3][4096];
	struct qp_events ev = { .sink.deliver = count_event };
	struct sib_send_wqe s = { .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_qp_attr a = { .qp_state = SIB_QPS_SQD, .en_sqd_async_notify = 1 }, q;
	char why[160] = "";
	uint32_t sk, rk;
	uint64_t rx_before;

	(void)state;
	w->n[0].sink = &ev.sink;
	world_qp(w, 0, SIB_QPT_RC, 16);
	world_qp(w, 1, SIB_QPT_RC, 16);
	world_connect(w, SIB_MTU_1024);
	sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 3; i++) {
		fill(src[i], sizeof(src[i]), (uint8_t)(i + 1));
		world_post_recv(&w->n[1], (uint64_t)i, dst[i], sizeof(dst[i]), rk);
	}
	for (int i = 0; i < 2; i++) {
		s.wr_id = (uint64_t)i;
		world_post_send(&w->n[0], &s, src[i], sizeof(src[i]), sk);
	}
	/* In flight, unacknowledged: the QP drains. */
	assert_int_equal(sib_qp_modify(w->n[0].qp, &a, SIB_QP_STATE | SIB_QP_EN_SQD_ASYNC_NOTIFY,
				       &world_lim, why, sizeof(why)),
			 0);
	sib_qp_query(w->n[0].qp, &q);
	assert_int_equal(q.qp_state, SIB_QPS_SQD);
	assert_int_equal(q.sq_draining, 1);
	assert_int_equal(ev.count[SIB_EV_SQ_DRAINED], 0);
	s.wr_id = 2;
	world_post_send(&w->n[0], &s, src[2], sizeof(src[2]), sk);
	rx_before = w->n[1].rx_count;
	world_pump(w);
	/* The two that began arrived and were acknowledged; the third did
	 * not leave. */
	assert_int_equal(w->n[1].rx_count - rx_before, 8);
	world_expect_cqe(w->n[0].scq, 0, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	assert_int_equal(ev.count[SIB_EV_SQ_DRAINED], 1);
	sib_qp_query(w->n[0].qp, &q);
	assert_int_equal(q.sq_draining, 0);
	/* Back to RTS: the third goes. */
	a.qp_state = SIB_QPS_RTS;
	assert_int_equal(sib_qp_modify(w->n[0].qp, &a, SIB_QP_STATE, &world_lim, why, sizeof(why)),
			 0);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_SUCCESS, SIB_WC_SEND);
	for (int i = 0; i < 3; i++)
		world_expect_cqe(w->n[1].rcq, (uint64_t)i, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(dst, src, sizeof(src));
	assert_int_equal(ev.count[SIB_EV_SQ_DRAINED], 1);
	world_free(w);
}

/* The engine counts the RC QPs with requests in flight (they share one
 * window): counted while unacknowledged, not once acknowledged, not after
 * the QP is destroyed with requests still out. */
static void rc_qps_in_flight_are_counted_until_acked_or_destroyed(void **state)
{
	struct world *w = rc_world(SIB_MTU_4096);
	static uint8_t src[65536], dst[65536];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND,
				  .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	assert_int_equal(sib_engine_rc_busy(w->n[0].eng), 0);
	world_post_recv(&w->n[1], 1, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	assert_int_equal(sib_engine_rc_busy(w->n[0].eng), 1);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	assert_int_equal(sib_engine_rc_busy(w->n[0].eng), 0);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	assert_int_equal(sib_engine_rc_busy(w->n[0].eng), 1);
	sib_qp_destroy(w->n[0].qp);
	w->n[0].qp = NULL;
	assert_int_equal(sib_engine_rc_busy(w->n[0].eng), 0);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rc_send_delivers_bytes_and_both_completions),
		cmocka_unit_test(rc_send_waits_for_the_sa_to_place_the_peer),
		cmocka_unit_test(rc_request_waits_for_the_sa_to_place_its_source),
		cmocka_unit_test(an_ack_leaves_ahead_of_a_request_made_after_it),
		cmocka_unit_test(sqd_drains_what_began_and_raises_sq_drained_when_acknowledged),
		cmocka_unit_test(rc_request_whose_source_stays_unknown_is_dropped_in_time),
		cmocka_unit_test(rc_qps_in_flight_are_counted_until_acked_or_destroyed),
		cmocka_unit_test(rc_send_segments_at_mtu_256_and_4096),
		cmocka_unit_test(rc_unsignaled_sends_complete_silently_signaled_ones_in_order),
		cmocka_unit_test(rc_write_places_data_and_write_imm_consumes_a_receive),
		cmocka_unit_test(rc_read_fetches_multi_packet_data),
		cmocka_unit_test(rc_atomics_return_the_old_value_and_update_memory),
		cmocka_unit_test(rc_misaligned_atomic_is_sent_and_refused_by_the_responder),
		cmocka_unit_test(rc_rnr_nak_then_retry_succeeds_once_a_receive_is_posted),
		cmocka_unit_test(rc_rnr_retry_exhausted_is_rnr_retry_exc_err),
		cmocka_unit_test(rc_lost_packet_is_recovered_by_go_back_n),
		cmocka_unit_test(rc_lost_last_packet_is_resent_after_the_ack_timeout),
		cmocka_unit_test(lost_read_response_is_requested_again),
		cmocka_unit_test(lost_atomic_ack_is_answered_from_the_saved_result),
		cmocka_unit_test(rc_bad_rkey_is_rem_access_err_and_responder_enters_error),
		cmocka_unit_test(rc_write_outside_the_region_is_rem_access_err),
		cmocka_unit_test(rc_write_without_remote_write_right_is_rem_access_err),
		cmocka_unit_test(rc_access_error_flushes_outstanding_work_on_both_sides),
		cmocka_unit_test(rc_send_longer_than_the_receive_is_rem_inv_req_and_loc_len),
		cmocka_unit_test(rc_peer_gone_ends_in_retry_exc_err_after_retry_cnt_timeouts),
		cmocka_unit_test(rc_srq_receive_takes_the_oldest_srq_wqe),
		cmocka_unit_test(rc_srq_receives_are_checked_against_the_srqs_pd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

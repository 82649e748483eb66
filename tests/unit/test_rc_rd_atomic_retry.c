/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The retry paths of RDMA READ and atomics over the in-memory link: an ACK
 * that reveals an unanswered READ / atomic costs a retry like a local ACK
 * timeout (IBA 9.7.5.1.2 / 9.7.6.1.3), so a responder that never answers
 * ends in RETRY_EXC_ERR; and the responder's resources (max_dest_rd_atomic,
 * IBA 9.7.5.1.4), driven with crafted requests of a misbehaving peer: the
 * newest results are replayed, a forgotten atomic is never executed again
 * nor NAKed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>

#include "engine_world.h"

#define PSN_MASK 0xffffffu /* 24-bit PSNs (IBA 9.3.1) */

#define ALL_ACCESS                                                                                 \
	(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ |     \
	 MEMREG_ACCESS_REMOTE_ATOMIC)

static struct world *rc_world(uint8_t max_dest_rd_atomic)
{
	struct world *w = world_new();

	w->max_dest_rd_atomic = max_dest_rd_atomic;
	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	world_connect(w, SIB_MTU_1024); /* retry_cnt 3, max_rd_atomic 4 */
	return w;
}

/* Advances timers until the send CQ has something (at most 20 timeouts). */
static int advance_until_completion(struct world *w)
{
	int n = 0;

	while (!sib_cq_count(w->n[0].scq) && n < 20) {
		assert_true(world_advance(w));
		n++;
	}
	return n;
}

/* What crosses the wire, and which answers never arrive. */
struct tap {
	int read_requests;    /* READ requests reaching node 1 */
	bool drop_read_rsp;   /* node 0 never sees a READ response */
	int drop_atomic_acks; /* node 0 loses this many atomic ACKs */
	bool swallow;	      /* node 0 sees nothing at all (crafted requests) */
	int atomic_acks;      /* atomic ACKs node 1 sent */
	uint32_t ack_psn[16];
	uint64_t ack_orig[16];
	int naks; /* NAKs node 1 sent */
};

static bool tap_packets(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct tap *t = arg;
	uint32_t f = pkt->op->flags;

	(void)n;
	if (node == 1) {
		if ((f & IB_OPF_REQUEST) && (f & IB_OPF_READ))
			t->read_requests++;
		return false;
	}
	if ((f & IB_OPF_ATOMIC) && (f & IB_OPF_RESPONSE)) {
		if (t->atomic_acks < 16) {
			t->ack_psn[t->atomic_acks] = pkt->bth.PSN;
			t->ack_orig[t->atomic_acks] = pkt->atomicacketh.OrigRemDt;
		}
		t->atomic_acks++;
		if (t->drop_atomic_acks > 0) {
			t->drop_atomic_acks--;
			return true;
		}
	}
	if ((pkt->headers & IB_HDRBIT(IB_HDR_AETH)) &&
	    ib_aeth_kind(pkt->aeth.Syndrome) == IB_AETH_NAK)
		t->naks++;
	if (t->drop_read_rsp && (f & IB_OPF_READ) && (f & IB_OPF_RESPONSE))
		return true;
	return t->swallow;
}

/*
 * The responder executes the READ but its responses never arrive, while
 * the SEND after it is ACKed: each such ACK says the READ went unanswered.
 * The READ is asked for again at most retry_cnt times in all, ACK-driven
 * or by timeout, then ends in RETRY_EXC_ERR; before, every ACK of the
 * resent SEND asked again at once, forever.
 */
static void unanswered_read_ends_in_retry_exc_err_after_retry_cnt_resends(void **state)
{
	struct world *w = rc_world(0);
	struct tap t = { .drop_read_rsp = true };
	static uint8_t local[64], remote[64], msg[16], rbuf[16];
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t mk = world_reg(&w->n[0], msg, sizeof(msg), 0);
	uint32_t rk = world_reg(&w->n[1], remote, sizeof(remote), ALL_ACCESS);
	uint32_t rbk = world_reg(&w->n[1], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe rd = { .wr_id = 1, .opcode = SIB_WR_RDMA_READ,
				   .send_flags = SIB_SEND_SIGNALED };
	struct sib_send_wqe snd = { .wr_id = 2, .opcode = SIB_WR_SEND,
				    .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	w->drop = tap_packets;
	w->drop_arg = &t;
	world_post_recv(&w->n[1], 9, rbuf, sizeof(rbuf), rbk);
	rd.rdma.remote_addr = (uint64_t)(uintptr_t)remote;
	rd.rdma.rkey = rk;
	world_post_send(&w->n[0], &rd, local, sizeof(local), lk);
	world_post_send(&w->n[0], &snd, msg, sizeof(msg), mk);
	world_pump(w); /* before: the wire never went quiet */
	advance_until_completion(w);
	world_expect_status(w->n[0].scq, 1, SIB_WC_RETRY_EXC_ERR);
	world_expect_status(w->n[0].scq, 2, SIB_WC_WR_FLUSH_ERR);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	/* The first request and retry_cnt (3) retries. */
	assert_int_equal(t.read_requests, 4);
	world_free(w);
}

/*
 * A requester that keeps more atomics outstanding than the responder's
 * max_dest_rd_atomic (here 4 against 1) and loses the first atomic ACK:
 * the responder recycled that result, drops the duplicate without
 * executing it again, and the requester ends in RETRY_EXC_ERR instead of
 * resending forever.  Each FetchAdd was executed exactly once.
 */
static void atomic_whose_result_was_recycled_runs_once_and_ends_in_retry_exc_err(void **state)
{
	struct world *w = rc_world(1);
	struct tap t = { .drop_atomic_acks = 1 };
	static uint64_t target, result[3];
	static uint8_t msg[16], rbuf[16];
	uint32_t lk = world_reg(&w->n[0], result, sizeof(result), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t mk = world_reg(&w->n[0], msg, sizeof(msg), 0);
	uint32_t rk = world_reg(&w->n[1], &target, 8, ALL_ACCESS);
	uint32_t rbk = world_reg(&w->n[1], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe snd = { .wr_id = 4, .opcode = SIB_WR_SEND,
				    .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;

	(void)state;
	target = 100;
	w->drop = tap_packets;
	w->drop_arg = &t;
	world_post_recv(&w->n[1], 9, rbuf, sizeof(rbuf), rbk);
	for (int i = 0; i < 3; i++) {
		struct sib_send_wqe s = { .wr_id = 1 + (uint64_t)i,
					  .opcode = SIB_WR_ATOMIC_FETCH_AND_ADD,
					  .send_flags = SIB_SEND_SIGNALED };

		s.atomic.remote_addr = (uint64_t)(uintptr_t)&target;
		s.atomic.rkey = rk;
		s.atomic.compare_add = 1;
		world_post_send(&w->n[0], &s, &result[i], 8, lk);
	}
	world_post_send(&w->n[0], &snd, msg, sizeof(msg), mk);
	world_pump(w); /* before: the wire never went quiet */
	advance_until_completion(w);
	world_expect_status(w->n[0].scq, 1, SIB_WC_RETRY_EXC_ERR);
	world_expect_status(w->n[0].scq, 2, SIB_WC_WR_FLUSH_ERR);
	world_expect_status(w->n[0].scq, 3, SIB_WC_WR_FLUSH_ERR);
	world_expect_status(w->n[0].scq, 4, SIB_WC_WR_FLUSH_ERR);
	assert_int_equal(target, 103); /* each executed once, duplicates never */
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_true(ec.rx_duplicates >= 3);
	assert_int_equal(t.naks, 0);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	world_free(w);
}

/* ---- a misbehaving requester, as crafted packets into node 1 ---- */

static uint32_t responder_epsn(void)
{
	return 0xfffff1u; /* world_connect: node 1's rq_psn */
}

static void inject_fetch_add(struct world *w, uint32_t psn, uint64_t *target, uint32_t rkey)
{
	struct ib_packet p;

	memset(&p, 0, sizeof(p));
	p.lrh.LNH = IB_LNH_IBA_LOCAL;
	p.lrh.SLID = w->n[0].port.LID;
	p.lrh.DLID = w->n[1].port.LID;
	p.bth.OpCode = IB_OPCODE(IB_TRANSPORT_RC, IB_OP_FETCH_ADD);
	p.bth.P_Key = SIB_PKEY_DEFAULT;
	p.bth.DestQP = sib_qp_num(w->n[1].qp);
	p.bth.PSN = psn & PSN_MASK;
	p.bth.A = 1;
	p.op = ib_opcode_info(p.bth.OpCode);
	assert_non_null(p.op);
	p.headers = p.op->headers;
	p.atomiceth.VA = (uint64_t)(uintptr_t)target;
	p.atomiceth.R_Key = rkey;
	p.atomiceth.SwapDt = 1; /* the add value (IBA 9.5.3) */
	sib_engine_rx(w->n[1].eng, &p, &w->n[0].link->local);
	world_pump(w);
}

/*
 * Six FetchAdds against two responder resources, then duplicates of all
 * six: the last two are answered with their saved results, the four
 * recycled ones get nothing (no NAK, no second execution), the QP stays
 * RTS and serves the next new request.
 */
static void responder_replays_only_the_newest_max_dest_rd_atomic_results(void **state)
{
	struct world *w = rc_world(2);
	struct tap t = { .swallow = true };
	static uint64_t target;
	uint32_t rk = world_reg(&w->n[1], &target, 8, ALL_ACCESS);
	uint32_t e = responder_epsn();

	(void)state;
	target = 100;
	w->drop = tap_packets;
	w->drop_arg = &t;
	for (uint32_t i = 0; i < 6; i++)
		inject_fetch_add(w, e + i, &target, rk);
	assert_int_equal(t.atomic_acks, 6);
	assert_int_equal(target, 106);
	for (uint32_t i = 0; i < 6; i++)
		inject_fetch_add(w, e + i, &target, rk);
	assert_int_equal(target, 106);
	assert_int_equal(t.atomic_acks, 8);
	assert_int_equal(t.ack_psn[6], (e + 4) & PSN_MASK);
	assert_int_equal(t.ack_orig[6], 104);
	assert_int_equal(t.ack_psn[7], (e + 5) & PSN_MASK);
	assert_int_equal(t.ack_orig[7], 105);
	assert_int_equal(t.naks, 0);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	inject_fetch_add(w, e + 6, &target, rk);
	assert_int_equal(t.atomic_acks, 9);
	assert_int_equal(t.ack_orig[8], 106);
	assert_int_equal(target, 107);
	world_free(w);
}

/*
 * max_dest_rd_atomic lowered from 4 to 2 (SQD, IBA 10.3.1.4) after three
 * atomics: the next one's result must land among the two resources the
 * responder now looks in, so that its duplicate is answered, not lost.
 */
static void result_saved_after_max_dest_rd_atomic_shrinks_is_replayed(void **state)
{
	struct world *w = rc_world(4);
	struct tap t = { .swallow = true };
	static uint64_t target;
	uint32_t rk = world_reg(&w->n[1], &target, 8, ALL_ACCESS);
	uint32_t e = responder_epsn();
	struct sib_qp_attr a = { 0 };

	(void)state;
	target = 100;
	w->drop = tap_packets;
	w->drop_arg = &t;
	for (uint32_t i = 0; i < 3; i++)
		inject_fetch_add(w, e + i, &target, rk);
	a.qp_state = SIB_QPS_SQD;
	world_modify(w->n[1].qp, &a, 0);
	a.max_dest_rd_atomic = 2;
	world_modify(w->n[1].qp, &a, SIB_QP_MAX_DEST_RD_ATOMIC);
	inject_fetch_add(w, e + 3, &target, rk);
	assert_int_equal(t.atomic_acks, 4);
	assert_int_equal(target, 104);
	inject_fetch_add(w, e + 3, &target, rk); /* its ACK was lost */
	assert_int_equal(target, 104);
	assert_int_equal(t.atomic_acks, 5);
	assert_int_equal(t.ack_psn[4], (e + 3) & PSN_MASK);
	assert_int_equal(t.ack_orig[4], 103);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unanswered_read_ends_in_retry_exc_err_after_retry_cnt_resends),
		cmocka_unit_test(atomic_whose_result_was_recycled_runs_once_and_ends_in_retry_exc_err),
		cmocka_unit_test(responder_replays_only_the_newest_max_dest_rd_atomic_results),
		cmocka_unit_test(result_saved_after_max_dest_rd_atomic_shrinks_is_replayed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

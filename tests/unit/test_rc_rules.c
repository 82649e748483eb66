/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RC ordering rules over the in-memory link, watched on the wire: the
 * requester never has more READ / atomic requests outstanding than
 * max_rd_atomic (IBA 9.7.4.1.3 / 11.2.4.2), a fenced WQE waits for the
 * earlier READs and atomics to complete (IBA 10.8.3.3), and a stream asks
 * for coalesced ACKs on message ends (IBA 9.7.5.1.1), and a zero-length RDMA
 * WRITE needs no valid R_Key (IBA C9-88).  The two-process
 * versions of these and of the error paths are tests/helpers/rc_errors.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>

#include "engine_world.h"

#define ALL_ACCESS                                                                                 \
	(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ |     \
	 MEMREG_ACCESS_REMOTE_ATOMIC)

/* What the wire showed: READ / atomic requests in flight, and the order. */
struct watch {
	int outstanding, max_outstanding;
	int read_answered; /* the READ's (last) response reached the requester */
	int send_seen_before_answer;
	int ackreqs; /* requests reaching node 1 with AckReq set */
	int mid_ackreqs; /* of those, ones that are not a message's last packet */
	int empty_read_responses; /* READ responses with no payload reaching node 0 */
	int drop_read_responses; /* drop this many READ responses to node 0 */
};

static bool watch_packets(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct watch *wt = arg;
	uint32_t f = pkt->op->flags;

	(void)n;
	if (node == 1 && (f & IB_OPF_REQUEST) && pkt->bth.A) {
		wt->ackreqs++;
		wt->mid_ackreqs += !(f & IB_OPF_LAST);
	}
	if (node == 1 && (f & IB_OPF_REQUEST)) {
		if (f & (IB_OPF_READ | IB_OPF_ATOMIC)) {
			wt->outstanding++;
			if (wt->outstanding > wt->max_outstanding)
				wt->max_outstanding = wt->outstanding;
		}
		if ((f & IB_OPF_SEND) && !wt->read_answered)
			wt->send_seen_before_answer++;
	}
	if (node == 0 && (f & IB_OPF_RESPONSE) && (f & IB_OPF_READ) && wt->drop_read_responses) {
		wt->drop_read_responses--;
		return true;
	}
	if (node == 0 && (f & IB_OPF_RESPONSE) && (f & IB_OPF_READ) && !pkt->payload_len)
		wt->empty_read_responses++;
	if (node == 0 && (f & IB_OPF_RESPONSE) &&
	    (((f & IB_OPF_READ) && (f & IB_OPF_LAST)) || (f & IB_OPF_ATOMIC))) {
		wt->outstanding--;
		wt->read_answered = 1;
	}
	return false;
}

static struct world *rc_world(struct watch *wt)
{
	struct world *w = world_new();

	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	world_connect(w, SIB_MTU_1024); /* max_rd_atomic 4, max_dest_rd_atomic 4 */
	w->drop = watch_packets;
	w->drop_arg = wt;
	return w;
}

static void requester_keeps_at_most_max_rd_atomic_requests_outstanding(void **state)
{
	struct watch wt = { 0 };
	struct world *w = rc_world(&wt);
	static uint8_t local[16][64], remote[4096];
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], remote, sizeof(remote), ALL_ACCESS);
	struct sib_cqe c;

	(void)state;
	for (int i = 0; i < 16; i++) {
		struct sib_send_wqe s = { .wr_id = (uint64_t)i, .send_flags = SIB_SEND_SIGNALED };

		if (i % 3 == 2) {
			s.opcode = SIB_WR_ATOMIC_FETCH_AND_ADD;
			s.atomic.remote_addr = (uint64_t)(uintptr_t)&remote[2048];
			s.atomic.rkey = rk;
			s.atomic.compare_add = 1;
			world_post_send(&w->n[0], &s, local[i], 8, lk);
		} else {
			s.opcode = SIB_WR_RDMA_READ;
			s.rdma.remote_addr = (uint64_t)(uintptr_t)remote + 64 * (uint64_t)i;
			s.rdma.rkey = rk;
			world_post_send(&w->n[0], &s, local[i], 64, lk);
		}
	}
	world_pump(w);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(world_poll(w->n[0].scq, &c), 1);
		assert_int_equal(c.status, SIB_WC_SUCCESS);
		assert_int_equal(c.wr_id, (uint64_t)i);
	}
	assert_int_equal(wt.outstanding, 0);
	/* The limit is reached (16 were posted at once) and never passed. */
	assert_int_equal(wt.max_outstanding, 4);
	world_free(w);
}

static void fenced_send_waits_for_the_earlier_read(void **state)
{
	struct watch wt = { 0 };
	struct world *w = rc_world(&wt);
	static uint8_t local[64], remote[64], rbuf[64];
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], remote, sizeof(remote), ALL_ACCESS);
	uint32_t rbk = world_reg(&w->n[1], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe rd = { .wr_id = 1, .opcode = SIB_WR_RDMA_READ,
				   .send_flags = SIB_SEND_SIGNALED };
	struct sib_send_wqe snd = { .wr_id = 2, .opcode = SIB_WR_SEND,
				    .send_flags = SIB_SEND_SIGNALED | SIB_SEND_FENCE };
	struct sib_cqe c;

	(void)state;
	memset(local, 0xee, sizeof(local));
	memset(remote, 0x42, sizeof(remote));
	world_post_recv(&w->n[1], 9, rbuf, sizeof(rbuf), rbk);
	rd.rdma.remote_addr = (uint64_t)(uintptr_t)remote;
	rd.rdma.rkey = rk;
	world_post_send(&w->n[0], &rd, local, sizeof(local), lk);
	world_post_send(&w->n[0], &snd, local, sizeof(local), lk);
	world_pump(w);
	assert_int_equal(wt.send_seen_before_answer, 0);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.wr_id, 1);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.wr_id, 2);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	/* The SEND carried what the READ brought, not the old contents. */
	assert_memory_equal(rbuf, remote, sizeof(rbuf));
	world_free(w);
}

/* rsockets' control messages: RDMA WRITE with immediate, no SGE, the
 * R_Key and address left as whatever the stack held. */
static void zero_length_write_needs_no_rkey(void **state)
{
	struct watch wt = { 0 };
	struct world *w = rc_world(&wt);
	static uint8_t rbuf[64];
	uint32_t rbk = world_reg(&w->n[1], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 5, .opcode = SIB_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = SIB_SEND_SIGNALED, .imm_data = 0x1234 };
	struct sib_cqe c;
	char why[160] = "";

	(void)state;
	world_post_recv(&w->n[1], 9, rbuf, sizeof(rbuf), rbk);
	s.rdma.remote_addr = 0x7fffab14a010ull;
	s.rdma.rkey = 0xab149fd0;
	s.num_sge = 0;
	if (sib_qp_post_send(w->n[0].qp, &s, NULL, why, sizeof(why)))
		fail_msg("post_send: %s", why);
	sib_qp_kick(w->n[0].qp);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.byte_len, 0);
	assert_int_equal(c.imm_data, 0x1234);
	world_free(w);
}

/* Posts n RDMA WRITEs of len bytes at once, then sends them. */
static void post_stream(struct world *w, struct sib_send_wqe *s, struct sib_sge *sge, int n,
			uint32_t len)
{
	sge->length = len;
	for (int i = 0; i < n; i++) {
		char why[160] = "";

		s->wr_id = (uint64_t)i;
		s->num_sge = 1;
		s->send_flags = i == n - 1 ? SIB_SEND_SIGNALED : 0;
		if (sib_qp_post_send(w->n[0].qp, s, sge, why, sizeof(why)))
			fail_msg("post_send: %s", why);
	}
	sib_qp_kick(w->n[0].qp); /* these have a next one, but for the last */
	world_pump(w);
}

/*
 * A stream of WRITEs asks for coalesced ACKs (IBA 9.7.5.1.1) on message
 * ends, at least once per 16 PSNs, and not also at each window edge: the
 * window then opens by whole messages.  The initial PSN and lone messages
 * of 5 PSNs (each ACKed at its end, as when a sender's queue runs dry) put
 * the 16-PSN messages that follow off a fixed 16-PSN grid, where the old
 * rule asked mid-message.  Asking at every full window too once added an
 * ACK per message (ib_write_bw 64 KiB drew two).
 */
static void a_stream_asks_for_acks_on_message_ends(void **state)
{
	struct watch wt = { 0 };
	struct world *w = rc_world(&wt);
	enum { LONE = 4, MSGS = 58, SMALL = 64, MTU = 1024 }; /* 64 WQEs at once */
	static uint8_t local[16 * MTU], remote[16 * MTU], rbuf[4 * MTU];
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), 0);
	uint32_t rlk = world_reg(&w->n[0], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], remote, sizeof(remote), ALL_ACCESS);
	struct sib_send_wqe s = { .opcode = SIB_WR_RDMA_WRITE };
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)local, .lkey = lk };
	struct sib_cqe c;

	(void)state;
	s.rdma.remote_addr = (uint64_t)(uintptr_t)remote;
	s.rdma.rkey = rk;
	/* Lone messages: each leaves at its post, nothing after it yet. */
	for (int i = 0; i < LONE; i++)
		world_post_send(&w->n[0], &s, local, 5 * MTU, lk);
	assert_int_equal(wt.ackreqs, 0); /* not delivered yet */
	/* 58 messages of 16 PSNs, over three windows' worth: one ACK each. */
	post_stream(w, &s, &sge, MSGS, 16 * MTU);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, MSGS - 1);
	assert_int_equal(wt.mid_ackreqs, 0);
	assert_int_equal(wt.ackreqs, LONE + MSGS);
	/* One-packet messages: every 16th asks. */
	wt.ackreqs = 0;
	post_stream(w, &s, &sge, SMALL, MTU);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(wt.ackreqs, SMALL / 16);
	/* A READ's response acknowledges too: the count starts again after
	 * its PSNs, so the next messages still ask on their ends. */
	s.opcode = SIB_WR_RDMA_READ;
	s.send_flags = 0;
	world_post_send(&w->n[0], &s, rbuf, 4 * MTU, rlk);
	s.opcode = SIB_WR_RDMA_WRITE;
	post_stream(w, &s, &sge, 8, 16 * MTU);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(wt.mid_ackreqs, 0);
	world_free(w);
}

/*
 * IBA C9-88: the R_Key (and VA) of a zero-length RDMA WRITE or READ is not
 * validated.  What IBA says of such operations otherwise still holds: a
 * READ is answered by one READ RESPONSE Only with no payload, and answered
 * again when that response is lost; a WRITE with immediate consumes a
 * receive WQE; a plain WRITE consumes none.
 */

/* Posts a zero-length RDMA WRITE or READ (no SGE) with R_Key rkey at va. */
static void post_zero_length(struct world *w, enum sib_wr_opcode op, uint64_t wr_id, uint32_t rkey,
			     uint64_t va)
{
	struct sib_send_wqe s = { .wr_id = wr_id, .opcode = op, .send_flags = SIB_SEND_SIGNALED };
	char why[160] = "";

	s.rdma.remote_addr = va;
	s.rdma.rkey = rkey;
	s.num_sge = 0;
	if (sib_qp_post_send(w->n[0].qp, &s, NULL, why, sizeof(why)))
		fail_msg("post_send: %s", why);
	sib_qp_kick(w->n[0].qp);
}

/* UCX's endpoint flush: RDMA WRITE, no SGE, R_Key 0, address 0. */
static void zero_length_write_with_rkey_0_completes_and_takes_no_receive(void **state)
{
	struct watch wt = { 0 };
	struct world *w = rc_world(&wt);
	static uint8_t src[64], rbuf[64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), 0);
	uint32_t rbk = world_reg(&w->n[1], rbuf, sizeof(rbuf), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 2, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_cqe c;

	(void)state;
	world_post_recv(&w->n[1], 7, rbuf, sizeof(rbuf), rbk);
	post_zero_length(w, SIB_WR_RDMA_WRITE, 1, 0, 0);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.wr_id, 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 0);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	/* The receive is still there for the next SEND. */
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.byte_len, sizeof(src));
	world_free(w);
}

static void zero_length_read_needs_no_rkey_and_gets_an_empty_response(void **state)
{
	struct watch wt = { 0 };
	struct world *w = rc_world(&wt);
	struct sib_cqe c;

	(void)state;
	post_zero_length(w, SIB_WR_RDMA_READ, 4, 0xab149fd0, 0x7fffab14a010ull);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.wr_id, 4);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.opcode, SIB_WC_RDMA_READ);
	assert_int_equal(c.byte_len, 0);
	assert_int_equal(wt.empty_read_responses, 1);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	world_free(w);
}

/* The duplicate of a zero-length READ is answered again, unchecked too. */
static void zero_length_read_is_answered_again_when_its_response_is_lost(void **state)
{
	struct watch wt = { .drop_read_responses = 1 };
	struct world *w = rc_world(&wt);
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	post_zero_length(w, SIB_WR_RDMA_READ, 5, 0, 0);
	world_pump(w);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0);
	assert_true(world_advance(w)); /* ACK timeout: the READ is sent again */
	assert_int_equal(world_poll(w->n[0].scq, &c), 1);
	assert_int_equal(c.wr_id, 5);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(wt.empty_read_responses, 1);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_duplicates, 1);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(requester_keeps_at_most_max_rd_atomic_requests_outstanding),
		cmocka_unit_test(fenced_send_waits_for_the_earlier_read),
		cmocka_unit_test(zero_length_write_needs_no_rkey),
		cmocka_unit_test(a_stream_asks_for_acks_on_message_ends),
		cmocka_unit_test(zero_length_write_with_rkey_0_completes_and_takes_no_receive),
		cmocka_unit_test(zero_length_read_needs_no_rkey_and_gets_an_empty_response),
		cmocka_unit_test(zero_length_read_is_answered_again_when_its_response_is_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

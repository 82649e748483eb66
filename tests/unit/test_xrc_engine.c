/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * XRC over the in-memory link (IBA 9.8.4 and Annex A14): an XRC initiator
 * QP on one HCA, an XRC target QP, XRC domains and XRC SRQs on the other.
 * Requests carry XRC opcodes and the XRCETH; the target takes its receive
 * WQE and its keys' PD from the XRC SRQ the XRCETH names, completes on that
 * SRQ's CQ, and NAKs an SRQ that is not in its domain.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "engine_world.h"
#include "base/log.h"
#include "transport/xrcd.h"

#define ALL_ACCESS                                                                                 \
	(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ |     \
	 MEMREG_ACCESS_REMOTE_ATOMIC | MEMREG_ACCESS_FLUSH_GLOBAL)

/* Node 0 initiates (XRC_SEND); node 1 is the target (XRC_RECV, XRCD, SRQ). */
struct xw {
	struct world *w;
	struct sib_xrcd *xrcd;
	uint32_t srqn; /* of w->n[1].srq */
	/* what crossed the wire */
	unsigned requests, responses, not_xrc, bad_srqn;
	uint32_t want_srqn;
};

static struct sib_srq *xrc_srq(struct node *n, struct sib_xrcd *x, struct sib_cq *cq, uint32_t pd)
{
	struct sib_srq_init si = { .max_wr = 16, .max_sge = 2, .pd = pd, .xrcd = x, .cq = cq,
				   .srqns = n->srqns, .engine = n->eng };
	struct sib_srq *srq;
	char why[160];

	assert_int_equal(sib_srq_create(&si, &srq, why, sizeof(why)), 0);
	assert_true(sib_srq_is_xrc(srq));
	return srq;
}

static void xrc_modify(struct sib_qp *qp, struct sib_qp_attr *a, uint32_t mask)
{
	char why[160] = "";

	if (sib_qp_modify(qp, a, mask | SIB_QP_STATE, &world_lim, why, sizeof(why)))
		fail_msg("modify: %s", why);
}

static void xrc_connect(struct world *w, enum sib_mtu mtu)
{
	for (int i = 0; i < 2; i++) {
		struct sib_qp *qp = w->n[i].qp;
		bool tgt = i == 1;
		struct sib_qp_attr a = { 0 };

		a.qp_state = SIB_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = tgt ? ALL_ACCESS : 0;
		xrc_modify(qp, &a, SIB_QP_PKEY_INDEX | SIB_QP_PORT | SIB_QP_ACCESS_FLAGS);
		a.qp_state = SIB_QPS_RTR;
		a.ah_attr.DLID = w->n[1 - i].port.LID;
		a.ah_attr.port_num = 1;
		a.path_mtu = mtu;
		a.dest_qp_num = sib_qp_num(w->n[1 - i].qp);
		a.rq_psn = 0xfffff8u + (uint32_t)i; /* PSNs wrap past 2^24 */
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		xrc_modify(qp, &a,
			   SIB_QP_AV | SIB_QP_PATH_MTU | SIB_QP_DEST_QPN | SIB_QP_RQ_PSN |
				   (tgt ? SIB_QP_MAX_DEST_RD_ATOMIC | SIB_QP_MIN_RNR_TIMER : 0));
		a.qp_state = SIB_QPS_RTS;
		a.sq_psn = 0xfffff8u + (uint32_t)(1 - i);
		a.timeout = 14;
		a.retry_cnt = 3;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		xrc_modify(qp, &a,
			   SIB_QP_SQ_PSN | SIB_QP_TIMEOUT |
				   (tgt ? 0 : SIB_QP_RETRY_CNT | SIB_QP_RNR_RETRY | SIB_QP_MAX_QP_RD_ATOMIC));
	}
}

/* Sees every data packet; drops none.  Requests reach node 1, responses node 0. */
static bool watch(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct xw *x = arg;

	(void)n;
	if (pkt->op->transport != IB_TRANSPORT_XRC)
		x->not_xrc++;
	if (node == 1) {
		x->requests++;
		if (!(pkt->headers & IB_HDRBIT(IB_HDR_XRCETH)) || pkt->xrceth.XRCSRQ != x->want_srqn)
			x->bad_srqn++;
	} else {
		x->responses++;
		if (pkt->headers & IB_HDRBIT(IB_HDR_XRCETH))
			x->bad_srqn++;
	}
	return false;
}

static struct xw *xw_new(enum sib_mtu mtu)
{
	struct xw *x = calloc(1, sizeof(*x));
	struct world *w = world_new();
	struct node *t = &w->n[1];
	char why[160];

	assert_non_null(x);
	x->w = w;
	assert_int_equal(sib_xrcd_open(false, 0, 0, O_CREAT, &x->xrcd), 0);
	t->srq = xrc_srq(t, x->xrcd, t->rcq, t->pd);
	x->srqn = x->want_srqn = sib_srq_num(t->srq);

	world_qp(w, 0, SIB_QPT_XRC_SEND, 64);
	struct sib_qp_init in = {
		.type = SIB_QPT_XRC_RECV,
		.xrcd = x->xrcd,
		.qpns = t->qpns,
		.engine = t->eng,
	};
	assert_int_equal(sib_qp_create(&in, &t->qp, why, sizeof(why)), 0);
	xrc_connect(w, mtu);
	w->drop = watch;
	w->drop_arg = x;
	return x;
}

static void xw_free(struct xw *x)
{
	world_free(x->w);
	assert_int_equal(sib_xrcd_close(x->xrcd), 0);
	free(x);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed + (i >> 8));
}

static void xpost(struct xw *x, struct sib_send_wqe *s, void *buf, uint32_t len, uint32_t lkey,
		  uint32_t srqn)
{
	s->xrc_remote_srqn = srqn;
	world_post_send(&x->w->n[0], s, buf, len, lkey);
}

static void xrc_send_lands_in_the_named_srq_and_completes_on_its_cq(void **state)
{
	struct xw *x = xw_new(SIB_MTU_256);
	struct world *w = x->w;
	enum { LEN = 256 * 5 + 3 };
	static uint8_t src[LEN], dst[LEN + 8];
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND_WITH_IMM,
				  .send_flags = SIB_SEND_SIGNALED, .imm_data = 0x44332211 };
	struct sib_cqe c;

	(void)state;
	fill(src, LEN, 1);
	world_post_recv(&w->n[1], 55, dst, sizeof(dst), rk);
	xpost(x, &s, src, LEN, sk, x->srqn);
	world_pump(w);

	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	assert_int_equal(world_poll(w->n[1].rcq, &c), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.wr_id, 55);
	assert_int_equal(c.opcode, SIB_WC_RECV);
	assert_int_equal(c.byte_len, LEN);
	assert_true(c.wc_flags & SIB_WC_WITH_IMM);
	assert_int_equal(c.imm_data, 0x44332211);
	/* The target QP received it; the initiator sent it. */
	assert_int_equal(c.qp_num, sib_qp_num(w->n[1].qp));
	assert_int_equal(c.src_qp, sib_qp_num(w->n[0].qp));
	assert_memory_equal(src, dst, LEN);
	/* Six requests, each an XRC opcode naming the SRQ; XRC responses. */
	assert_int_equal(x->requests, 6);
	assert_true(x->responses >= 1);
	assert_int_equal(x->not_xrc, 0);
	assert_int_equal(x->bad_srqn, 0);
	xw_free(x);
}

static void xrc_one_target_qp_serves_every_srq_of_its_domain(void **state)
{
	struct xw *x = xw_new(SIB_MTU_1024);
	struct world *w = x->w;
	struct node *t = &w->n[1];
	static uint8_t src[2][64], dst[2][64];
	struct sib_cq_init ci = { .cqe = 16 };
	struct sib_cq *cq2;
	char why[160];

	(void)state;
	assert_int_equal(sib_cq_create(&ci, &cq2), 0);
	struct sib_srq *srq2 = xrc_srq(t, x->xrcd, cq2, t->pd);
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(t, dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)dst[1], .length = 64, .lkey = rk };

	assert_int_not_equal(sib_srq_num(srq2), x->srqn);
	memset(src[0], 'a', 64);
	memset(src[1], 'b', 64);
	world_post_recv(t, 10, dst[0], 64, rk);
	assert_int_equal(sib_srq_post(srq2, 20, &sge, 1, why, sizeof(why)), 0);

	struct sib_send_wqe s = { .wr_id = 2, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };

	x->want_srqn = sib_srq_num(srq2);
	xpost(x, &s, src[1], 64, sk, sib_srq_num(srq2));
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(cq2, 20, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(dst[1], src[1], 64);
	assert_int_equal(sib_srq_count(t->srq), 1); /* the other SRQ untouched */

	x->want_srqn = x->srqn;
	s.wr_id = 3;
	xpost(x, &s, src[0], 64, sk, x->srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 3, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(t->rcq, 10, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(dst[0], src[0], 64);
	assert_int_equal(x->bad_srqn, 0);

	assert_int_equal(sib_srq_destroy(srq2), 0);
	assert_int_equal(sib_cq_destroy(cq2), 0);
	xw_free(x);
}

static void xrc_write_read_and_atomics_reach_memory_of_the_srq_pd(void **state)
{
	struct xw *x = xw_new(SIB_MTU_1024);
	struct world *w = x->w;
	enum { LEN = 3000 };
	static uint8_t src[LEN], back[LEN], target[LEN];
	static uint64_t word[2], result;
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t bk = world_reg(&w->n[0], back, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t lk = world_reg(&w->n[0], &result, 8, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t tk = world_reg(&w->n[1], target, LEN, ALL_ACCESS);
	uint32_t wk = world_reg(&w->n[1], word, sizeof(word), ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_RDMA_WRITE,
				  .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	fill(src, LEN, 9);
	s.rdma.remote_addr = (uint64_t)(uintptr_t)target;
	s.rdma.rkey = tk;
	xpost(x, &s, src, LEN, sk, x->srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_RDMA_WRITE);
	assert_memory_equal(target, src, LEN);

	s.wr_id = 2;
	s.opcode = SIB_WR_RDMA_READ;
	xpost(x, &s, back, LEN, bk, x->srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_SUCCESS, SIB_WC_RDMA_READ);
	assert_memory_equal(back, src, LEN);

	word[1] = 100;
	s = (struct sib_send_wqe){ .wr_id = 3, .opcode = SIB_WR_ATOMIC_FETCH_AND_ADD,
				   .send_flags = SIB_SEND_SIGNALED };
	s.atomic.remote_addr = (uint64_t)(uintptr_t)&word[1];
	s.atomic.rkey = wk;
	s.atomic.compare_add = 5;
	xpost(x, &s, &result, 8, lk, x->srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 3, SIB_WC_SUCCESS, SIB_WC_FETCH_ADD);
	assert_int_equal(result, 100);
	assert_int_equal(word[1], 105);

	s.wr_id = 4;
	s.opcode = SIB_WR_ATOMIC_CMP_AND_SWP;
	s.atomic.compare_add = 105;
	s.atomic.swap = 0xabcdef;
	xpost(x, &s, &result, 8, lk, x->srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 4, SIB_WC_SUCCESS, SIB_WC_COMP_SWAP);
	assert_int_equal(result, 105);
	assert_int_equal(word[1], 0xabcdef);

	assert_int_equal(x->not_xrc, 0);
	assert_int_equal(x->bad_srqn, 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_RTS);
	xw_free(x);
}

/* IBA 1.5's operations go as XRC opcodes, answered by XRC READ responses. */
static void xrc_atomic_write_and_flush_reach_memory_of_the_srq_pd(void **state)
{
	struct xw *x = xw_new(SIB_MTU_1024);
	struct world *w = x->w;
	static uint64_t word[2];
	static const uint8_t bytes[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };
	uint32_t wk = world_reg(&w->n[1], word, sizeof(word), ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_ATOMIC_WRITE,
				  .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	s.rdma.remote_addr = (uint64_t)(uintptr_t)&word[1];
	s.rdma.rkey = wk;
	memcpy(&s.rdma.atomic_write, bytes, 8);
	xpost(x, &s, NULL, 0, 0, x->srqn);
	s = (struct sib_send_wqe){ .wr_id = 2, .opcode = SIB_WR_FLUSH,
				   .send_flags = SIB_SEND_SIGNALED };
	s.rdma.remote_addr = (uint64_t)(uintptr_t)word;
	s.rdma.rkey = wk;
	s.rdma.flush_len = sizeof(word);
	s.rdma.flush_type = IB_FETH_PLT_GLOBAL;
	xpost(x, &s, NULL, 0, 0, x->srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_ATOMIC_WRITE);
	world_expect_cqe(w->n[0].scq, 2, SIB_WC_SUCCESS, SIB_WC_FLUSH);
	assert_memory_equal(&word[1], bytes, 8);
	assert_int_equal(word[0], 0);
	assert_int_equal(x->not_xrc, 0);
	assert_int_equal(x->bad_srqn, 0);
	xw_free(x);
}

/* The R_Key is checked against the PD of the SRQ the XRCETH names, so an
 * SRQ of another PD in the same domain turns the same WRITE away. */
static void xrc_write_through_an_srq_of_another_pd_is_rem_access_err(void **state)
{
	struct xw *x = xw_new(SIB_MTU_1024);
	struct world *w = x->w;
	struct node *t = &w->n[1];
	static uint8_t src[64], target[64];
	struct sib_srq *other = xrc_srq(t, x->xrcd, t->rcq, t->pd + 100);
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t tk = world_reg(t, target, sizeof(target), ALL_ACCESS);
	struct sib_send_wqe s = { .wr_id = 6, .opcode = SIB_WR_RDMA_WRITE,
				  .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	memset(src, 0x5a, sizeof(src));
	s.rdma.remote_addr = (uint64_t)(uintptr_t)target;
	s.rdma.rkey = tk;
	x->want_srqn = sib_srq_num(other);
	xpost(x, &s, src, sizeof(src), sk, sib_srq_num(other));
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 6, SIB_WC_REM_ACCESS_ERR, 0);
	assert_int_equal(target[0], 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	assert_int_equal(sib_qp_state(t->qp), SIB_QPS_ERR);
	assert_int_equal(sib_srq_destroy(other), 0);
	xw_free(x);
}

static void xrc_srq_number_unknown_or_of_another_domain_is_rem_inv_req_err(void **state)
{
	(void)state;
	for (int round = 0; round < 2; round++) {
		struct xw *x = xw_new(SIB_MTU_1024);
		struct world *w = x->w;
		struct node *t = &w->n[1];
		static uint8_t src[32], dst[32];
		struct sib_xrcd *other_domain = NULL;
		struct sib_srq *foreign = NULL;
		uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
		uint32_t rk = world_reg(t, dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
		struct sib_send_wqe s = { .wr_id = 7, .opcode = SIB_WR_SEND,
					  .send_flags = SIB_SEND_SIGNALED };
		uint32_t srqn = 0xabcde; /* round 0: no SRQ has it */
		struct sib_cqe c;

		if (round == 1) {
			assert_int_equal(sib_xrcd_open(false, 0, 0, O_CREAT, &other_domain), 0);
			foreign = xrc_srq(t, other_domain, t->rcq, t->pd);
			world_post_recv(t, 1, dst, sizeof(dst), rk);
			srqn = sib_srq_num(foreign);
			struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)dst, .length = 32,
					       .lkey = rk };
			char why[160];

			assert_int_equal(sib_srq_post(foreign, 2, &sge, 1, why, sizeof(why)), 0);
		}
		x->want_srqn = srqn;
		xpost(x, &s, src, sizeof(src), sk, srqn);
		world_pump(w);
		world_expect_cqe(w->n[0].scq, 7, SIB_WC_REM_INV_REQ_ERR, 0);
		assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
		assert_int_equal(sib_qp_state(t->qp), SIB_QPS_ERR);
		/* Nothing was taken from any SRQ, nothing completed there. */
		assert_int_equal(world_poll(t->rcq, &c), 0);
		if (foreign) {
			assert_int_equal(sib_srq_count(foreign), 1);
			assert_int_equal(sib_srq_count(t->srq), 1);
			assert_int_equal(sib_srq_destroy(foreign), 0);
			assert_int_equal(sib_xrcd_close(other_domain), 0);
		}
		xw_free(x);
	}
}

static void xrc_empty_srq_is_rnr_then_the_send_completes_once_posted(void **state)
{
	struct xw *x = xw_new(SIB_MTU_1024);
	struct world *w = x->w;
	static uint8_t src[100], dst[100];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 8, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_engine_counters ec;
	struct sib_cqe c;

	(void)state;
	fill(src, sizeof(src), 2);
	xpost(x, &s, src, sizeof(src), sk, x->srqn);
	world_pump(w);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_true(ec.tx_rnr_naks >= 1);
	assert_int_equal(world_poll(w->n[0].scq, &c), 0);
	world_post_recv(&w->n[1], 9, dst, sizeof(dst), rk);
	assert_true(world_advance(w));
	world_expect_cqe(w->n[0].scq, 8, SIB_WC_SUCCESS, SIB_WC_SEND);
	world_expect_cqe(w->n[1].rcq, 9, SIB_WC_SUCCESS, SIB_WC_RECV);
	assert_memory_equal(src, dst, sizeof(src));
	xw_free(x);
}

/* Delivers only the first request packet to the target. */
static bool only_first(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	watch(node, n, pkt, arg);
	return node == 1 && n > 0;
}

static void xrc_target_error_flushes_the_wqe_in_progress_to_the_srq_cq(void **state)
{
	struct xw *x = xw_new(SIB_MTU_256);
	struct world *w = x->w;
	struct node *t = &w->n[1];
	static uint8_t src[1024], dst[1024];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(t, dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 4, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_qp_attr a = { .qp_state = SIB_QPS_ERR };
	struct sib_cqe c;

	(void)state;
	w->drop = only_first;
	world_post_recv(t, 31, dst, sizeof(dst), rk);
	world_post_recv(t, 32, dst, sizeof(dst), rk);
	xpost(x, &s, src, sizeof(src), sk, x->srqn);
	world_pump(w);
	assert_int_equal(sib_srq_count(t->srq), 1); /* the First took one WQE */
	xrc_modify(t->qp, &a, 0);
	assert_int_equal(world_poll(t->rcq, &c), 1);
	assert_int_equal(c.wr_id, 31);
	assert_int_equal(c.status, SIB_WC_WR_FLUSH_ERR);
	assert_int_equal(c.qp_num, sib_qp_num(t->qp));
	/* WQEs still on the SRQ belong to the SRQ, not to the QP. */
	assert_int_equal(world_poll(t->rcq, &c), 0);
	assert_int_equal(sib_srq_count(t->srq), 1);
	xw_free(x);
}

struct drop_nth {
	struct xw *x;
	uint64_t which;
	bool done;
};

static bool drop_nth_request(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	struct drop_nth *d = arg;

	watch(node, n, pkt, d->x);
	if (node == 1 && n == d->which && !d->done) {
		d->done = true;
		return true;
	}
	return false;
}

static void xrc_lost_packet_is_recovered_by_go_back_n(void **state)
{
	struct xw *x = xw_new(SIB_MTU_256);
	struct world *w = x->w;
	enum { LEN = 256 * 12 };
	static uint8_t src[LEN], dst[LEN];
	uint32_t sk = world_reg(&w->n[0], src, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, LEN, MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 1, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct drop_nth d = { .x = x, .which = 4 };
	struct sib_engine_counters ec;

	(void)state;
	w->drop = drop_nth_request;
	w->drop_arg = &d;
	fill(src, LEN, 5);
	world_post_recv(&w->n[1], 2, dst, LEN, rk);
	xpost(x, &s, src, LEN, sk, x->srqn);
	world_pump(w);
	for (int i = 0; i < 5 && world_poll(w->n[1].rcq, &(struct sib_cqe){ 0 }) == 0; i++)
		world_advance(w);
	assert_true(d.done);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_SEND);
	assert_memory_equal(src, dst, LEN);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_true(ec.tx_seq_naks >= 1);
	assert_int_equal(x->bad_srqn, 0);
	xw_free(x);
}

/* An XRC SRQ leaves the number table when destroyed: later requests naming
 * it are invalid requests, not a use of freed memory. */
static void xrc_destroyed_srq_is_no_longer_found(void **state)
{
	struct xw *x = xw_new(SIB_MTU_1024);
	struct world *w = x->w;
	static uint8_t src[16];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 12, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	uint32_t srqn = x->srqn;

	(void)state;
	assert_int_equal(sib_srq_destroy(w->n[1].srq), 0);
	w->n[1].srq = NULL;
	assert_null(sib_numtab_lookup(w->n[1].srqns, srqn));
	xpost(x, &s, src, sizeof(src), sk, srqn);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 12, SIB_WC_REM_INV_REQ_ERR, 0);
	xw_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xrc_send_lands_in_the_named_srq_and_completes_on_its_cq),
		cmocka_unit_test(xrc_one_target_qp_serves_every_srq_of_its_domain),
		cmocka_unit_test(xrc_write_read_and_atomics_reach_memory_of_the_srq_pd),
		cmocka_unit_test(xrc_atomic_write_and_flush_reach_memory_of_the_srq_pd),
		cmocka_unit_test(xrc_write_through_an_srq_of_another_pd_is_rem_access_err),
		cmocka_unit_test(xrc_srq_number_unknown_or_of_another_domain_is_rem_inv_req_err),
		cmocka_unit_test(xrc_empty_srq_is_rnr_then_the_send_completes_once_posted),
		cmocka_unit_test(xrc_target_error_flushes_the_wqe_in_progress_to_the_srq_cq),
		cmocka_unit_test(xrc_lost_packet_is_recovered_by_go_back_n),
		cmocka_unit_test(xrc_destroyed_srq_is_no_longer_found),
	};

	sib_log_level_cur = SIB_LOG_ERROR; /* the NAKs below are meant: no warn lines */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

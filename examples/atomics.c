/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * atomics: the two RC atomic operations on a 64-bit word in the peer's
 * memory.  QP A adds to QP B's counter with FETCH_AND_ADD, then tries
 * COMPARE_AND_SWAP twice (once it matches, once it does not); each time the
 * word's old value comes back into A's buffer.  B's side posts nothing.
 *
 * What it teaches:
 *   - an atomic reads, modifies and writes the remote word in one step
 *     that no other atomic on that HCA can interleave with, and returns
 *     the value the word had before;
 *   - the remote word must be 8-byte aligned, in memory registered with
 *     REMOTE_ATOMIC on a QP whose access flags allow REMOTE_ATOMIC;
 *   - the local buffer (8 bytes) receives the old value: it needs
 *     LOCAL_WRITE;
 *   - like READ, an atomic needs max_rd_atomic (requester) and
 *     max_dest_rd_atomic (responder) of at least 1;
 *   - COMPARE_AND_SWAP writes only when the word equals compare_add; the
 *     program tells "swapped" from "not swapped" by comparing the returned
 *     old value with what it expected.
 *
 * Both QPs live in this one process, connected to each other on softib0.
 *
 * Run:  softib run build/examples/atomics
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define PORT 1

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "atomics: %s failed: %s\n", what, strerror(err));
	exit(1);
}

static struct ibv_context *open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	int i;

	if (!list || !list[0])
		die("ibv_get_device_list (is this running under `softib run`?)", ENODEV);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			break;
	ctx = ibv_open_device(list[i] ? list[i] : list[0]);
	if (!ctx)
		die("ibv_open_device", errno);
	ibv_free_device_list(list);
	return ctx;
}

/* An RC QP in INIT.  access: what the peer may do to our memory through
 * this QP (the MR must allow it too). */
static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq, int access)
{
	struct ibv_qp_init_attr init_attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init_attr);
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = access,
	};
	int ret;

	if (!qp)
		die("ibv_create_qp", errno);
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		die("ibv_modify_qp to INIT", ret);
	return qp;
}

/* INIT -> RTR -> RTS, connected to QP dest_qpn at LID dlid. */
static void connect_qp(struct ibv_qp *qp, uint16_t dlid, uint32_t dest_qpn,
		       enum ibv_mtu mtu)
{
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,	/* atomics we answer at once */
		.min_rnr_timer = 12,
		.ah_attr = { .dlid = dlid, .port_num = PORT },
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,		/* atomics we have outstanding */
	};
	int ret;

	ret = ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		die("ibv_modify_qp to RTR", ret);
	ret = ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		die("ibv_modify_qp to RTS", ret);
}

/*
 * Posts one signalled atomic and waits (5 s at most) for its completion.
 * add_or_compare is the addend (FETCH_AND_ADD) or the value compared with
 * (COMPARE_AND_SWAP); swap is the value written when they are equal.
 * Returns the remote word's old value, which the HCA wrote into *result.
 */
static uint64_t atomic(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		       uint64_t *result, struct ibv_mr *result_mr, uint64_t remote_addr,
		       uint32_t rkey, uint64_t add_or_compare, uint64_t swap)
{
	/* An atomic's local buffer is exactly 8 bytes. */
	struct ibv_sge sge = { (uintptr_t)result, sizeof(*result), result_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = remote_addr, .rkey = rkey,
			       .compare_add = add_or_compare, .swap = swap },
	}, *bad;
	struct timespec start, now;
	struct ibv_wc wc;
	int ret, n;

	*result = 0xdeadbeef;	/* so that a result never written shows */
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		die("ibv_post_send", ret);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		if (n == 1 && wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "atomics: %s\n", ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (n == 1)
			return *result;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 5);
	die("waiting for a completion", ETIMEDOUT);
}

int main(void)
{
	struct ibv_context *ctx = open_device();
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *a_mr, *b_mr;
	struct ibv_qp *a, *b;
	/* aligned_alloc: the remote word must sit on an 8-byte boundary
	 * (IBA 9.4.5: the responder refuses a misaligned one, and both QPs
	 * end in the error state). */
	uint64_t *a_word = aligned_alloc(8, 8), *b_word = aligned_alloc(8, 8);
	uint64_t old;
	int ret;

	if (!a_word || !b_word)
		die("aligned_alloc", ENOMEM);
	/* atomic_cap says whether the device does atomics at all. */
	ret = ibv_query_device(ctx, &dev);
	if (ret)
		die("ibv_query_device", ret);
	if (dev.atomic_cap == IBV_ATOMIC_NONE)
		die("atomics (the device's atomic_cap is IBV_ATOMIC_NONE)", EOPNOTSUPP);
	ret = ibv_query_port(ctx, PORT, &port);
	if (ret)
		die("ibv_query_port", ret);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	/* The old value is written into A's word: LOCAL_WRITE. */
	a_mr = ibv_reg_mr(pd, a_word, 8, IBV_ACCESS_LOCAL_WRITE);
	/* B's counter: REMOTE_ATOMIC (which needs LOCAL_WRITE as well). */
	b_mr = ibv_reg_mr(pd, b_word, 8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (!a_mr || !b_mr)
		die("ibv_reg_mr", errno);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	a = make_qp(pd, cq, 0);
	b = make_qp(pd, cq, IBV_ACCESS_REMOTE_ATOMIC);
	connect_qp(a, port.lid, b->qp_num, port.active_mtu);
	connect_qp(b, port.lid, a->qp_num, port.active_mtu);
	printf("atomics: QP A 0x%06x <-> QP B 0x%06x on LID 0x%04x, B's word at %p (rkey 0x%x)\n",
	       a->qp_num, b->qp_num, port.lid, (void *)b_word, b_mr->rkey);

	/* The word is in B's own byte order: B reads it as a plain uint64_t. */
	*b_word = 100;

	/* 1. FETCH_AND_ADD: B's word += 5; A learns it was 100. */
	old = atomic(a, cq, IBV_WR_ATOMIC_FETCH_AND_ADD, a_word, a_mr,
		     (uintptr_t)b_word, b_mr->rkey, 5, 0);
	printf("atomics: FETCH_AND_ADD 5: old value %" PRIu64 ", B's word now %" PRIu64 "\n",
	       old, *b_word);
	if (old != 100 || *b_word != 105)
		die("FETCH_AND_ADD (wrong old or new value)", EIO);

	/* 2. COMPARE_AND_SWAP that matches: 105 == 105, so 7 is written. */
	old = atomic(a, cq, IBV_WR_ATOMIC_CMP_AND_SWP, a_word, a_mr,
		     (uintptr_t)b_word, b_mr->rkey, 105, 7);
	printf("atomics: COMPARE_AND_SWAP 105 -> 7: old value %" PRIu64 " (%s), B's word now %" PRIu64 "\n",
	       old, old == 105 ? "equal: swapped" : "not equal: unchanged", *b_word);
	if (old != 105 || *b_word != 7)
		die("COMPARE_AND_SWAP (expected a swap)", EIO);

	/* 3. The same COMPARE_AND_SWAP again: the word is 7 now, not 105, so
	 * nothing is written; the old value says so. */
	old = atomic(a, cq, IBV_WR_ATOMIC_CMP_AND_SWP, a_word, a_mr,
		     (uintptr_t)b_word, b_mr->rkey, 105, 1);
	printf("atomics: COMPARE_AND_SWAP 105 -> 1: old value %" PRIu64 " (%s), B's word now %" PRIu64 "\n",
	       old, old == 105 ? "equal: swapped" : "not equal: unchanged", *b_word);
	if (old != 7 || *b_word != 7)
		die("COMPARE_AND_SWAP (expected no swap)", EIO);

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(a_mr);
	ibv_dereg_mr(b_mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(a_word);
	free(b_word);
	printf("atomics: OK\n");
	return 0;
}

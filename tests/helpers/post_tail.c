/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The tail of a burst of posts leaves without the poster's help
 * (tests/integration/test_progress_bounds.sh).
 *
 * Back-to-back posts from a thread that polls a CQ are left queued and go
 * out together at its next poll (sib_progress_post).  A program that posts
 * twice and then waits on memory, never calling into verbs again, must
 * still see both land: the progress thread sends what is queued.  Two RC
 * QPs of one process, connected to each other; each round polls the CQ (the
 * poller's lease), posts two RDMA WRITEs back to back (a block, then a flag
 * word holding the round number) and spins on the flag with no verbs call
 * until it changes.  Nothing but the progress thread can send the second
 * WRITE (it never left, so no retransmission covers it), so without that
 * rule the flag never changes; how long it takes is the machine's, and a
 * loaded one can starve the thread for a while: the 30 s limit only turns
 * a hang into a failure (docs/architecture.md: no test asserts a time).
 *
 * Usage: post_tail [ROUNDS].  Exit 0 when every round's flag arrived;
 * prints the median and longest wait (not asserted).
 */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs_loopback.h"

enum { BLOCK = 4096, MAX_ROUNDS = 10000 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int die(const char *what)
{
	fprintf(stderr, "post_tail: %s failed\n", what);
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	static uint64_t waits[MAX_ROUNDS];
	struct ibv_device **devs = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *a, *b;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uint8_t *mem;
	volatile uint64_t *flag;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 200;
	if (!devs || !devs[0])
		return die("ibv_get_device_list (run under `softib run`)");
	ctx = ibv_open_device(devs[0]);
	if (!ctx || ibv_query_port(ctx, 1, &port))
		return die("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mem = aligned_alloc(4096, 4 * BLOCK);
	if (!pd || !cq || !mem)
		return die("alloc_pd / create_cq");
	memset(mem, 0, 4 * BLOCK);
	flag = (volatile uint64_t *)(mem + 3 * BLOCK);
	mr = ibv_reg_mr(pd, mem, 4 * BLOCK, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	qia.send_cq = qia.recv_cq = cq;
	a = ibv_create_qp(pd, &qia);
	b = ibv_create_qp(pd, &qia);
	if (!mr || !a || !b)
		return die("reg_mr / create_qp");
	if (verbs_connect_rc(a, b->qp_num, port.lid, IBV_MTU_4096) ||
	    verbs_connect_rc(b, a->qp_num, port.lid, IBV_MTU_4096))
		return die("modify_qp");

	for (int r = 1; r <= rounds; r++) {
		uint64_t src = (uint64_t)r, t0, deadline;
		struct ibv_sge block = { (uintptr_t)mem, BLOCK, mr->lkey };
		struct ibv_sge word = { (uintptr_t)(mem + 2 * BLOCK), sizeof(src), mr->lkey };
		struct ibv_send_wr w1 = { .wr_id = 1, .sg_list = &block, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr w2 = { .wr_id = 2, .sg_list = &word, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;
		struct ibv_wc wc[16];
		int n;

		/* Reap, and hold the lease of a thread that polls. */
		while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS) {
					fprintf(stderr, "post_tail: round %d: completion %s\n", r,
						ibv_wc_status_str(wc[i].status));
					return 1;
				}
		memcpy(mem + 2 * BLOCK, &src, sizeof(src));
		w1.wr.rdma.remote_addr = (uintptr_t)(mem + BLOCK);
		w1.wr.rdma.rkey = mr->rkey;
		w2.wr.rdma.remote_addr = (uintptr_t)flag;
		w2.wr.rdma.rkey = mr->rkey;
		t0 = now_ns();
		/* Two calls, back to back: a burst (the second stays queued). */
		if (ibv_post_send(a, &w1, &bad) || ibv_post_send(a, &w2, &bad))
			return die("ibv_post_send");
		deadline = t0 + 30000000000ull;
		while (*flag != src)
			if (now_ns() > deadline) {
				fprintf(stderr,
					"post_tail: round %d: the second WRITE of a burst never "
					"landed (30 s) while the poster waited on memory\n",
					r);
				return 1;
			}
		waits[r - 1] = now_ns() - t0;
	}
	qsort(waits, (size_t)rounds, sizeof(waits[0]), cmp_u64);
	printf("post_tail: %d rounds, every burst landed; wait median %.1f us, longest %.1f us\n",
	       rounds, (double)waits[rounds / 2] / 1e3, (double)waits[rounds - 1] / 1e3);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	free(mem);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Run under `softib run` by `make bench`: an idle softib process.  Opens
 * softib0, connects two RC QPs to each other (both in this process), sends
 * one message to prove the connection works, prints "ready", then holds
 * everything open without traffic for SECONDS (default 10).  The bench
 * reads its CPU time meanwhile.
 *
 *	verbs_idle [SECONDS]
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "verbs_loopback.h"
#include "verbs_open.h"

/* Waits (bounded: a hang guard only) for n completions. */
static int wait_cq(struct ibv_cq *cq, int n)
{
	struct timespec start, now;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (n > 0) {
		int got = ibv_poll_cq(cq, 1, &wc);

		if (got < 0 || (got == 1 && wc.status != IBV_WC_SUCCESS))
			return -1;
		n -= got;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 10)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	struct ibv_context *ctx = verbs_open_softib0();
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp[2];
	static char buf[2][64];

	if (!ctx || ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "verbs_idle: cannot open softib0 port 1\n");
		return 77;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq,
			.recv_cq = cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		qp[i] = mr ? ibv_create_qp(pd, &ia) : NULL;
	}
	if (!qp[0] || !qp[1] || verbs_connect_rc(qp[0], qp[1]->qp_num, pa.lid, IBV_MTU_1024) ||
	    verbs_connect_rc(qp[1], qp[0]->qp_num, pa.lid, IBV_MTU_1024)) {
		fprintf(stderr, "verbs_idle: cannot set up two connected RC QPs\n");
		return 1;
	}

	struct ibv_sge rs = { (uintptr_t)buf[1], sizeof(buf[1]), mr->lkey };
	struct ibv_sge ss = { (uintptr_t)buf[0], sizeof(buf[0]), mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
			   *bad_s;

	if (ibv_post_recv(qp[1], &rwr, &bad_r) || ibv_post_send(qp[0], &swr, &bad_s) ||
	    wait_cq(cq, 2)) {
		fprintf(stderr, "verbs_idle: the test message did not arrive\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	poll(NULL, 0, seconds * 1000);

	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

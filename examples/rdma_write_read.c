/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rdma_write_read: one-sided operations.  QP A writes into QP B's memory
 * with RDMA WRITE, then reads it back with RDMA READ; B's side posts
 * nothing and sees no completion.
 *
 * What it teaches:
 *   - remote access rights: B's memory region grants REMOTE_WRITE and
 *     REMOTE_READ, and B's QP allows them (qp_access_flags);
 *   - what the requester must know about the target: its virtual address
 *     and its rkey (a real program sends both over a socket, as perftest's
 *     ib_write_bw does);
 *   - READ needs max_rd_atomic (requester) and max_dest_rd_atomic
 *     (responder) of at least 1;
 *   - a message larger than the path MTU goes out as several packets
 *     (FIRST, MIDDLE..., LAST) and arrives as one.
 *
 * Both QPs live in this one process, connected to each other on softib0.
 *
 * Run:  softib run build/examples/rdma_write_read
 *
 * --bad-rkey makes a mistake on purpose: the WRITE carries an rkey B never
 * handed out.  B's QP refuses it (a NAK: remote access error) and goes to
 * the error state; A's completion says IBV_WC_REM_ACCESS_ERR and A's QP
 * goes to the error state too.  The program exits 0 when that happens.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define SIZE (64 * 1024)	/* 16 packets at an MTU of 4096 */
#define PORT 1

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "rdma_write_read: %s failed: %s\n", what, strerror(err));
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

/* An RC QP in INIT.  access says which one-sided operations the peer may
 * perform on our memory through this QP. */
static struct ibv_qp *create_qp_init(struct ibv_pd *pd, struct ibv_cq *cq,
					  int access)
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
		.max_dest_rd_atomic = 1,	/* READs we answer at once */
		.min_rnr_timer = 12,
		.ah_attr = { .dlid = dlid, .port_num = PORT },
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,		/* READs we have outstanding */
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

/* Posts one signalled RDMA WRITE or READ and waits (5 s at most) for its
 * completion; returns the completion's status. */
static enum ibv_wc_status rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		 void *local, struct ibv_mr *mr, uint64_t remote_addr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)local, SIZE, mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = remote_addr, .rkey = rkey },
	}, *bad;
	struct timespec start, now;
	struct ibv_wc wc;
	int ret, n;

	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		die("ibv_post_send", ret);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		if (n == 1)
			return wc.status;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 5);
	die("waiting for a completion", ETIMEDOUT);
}

/* A completion that should have succeeded. */
static void check(enum ibv_wc_status st)
{
	if (st != IBV_WC_SUCCESS) {
		fprintf(stderr, "rdma_write_read: %s\n", ibv_wc_status_str(st));
		exit(1);
	}
}

/*
 * --bad-rkey: A writes with an rkey that names B's region but with the
 * wrong key portion (the low 8 bits), as a program would after B
 * re-registered its buffer and got a new rkey.  B checks the rkey on the
 * first packet, refuses, and both QPs end up in the error state.
 */
static int write_with_bad_rkey(struct ibv_qp *a, struct ibv_cq *cq, unsigned char *a_buf,
			       struct ibv_mr *a_mr, unsigned char *b_buf, struct ibv_mr *b_mr)
{
	uint32_t wrong = b_mr->rkey ^ 0xff;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	enum ibv_wc_status st;
	int i;

	memset(a_buf, 0x5a, SIZE);
	st = rdma(a, cq, IBV_WR_RDMA_WRITE, a_buf, a_mr, (uintptr_t)b_buf, wrong);
	printf("rdma_write_read: RDMA WRITE with rkey 0x%x (B's is 0x%x): %s\n", wrong,
	       b_mr->rkey, ibv_wc_status_str(st));
	for (i = 0; i < SIZE && !b_buf[i]; i++)
		;
	/* An error completion moves an RC QP to ERR: it must be reset and
	 * connected again before it can send anything else. */
	if (ibv_query_qp(a, &attr, IBV_QP_STATE, &init))
		die("ibv_query_qp", errno);
	printf("rdma_write_read: B's buffer %s; QP A is now in %s\n",
	       i == SIZE ? "is untouched" : "was written to", attr.qp_state == IBV_QPS_ERR ? "ERR" : "another state");
	if (st != IBV_WC_REM_ACCESS_ERR || i != SIZE || attr.qp_state != IBV_QPS_ERR) {
		fprintf(stderr, "rdma_write_read: expected a remote access error, nothing written, A in ERR\n");
		return 1;
	}
	printf("rdma_write_read: --bad-rkey: the WRITE was refused, as it must be\n");
	return 0;
}

int main(int argc, char **argv)
{
	bool bad_rkey = argc == 2 && !strcmp(argv[1], "--bad-rkey");
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *a_mr, *b_mr;
	struct ibv_qp *a, *b;
	/* A's buffer: the data to write, later the data read back.  B's
	 * buffer: the target of both operations. */
	unsigned char *a_buf = malloc(SIZE), *b_buf = calloc(1, SIZE);
	int ret;

	if (argc > 1 && !bad_rkey) {
		fprintf(stderr, "usage: rdma_write_read [--bad-rkey]\n");
		return 2;
	}
	if (!a_buf || !b_buf)
		die("malloc", ENOMEM);
	ctx = open_device();
	ret = ibv_query_port(ctx, PORT, &port);
	if (ret)
		die("ibv_query_port", ret);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	/* A's buffer receives READ responses: LOCAL_WRITE. */
	a_mr = ibv_reg_mr(pd, a_buf, SIZE, IBV_ACCESS_LOCAL_WRITE);
	/* Remote write needs local write too (ibv_reg_mr(3)). */
	b_mr = ibv_reg_mr(pd, b_buf, SIZE, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!a_mr || !b_mr)
		die("ibv_reg_mr", errno);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	a = create_qp_init(pd, cq, 0);
	b = create_qp_init(pd, cq, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	connect_qp(a, port.lid, b->qp_num, port.active_mtu);
	connect_qp(b, port.lid, a->qp_num, port.active_mtu);
	if (bad_rkey) {
		ret = write_with_bad_rkey(a, cq, a_buf, a_mr, b_buf, b_mr);
		goto out;
	}

	/* 1. WRITE A's pattern into B's buffer.  B learns nothing; A's
	 * completion means B's memory holds the data. */
	for (int i = 0; i < SIZE; i++)
		a_buf[i] = (unsigned char)(i * 7 + 1);
	check(rdma(a, cq, IBV_WR_RDMA_WRITE, a_buf, a_mr, (uintptr_t)b_buf, b_mr->rkey));
	if (memcmp(a_buf, b_buf, SIZE)) {
		fprintf(stderr, "rdma_write_read: B's buffer does not hold what A wrote\n");
		return 1;
	}
	printf("rdma_write_read: RDMA WRITE placed %d bytes in B's memory (rkey 0x%x)\n",
	       SIZE, b_mr->rkey);

	/* 2. Change B's copy locally, then READ it back into A's buffer. */
	memcpy(b_buf, "changed by B", 12);
	memset(a_buf, 0, SIZE);
	check(rdma(a, cq, IBV_WR_RDMA_READ, a_buf, a_mr, (uintptr_t)b_buf, b_mr->rkey));
	if (memcmp(a_buf, b_buf, SIZE)) {
		fprintf(stderr, "rdma_write_read: A read back something else\n");
		return 1;
	}
	printf("rdma_write_read: RDMA READ brought back %d bytes starting \"%.12s\"\n",
	       SIZE, (char *)a_buf);

out:
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(a_mr);
	ibv_dereg_mr(b_mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(a_buf);
	free(b_buf);
	if (bad_rkey)
		return ret;
	printf("rdma_write_read: OK\n");
	return 0;
}

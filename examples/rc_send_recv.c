/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rc_send_recv: one message over a Reliable Connection, start to finish.
 *
 * What it teaches:
 *   - the objects every verbs program needs: device context, protection
 *     domain (PD), memory regions (MR), completion queue (CQ), queue pairs;
 *   - the RC queue pair's state machine RESET -> INIT -> RTR -> RTS and
 *     what each step needs (port and access, then the peer's QP number,
 *     LID and PSN, then our own PSN and retry counts);
 *   - two-sided communication: the receiver posts a receive buffer first,
 *     the sender posts a SEND, each learns of the end through its CQ.
 *
 * Both ends live in this one process: QP A and QP B on the same port of
 * softib0, connected to each other, so no TCP exchange of QP numbers is
 * needed.  Between two machines the program would be the same except that
 * each side sends its QP number, LID and PSN to the other over a socket
 * (ibv_rc_pingpong does exactly that).
 *
 * Run:  softib run build/examples/rc_send_recv
 *
 * --stop-at-rtr makes a common mistake on purpose: QP A is left in RTR
 * (it can receive but not send), so ibv_post_send refuses the SEND with
 * EINVAL and softib logs the rule.  The program exits 0 when that happens.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define MSG	 "Hello from QP A to QP B over RC"
#define BUF_SIZE 4096
#define PORT	 1

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "rc_send_recv: %s failed: %s\n", what, strerror(err));
	exit(1);
}

/* Opens softib0 (or the first device when there is no softib0). */
static struct ibv_context *open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
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

static struct ibv_qp *create_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

/*
 * RESET -> INIT -> RTR -> RTS.  The peer's address is its LID and QP
 * number; the PSNs only have to agree: our RTR rq_psn is the PSN the peer
 * sends first, which is the peer's RTS sq_psn.  Both sides use 0 here.
 */
static void connect_qp(struct ibv_qp *qp, uint16_t dlid, uint32_t dest_qpn,
		       enum ibv_mtu mtu, bool stop_at_rtr)
{
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = PORT,
		.qp_access_flags = 0,	/* SEND needs no remote access */
	};
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .dlid = dlid, .sl = 0, .port_num = PORT },
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
	};
	int ret;

	ret = ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		die("ibv_modify_qp to INIT", ret);
	ret = ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		die("ibv_modify_qp to RTR", ret);
	if (stop_at_rtr)
		return;
	ret = ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		die("ibv_modify_qp to RTS", ret);
}

/* Polls CQ until one completion arrives; gives up after 5 seconds. */
static struct ibv_wc wait_one(struct ibv_cq *cq)
{
	struct timespec start, now;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rc_send_recv: work request %llu: %s\n",
					(unsigned long long)wc.wr_id,
					ibv_wc_status_str(wc.status));
				exit(1);
			}
			return wc;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 5);
	die("waiting for a completion", ETIMEDOUT);
}

int main(int argc, char **argv)
{
	bool stop_at_rtr = argc == 2 && !strcmp(argv[1], "--stop-at-rtr");
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *send_mr, *recv_mr;
	struct ibv_qp *a, *b;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { 0 }, *bad_rwr;
	struct ibv_send_wr swr = { 0 }, *bad_swr;
	struct ibv_wc wc;
	char *send_buf = calloc(1, BUF_SIZE), *recv_buf = calloc(1, BUF_SIZE);
	int ret;

	if (argc > 1 && !stop_at_rtr) {
		fprintf(stderr, "usage: rc_send_recv [--stop-at-rtr]\n");
		return 2;
	}
	if (!send_buf || !recv_buf)
		die("calloc", ENOMEM);
	ctx = open_device();
	/* The subnet manager gives the port its LID and makes it ACTIVE. */
	ret = ibv_query_port(ctx, PORT, &port);
	if (ret)
		die("ibv_query_port", ret);
	if (port.state != IBV_PORT_ACTIVE)
		die("port 1 is not ACTIVE", ENETDOWN);

	/* A PD groups the objects that may be used together. */
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	/* The HCA may only touch registered memory.  The receive buffer is
	 * written by the HCA, so it needs LOCAL_WRITE. */
	send_mr = ibv_reg_mr(pd, send_buf, BUF_SIZE, 0);
	recv_mr = ibv_reg_mr(pd, recv_buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!send_mr || !recv_mr)
		die("ibv_reg_mr", errno);
	/* One CQ is enough for both QPs; wr_id tells the completions apart. */
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	a = create_rc_qp(pd, cq);
	b = create_rc_qp(pd, cq);

	/* Same port, so the peer's LID is our own. */
	connect_qp(a, port.lid, b->qp_num, port.active_mtu, stop_at_rtr);
	connect_qp(b, port.lid, a->qp_num, port.active_mtu, false);
	printf("rc_send_recv: QP A 0x%06x <-> QP B 0x%06x on LID 0x%04x\n",
	       a->qp_num, b->qp_num, port.lid);

	/* The receive must be posted before the SEND arrives (otherwise the
	 * responder answers with an RNR NAK and the sender retries). */
	sge = (struct ibv_sge){ (uintptr_t)recv_buf, BUF_SIZE, recv_mr->lkey };
	rwr.wr_id = 2;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ret = ibv_post_recv(b, &rwr, &bad_rwr);
	if (ret)
		die("ibv_post_recv", ret);

	strcpy(send_buf, MSG);
	sge = (struct ibv_sge){ (uintptr_t)send_buf, sizeof(MSG), send_mr->lkey };
	swr.wr_id = 1;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;	/* we want a completion */
	ret = ibv_post_send(a, &swr, &bad_swr);
	if (stop_at_rtr) {
		/* RESET, INIT and RTR refuse send requests outright: the
		 * send queue starts working in RTS. */
		printf("rc_send_recv: ibv_post_send on QP A (left in RTR) returned %d: %s\n",
		       ret, strerror(ret));
		if (ret != EINVAL) {
			fprintf(stderr, "rc_send_recv: expected EINVAL\n");
			return 1;
		}
		goto out;
	}
	if (ret)
		die("ibv_post_send", ret);

	/* Two completions: A's SEND (acknowledged by B) and B's receive,
	 * in either order. */
	for (int i = 0; i < 2; i++) {
		wc = wait_one(cq);
		if (wc.wr_id == 1)
			printf("rc_send_recv: A: SEND complete\n");
		else
			printf("rc_send_recv: B: received %u bytes: \"%s\"\n",
			       wc.byte_len, recv_buf);
	}
	if (strcmp(recv_buf, MSG)) {
		fprintf(stderr, "rc_send_recv: B's buffer holds the wrong data\n");
		return 1;
	}

	/* Tear down in reverse order of creation. */
out:
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(send_mr);
	ibv_dereg_mr(recv_mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(send_buf);
	free(recv_buf);
	if (stop_at_rtr)
		printf("rc_send_recv: --stop-at-rtr: the SEND was refused, as it must be\n");
	else
		printf("rc_send_recv: OK\n");
	return 0;
}

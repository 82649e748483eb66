/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ud_send: datagrams.  QP A sends two messages to QP B over Unreliable
 * Datagram: the first addressed by LID only, the second with a global route
 * header (GRH) addressed by GID.
 *
 * What it teaches:
 *   - UD needs no connection: each SEND names its destination with an
 *     address handle (AH), the remote QP number and the remote Q_Key;
 *   - the UD states carry no peer: INIT takes the Q_Key, RTR and RTS
 *     only the state and the first PSN;
 *   - every UD receive buffer starts with 40 bytes for the GRH: the payload
 *     lands after them, byte_len counts them, and IBV_WC_GRH in wc_flags
 *     says whether they hold a real GRH (ibv_post_recv(3));
 *   - the completion names the sender: source QP and source LID;
 *   - a UD message is at most one packet (the path MTU).
 *
 * Both QPs live in this one process on softib0.
 *
 * Run:  softib run build/examples/ud_send
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define PORT	 1
#define GRH_SIZE 40
#define MSG_SIZE 256
#define QKEY	 0x11111111	/* sender and receiver agree on it */

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "ud_send: %s failed: %s\n", what, strerror(err));
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

/* A UD QP in RTS: ready to send to anyone and receive from anyone who
 * knows its number and Q_Key. */
static struct ibv_qp *create_ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init_attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init_attr);
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = PORT,
		.qkey = QKEY,
	};
	int ret;

	if (!qp)
		die("ibv_create_qp", errno);
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		die("ibv_modify_qp to INIT", ret);
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		die("ibv_modify_qp to RTR", ret);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (ret)
		die("ibv_modify_qp to RTS", ret);
	return qp;
}

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
		if (n == 1 && wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "ud_send: %s\n", ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 5);
	die("waiting for a completion", ETIMEDOUT);
}

/* B posts a receive, A sends text through ah, both completions are read;
 * B's completion must name A and say whether a GRH came (with_grh). */
static void send_one(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *cq,
		     struct ibv_ah *ah, int with_grh, char *buf, struct ibv_mr *mr,
		     const char *text)
{
	char *send_buf = buf, *recv_buf = buf + MSG_SIZE;
	struct ibv_sge rsge = { (uintptr_t)recv_buf, GRH_SIZE + MSG_SIZE, mr->lkey };
	struct ibv_sge ssge = { (uintptr_t)send_buf, MSG_SIZE, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = {
		.wr_id = 1,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = b->qp_num, .remote_qkey = QKEY },
	}, *bad_s;
	struct ibv_wc wc;
	int ret;

	memset(buf, 0, 2 * MSG_SIZE + GRH_SIZE);
	snprintf(send_buf, MSG_SIZE, "%s", text);
	ret = ibv_post_recv(b, &rwr, &bad_r);
	if (ret)
		die("ibv_post_recv", ret);
	ret = ibv_post_send(a, &swr, &bad_s);
	if (ret)
		die("ibv_post_send", ret);
	for (int i = 0; i < 2; i++) {
		wc = wait_one(cq);
		if (wc.wr_id != 2)
			continue;	/* A's send completion */
		printf("ud_send: B received %u bytes (%d of GRH area + %u of payload) "
		       "from QP 0x%06x at LID 0x%04x, GRH %s: \"%s\"\n",
		       wc.byte_len, GRH_SIZE, wc.byte_len - GRH_SIZE, wc.src_qp,
		       wc.slid, (wc.wc_flags & IBV_WC_GRH) ? "present" : "absent",
		       recv_buf + GRH_SIZE);
		if (wc.src_qp != a->qp_num || strcmp(recv_buf + GRH_SIZE, text) ||
		    wc.byte_len != GRH_SIZE + MSG_SIZE ||
		    !(wc.wc_flags & IBV_WC_GRH) != !with_grh) {
			fprintf(stderr, "ud_send: wrong source, length, GRH flag or data\n");
			exit(1);
		}
	}
}

int main(void)
{
	struct ibv_context *ctx = open_device();
	struct ibv_port_attr port;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *a, *b;
	struct ibv_ah *lid_ah, *grh_ah;
	char *buf = calloc(1, 2 * MSG_SIZE + GRH_SIZE);
	int ret;

	if (!buf)
		die("calloc", ENOMEM);
	ret = ibv_query_port(ctx, PORT, &port);
	if (ret)
		die("ibv_query_port", ret);
	if (MSG_SIZE > 128 << port.active_mtu)	/* enum ibv_mtu: 1 is 256 */
		die("checking the message fits the MTU", EMSGSIZE);
	ret = ibv_query_gid(ctx, PORT, 0, &gid);
	if (ret)
		die("ibv_query_gid", ret);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	/* One MR for the send buffer and the receive buffer behind it. */
	mr = ibv_reg_mr(pd, buf, 2 * MSG_SIZE + GRH_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	a = create_ud_qp(pd, cq);
	b = create_ud_qp(pd, cq);

	/* An AH is the route to a port: here, our own LID. */
	lid_ah = ibv_create_ah(pd, &(struct ibv_ah_attr){
		.dlid = port.lid, .port_num = PORT });
	/* The same port by GID, so the packet carries a GRH. */
	grh_ah = ibv_create_ah(pd, &(struct ibv_ah_attr){
		.dlid = port.lid, .port_num = PORT, .is_global = 1,
		.grh = { .dgid = gid, .sgid_index = 0, .hop_limit = 1 } });
	if (!lid_ah || !grh_ah)
		die("ibv_create_ah", errno);

	send_one(a, b, cq, lid_ah, 0, buf, mr, "datagram addressed by LID");
	send_one(a, b, cq, grh_ah, 1, buf, mr, "datagram addressed by GID");

	ibv_destroy_ah(lid_ah);
	ibv_destroy_ah(grh_ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	printf("ud_send: OK\n");
	return 0;
}

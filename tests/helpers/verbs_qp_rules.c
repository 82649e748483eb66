/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Breaks the QP, CQ and posting rules through the real libibverbs on
 * softib0 and checks the errno of each; test_qp_rules.sh checks the log
 * line each one printed.  Also checks flush on ERR, SQ_DRAINED and a
 * completion-channel event.  Prints "ok NAME" per check; exit 1 on the
 * first wrong result, 77 when softib0 is not visible.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs_abi_layout.h" /* SIB_ABI_LAYOUT: the rdma-core this builds against */
#include "verbs_open.h"

static int failures;

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

/* Wait (bounded, as a hang guard only) for fd to become readable. */
static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 10000) == 1;
}

int main(void)
{
	struct ibv_context *ctx = verbs_open_softib0();
	struct ibv_device_attr dev;
	struct ibv_qp_attr a;
	struct ibv_wc wc[8];
	char buf[64];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = sizeof(buf), .lkey = 0 };

	if (!ctx) {
		printf("skip: softib0 is not visible (run under softib run)\n");
		return 77;
	}
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	CHECK("query_device", pd && !ibv_query_device(ctx, &dev));

	/* A CQ larger than max_cqe: EINVAL (ibv_create_cq(3)). */
	errno = 0;
	CHECK("cq_above_max_cqe", !ibv_create_cq(ctx, dev.max_cqe + 1, NULL, NULL, 0) &&
					  errno == EINVAL);
	struct ibv_cq *cq = ibv_create_cq(ctx, dev.max_cqe, NULL, NULL, 0);

	CHECK("cq_of_max_cqe", cq && cq->cqe >= dev.max_cqe);
	ibv_destroy_cq(cq);
	/* A CQ of no entries: EINVAL, and misuse rather than a probe. */
	errno = 0;
	CHECK("cq_of_0_entries", !ibv_create_cq(ctx, 0, NULL, NULL, 0) && errno == EINVAL);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	/* 0xffffffff work requests: EINVAL. */
	struct ibv_qp_init_attr big = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 0xffffffff, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	errno = 0;
	CHECK("qp_0xffffffff_wrs", !ibv_create_qp(pd, &big) && errno == EINVAL);
	/* libfabric's vrb_find_max_inline: halve until create_qp succeeds. */
	uint32_t lo = 0, hi = 65536;

	big.cap.max_send_wr = 1;
	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) / 2;
		struct ibv_qp *q;

		big.cap.max_inline_data = mid;
		q = ibv_create_qp(pd, &big);
		if (q) {
			lo = big.cap.max_inline_data >= mid ? mid : lo;
			ibv_destroy_qp(q);
		} else {
			hi = mid - 1;
		}
	}
	printf("max_inline_data found by search: %u\n", lo);
	CHECK("qp_inline_search", lo >= 64);
	/* A QP with no send CQ: EINVAL, misuse. */
	big.send_cq = NULL;
	big.cap.max_inline_data = 0;
	errno = 0;
	CHECK("qp_without_send_cq", !ibv_create_qp(pd, &big) && errno == EINVAL);

	struct ibv_qp *rc = make_qp(pd, cq, IBV_QPT_RC);
	struct ibv_qp *ud = make_qp(pd, cq, IBV_QPT_UD);

	CHECK("create_qps", rc && ud && rc->state == IBV_QPS_RESET);

	/* Destroying a CQ a QP uses: EBUSY. */
	CHECK("destroy_cq_in_use", ibv_destroy_cq(cq) == EBUSY);

	/* A transition missing a required attribute. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	CHECK("reset_init_without_pkey_index",
	      ibv_modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL &&
		      rc->state == IBV_QPS_RESET);
	/* An illegal transition. */
	a.qp_state = IBV_QPS_RTS;
	CHECK("reset_rts_illegal", ibv_modify_qp(rc, &a, IBV_QP_STATE) == EINVAL);

	/* post_recv in RESET: EINVAL (pyverbs asserts it). */
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad_r = NULL;

	CHECK("post_recv_in_reset", ibv_post_recv(rc, &rwr, &bad_r) == EINVAL && bad_r == &rwr);

	CHECK("rc_to_init", !to_init(rc) && rc->state == IBV_QPS_INIT);
	CHECK("ud_to_init", !to_init(ud));

	/* A forbidden attribute: UD INIT->RTR carries no address vector. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	CHECK("ud_rtr_with_av", ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_AV) == EINVAL);

	/* A GRH from an empty GID table slot: EINVAL, the QP stays in INIT. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = rc->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	a.ah_attr.dlid = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 2;
	a.ah_attr.grh.hop_limit = 1;
	CHECK("rc_rtr_empty_sgid",
	      ibv_modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_MIN_RNR_TIMER) == EINVAL &&
		      rc->state == IBV_QPS_INIT);

	/* post_send before RTS: EINVAL, bad_wr set. */
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE },
			   *bad_s = NULL;

	CHECK("post_send_in_init", ibv_post_send(rc, &swr, &bad_s) == EINVAL && bad_s == &swr);

	/* Too many SGEs: EINVAL; a full receive queue: ENOMEM. */
	rwr.num_sge = 2;
	CHECK("post_recv_too_many_sge", ibv_post_recv(rc, &rwr, &bad_r) == EINVAL);
	rwr.num_sge = 1;
	struct ibv_recv_wr five[5];

	for (int i = 0; i < 5; i++) {
		five[i] = rwr;
		five[i].wr_id = 100 + i;
		five[i].next = i < 4 ? &five[i + 1] : NULL;
	}
	CHECK("post_recv_overflow", ibv_post_recv(rc, five, &bad_r) == ENOMEM && bad_r == &five[4]);

	/* Entering ERR flushes the four posted receives, in order. */
	a.qp_state = IBV_QPS_ERR;
	CHECK("rc_to_err", !ibv_modify_qp(rc, &a, IBV_QP_STATE) && rc->state == IBV_QPS_ERR);
	int n = ibv_poll_cq(cq, 8, wc);
	int in_order = n == 4;

	for (int i = 0; in_order && i < 4; i++)
		in_order = wc[i].wr_id == (uint64_t)(100 + i) && wc[i].status == IBV_WC_WR_FLUSH_ERR &&
			   wc[i].qp_num == rc->qp_num;
	CHECK("flush_on_err", in_order);

	/* SQD with notification raises IBV_EVENT_SQ_DRAINED. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	CHECK("ud_rtr", !ibv_modify_qp(ud, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	CHECK("ud_rts", !ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	CHECK("ud_sqd", !ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY));
	struct ibv_async_event ev;

	CHECK("sq_drained_event", readable(ctx->async_fd) && !ibv_get_async_event(ctx, &ev) &&
					  ev.event_type == IBV_EVENT_SQ_DRAINED &&
					  ev.element.qp == ud);
	ibv_ack_async_event(&ev);
	struct ibv_qp_init_attr qia;

	CHECK("query_sqd", !ibv_query_qp(ud, &a, IBV_QP_STATE, &qia) && a.qp_state == IBV_QPS_SQD &&
				   a.sq_psn == 0 && qia.cap.max_send_wr == 4);

	/* A completion channel event for a flushed receive. */
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *ccq = ch ? ibv_create_cq(ctx, 4, NULL, ch, 0) : NULL;
	struct ibv_qp *q2 = ccq ? make_qp(pd, ccq, IBV_QPT_UC) : NULL;

	CHECK("channel_setup", q2 && !to_init(q2) && !ibv_req_notify_cq(ccq, 0));
	if (q2) {
		struct ibv_cq *ev_cq = NULL;
		void *ev_ctx;

		ibv_post_recv(q2, &rwr, &bad_r);
		a.qp_state = IBV_QPS_ERR;
		ibv_modify_qp(q2, &a, IBV_QP_STATE);
		CHECK("cq_event", readable(ch->fd) && !ibv_get_cq_event(ch, &ev_cq, &ev_ctx) &&
					  ev_cq == ccq);
		ibv_ack_cq_events(ccq, 1);
		CHECK("cq_event_entry", ibv_poll_cq(ccq, 8, wc) == 1 &&
						wc[0].status == IBV_WC_WR_FLUSH_ERR);
		ibv_destroy_qp(q2);
		ibv_destroy_cq(ccq);
		ibv_destroy_comp_channel(ch);
	}

	/* SRQ: limit above max_wr fails; arming and query. */
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 8, .max_sge = 1, .srq_limit = 9 } };

	errno = 0;
	CHECK("srq_limit_above_max_wr", !ibv_create_srq(pd, &sia) && errno == EINVAL);
	sia.attr.srq_limit = 0;
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	struct ibv_srq_attr sa = { .srq_limit = 4 };

	CHECK("srq_arm", srq && !ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) &&
				 !ibv_query_srq(srq, &sa) && sa.srq_limit == 4 && sa.max_wr == 8);
	uint32_t num;

	CHECK("srq_num_basic", srq && ibv_get_srq_num(srq, &num) == EINVAL);
	if (srq)
		ibv_destroy_srq(srq);

	/* XRC domains shared through a file (ibv_open_xrcd(3)). */
	char path[] = "/tmp/softib-xrcd-XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = fd, .oflags = 0 };

	errno = 0;
	CHECK("xrcd_missing_without_creat", fd >= 0 && !ibv_open_xrcd(ctx, &xa) && errno == EAGAIN);
	xa.oflags = O_CREAT;
	struct ibv_xrcd *x1 = ibv_open_xrcd(ctx, &xa);
	xa.oflags = 0;
	struct ibv_xrcd *x2 = ibv_open_xrcd(ctx, &xa);
	xa.oflags = O_CREAT | O_EXCL;
	errno = 0;
	CHECK("xrcd_shared", x1 && x2 && !ibv_open_xrcd(ctx, &xa) && errno == EINVAL);
	struct ibv_srq_init_attr_ex xsa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x1, .cq = cq,
	};
	struct ibv_srq *xsrq = x1 ? ibv_create_srq_ex(ctx, &xsa) : NULL;

	CHECK("xrc_srq", xsrq && !ibv_get_srq_num(xsrq, &num) && num != 0);
	CHECK("xrcd_close_shared_then_busy", x2 && !ibv_close_xrcd(x2) && ibv_close_xrcd(x1) == EBUSY);
	CHECK("xrcd_close_after_srq", xsrq && !ibv_destroy_srq(xsrq) && !ibv_close_xrcd(x1));
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}

	/* The ibv_qp_ex API: unsupported send ops are EOPNOTSUPP (TSO, which
	 * softib lacks); wr_complete in RESET EINVAL. */
	struct ibv_qp_init_attr_ex qx = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO,
	};

	errno = 0;
	CHECK("qp_ex_unsupported_op", !ibv_create_qp_ex(ctx, &qx) && errno == EOPNOTSUPP);
	qx.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	struct ibv_qp *eqp = ibv_create_qp_ex(ctx, &qx);
	struct ibv_qp_ex *qpx = eqp ? ibv_qp_to_qp_ex(eqp) : NULL;

	CHECK("qp_ex", qpx && qpx->wr_send && qpx->wr_rdma_write && !qpx->wr_rdma_read);
	if (qpx) {
		ibv_wr_start(qpx);
		qpx->wr_id = 5;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 0, (uintptr_t)buf, 8);
		CHECK("wr_complete_in_reset", ibv_wr_complete(qpx) == EINVAL);
		ibv_destroy_qp(eqp);
	}

	CHECK("destroy", !ibv_destroy_qp(rc) && !ibv_destroy_qp(ud) && !ibv_destroy_cq(cq) &&
				 !ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}

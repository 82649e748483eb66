/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/caps.h"
#include "base/log.h"
#include "transport/numtab.h"
#include "transport/qp.h"
#include "transport/qp_impl.h"
#include "transport/srq.h"
#include "transport/xrcd.h"


static bool has_sq(enum sib_qp_type t)
{
	return t != SIB_QPT_XRC_RECV;
}

static bool has_rq(enum sib_qp_type t)
{
	return t == SIB_QPT_RC || t == SIB_QPT_UC || t == SIB_QPT_UD;
}

/* A cap above the device's limit sets beyond_device: a capability probe. */
static int check_caps(struct sib_qp_init *in, char *why, size_t why_len)
{
	const struct sib_qp_cap *c = &in->cap;

	in->beyond_device = false;

	if ((unsigned)in->type >= SIB_QPT_NUM) {
		snprintf(why, why_len, "unknown QP type %d", (int)in->type);
		return EINVAL;
	}
	if (has_sq(in->type)) {
		if (!in->send_cq) {
			snprintf(why, why_len, "%s QP needs a send CQ", sib_qp_type_name(in->type));
			return EINVAL;
		}
		if (c->max_send_wr > SIB_MAX_QP_WR) {
			snprintf(why, why_len, "max_send_wr %u exceeds max_qp_wr %u", c->max_send_wr,
				 SIB_MAX_QP_WR);
			in->beyond_device = true;
			return EINVAL;
		}
		if (c->max_send_sge > SIB_MAX_SGE) {
			snprintf(why, why_len, "max_send_sge %u exceeds max_sge %u", c->max_send_sge,
				 SIB_MAX_SGE);
			in->beyond_device = true;
			return EINVAL;
		}
		if (c->max_inline_data > SIB_MAX_INLINE_DATA) {
			snprintf(why, why_len, "max_inline_data %u exceeds %u", c->max_inline_data,
				 SIB_MAX_INLINE_DATA);
			in->beyond_device = true;
			return EINVAL;
		}
	}
	if (has_rq(in->type) && !in->srq) {
		if (!in->recv_cq) {
			snprintf(why, why_len, "%s QP needs a receive CQ", sib_qp_type_name(in->type));
			return EINVAL;
		}
		if (c->max_recv_wr > SIB_MAX_QP_WR) {
			snprintf(why, why_len, "max_recv_wr %u exceeds max_qp_wr %u", c->max_recv_wr,
				 SIB_MAX_QP_WR);
			in->beyond_device = true;
			return EINVAL;
		}
		if (c->max_recv_sge > SIB_MAX_SGE) {
			snprintf(why, why_len, "max_recv_sge %u exceeds max_sge %u", c->max_recv_sge,
				 SIB_MAX_SGE);
			in->beyond_device = true;
			return EINVAL;
		}
	}
	if (in->srq && (in->type == SIB_QPT_XRC_SEND || sib_srq_is_xrc(in->srq))) {
		snprintf(why, why_len, "%s QP cannot use %s SRQ", sib_qp_type_name(in->type),
			 sib_srq_is_xrc(in->srq) ? "an XRC" : "an");
		return EINVAL;
	}
	if (in->type == SIB_QPT_XRC_RECV && !in->xrcd) {
		snprintf(why, why_len, "XRC_RECV QP needs an XRC domain");
		return EINVAL;
	}
	return 0;
}

int sib_qp_create(struct sib_qp_init *in, struct sib_qp **out, char *why, size_t why_len)
{
	struct sib_qp *qp;
	int rc = check_caps(in, why, why_len);

	if (rc)
		return rc;
	/* Grant what was asked; queues the type does not have are 0.  Inline
	 * data gets at least the room of the send SGEs it stands in for, as
	 * rxe and mlx5 grant (IBA 11.2.4.1: the actual capacities may exceed
	 * the request): rdma_xclient posts 16 inline bytes having asked for
	 * one SGE and no inline room. */
	if (in->cap.max_inline_data < in->cap.max_send_sge * sizeof(struct sib_sge))
		in->cap.max_inline_data = in->cap.max_send_sge * sizeof(struct sib_sge); /* <= 512 */
	if (!has_sq(in->type)) {
		in->cap.max_send_wr = in->cap.max_send_sge = in->cap.max_inline_data = 0;
		in->send_cq = NULL;
	}
	if (!has_rq(in->type) || in->srq) {
		in->cap.max_recv_wr = in->cap.max_recv_sge = 0;
		if (!has_rq(in->type))
			in->recv_cq = NULL;
	}
	snprintf(why, why_len, "out of memory");
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return ENOMEM;
	if (sib_wq_init(&qp->sq, in->cap.max_send_wr, in->cap.max_send_sge, in->cap.max_inline_data,
			true) ||
	    sib_wq_init(&qp->rq, in->cap.max_recv_wr, in->cap.max_recv_sge, 0, false)) {
		sib_wq_fini(&qp->sq);
		free(qp);
		return ENOMEM;
	}
	qp->req.w_len = in->cap.max_send_wr;
	qp->req.w = calloc(qp->req.w_len ? qp->req.w_len : 1, sizeof(*qp->req.w));
	qp->resp.res = calloc(SIB_MAX_QP_RD_ATOM, sizeof(*qp->resp.res));
	if (!qp->req.w || !qp->resp.res) {
		free(qp->req.w);
		free(qp->resp.res);
		sib_wq_fini(&qp->sq);
		sib_wq_fini(&qp->rq);
		free(qp);
		return ENOMEM;
	}
	if (sib_numtab_alloc(in->qpns, qp, &qp->qp_num)) {
		free(qp->req.w);
		free(qp->resp.res);
		snprintf(why, why_len, "no QP number left (max_qp %u)", SIB_MAX_QP);
		sib_wq_fini(&qp->sq);
		sib_wq_fini(&qp->rq);
		free(qp);
		return ENOMEM;
	}
	pthread_mutex_init(&qp->lock, NULL);
	sib_rxq_init(&qp->rxq);
	qp->type = in->type;
	qp->attr.qp_state = SIB_QPS_RESET;
	qp->attr.cap = in->cap;
	qp->attr.port_num = 1;
	qp->attr.path_mtu = SIB_MTU_1024;
	qp->sq_sig_all = in->sq_sig_all;
	qp->block_self_mcast_lb = in->block_self_mcast_lb;
	qp->send_cq = in->send_cq;
	qp->recv_cq = in->recv_cq;
	qp->srq = in->srq;
	qp->xrcd = in->xrcd;
	qp->pd = in->pd;
	qp->local_exec = in->local_exec;
	qp->qpns = in->qpns;
	qp->sink = in->sink;
	qp->user = in->user;
	qp->eng = in->engine;
	if (qp->eng)
		sib_engine_qp_attach(qp->eng, qp);
	if (qp->send_cq)
		sib_cq_get(qp->send_cq);
	if (qp->recv_cq)
		sib_cq_get(qp->recv_cq);
	if (qp->srq)
		sib_srq_get(qp->srq);
	if (qp->xrcd)
		sib_xrcd_get(qp->xrcd);
	*out = qp;
	return 0;
}

static void clean_cqs(struct sib_qp *qp)
{
	if (qp->send_cq)
		sib_cq_clean(qp->send_cq, qp->qp_num);
	if (qp->recv_cq && qp->recv_cq != qp->send_cq)
		sib_cq_clean(qp->recv_cq, qp->qp_num);
}

void sib_qp_destroy(struct sib_qp *qp)
{
	/* What the port queued (this QP's last ACKs among it) leaves first. */
	if (qp->eng)
		sib_engine_flush(qp->eng);
	/* First out of the engine: rx and timers no longer find the QP. */
	if (qp->eng)
		sib_engine_qp_detach(qp->eng, qp); /* frees the number too */
	else
		sib_numtab_free(qp->qpns, qp->qp_num);
	clean_cqs(qp);
	if (qp->send_cq)
		sib_cq_put(qp->send_cq);
	if (qp->recv_cq)
		sib_cq_put(qp->recv_cq);
	if (qp->srq)
		sib_srq_put(qp->srq);
	if (qp->xrcd)
		sib_xrcd_put(qp->xrcd);
	sib_wq_fini(&qp->sq);
	sib_wq_fini(&qp->rq);
	free(qp->req.w);
	free(qp->resp.res);
	sib_rxq_fini(&qp->rxq); /* what still waited is lost with the QP */
	pthread_mutex_destroy(&qp->lock);
	free(qp);
}

uint32_t sib_qp_num(const struct sib_qp *qp)
{
	return qp->qp_num;
}

enum sib_qp_type sib_qp_type(const struct sib_qp *qp)
{
	return qp->type;
}

const struct sib_qp_cap *sib_qp_caps(const struct sib_qp *qp)
{
	return &qp->attr.cap;
}

enum sib_qp_state sib_qp_state(struct sib_qp *qp)
{
	enum sib_qp_state s;

	sib_qp_lock(qp);
	s = qp->attr.qp_state;
	sib_qp_unlock(qp);
	return s;
}

static const enum sib_wc_opcode wc_of_wr[SIB_WR_NUM] = {
	[SIB_WR_RDMA_WRITE] = SIB_WC_RDMA_WRITE,
	[SIB_WR_RDMA_WRITE_WITH_IMM] = SIB_WC_RDMA_WRITE,
	[SIB_WR_SEND] = SIB_WC_SEND,
	[SIB_WR_SEND_WITH_IMM] = SIB_WC_SEND,
	[SIB_WR_RDMA_READ] = SIB_WC_RDMA_READ,
	[SIB_WR_ATOMIC_CMP_AND_SWP] = SIB_WC_COMP_SWAP,
	[SIB_WR_ATOMIC_FETCH_AND_ADD] = SIB_WC_FETCH_ADD,
	[SIB_WR_LOCAL_INV] = SIB_WC_LOCAL_INV,
	[SIB_WR_BIND_MW] = SIB_WC_BIND_MW,
	[SIB_WR_SEND_WITH_INV] = SIB_WC_SEND,
	[SIB_WR_FLUSH] = SIB_WC_FLUSH,
	[SIB_WR_ATOMIC_WRITE] = SIB_WC_ATOMIC_WRITE,
};

void sib_qp_complete_send_locked(struct sib_qp *qp, const struct sib_send_wqe *w,
				 enum sib_wc_status status)
{
	struct sib_cqe c = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = wc_of_wr[w->opcode],
		.qp_num = qp->qp_num,
		.byte_len = status == SIB_WC_SUCCESS ? (uint32_t)w->length : 0,
	};

	sib_cq_push(qp->send_cq, &c, false);
}

/* IBA 10.3.1 / 11.2.5.2: every outstanding WQE completes with Flush Error, in order. Lock held. */
static void flush_sq(struct sib_qp *qp)
{
	while (qp->sq.count) {
		sib_qp_complete_send_locked(qp, sib_wq_at(&qp->sq, 0), SIB_WC_WR_FLUSH_ERR);
		sib_wq_pop(&qp->sq);
	}
}

static void flush_rq(struct sib_qp *qp)
{
	while (qp->rq.count) {
		const struct sib_recv_wqe *w = sib_wq_at(&qp->rq, 0);
		struct sib_cqe c = {
			.wr_id = w->wr_id,
			.status = SIB_WC_WR_FLUSH_ERR,
			.opcode = SIB_WC_RECV,
			.qp_num = qp->qp_num,
		};

		sib_cq_push(qp->recv_cq, &c, false);
		sib_wq_pop(&qp->rq);
	}
}

void sib_qp_dp_reset(struct sib_qp *qp)
{
	struct sib_req_wqe *w = qp->req.w;
	struct sib_rd_res *res = qp->resp.res;
	uint32_t w_len = qp->req.w_len;

	if (qp->req.busy && qp->eng) /* nothing in flight any more */
		sib_engine_rc_busy_add(qp->eng, -1);
	memset(w, 0, sizeof(*w) * (w_len ? w_len : 1));
	memset(res, 0, sizeof(*res) * SIB_MAX_QP_RD_ATOM);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->req.w = w;
	qp->req.w_len = w_len;
	qp->resp.res = res;
	qp->req.psn = qp->req.una_psn = qp->attr.sq_psn;
	qp->req.ackreq_psn = psn_add(qp->attr.sq_psn, SIB_PSN_MASK); /* none yet */
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.rnr_left = qp->attr.rnr_retry;
	qp->resp.epsn = qp->attr.rq_psn;
	qp->resp.res_len = qp->attr.max_dest_rd_atomic;
	if (qp->resp.res_len > SIB_MAX_QP_RD_ATOM)
		qp->resp.res_len = SIB_MAX_QP_RD_ATOM;
}

/* Whether a WQE that began is still outstanding: they sit at the head of
 * the send queue until they complete, in order. */
static bool sq_begun_outstanding(struct sib_qp *qp)
{
	if (!qp->sq.count || qp->type == SIB_QPT_UD || !qp->req.w)
		return false;
	return sq_req(qp, 0)->begun;
}

void sib_qp_sqd_check(struct sib_qp *qp)
{
	if (qp->attr.qp_state != SIB_QPS_SQD || !qp->attr.sq_draining || sq_begun_outstanding(qp))
		return;
	qp->attr.sq_draining = 0;
	if (qp->sqd_notify) {
		qp->sqd_notify = false;
		sib_event_raise(qp->sink, SIB_EV_SQ_DRAINED, qp->user, 0);
	}
}

/* Enter ERR: flush both queues; a QP on an SRQ gets Last WQE Reached (IBA 11.6.3.1). */
void sib_qp_enter_error_locked(struct sib_qp *qp)
{
	bool was_err = qp->attr.qp_state == SIB_QPS_ERR;

	qp->attr.qp_state = SIB_QPS_ERR;
	flush_sq(qp);
	if (qp->resp.have_wqe) {
		/* The receive WQE of a message in progress was taken off the queue. */
		struct sib_cqe c = {
			.wr_id = qp->resp.wqe.wr_id,
			.status = SIB_WC_WR_FLUSH_ERR,
			.opcode = SIB_WC_RECV,
			.qp_num = qp->qp_num,
		};
		struct sib_cq *cq = sib_recv_cq(qp);

		if (cq)
			sib_cq_push(cq, &c, false);
		qp->resp.have_wqe = false;
	}
	sib_qp_dp_reset(qp);
	flush_rq(qp);
	if (qp->srq && !was_err)
		sib_event_raise(qp->sink, SIB_EV_QP_LAST_WQE_REACHED, qp->user, 0);
}

static void apply(struct sib_qp *qp, const struct sib_qp_attr *a, uint32_t m)
{
	struct sib_qp_attr *q = &qp->attr;

	if (m & SIB_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
	if (m & SIB_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (m & SIB_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (m & SIB_QP_PORT)
		q->port_num = a->port_num;
	if (m & SIB_QP_QKEY)
		q->qkey = a->qkey;
	if (m & SIB_QP_AV)
		q->ah_attr = a->ah_attr;
	if (m & SIB_QP_PATH_MTU)
		q->path_mtu = a->path_mtu;
	if (m & SIB_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (m & SIB_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (m & SIB_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	/* PSNs are 24 bits (IBA 9.3.1); wider values are masked, as the kernel does. */
	if (m & SIB_QP_RQ_PSN)
		q->rq_psn = a->rq_psn & 0xffffff;
	if (m & SIB_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (m & SIB_QP_ALT_PATH) {
		q->alt_ah_attr = a->alt_ah_attr;
		q->alt_pkey_index = a->alt_pkey_index;
		q->alt_port_num = a->alt_port_num;
		q->alt_timeout = a->alt_timeout;
	}
	if (m & SIB_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (m & SIB_QP_SQ_PSN)
		q->sq_psn = a->sq_psn & 0xffffff;
	if (m & SIB_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (m & SIB_QP_PATH_MIG_STATE)
		q->path_mig_state = a->path_mig_state;
	if (m & SIB_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
}

int sib_qp_modify(struct sib_qp *qp, const struct sib_qp_attr *attr, uint32_t mask,
		  const struct sib_qp_limits *lim, char *why, size_t why_len)
{
	struct sib_endpoint dest;
	bool resolved = false;
	int rc;

	if (qp->eng) /* what the port queued leaves under the old state */
		sib_engine_flush(qp->eng);

	/* Path -> endpoint before taking the lock: resolving may wait for the
	 * SA, whose answer the progress thread receives, up to its budget, so
	 * that the QP can accept its peer's first requests at once.  Past it,
	 * nothing is lost: the first send waits for the answer (engine.c,
	 * req_dest_known), and the peer's requests wait for it (recv.c). */
	if (qp->eng && (mask & SIB_QP_AV) && qp->type != SIB_QPT_UD) {
		int err = sib_engine_resolve(qp->eng, &attr->ah_attr, &dest);

		if (!err)
			resolved = true;
		else if (err != -ETIMEDOUT)
			sib_warn("modify_qp on QP 0x%06x: DLID 0x%04x is unknown to the subnet (%d); "
				 "the first post_send will look again",
				 qp->qp_num, attr->ah_attr.DLID, err);
	}
	sib_qp_lock(qp);
	enum sib_qp_state cur = qp->attr.qp_state;
	enum sib_qp_state next = (mask & SIB_QP_STATE) ? attr->qp_state : cur;

	rc = sib_qp_modify_check(qp->type, cur, next, mask, why, why_len);
	if (!rc)
		rc = sib_qp_attr_check(qp->type, cur, attr, mask, lim, why, why_len);
	if (rc)
		goto out;
	apply(qp, attr, mask);
	if (resolved) {
		qp->dest = dest;
		qp->dest_valid = true;
	}
	/* The data path starts from the PSNs the consumer gave (IBA 10.2.3). */
	if ((cur == SIB_QPS_RESET || cur == SIB_QPS_INIT) &&
	    (next == SIB_QPS_INIT || next == SIB_QPS_RTR))
		sib_qp_dp_reset(qp);
	if (cur == SIB_QPS_RTR && next == SIB_QPS_RTS) {
		qp->req.psn = qp->req.una_psn = qp->attr.sq_psn;
		qp->req.ackreq_psn = psn_add(qp->attr.sq_psn, SIB_PSN_MASK);
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_left = qp->attr.rnr_retry;
	}
	if (mask & SIB_QP_MAX_DEST_RD_ATOMIC)
		qp->resp.res_len = qp->attr.max_dest_rd_atomic > SIB_MAX_QP_RD_ATOM
					   ? SIB_MAX_QP_RD_ATOM
					   : qp->attr.max_dest_rd_atomic;
	switch (next) {
	case SIB_QPS_RESET:
		/* IBA 10.3.1.1: Reset drops every WQE without completions. */
		qp->sq.head = qp->sq.count = 0;
		qp->rq.head = qp->rq.count = 0;
		if (cur != SIB_QPS_RESET)
			clean_cqs(qp);
		qp->attr.qp_state = SIB_QPS_RESET;
		break;
	case SIB_QPS_ERR:
		sib_qp_enter_error_locked(qp);
		break;
	case SIB_QPS_SQD:
		/* IBA 10.3.1.4: SQD starts no new WQE and finishes those that
		 * began; the drain ends once every one of them is acknowledged
		 * (sib_qp_sqd_check, which the requester and completer call). */
		qp->attr.qp_state = SIB_QPS_SQD;
		if (cur == SIB_QPS_RTS) {
			qp->attr.sq_draining = 1;
			qp->sqd_notify = (mask & SIB_QP_EN_SQD_ASYNC_NOTIFY) &&
					 attr->en_sqd_async_notify;
			sib_qp_sqd_check(qp);
		}
		break;
	default:
		if (cur == SIB_QPS_SQD && next != SIB_QPS_SQD) {
			qp->attr.sq_draining = 0;
			qp->sqd_notify = false;
		}
		qp->attr.qp_state = next;
		break;
	}
out:
	sib_qp_unlock(qp);
	if (!rc && next == SIB_QPS_RTS && cur == SIB_QPS_SQD && qp->eng) {
		/* What waited in SQD starts now, from this thread. */
		sib_qp_kick(qp);
		sib_engine_flush(qp->eng);
	}
	return rc;
}

void sib_qp_query(struct sib_qp *qp, struct sib_qp_attr *attr)
{
	sib_qp_lock(qp);
	*attr = qp->attr;
	attr->cur_qp_state = qp->attr.qp_state;
	sib_qp_unlock(qp);
}

/* Which operations each service offers (IBA 9.4 / Table 38 opcodes). */
static bool opcode_allowed(enum sib_qp_type t, enum sib_wr_opcode op)
{
	switch (op) {
	case SIB_WR_SEND:
	case SIB_WR_SEND_WITH_IMM:
		return true;
	case SIB_WR_RDMA_WRITE:
	case SIB_WR_RDMA_WRITE_WITH_IMM:
	case SIB_WR_LOCAL_INV:
	case SIB_WR_BIND_MW:
		return t != SIB_QPT_UD;
	case SIB_WR_RDMA_READ:
	case SIB_WR_ATOMIC_CMP_AND_SWP:
	case SIB_WR_ATOMIC_FETCH_AND_ADD:
	case SIB_WR_SEND_WITH_INV:
	case SIB_WR_FLUSH:
	case SIB_WR_ATOMIC_WRITE:
		return t == SIB_QPT_RC || t == SIB_QPT_XRC_SEND;
	default:
		return false;
	}
}

static const char *const wr_names[SIB_WR_NUM] = {
	[SIB_WR_RDMA_WRITE] = "RDMA_WRITE",
	[SIB_WR_RDMA_WRITE_WITH_IMM] = "RDMA_WRITE_WITH_IMM",
	[SIB_WR_SEND] = "SEND",
	[SIB_WR_SEND_WITH_IMM] = "SEND_WITH_IMM",
	[SIB_WR_RDMA_READ] = "RDMA_READ",
	[SIB_WR_ATOMIC_CMP_AND_SWP] = "ATOMIC_CMP_AND_SWP",
	[SIB_WR_ATOMIC_FETCH_AND_ADD] = "ATOMIC_FETCH_AND_ADD",
	[SIB_WR_LOCAL_INV] = "LOCAL_INV",
	[SIB_WR_BIND_MW] = "BIND_MW",
	[SIB_WR_SEND_WITH_INV] = "SEND_WITH_INV",
	[SIB_WR_FLUSH] = "FLUSH",
	[SIB_WR_ATOMIC_WRITE] = "ATOMIC_WRITE",
};

static bool carries_inline(enum sib_wr_opcode op)
{
	return op == SIB_WR_SEND || op == SIB_WR_SEND_WITH_IMM || op == SIB_WR_SEND_WITH_INV ||
	       op == SIB_WR_RDMA_WRITE || op == SIB_WR_RDMA_WRITE_WITH_IMM;
}

/* A send error: RC-like QPs go to ERR, UC and UD to SQE (IBA 10.8.3.1). Lock held. */
static void send_error(struct sib_qp *qp)
{
	if (qp->type == SIB_QPT_UC || qp->type == SIB_QPT_UD) {
		qp->attr.qp_state = SIB_QPS_SQE;
		flush_sq(qp);
	} else {
		sib_qp_enter_error_locked(qp);
	}
}

/* Bind MW and Local Invalidate run at once, by the owner's executor.  Lock held. */
static void run_local(struct sib_qp *qp, const struct sib_send_wqe *w)
{
	enum sib_wc_status st = SIB_WC_LOC_QP_OP_ERR;

	if (qp->local_exec)
		st = qp->local_exec(qp->user, w);
	else
		sib_warn("post_send on QP 0x%06x: no executor for local work requests", qp->qp_num);
	if (st != SIB_WC_SUCCESS || (w->send_flags & SIB_SEND_SIGNALED) || qp->sq_sig_all)
		sib_qp_complete_send_locked(qp, w, st);
	if (st != SIB_WC_SUCCESS)
		send_error(qp);
}

int sib_qp_post_send(struct sib_qp *qp, const struct sib_send_wqe *wqe, const struct sib_sge *sge,
		     char *why, size_t why_len)
{
	int rc = 0;

	sib_qp_lock(qp);
	enum sib_qp_state s = qp->attr.qp_state;

	if (!has_sq(qp->type)) {
		snprintf(why, why_len, "an XRC_RECV QP has no send queue");
		rc = EINVAL;
	} else if (s == SIB_QPS_RESET || s == SIB_QPS_INIT || s == SIB_QPS_RTR) {
		snprintf(why, why_len, "QP is in %s, must be RTS", sib_qp_state_name(s));
		rc = EINVAL;
	} else if ((unsigned)wqe->opcode >= SIB_WR_NUM || !opcode_allowed(qp->type, wqe->opcode)) {
		if ((unsigned)wqe->opcode < SIB_WR_NUM && wr_names[wqe->opcode])
			snprintf(why, why_len, "opcode %s is not supported on %s",
				 wr_names[wqe->opcode], sib_qp_type_name(qp->type));
		else
			snprintf(why, why_len, "unknown opcode %d", (int)wqe->opcode);
		rc = EINVAL;
	} else if (wqe->num_sge > qp->sq.max_sge) {
		snprintf(why, why_len, "num_sge %u exceeds max_send_sge %u", wqe->num_sge,
			 qp->sq.max_sge);
		rc = EINVAL;
	} else if (sib_wq_full(&qp->sq)) {
		snprintf(why, why_len, "send queue is full (%u WQEs)", qp->sq.max_wr);
		rc = ENOMEM;
	}
	if (!rc && (wqe->send_flags & SIB_SEND_INLINE) && carries_inline(wqe->opcode)) {
		uint64_t len = 0;

		for (uint32_t i = 0; i < wqe->num_sge; i++)
			len += sge[i].length;
		if (len > qp->sq.max_inline) {
			snprintf(why, why_len, "inline data of %llu bytes exceeds max_inline_data %u",
				 (unsigned long long)len, qp->sq.max_inline);
			rc = EINVAL;
		}
	}
	if (rc)
		goto out;

	if ((wqe->send_flags & SIB_SEND_INLINE) && !carries_inline(wqe->opcode)) {
		/* Inline applies to the data an operation sends; others ignore the flag. */
		struct sib_send_wqe plain = *wqe;

		plain.send_flags &= ~(unsigned)SIB_SEND_INLINE;
		sib_wq_put_send(&qp->sq, &plain, sge);
	} else {
		sib_wq_put_send(&qp->sq, wqe, sge);
	}
	struct sib_send_wqe *w = sib_wq_at(&qp->sq, qp->sq.count - 1);

	memset(sq_req(qp, qp->sq.count - 1), 0, sizeof(struct sib_req_wqe));

	if (s == SIB_QPS_ERR || s == SIB_QPS_SQE) {
		/* IBA 10.3.1.6/7: WRs posted in Error (or to an errored SQ) are flushed. */
		flush_sq(qp);
	} else if (w->opcode == SIB_WR_BIND_MW || w->opcode == SIB_WR_LOCAL_INV) {
		struct sib_send_wqe copy = *w;

		/* Only this WQE: remote ones before it stay for the data path. */
		qp->sq.count--;
		run_local(qp, &copy);
	}
	/* Remote operations stay outstanding for the requester (next issue). */
out:
	sib_qp_unlock(qp);
	return rc;
}

int sib_qp_post_recv(struct sib_qp *qp, uint64_t wr_id, const struct sib_sge *sge,
		     uint32_t num_sge, char *why, size_t why_len)
{
	int rc = 0;

	sib_qp_lock(qp);
	if (qp->srq) {
		snprintf(why, why_len, "QP receives from an SRQ: use ibv_post_srq_recv");
		rc = EINVAL;
	} else if (!has_rq(qp->type)) {
		snprintf(why, why_len, "an %s QP has no receive queue", sib_qp_type_name(qp->type));
		rc = EINVAL;
	} else if (qp->attr.qp_state == SIB_QPS_RESET) {
		snprintf(why, why_len, "QP is in RESET");
		rc = EINVAL;
	} else if (num_sge > qp->rq.max_sge) {
		snprintf(why, why_len, "num_sge %u exceeds max_recv_sge %u", num_sge, qp->rq.max_sge);
		rc = EINVAL;
	} else if (sib_wq_full(&qp->rq)) {
		snprintf(why, why_len, "receive queue is full (%u WQEs)", qp->rq.max_wr);
		rc = ENOMEM;
	} else {
		sib_wq_put_recv(&qp->rq, wr_id, sge, num_sge);
		if (qp->attr.qp_state == SIB_QPS_ERR)
			flush_rq(qp);
	}
	sib_qp_unlock(qp);
	return rc;
}

uint32_t sib_qp_sq_count(struct sib_qp *qp)
{
	uint32_t n;

	sib_qp_lock(qp);
	n = qp->sq.count;
	sib_qp_unlock(qp);
	return n;
}

uint32_t sib_qp_rq_count(struct sib_qp *qp)
{
	uint32_t n;

	sib_qp_lock(qp);
	n = qp->rq.count;
	sib_qp_unlock(qp);
	return n;
}

void sib_qp_set_error(struct sib_qp *qp)
{
	sib_qp_lock(qp);
	sib_qp_enter_error_locked(qp);
	sib_qp_unlock(qp);
	sib_event_raise(qp->sink, SIB_EV_QP_FATAL, qp->user, 0);
}

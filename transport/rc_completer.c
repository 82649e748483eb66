/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RC completer (IBA Vol 1 9.7.5.1 / 9.7.6): ACKs, NAKs, read responses
 * and atomic ACKs turn outstanding WQEs into completions, in order.  An ACK
 * of PSN p acknowledges every request up to p (coalescing, 9.7.5.1.1); a
 * read response or atomic ACK implicitly acknowledges what came before it.
 * Sequence-error NAKs and lost read responses restart the requester at a
 * PSN (go-back-N); RNR NAKs wait the timer the responder asked for; the
 * other NAKs end the QP with the matching completion status.
 */
#include <string.h>

#include "base/log.h"
#include "transport/qp_impl.h"
#include "transport/req_common.h"

void sib_rc_comp_advance(struct sib_qp *qp)
{
	struct sib_req *q = &qp->req;

	while (qp->sq.count) {
		struct sib_send_wqe *w = sq_wqe(qp, 0);
		struct sib_req_wqe *r = sq_req(qp, 0);

		if (r->local_err) {
			enum sib_wc_status st = (enum sib_wc_status)r->local_err;

			sib_qp_complete_send_locked(qp, w, st);
			sib_wq_pop(&qp->sq);
			if (q->cur)
				q->cur--;
			sib_qp_enter_error_locked(qp);
			return;
		}
		if (!r->done)
			break;
		/* A completed WQE is acknowledged, whichever answer said so. */
		if (psn_diff(q->una_psn, r->last_psn) <= 0)
			q->una_psn = psn_add(r->last_psn, 1);
		/* Go-back-N may have rewound req.psn into this WQE and a late
		 * answer completed it before it was resent: the next WQE keeps
		 * the PSN it had, after this one (a retried request carries its
		 * original PSN, IBA 9.7.6.1). */
		if (!q->cur && psn_diff(q->psn, r->last_psn) <= 0)
			q->psn = psn_add(r->last_psn, 1);
		if (qp->sq_sig_all || (w->send_flags & SIB_SEND_SIGNALED))
			sib_qp_complete_send_locked(qp, w, SIB_WC_SUCCESS);
		sib_wq_pop(&qp->sq);
		if (q->cur)
			q->cur--;
		else
			q->cur_off = 0;
	}
}

/*
 * Everything through psn is acknowledged (IBA 9.7.5.1.1).  Returns false
 * when that ended the QP (an unanswered READ / atomic out of retries).
 */
static bool ack_through(struct sib_qp *qp, uint32_t psn)
{
	struct sib_req *q = &qp->req;
	uint32_t old_una = q->una_psn;
	int32_t lost_read = -1;
	bool resent = false;

	if (psn_diff(psn, q->una_psn) < 0 || psn_diff(psn, sib_rc_sent_end(qp)) >= 0)
		return true; /* old, or for something never sent */
	/* Beyond what go-back-N has sent again: the rest is acknowledged when
	 * it is resent (its WQEs start over, and READs must be answered). */
	if (psn_diff(psn, q->psn) >= 0)
		psn = psn_add(q->psn, SIB_PSN_MASK);
	if (psn_diff(psn, q->una_psn) < 0)
		return true;
	for (uint32_t i = 0; i <= q->cur && i < qp->sq.count; i++) {
		struct sib_send_wqe *w = sq_wqe(qp, i);
		struct sib_req_wqe *r = sq_req(qp, i);

		if (!r->started || r->done || psn_diff(r->first_psn, psn) > 0)
			break;
		if (!sib_wr_is_rd_atomic(w->opcode)) {
			if (psn_diff(r->last_psn, psn) <= 0)
				r->done = true;
		} else if (psn_diff(r->last_psn, psn) <= 0) {
			/* Acknowledged through this READ / atomic (a later request, or
			 * a NAK at the next PSN) but not answered: its responses were
			 * lost (IBA 9.7.5.1.2, 9.7.6.1.5).  It and everything after it
			 * stay unacknowledged: the retry starts there. */
			lost_read = (int32_t)i;
			psn = psn_add(sq_req(qp, i)->rsp_psn, SIB_PSN_MASK);
			break;
		}
	}
	if (psn_diff(psn, q->una_psn) >= 0) {
		sib_rc_window_grow(qp, (uint32_t)psn_diff(psn, q->una_psn) + 1);
		q->una_psn = psn_add(psn, 1);
	}
	/* Forward progress: a new retry budget (IBA 9.7.6.1.3).  An ACK that
	 * only says a READ / atomic went unanswered is none. */
	if (q->una_psn != old_una) {
		q->retry_left = qp->attr.retry_cnt;
		q->rnr_left = qp->attr.rnr_retry;
	}
	if (lost_read >= 0) {
		struct sib_req_wqe *r = sq_req(qp, (uint32_t)lost_read);

		/*
		 * Asking again costs a retry, as a local ACK timeout does
		 * (IBA 9.7.6.1.3): a responder that never answers ends in
		 * RETRY_EXC_ERR instead of a resend loop.  Once per missing
		 * response (gap_psn, shared with read_response): the ACKs
		 * already on their way each say the same, and the ACK timer
		 * covers a resend that is lost too.
		 */
		if (!(q->gap_asked && q->gap_psn == r->rsp_psn)) {
			if (!q->retry_left) {
				sib_rc_comp_advance(qp);
				sib_rc_req_fail_head(qp, SIB_WC_RETRY_EXC_ERR,
						     "no response to a READ or atomic after retry_cnt "
						     "retries (lost response, IBA 9.7.5.1.2 / "
						     "9.7.6.1.3)");
				return false;
			}
			q->retry_left--;
			q->gap_asked = true;
			q->gap_psn = r->rsp_psn;
			sib_rc_req_retry(qp, r->rsp_psn);
			resent = true;
		}
	}
	/* Restarted only by progress or a resend: ACKs that repeat an
	 * unanswered READ must not keep the timer from firing. */
	sib_rc_arm_rto(qp, q->una_psn != old_una || resent);
	return true;
}

/* The oldest READ / atomic still waiting for its answer. */
static int32_t oldest_rd(struct sib_qp *qp, bool atomic)
{
	for (uint32_t i = 0; i <= qp->req.cur && i < qp->sq.count; i++) {
		struct sib_send_wqe *w = sq_wqe(qp, i);
		struct sib_req_wqe *r = sq_req(qp, i);

		if (!r->started)
			break;
		if (!sib_wr_is_rd_atomic(w->opcode) || r->done)
			continue;
		if (sib_wr_is_atomic(w->opcode) == atomic)
			return (int32_t)i;
		return -1; /* answers come in order: a different kind is older */
	}
	return -1;
}

static void read_response(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct sib_req *q = &qp->req;
	int32_t i = oldest_rd(qp, false);
	unsigned mtu = sib_qp_mtu(qp);

	if (i < 0)
		return;
	struct sib_send_wqe *w = sq_wqe(qp, (uint32_t)i);
	struct sib_req_wqe *r = sq_req(qp, (uint32_t)i);
	uint32_t psn = pkt->bth.PSN;

	if (psn_diff(psn, r->first_psn) < 0 || psn_diff(psn, r->last_psn) > 0)
		return; /* not ours: a stale duplicate */
	if (psn != r->rsp_psn) {
		/* A response is missing: ask again from it, once (the responses
		 * already on their way would each ask again otherwise; a lost
		 * request is the ACK timer's). */
		if (psn_diff(psn, r->rsp_psn) > 0 && !(q->gap_asked && q->gap_psn == r->rsp_psn)) {
			q->gap_asked = true;
			q->gap_psn = r->rsp_psn;
			sib_rc_req_retry(qp, r->rsp_psn);
			sib_rc_req_run(qp);
		}
		return;
	}
	uint64_t off = (uint64_t)psn_diff(psn, r->first_psn) * mtu;
	bool last = psn == r->last_psn;
	/* FLUSH and ATOMIC WRITE are answered with no payload (IBA 1.5). */
	uint64_t len = w->opcode == SIB_WR_RDMA_READ ? w->length : 0;
	uint64_t expect = last ? len - off : mtu;

	if (pkt->payload_len != expect) {
		sib_rc_req_fail_head(qp, SIB_WC_BAD_RESP_ERR,
				     "read response of the wrong length (IBA 9.7.5.1.3)");
		return;
	}
	/* The first response acknowledges everything before the READ. */
	if (psn == r->first_psn && !ack_through(qp, psn_add(r->first_psn, SIB_PSN_MASK)))
		return;
	if (pkt->payload_len) {
		struct memreg_request bad;
		struct memreg_grant g;
		enum memreg_verdict v =
			sib_sge_copy(qp, qp->pd, w->sge, w->num_sge, off, (uint8_t *)pkt->payload,
				     pkt->payload_len, true, &bad, &g);

		if (v != MEMREG_OK) {
			sib_log_access(qp, "RDMA READ response", &bad, v, &g);
			r->local_err = v == MEMREG_OUT_OF_BOUNDS && !bad.key ? SIB_WC_LOC_LEN_ERR
									     : SIB_WC_LOC_PROT_ERR;
			sib_rc_comp_advance(qp);
			return;
		}
	}
	r->rsp_psn = psn_add(psn, 1);
	/* Each response in order acknowledges its own PSN too: forward
	 * progress, so a new retry budget (IBA 9.7.6.1.3). */
	if (psn_diff(psn, q->una_psn) >= 0) {
		sib_rc_window_grow(qp, (uint32_t)psn_diff(psn, q->una_psn) + 1);
		q->una_psn = psn_add(psn, 1);
	}
	q->retry_left = qp->attr.retry_cnt;
	if (last) {
		r->done = true;
		if (psn_diff(q->una_psn, psn) <= 0)
			q->una_psn = psn_add(psn, 1);
		q->retry_left = qp->attr.retry_cnt;
		sib_rc_arm_rto(qp, true);
	} else {
		sib_rc_arm_rto(qp, true);
	}
}

static void atomic_ack(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct sib_req *q = &qp->req;
	int32_t i = oldest_rd(qp, true);

	if (i < 0)
		return;
	struct sib_send_wqe *w = sq_wqe(qp, (uint32_t)i);
	struct sib_req_wqe *r = sq_req(qp, (uint32_t)i);

	if (pkt->bth.PSN != r->first_psn)
		return;
	if (!ack_through(qp, psn_add(r->first_psn, SIB_PSN_MASK)))
		return;
	uint64_t orig = pkt->atomicacketh.OrigRemDt;
	struct memreg_request bad;
	struct memreg_grant g;
	enum memreg_verdict v = sib_sge_copy(qp, qp->pd, w->sge, w->num_sge, 0, (uint8_t *)&orig,
					     8, true, &bad, &g);

	if (v != MEMREG_OK) {
		sib_log_access(qp, "atomic result", &bad, v, &g);
		r->local_err = SIB_WC_LOC_PROT_ERR;
		return;
	}
	r->done = true;
	if (psn_diff(q->una_psn, r->first_psn) <= 0)
		q->una_psn = psn_add(r->first_psn, 1);
	sib_rc_arm_rto(qp, true);
}

static enum sib_wc_status nak_status(uint8_t code)
{
	switch (code) {
	case IB_NAK_INVALID_REQUEST:
		return SIB_WC_REM_INV_REQ_ERR;
	case IB_NAK_REMOTE_ACCESS_ERR:
		return SIB_WC_REM_ACCESS_ERR;
	case IB_NAK_REMOTE_OP_ERR:
		return SIB_WC_REM_OP_ERR;
	case IB_NAK_INVALID_RD_REQUEST:
		return SIB_WC_REM_INV_RD_REQ_ERR;
	default:
		return SIB_WC_BAD_RESP_ERR;
	}
}

static const char *nak_rule(uint8_t code)
{
	switch (code) {
	case IB_NAK_INVALID_REQUEST:
		return "the responder NAKed it: invalid request (IBA 9.7.5.2.2)";
	case IB_NAK_REMOTE_ACCESS_ERR:
		return "the responder NAKed it: remote access error, R_Key, bounds, rights "
		       "or an unmapped ODP page (IBA 9.7.5.2.4)";
	case IB_NAK_REMOTE_OP_ERR:
		return "the responder NAKed it: remote operational error (IBA 9.7.5.2.5)";
	default:
		return "the responder sent an unknown NAK code";
	}
}

static void acknowledge(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct sib_req *q = &qp->req;
	uint32_t psn = pkt->bth.PSN;
	uint8_t syn = pkt->aeth.Syndrome;
	uint8_t val = ib_aeth_value(syn);

	switch (ib_aeth_kind(syn)) {
	case IB_AETH_ACK:
		ack_through(qp, psn);
		break;
	case IB_AETH_RNR_NAK:
		if (psn_diff(psn, q->una_psn) < 0 || psn_diff(psn, sib_rc_sent_end(qp)) >= 0)
			return;
		if (!ack_through(qp, psn_add(psn, SIB_PSN_MASK)))
			return;
		sib_rc_comp_advance(qp);
		/* IBA 9.7.5.2.8: rnr_retry 7 retries forever. */
		if (q->rnr_left == 0) {
			sib_rc_req_fail_head(qp, SIB_WC_RNR_RETRY_EXC_ERR,
					     "the responder had no receive WQE after rnr_retry "
					     "retries (RNR NAK, IBA 9.7.5.2.8)");
			return;
		}
		if (q->rnr_left != 7)
			q->rnr_left--;
		/* From psn, or from an earlier READ / atomic whose answer was lost. */
		sib_rc_req_retry(qp, q->una_psn);
		q->rnr_wait = true;
		q->rnr_deadline = sib_engine_now(qp->eng) + sib_rnr_timer_ns(val);
		q->rto_deadline = 0;
		sib_engine_want_tick(qp->eng, q->rnr_deadline);
		return;
	case IB_AETH_NAK:
		if (psn_diff(psn, q->una_psn) < 0 || psn_diff(psn, sib_rc_sent_end(qp)) >= 0)
			return;
		if (!ack_through(qp, psn_add(psn, SIB_PSN_MASK)))
			return;
		sib_rc_comp_advance(qp);
		if (val == IB_NAK_PSN_SEQ_ERR) {
			/* IBA 9.7.5.2.1: resend from the PSN the responder expects,
			 * or from an earlier READ / atomic whose answer was lost. */
			sib_rc_req_retry(qp, q->una_psn);
			break;
		}
		sib_rc_req_fail_head(qp, nak_status(val), nak_rule(val));
		return;
	default:
		return;
	}
}

void sib_rc_comp_rx(struct sib_qp *qp, const struct ib_packet *pkt)
{
	const struct ib_opcode_info *op = pkt->op;

	if (op->flags & IB_OPF_READ)
		read_response(qp, pkt);
	else if (op->flags & IB_OPF_ATOMIC)
		atomic_ack(qp, pkt);
	else if (op->flags & IB_OPF_ACK)
		acknowledge(qp, pkt);
	if (qp->attr.qp_state == SIB_QPS_ERR)
		return;
	sib_rc_comp_advance(qp);
	sib_rc_req_run(qp);
}

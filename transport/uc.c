/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Unreliable Connected (IBA Vol 1 9.8.3 / 9.8.4): SEND and RDMA WRITE,
 * with and without immediate, segmented like RC but never acknowledged.
 * A WQE completes once its last packet is on the wire.  The responder
 * checks the PSN of every packet; a gap drops the rest of the message in
 * progress silently, and reception resumes with the next First or Only.
 */
#include <string.h>

#include "base/log.h"
#include "transport/qp_impl.h"
#include "transport/req_common.h"

void sib_uc_req_run(struct sib_qp *qp)
{
	struct sib_req *q = &qp->req;
	unsigned mtu = sib_qp_mtu(qp);

	q->tx_blocked = false;
	while (qp->sq.count) {
		struct sib_send_wqe *w = sq_wqe(qp, 0);
		struct sib_req_wqe *r = sq_req(qp, 0);

		if (!r->started) {
			enum sib_wc_status st;

			if (!sib_qp_may_start(qp))
				break; /* SQD: only what began goes on */
			st = sib_req_precheck(qp, w);

			if (st != SIB_WC_SUCCESS) {
				/* IBA 10.8.3.1: a UC send error moves the QP to SQE. */
				sib_qp_complete_send_locked(qp, w, st);
				sib_wq_pop(&qp->sq);
				qp->attr.qp_state = SIB_QPS_SQE;
				while (qp->sq.count) {
					sib_qp_complete_send_locked(qp, sq_wqe(qp, 0),
								    SIB_WC_WR_FLUSH_ERR);
					sib_wq_pop(&qp->sq);
				}
				return;
			}
			r->started = r->begun = true;
			q->cur_off = 0;
		}
		for (;;) {
			int rc = sib_req_send_segment(qp, w, IB_TRANSPORT_UC, q->psn, q->cur_off,
						      mtu, false);

			if (rc < 0) {
				/* No buffer now: the tick continues. */
				q->tx_blocked = true;
				sib_engine_want_tick(qp->eng, sib_engine_now(qp->eng));
				return;
			}
			if (rc > 0) {
				sib_qp_complete_send_locked(qp, w, (enum sib_wc_status)rc);
				sib_wq_pop(&qp->sq);
				qp->attr.qp_state = SIB_QPS_SQE;
				return;
			}
			q->psn = psn_add(q->psn, 1);
			q->cur_off += mtu;
			if (q->cur_off >= w->length)
				break;
		}
		if (qp->sq_sig_all || (w->send_flags & SIB_SEND_SIGNALED))
			sib_qp_complete_send_locked(qp, w, SIB_WC_SUCCESS);
		sib_wq_pop(&qp->sq);
		q->cur_off = 0;
	}
}

/* Forget the message in progress (IBA 9.8.4: its receive WQE is reused). */
static void uc_forget(struct sib_qp *qp)
{
	qp->resp.kind = SIB_MSG_NONE;
	qp->resp.off = 0;
	qp->resp.uc_drop = true;
}

/* The same, for a packet the message cannot take, saying why. */
static void uc_abandon(struct sib_qp *qp, const struct ib_packet *pkt, const char *why)
{
	sib_dbg("rx UC QP 0x%06x: %s PSN 0x%06x: %s; the message is lost (IBA 9.8.4)",
		qp->qp_num, pkt->op->name, pkt->bth.PSN, why);
	uc_forget(qp);
}

void sib_uc_resp_rx(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct sib_resp *r = &qp->resp;
	uint32_t f = pkt->op->flags;
	unsigned mtu = sib_qp_mtu(qp);
	bool starts = (f & IB_OPF_FIRST) != 0;

	if (pkt->bth.PSN != r->epsn) {
		sib_dbg("rx UC QP 0x%06x: %s PSN 0x%06x, expected 0x%06x: out of sequence%s "
			"(IBA 9.8.4)",
			qp->qp_num, pkt->op->name, pkt->bth.PSN, r->epsn,
			r->kind != SIB_MSG_NONE ? "; the message in progress is lost" : "");
		uc_forget(qp);
	}
	r->epsn = psn_add(pkt->bth.PSN, 1);
	if (r->uc_drop) {
		if (!starts) {
			sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->rx_uc_dropped);
			sib_dbg("rx UC QP 0x%06x: %s PSN 0x%06x of a lost message, dropped",
				qp->qp_num, pkt->op->name, pkt->bth.PSN);
			return;
		}
		r->uc_drop = false;
	}
	if (starts && r->kind != SIB_MSG_NONE) {
		/* A new message replaces the unfinished one. */
		r->kind = SIB_MSG_NONE;
		r->off = 0;
	}
	if (!starts && r->kind == SIB_MSG_NONE) {
		sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->rx_uc_dropped);
		sib_dbg("rx UC QP 0x%06x: %s PSN 0x%06x with no message in progress, dropped",
			qp->qp_num, pkt->op->name, pkt->bth.PSN);
		return;
	}
	if ((!(f & IB_OPF_LAST) && pkt->payload_len != mtu) || pkt->payload_len > mtu) {
		uc_abandon(qp, pkt, "its payload does not fit the path MTU");
		return;
	}
	if (f & IB_OPF_WRITE) {
		struct memreg_table *t = sib_engine_memreg(qp->eng);

		if (pkt->headers & IB_HDRBIT(IB_HDR_RETH)) {
			r->va = pkt->reth.VA;
			r->rkey = pkt->reth.R_Key;
			r->remaining = pkt->reth.DMALen;
			r->off = 0;
		}
		if (pkt->payload_len > r->remaining ||
		    ((f & IB_OPF_LAST) && pkt->payload_len != r->remaining)) {
			uc_abandon(qp, pkt, "its length disagrees with the RETH's DMA length");
			return;
		}
		if ((f & IB_OPF_IMM) && !r->have_wqe && !sib_recv_take(qp)) {
			/* UC has no RNR */
			uc_abandon(qp, pkt, "no receive WQE is posted");
			return;
		}
		/* Only bytes are checked: a zero-length WRITE's R_Key and VA are
		 * not (IBA C9-88, as on RC). */
		if (pkt->payload_len) {
			struct memreg_request req = {
				.key = r->rkey,
				.remote = true,
				.pd = qp->pd,
				.qpn = qp->qp_num,
				.va = r->va,
				.len = pkt->payload_len,
				.access = MEMREG_ACCESS_REMOTE_WRITE,
			};
			struct memreg_grant g;
			enum memreg_verdict v = memreg_check(t, &req, &g);

			if (v == MEMREG_OK) {
				v = memreg_grant_write(&g, 0, pkt->payload, pkt->payload_len);
				memreg_release(t, &g);
			}
			if (v != MEMREG_OK) {
				/* UC: no NAK; the message is dropped (IBA 9.8.4 / 9.7.5.2.4). */
				sib_log_access(qp, "incoming UC RDMA WRITE", &req, v, &g);
				uc_abandon(qp, pkt, "the R_Key does not allow the WRITE");
				return;
			}
		}
		r->va += pkt->payload_len;
		r->remaining -= pkt->payload_len;
		r->off += pkt->payload_len;
		r->kind = SIB_MSG_WRITE;
	} else {
		if (starts && !r->have_wqe && !sib_recv_take(qp)) {
			uc_abandon(qp, pkt, "no receive WQE is posted");
			return;
		}
		if (starts)
			r->off = 0;
		if (pkt->payload_len) {
			struct memreg_request bad;
			struct memreg_grant g;
			enum memreg_verdict v = sib_sge_copy(qp, r->wqe_pd, r->sge, r->wqe.num_sge,
							     r->off, (uint8_t *)pkt->payload,
							     pkt->payload_len, true, &bad, &g);

			if (v != MEMREG_OK) {
				struct sib_cqe c = {
					.status = (v == MEMREG_OUT_OF_BOUNDS && !bad.key)
							  ? SIB_WC_LOC_LEN_ERR
							  : SIB_WC_LOC_PROT_ERR,
					.opcode = SIB_WC_RECV,
					.src_qp = qp->attr.dest_qp_num,
				};

				sib_log_access(qp, "incoming UC SEND", &bad, v, &g);
				r->have_wqe = false;
				sib_recv_complete(qp, &r->wqe, &c, false);
				uc_abandon(qp, pkt, "the receive WQE cannot take it");
				return;
			}
		}
		r->off += pkt->payload_len;
		r->kind = SIB_MSG_SEND;
	}
	if (!(f & IB_OPF_LAST))
		return;
	r->kind = SIB_MSG_NONE;
	if ((f & IB_OPF_WRITE) && !(f & IB_OPF_IMM))
		return;
	struct sib_cqe c = {
		.status = SIB_WC_SUCCESS,
		.opcode = (f & IB_OPF_WRITE) ? SIB_WC_RECV_RDMA_WITH_IMM : SIB_WC_RECV,
		.byte_len = (uint32_t)r->off,
		.src_qp = qp->attr.dest_qp_num,
		.slid = pkt->lrh.SLID,
		.sl = pkt->lrh.SL,
	};

	if (f & IB_OPF_IMM) {
		c.wc_flags |= SIB_WC_WITH_IMM;
		c.imm_data = __builtin_bswap32(pkt->immdt.ImmDt);
	}
	r->have_wqe = false;
	r->msn++;
	sib_recv_complete(qp, &r->wqe, &c, pkt->bth.SE);
}

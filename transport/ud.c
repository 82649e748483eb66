/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Unreliable Datagram (IBA Vol 1 9.8.2): one SEND Only packet per WQE, at
 * most one path MTU, with a DETH naming the Q_Key and the source QP.  The
 * receiver places the 40-byte GRH area first in every receive buffer
 * (IBA 11.4.1.1: filled with the GRH when the packet had one, IBV_WC_GRH)
 * and the payload after it.  No ACKs; a datagram finding no receive WQE is
 * dropped.
 */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "transport/mcast.h"
#include "transport/qp_impl.h"
#include "transport/req_common.h"

/* One sealed multicast packet, copied to each member port (mcast.h). */
struct mc_tx {
	struct sib_qp *qp;
	struct sib_link *link;
	const uint8_t *pkt;
	size_t len;
};

static void mc_tx_copy(void *arg, const struct sib_endpoint *dst)
{
	struct mc_tx *t = arg;
	size_t cap;
	uint8_t *b = sib_link_tx_alloc(t->link, &cap);

	if (!b) { /* every buffer queued: hand them to the kernel, try once more */
		sib_link_flush(t->link);
		b = sib_link_tx_alloc(t->link, &cap);
	}
	if (!b) {
		sib_dbg("multicast: no send buffer for one member port, that copy is lost");
		return; /* unreliable datagram: a lost copy is a lost packet */
	}
	memcpy(b, t->pkt, t->len);
	sib_link_tx_commit(t->link, b, t->len, dst);
	sib_engine_count(t->qp->eng, &sib_engine_ctrs(t->qp->eng)->tx_mcast);
}

/* A switch would fan the packet out to the MLID's ports; softib's sender
 * does, from the one packet it built (IBA 10.5.2.x). */
static void ud_commit_mcast(struct sib_qp *qp, uint8_t *buf, size_t hdr_len, uint32_t n,
			    uint16_t mlid)
{
	struct mc_tx t = { .qp = qp, .link = sib_engine_link(qp->eng), .pkt = buf };

	t.len = ib_packet_seal(buf, hdr_len, n);
	sib_mcast_for_each_dest(qp->eng, mlid, mc_tx_copy, &t);
	sib_link_tx_abort(t.link, buf);
}

/* ud_send_one: the SA has not answered where the DLID lives yet. */
#define UD_WAIT_PATH (-2)

/*
 * The datagram's destination: the AH's, or, when the SA had not answered by
 * the time of the post, what the SA client knows now (a verb never waits on
 * the SA: engine.h).  Datagrams wait on the send queue for the answer (the
 * SA client asks again while they do, mgmt/sa_client.h), so a starved SM
 * delays them instead of losing them.
 */
static int ud_dest(struct sib_qp *qp, const struct sib_send_wqe *w, struct sib_endpoint *dest)
{
	*dest = w->ud.dest;
	if (dest->family || sib_lid_is_multicast(w->ud.av.DLID))
		return 0;
	return sib_engine_resolve_nowait(qp->eng, &w->ud.av, dest);
}

static int ud_send_one(struct sib_qp *qp, const struct sib_send_wqe *w)
{
	bool imm = w->opcode == SIB_WR_SEND_WITH_IMM;
	struct ib_packet pkt;
	struct sib_endpoint dest;
	uint8_t *buf, *payload;
	size_t hdr_len;
	uint32_t n = (uint32_t)w->length;
	int err = ud_dest(qp, w, &dest);

	if (err == -EAGAIN)
		return UD_WAIT_PATH;
	if (err) {
		/* No port has that LID (or no SM to ask): the datagram is lost,
		 * as a fabric loses one to a LID nobody has; the WQE completes. */
		sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->tx_ud_no_path);
		sib_dbg("UD QP 0x%06x: DLID 0x%04x: no port has it (%d); datagram lost",
			qp->qp_num, w->ud.av.DLID, err);
		return 0;
	}

	sib_tx_headers(qp, &w->ud.av, &pkt);
	pkt.bth.OpCode = IB_OPCODE(IB_TRANSPORT_UD, imm ? IB_OP_SEND_ONLY_IMM : IB_OP_SEND_ONLY);
	pkt.bth.DestQP = w->ud.remote_qpn & SIB_QPN_MASK;
	pkt.bth.PSN = qp->req.psn;
	pkt.bth.SE = (w->send_flags & SIB_SEND_SOLICITED) != 0;
	/* IBA 10.2.5 / C10-15: a WR Q_Key with the high bit set means "use the QP's". */
	pkt.deth.Q_Key = (w->ud.remote_qkey & 0x80000000u) ? qp->attr.qkey : w->ud.remote_qkey;
	pkt.deth.SrcQP = qp->qp_num;
	if (imm)
		pkt.immdt.ImmDt = __builtin_bswap32(w->imm_data);
	buf = sib_tx_alloc(qp, &pkt, n, &payload, &hdr_len);
	if (!buf)
		return -1;
	if (w->send_flags & SIB_SEND_INLINE) {
		memcpy(payload, w->inline_data, n);
	} else if (n) {
		struct memreg_request bad;
		struct memreg_grant g;
		enum memreg_verdict v = sib_sge_copy(qp, qp->pd, w->sge, w->num_sge, 0, payload, n,
						     false, &bad, &g);

		if (v != MEMREG_OK) {
			sib_link_tx_abort(sib_engine_link(qp->eng), buf);
			sib_log_access(qp, "UD send SGE", &bad, v, &g);
			return SIB_WC_LOC_PROT_ERR;
		}
	}
	if (sib_lid_is_multicast(w->ud.av.DLID))
		ud_commit_mcast(qp, buf, hdr_len, n, w->ud.av.DLID);
	else
		sib_tx_commit(qp, buf, hdr_len, n, &dest);
	qp->req.psn = psn_add(qp->req.psn, 1);
	return 0;
}

void sib_ud_req_run(struct sib_qp *qp)
{
	unsigned mtu = sib_qp_mtu(qp);

	qp->req.tx_blocked = false;
	qp->req.path_deadline = 0;
	/* SQD: a datagram is one packet, so nothing has begun. */
	while (qp->sq.count && sib_qp_may_start(qp)) {
		struct sib_send_wqe *w = sq_wqe(qp, 0);
		int rc;

		if (w->length > mtu) {
			sib_warn("post_send on UD QP 0x%06x: %llu bytes exceed the path MTU %u "
				 "(IBA 9.8.2: one packet per datagram)",
				 qp->qp_num, (unsigned long long)w->length, mtu);
			rc = SIB_WC_LOC_LEN_ERR;
		} else {
			rc = ud_send_one(qp, w);
		}
		if (rc == UD_WAIT_PATH) {
			/* Looks at the SA client's cache again in a moment. */
			qp->req.path_deadline = sib_engine_now(qp->eng) + SIB_PATH_POLL_NS;
			sib_engine_want_tick(qp->eng, qp->req.path_deadline);
			return;
		}
		if (rc < 0) {
			qp->req.tx_blocked = true;
			sib_engine_want_tick(qp->eng, sib_engine_now(qp->eng));
			return;
		}
		if (rc > 0) {
			/* IBA 10.8.3.1: UD send errors move the QP to SQE. */
			sib_qp_complete_send_locked(qp, w, (enum sib_wc_status)rc);
			sib_wq_pop(&qp->sq);
			qp->attr.qp_state = SIB_QPS_SQE;
			while (qp->sq.count) {
				sib_qp_complete_send_locked(qp, sq_wqe(qp, 0), SIB_WC_WR_FLUSH_ERR);
				sib_wq_pop(&qp->sq);
			}
			return;
		}
		if (qp->sq_sig_all || (w->send_flags & SIB_SEND_SIGNALED))
			sib_qp_complete_send_locked(qp, w, SIB_WC_SUCCESS);
		sib_wq_pop(&qp->sq);
	}
}

void sib_ud_resp_rx(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct sib_resp *r = &qp->resp;
	uint8_t grh[IB_GRH_BYTES];
	struct memreg_request bad;
	struct memreg_grant g;
	enum memreg_verdict v = MEMREG_OK;

	if (!(pkt->op->flags & IB_OPF_SEND) || !(pkt->op->flags & IB_OPF_ONLY))
		return;
	if (!sib_recv_take(qp)) {
		sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->rx_ud_no_wqe);
		return;
	}
	if (pkt->has_grh) {
		ib_grh_encode(&pkt->grh, grh);
		v = sib_sge_copy(qp, r->wqe_pd, r->sge, r->wqe.num_sge, 0, grh, IB_GRH_BYTES, true,
				 &bad, &g);
	} else if (r->wqe.length < IB_GRH_BYTES) {
		v = MEMREG_OUT_OF_BOUNDS;
		bad = (struct memreg_request){ .key = 0, .len = IB_GRH_BYTES - r->wqe.length };
	}
	if (v == MEMREG_OK && pkt->payload_len)
		v = sib_sge_copy(qp, r->wqe_pd, r->sge, r->wqe.num_sge, IB_GRH_BYTES,
				 (uint8_t *)pkt->payload, pkt->payload_len, true, &bad, &g);

	struct sib_cqe c = {
		.status = SIB_WC_SUCCESS,
		.opcode = SIB_WC_RECV,
		.byte_len = IB_GRH_BYTES + pkt->payload_len,
		.src_qp = pkt->deth.SrcQP,
		.slid = pkt->lrh.SLID,
		.sl = pkt->lrh.SL,
		.wc_flags = pkt->has_grh ? SIB_WC_GRH : 0,
	};

	if (v != MEMREG_OK) {
		sib_log_access(qp, "incoming UD SEND", &bad, v, &g);
		c.status = v == MEMREG_OUT_OF_BOUNDS && !bad.key ? SIB_WC_LOC_LEN_ERR
								 : SIB_WC_LOC_PROT_ERR;
		c.byte_len = 0;
	}
	if (pkt->op->flags & IB_OPF_IMM) {
		c.wc_flags |= SIB_WC_WITH_IMM;
		c.imm_data = __builtin_bswap32(pkt->immdt.ImmDt);
	}
	r->have_wqe = false;
	sib_recv_complete(qp, &r->wqe, &c, pkt->bth.SE);
}

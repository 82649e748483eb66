/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RC requester (IBA Vol 1 9.7.4 and 9.7.6): turns send WQEs into
 * request packets.  SEND and RDMA WRITE are segmented by the path MTU, one
 * PSN per packet; an RDMA READ request reserves one PSN per response packet
 * (9.7.4.1.3); an atomic takes one.  Go-back-N retransmission starts again
 * from any PSN (sib_rc_req_retry); the local ACK timer and the RNR wait are
 * here too.  The completer (rc_completer.c) retires WQEs as ACKs arrive.
 */
#include <string.h>

#include "base/log.h"
#include "transport/qp_impl.h"
#include "transport/req_common.h"

/*
 * At most this many PSNs unacknowledged, and an AckReq at least this often.
 * A long READ is asked for in chunks of READ_CHUNK responses, at most two
 * chunks of responses outstanding over all READs: each chunk is an ordinary READ request for the next
 * part (as a retry would be, IBA 9.7.6.1.5), so the responder never sends
 * more than the receiving socket can hold.
 *
 * Each chunk takes a responder resource (IBA 9.7.5.1.4), so max_rd_atomic
 * counts chunks, and a READ asked for again never crosses a chunk boundary:
 * the duplicate finds the resource of its chunk.  Otherwise the responder
 * could forget a READ whose responses were lost, and the requester would
 * ask for it forever.
 */
enum { REQ_WINDOW = 256, REQ_ACK_EVERY = 16, READ_CHUNK = 64, REQ_WINDOW_MIN = 4 };

/*
 * The RC QPs of an HCA with requests in flight share HCA_WINDOW PSNs: one
 * QP may have all of them, eight an eighth each, so -q 8 keeps as much in
 * flight as -q 1.  Eight full windows at once (8 MiB at the 4096 MTU) only
 * fill socket buffers and caches: ib_write_bw -q 8 moved 5 to 10 % less
 * than -q 1 that way (A/B, 4 pairs: equal now).
 */
enum { HCA_WINDOW = 256 };

/*
 * The window actually used: the QP's own window (REQ_WINDOW, halved at
 * each go-back-N restart and cut to REQ_WINDOW_MIN at a timeout, grown
 * again by what is acknowledged), at most its share of HCA_WINDOW.
 * Go-back-N resends the whole window after one loss, so without the
 * shrinking a lossy path fills the peer's socket with retransmissions and
 * loses even more (congestion collapse: retry_cnt exhausted under a few
 * percent of loss).
 */
static uint32_t req_window(const struct sib_qp *qp)
{
	const struct sib_req *q = &qp->req;
	uint32_t w = q->cwnd ? q->cwnd : REQ_WINDOW;
	uint32_t busy = qp->eng ? sib_engine_rc_busy(qp->eng) : 0;
	uint32_t share = busy > 1 ? HCA_WINDOW / busy : HCA_WINDOW;

	if (share < REQ_WINDOW_MIN)
		share = REQ_WINDOW_MIN;
	return w < share ? w : share;
}

/* Keeps the engine's count of RC QPs with requests in flight (and this
 * QP's flag) in step with the QP; with the QP lock held. */
static void busy_update(struct sib_qp *qp, bool busy)
{
	struct sib_req *q = &qp->req;

	if (busy == q->busy || !qp->eng)
		return;
	q->busy = busy;
	sib_engine_rc_busy_add(qp->eng, busy ? 1 : -1);
}

void sib_rc_window_grow(struct sib_qp *qp, uint32_t acked)
{
	struct sib_req *q = &qp->req;
	uint32_t w = (q->cwnd ? q->cwnd : REQ_WINDOW) + acked;

	q->cwnd = w > REQ_WINDOW ? REQ_WINDOW : w;
}

uint32_t sib_rc_sent_end(const struct sib_qp *qp)
{
	const struct sib_req *q = &qp->req;

	if (q->psn_hi_valid && psn_diff(q->psn_hi, q->psn) > 0)
		return q->psn_hi;
	return q->psn;
}

static void window_shrink(struct sib_qp *qp, bool timeout)
{
	struct sib_req *q = &qp->req;
	uint32_t w = timeout ? REQ_WINDOW_MIN : req_window(qp) / 2;

	q->cwnd = w < REQ_WINDOW_MIN ? REQ_WINDOW_MIN : w;
}

bool sib_wr_is_atomic(enum sib_wr_opcode op)
{
	return op == SIB_WR_ATOMIC_CMP_AND_SWP || op == SIB_WR_ATOMIC_FETCH_AND_ADD;
}

/* IBA 1.5: one request packet, answered by one empty READ Response Only. */
static bool is_iba15(enum sib_wr_opcode op)
{
	return op == SIB_WR_FLUSH || op == SIB_WR_ATOMIC_WRITE;
}

bool sib_wr_is_read_answered(enum sib_wr_opcode op)
{
	return op == SIB_WR_RDMA_READ || is_iba15(op);
}

bool sib_wr_is_rd_atomic(enum sib_wr_opcode op)
{
	return sib_wr_is_read_answered(op) || sib_wr_is_atomic(op);
}

static bool is_atomic(enum sib_wr_opcode op)
{
	return sib_wr_is_atomic(op);
}

uint32_t sib_req_npkts(const struct sib_send_wqe *w, unsigned mtu)
{
	if (is_atomic(w->opcode) || is_iba15(w->opcode) || w->length == 0)
		return 1;
	return (uint32_t)((w->length + mtu - 1) / mtu);
}

enum sib_wc_status sib_req_precheck(struct sib_qp *qp, const struct sib_send_wqe *w)
{
	struct memreg_table *t = sib_engine_memreg(qp->eng);
	uint32_t access = 0;

	if (w->opcode == SIB_WR_RDMA_READ || is_atomic(w->opcode))
		access = MEMREG_ACCESS_LOCAL_WRITE;
	if (is_atomic(w->opcode) && w->length != 8) {
		sib_warn("post_send on QP 0x%06x: an atomic needs one 8-byte local buffer, got %llu "
			 "bytes",
			 qp->qp_num, (unsigned long long)w->length);
		return SIB_WC_LOC_LEN_ERR;
	}
	/* A misaligned atomic goes out, as hardware sends it: the responder
	 * refuses it (NAK Invalid Request, IBA 9.4.5), which ends both QPs. */
	if (((w->send_flags & SIB_SEND_INLINE) && !access) || is_iba15(w->opcode))
		return SIB_WC_SUCCESS; /* FLUSH and ATOMIC WRITE touch no local memory */
	for (uint32_t i = 0; i < w->num_sge; i++) {
		struct memreg_request req = {
			.key = w->sge[i].lkey,
			.pd = qp->pd,
			.qpn = qp->qp_num,
			.va = w->sge[i].addr,
			.len = w->sge[i].length,
			.access = access,
		};
		struct memreg_grant g;
		enum memreg_verdict v;

		if (!req.len)
			continue;
		v = memreg_check(t, &req, &g);
		if (v != MEMREG_OK) {
			sib_log_access(qp, "local SGE", &req, v, &g);
			return SIB_WC_LOC_PROT_ERR;
		}
		memreg_release(t, &g);
	}
	return SIB_WC_SUCCESS;
}

const struct sib_endpoint *sib_req_dest(struct sib_qp *qp)
{
	static const struct sib_endpoint nowhere;

	/* Unresolved: the packet goes nowhere (counted by the link) and the
	 * ACK timer does the rest, as on a fabric without a route. */
	return qp->dest_valid ? &qp->dest : &nowhere;
}

/* The opcode of one segment of a SEND or WRITE (IBA 9.2 Table 38). */
static uint8_t segment_op(const struct sib_send_wqe *w, bool first, bool last)
{
	bool imm = w->opcode == SIB_WR_SEND_WITH_IMM || w->opcode == SIB_WR_RDMA_WRITE_WITH_IMM;

	if (w->opcode == SIB_WR_RDMA_WRITE || w->opcode == SIB_WR_RDMA_WRITE_WITH_IMM) {
		if (first && last)
			return imm ? IB_OP_WRITE_ONLY_IMM : IB_OP_WRITE_ONLY;
		if (first)
			return IB_OP_WRITE_FIRST;
		if (last)
			return imm ? IB_OP_WRITE_LAST_IMM : IB_OP_WRITE_LAST;
		return IB_OP_WRITE_MIDDLE;
	}
	if (first && last)
		return w->opcode == SIB_WR_SEND_WITH_INV ? IB_OP_SEND_ONLY_INV
		       : imm				 ? IB_OP_SEND_ONLY_IMM
							 : IB_OP_SEND_ONLY;
	if (first)
		return IB_OP_SEND_FIRST;
	if (last)
		return w->opcode == SIB_WR_SEND_WITH_INV ? IB_OP_SEND_LAST_INV
		       : imm				 ? IB_OP_SEND_LAST_IMM
							 : IB_OP_SEND_LAST;
	return IB_OP_SEND_MIDDLE;
}

/* Payloads this large are sent from the application's memory rather than
 * copied (a copy of 4 KiB costs more than the kernel's extra iovecs). */
enum { SPLIT_MIN = 1024 };

/*
 * The segment [off, off + n) of w's payload, when it lies in one SGE: the
 * grant for it (*g, held) and 0.  -1 when it spans SGEs (copy it instead);
 * a completion status (> 0) when the L_Key refuses it, logged.
 */
static int send_in_place(struct sib_qp *qp, const struct sib_send_wqe *w, uint64_t off,
			 uint32_t n, struct memreg_grant *g)
{
	uint32_t i = 0;

	while (i < w->num_sge && off >= w->sge[i].length) {
		off -= w->sge[i].length;
		i++;
	}
	if (i >= w->num_sge || w->sge[i].length - off < n)
		return -1;
	struct memreg_request req = {
		.key = w->sge[i].lkey,
		.remote = false,
		.pd = qp->pd,
		.qpn = qp->qp_num,
		.va = w->sge[i].addr + off,
		.len = n,
		.access = 0,
	};
	enum memreg_verdict v = memreg_check(sib_engine_memreg(qp->eng), &req, g);

	if (v != MEMREG_OK) {
		sib_log_access(qp, "local SGE", &req, v, g);
		return SIB_WC_LOC_PROT_ERR;
	}
	/* An ODP payload is copied, never sent in place: the ICRC would read
	 * an unmapped page with SIGSEGV, and a sendmsg that got EFAULT would
	 * drop the packet (tx_error) where the WR must fail LOC_PROT_ERR. */
	if (g->on_demand) {
		memreg_release(sib_engine_memreg(qp->eng), g);
		return -1;
	}
	return 0;
}

int sib_req_send_segment(struct sib_qp *qp, const struct sib_send_wqe *w, uint8_t transport,
			 uint32_t psn, uint64_t off, unsigned mtu, bool ackreq)
{
	uint64_t left = w->length - off;
	uint32_t n = left > mtu ? mtu : (uint32_t)left;
	bool first = off == 0, last = off + n >= w->length;
	uint8_t op = segment_op(w, first, last);
	const struct ib_opcode_info *info = ib_opcode_info(IB_OPCODE(transport, op));
	struct ib_packet pkt;
	uint8_t *buf, *payload;
	size_t hdr_len;

	if (!info)
		return -1;
	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = info->opcode;
	pkt.bth.PSN = psn;
	pkt.bth.A = ackreq ||
		    (last && transport != IB_TRANSPORT_RC && transport != IB_TRANSPORT_XRC);
	/* IBA 9.2.3: Solicited Event on the last packet of a solicited message. */
	pkt.bth.SE = last && (w->send_flags & SIB_SEND_SOLICITED) && (info->flags & (IB_OPF_SEND | IB_OPF_IMM));
	if (info->headers & IB_HDRBIT(IB_HDR_RETH)) {
		pkt.reth.VA = w->rdma.remote_addr;
		pkt.reth.R_Key = w->rdma.rkey;
		pkt.reth.DMALen = (uint32_t)w->length;
	}
	if (info->headers & IB_HDRBIT(IB_HDR_IMMDT))
		pkt.immdt.ImmDt = __builtin_bswap32(w->imm_data); /* posted in network order */
	if (info->headers & IB_HDRBIT(IB_HDR_IETH))
		pkt.ieth.R_Key = w->invalidate_rkey;
	if (info->headers & IB_HDRBIT(IB_HDR_XRCETH))
		pkt.xrceth.XRCSRQ = w->xrc_remote_srqn & SIB_QPN_MASK;
	buf = sib_tx_alloc(qp, &pkt, n, &payload, &hdr_len);
	if (!buf)
		return -1;
	if (!(w->send_flags & SIB_SEND_INLINE) && n >= SPLIT_MIN) {
		/* A large payload inside one SGE goes from where it lies. */
		struct memreg_grant g;
		int v = send_in_place(qp, w, off, n, &g);

		if (v == 0) {
			sib_tx_commit_split(qp, buf, hdr_len, n, sib_req_dest(qp), &g);
			return 0;
		}
		if (v > 0) {
			sib_link_tx_abort(sib_engine_link(qp->eng), buf);
			return v;
		}
	}
	if (w->send_flags & SIB_SEND_INLINE) {
		memcpy(payload, w->inline_data + off, n);
	} else if (n) {
		struct memreg_request bad;
		struct memreg_grant g;
		enum memreg_verdict v = sib_sge_copy(qp, qp->pd, w->sge, w->num_sge, off, payload,
						     n, false, &bad, &g);

		if (v != MEMREG_OK) {
			sib_link_tx_abort(sib_engine_link(qp->eng), buf);
			sib_log_access(qp, "local SGE", &bad, v, &g);
			return SIB_WC_LOC_PROT_ERR;
		}
	}
	sib_tx_commit(qp, buf, hdr_len, n, sib_req_dest(qp));
	return 0;
}

/* RC, or XRC for an XRC initiator (IBA 9.2: the opcode's high bits). */
static uint8_t req_transport(const struct sib_qp *qp)
{
	return qp->type == SIB_QPT_XRC_SEND ? IB_TRANSPORT_XRC : IB_TRANSPORT_RC;
}

/* XRC requests name the target's XRC SRQ in every packet (IBA 9.2.4 / A14). */
static void set_xrceth(const struct sib_qp *qp, const struct sib_send_wqe *w,
		       struct ib_packet *pkt)
{
	if (qp->type == SIB_QPT_XRC_SEND)
		pkt->xrceth.XRCSRQ = w->xrc_remote_srqn & SIB_QPN_MASK;
}

static int send_read_request(struct sib_qp *qp, const struct sib_send_wqe *w,
			     const struct sib_req_wqe *r, uint64_t off, uint32_t len, unsigned mtu)
{
	struct ib_packet pkt;

	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = IB_OPCODE(req_transport(qp), IB_OP_READ_REQUEST);
	set_xrceth(qp, w, &pkt);
	pkt.bth.PSN = psn_add(r->first_psn, (uint32_t)(off / mtu));
	pkt.bth.A = 1;
	pkt.reth.VA = w->rdma.remote_addr + off;
	pkt.reth.R_Key = w->rdma.rkey;
	pkt.reth.DMALen = len;
	return sib_tx_send_hdr(qp, &pkt, sib_req_dest(qp));
}

static int send_atomic(struct sib_qp *qp, const struct sib_send_wqe *w, const struct sib_req_wqe *r)
{
	struct ib_packet pkt;
	bool cas = w->opcode == SIB_WR_ATOMIC_CMP_AND_SWP;

	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = IB_OPCODE(req_transport(qp), cas ? IB_OP_CMP_SWAP : IB_OP_FETCH_ADD);
	set_xrceth(qp, w, &pkt);
	pkt.bth.PSN = r->first_psn;
	pkt.bth.A = 1;
	pkt.atomiceth.VA = w->atomic.remote_addr;
	pkt.atomiceth.R_Key = w->atomic.rkey;
	/* IBA 9.5.3: FetchAdd's add value travels in the SwapDt field. */
	pkt.atomiceth.SwapDt = cas ? w->atomic.swap : w->atomic.compare_add;
	pkt.atomiceth.CmpDt = cas ? w->atomic.compare_add : 0;
	return sib_tx_send_hdr(qp, &pkt, sib_req_dest(qp));
}

/*
 * IBA 1.5: a FLUSH (FETH, RETH with the range) or an ATOMIC WRITE (RETH
 * with DMALen 8, then the 8 bytes); one PSN, AckReq set, since its READ
 * Response acknowledges it.
 */
static int send_iba15(struct sib_qp *qp, const struct sib_send_wqe *w, const struct sib_req_wqe *r)
{
	bool flush = w->opcode == SIB_WR_FLUSH;
	uint32_t n = flush ? 0 : 8;
	struct ib_packet pkt;
	uint8_t *buf, *payload;
	size_t hdr_len;

	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = IB_OPCODE(req_transport(qp), flush ? IB_OP_FLUSH : IB_OP_ATOMIC_WRITE);
	set_xrceth(qp, w, &pkt);
	pkt.bth.PSN = r->first_psn;
	pkt.bth.A = 1;
	pkt.reth.VA = w->rdma.remote_addr;
	pkt.reth.R_Key = w->rdma.rkey;
	pkt.reth.DMALen = flush ? w->rdma.flush_len : 8;
	pkt.feth.PLT = w->rdma.flush_type & 0xf;
	pkt.feth.SEL = w->rdma.flush_level & 0x3;
	buf = sib_tx_alloc(qp, &pkt, n, &payload, &hdr_len);
	if (!buf)
		return -1;
	if (n)
		memcpy(payload, &w->rdma.atomic_write, n);
	sib_tx_commit(qp, buf, hdr_len, n, sib_req_dest(qp));
	return 0;
}

uint64_t sib_rc_rto_ns(const struct sib_qp *qp)
{
	/* IBA 9.7.6.1.3 / 11.2.4.2: 4.096 us * 2^timeout; 0 means infinite. */
	if (!qp->attr.timeout)
		return 0;
	return 4096ull << (qp->attr.timeout > 31 ? 31 : qp->attr.timeout);
}

void sib_rc_arm_rto(struct sib_qp *qp, bool restart)
{
	struct sib_req *q = &qp->req;
	uint64_t rto = sib_rc_rto_ns(qp);

	if (psn_diff(q->psn, q->una_psn) <= 0 || !rto) {
		q->rto_deadline = 0;
		return;
	}
	if (restart || !q->rto_deadline) {
		q->rto_deadline = sib_engine_now(qp->eng) + rto;
		sib_engine_want_tick(qp->eng, q->rto_deadline);
	}
}

/*
 * An AckReq sent in this pass and not yet acknowledged: its ACK will open
 * the window, so a full window needs no AckReq of its own.  Asking anyway
 * doubled a stream's ACKs (ib_write_bw: two per 64 KiB message), since
 * edges and the points ack_due picks stayed on different packets.  A
 * go-back-N rewind moves ackreq_psn back before psn, so the old AckReq no
 * longer counts.
 */
static bool ackreq_in_flight(const struct sib_req *q)
{
	return psn_diff(q->ackreq_psn, q->una_psn) >= 0 && psn_diff(q->ackreq_psn, q->psn) < 0;
}

/*
 * AckReq at least every REQ_ACK_EVERY PSNs, and on a message's last
 * packet when the next message of its length would end past that: the
 * ACKs of a stream then fall on message ends, so the window opens by
 * whole messages, and each burst goes out as two GSO messages (the first
 * packet, longer by its RETH, and the rest) instead of three.  At a fixed
 * 16-PSN grid, which the initial PSN sets, ib_write_bw -q 8 sent 6.4 to
 * 6.9 packets per GSO message instead of 8, and moved 5 to 8 % less.  A
 * message longer than REQ_ACK_EVERY asks at its end only when at least
 * half of REQ_ACK_EVERY PSNs have passed since the last AckReq, not right
 * after one.  READ and atomic requests count as AckReqs (their responses
 * acknowledge), so the count never starts from a PSN old enough to wrap.
 */
static bool ack_due(const struct sib_req *q, const struct sib_req_wqe *r, bool last)
{
	int32_t since = psn_diff(q->psn, q->ackreq_psn);
	int32_t npkts = psn_diff(r->last_psn, r->first_psn) + 1;

	if (since >= REQ_ACK_EVERY)
		return true;
	if (!last)
		return false;
	return npkts <= REQ_ACK_EVERY ? since + npkts > REQ_ACK_EVERY : since >= REQ_ACK_EVERY / 2;
}

/* Whether the WQE after the current one goes out right after it: one
 * that waits (READ or atomic limits, a fence) or fails needs the current
 * one acknowledged first. */
static bool next_follows(struct sib_qp *qp)
{
	uint32_t next = qp->req.cur + 1;
	const struct sib_send_wqe *n;

	if (next >= qp->sq.count)
		return false;
	n = sq_wqe(qp, next);
	return !sib_wr_is_rd_atomic(n->opcode) && !(n->send_flags & SIB_SEND_FENCE) &&
	       !sq_req(qp, next)->local_err;
}

/* Responder resources the outstanding READ chunks and atomics hold. */
static uint32_t rd_outstanding(struct sib_qp *qp)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i <= qp->req.cur && i < qp->sq.count; i++) {
		struct sib_send_wqe *w = sq_wqe(qp, i);
		struct sib_req_wqe *r = sq_req(qp, i);

		if (!r->started || r->done || !r->asked || !sib_wr_is_rd_atomic(w->opcode))
			continue;
		if (w->opcode != SIB_WR_RDMA_READ) {
			n++;
			continue;
		}
		uint32_t got = (uint32_t)psn_diff(r->rsp_psn, r->first_psn);

		n += (r->asked + READ_CHUNK - 1) / READ_CHUNK - got / READ_CHUNK;
	}
	return n;
}

static void req_run(struct sib_qp *qp);

void sib_rc_req_run(struct sib_qp *qp)
{
	req_run(qp);
	busy_update(qp, qp->req.psn != qp->req.una_psn);
}

static void req_run(struct sib_qp *qp)
{
	struct sib_req *q = &qp->req;
	unsigned mtu = sib_qp_mtu(qp);
	uint8_t transport = req_transport(qp);
	uint32_t max_rd = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;

	if (q->rnr_wait)
		return;
	q->tx_blocked = false;
	while (q->cur < qp->sq.count) {
		struct sib_send_wqe *w = sq_wqe(qp, q->cur);
		struct sib_req_wqe *r = sq_req(qp, q->cur);
		bool rd = sib_wr_is_rd_atomic(w->opcode);

		if (r->local_err)
			break;
		if (!r->started) {
			if (!r->begun && !sib_qp_may_start(qp))
				break; /* SQD: only what began goes on */
			/* IBA 10.8.3.3: a fenced WQE waits for earlier READs and atomics. */
			if ((w->send_flags & SIB_SEND_FENCE) && rd_outstanding(qp))
				break;
			if (rd && rd_outstanding(qp) >= max_rd)
				break; /* max_rd_atomic: initiator depth (IBA 9.7.4.1.3) */
			if (!rd && psn_diff(q->psn, q->una_psn) >= (int32_t)req_window(qp))
				break;
			enum sib_wc_status st = sib_req_precheck(qp, w);

			if (st != SIB_WC_SUCCESS) {
				r->local_err = (uint8_t)st;
				break;
			}
			r->first_psn = q->psn;
			r->last_psn = psn_add(q->psn, sib_req_npkts(w, mtu) - 1);
			r->rsp_psn = r->first_psn;
			r->asked = 0;
			r->started = r->begun = true;
			q->cur_off = 0;
		}
		if (w->opcode == SIB_WR_RDMA_READ) {
			uint64_t chunk = (uint64_t)READ_CHUNK * mtu;
			uint64_t left = w->length - q->cur_off;
			uint64_t to_end = chunk - q->cur_off % chunk; /* of this chunk */
			uint32_t n = (uint32_t)(left > to_end ? to_end : left);
			uint32_t at = (uint32_t)(q->cur_off / mtu);
			uint32_t npk = n ? (n + mtu - 1) / mtu : 1;

			int32_t due = psn_diff(q->psn, q->una_psn);

			if (due >= 2 * READ_CHUNK || (due > 0 && due >= (int32_t)req_window(qp)))
				break; /* two chunks (or a window) of responses due: wait */
			if (at >= r->asked && at && rd_outstanding(qp) >= max_rd)
				break; /* a new chunk takes a responder resource */
			if (send_read_request(qp, w, r, q->cur_off, n, mtu)) {
				q->tx_blocked = true;
				break;
			}
			if (at + npk > r->asked)
				r->asked = at + npk;
			/* Its last response acknowledges all before it. */
			q->ackreq_psn = psn_add(r->first_psn, at + npk - 1);
			q->cur_off += n;
			if (q->cur_off < w->length) {
				q->psn = psn_add(r->first_psn, (uint32_t)(q->cur_off / mtu));
				continue; /* the next chunk, if the window allows */
			}
			q->psn = psn_add(r->last_psn, 1);
		} else if (is_atomic(w->opcode) || is_iba15(w->opcode)) {
			if (is_atomic(w->opcode) ? send_atomic(qp, w, r) : send_iba15(qp, w, r)) {
				q->tx_blocked = true;
				break;
			}
			q->psn = psn_add(r->last_psn, 1);
			q->ackreq_psn = r->last_psn; /* its response acknowledges */
			r->asked = 1;
		} else {
			bool stop = false;

			for (;;) {
				if (psn_diff(q->psn, q->una_psn) >= (int32_t)req_window(qp)) {
					stop = true;
					break;
				}
				/* ACKs coalesced (IBA 9.7.5.1.1): see ack_due;
				 * also on a message's last packet unless another
				 * follows at once, and when the window fills with
				 * no AckReq in flight.  One ACK covers all earlier
				 * PSNs. */
				bool last = q->cur_off + mtu >= w->length;
				bool ackreq = ack_due(q, r, last) ||
					      (psn_diff(psn_add(q->psn, 1), q->una_psn) >=
						       (int32_t)req_window(qp) &&
					       !ackreq_in_flight(q)) ||
					      (last && !next_follows(qp));
				int rc = sib_req_send_segment(qp, w, transport, q->psn, q->cur_off,
							      mtu, ackreq);

				if (rc) {
					if (rc > 0)
						r->local_err = (uint8_t)rc;
					else
						q->tx_blocked = true;
					stop = true;
					break;
				}
				if (ackreq)
					q->ackreq_psn = q->psn;
				q->psn = psn_add(q->psn, 1);
				q->cur_off += mtu;
				if (q->cur_off >= w->length)
					break;
			}
			if (stop)
				break;
		}
		q->cur++;
		q->cur_off = 0;
	}
	sib_rc_arm_rto(qp, false);
	if (q->tx_blocked)
		sib_engine_want_tick(qp->eng, sib_engine_now(qp->eng));
	if (qp->sq.count && sq_req(qp, 0)->local_err)
		sib_rc_comp_advance(qp);
}

void sib_rc_req_retry(struct sib_qp *qp, uint32_t from_psn)
{
	struct sib_req *q = &qp->req;
	unsigned mtu = sib_qp_mtu(qp);
	uint32_t i;

	/* q->cur itself may be partly sent (a window, a READ in chunks). */
	for (i = 0; i <= q->cur && i < qp->sq.count; i++) {
		struct sib_req_wqe *r = sq_req(qp, i);

		if (r->started && !r->done && psn_diff(from_psn, r->first_psn) >= 0 &&
		    psn_diff(from_psn, r->last_psn) <= 0)
			break;
	}
	if (i > q->cur || i >= qp->sq.count)
		return; /* nothing sent from there: nothing to resend */
	struct sib_send_wqe *w = sq_wqe(qp, i);
	struct sib_req_wqe *r = sq_req(qp, i);

	sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->retransmits);
	window_shrink(qp, false);
	/* Later WQEs go again, in order, as duplicates: no new resources. */
	for (uint32_t j = i + 1; j <= q->cur && j < qp->sq.count; j++)
		sq_req(qp, j)->started = false;
	q->cur = i;
	if (w->opcode == SIB_WR_RDMA_READ) {
		/* Ask again for what has not arrived (IBA 9.7.6.1.5). */
		from_psn = r->rsp_psn;
		q->cur_off = (uint64_t)psn_diff(from_psn, r->first_psn) * mtu;
	} else if (sib_wr_is_rd_atomic(w->opcode)) {
		q->cur_off = 0;
	} else {
		q->cur_off = (uint64_t)psn_diff(from_psn, r->first_psn) * mtu;
	}
	q->psn_hi = sib_rc_sent_end(qp);
	q->psn_hi_valid = true;
	q->psn = from_psn;
	q->ackreq_psn = psn_add(from_psn, SIB_PSN_MASK); /* count again from here */
}

static const uint64_t rnr_timer_ns[32] = {
	/* IBA 9.7.5.2.8 Table 45: RNR NAK timer field encodings */
	655360000, 10000,    20000,    30000,	 40000,	   60000,    80000,    120000,
	160000,	   240000,   320000,   480000,	 640000,   960000,   1280000,  1920000,
	2560000,   3840000,  5120000,  7680000,	 10240000, 15360000, 20480000, 30720000,
	40960000,  61440000, 81920000, 122880000, 163840000, 245760000, 327680000, 491520000,
};

uint64_t sib_rnr_timer_ns(uint8_t code)
{
	return rnr_timer_ns[code & 31];
}

static const char *op_name(enum sib_wr_opcode op)
{
	switch (op) {
	case SIB_WR_RDMA_READ:
		return "RDMA READ";
	case SIB_WR_RDMA_WRITE:
	case SIB_WR_RDMA_WRITE_WITH_IMM:
		return "RDMA WRITE";
	case SIB_WR_FLUSH:
		return "FLUSH";
	case SIB_WR_ATOMIC_WRITE:
		return "ATOMIC WRITE";
	default:
		return is_atomic(op) ? "atomic" : "SEND";
	}
}

void sib_rc_req_fail_head(struct sib_qp *qp, enum sib_wc_status st, const char *why)
{
	if (qp->sq.count) {
		struct sib_send_wqe *w = sq_wqe(qp, 0);
		bool atomic = is_atomic(w->opcode);

		sib_warn("%s on QP 0x%06x (wr_id 0x%llx, remote addr 0x%llx, rkey 0x%06x): %s",
			 op_name(w->opcode), qp->qp_num, (unsigned long long)w->wr_id,
			 (unsigned long long)(atomic ? w->atomic.remote_addr : w->rdma.remote_addr),
			 atomic ? w->atomic.rkey : w->rdma.rkey, why);
		sib_qp_complete_send_locked(qp, w, st);
		sib_wq_pop(&qp->sq);
		if (qp->req.cur)
			qp->req.cur--;
	}
	sib_qp_enter_error_locked(qp);
}

void sib_rc_req_timer(struct sib_qp *qp, uint64_t now)
{
	struct sib_req *q = &qp->req;

	if (qp->attr.qp_state != SIB_QPS_RTS && qp->attr.qp_state != SIB_QPS_SQD)
		return;
	if (q->rnr_wait && now >= q->rnr_deadline) {
		q->rnr_wait = false;
		sib_rc_req_run(qp);
	}
	if (q->rto_deadline && now >= q->rto_deadline) {
		sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->timeouts);
		q->rto_deadline = 0;
		if (!q->retry_left) {
			sib_rc_req_fail_head(qp, SIB_WC_RETRY_EXC_ERR,
					     "no response after retry_cnt retries (local ACK "
					     "timeout, IBA 9.7.6.1.3)");
			return;
		}
		q->retry_left--;
		window_shrink(qp, true);
		sib_rc_req_retry(qp, q->una_psn);
		sib_rc_req_run(qp);
		sib_rc_arm_rto(qp, true);
	}
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RC responder (IBA Vol 1 9.7.4 / 9.7.5), written as one explicit state
 * machine: each request packet enters at CHK_PSN and walks the states below,
 * one function per state, until DONE.  Reading it top to bottom answers
 * "what happens when a READ request arrives".
 *
 *   CHK_PSN -> CHK_XRC -> CHK_OP_SEQ -> CHK_OP_VALID -> CHK_LENGTH -> CHK_RESOURCE
 *           -> CHK_RKEY -> EXECUTE -> COMPLETE -> ACKNOWLEDGE -> DONE
 *   side exits: DUPLICATE, NAK_SEQ, RNR, ERR_INVALID, ERR_ACCESS, ERR_OP
 *
 * Responder resources (max_dest_rd_atomic of them) remember READs and
 * atomics: a duplicate READ is executed again, a duplicate atomic is
 * answered from the saved result and never executed twice (9.7.5.1.4).
 * IBA 1.5's FLUSH and ATOMIC WRITE take one each too, as rxe has them, and
 * a duplicate gets its empty READ Response again, unexecuted.
 */
#include <string.h>

#include "base/log.h"
#include "transport/numtab.h"
#include "transport/qp_impl.h"
#include "transport/srq.h"

enum resp_state {
	RESP_CHK_PSN,
	RESP_CHK_XRC,
	RESP_CHK_OP_SEQ,
	RESP_CHK_OP_VALID,
	RESP_CHK_LENGTH,
	RESP_CHK_RESOURCE,
	RESP_CHK_RKEY,
	RESP_EXECUTE,
	RESP_COMPLETE,
	RESP_ACKNOWLEDGE,
	RESP_DUPLICATE,
	RESP_NAK_SEQ,
	RESP_RNR,
	RESP_ERR_INVALID,
	RESP_ERR_ACCESS,
	RESP_ERR_OP,
	RESP_DONE,
};

struct resp_ctx {
	struct sib_qp *qp;
	const struct ib_packet *pkt;
	uint32_t flags; /* the opcode's IB_OPF_* */
	unsigned mtu;
	uint32_t pd; /* whose keys: the QP's PD, for an XRC target its XRC SRQ's */
	enum sib_wc_status recv_status; /* for a receive WQE ended by an error */
	const char *why;
};

static struct sib_resp *R(struct resp_ctx *c)
{
	return &c->qp->resp;
}

/* ---------------------------------------------------------------- output */

/* An XRC target answers with XRC opcodes (IBA 9.2 Table 38, 0xA0-0xB7). */
static uint8_t resp_op(const struct sib_qp *qp, uint8_t op)
{
	return IB_OPCODE(qp->type == SIB_QPT_XRC_RECV ? IB_TRANSPORT_XRC : IB_TRANSPORT_RC, op);
}

static void ack_packet(struct sib_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	struct ib_packet pkt;

	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = resp_op(qp, IB_OP_ACKNOWLEDGE);
	pkt.bth.PSN = psn;
	pkt.aeth.Syndrome = syndrome;
	pkt.aeth.MSN = msn & SIB_PSN_MASK;
	sib_tx_send_hdr(qp, &pkt, &qp->dest);
}

/* An ACK or NAK, queued on the link behind whatever the port sent before
 * it (the transmit rule: nothing made later leaves ahead of it). */
static void send_ack(struct sib_qp *qp, uint32_t psn, uint8_t syndrome)
{
	ack_packet(qp, psn, syndrome, qp->resp.msn);
}

/* ACK with "credits invalid" (IBA 9.7.7.2.4: end-to-end flow control off). */
static uint8_t ack_syndrome(void)
{
	return ib_aeth_syndrome(IB_AETH_ACK, 0x1f);
}

static void send_atomic_ack(struct sib_qp *qp, uint32_t psn, uint64_t orig)
{
	struct ib_packet pkt;

	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = resp_op(qp, IB_OP_ATOMIC_ACKNOWLEDGE);
	pkt.bth.PSN = psn;
	pkt.aeth.Syndrome = ack_syndrome();
	pkt.aeth.MSN = qp->resp.msn & SIB_PSN_MASK;
	pkt.atomicacketh.OrigRemDt = orig;
	sib_tx_send_hdr(qp, &pkt, &qp->dest);
}

/* IBA 1.5: FLUSH and ATOMIC WRITE are answered by an RDMA READ Response
 * Only with no payload (rxe: send_read_response_ack). */
static void send_empty_read_rsp(struct sib_qp *qp, uint32_t psn)
{
	struct ib_packet pkt;

	sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
	pkt.bth.OpCode = resp_op(qp, IB_OP_READ_RESPONSE_ONLY);
	pkt.bth.PSN = psn;
	pkt.aeth.Syndrome = ack_syndrome();
	pkt.aeth.MSN = qp->resp.msn & SIB_PSN_MASK;
	sib_tx_send_hdr(qp, &pkt, &qp->dest);
}

/*
 * Sends the read responses of one resource, as many as the link takes now;
 * the rest wait for sib_rc_resp_run.  Returns true when all are out.
 */
static bool send_read_responses(struct sib_qp *qp, struct sib_rd_res *res)
{
	struct memreg_table *t = sib_engine_memreg(qp->eng);
	unsigned mtu = sib_qp_mtu(qp);

	while (res->sending) {
		uint64_t left = res->len - res->next_off;
		uint32_t n = left > mtu ? mtu : (uint32_t)left;
		bool first = res->next_off == 0, last = res->next_off + n >= res->len;
		uint8_t op = first && last ? IB_OP_READ_RESPONSE_ONLY
			     : first	   ? IB_OP_READ_RESPONSE_FIRST
			     : last	   ? IB_OP_READ_RESPONSE_LAST
					   : IB_OP_READ_RESPONSE_MIDDLE;
		struct ib_packet pkt;
		uint8_t *buf, *payload;
		size_t hdr_len;

		sib_tx_headers(qp, &qp->attr.ah_attr, &pkt);
		pkt.bth.OpCode = resp_op(qp, op);
		pkt.bth.PSN = res->next_psn;
		pkt.aeth.Syndrome = ack_syndrome();
		pkt.aeth.MSN = qp->resp.msn & SIB_PSN_MASK;
		buf = sib_tx_alloc(qp, &pkt, n, &payload, &hdr_len);
		if (!buf) {
			sib_engine_want_tick(qp->eng, sib_engine_now(qp->eng));
			return false;
		}
		if (n) {
			/* Checked at the request; checked again per packet because
			 * the region may have been deregistered since. */
			struct memreg_request req = {
				.key = res->rkey,
				.remote = true,
				.pd = res->pd,
				.qpn = qp->qp_num,
				.va = res->va + res->next_off,
				.len = n,
				.access = MEMREG_ACCESS_REMOTE_READ,
			};
			struct memreg_grant g;
			enum memreg_verdict v = memreg_check(t, &req, &g);

			if (v == MEMREG_OK) {
				v = memreg_grant_read(&g, 0, payload, n);
				memreg_release(t, &g);
			}
			/* Gone under us (deregistered, or an ODP page unmapped
			 * since chk_rkey faulted it in): send zeros rather than
			 * stall; the region's owner broke the contract, not the peer. */
			if (v != MEMREG_OK)
				memset(payload, 0, n);
		}
		sib_tx_commit(qp, buf, hdr_len, n, &qp->dest);
		res->next_psn = psn_add(res->next_psn, 1);
		res->next_off += n;
		if (last)
			res->sending = false;
	}
	return true;
}

static bool reads_pending(struct sib_qp *qp)
{
	for (uint32_t i = 0; i < qp->resp.res_len; i++)
		if (qp->resp.res[i].sending)
			return true;
	return false;
}

void sib_rc_resp_run(struct sib_qp *qp)
{
	for (uint32_t i = 0; i < qp->resp.res_len; i++)
		if (qp->resp.res[i].sending && !send_read_responses(qp, &qp->resp.res[i]))
			return;
}

/* ---------------------------------------------------------------- states */

static enum resp_state chk_psn(struct resp_ctx *c)
{
	int32_t d = psn_diff(c->pkt->bth.PSN, R(c)->epsn);

	if (d == 0) {
		R(c)->nak_sent = false;
		return RESP_CHK_XRC;
	}
	if (d < 0)
		return RESP_DUPLICATE;
	return RESP_NAK_SEQ;
}

/*
 * An XRC target serves the XRC SRQ the XRCETH names, which must exist and
 * belong to the target QP's XRC domain; all packets of one message name the
 * same SRQ.  Anything else is an invalid request (IBA 9.8.4 / A14).
 */
static enum resp_state chk_xrc(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);

	if (c->qp->type != SIB_QPT_XRC_RECV)
		return RESP_CHK_OP_SEQ;
	if (!r->xrc_srq) {
		sib_dbg("responder QP 0x%06x: XRCETH names XRC SRQ 0x%06x, not an SRQ of this "
			"QP's XRC domain",
			c->qp->qp_num, c->pkt->xrceth.XRCSRQ);
		c->why = "no such XRC SRQ in the QP's XRC domain";
		return RESP_ERR_INVALID;
	}
	if (r->kind == SIB_MSG_SEND && r->have_wqe && sib_srq_num(r->xrc_srq) != r->wqe_srqn) {
		c->why = "a message's packets name different XRC SRQs";
		return RESP_ERR_INVALID;
	}
	return RESP_CHK_OP_SEQ;
}

/* IBA 9.7.5.2.2 / C9-?: First/Middle/Last must follow each other in order. */
static enum resp_state chk_op_seq(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	uint32_t f = c->flags;
	enum sib_msg_kind kind = (f & IB_OPF_SEND) ? SIB_MSG_SEND : (f & IB_OPF_WRITE) ? SIB_MSG_WRITE
										     : SIB_MSG_NONE;

	if (r->kind != SIB_MSG_NONE) {
		/* In a message: only Middle or Last of the same kind. */
		if (kind != r->kind || (f & IB_OPF_FIRST)) {
			c->why = "a new request inside an unfinished message";
			return RESP_ERR_INVALID;
		}
	} else if ((f & (IB_OPF_MIDDLE | IB_OPF_LAST)) && !(f & IB_OPF_FIRST)) {
		c->why = "a Middle or Last packet with no First";
		return RESP_ERR_INVALID;
	}
	return RESP_CHK_OP_VALID;
}

/* The rights a FLUSH's placement type asks of the QP and the region
 * (IBA 1.5; rxe: check_qp_attr_access, check_rkey). */
static uint32_t flush_access(const struct ib_feth *f)
{
	return ((f->PLT & IB_FETH_PLT_GLOBAL) ? MEMREG_ACCESS_FLUSH_GLOBAL : 0) |
	       ((f->PLT & IB_FETH_PLT_PERSISTENT) ? MEMREG_ACCESS_FLUSH_PERSISTENT : 0);
}

/* The QP's own remote access flags (IBA 10.2.3 / 9.7.5.2.4).  An ATOMIC
 * WRITE needs remote write, as rxe and pyverbs' test have it. */
static enum resp_state chk_op_valid(struct resp_ctx *c)
{
	unsigned acc = c->qp->attr.qp_access_flags;
	uint32_t f = c->flags;

	if (((f & IB_OPF_WRITE) && (f & IB_OPF_FIRST) && !(acc & MEMREG_ACCESS_REMOTE_WRITE)) ||
	    ((f & IB_OPF_ATOMIC_WRITE) && !(acc & MEMREG_ACCESS_REMOTE_WRITE)) ||
	    ((f & IB_OPF_FLUSH) && (acc & flush_access(&c->pkt->feth)) != flush_access(&c->pkt->feth)) ||
	    ((f & IB_OPF_READ) && !(acc & MEMREG_ACCESS_REMOTE_READ)) ||
	    ((f & IB_OPF_ATOMIC) && !(acc & MEMREG_ACCESS_REMOTE_ATOMIC))) {
		c->why = "the QP's access flags do not allow this operation";
		return RESP_ERR_ACCESS;
	}
	return RESP_CHK_LENGTH;
}

/* IBA 9.7.5.2.2 / C9-93: First and Middle carry exactly one PMTU, Last and
 * Only at most one. */
static enum resp_state chk_length(struct resp_ctx *c)
{
	uint32_t f = c->flags, n = c->pkt->payload_len;

	if ((f & IB_OPF_ATOMIC_WRITE) && (n != 8 || c->pkt->reth.DMALen != 8)) {
		c->why = "ATOMIC WRITE carries other than 8 bytes (IBA 1.5)";
		return RESP_ERR_INVALID;
	}
	if ((f & IB_OPF_FLUSH) && (c->pkt->feth.SEL > IB_FETH_SEL_REGION ||
				   (c->pkt->feth.PLT & ~(IB_FETH_PLT_GLOBAL | IB_FETH_PLT_PERSISTENT)))) {
		c->why = "FLUSH with a reserved selectivity level or placement type (IBA 1.5)";
		return RESP_ERR_INVALID;
	}
	if (!(f & IB_OPF_PAYLOAD))
		return RESP_CHK_RESOURCE;
	if (((f & IB_OPF_FIRST) && !(f & IB_OPF_LAST)) || (f & IB_OPF_MIDDLE)) {
		if (n != c->mtu) {
			c->why = "First/Middle packet payload is not the path MTU";
			return RESP_ERR_INVALID;
		}
	} else if (n > c->mtu) {
		c->why = "payload larger than the path MTU";
		return RESP_ERR_INVALID;
	}
	return RESP_CHK_RESOURCE;
}

/* A receive WQE for SEND First/Only and WRITE with immediate (IBA 9.7.5.2.8). */
static enum resp_state chk_resource(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	uint32_t f = c->flags;
	bool needs_wqe = ((f & IB_OPF_SEND) && (f & IB_OPF_FIRST)) ||
			 ((f & IB_OPF_WRITE) && (f & IB_OPF_IMM));

	if ((f & (IB_OPF_READ | IB_OPF_ATOMIC | IB_OPF_ATOMIC_WRITE | IB_OPF_FLUSH)) && !r->res_len) {
		c->why = "READ, atomic, ATOMIC WRITE or FLUSH with max_dest_rd_atomic 0";
		return RESP_ERR_INVALID;
	}
	if (needs_wqe && !r->have_wqe && !sib_recv_take(c->qp))
		return RESP_RNR;
	return RESP_CHK_RKEY;
}

static enum resp_state rkey_refused(struct resp_ctx *c, const struct memreg_request *req,
				    enum memreg_verdict v, const struct memreg_grant *g)
{
	const char *what = (c->flags & IB_OPF_READ)	      ? "incoming RDMA READ"
			   : (c->flags & IB_OPF_ATOMIC)       ? "incoming atomic"
			   : (c->flags & IB_OPF_ATOMIC_WRITE) ? "incoming ATOMIC WRITE"
			   : (c->flags & IB_OPF_FLUSH)	      ? "incoming FLUSH"
							      : "incoming RDMA WRITE";

	sib_log_access(c->qp, what, req, v, g);
	c->why = "R_Key check failed";
	/* A WRITE with immediate took a receive: it ends with a local
	 * access error (ibv_poll_cq(3), as mlx5 reports it). */
	c->recv_status = SIB_WC_LOC_ACCESS_ERR;
	return RESP_ERR_ACCESS;
}

static enum resp_state chk_rkey(struct resp_ctx *c)
{
	const struct ib_packet *p = c->pkt;
	uint32_t f = c->flags;
	struct memreg_request req = { .remote = true, .pd = c->pd, .qpn = c->qp->qp_num };
	struct memreg_grant g;
	enum memreg_verdict v;

	if (f & IB_OPF_ATOMIC) {
		if (p->atomiceth.VA & 7) {
			c->why = "atomic VA not 8-byte aligned (IBA 9.4.5)";
			return RESP_ERR_INVALID;
		}
		req.key = p->atomiceth.R_Key;
		req.va = p->atomiceth.VA;
		req.len = 8;
		req.access = MEMREG_ACCESS_REMOTE_ATOMIC;
	} else if (f & IB_OPF_ATOMIC_WRITE) {
		/* rxe cites oA19-28: the target is 8-byte aligned. */
		if (p->reth.VA & 7) {
			c->why = "ATOMIC WRITE VA not 8-byte aligned (IBA 1.5 oA19-28)";
			return RESP_ERR_INVALID;
		}
		req.key = p->reth.R_Key;
		req.va = p->reth.VA;
		req.len = 8;
		req.access = MEMREG_ACCESS_REMOTE_WRITE;
	} else if (f & IB_OPF_FLUSH) {
		/* The key and its flush rights always; the range only for a
		 * range-level FLUSH (a region-level one covers the whole region,
		 * whatever VA it names: rxe skips the range check too). */
		req.key = p->reth.R_Key;
		req.va = p->reth.VA;
		req.len = p->feth.SEL == IB_FETH_SEL_RANGE ? p->reth.DMALen : 0;
		req.access = flush_access(&p->feth);
	} else if (p->headers & IB_HDRBIT(IB_HDR_RETH)) {
		/* IBA C9-88: the R_Key of a zero-length RDMA WRITE or READ is
		 * not validated, nor its VA (rsockets' control messages and
		 * UCX's endpoint flush leave them unset).  The rest stands: a
		 * WRITE with immediate takes a receive WQE (chk_resource), a
		 * READ gets one READ RESPONSE Only with no payload, and the
		 * QP's own access flags apply (chk_op_valid). */
		if (!p->reth.DMALen)
			return RESP_EXECUTE;
		req.key = p->reth.R_Key;
		req.va = p->reth.VA;
		req.len = p->reth.DMALen;
		req.access = (f & IB_OPF_READ) ? MEMREG_ACCESS_REMOTE_READ
					       : MEMREG_ACCESS_REMOTE_WRITE;
		if ((f & IB_OPF_WRITE) && (f & IB_OPF_LAST) && p->payload_len != p->reth.DMALen) {
			c->why = "WRITE Only payload differs from DMALen";
			return RESP_ERR_INVALID;
		}
	} else {
		return RESP_EXECUTE;
	}
	v = memreg_check(sib_engine_memreg(c->qp->eng), &req, &g);
	if (v != MEMREG_OK)
		return rkey_refused(c, &req, v, &g);
	/* ODP: a READ's pages are faulted in now, so that a hole is NAKed
	 * (Remote Access Error) before any response leaves; a WRITE's and an
	 * atomic's fail as they are placed. */
	if (f & IB_OPF_READ)
		v = memreg_grant_fault_in(&g, req.len, false);
	memreg_release(sib_engine_memreg(c->qp->eng), &g);
	if (v != MEMREG_OK)
		return rkey_refused(c, &req, v, &g);
	return RESP_EXECUTE;
}

/* Places a SEND's payload into the receive WQE. */
static enum resp_state execute_send(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;
	const struct ib_packet *p = c->pkt;
	struct memreg_request bad;
	struct memreg_grant g;
	uint32_t pd = r->wqe_pd;

	if (c->flags & IB_OPF_FIRST)
		r->off = 0;
	if (p->payload_len) {
		enum memreg_verdict v =
			sib_sge_copy(qp, pd, r->sge, r->wqe.num_sge, r->off, (uint8_t *)p->payload,
				     p->payload_len, true, &bad, &g);

		if (v != MEMREG_OK) {
			sib_log_access(qp, "incoming SEND", &bad, v, &g);
			if (v == MEMREG_OUT_OF_BOUNDS && !bad.key) {
				c->recv_status = SIB_WC_LOC_LEN_ERR;
				c->why = "message longer than the receive WQE";
				return RESP_ERR_INVALID;
			}
			c->recv_status = SIB_WC_LOC_PROT_ERR;
			c->why = "receive WQE's L_Key refused";
			return RESP_ERR_OP;
		}
	}
	r->off += p->payload_len;
	r->kind = (c->flags & IB_OPF_LAST) ? SIB_MSG_NONE : SIB_MSG_SEND;
	return (c->flags & IB_OPF_LAST) ? RESP_COMPLETE : RESP_ACKNOWLEDGE;
}

static enum resp_state execute_write(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;
	const struct ib_packet *p = c->pkt;
	struct memreg_table *t = sib_engine_memreg(qp->eng);

	if (p->headers & IB_HDRBIT(IB_HDR_RETH)) {
		r->va = p->reth.VA;
		r->rkey = p->reth.R_Key;
		r->remaining = p->reth.DMALen;
		r->off = 0;
	}
	if (p->payload_len > r->remaining) {
		c->why = "WRITE carries more than DMALen";
		return RESP_ERR_INVALID;
	}
	if ((c->flags & IB_OPF_LAST) && p->payload_len != r->remaining) {
		c->why = "WRITE Last ends before DMALen";
		return RESP_ERR_INVALID;
	}
	if (p->payload_len) {
		struct memreg_request req = {
			.key = r->rkey,
			.remote = true,
			.pd = c->pd,
			.qpn = qp->qp_num,
			.va = r->va,
			.len = p->payload_len,
			.access = MEMREG_ACCESS_REMOTE_WRITE,
		};
		struct memreg_grant g;
		enum memreg_verdict v = memreg_check(t, &req, &g);

		if (v != MEMREG_OK)
			return rkey_refused(c, &req, v, &g);
		v = memreg_grant_write(&g, 0, p->payload, p->payload_len);
		memreg_release(t, &g);
		if (v != MEMREG_OK)
			return rkey_refused(c, &req, v, &g);
	}
	r->va += p->payload_len;
	r->remaining -= p->payload_len;
	r->off += p->payload_len;
	r->kind = (c->flags & IB_OPF_LAST) ? SIB_MSG_NONE : SIB_MSG_WRITE;
	if ((c->flags & IB_OPF_LAST) && (c->flags & IB_OPF_IMM))
		return RESP_COMPLETE;
	if (c->flags & IB_OPF_LAST)
		R(c)->msn++;
	return RESP_ACKNOWLEDGE;
}

/*
 * The resource for a new READ or atomic: the oldest one is recycled.  IBA
 * leaves the bound to the requester (max_rd_atomic no more than the
 * responder's max_dest_rd_atomic, 9.7.4.1.3 / 11.2.4.2); the responder
 * cannot tell when a requester has its answer, so it cannot see one
 * exceed it.  Recycling, as rxe does, is safe: a resource still sending
 * is never recycled (sib_rc_resp_rx takes no request then), and the
 * duplicate of a forgotten READ or atomic is dropped, never executed
 * again (duplicate()).  Its requester ends in RETRY_EXC_ERR.
 */
static struct sib_rd_res *new_res(struct sib_resp *r)
{
	struct sib_rd_res *res;

	/* max_dest_rd_atomic may have shrunk (SQD): stay among the first res_len. */
	if (r->res_next >= r->res_len)
		r->res_next = 0;
	res = &r->res[r->res_next];
	r->res_next = (r->res_next + 1) % r->res_len;
	memset(res, 0, sizeof(*res));
	res->valid = true;
	return res;
}

static enum resp_state execute_read(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	const struct ib_packet *p = c->pkt;
	struct sib_rd_res *res = new_res(r);
	uint32_t npkts = p->reth.DMALen ? (p->reth.DMALen + c->mtu - 1) / c->mtu : 1;

	res->first_psn = p->bth.PSN;
	res->last_psn = psn_add(p->bth.PSN, npkts - 1);
	res->va = p->reth.VA;
	res->rkey = p->reth.R_Key;
	res->pd = c->pd;
	res->len = p->reth.DMALen;
	res->sending = true;
	res->next_psn = res->first_psn;
	res->next_off = 0;
	/* A READ takes one PSN per response packet (IBA 9.7.4.1.3). */
	r->epsn = psn_add(res->last_psn, 1);
	r->msn++;
	send_read_responses(c->qp, res);
	return RESP_DONE;
}

/*
 * The 64-bit word an atomic or an ATOMIC WRITE acts on in place: its key
 * and rights checked, 8-byte aligned in host memory too (the CPU's atomic
 * needs it; a region maps VA to host linearly, so one registered at a
 * misaligned address breaks it even when the VA is aligned), and for ODP
 * its page faulted in.  NULL and *st when refused; else the caller
 * releases g.
 */
static uint64_t *word_grant(struct resp_ctx *c, uint32_t key, uint64_t va, uint32_t access,
			    const char *what, struct memreg_grant *g, enum resp_state *st)
{
	struct memreg_table *t = sib_engine_memreg(c->qp->eng);
	struct memreg_request req = {
		.key = key,
		.remote = true,
		.pd = c->pd,
		.qpn = c->qp->qp_num,
		.va = va,
		.len = 8,
		.access = access,
	};
	enum memreg_verdict v = memreg_check(t, &req, g);

	if (v == MEMREG_OK && ((uintptr_t)g->host & 7)) {
		memreg_release(t, g);
		c->why = what;
		*st = RESP_ERR_INVALID;
		return NULL;
	}
	if (v == MEMREG_OK) {
		v = memreg_grant_fault_in(g, 8, true);
		if (v != MEMREG_OK)
			memreg_release(t, g);
	}
	if (v != MEMREG_OK) {
		*st = rkey_refused(c, &req, v, g);
		return NULL;
	}
	return (uint64_t *)(void *)g->host;
}

static enum resp_state execute_atomic(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;
	const struct ib_packet *p = c->pkt;
	struct memreg_table *t = sib_engine_memreg(qp->eng);
	struct memreg_grant g;
	enum resp_state st;
	uint64_t orig, *target = word_grant(c, p->atomiceth.R_Key, p->atomiceth.VA,
					    MEMREG_ACCESS_REMOTE_ATOMIC,
					    "atomic target not 8-byte aligned in host memory", &g, &st);

	if (!target)
		return st;
	if ((p->bth.OpCode & 0x1f) == IB_OP_CMP_SWAP) {
		orig = p->atomiceth.CmpDt;
		__atomic_compare_exchange_n(target, &orig, p->atomiceth.SwapDt, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(target, p->atomiceth.SwapDt, __ATOMIC_SEQ_CST);
	}
	memreg_release(t, &g);

	struct sib_rd_res *res = new_res(r);

	res->kind = SIB_RES_ATOMIC;
	res->pd = c->pd;
	res->first_psn = res->last_psn = p->bth.PSN;
	res->orig = orig;
	r->epsn = psn_add(p->bth.PSN, 1);
	r->msn++;
	send_atomic_ack(qp, p->bth.PSN, orig);
	return RESP_DONE;
}

/* A resource for a FLUSH or ATOMIC WRITE, its PSN and MSN taken, and the
 * empty READ Response that acknowledges it. */
static enum resp_state answer_iba15(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_rd_res *res = new_res(r);
	uint32_t psn = c->pkt->bth.PSN;

	res->kind = SIB_RES_EMPTY_RSP;
	res->pd = c->pd;
	res->first_psn = res->last_psn = psn;
	r->epsn = psn_add(psn, 1);
	r->msn++;
	send_empty_read_rsp(c->qp, psn);
	return RESP_DONE;
}

/* IBA 1.5 ATOMIC WRITE: the 8 bytes land in one atomic store, ordered after
 * everything this QP placed before it (rxe: smp_store_release). */
static enum resp_state execute_atomic_write(struct resp_ctx *c)
{
	struct memreg_table *t = sib_engine_memreg(c->qp->eng);
	const struct ib_packet *p = c->pkt;
	struct memreg_grant g;
	enum resp_state st;
	uint64_t value, *target = word_grant(c, p->reth.R_Key, p->reth.VA, MEMREG_ACCESS_REMOTE_WRITE,
					     "ATOMIC WRITE target not 8-byte aligned in host memory",
					     &g, &st);

	if (!target)
		return st;
	memcpy(&value, p->payload, 8); /* the bytes as sent, not a number */
	__atomic_store_n(target, value, __ATOMIC_RELEASE);
	memreg_release(t, &g);
	return answer_iba15(c);
}

/*
 * IBA 1.5 FLUSH: what this QP placed before it is visible to every CPU
 * once the fence below has run (global visibility).  Persistence cannot be
 * asked for: no region here has FLUSH_PERSISTENT (memreg refuses it at
 * registration), so chk_rkey has refused such a FLUSH already.
 */
static enum resp_state execute_flush(struct resp_ctx *c)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return answer_iba15(c);
}

static enum resp_state execute(struct resp_ctx *c)
{
	uint32_t f = c->flags;

	if (f & IB_OPF_SEND)
		return execute_send(c);
	if (f & IB_OPF_WRITE)
		return execute_write(c);
	if (f & IB_OPF_READ)
		return execute_read(c);
	if (f & IB_OPF_ATOMIC)
		return execute_atomic(c);
	if (f & IB_OPF_ATOMIC_WRITE)
		return execute_atomic_write(c);
	if (f & IB_OPF_FLUSH)
		return execute_flush(c);
	c->why = "opcode not served by an RC responder";
	return RESP_ERR_INVALID;
}

/* The receive completion of a SEND or WRITE with immediate (IBA 11.4.2.1). */
static enum resp_state complete(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;
	const struct ib_packet *p = c->pkt;
	struct sib_cqe cqe = {
		.status = SIB_WC_SUCCESS,
		.opcode = (c->flags & IB_OPF_WRITE) ? SIB_WC_RECV_RDMA_WITH_IMM : SIB_WC_RECV,
		.byte_len = (uint32_t)r->off,
		.src_qp = qp->attr.dest_qp_num,
		.slid = p->lrh.SLID,
		.sl = p->lrh.SL,
	};

	if (c->flags & IB_OPF_IMM) {
		cqe.wc_flags |= SIB_WC_WITH_IMM;
		cqe.imm_data = __builtin_bswap32(p->immdt.ImmDt);
	}
	if (c->flags & IB_OPF_INV) {
		enum memreg_verdict v = memreg_mw_invalidate(sib_engine_memreg(qp->eng),
							     p->ieth.R_Key, true, qp->qp_num,
							     c->pd);

		if (v != MEMREG_OK) {
			sib_warn("SEND with invalidate on QP 0x%06x: R_Key 0x%06x: %s", qp->qp_num,
				 p->ieth.R_Key, memreg_verdict_str(v));
			c->recv_status = SIB_WC_REM_INV_REQ_ERR;
			c->why = "invalidation refused";
			return RESP_ERR_INVALID;
		}
		cqe.wc_flags |= SIB_WC_WITH_INV;
		cqe.imm_data = p->ieth.R_Key;
	}
	r->have_wqe = false;
	r->msn++;
	sib_recv_complete(qp, &r->wqe, &cqe, p->bth.SE);
	return RESP_ACKNOWLEDGE;
}

static enum resp_state acknowledge(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;

	r->epsn = psn_add(c->pkt->bth.PSN, 1);
	/* Coalesced: only when the requester asks (IBA 9.7.5.1.1). */
	if (c->pkt->bth.A)
		send_ack(qp, c->pkt->bth.PSN, ack_syndrome());
	return RESP_DONE;
}

static struct sib_rd_res *find_res(struct sib_resp *r, uint32_t psn, enum sib_res_kind kind)
{
	for (uint32_t i = 0; i < r->res_len; i++) {
		struct sib_rd_res *res = &r->res[i];

		if (res->valid && res->kind == kind && psn_diff(psn, res->first_psn) >= 0 &&
		    psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* IBA 9.7.5.1.4: duplicates are answered, never executed twice. */
static enum resp_state duplicate(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;
	const struct ib_packet *p = c->pkt;

	sib_engine_count(qp->eng, &sib_engine_ctrs(qp->eng)->rx_duplicates);
	if (c->flags & IB_OPF_READ) {
		struct sib_rd_res *res = find_res(r, p->bth.PSN, SIB_RES_READ);
		struct memreg_request req = {
			.key = p->reth.R_Key,
			.remote = true,
			.qpn = qp->qp_num,
			.va = p->reth.VA,
			.len = p->reth.DMALen,
			.access = MEMREG_ACCESS_REMOTE_READ,
		};
		struct memreg_grant g;

		if (!res)
			return RESP_DONE; /* forgotten: drop (as an atomic, below) */
		req.pd = res->pd;
		/* A zero-length READ is answered again unchecked, as at first (C9-88). */
		if (req.len) {
			if (memreg_check(sib_engine_memreg(qp->eng), &req, &g) != MEMREG_OK)
				return RESP_DONE;
			memreg_release(sib_engine_memreg(qp->eng), &g);
		}
		/* Executed again from the PSN asked for, with its RETH. */
		res->va = p->reth.VA;
		res->len = p->reth.DMALen;
		res->rkey = p->reth.R_Key;
		res->first_psn = p->bth.PSN;
		res->next_psn = p->bth.PSN;
		res->next_off = 0;
		res->sending = true;
		send_read_responses(qp, res);
		return RESP_DONE;
	}
	if (c->flags & IB_OPF_ATOMIC) {
		struct sib_rd_res *res = find_res(r, p->bth.PSN, SIB_RES_ATOMIC);

		/*
		 * Never executed twice (IBA 9.7.5.1.4): answered from the saved
		 * result, or, once that resource was recycled, silently dropped
		 * (as rxe does).  Not NAKed: a responder NAKs only the request at
		 * its expected PSN (IBA 9.7.5.2), and an Invalid Request NAK
		 * would end a QP whose peer merely had a stale copy delayed in
		 * the fabric.  A requester that still waits for this answer
		 * exceeded max_dest_rd_atomic; it ends in RETRY_EXC_ERR.
		 */
		if (res)
			send_atomic_ack(qp, p->bth.PSN, res->orig);
		else
			sib_dbg("responder QP 0x%06x: duplicate atomic PSN 0x%06x: result no longer "
				"saved (more than max_dest_rd_atomic %u outstanding?), dropped",
				qp->qp_num, p->bth.PSN, r->res_len);
		return RESP_DONE;
	}
	if (c->flags & (IB_OPF_ATOMIC_WRITE | IB_OPF_FLUSH)) {
		/* Answered again, never executed again: a later store by the
		 * region's owner must not be overwritten by a stale copy (rxe
		 * cites oA19-14/15).  Forgotten: dropped, as an atomic. */
		if (find_res(r, p->bth.PSN, SIB_RES_EMPTY_RSP))
			send_empty_read_rsp(qp, p->bth.PSN);
		return RESP_DONE;
	}
	/* SEND / WRITE: acknowledge again what we have (IBA 9.7.5.1.4). */
	send_ack(qp, psn_add(r->epsn, SIB_PSN_MASK), ack_syndrome());
	return RESP_DONE;
}

static enum resp_state nak_seq(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);

	/* One NAK per missing PSN (IBA 9.7.5.2.1), then silence until it comes. */
	if (!r->nak_sent) {
		r->nak_sent = true;
		sib_engine_count(c->qp->eng, &sib_engine_ctrs(c->qp->eng)->tx_seq_naks);
		send_ack(c->qp, r->epsn, ib_aeth_syndrome(IB_AETH_NAK, IB_NAK_PSN_SEQ_ERR));
	}
	return RESP_DONE;
}

static enum resp_state rnr(struct resp_ctx *c)
{
	struct sib_resp *r = R(c);

	sib_engine_count(c->qp->eng, &sib_engine_ctrs(c->qp->eng)->tx_rnr_naks);
	/* The packet is not accepted: epsn stays, later packets are dropped
	 * without NAK until the requester starts again here. */
	r->nak_sent = true;
	send_ack(c->qp, c->pkt->bth.PSN,
		 ib_aeth_syndrome(IB_AETH_RNR_NAK, c->qp->attr.min_rnr_timer));
	return RESP_DONE;
}

/* IBA 9.7.5.2.2-5: NAK, then the responder's QP goes to the error state. */
static enum resp_state error(struct resp_ctx *c, uint8_t nak, enum sib_event ev)
{
	struct sib_resp *r = R(c);
	struct sib_qp *qp = c->qp;

	sib_warn("responder QP 0x%06x: PSN 0x%06x %s: %s; NAK and QP to error", qp->qp_num,
		 c->pkt->bth.PSN, c->pkt->op->name, c->why ? c->why : "error");
	send_ack(qp, c->pkt->bth.PSN, ib_aeth_syndrome(IB_AETH_NAK, nak));
	if (r->have_wqe) {
		struct sib_cqe cqe = {
			.status = c->recv_status ? c->recv_status : SIB_WC_REM_INV_REQ_ERR,
			.opcode = SIB_WC_RECV,
			.byte_len = 0,
			.src_qp = qp->attr.dest_qp_num,
		};

		r->have_wqe = false;
		sib_recv_complete(qp, &r->wqe, &cqe, false);
	}
	sib_qp_enter_error_locked(qp);
	sib_event_raise(qp->sink, ev, qp->user, 0);
	return RESP_DONE;
}

/* The XRC SRQ an XRC request names, if it is one of the QP's domain. */
static struct sib_srq *xrc_srq_of(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct sib_numtab *t = sib_engine_srqns(qp->eng);
	struct sib_srq *srq;

	if (!t || !(pkt->headers & IB_HDRBIT(IB_HDR_XRCETH)))
		return NULL;
	srq = sib_numtab_lookup(t, pkt->xrceth.XRCSRQ);
	if (!srq || !sib_srq_is_xrc(srq) || sib_srq_xrcd(srq) != qp->xrcd)
		return NULL;
	return srq;
}

void sib_rc_resp_rx(struct sib_qp *qp, const struct ib_packet *pkt)
{
	struct resp_ctx c = {
		.qp = qp,
		.pkt = pkt,
		.flags = pkt->op->flags,
		.mtu = sib_qp_mtu(qp),
		.pd = qp->pd,
	};
	enum resp_state s = RESP_CHK_PSN;

	if (qp->attr.qp_state == SIB_QPS_ERR)
		return;
	/* Responses go out in PSN order: while a READ's responses wait for
	 * room, later requests are dropped (the requester resends them). */
	sib_rc_resp_run(qp);
	if (reads_pending(qp))
		return;
	if (qp->type == SIB_QPT_XRC_RECV) {
		qp->resp.xrc_srq = xrc_srq_of(qp, pkt);
		if (qp->resp.xrc_srq)
			c.pd = sib_srq_pd(qp->resp.xrc_srq);
	}
	while (s != RESP_DONE) {
		switch (s) {
		case RESP_CHK_PSN:
			s = chk_psn(&c);
			break;
		case RESP_CHK_XRC:
			s = chk_xrc(&c);
			break;
		case RESP_CHK_OP_SEQ:
			s = chk_op_seq(&c);
			break;
		case RESP_CHK_OP_VALID:
			s = chk_op_valid(&c);
			break;
		case RESP_CHK_LENGTH:
			s = chk_length(&c);
			break;
		case RESP_CHK_RESOURCE:
			s = chk_resource(&c);
			break;
		case RESP_CHK_RKEY:
			s = chk_rkey(&c);
			break;
		case RESP_EXECUTE:
			s = execute(&c);
			break;
		case RESP_COMPLETE:
			s = complete(&c);
			break;
		case RESP_ACKNOWLEDGE:
			s = acknowledge(&c);
			break;
		case RESP_DUPLICATE:
			s = duplicate(&c);
			break;
		case RESP_NAK_SEQ:
			s = nak_seq(&c);
			break;
		case RESP_RNR:
			s = rnr(&c);
			break;
		case RESP_ERR_INVALID:
			s = error(&c, IB_NAK_INVALID_REQUEST, SIB_EV_QP_REQ_ERR);
			break;
		case RESP_ERR_ACCESS:
			s = error(&c, IB_NAK_REMOTE_ACCESS_ERR, SIB_EV_QP_ACCESS_ERR);
			break;
		case RESP_ERR_OP:
			s = error(&c, IB_NAK_REMOTE_OP_ERR, SIB_EV_QP_FATAL);
			break;
		case RESP_DONE:
			break;
		}
	}
	qp->resp.xrc_srq = NULL;
}

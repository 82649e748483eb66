/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The checks every data packet passes before any transport looks at it
 * (IBA Vol 1 9.6 "Packet transport header validation" and 9.6.1.1), then
 * dispatch: responses to the completer, requests to the responder of the
 * QP's transport.  Also the receive-WQE helpers the responders share.
 */
#include <errno.h>

#include "base/log.h"
#include "transport/mcast.h"
#include "transport/numtab.h"
#include "transport/qp_impl.h"
#include "transport/rxq.h"
#include "transport/srq.h"

/* Which QP types accept which BTH transport (IBA 9.6: "QP type matches"). */
static bool transport_matches(const struct sib_qp *qp, const struct ib_opcode_info *op)
{
	switch (op->transport) {
	case IB_TRANSPORT_RC:
		return qp->type == SIB_QPT_RC;
	case IB_TRANSPORT_UC:
		return qp->type == SIB_QPT_UC;
	case IB_TRANSPORT_UD:
		return qp->type == SIB_QPT_UD;
	case IB_TRANSPORT_XRC:
		/* An XRC initiator only requests, an XRC target only responds (IBA 9.8.4). */
		return (op->flags & IB_OPF_RESPONSE) ? qp->type == SIB_QPT_XRC_SEND
						     : qp->type == SIB_QPT_XRC_RECV;
	default:
		return false;
	}
}

/* IBA 10.3.1: requests are received in RTR, RTS, SQD and SQE; responses
 * only where the send queue works (RTS, SQD, SQE). */
static bool state_receives(const struct sib_qp *qp, bool response)
{
	switch (qp->attr.qp_state) {
	case SIB_QPS_RTR:
		return !response;
	case SIB_QPS_RTS:
	case SIB_QPS_SQD:
	case SIB_QPS_SQE:
		return true;
	default:
		return false;
	}
}

/*
 * IBA 9.6.1.1 / 10.9.3: P_Keys match when their low 15 bits are equal and
 * at least one of the two is a full member (bit 15 set).
 */
static bool pkey_matches(uint16_t a, uint16_t b)
{
	if ((a & 0x7fff) == 0 || (a & 0x7fff) != (b & 0x7fff))
		return false;
	return (a & 0x8000) || (b & 0x8000);
}

static uint16_t qp_pkey(struct sib_qp *qp)
{
	uint16_t pkey = SIB_PKEY_DEFAULT;

	sib_port_pkey(sib_engine_port(qp->eng), qp->attr.pkey_index, &pkey);
	return pkey;
}

/*
 * The source check (engine.h): the packet's UDP sender must be where its
 * source lives.  Softib's stand-in for a fabric's cabling: on a real
 * subnet a packet with the peer's SLID can only arrive over the peer's
 * path; here anyone can send a datagram, so the sender's endpoint must be
 * the one the SA placed the source at.  (Spoofed UDP source addresses are
 * out of reach of this check: softib-subnet(7).)
 */
#define SIB_SRC_MEMO_NS 1000000000ull

/* What the receive checks decided. */
enum rx_verdict {
	RX_PASS,
	RX_DROP,
	RX_WAIT, /* its source is being asked: it waits in its QP's queue (rxq.h) */
};

/* Where LID lid lives is being asked: the datagram waits for the answer,
 * unless its time is up (last). */
static enum rx_verdict source_unknown(struct sib_engine *eng, struct sib_qp *qp,
				      const struct ib_packet *pkt, const struct sib_endpoint *from,
				      int rc, bool last)
{
	char e[SIB_ENDPOINT_STRLEN];

	if (rc == -EAGAIN && !last)
		return RX_WAIT;
	sib_engine_count(eng, &sib_engine_ctrs(eng)->rx_unknown_source);
	sib_dbg("rx QP 0x%06x: %s from %s: where LID 0x%04x lives is not known (%d%s), dropped",
		qp->qp_num, pkt->op->name, sib_endpoint_str(from, e), pkt->lrh.SLID, rc,
		rc == -EAGAIN ? ": the SA did not answer in time" : "");
	return RX_DROP;
}

static enum rx_verdict source_ok(struct sib_engine *eng, struct sib_qp *qp,
				 const struct ib_packet *pkt, const struct sib_endpoint *from,
				 bool last)
{
	struct sib_endpoint ep;
	char e[SIB_ENDPOINT_STRLEN];
	int rc;

	if (!from)
		return RX_PASS;
	/* A multicast looped back from this port's own link (mcast.h). */
	if (sib_lid_is_multicast(pkt->lrh.DLID) && pkt->lrh.SLID == sib_engine_port(eng)->LID &&
	    sib_endpoint_equal(from, &sib_engine_link(eng)->local))
		return RX_PASS;
	if (qp->type == SIB_QPT_UD) {
		uint64_t now = sib_engine_now(eng);

		if (qp->src_until > now && qp->src_lid == pkt->lrh.SLID &&
		    sib_endpoint_equal(&qp->src_ep, from))
			return RX_PASS;
		rc = sib_engine_lookup(eng, pkt->lrh.SLID, false, &ep);
		if (!rc && sib_endpoint_equal(&ep, from)) {
			qp->src_lid = pkt->lrh.SLID;
			qp->src_ep = ep;
			qp->src_until = now + SIB_SRC_MEMO_NS;
			return RX_PASS;
		}
		if (!rc) /* the LID may have moved: have the SA asked again */
			sib_engine_lookup(eng, pkt->lrh.SLID, true, &ep);
	} else if (!qp->dest_valid) {
		/* The SA had not placed the peer by RTR: ask now, and the
		 * request waits for the answer as a datagram does (a starved
		 * SM must not spend the peer's retries). */
		rc = sib_engine_lookup(eng, qp->attr.ah_attr.DLID, false, &ep);
		if (!rc) {
			qp->dest = ep;
			__atomic_store_n(&qp->dest_valid, true, __ATOMIC_RELEASE);
		}
	} else {
		rc = 0;
		ep = qp->dest;
	}
	if (rc)
		return source_unknown(eng, qp, pkt, from, rc, last);
	if (sib_endpoint_equal(&ep, from))
		return RX_PASS;
	sib_engine_count(eng, &sib_engine_ctrs(eng)->rx_wrong_endpoint);
	sib_dbg("rx QP 0x%06x: %s with SLID 0x%04x came from %s, not from where that LID lives, "
		"dropped",
		qp->qp_num, pkt->op->name, pkt->lrh.SLID, sib_endpoint_str(from, e));
	return RX_DROP;
}

static enum rx_verdict checks_pass(struct sib_engine *eng, struct sib_qp *qp,
				   const struct ib_packet *pkt, const struct sib_endpoint *from,
				   bool last)
{
	struct sib_engine_counters *c = sib_engine_ctrs(eng);
	const struct ib_opcode_info *op = pkt->op;
	bool response = (op->flags & IB_OPF_RESPONSE) != 0;

	if (!transport_matches(qp, op)) {
		sib_engine_count(eng, &c->rx_bad_transport);
		sib_trace("rx QP 0x%06x: %s packet on a %s QP, dropped", qp->qp_num, op->name,
			  sib_qp_type_name(qp->type));
		return RX_DROP;
	}
	if (!state_receives(qp, response)) {
		sib_engine_count(eng, &c->rx_bad_state);
		return RX_DROP;
	}
	if (!pkey_matches(pkt->bth.P_Key, qp_pkey(qp))) {
		sib_engine_count(eng, &c->P_KeyViolations);
		sib_engine_report_bad_pkey(eng, pkt);
		sib_dbg("rx QP 0x%06x: P_Key 0x%04x does not match the QP's 0x%04x (IBA 9.6.1.1), "
			"dropped",
			qp->qp_num, pkt->bth.P_Key, qp_pkey(qp));
		return RX_DROP;
	}
	if (qp->type == SIB_QPT_UD) {
		/* IBA 9.6.1.1 / 10.2.5: the datagram's Q_Key must equal the QP's. */
		if (!(pkt->headers & IB_HDRBIT(IB_HDR_DETH)) ||
		    pkt->deth.Q_Key != qp->attr.qkey) {
			sib_engine_count(eng, &c->Q_KeyViolations);
			sib_dbg("rx QP 0x%06x: Q_Key 0x%08x does not match the QP's 0x%08x, dropped",
				qp->qp_num, pkt->deth.Q_Key, qp->attr.qkey);
			return RX_DROP;
		}
		return source_ok(eng, qp, pkt, from, last);
	}
	/* Connected QPs take packets only from their peer (IBA 9.6.1.2). */
	if (pkt->lrh.SLID != qp->attr.ah_attr.DLID ||
	    pkt->lrh.DLID != sib_engine_port(eng)->LID) {
		sib_engine_count(eng, &c->rx_bad_source);
		sib_trace("rx QP 0x%06x: SLID 0x%04x is not the peer 0x%04x, dropped", qp->qp_num,
			  pkt->lrh.SLID, qp->attr.ah_attr.DLID);
		return RX_DROP;
	}
	return source_ok(eng, qp, pkt, from, last);
}

/* Applies one datagram to qp, which the caller holds: the receive checks,
 * then the QP's transport (rxq.h's apply function; arg is the QP). */
static enum sib_rxq_verdict apply(void *arg, const struct ib_packet *pkt,
				  const struct sib_endpoint *from, bool last)
{
	struct sib_qp *qp = arg;
	struct sib_engine *eng = qp->eng;
	enum rx_verdict v;

	/* A QP that blocks self loopback skips the multicasts it sent itself. */
	if (qp->block_self_mcast_lb && sib_lid_is_multicast(pkt->lrh.DLID) &&
	    pkt->lrh.SLID == sib_engine_port(eng)->LID && pkt->deth.SrcQP == qp->qp_num)
		return SIB_RXQ_DONE;
	v = checks_pass(eng, qp, pkt, from, last);
	if (v == RX_WAIT)
		return SIB_RXQ_WAIT;
	if (v != RX_PASS)
		return SIB_RXQ_DONE;
	switch (qp->type) {
	case SIB_QPT_RC:
	case SIB_QPT_XRC_SEND:
	case SIB_QPT_XRC_RECV:
		if (pkt->op->flags & IB_OPF_RESPONSE) {
			sib_rc_comp_rx(qp, pkt);
			sib_qp_sqd_check(qp); /* an ACK may end a drain */
		} else {
			sib_rc_resp_rx(qp, pkt);
		}
		break;
	case SIB_QPT_UC:
		sib_uc_resp_rx(qp, pkt);
		break;
	case SIB_QPT_UD:
		sib_ud_resp_rx(qp, pkt);
		break;
	default:
		break;
	}
	return SIB_RXQ_DONE;
}

void sib_qp_unlock(struct sib_qp *qp)
{
	struct sib_engine *eng = qp->eng;
	bool ran = false;

	for (;;) {
		if (eng && sib_rxq_runnable(&qp->rxq)) {
			/* The engine's QP lock keeps what a datagram names by
			 * number (an XRC SRQ) alive while it is applied; a
			 * reader that holds it already takes it again (the
			 * rwlock prefers readers, so this never waits). */
			sib_engine_rx_lock(eng);
			sib_rxq_run(&qp->rxq, sib_engine_now(eng), apply, qp);
			sib_engine_rx_unlock(eng);
			ran = true;
		}
		pthread_mutex_unlock(&qp->lock);
		/* Pairs with the fence after an entry is added (rxq.c): either
		 * it is seen here, or its adder's trylock finds the QP free. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!eng || !sib_rxq_runnable(&qp->rxq) || pthread_mutex_trylock(&qp->lock))
			break;
	}
	/* Whatever thread applied them sends what they made (ACKs), as the
	 * transmit rule asks of a thread about to return to its caller. */
	if (ran)
		sib_engine_flush(eng);
}

/* A datagram that waits for its source: the engine looks at the QP again
 * when the SA answers (sib_engine_source_known) or its time is up. */
static void wait_for_source(struct sib_engine *eng, struct sib_qp *qp, const struct ib_packet *pkt,
			    const struct sib_endpoint *from)
{
	struct sib_engine_counters *c = sib_engine_ctrs(eng);
	uint64_t now = sib_engine_now(eng);

	if (!sib_rxq_add_waiting(&qp->rxq, pkt, from, now)) {
		sib_engine_count(eng, &c->rx_queue_full);
		sib_dbg("rx QP 0x%06x: %s from LID 0x%04x waits for the SA to place its source, and "
			"%u datagrams wait already; dropped",
			qp->qp_num, pkt->op->name, pkt->lrh.SLID, SIB_RXQ_MAX);
		return;
	}
	sib_engine_count(eng, &c->rx_waited);
	sib_engine_want_tick(eng, now + SIB_RXQ_WAIT_NS);
}

/*
 * The receive rule (docs/architecture.md): the datagram goes to its QP.
 * Applied at once when the QP is free and nothing of its source waits in
 * its queue; else copied to the queue, which the QP's holder applies
 * before it lets go.  Under the engine's QP lock (the QP stays alive).
 */
static void deliver(struct sib_engine *eng, struct sib_qp *qp, const struct ib_packet *pkt,
		    const struct sib_endpoint *from)
{
	struct sib_engine_counters *c = sib_engine_ctrs(eng);

	if (pthread_mutex_trylock(&qp->lock)) {
		if (sib_rxq_add(&qp->rxq, pkt, from)) {
			sib_engine_count(eng, &c->rx_queued);
			if (!pthread_mutex_trylock(&qp->lock))
				sib_qp_unlock(qp); /* let go meanwhile: apply it here */
			return;
		}
		pthread_mutex_lock(&qp->lock); /* the queue is full: wait for the QP */
	}
	/* Held: the queue is not being run, so what it holds is exact. */
	if (sib_rxq_blocks(&qp->rxq, pkt->lrh.SLID)) {
		if (sib_rxq_add(&qp->rxq, pkt, from)) {
			sib_engine_count(eng, &c->rx_queued);
		} else {
			sib_engine_count(eng, &c->rx_queue_full);
			sib_dbg("rx QP 0x%06x: %s from LID 0x%04x would wait behind %u datagrams of "
				"its QP; dropped",
				qp->qp_num, pkt->op->name, pkt->lrh.SLID, SIB_RXQ_MAX);
		}
	} else if (apply(qp, pkt, from, false) == SIB_RXQ_WAIT) {
		wait_for_source(eng, qp, pkt, from);
	}
	sib_qp_unlock(qp);
}

/* Each attached QP of the group gets its copy through its own checks
 * (mcast.h). */
static void mcast_rx(struct sib_engine *eng, const struct ib_packet *pkt,
		     const struct sib_endpoint *from)
{
	struct sib_engine_counters *c = sib_engine_ctrs(eng);
	uint32_t qpns[SIB_MAX_MCAST_QP_ATTACH];
	unsigned n;

	if (!sib_lid_is_multicast(pkt->lrh.DLID) || pkt->bth.DestQP != SIB_MCAST_QPN) {
		sib_engine_count(eng, &c->rx_bad_mcast);
		sib_dbg("rx: DLID 0x%04x with DestQP 0x%06x: a multicast needs both a multicast "
			"DLID and QP 0xFFFFFF (IBA 9.6.1.1), dropped",
			pkt->lrh.DLID, pkt->bth.DestQP);
		return;
	}
	sib_engine_count(eng, &c->rx_mcast);
	n = sib_mcast_qpns(eng, pkt->has_grh ? pkt->grh.DGID.raw : NULL, pkt->lrh.DLID, qpns,
			   SIB_MAX_MCAST_QP_ATTACH);
	if (!n) {
		sib_engine_count(eng, &c->rx_bad_mcast);
		sib_trace("rx: multicast to MLID 0x%04x: no QP attached here, dropped",
			  pkt->lrh.DLID);
		return;
	}
	sib_engine_rx_lock(eng);
	for (unsigned i = 0; i < n; i++) {
		struct sib_qp *qp = sib_engine_rx_find(eng, qpns[i]);

		if (qp && qp->eng == eng)
			deliver(eng, qp, pkt, from);
	}
	sib_engine_rx_unlock(eng);
}

void sib_engine_rx(struct sib_engine *eng, const struct ib_packet *pkt,
		   const struct sib_endpoint *from)
{
	struct sib_qp *qp;

	if (!pkt->op)
		return;
	if (pkt->bth.DestQP == SIB_MCAST_QPN || sib_lid_is_multicast(pkt->lrh.DLID)) {
		mcast_rx(eng, pkt, from);
		return;
	}
	sib_engine_rx_lock(eng);
	qp = sib_engine_rx_find(eng, pkt->bth.DestQP);
	if (qp && qp->eng == eng)
		deliver(eng, qp, pkt, from);
	else
		sib_engine_count(eng, &sib_engine_ctrs(eng)->rx_no_qp);
	sib_engine_rx_unlock(eng);
}

void sib_engine_source_known(struct sib_engine *eng, uint16_t lid)
{
	(void)lid; /* every QP with something waiting looks again: they are few */
	sib_engine_rx_lock(eng);
	for (struct sib_qp *qp = sib_engine_qps(eng); qp; qp = qp->eng_next) {
		if (!__atomic_load_n(&qp->rxq.n, __ATOMIC_ACQUIRE))
			continue;
		sib_rxq_wake(&qp->rxq);
		if (!pthread_mutex_trylock(&qp->lock))
			sib_qp_unlock(qp);
	}
	sib_engine_rx_unlock(eng);
}

bool sib_recv_take(struct sib_qp *qp)
{
	struct sib_resp *r = &qp->resp;

	struct sib_srq *srq = qp->type == SIB_QPT_XRC_RECV ? r->xrc_srq : qp->srq;

	if (srq) {
		if (!sib_srq_take(srq, &r->wqe, r->sge))
			return false;
		if (qp->type == SIB_QPT_XRC_RECV)
			r->wqe_srqn = sib_srq_num(srq);
		/* IBA 10.2.9: an SRQ's WQEs are checked against its own PD,
		 * not the QP's. */
		r->wqe_pd = sib_srq_pd(srq);
	} else {
		r->wqe_pd = qp->pd;
		if (!qp->rq.count)
			return false;
		const struct sib_recv_wqe *w = sib_wq_at(&qp->rq, 0);

		r->wqe = *w;
		for (uint32_t i = 0; i < w->num_sge && i < SIB_MAX_SGE; i++)
			r->sge[i] = w->sge[i];
		sib_wq_pop(&qp->rq);
	}
	r->wqe.sge = r->sge;
	r->have_wqe = true;
	return true;
}

void sib_recv_complete(struct sib_qp *qp, const struct sib_recv_wqe *w, struct sib_cqe *c,
		       bool solicited)
{
	c->wr_id = w->wr_id;
	c->qp_num = qp->qp_num;
	c->pkey_index = qp->attr.pkey_index;
	struct sib_cq *cq = sib_recv_cq(qp);

	if (cq)
		sib_cq_push(cq, c, solicited);
}

struct sib_cq *sib_recv_cq(struct sib_qp *qp)
{
	struct sib_srq *srq;

	if (qp->type != SIB_QPT_XRC_RECV)
		return qp->recv_cq;
	/* XRC: the CQ of the XRC SRQ the WQE came from (IBA 9.8.4 / A14). */
	srq = qp->resp.xrc_srq;
	if ((!srq || sib_srq_num(srq) != qp->resp.wqe_srqn) && qp->eng && sib_engine_srqns(qp->eng))
		srq = sib_numtab_lookup(sib_engine_srqns(qp->eng), qp->resp.wqe_srqn);
	return srq ? sib_srq_cq(srq) : NULL;
}

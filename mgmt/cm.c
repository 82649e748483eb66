/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The IB CM's state machine (IBA Vol 1 12.9), one function per message
 * received and per consumer request; see cm.h for the rules it keeps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/log.h"
#include "mgmt/cm.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_send.h"
#include "mgmt/node.h"
#include "mgmt/sa_client.h"

static const struct sib_mad_agent cm_agent;

static const char *const state_names[SIB_CM_STATE_COUNT] = {
	[SIB_CM_IDLE] = "IDLE",
	[SIB_CM_LISTEN] = "LISTEN",
	[SIB_CM_REQ_SENT] = "REQ_SENT",
	[SIB_CM_REQ_RCVD] = "REQ_RCVD",
	[SIB_CM_MRA_REQ_SENT] = "MRA_REQ_SENT",
	[SIB_CM_MRA_REQ_RCVD] = "MRA_REQ_RCVD",
	[SIB_CM_REP_SENT] = "REP_SENT",
	[SIB_CM_REP_RCVD] = "REP_RCVD",
	[SIB_CM_MRA_REP_SENT] = "MRA_REP_SENT",
	[SIB_CM_MRA_REP_RCVD] = "MRA_REP_RCVD",
	[SIB_CM_ESTABLISHED] = "ESTABLISHED",
	[SIB_CM_DREQ_SENT] = "DREQ_SENT",
	[SIB_CM_DREQ_RCVD] = "DREQ_RCVD",
	[SIB_CM_TIMEWAIT] = "TIMEWAIT",
	[SIB_CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[SIB_CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
};

const char *sib_cm_state_name(enum sib_cm_state s)
{
	return (unsigned)s < SIB_CM_STATE_COUNT ? state_names[s] : "?";
}

const char *sib_cm_event_name(enum sib_cm_event_type t)
{
	static const char *const names[] = {
		"REQ_RECEIVED",	 "REP_RECEIVED",	 "RTU_RECEIVED",
		"USER_ESTABLISHED", "REJ_RECEIVED",	 "MRA_RECEIVED",
		"DREQ_RECEIVED", "DREP_RECEIVED",	 "TIMEWAIT_EXIT",
		"REQ_ERROR",	 "REP_ERROR",		 "DREQ_ERROR",
		"SIDR_REQ_RECEIVED", "SIDR_REQ_ERROR", "SIDR_REP_RECEIVED",
	};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

uint64_t sib_cm_time_ns(unsigned exp)
{
	if (exp > 31)
		exp = 31;
	return 4096ull << exp;
}

uint8_t sib_cm_ack_timeout(uint8_t packet_life_time, uint8_t ack_delay)
{
	unsigned t = packet_life_time + 1u;

	if (ack_delay > t)
		t = ack_delay;
	t++;
	return (uint8_t)(t > 31 ? 31 : t);
}

/* ---------------------------------------------------------------- ids */

/*
 * The tables (cm.h, "Bounds"): chains of ids by a 32-bit key.  A peer
 * picks its comm IDs and QPNs, so the bucket is a multiplicative hash of
 * the key, and a lookup compares everything it matches on.
 */
enum { SIB_CM_BY_LOCAL, SIB_CM_BY_REMOTE, SIB_CM_BY_QPN, SIB_CM_LISTENERS };

static unsigned bucket(uint32_t key)
{
	return (key * 2654435761u) >> (32 - SIB_CM_HASH_BITS);
}

static struct sib_cm_id *chain(struct sib_cm *cm, unsigned t, uint32_t key)
{
	return cm->table[t][bucket(key)];
}

static void table_del(struct sib_cm_id *id, unsigned t)
{
	struct sib_cm_id **pp;

	if (!(id->hashed & 1u << t))
		return;
	for (pp = &id->cm->table[t][bucket(id->hkey[t])]; *pp != id; pp = &(*pp)->hnext[t])
		;
	*pp = id->hnext[t];
	id->hashed &= (uint8_t)~(1u << t);
}

static void table_add(struct sib_cm_id *id, unsigned t, uint32_t key)
{
	struct sib_cm_id **head = &id->cm->table[t][bucket(key)];

	table_del(id, t);
	id->hkey[t] = key;
	id->hnext[t] = *head;
	*head = id;
	id->hashed |= (uint8_t)(1u << t);
}

/* After the peer's comm ID, CA GUID or QPN became known. */
static void rekey(struct sib_cm_id *id)
{
	table_add(id, SIB_CM_BY_REMOTE, id->remote_comm_id);
	table_add(id, SIB_CM_BY_QPN, id->remote_qpn);
}

/* Every state change goes here: it keeps the count of REQs that wait for
 * their consumer (SIB_CM_PENDING_MAX). */
static void set_state(struct sib_cm_id *id, enum sib_cm_state s)
{
	bool pending = s == SIB_CM_REQ_RCVD || s == SIB_CM_MRA_REQ_SENT;

	if (pending != id->pending_req) {
		id->pending_req = pending;
		if (pending)
			id->cm->pending++;
		else
			id->cm->pending--;
	}
	id->state = s;
}

static bool comm_id_used(struct sib_cm *cm, uint32_t v)
{
	for (struct sib_cm_id *id = chain(cm, SIB_CM_BY_LOCAL, v); id; id = id->hnext[SIB_CM_BY_LOCAL])
		if (id->local_comm_id == v)
			return true;
	return false;
}

/* Random (cm.h): one id must say nothing of the next, or a stranger who
 * saw one REQ could name the node's other connections. */
static uint32_t new_comm_id(struct sib_cm *cm)
{
	uint32_t v;

	do {
		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
			v = (uint32_t)random() ^ (uint32_t)sib_link_now_ns() * 2654435761u;
	} while (!v || comm_id_used(cm, v));
	return v;
}

struct sib_cm_id *sib_cm_create_id(struct sib_cm *cm, unsigned port_num, sib_cm_handler handler,
				   void *context)
{
	struct sib_cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->cm = cm;
	id->handler = handler;
	id->context = context;
	id->port_num = port_num;
	id->state = SIB_CM_IDLE;
	id->local_comm_id = new_comm_id(cm);
	table_add(id, SIB_CM_BY_LOCAL, id->local_comm_id);
	id->next = cm->ids;
	if (cm->ids)
		cm->ids->prev = id;
	cm->ids = id;
	return id;
}

/*
 * The TIMEWAIT timer (a request's retransmissions are the MAD layer's:
 * send_request).  A callback may already be on its way (taken off the
 * timer queue, waiting for the CM's lock) when the id re-arms or goes
 * away, so `pending` counts callbacks that may still run, and a callback
 * acts only while the id is armed and its deadline has come.
 */
static void cm_timer_fn(void *arg);

static void disarm(struct sib_cm_id *id)
{
	if (id->pending && sib_timer_cancel(id->cm->node->timers, &id->timer))
		id->pending--;
	id->timer_armed = false;
}

static void arm(struct sib_cm_id *id, uint64_t ns)
{
	disarm(id);
	id->deadline_ns = sib_link_now_ns() + ns;
	id->timer_armed = true;
	id->pending++;
	sib_timer_arm(id->cm->node->timers, &id->timer, ns, cm_timer_fn, id);
}

/* What the id's sends are posted with: its comm ID, not the id, which may
 * be gone by the time the MAD layer hears of the send again. */
static void *comm_context(const struct sib_cm_id *id)
{
	return (void *)(uintptr_t)id->local_comm_id;
}

/* The request in msg is answered, or no longer wanted: its send ends
 * (ib_cancel_mad; a send event already on its way finds send_tid moved). */
static void stop_request(struct sib_cm_id *id)
{
	if (id->send_tid)
		sib_mad_cancel(&id->cm->node->mads, id->send_tid, comm_context(id));
	id->send_tid = 0;
}

/* No request out and no timer: what a new state starts from. */
static void quiet(struct sib_cm_id *id)
{
	stop_request(id);
	disarm(id);
}

/* Forgets the id; its memory goes once no timer callback can reach it. */
static void id_free(struct sib_cm_id *id)
{
	struct sib_cm *cm = id->cm;

	if (id->prev)
		id->prev->next = id->next;
	else if (cm->ids == id)
		cm->ids = id->next;
	if (id->next)
		id->next->prev = id->prev;
	id->next = id->prev = NULL;
	for (unsigned t = 0; t <= SIB_CM_LISTENERS; t++)
		table_del(id, t);
	if (id->pending_req) {
		id->pending_req = false;
		cm->pending--;
	}
	quiet(id);
	if (id->pending)
		id->unlinked = true;
	else
		free(id);
}

/* A destroyed id leaves once nothing of its connection is left to keep. */
static void release_if_done(struct sib_cm_id *id)
{
	if (id->destroyed && id->state == SIB_CM_IDLE)
		id_free(id);
}

static int call_handler(struct sib_cm_id *id, struct sib_cm_event *ev)
{
	if (id->destroyed || !id->handler)
		return 0;
	return id->handler(id, ev);
}

/* The consumer hears of ev unless it let go; a nonzero answer destroys
 * the id.  False when the id may be gone: the caller must not touch it. */
static bool deliver(struct sib_cm_id *id, struct sib_cm_event *ev)
{
	if (!call_handler(id, ev))
		return true;
	sib_cm_destroy_id(id);
	return false;
}

static bool notify(struct sib_cm_id *id, enum sib_cm_event_type type)
{
	struct sib_cm_event ev = { .type = type, .addr = &id->addr };

	return deliver(id, &ev);
}

/* ---------------------------------------------------------------- sending */

static struct sib_link *port_link(struct sib_cm *cm, unsigned port_num)
{
	if (port_num < 1 || port_num > SIB_NUM_PORTS)
		return NULL;
	return cm->node->mgmt[port_num - 1].link;
}

static uint16_t port_lid(struct sib_cm *cm, unsigned port_num)
{
	struct sib_port *p = sib_node_port(cm->node, port_num);
	uint16_t lid;

	if (!p)
		return 0;
	pthread_mutex_lock(&cm->node->lock);
	lid = p->LID;
	pthread_mutex_unlock(&cm->node->lock);
	return lid;
}

/* A CM MAD with its common header (IBA 12.6.1: every message is a Send). */
static void mad_start(uint8_t *mad, uint16_t attr, uint64_t tid)
{
	struct ib_mad_hdr h;

	memset(mad, 0, IB_MAD_BYTES);
	sib_mad_request_hdr(&h, IB_MGMT_CLASS_CM, IB_CM_CLASS_VERSION, IB_MAD_METHOD_SEND, attr, 0);
	h.TransactionID = tid;
	ib_mad_hdr_encode(&h, mad);
}

static void send_to(struct sib_cm *cm, unsigned port_num, const struct sib_mad_addr *a,
		    const struct sib_endpoint *dst, const uint8_t *mad)
{
	struct sib_link *l = port_link(cm, port_num);
	int rc = l ? sib_mgmt_send(l, a, mad, dst) : -ENETDOWN;

	cm->counters.tx++;
	if (rc)
		sib_dbg("CM: sending %s failed: %s", ib_mad_attr_str(IB_MGMT_CLASS_CM, mad[16] << 8 | mad[17]),
			strerror(-rc));
	else
		sib_dbg("CM: sent %s to LID %u", ib_mad_attr_str(IB_MGMT_CLASS_CM, mad[16] << 8 | mad[17]),
			a->DLID);
}

static void send_id(struct sib_cm_id *id, const uint8_t *mad)
{
	send_to(id->cm, id->port_num, &id->addr, &id->peer, mad);
}

static enum sib_mad_verdict request_event(void *owner, const struct sib_mad_send_wc *wc);

/*
 * Sends the request in id->msg (TID id->tid) through the MAD layer: it
 * goes again after each wait of the peer's response time plus two packet
 * lifetimes, MaxCMRetries times, until the answer stops it (IBA 12.9:
 * REQ, REP, DREQ, SIDR_REQ are retransmitted; the answers are Sends of
 * their own, matched by comm ID, so the CM cancels the send itself).
 */
static void send_request(struct sib_cm_id *id)
{
	struct sib_cm *cm = id->cm;
	struct sib_mad_send_req req = {
		.port_num = id->port_num,
		.addr = id->addr,
		.dst = id->peer,
		.mad = id->msg,
		.tid = id->tid,
		.timeout_ns = id->resp_ns,
		.retries = id->max_retries,
		.fn = request_event,
		.context = comm_context(id),
	};
	const char *what = ib_mad_attr_str(IB_MGMT_CLASS_CM, id->msg[16] << 8 | id->msg[17]);
	int rc;

	quiet(id);
	cm->counters.tx++;
	rc = sib_mad_post(&cm->node->mads, &cm_agent, &req, NULL);
	if (rc) {
		sib_dbg("CM: sending %s failed: %s", what, strerror(-rc));
		return;
	}
	id->send_tid = id->tid;
	sib_dbg("CM: sent %s to LID %u", what, id->addr.DLID);
}

static void keep_reply(struct sib_cm_id *id, const uint8_t *mad)
{
	memcpy(id->reply, mad, IB_MAD_BYTES);
	id->reply_valid = true;
}

static void copy_pd(uint8_t *dst, size_t cap, const uint8_t *pd, unsigned len)
{
	if (pd && len)
		memcpy(dst, pd, len < cap ? len : cap);
}

static uint8_t msg_kind(enum sib_cm_state s)
{
	switch (s) {
	case SIB_CM_REQ_RCVD:
	case SIB_CM_MRA_REQ_SENT:
		return IB_CM_MSG_REQ;
	case SIB_CM_REP_RCVD:
	case SIB_CM_MRA_REP_SENT:
		return IB_CM_MSG_REP;
	default:
		return IB_CM_MSG_OTHER;
	}
}

static void build_rej(struct sib_cm_id *id, uint8_t *mad, uint16_t reason, const uint8_t *ari,
		      unsigned ari_len, const uint8_t *pd, unsigned len)
{
	struct ib_cm_rej rej;

	memset(&rej, 0, sizeof(rej));
	rej.LocalCommID = id->local_comm_id;
	rej.RemoteCommID = id->remote_comm_id;
	rej.MessageRejected = msg_kind(id->state);
	rej.Reason = reason;
	if (ari && ari_len) {
		if (ari_len > IB_CM_REJ_ARI_BYTES)
			ari_len = IB_CM_REJ_ARI_BYTES;
		memcpy(rej.ARI, ari, ari_len);
		rej.RejectedInfoLength = (uint8_t)ari_len;
	}
	copy_pd(rej.PrivateData, sizeof(rej.PrivateData), pd, len);
	mad_start(mad, IB_CM_ATTR_REJ, id->tid);
	ib_cm_rej_encode(&rej, mad + IB_CM_DATA_OFFSET);
}

/* A REJ to a message that has no id here: LocalCommID is the id the peer
 * named us by (0 for a REQ: IBA 12.6.7), so that the peer, which matches
 * both, takes it (Linux's cm_issue_rej does the same). */
static void reject_unknown(struct sib_cm *cm, unsigned port_num, const struct sib_mad_addr *a,
			   const struct sib_endpoint *from, uint64_t tid, uint32_t local_comm_id,
			   uint32_t remote_comm_id, uint8_t msg_rejected, uint16_t reason)
{
	struct sib_mad_addr ra;
	uint8_t mad[IB_MAD_BYTES];
	struct ib_cm_rej rej;

	memset(&rej, 0, sizeof(rej));
	rej.LocalCommID = local_comm_id;
	rej.RemoteCommID = remote_comm_id;
	rej.MessageRejected = msg_rejected;
	rej.Reason = reason;
	mad_start(mad, IB_CM_ATTR_REJ, tid);
	ib_cm_rej_encode(&rej, mad + IB_CM_DATA_OFFSET);
	sib_mad_addr_reply(a, port_lid(cm, port_num), &ra);
	send_to(cm, port_num, &ra, from, mad);
}

static void enter_timewait(struct sib_cm_id *id)
{
	set_state(id, SIB_CM_TIMEWAIT);
	stop_request(id);
	/* IBA 12.9.8.4: long enough for every packet of the connection to
	 * have left the fabric: the QP's ACK timeout. */
	arm(id, sib_cm_time_ns(id->local_ack_timeout ? id->local_ack_timeout : 16));
}

static void to_idle(struct sib_cm_id *id)
{
	quiet(id);
	set_state(id, SIB_CM_IDLE);
}

/* ---------------------------------------------------------------- consumer requests */

/* A consumer request the CM refuses: the one debug line cm.h promises,
 * naming the rule, then the error. */
__attribute__((format(printf, 4, 5))) static int refuse(const struct sib_cm_id *id,
							  const char *what, int err,
							  const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	sib_dbg("CM: %s on comm ID 0x%08x refused in %s: %s", what, id->local_comm_id,
		sib_cm_state_name(id->state), why);
	return err;
}

/* Private data beyond what the message carries (IBA 12.6, each layout). */
static int pd_too_long(const struct sib_cm_id *id, const char *what, unsigned len, unsigned max)
{
	return refuse(id, what, -EINVAL, "%u bytes of private data, the message carries %u", len,
		      max);
}

int sib_cm_listen(struct sib_cm_id *id, uint64_t service_id, uint64_t mask)
{
	if (id->state != SIB_CM_IDLE)
		return refuse(id, "listen", -EINVAL, "only an IDLE id listens");
	for (struct sib_cm_id *o = chain(id->cm, SIB_CM_LISTENERS, 0); o;
	     o = o->hnext[SIB_CM_LISTENERS])
		if (o->state == SIB_CM_LISTEN && !o->destroyed &&
		    ((o->service_id ^ service_id) & o->service_mask & mask) == 0)
			return refuse(id, "listen", -EADDRINUSE,
				      "ServiceID 0x%016llx/0x%016llx overlaps the listener's "
				      "0x%016llx/0x%016llx (comm ID 0x%08x)",
				      (unsigned long long)service_id, (unsigned long long)mask,
				      (unsigned long long)o->service_id,
				      (unsigned long long)o->service_mask, o->local_comm_id);
	id->service_id = service_id & mask;
	id->service_mask = mask;
	set_state(id, SIB_CM_LISTEN);
	table_add(id, SIB_CM_LISTENERS, 0);
	return 0;
}

static void path_to_req(const struct sib_cm_path *p, uint8_t ack_timeout,
			struct ib_cm_req_path *r)
{
	memset(r, 0, sizeof(*r));
	r->LocalPortLID = p->SLID;
	r->RemotePortLID = p->DLID;
	memcpy(r->LocalPortGID.raw, p->SGID, 16);
	memcpy(r->RemotePortGID.raw, p->DGID, 16);
	r->FlowLabel = p->FlowLabel;
	r->PacketRate = p->Rate;
	r->TrafficClass = p->TrafficClass;
	r->HopLimit = p->HopLimit;
	r->SL = p->SL;
	r->SubnetLocal = p->HopLimit <= 1;
	r->LocalACKTimeout = ack_timeout;
}

/* Peer response time + 2 packet lifetimes: how long a request waits. */
static uint64_t response_ns(uint8_t response_timeout, uint8_t plt)
{
	return sib_cm_time_ns(response_timeout) + 2 * sib_cm_time_ns(plt);
}

int sib_cm_send_req(struct sib_cm_id *id, const struct sib_cm_req_param *p)
{
	struct ib_cm_req req;

	if (id->state != SIB_CM_IDLE)
		return refuse(id, "REQ", -EINVAL, "a REQ starts from an IDLE id");
	if (p->private_data_len > IB_CM_REQ_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "REQ", p->private_data_len, IB_CM_REQ_PRIVATE_DATA_BYTES);
	if (p->transport != IB_CM_TRANSPORT_RC && p->transport != IB_CM_TRANSPORT_UC &&
	    p->transport != IB_CM_TRANSPORT_EXT)
		return refuse(id, "REQ", -EINVAL, "transport %u: the CM connects RC, UC and XRC QPs "
			      "(IBA 12.7.8, Annex A14)", p->transport);
	memset(&req, 0, sizeof(req));
	req.LocalCommID = id->local_comm_id;
	req.ServiceID = p->service_id;
	req.LocalCAGUID = id->cm->node->node_guid;
	req.LocalQPN = p->qpn;
	req.ResponderResources = p->responder_resources;
	req.InitiatorDepth = p->initiator_depth;
	req.RemoteCMResponseTimeout = p->timing.remote_cm_response_timeout;
	req.TransportServiceType = p->transport;
	if (p->transport == IB_CM_TRANSPORT_EXT)
		req.ExtendedTransportType = IB_CM_EXT_TRANSPORT_XRC;
	req.EndToEndFlowControl = p->flow_control;
	req.StartingPSN = p->starting_psn & 0xffffff;
	req.LocalCMResponseTimeout = p->timing.local_cm_response_timeout;
	req.RetryCount = p->retry_count > 7 ? 7 : p->retry_count;
	req.P_Key = p->path.P_Key;
	req.PathPacketPayloadMTU = p->path.MTU;
	req.RNRRetryCount = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	req.MaxCMRetries = p->timing.max_cm_retries > 15 ? 15 : p->timing.max_cm_retries;
	req.SRQ = p->srq;
	path_to_req(&p->path, p->local_ack_timeout, &req.Primary);
	copy_pd(req.PrivateData, sizeof(req.PrivateData), p->private_data, p->private_data_len);

	id->service_id = p->service_id;
	id->local_qpn = p->qpn;
	id->xrc = p->transport == IB_CM_TRANSPORT_EXT;
	id->path = p->path;
	id->peer = p->peer;
	id->local_ack_timeout = p->local_ack_timeout;
	id->tid = sib_mad_tid(&id->cm->node->mads, &cm_agent);
	id->max_retries = req.MaxCMRetries;
	id->resp_ns = response_ns(req.RemoteCMResponseTimeout, p->path.PacketLifeTime);
	sib_mad_addr_init(&id->addr, SIB_QP1, p->path.DLID, p->path.SLID);
	id->addr.P_Key = p->path.P_Key;
	id->addr.SL = p->path.SL;
	mad_start(id->msg, IB_CM_ATTR_REQ, id->tid);
	ib_cm_req_encode(&req, id->msg + IB_CM_DATA_OFFSET);
	set_state(id, SIB_CM_REQ_SENT);
	send_request(id);
	return 0;
}

int sib_cm_send_rep(struct sib_cm_id *id, const struct sib_cm_rep_param *p)
{
	struct ib_cm_rep rep;

	if (id->state != SIB_CM_REQ_RCVD && id->state != SIB_CM_MRA_REQ_SENT)
		return refuse(id, "REP", -EINVAL, "a REP answers a REQ received (IBA 12.9.5)");
	if (p->private_data_len > IB_CM_REP_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "REP", p->private_data_len, IB_CM_REP_PRIVATE_DATA_BYTES);
	memset(&rep, 0, sizeof(rep));
	rep.LocalCommID = id->local_comm_id;
	rep.RemoteCommID = id->remote_comm_id;
	if (id->xrc) { /* the kernel's cm_format_rep for an XRC target */
		rep.LocalEECN = p->qpn & 0xffffff;
		rep.SRQ = 1;
	} else {
		rep.LocalQPN = p->qpn;
	}
	rep.StartingPSN = p->starting_psn & 0xffffff;
	rep.ResponderResources = p->responder_resources;
	rep.InitiatorDepth = p->initiator_depth;
	rep.TargetACKDelay = p->target_ack_delay;
	rep.FailoverAccepted = 0;
	rep.EndToEndFlowControl = p->flow_control;
	rep.RNRRetryCount = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	rep.SRQ |= p->srq;
	rep.LocalCAGUID = id->cm->node->node_guid;
	copy_pd(rep.PrivateData, sizeof(rep.PrivateData), p->private_data, p->private_data_len);
	id->local_qpn = p->qpn;
	id->mra_delayed = false;
	mad_start(id->msg, IB_CM_ATTR_REP, id->tid);
	ib_cm_rep_encode(&rep, id->msg + IB_CM_DATA_OFFSET);
	set_state(id, SIB_CM_REP_SENT);
	send_request(id);
	return 0;
}

int sib_cm_send_rtu(struct sib_cm_id *id, const uint8_t *pd, unsigned len)
{
	uint8_t mad[IB_MAD_BYTES];
	struct ib_cm_rtu rtu;

	if (id->state != SIB_CM_REP_RCVD && id->state != SIB_CM_MRA_REP_SENT)
		return refuse(id, "RTU", -EINVAL, "an RTU answers a REP received (IBA 12.9.5)");
	if (len > IB_CM_RTU_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "RTU", len, IB_CM_RTU_PRIVATE_DATA_BYTES);
	memset(&rtu, 0, sizeof(rtu));
	rtu.LocalCommID = id->local_comm_id;
	rtu.RemoteCommID = id->remote_comm_id;
	copy_pd(rtu.PrivateData, sizeof(rtu.PrivateData), pd, len);
	mad_start(mad, IB_CM_ATTR_RTU, id->tid);
	ib_cm_rtu_encode(&rtu, mad + IB_CM_DATA_OFFSET);
	keep_reply(id, mad);
	id->mra_delayed = false;
	set_state(id, SIB_CM_ESTABLISHED);
	send_id(id, mad);
	return 0;
}

int sib_cm_send_rej(struct sib_cm_id *id, uint16_t reason, const uint8_t *ari, unsigned ari_len,
		    const uint8_t *pd, unsigned len)
{
	uint8_t mad[IB_MAD_BYTES];

	if (len > IB_CM_REJ_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "REJ", len, IB_CM_REJ_PRIVATE_DATA_BYTES);
	switch (id->state) {
	case SIB_CM_REQ_SENT:
	case SIB_CM_MRA_REQ_RCVD:
	case SIB_CM_REQ_RCVD:
	case SIB_CM_MRA_REQ_SENT:
	case SIB_CM_REP_RCVD:
	case SIB_CM_MRA_REP_SENT:
		build_rej(id, mad, reason, ari, ari_len, pd, len);
		send_id(id, mad);
		to_idle(id);
		return 0;
	case SIB_CM_REP_SENT:
	case SIB_CM_MRA_REP_RCVD:
		/* The peer may have a QP in RTR already: its numbers rest. */
		build_rej(id, mad, reason, ari, ari_len, pd, len);
		send_id(id, mad);
		enter_timewait(id);
		return 0;
	default:
		return refuse(id, "REJ", -EINVAL,
			      "a REJ ends a connection being set up (IBA 12.9.5), not this state");
	}
}

static void send_mra_now(struct sib_cm_id *id, const uint8_t *pd, unsigned len)
{
	uint8_t mad[IB_MAD_BYTES];
	struct ib_cm_mra mra;

	memset(&mra, 0, sizeof(mra));
	mra.LocalCommID = id->local_comm_id;
	mra.RemoteCommID = id->remote_comm_id;
	mra.MessageMRAed = id->state == SIB_CM_MRA_REQ_SENT ? IB_CM_MSG_REQ : IB_CM_MSG_REP;
	mra.ServiceTimeout = id->mra_service_timeout;
	copy_pd(mra.PrivateData, sizeof(mra.PrivateData), pd, len);
	mad_start(mad, IB_CM_ATTR_MRA, id->tid);
	ib_cm_mra_encode(&mra, mad + IB_CM_DATA_OFFSET);
	keep_reply(id, mad);
	id->mra_delayed = false;
	send_id(id, mad);
}

int sib_cm_send_mra(struct sib_cm_id *id, uint8_t service_timeout, bool delay,
		    const uint8_t *pd, unsigned len)
{
	if (len > IB_CM_MRA_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "MRA", len, IB_CM_MRA_PRIVATE_DATA_BYTES);
	if (id->state == SIB_CM_REQ_RCVD)
		set_state(id, SIB_CM_MRA_REQ_SENT);
	else if (id->state == SIB_CM_REP_RCVD)
		set_state(id, SIB_CM_MRA_REP_SENT);
	else
		return refuse(id, "MRA", -EINVAL,
			      "an MRA answers a REQ or REP received, once (IBA 12.6.6)");
	id->mra_service_timeout = service_timeout & 0x1f;
	if (delay)
		id->mra_delayed = true;
	else
		send_mra_now(id, pd, len);
	return 0;
}

static void build_dreq(struct sib_cm_id *id, uint8_t *mad, const uint8_t *pd, unsigned len)
{
	struct ib_cm_dreq dreq;

	memset(&dreq, 0, sizeof(dreq));
	dreq.LocalCommID = id->local_comm_id;
	dreq.RemoteCommID = id->remote_comm_id;
	dreq.RemoteQPN = id->remote_qpn;
	copy_pd(dreq.PrivateData, sizeof(dreq.PrivateData), pd, len);
	id->tid = sib_mad_tid(&id->cm->node->mads, &cm_agent);
	mad_start(mad, IB_CM_ATTR_DREQ, id->tid);
	ib_cm_dreq_encode(&dreq, mad + IB_CM_DATA_OFFSET);
}

int sib_cm_send_dreq(struct sib_cm_id *id, const uint8_t *pd, unsigned len)
{
	if (id->state != SIB_CM_ESTABLISHED)
		return refuse(id, "DREQ", -EINVAL,
			      "a DREQ ends an ESTABLISHED connection (IBA 12.9.6)");
	if (len > IB_CM_DREQ_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "DREQ", len, IB_CM_DREQ_PRIVATE_DATA_BYTES);
	build_dreq(id, id->msg, pd, len);
	id->reply_valid = false;
	set_state(id, SIB_CM_DREQ_SENT);
	send_request(id);
	return 0;
}

static void build_drep(uint8_t *mad, uint64_t tid, uint32_t local, uint32_t remote,
		       const uint8_t *pd, unsigned len)
{
	struct ib_cm_drep drep;

	memset(&drep, 0, sizeof(drep));
	drep.LocalCommID = local;
	drep.RemoteCommID = remote;
	copy_pd(drep.PrivateData, sizeof(drep.PrivateData), pd, len);
	mad_start(mad, IB_CM_ATTR_DREP, tid);
	ib_cm_drep_encode(&drep, mad + IB_CM_DATA_OFFSET);
}

int sib_cm_send_drep(struct sib_cm_id *id, const uint8_t *pd, unsigned len)
{
	uint8_t mad[IB_MAD_BYTES];

	if (id->state != SIB_CM_DREQ_RCVD)
		return refuse(id, "DREP", -EINVAL, "a DREP answers a DREQ received (IBA 12.9.6)");
	if (len > IB_CM_DREP_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "DREP", len, IB_CM_DREP_PRIVATE_DATA_BYTES);
	build_drep(mad, id->tid, id->local_comm_id, id->remote_comm_id, pd, len);
	keep_reply(id, mad);
	send_id(id, mad);
	enter_timewait(id);
	return 0;
}

int sib_cm_establish(struct sib_cm_id *id)
{
	if (id->state == SIB_CM_ESTABLISHED)
		return refuse(id, "establish", -EISCONN, "the connection is ESTABLISHED already");
	if (id->state != SIB_CM_REP_SENT && id->state != SIB_CM_MRA_REP_RCVD)
		return refuse(id, "establish", -EINVAL,
			      "only a passive side that sent its REP waits for an RTU (12.9.5)");
	quiet(id);
	set_state(id, SIB_CM_ESTABLISHED);
	if (notify(id, SIB_CM_EV_USER_ESTABLISHED))
		release_if_done(id);
	return 0;
}

int sib_cm_send_sidr_req(struct sib_cm_id *id, const struct sib_cm_sidr_req_param *p)
{
	struct ib_cm_sidr_req q;

	if (id->state != SIB_CM_IDLE)
		return refuse(id, "SIDR_REQ", -EINVAL, "a SIDR_REQ starts from an IDLE id");
	if (p->private_data_len > IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "SIDR_REQ", p->private_data_len,
				   IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES);
	memset(&q, 0, sizeof(q));
	q.RequestID = id->local_comm_id;
	q.P_Key = p->path.P_Key;
	q.ServiceID = p->service_id;
	copy_pd(q.PrivateData, sizeof(q.PrivateData), p->private_data, p->private_data_len);
	id->service_id = p->service_id;
	id->path = p->path;
	id->peer = p->peer;
	id->tid = sib_mad_tid(&id->cm->node->mads, &cm_agent);
	id->max_retries = p->timing.max_cm_retries > 15 ? 15 : p->timing.max_cm_retries;
	id->resp_ns = response_ns(p->timing.remote_cm_response_timeout, p->path.PacketLifeTime);
	sib_mad_addr_init(&id->addr, SIB_QP1, p->path.DLID, p->path.SLID);
	id->addr.P_Key = p->path.P_Key;
	id->addr.SL = p->path.SL;
	mad_start(id->msg, IB_CM_ATTR_SIDR_REQ, id->tid);
	ib_cm_sidr_req_encode(&q, id->msg + IB_CM_DATA_OFFSET);
	set_state(id, SIB_CM_SIDR_REQ_SENT);
	send_request(id);
	return 0;
}

static void build_sidr_rep(struct sib_cm_id *id, uint8_t *mad, uint8_t status, uint32_t qpn,
			   uint32_t qkey, const uint8_t *pd, unsigned len)
{
	struct ib_cm_sidr_rep r;

	memset(&r, 0, sizeof(r));
	r.RequestID = id->remote_comm_id;
	r.Status = status;
	r.QPN = status == IB_CM_SIDR_SUCCESS ? qpn & 0xffffff : 0;
	r.ServiceID = id->service_id;
	r.Q_Key = status == IB_CM_SIDR_SUCCESS ? qkey : 0;
	copy_pd(r.PrivateData, sizeof(r.PrivateData), pd, len);
	mad_start(mad, IB_CM_ATTR_SIDR_REP, id->tid);
	ib_cm_sidr_rep_encode(&r, mad + IB_CM_DATA_OFFSET);
}

int sib_cm_send_sidr_rep(struct sib_cm_id *id, uint8_t status, uint32_t qpn, uint32_t qkey,
			 const uint8_t *pd, unsigned len)
{
	uint8_t mad[IB_MAD_BYTES];

	if (id->state != SIB_CM_SIDR_REQ_RCVD)
		return refuse(id, "SIDR_REP", -EINVAL,
			      "a SIDR_REP answers a SIDR_REQ received (IBA 12.11)");
	if (len > IB_CM_SIDR_REP_PRIVATE_DATA_BYTES)
		return pd_too_long(id, "SIDR_REP", len, IB_CM_SIDR_REP_PRIVATE_DATA_BYTES);
	build_sidr_rep(id, mad, status, qpn, qkey, pd, len);
	send_id(id, mad);
	set_state(id, SIB_CM_IDLE);
	return 0;
}

void sib_cm_destroy_id(struct sib_cm_id *id)
{
	uint8_t mad[IB_MAD_BYTES];
	uint8_t guid[8];

	if (id->destroyed)
		return;
	id->destroyed = true;
	switch (id->state) {
	case SIB_CM_REQ_SENT:
	case SIB_CM_MRA_REQ_RCVD:
		/* IBA 12.6.7.2: a requester that gives up says Timeout, with
		 * its CA GUID as the ARI. */
		for (int i = 0; i < 8; i++)
			guid[i] = (uint8_t)(id->cm->node->node_guid >> (56 - 8 * i));
		sib_cm_send_rej(id, IB_CM_REJ_TIMEOUT, guid, sizeof(guid), NULL, 0);
		break;
	case SIB_CM_REQ_RCVD:
	case SIB_CM_MRA_REQ_SENT:
	case SIB_CM_REP_RCVD:
	case SIB_CM_MRA_REP_SENT:
	case SIB_CM_REP_SENT:
	case SIB_CM_MRA_REP_RCVD:
		sib_cm_send_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		break;
	case SIB_CM_ESTABLISHED:
		/* One DREQ, no retries: the connection is gone here either
		 * way, and a peer that missed it learns on its next DREQ. */
		build_dreq(id, mad, NULL, 0);
		send_id(id, mad);
		enter_timewait(id);
		break;
	case SIB_CM_DREQ_SENT:
		enter_timewait(id);
		break;
	case SIB_CM_DREQ_RCVD:
		sib_cm_send_drep(id, NULL, 0);
		break;
	case SIB_CM_SIDR_REQ_RCVD:
		sib_cm_send_sidr_rep(id, IB_CM_SIDR_REJECT, 0, 0, NULL, 0);
		break;
	case SIB_CM_LISTEN:
	case SIB_CM_SIDR_REQ_SENT:
		to_idle(id);
		break;
	case SIB_CM_TIMEWAIT:
	case SIB_CM_IDLE:
	case SIB_CM_STATE_COUNT:
		break;
	}
	release_if_done(id);
}

/* ---------------------------------------------------------------- timeouts */

/* TIMEWAIT is over (IBA 12.9.8.4): the id rests IDLE. */
static void timewait_over(struct sib_cm_id *id)
{
	set_state(id, SIB_CM_IDLE);
	if (notify(id, SIB_CM_EV_TIMEWAIT_EXIT))
		release_if_done(id);
}

static struct sib_cm_id *by_local_id(struct sib_cm *cm, uint32_t local_comm_id);

/* The request's wait ran out and the MAD layer sent it again. */
static void request_resent(struct sib_cm_id *id)
{
	id->cm->counters.retransmits++;
	id->cm->counters.tx++;
	/* An MRA's wait is over: the request goes on as before it. */
	if (id->state == SIB_CM_MRA_REQ_RCVD)
		set_state(id, SIB_CM_REQ_SENT);
	else if (id->state == SIB_CM_MRA_REP_RCVD)
		set_state(id, SIB_CM_REP_SENT);
}

/* MaxCMRetries ran out with no answer (IBA 12.9). */
static void request_timed_out(struct sib_cm_id *id)
{
	id->cm->counters.timeouts++;
	sib_dbg("CM: comm ID 0x%08x: no answer in %s after %u retries", id->local_comm_id,
		sib_cm_state_name(id->state), id->max_retries);
	switch (id->state) {
	case SIB_CM_REQ_SENT:
	case SIB_CM_MRA_REQ_RCVD:
		set_state(id, SIB_CM_IDLE);
		if (!notify(id, SIB_CM_EV_REQ_ERROR))
			return;
		break;
	case SIB_CM_REP_SENT:
	case SIB_CM_MRA_REP_RCVD:
		set_state(id, SIB_CM_IDLE);
		if (!notify(id, SIB_CM_EV_REP_ERROR))
			return;
		break;
	case SIB_CM_DREQ_SENT:
		enter_timewait(id);
		if (!notify(id, SIB_CM_EV_DREQ_ERROR))
			return;
		break;
	case SIB_CM_SIDR_REQ_SENT:
		set_state(id, SIB_CM_IDLE);
		if (!notify(id, SIB_CM_EV_SIDR_REQ_ERROR))
			return;
		break;
	default:
		break;
	}
	release_if_done(id);
}

/* What the MAD layer says of a request's send, on the thread that runs
 * the node's timers.  The id is found by its comm ID (it may be gone) and
 * counts only for the send it has out. */
static enum sib_mad_verdict request_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_node *node = owner;
	struct sib_cm *cm = node->cm;
	struct sib_cm_id *id;

	/* CM messages are Sends (IBA 12.6.1): no response answers one, and a
	 * canceled send is one the CM let go of. */
	if (wc->status == SIB_MAD_RESPONSE)
		return SIB_MAD_MORE;
	if (!cm || wc->status == SIB_MAD_CANCELED)
		return SIB_MAD_DONE;
	sib_cm_lock(cm);
	id = by_local_id(cm, (uint32_t)(uintptr_t)wc->context);
	if (id && id->send_tid == wc->tid) {
		if (wc->status == SIB_MAD_RESENT) {
			request_resent(id);
		} else {
			id->send_tid = 0;
			request_timed_out(id);
		}
	}
	sib_cm_unlock(cm);
	return SIB_MAD_DONE;
}

static void cm_timer_fn(void *arg)
{
	struct sib_cm_id *id = arg;
	struct sib_cm *cm = id->cm;

	sib_cm_lock(cm);
	id->pending--;
	if (id->unlinked) {
		if (!id->pending)
			free(id);
	} else if (id->timer_armed && sib_link_now_ns() >= id->deadline_ns) {
		id->timer_armed = false;
		if (id->state == SIB_CM_TIMEWAIT)
			timewait_over(id);
	}
	sib_cm_unlock(cm);
}

/* ---------------------------------------------------------------- receiving */

/* The context a received MAD arrives in. */
struct rx {
	struct sib_cm *cm;
	unsigned port_num;
	const struct sib_mad_addr *a;
	const struct sib_endpoint *from;
	uint64_t tid;
	const uint8_t *data; /* the message, MAD byte 24 on */
};

static struct sib_cm_id *by_local_id(struct sib_cm *cm, uint32_t local_comm_id)
{
	for (struct sib_cm_id *id = chain(cm, SIB_CM_BY_LOCAL, local_comm_id); id;
	     id = id->hnext[SIB_CM_BY_LOCAL])
		if (id->local_comm_id == local_comm_id && id->state != SIB_CM_LISTEN)
			return id;
	return NULL;
}

static bool connected_state(enum sib_cm_state s)
{
	return s >= SIB_CM_REQ_RCVD && s <= SIB_CM_TIMEWAIT;
}

static struct sib_cm_id *listener_for(struct sib_cm *cm, uint64_t sid)
{
	for (struct sib_cm_id *id = chain(cm, SIB_CM_LISTENERS, 0); id;
	     id = id->hnext[SIB_CM_LISTENERS])
		if (id->state == SIB_CM_LISTEN && !id->destroyed &&
		    ((sid ^ id->service_id) & id->service_mask) == 0)
			return id;
	return NULL;
}

/* The reply address and timing of an id made for a received request. */
static struct sib_cm_id *passive_id(struct rx *r, struct sib_cm_id *listener)
{
	struct sib_cm_id *id = sib_cm_create_id(r->cm, r->port_num, listener->handler,
						listener->context);

	if (!id)
		return NULL;
	id->tid = r->tid;
	id->peer = *r->from;
	sib_mad_addr_reply(r->a, port_lid(r->cm, r->port_num), &id->addr);
	return id;
}

static void path_from_req(const struct ib_cm_req *req, struct sib_cm_path *p)
{
	const struct ib_cm_req_path *q = &req->Primary;

	memset(p, 0, sizeof(*p));
	p->SLID = q->RemotePortLID;
	p->DLID = q->LocalPortLID;
	memcpy(p->SGID, q->RemotePortGID.raw, 16);
	memcpy(p->DGID, q->LocalPortGID.raw, 16);
	p->FlowLabel = q->FlowLabel;
	p->Rate = q->PacketRate;
	p->TrafficClass = q->TrafficClass;
	p->HopLimit = q->HopLimit;
	p->SL = q->SL;
	p->MTU = req->PathPacketPayloadMTU;
	p->P_Key = req->P_Key;
	/* IBA 12.7.30: the requester derived LocalACKTimeout from the
	 * packet lifetime; one step below it is what the path gave. */
	p->PacketLifeTime = q->LocalACKTimeout ? q->LocalACKTimeout - 1 : 0;
}

/* SIB_CM_PENDING_MAX REQs wait for their consumers: one more is refused
 * (cm.h, "Bounds"). */
static void pending_full(struct rx *r, const struct ib_cm_req *req)
{
	char e[SIB_ENDPOINT_STRLEN];
	uint64_t n = ++r->cm->counters.rx_pending_full;

	sib_log(sib_log_nth(n),
		"CM: %u connection requests wait for their consumer already; the REQ for "
		"ServiceID 0x%016llx from %s is rejected with no resources (%llu so far)",
		SIB_CM_PENDING_MAX, (unsigned long long)req->ServiceID,
		sib_endpoint_str(r->from, e), (unsigned long long)n);
	reject_unknown(r->cm, r->port_num, r->a, r->from, r->tid, 0, req->LocalCommID,
		       IB_CM_MSG_REQ, IB_CM_REJ_NO_RESOURCES);
}

/* A duplicate REQ (IBA 12.9.5): answered from the state it finds. */
static void dup_req(struct rx *r, struct sib_cm_id *id)
{
	uint8_t mad[IB_MAD_BYTES];

	r->cm->counters.duplicates++;
	if (id->state == SIB_CM_MRA_REQ_SENT) {
		if (id->mra_delayed)
			send_mra_now(id, NULL, 0);
		else if (id->reply_valid)
			send_id(id, id->reply);
	} else if (id->state == SIB_CM_TIMEWAIT) {
		build_rej(id, mad, IB_CM_REJ_STALE_CONN, NULL, 0, NULL, 0);
		send_id(id, mad);
	}
}

/* An XRC REQ: Transport Service Type 3, Extended Transport Type 1. */
static bool req_xrc(const struct ib_cm_req *req)
{
	return req->TransportServiceType == IB_CM_TRANSPORT_EXT &&
	       req->ExtendedTransportType == IB_CM_EXT_TRANSPORT_XRC;
}

static void rx_req(struct rx *r)
{
	struct sib_cm *cm = r->cm;
	struct sib_cm_id *listener, *id;
	struct sib_cm_event ev;
	struct ib_cm_req req;
	uint16_t reason = 0;
	int ret;

	ib_cm_req_decode(&req, r->data);
	for (id = chain(cm, SIB_CM_BY_REMOTE, req.LocalCommID); id; id = id->hnext[SIB_CM_BY_REMOTE]) {
		if (id->state == SIB_CM_IDLE || id->state == SIB_CM_LISTEN)
			continue;
		if (id->remote_comm_id == req.LocalCommID &&
		    id->remote_ca_guid == req.LocalCAGUID && sib_endpoint_equal(&id->peer, r->from)) {
			dup_req(r, id);
			return;
		}
	}
	/* IBA 12.4.1: a QP this node still knows as connected, asked for
	 * again, is stale: reject the REQ and end the old connection -- only
	 * when the REQ comes from where that connection's peer is, so that
	 * nobody else can end it (cm.h). */
	for (id = chain(cm, SIB_CM_BY_QPN, req.LocalQPN); id; id = id->hnext[SIB_CM_BY_QPN]) {
		if (!connected_state(id->state) || id->remote_qpn != req.LocalQPN ||
		    id->remote_ca_guid != req.LocalCAGUID || !sib_endpoint_equal(&id->peer, r->from))
			continue;
		cm->counters.stale++;
		reject_unknown(cm, r->port_num, r->a, r->from, r->tid, 0, req.LocalCommID,
			       IB_CM_MSG_REQ, IB_CM_REJ_STALE_CONN);
		if (id->state == SIB_CM_ESTABLISHED)
			sib_cm_send_dreq(id, NULL, 0);
		return;
	}
	listener = listener_for(cm, req.ServiceID);
	if (!listener)
		reason = IB_CM_REJ_INVALID_SERVICE_ID;
	else if (req.TransportServiceType != IB_CM_TRANSPORT_RC &&
		 req.TransportServiceType != IB_CM_TRANSPORT_UC && !req_xrc(&req))
		reason = IB_CM_REJ_INVALID_TRANSPORT_TYPE;
	else if (req.PathPacketPayloadMTU < IB_MTU_256 || req.PathPacketPayloadMTU > IB_MTU_4096)
		reason = IB_CM_REJ_INVALID_MTU;
	if (reason) {
		sib_dbg("CM: REQ for ServiceID 0x%016llx rejected with reason %u",
			(unsigned long long)req.ServiceID, reason);
		reject_unknown(cm, r->port_num, r->a, r->from, r->tid, 0, req.LocalCommID,
			       IB_CM_MSG_REQ, reason);
		return;
	}
	if (cm->pending >= SIB_CM_PENDING_MAX) {
		pending_full(r, &req);
		return;
	}
	id = passive_id(r, listener);
	if (!id) {
		reject_unknown(cm, r->port_num, r->a, r->from, r->tid, 0, req.LocalCommID,
			       IB_CM_MSG_REQ, IB_CM_REJ_NO_RESOURCES);
		return;
	}
	set_state(id, SIB_CM_REQ_RCVD);
	id->service_id = req.ServiceID;
	id->remote_comm_id = req.LocalCommID;
	id->remote_ca_guid = req.LocalCAGUID;
	id->remote_qpn = req.LocalQPN;
	id->xrc = req_xrc(&req);
	rekey(id);
	id->local_ack_timeout = req.Primary.LocalACKTimeout;
	path_from_req(&req, &id->path);
	id->max_retries = req.MaxCMRetries;
	id->resp_ns = response_ns(req.LocalCMResponseTimeout, id->path.PacketLifeTime);
	memset(&ev, 0, sizeof(ev));
	ev.type = SIB_CM_EV_REQ_RECEIVED;
	ev.listen_id = listener;
	ev.req = &req;
	ev.addr = r->a;
	ret = call_handler(id, &ev);
	if (ret == SIB_CM_DROP) {
		id->destroyed = true;
		to_idle(id);
		release_if_done(id);
	} else if (ret) {
		id->destroyed = true;
		sib_cm_send_rej(id, ret > 0 ? (uint16_t)ret : IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				NULL, 0);
		release_if_done(id);
	}
}

/* A message for id counts only from id's peer (cm.h). */
static bool from_peer(struct rx *r, const struct sib_cm_id *id, const char *what)
{
	char e[SIB_ENDPOINT_STRLEN], p[SIB_ENDPOINT_STRLEN];

	if (sib_endpoint_equal(&id->peer, r->from))
		return true;
	r->cm->counters.rx_wrong_source++;
	sib_log(sib_log_nth(r->cm->counters.rx_wrong_source),
		"CM: %s for comm ID 0x%08x came from %s, not from its peer %s: dropped (%llu so "
		"far)",
		what, id->local_comm_id, sib_endpoint_str(r->from, e), sib_endpoint_str(&id->peer, p),
		(unsigned long long)r->cm->counters.rx_wrong_source);
	return false;
}

/* The id a reply is for: its RemoteCommID is our local one and, once we
 * know the peer's, its LocalCommID the peer's (both, as Linux's
 * cm_acquire_id), and it comes from the peer. */
static struct sib_cm_id *reply_id(struct rx *r, uint32_t local, uint32_t remote, const char *what)
{
	struct sib_cm_id *id = by_local_id(r->cm, remote);

	if (!id || (id->remote_comm_id && id->remote_comm_id != local)) {
		r->cm->counters.rx_unmatched++;
		return NULL;
	}
	return from_peer(r, id, what) ? id : NULL;
}

static void rx_mra(struct rx *r)
{
	struct sib_cm_event ev = { .type = SIB_CM_EV_MRA_RECEIVED, .addr = r->a };
	struct sib_cm_id *id;
	struct ib_cm_mra mra;

	ib_cm_mra_decode(&mra, r->data);
	id = reply_id(r, mra.LocalCommID, mra.RemoteCommID, "MRA");
	if (!id)
		return;
	if (mra.MessageMRAed == IB_CM_MSG_REQ && id->state == SIB_CM_REQ_SENT) {
		set_state(id, SIB_CM_MRA_REQ_RCVD);
		id->remote_comm_id = mra.LocalCommID;
		rekey(id);
	} else if (mra.MessageMRAed == IB_CM_MSG_REP && id->state == SIB_CM_REP_SENT) {
		set_state(id, SIB_CM_MRA_REP_RCVD);
	} else {
		r->cm->counters.duplicates++;
		return;
	}
	/* IBA 12.6.6: the peer needs ServiceTimeout more; wait that long
	 * before the next try (ib_modify_mad). */
	if (id->send_tid)
		sib_mad_modify(&r->cm->node->mads, id->send_tid, comm_context(id),
			       sib_cm_time_ns(mra.ServiceTimeout) +
				       2 * sib_cm_time_ns(id->path.PacketLifeTime));
	if (deliver(id, &ev))
		release_if_done(id);
}

/*
 * The id a REJ is for.  A requester that gives up before any reply knows
 * only its own comm ID (RemoteCommID is 0): the REJ is matched by the
 * peer's comm ID and endpoint, and the CA GUID of a Timeout's ARI (IBA
 * 12.6.7.2).
 */
static struct sib_cm_id *rej_id(struct rx *r, const struct ib_cm_rej *rej)
{
	uint64_t guid = 0;

	if (rej->RemoteCommID)
		return reply_id(r, rej->LocalCommID, rej->RemoteCommID, "REJ");
	if (rej->Reason == IB_CM_REJ_TIMEOUT && rej->RejectedInfoLength >= 8)
		for (int i = 0; i < 8; i++)
			guid = guid << 8 | rej->ARI[i];
	for (struct sib_cm_id *id = chain(r->cm, SIB_CM_BY_REMOTE, rej->LocalCommID); id;
	     id = id->hnext[SIB_CM_BY_REMOTE]) {
		if (id->state == SIB_CM_LISTEN || id->remote_comm_id != rej->LocalCommID ||
		    !sib_endpoint_equal(&id->peer, r->from))
			continue;
		if (!guid || id->remote_ca_guid == guid)
			return id;
	}
	r->cm->counters.rx_unmatched++;
	return NULL;
}

static void rx_rej(struct rx *r)
{
	struct sib_cm_event ev = { .type = SIB_CM_EV_REJ_RECEIVED, .addr = r->a };
	struct sib_cm_id *id;
	struct ib_cm_rej rej;

	ib_cm_rej_decode(&rej, r->data);
	id = rej_id(r, &rej);
	if (!id)
		return;
	switch (id->state) {
	case SIB_CM_REQ_SENT:
	case SIB_CM_MRA_REQ_RCVD:
	case SIB_CM_REP_RCVD:
	case SIB_CM_MRA_REP_SENT:
	case SIB_CM_REQ_RCVD:
	case SIB_CM_MRA_REQ_SENT:
		if (rej.Reason == IB_CM_REJ_STALE_CONN)
			enter_timewait(id);
		else
			to_idle(id);
		break;
	case SIB_CM_REP_SENT:
	case SIB_CM_MRA_REP_RCVD:
	case SIB_CM_ESTABLISHED:
		enter_timewait(id);
		break;
	default:
		r->cm->counters.rx_unmatched++;
		return;
	}
	ev.rej = &rej;
	if (deliver(id, &ev))
		release_if_done(id);
}

static bool stale_qpn(struct sib_cm *cm, struct sib_cm_id *self, uint32_t qpn, uint64_t guid)
{
	for (struct sib_cm_id *id = chain(cm, SIB_CM_BY_QPN, qpn); id; id = id->hnext[SIB_CM_BY_QPN])
		if (id != self && connected_state(id->state) && id->remote_qpn == qpn &&
		    id->remote_ca_guid == guid)
			return true;
	return false;
}

static void rx_rep(struct rx *r)
{
	struct sib_cm_event ev = { .type = SIB_CM_EV_REP_RECEIVED, .addr = r->a };
	struct sib_cm_id *id;
	struct ib_cm_rep rep;

	ib_cm_rep_decode(&rep, r->data);
	id = reply_id(r, rep.LocalCommID, rep.RemoteCommID, "REP");
	if (!id)
		return;
	/* The handler finds the peer's QPN in LocalQPN, whatever carried it
	 * (the kernel's rep_rcvd.remote_qpn). */
	if (id->xrc)
		rep.LocalQPN = rep.LocalEECN;
	switch (id->state) {
	case SIB_CM_REQ_SENT:
	case SIB_CM_MRA_REQ_RCVD:
		break;
	case SIB_CM_ESTABLISHED:
		/* Our RTU was lost (IBA 12.9.5): send it again. */
		r->cm->counters.duplicates++;
		if (id->reply_valid)
			send_id(id, id->reply);
		return;
	case SIB_CM_MRA_REP_SENT:
		r->cm->counters.duplicates++;
		if (id->mra_delayed)
			send_mra_now(id, NULL, 0);
		else if (id->reply_valid)
			send_id(id, id->reply);
		return;
	case SIB_CM_REP_RCVD:
		r->cm->counters.duplicates++;
		return;
	default:
		r->cm->counters.rx_unmatched++;
		return;
	}
	if (stale_qpn(r->cm, id, rep.LocalQPN, rep.LocalCAGUID)) {
		r->cm->counters.stale++;
		reject_unknown(r->cm, r->port_num, r->a, r->from, r->tid, rep.RemoteCommID,
			       rep.LocalCommID, IB_CM_MSG_REP, IB_CM_REJ_STALE_CONN);
		return;
	}
	quiet(id);
	id->remote_comm_id = rep.LocalCommID;
	id->remote_ca_guid = rep.LocalCAGUID;
	id->remote_qpn = rep.LocalQPN;
	rekey(id);
	set_state(id, SIB_CM_REP_RCVD);
	ev.rep = &rep;
	if (deliver(id, &ev))
		release_if_done(id);
}

static void rx_rtu(struct rx *r)
{
	struct sib_cm_id *id;
	struct ib_cm_rtu rtu;

	ib_cm_rtu_decode(&rtu, r->data);
	id = reply_id(r, rtu.LocalCommID, rtu.RemoteCommID, "RTU");
	if (!id)
		return;
	if (id->state != SIB_CM_REP_SENT && id->state != SIB_CM_MRA_REP_RCVD) {
		r->cm->counters.duplicates++;
		return;
	}
	quiet(id);
	set_state(id, SIB_CM_ESTABLISHED);
	if (notify(id, SIB_CM_EV_RTU_RECEIVED))
		release_if_done(id);
}

static void rx_dreq(struct rx *r)
{
	struct sib_cm_event ev = { .type = SIB_CM_EV_DREQ_RECEIVED, .addr = r->a };
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr ra;
	struct sib_cm_id *id;
	struct ib_cm_dreq dreq;

	ib_cm_dreq_decode(&dreq, r->data);
	id = by_local_id(r->cm, dreq.RemoteCommID);
	if (id && id->remote_comm_id != dreq.LocalCommID)
		id = NULL;
	if (id && !from_peer(r, id, "DREQ"))
		return;
	if (!id) {
		/* IBA 12.9.6: a DREQ for a connection we do not know is
		 * answered anyway, so the peer can leave. */
		r->cm->counters.rx_unmatched++;
		build_drep(mad, r->tid, dreq.RemoteCommID, dreq.LocalCommID, NULL, 0);
		sib_mad_addr_reply(r->a, port_lid(r->cm, r->port_num), &ra);
		send_to(r->cm, r->port_num, &ra, r->from, mad);
		return;
	}
	if (dreq.RemoteQPN != id->local_qpn) {
		r->cm->counters.rx_malformed++;
		sib_dbg("CM: DREQ for comm ID 0x%08x names QPN 0x%06x, not ours 0x%06x",
			id->local_comm_id, dreq.RemoteQPN, id->local_qpn);
		return;
	}
	switch (id->state) {
	case SIB_CM_REP_SENT:
	case SIB_CM_MRA_REP_RCVD:
	case SIB_CM_ESTABLISHED:
	case SIB_CM_DREQ_SENT: /* the DREQs crossed */
		quiet(id);
		id->tid = r->tid;
		set_state(id, SIB_CM_DREQ_RCVD);
		ev.dreq = &dreq;
		if (deliver(id, &ev))
			release_if_done(id);
		return;
	case SIB_CM_TIMEWAIT:
		r->cm->counters.duplicates++;
		if (!id->reply_valid) {
			build_drep(mad, r->tid, id->local_comm_id, id->remote_comm_id, NULL, 0);
			keep_reply(id, mad);
		}
		send_id(id, id->reply);
		return;
	default:
		r->cm->counters.duplicates++;
		return;
	}
}

static void rx_drep(struct rx *r)
{
	struct sib_cm_id *id;
	struct ib_cm_drep drep;

	ib_cm_drep_decode(&drep, r->data);
	id = reply_id(r, drep.LocalCommID, drep.RemoteCommID, "DREP");
	if (!id)
		return;
	if (id->state != SIB_CM_DREQ_SENT) {
		r->cm->counters.duplicates++;
		return;
	}
	enter_timewait(id);
	if (notify(id, SIB_CM_EV_DREP_RECEIVED))
		release_if_done(id);
}

static void rx_sidr_req(struct rx *r)
{
	struct sib_cm_event ev = { .type = SIB_CM_EV_SIDR_REQ_RECEIVED, .addr = r->a };
	struct sib_cm *cm = r->cm;
	struct sib_cm_id *listener, *id;
	struct ib_cm_sidr_req q;
	uint8_t mad[IB_MAD_BYTES];
	int ret;

	ib_cm_sidr_req_decode(&q, r->data);
	for (id = chain(cm, SIB_CM_BY_REMOTE, q.RequestID); id; id = id->hnext[SIB_CM_BY_REMOTE]) {
		if (id->state == SIB_CM_SIDR_REQ_RCVD && id->remote_comm_id == q.RequestID &&
		    sib_endpoint_equal(&id->peer, r->from)) {
			cm->counters.duplicates++;
			return;
		}
	}
	listener = listener_for(cm, q.ServiceID);
	id = listener ? passive_id(r, listener) : NULL;
	if (!id) {
		struct sib_cm_id tmp;

		/* IBA 12.11.2: status 1, the ServiceID is not served here. */
		memset(&tmp, 0, sizeof(tmp));
		tmp.remote_comm_id = q.RequestID;
		tmp.service_id = q.ServiceID;
		tmp.tid = r->tid;
		build_sidr_rep(&tmp, mad,
			       listener ? IB_CM_SIDR_NO_QP : IB_CM_SIDR_UNSUPPORTED, 0, 0, NULL, 0);
		sib_mad_addr_reply(r->a, port_lid(cm, r->port_num), &tmp.addr);
		send_to(cm, r->port_num, &tmp.addr, r->from, mad);
		return;
	}
	set_state(id, SIB_CM_SIDR_REQ_RCVD);
	id->remote_comm_id = q.RequestID;
	rekey(id);
	id->service_id = q.ServiceID;
	id->path.P_Key = q.P_Key;
	id->path.SLID = r->a->DLID;
	id->path.DLID = r->a->SLID;
	id->path.SL = r->a->SL;
	ev.listen_id = listener;
	ev.sidr_req = &q;
	ret = call_handler(id, &ev);
	if (ret) {
		id->destroyed = true;
		if (ret > 0)
			sib_cm_send_sidr_rep(id, (uint8_t)ret, 0, 0, NULL, 0);
		to_idle(id);
		release_if_done(id);
	}
}

static void rx_sidr_rep(struct rx *r)
{
	struct sib_cm_event ev = { .type = SIB_CM_EV_SIDR_REP_RECEIVED, .addr = r->a };
	struct sib_cm_id *id;
	struct ib_cm_sidr_rep rep;

	ib_cm_sidr_rep_decode(&rep, r->data);
	id = by_local_id(r->cm, rep.RequestID);
	if (!id || id->state != SIB_CM_SIDR_REQ_SENT) {
		r->cm->counters.rx_unmatched++;
		return;
	}
	if (!from_peer(r, id, "SIDR_REP"))
		return;
	to_idle(id);
	ev.sidr_rep = &rep;
	if (deliver(id, &ev))
		release_if_done(id);
}

/* ------------------------------------------------- the source check */

enum src_verdict {
	SRC_PASS,
	SRC_HELD, /* it waits for the SA's answer (sib_cm_source_known) */
	SRC_DROP,
};

/* How long a held request may wait: the SA client's own patience. */
#define HELD_NS ((uint64_t)SIB_SA_WAIT_MS * 1000000ull)

static void hold(struct rx *r, const uint8_t *mad)
{
	struct sib_cm *cm = r->cm;
	uint64_t now = sib_link_now_ns();
	struct sib_cm_held *h = NULL;

	for (unsigned i = 0; i < SIB_CM_HELD_MAX; i++) {
		struct sib_cm_held *c = &cm->held[i];

		if (c->used && now - c->since_ns > HELD_NS) {
			c->used = false; /* the SA never answered: its requester retries */
			cm->counters.rx_unknown_source++;
		}
		if (c->used && c->port_num == r->port_num && sib_endpoint_equal(&c->from, r->from) &&
		    !memcmp(c->mad, mad, IB_MAD_BYTES))
			return; /* its requester's retry: it waits already */
		if (!c->used && !h)
			h = c;
	}
	if (!h) { /* full: the oldest gives way (bounded, cm.h) */
		h = &cm->held[0];
		for (unsigned i = 1; i < SIB_CM_HELD_MAX; i++)
			if (cm->held[i].since_ns < h->since_ns)
				h = &cm->held[i];
		cm->counters.rx_unknown_source++;
	}
	h->used = true;
	h->port_num = r->port_num;
	h->a = *r->a;
	h->from = *r->from;
	h->since_ns = now;
	memcpy(h->mad, mad, IB_MAD_BYTES);
	cm->counters.rx_held++;
}

/* A REQ or SIDR_REQ counts only from where its SLID lives (cm.h); rerun:
 * it waited already, and does not wait again. */
static enum src_verdict req_source(struct rx *r, const uint8_t *mad, const char *what, bool rerun)
{
	struct sib_link *l = port_link(r->cm, r->port_num);
	char e[SIB_ENDPOINT_STRLEN], w[SIB_ENDPOINT_STRLEN];
	struct sib_endpoint ep;
	int rc;

	/* This port's own (a connection to itself) needs nobody's word. */
	if (l && r->a->SLID == port_lid(r->cm, r->port_num) && sib_endpoint_equal(r->from, &l->local))
		return SRC_PASS;
	rc = sib_sa_lookup_lid(r->cm->node, r->port_num, r->a->SLID, false, &ep);
	if (!rc && sib_endpoint_equal(&ep, r->from))
		return SRC_PASS;
	if (rc == -EAGAIN && !rerun) {
		hold(r, mad);
		return SRC_HELD;
	}
	if (!rc) {
		/* The LID may have moved: have the SA asked again, for the
		 * requester's next try. */
		sib_sa_lookup_lid(r->cm->node, r->port_num, r->a->SLID, true, &ep);
		r->cm->counters.rx_wrong_source++;
		sib_log(sib_log_nth(r->cm->counters.rx_wrong_source),
			"CM: %s with SLID 0x%04x came from %s, not from %s where that LID lives: "
			"dropped (%llu so far)",
			what, r->a->SLID, sib_endpoint_str(r->from, e), sib_endpoint_str(&ep, w),
			(unsigned long long)r->cm->counters.rx_wrong_source);
		return SRC_DROP;
	}
	r->cm->counters.rx_unknown_source++;
	sib_dbg("CM: %s with SLID 0x%04x from %s: where that LID lives is not known (%d), dropped",
		what, r->a->SLID, sib_endpoint_str(r->from, e), rc);
	return SRC_DROP;
}

/* One CM message, which passed cm_rx's checks, with the CM's lock held. */
static void dispatch(struct sib_cm *cm, unsigned port_num, const struct sib_mad_addr *a,
		     const struct sib_endpoint *from, const uint8_t *mad, bool rerun)
{
	struct ib_mad_hdr h;
	struct rx r;

	ib_mad_hdr_decode(&h, mad);
	r = (struct rx){ cm, port_num, a, from, h.TransactionID, mad + IB_CM_DATA_OFFSET };
	sib_dbg("CM: received %s from LID %u", ib_mad_attr_str(IB_MGMT_CLASS_CM, h.AttributeID),
		a->SLID);
	switch (h.AttributeID) {
	case IB_CM_ATTR_REQ:
		if (req_source(&r, mad, "REQ", rerun) == SRC_PASS)
			rx_req(&r);
		break;
	case IB_CM_ATTR_MRA:
		rx_mra(&r);
		break;
	case IB_CM_ATTR_REJ:
		rx_rej(&r);
		break;
	case IB_CM_ATTR_REP:
		rx_rep(&r);
		break;
	case IB_CM_ATTR_RTU:
		rx_rtu(&r);
		break;
	case IB_CM_ATTR_DREQ:
		rx_dreq(&r);
		break;
	case IB_CM_ATTR_DREP:
		rx_drep(&r);
		break;
	case IB_CM_ATTR_SIDR_REQ:
		if (req_source(&r, mad, "SIDR_REQ", rerun) == SRC_PASS)
			rx_sidr_req(&r);
		break;
	case IB_CM_ATTR_SIDR_REP:
		rx_sidr_rep(&r);
		break;
	default:
		/* LAP, APR (path migration) and ClassPortInfo are not served. */
		cm->counters.rx_malformed++;
		sib_dbg("CM: dropped attribute 0x%04x", h.AttributeID);
		break;
	}
}

void sib_cm_source_known(struct sib_node *node, unsigned port_num, uint16_t lid)
{
	struct sib_cm *cm = node->cm;

	if (!cm)
		return;
	sib_cm_lock(cm);
	for (unsigned i = 0; i < SIB_CM_HELD_MAX; i++) {
		struct sib_cm_held h = cm->held[i];

		if (!h.used || h.port_num != port_num || h.a.SLID != lid)
			continue;
		cm->held[i].used = false;
		dispatch(cm, h.port_num, &h.a, &h.from, h.mad, true);
	}
	sib_cm_unlock(cm);
}

/* The agent: every MAD of class 0x07 on QP1. */
static bool cm_rx(void *owner, const struct sib_mad_recv *rcv)
{
	struct sib_node *node = owner;
	struct sib_cm *cm = node->cm;
	const struct sib_mad_addr *a = rcv->a;
	const uint8_t *mad = rcv->mad;
	struct ib_mad_hdr h;

	if (!cm)
		return false;
	ib_mad_hdr_decode(&h, mad);
	sib_cm_lock(cm);
	cm->counters.rx++;
	/* IBA 12.6.1: CM messages are Sends of class version 2 on the GSI
	 * with its Q_Key; anything else is not ours to act on. */
	if (h.BaseVersion != IB_MAD_BASE_VERSION || h.ClassVersion != IB_CM_CLASS_VERSION ||
	    ib_mad_method(&h) != IB_MAD_METHOD_SEND || a->Q_Key != SIB_GSI_Q_KEY) {
		cm->counters.rx_malformed++;
		sib_dbg("CM: dropped a MAD with version %u/%u, method 0x%02x, Q_Key 0x%08x",
			h.BaseVersion, h.ClassVersion, ib_mad_method(&h), a->Q_Key);
		sib_cm_unlock(cm);
		return true;
	}
	dispatch(cm, rcv->port_num, a, rcv->from, mad, false);
	sib_cm_unlock(cm);
	return true;
}

/* Every version and method: the CM drops and counts what is no CM message
 * itself (cm_rx, IBA 12.6.1). */
static const struct sib_mad_agent cm_agent = {
	.name = "CM",
	.qp = SIB_QP1,
	.mgmt_class = IB_MGMT_CLASS_CM,
	.methods = SIB_MAD_METHODS_ALL,
	.rx = cm_rx,
};

int sib_cm_register(struct sib_node *node)
{
	struct sib_cm *cm = calloc(1, sizeof(*cm));
	int rc;

	if (!cm)
		return -ENOMEM;
	pthread_mutex_init(&cm->lock, NULL);
	cm->node = node;
	node->cm = cm;
	rc = sib_mad_agent_register(node, &cm_agent);
	if (rc) {
		node->cm = NULL;
		pthread_mutex_destroy(&cm->lock);
		free(cm);
	}
	return rc;
}

void sib_cm_free(struct sib_node *node)
{
	struct sib_cm *cm = node->cm;

	if (!cm)
		return;
	node->cm = NULL;
	while (cm->ids) {
		struct sib_cm_id *id = cm->ids;

		cm->ids = id->next;
		if (id->pending)
			sib_timer_cancel(cm->node->timers, &id->timer);
		free(id);
	}
	pthread_mutex_destroy(&cm->lock);
	free(cm);
}

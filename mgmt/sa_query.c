/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "mgmt/node.h"
#include "mgmt/port_up.h"
#include "mgmt/sa_client.h"
#include "mgmt/sa_query.h"

/* The largest answer we reassemble: far beyond any table softib-sm has. */
#define SA_ANSWER_MAX (1u << 20)
/* Segments the requester lets the SA send ahead (RMPP NewWindowLast). */
#define SA_RMPP_WINDOW 16

/* One query waiting for its answer; on the node's SA client list. */
struct sib_sa_gq {
	uint64_t tid;
	uint16_t attr;
	unsigned port_num;
	bool done;
	uint16_t status;
	uint16_t attr_offset; /* record stride in 8-byte words (GetTable) */
	uint8_t *buf;
	uint32_t len, total; /* bytes so far, bytes announced */
	uint32_t next_seg;   /* the segment expected next (RMPP) */
	uint64_t last_ns;    /* when something last arrived */
	struct sib_sa_gq *next;
};

struct sm_route {
	struct sib_link *link;
	struct sib_endpoint ep;
	struct sib_mad_addr a;
};

/* Where the port's SM is.  0; -ENETDOWN when the port has no SM to ask
 * (not ACTIVE, no link, SOFTIB_SM=none: a subnet of one); -EAGAIN while no
 * SM has verified itself to the port yet (port_up.h): SA queries never go
 * to an unverified or unset address. */
static int sm_route(struct sib_node *node, unsigned port_num, struct sm_route *r)
{
	struct sib_port_mgmt *pm;
	struct sib_port *port = sib_node_port(node, port_num);
	int rc;

	if (!port)
		return -ENETDOWN;
	pm = &node->mgmt[port_num - 1];
	pthread_mutex_lock(&node->lock);
	rc = port->state != SIB_PORT_ACTIVE || !pm->link || pm->sm_none ? -ENETDOWN
	     : !pm->sm_heard						   ? -EAGAIN
									   : 0;
	r->link = pm->link;
	r->ep = pm->sm_ep;
	sib_mad_addr_init(&r->a, SIB_QP1, port->SMLID, port->LID);
	pthread_mutex_unlock(&node->lock);
	return rc;
}

/* An ACTIVE port whose SM has not verified itself yet asks it for SMInfo
 * (port_up.c): wait for that as long as one SA query may take, then give
 * up with a warning (the first time; later ones at debug level).  Not on
 * the thread that delivers MADs. */
static int sm_route_wait(struct sib_node *node, unsigned port_num, uint16_t attr,
			 struct sm_route *r)
{
	static bool warned;
	int rc;

	sib_port_up_wait(node, port_num, SIB_SA_TIMEOUT_MS * SIB_SA_TRIES * 1000000ull, false);
	rc = sm_route(node, port_num, r);
	if (rc != -EAGAIN)
		return rc;
	if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		sib_warn("SA query (attribute 0x%04x) not sent: no subnet manager has verified "
			 "itself to port %u (SubnGet(SMInfo) from a SOFTIB_SM address) within %u ms",
			 attr, port_num, SIB_SA_TIMEOUT_MS * SIB_SA_TRIES);
	else
		sib_dbg("SA query (attribute 0x%04x) not sent: port %u has no verified SM", attr,
			port_num);
	return -ENETDOWN;
}

static void build(uint8_t *mad, uint64_t tid, uint8_t method, uint16_t attr, uint64_t comp_mask,
		  const uint8_t *record, unsigned rec_bytes)
{
	struct ib_sa_mad m;

	memset(&m, 0, sizeof(m));
	m.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	m.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	m.hdr.ClassVersion = IB_SA_CLASS_VERSION;
	ib_mad_set_method(&m.hdr, method);
	m.hdr.TransactionID = tid;
	m.hdr.AttributeID = attr;
	m.ComponentMask = comp_mask;
	if (record)
		memcpy(m.SubnAdmData, record,
		       rec_bytes < sizeof(m.SubnAdmData) ? rec_bytes : sizeof(m.SubnAdmData));
	ib_sa_mad_encode(&m, mad);
}

void sib_sa_send_only(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
		      uint64_t comp_mask, const uint8_t *record, unsigned rec_bytes)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sm_route r;
	int rc = sm_route(node, port_num, &r);

	/* Nothing waits here (exit): without a verified SM it is not sent. */
	if (rc) {
		sib_dbg("SA %s (attribute 0x%04x) not sent: port %u has %s", ib_mad_method_str(method),
			attr, port_num, rc == -EAGAIN ? "no verified SM yet" : "no SM to ask");
		return;
	}
	build(mad, sib_mad_new_tid(), method, attr, comp_mask, record, rec_bytes);
	sib_mgmt_send(r.link, &r.a, mad, &r.ep);
}

/* An RMPP ACK for segment seg (IBA 13.6.2.2), from the rx path. */
static void send_ack(struct sib_node *node, const struct sib_sa_gq *q, const struct ib_sa_mad *in,
		     uint32_t seg)
{
	struct ib_sa_mad m = *in;
	uint8_t mad[IB_MAD_BYTES];
	struct sm_route r;

	if (sm_route(node, q->port_num, &r))
		return;
	memset(&m.rmpp, 0, sizeof(m.rmpp));
	m.rmpp.RMPPVersion = IB_RMPP_VERSION;
	m.rmpp.RMPPType = IB_RMPP_TYPE_ACK;
	m.rmpp.RMPPFlags = IB_RMPP_FLAG_ACTIVE;
	m.rmpp.Data1 = seg;
	m.rmpp.Data2 = seg + SA_RMPP_WINDOW;
	memset(m.SubnAdmData, 0, sizeof(m.SubnAdmData));
	ib_sa_mad_encode(&m, mad);
	sib_mgmt_send(r.link, &r.a, mad, &r.ep);
}

/* Under sa->lock: one segment of an RMPP answer.  False on nonsense. */
static bool take_segment(struct sib_node *node, struct sib_sa_gq *q, const struct ib_sa_mad *m)
{
	uint32_t seg = m->rmpp.Data1, n;

	if (seg != q->next_seg) {
		/* A duplicate or a gap: ACK what we have, in order. */
		if (q->next_seg > 1)
			send_ack(node, q, m, q->next_seg - 1);
		return true;
	}
	if (seg == 1) {
		uint32_t nseg = (m->rmpp.Data2 + IB_SA_RMPP_SEG_BYTES - 1) / IB_SA_RMPP_SEG_BYTES;

		if (!(m->rmpp.RMPPFlags & IB_RMPP_FLAG_FIRST) ||
		    m->rmpp.Data2 < nseg * IB_SA_CLASS_HDR_BYTES)
			return false;
		q->total = m->rmpp.Data2 - nseg * IB_SA_CLASS_HDR_BYTES;
		q->attr_offset = m->AttributeOffset;
		if (q->total > SA_ANSWER_MAX || (q->total && !q->attr_offset))
			return false;
		free(q->buf);
		q->buf = q->total ? malloc(q->total) : NULL;
		if (q->total && !q->buf)
			return false;
		q->len = 0;
	}
	n = q->total - q->len < IB_SA_DATA_BYTES ? q->total - q->len : IB_SA_DATA_BYTES;
	if (n)
		memcpy(q->buf + q->len, m->SubnAdmData, n);
	q->len += n;
	q->next_seg++;
	send_ack(node, q, m, seg);
	if (m->rmpp.RMPPFlags & IB_RMPP_FLAG_LAST) {
		if (q->len != q->total)
			return false;
		q->status = m->hdr.Status;
		q->done = true;
	}
	return true;
}

bool sib_sa_query_rx(struct sib_node *node, unsigned port_num, const uint8_t *mad)
{
	struct sib_sa_client *sa = &node->sa;
	struct sib_sa_gq *q;
	struct ib_sa_mad m;

	(void)port_num;
	if (!(mad[3] & IB_MAD_METHOD_RESP))
		return false;
	ib_sa_mad_decode(&m, mad);
	pthread_mutex_lock(&sa->lock);
	for (q = sa->gqueries; q && q->tid != m.hdr.TransactionID; q = q->next)
		;
	if (!q || q->done || m.hdr.AttributeID != q->attr) {
		pthread_mutex_unlock(&sa->lock);
		return q != NULL;
	}
	q->last_ns = sib_link_now_ns();
	if (m.rmpp.RMPPFlags & IB_RMPP_FLAG_ACTIVE) {
		if (m.rmpp.RMPPType == IB_RMPP_TYPE_DATA && !take_segment(node, q, &m)) {
			sib_dbg("SA answer 0x%016llx: a malformed RMPP segment; asking again",
				(unsigned long long)q->tid);
			q->next_seg = 1; /* the retry starts over */
		}
	} else {
		/* One MAD: one record, or none with a status. */
		free(q->buf);
		q->buf = NULL;
		q->status = m.hdr.Status;
		q->attr_offset = 0;
		q->total = q->len = 0;
		if (!q->status && (q->buf = malloc(IB_SA_DATA_BYTES))) {
			memcpy(q->buf, m.SubnAdmData, IB_SA_DATA_BYTES);
			q->total = q->len = IB_SA_DATA_BYTES;
		}
		q->done = true;
	}
	if (q->done)
		pthread_cond_broadcast(&sa->cond);
	pthread_mutex_unlock(&sa->lock);
	return true;
}

void sib_sa_answer_free(struct sib_sa_answer *ans)
{
	free(ans->records);
	memset(ans, 0, sizeof(*ans));
}

static void unlink_query(struct sib_sa_client *sa, struct sib_sa_gq *q)
{
	for (struct sib_sa_gq **pp = &sa->gqueries; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
}

int sib_sa_query(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
		 uint64_t comp_mask, const uint8_t *record, unsigned rec_bytes,
		 struct sib_sa_answer *ans)
{
	struct sib_sa_client *sa = &node->sa;
	uint8_t mad[IB_MAD_BYTES];
	struct sib_sa_gq q;
	struct sm_route r;
	int rc = 0;

	memset(ans, 0, sizeof(*ans));
	rc = sm_route(node, port_num, &r);
	if (rc == -ENETDOWN)
		return rc;
	if (node->ops->on_thread(node))
		return -EDEADLK;
	if (rc && (rc = sm_route_wait(node, port_num, attr, &r)))
		return rc;
	memset(&q, 0, sizeof(q));
	q.tid = sib_mad_new_tid();
	q.attr = attr;
	q.port_num = port_num;
	q.next_seg = 1;
	build(mad, q.tid, method, attr, comp_mask, record, rec_bytes);
	pthread_mutex_lock(&sa->lock);
	q.next = sa->gqueries;
	sa->gqueries = &q;
	for (unsigned attempt = 0; attempt < SIB_SA_TRIES && !q.done; attempt++) {
		/* Same TID every time: a late answer still counts, and the SA
		 * restarts a transfer it is asked for again. */
		q.next_seg = 1;
		q.last_ns = sib_link_now_ns();
		pthread_mutex_unlock(&sa->lock);
		sib_link_count(&sa->sent, 1);
		sib_mgmt_send(r.link, &r.a, mad, &r.ep);
		pthread_mutex_lock(&sa->lock);
		/* last_ns moves on with every segment of an RMPP transfer. */
		sib_sa_wait_locked(node, &q.done, &q.last_ns, SIB_SA_TIMEOUT_MS * 1000000ull);
	}
	unlink_query(sa, &q);
	if (!q.done) {
		sa->timeouts++;
		rc = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&sa->lock);
	if (rc) {
		free(q.buf);
		sib_warn("SA query (attribute 0x%04x) got no answer from the SM within %u ms; is "
			 "softib-sm still running (SOFTIB_SM)?",
			 attr, SIB_SA_TIMEOUT_MS * SIB_SA_TRIES);
		return rc;
	}
	ans->status = q.status;
	ans->rec_bytes = q.attr_offset ? q.attr_offset * 8u : rec_bytes;
	if (!q.status && ans->rec_bytes && q.len >= ans->rec_bytes) {
		ans->nrec = q.len / ans->rec_bytes;
		ans->records = q.buf;
		q.buf = NULL;
	}
	free(q.buf);
	return 0;
}

int sib_sa_path_record(struct sib_node *node, unsigned port_num, const uint8_t sgid[16],
		       const uint8_t dgid[16], uint64_t service_id, uint8_t tclass,
		       struct ib_path_record *out)
{
	uint8_t rec[IB_PATH_RECORD_BYTES];
	struct sib_sa_answer ans;
	struct ib_path_record q;
	uint64_t cm = IB_PR_COMP_DGID | IB_PR_COMP_SGID | IB_PR_COMP_P_KEY |
		      IB_PR_COMP_NUMB_PATH | IB_PR_COMP_REVERSIBLE | IB_PR_COMP_TCLASS;
	int rc;

	memset(&q, 0, sizeof(q));
	memcpy(q.SGID.raw, sgid, 16);
	memcpy(q.DGID.raw, dgid, 16);
	q.P_Key = 0xffff;
	q.NumbPath = 1;
	q.Reversible = 1;
	q.TClass = tclass;
	if (service_id) {
		q.ServiceID = service_id;
		cm |= IB_PR_COMP_SERVICE_ID;
	}
	ib_path_record_encode(&q, rec);
	rc = sib_sa_query(node, port_num, IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD, cm, rec,
			  sizeof(rec), &ans);
	if (rc)
		return rc;
	if (ans.status || !ans.nrec) {
		sib_sa_answer_free(&ans);
		return -EHOSTUNREACH;
	}
	ib_path_record_decode(out, ans.records);
	sib_sa_answer_free(&ans);
	return 0;
}

static int service_op(struct sib_node *node, unsigned port_num, uint8_t method,
		      const struct ib_service_record *r)
{
	uint8_t rec[IB_SERVICE_RECORD_BYTES];
	struct sib_sa_answer ans;
	int rc;

	ib_service_record_encode(r, rec);
	rc = sib_sa_query(node, port_num, method, IB_SA_ATTR_SERVICE_RECORD,
			  IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_P_KEY |
				  IB_SR_COMP_SERVICE_KEY,
			  rec, sizeof(rec), &ans);
	if (rc)
		return rc;
	rc = ans.status == 0 ? 0
	     : (ans.status & IB_MAD_STATUS_CLASS_MASK) == IB_SA_STATUS_NO_RECORDS ? -ENOENT
									   : -EACCES;
	sib_sa_answer_free(&ans);
	return rc;
}

int sib_sa_service_set(struct sib_node *node, unsigned port_num,
		       const struct ib_service_record *r)
{
	return service_op(node, port_num, IB_MAD_METHOD_SET, r);
}

int sib_sa_service_delete(struct sib_node *node, unsigned port_num,
			  const struct ib_service_record *r)
{
	return service_op(node, port_num, IB_MAD_METHOD_DELETE, r);
}

int sib_sa_service_table(struct sib_node *node, unsigned port_num,
			 const struct ib_service_record *q, uint64_t comp_mask,
			 struct ib_service_record **out, unsigned *n)
{
	uint8_t rec[IB_SERVICE_RECORD_BYTES];
	struct sib_sa_answer ans;
	int rc;

	*out = NULL;
	*n = 0;
	ib_service_record_encode(q, rec);
	rc = sib_sa_query(node, port_num, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_SERVICE_RECORD,
			  comp_mask, rec, sizeof(rec), &ans);
	if (rc)
		return rc;
	if (ans.status) {
		uint16_t status = ans.status;

		sib_sa_answer_free(&ans);
		return (status & IB_MAD_STATUS_CLASS_MASK) == IB_SA_STATUS_NO_RECORDS ? 0 : -EIO;
	}
	if (ans.nrec && ans.rec_bytes >= IB_SERVICE_RECORD_BYTES) {
		*out = calloc(ans.nrec, sizeof(**out));
		if (!*out) {
			sib_sa_answer_free(&ans);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < ans.nrec; i++)
			ib_service_record_decode(&(*out)[i], ans.records + i * ans.rec_bytes);
		*n = ans.nrec;
	}
	sib_sa_answer_free(&ans);
	return 0;
}

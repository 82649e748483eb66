/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "mgmt/mad_send.h"
#include "mgmt/mad_wait.h"
#include "mgmt/node.h"
#include "mgmt/port_up.h"
#include "mgmt/sa_client.h"
#include "mgmt/sa_query.h"

/* The largest answer we reassemble: far beyond any table softib-sm has. */
#define SA_ANSWER_MAX (1u << 20)
/* Segments the requester lets the SA send ahead (RMPP NewWindowLast). */
#define SA_RMPP_WINDOW 16

/* One query a caller waits for: its answer, reassembled. */
struct query {
	unsigned port_num;
	uint16_t attr;
	bool answered;
	uint16_t status;
	uint16_t attr_offset; /* record stride in 8-byte words (GetTable) */
	uint8_t *buf;
	uint32_t len, total; /* bytes so far, bytes announced */
	uint32_t next_seg;   /* the segment expected next (RMPP) */
};

/* An ACTIVE port whose SM has not verified itself yet asks it for SMInfo
 * (port_up.c): wait for that as long as bring-up waits for a word from an
 * SM (SIB_PORT_BRINGUP_NS: after a slow bring-up the port asks only every
 * 2 s, and a loaded machine starves the SM), then give up with a warning
 * (the first time; later ones at debug level).  Not on the thread that
 * delivers MADs. */
static int sm_route_wait(struct sib_node *node, unsigned port_num, uint16_t attr,
			 struct sib_mad_send_req *req)
{
	static bool warned;
	int rc;

	sib_port_up_wait(node, port_num, SIB_PORT_BRINGUP_NS, false);
	rc = sib_sa_route(node, port_num, req);
	if (rc != -EAGAIN)
		return rc;
	if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		sib_warn("SA query (attribute 0x%04x) not sent: no subnet manager has verified "
			 "itself to port %u (SubnGet(SMInfo) from a SOFTIB_SM address) within %llu ms",
			 attr, port_num, (unsigned long long)(SIB_PORT_BRINGUP_NS / 1000000ull));
	else
		sib_dbg("SA query (attribute 0x%04x) not sent: port %u has no verified SM", attr,
			port_num);
	return -ENETDOWN;
}

/* The request; its TID is the send's (mad_send.h). */
static void build(uint8_t *mad, uint8_t method, uint16_t attr, uint64_t comp_mask,
		  const uint8_t *record, unsigned rec_bytes)
{
	struct ib_sa_mad m;

	memset(&m, 0, sizeof(m));
	sib_mad_request_hdr(&m.hdr, IB_MGMT_CLASS_SUBN_ADM, IB_SA_CLASS_VERSION, method, attr, 0);
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
	struct sib_mad_send_req req;
	int rc = sib_sa_route(node, port_num, &req);

	/* Nothing waits here (exit): without a verified SM it is not sent. */
	if (rc) {
		sib_dbg("SA %s (attribute 0x%04x) not sent: port %u has %s", ib_mad_method_str(method),
			attr, port_num, rc == -EAGAIN ? "no verified SM yet" : "no SM to ask");
		return;
	}
	build(mad, method, attr, comp_mask, record, rec_bytes);
	req.mad = mad;
	req.timeout_ns = 0; /* no answer awaited */
	sib_mad_post(&node->mads, &sib_sa_client_agent, &req, NULL);
}

/* An RMPP ACK for segment seg (IBA 13.6.2.2), under the query's TID. */
static void send_ack(struct sib_node *node, const struct query *q, const struct ib_sa_mad *in,
		     uint32_t seg)
{
	struct ib_sa_mad m = *in;
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_send_req req;

	if (sib_sa_route(node, q->port_num, &req))
		return;
	memset(&m.rmpp, 0, sizeof(m.rmpp));
	m.rmpp.RMPPVersion = IB_RMPP_VERSION;
	m.rmpp.RMPPType = IB_RMPP_TYPE_ACK;
	m.rmpp.RMPPFlags = IB_RMPP_FLAG_ACTIVE;
	m.rmpp.Data1 = seg;
	m.rmpp.Data2 = seg + SA_RMPP_WINDOW;
	memset(m.SubnAdmData, 0, sizeof(m.SubnAdmData));
	ib_sa_mad_encode(&m, mad);
	req.mad = mad;
	req.tid = in->hdr.TransactionID;
	req.timeout_ns = 0;
	sib_mad_post(&node->mads, &sib_sa_client_agent, &req, NULL);
}

/* One segment of an RMPP answer.  False on nonsense. */
static bool take_segment(struct sib_node *node, struct query *q, const struct ib_sa_mad *m)
{
	uint32_t seg = m->rmpp.Data1, n;

	/* Segment 1 starts the transfer, also when the SA starts it over for
	 * a try of ours that went again. */
	if (seg == 1)
		q->next_seg = 1;
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
		q->answered = true;
	}
	return true;
}

/* One MAD: one record, or none with a status. */
static void take_single(struct query *q, const struct ib_sa_mad *m)
{
	free(q->buf);
	q->buf = NULL;
	q->status = m->hdr.Status;
	q->attr_offset = 0;
	q->total = q->len = 0;
	if (!q->status && (q->buf = malloc(IB_SA_DATA_BYTES))) {
		memcpy(q->buf, m->SubnAdmData, IB_SA_DATA_BYTES);
		q->total = q->len = IB_SA_DATA_BYTES;
	}
	q->answered = true;
}

/* The answer, as it comes: every RMPP segment keeps the query's send out
 * and restarts its wait (IBA 13.6). */
static enum sib_mad_verdict query_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_node *node = owner;
	struct query *q = wc->context;
	struct ib_sa_mad m;

	if (wc->status == SIB_MAD_RESENT)
		sib_link_count(&node->sa.sent, 1);
	if (wc->status != SIB_MAD_RESPONSE)
		return SIB_MAD_DONE;
	ib_sa_mad_decode(&m, wc->resp->mad);
	if (m.hdr.AttributeID != q->attr)
		return SIB_MAD_MORE;
	if (!(m.rmpp.RMPPFlags & IB_RMPP_FLAG_ACTIVE)) {
		take_single(q, &m);
		return SIB_MAD_DONE;
	}
	if (m.rmpp.RMPPType == IB_RMPP_TYPE_DATA && !take_segment(node, q, &m)) {
		sib_dbg("SA answer 0x%016llx: a malformed RMPP segment; asking again",
			(unsigned long long)wc->tid);
		q->next_seg = 1; /* the next try starts over */
	}
	return q->answered ? SIB_MAD_DONE : SIB_MAD_MORE;
}

void sib_sa_answer_free(struct sib_sa_answer *ans)
{
	free(ans->records);
	memset(ans, 0, sizeof(*ans));
}

int sib_sa_query(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
		 uint64_t comp_mask, const uint8_t *record, unsigned rec_bytes,
		 struct sib_sa_answer *ans)
{
	struct query q = { .port_num = port_num, .attr = attr, .next_seg = 1 };
	struct sib_mad_send_req req;
	enum sib_mad_status end;
	uint8_t mad[IB_MAD_BYTES];
	int rc;

	memset(ans, 0, sizeof(*ans));
	rc = sib_sa_route(node, port_num, &req);
	if (rc == -ENETDOWN)
		return rc;
	if (node->ops->on_thread(node))
		return -EDEADLK;
	if (rc && (rc = sm_route_wait(node, port_num, attr, &req)))
		return rc;
	build(mad, method, attr, comp_mask, record, rec_bytes);
	req.mad = mad;
	req.fn = query_event;
	req.context = &q;
	sib_link_count(&node->sa.sent, 1);
	rc = sib_mad_call(node, &sib_sa_client_agent, &req, &end);
	if (!rc && !q.answered) {
		pthread_mutex_lock(&node->sa.lock);
		node->sa.timeouts++;
		pthread_mutex_unlock(&node->sa.lock);
		sib_warn("SA query (attribute 0x%04x) got no answer from the SM within %u ms; is "
			 "softib-sm still running (SOFTIB_SM)?",
			 attr, SIB_SA_WAIT_MS);
		rc = -ETIMEDOUT;
	}
	if (rc) {
		free(q.buf);
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

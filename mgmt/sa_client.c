/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "mgmt/mad_agent.h"
#include "mgmt/node.h"
#include "base/log.h"
#include "mgmt/sa_client.h"
#include "mgmt/sa_query.h"
#include "wire/sa.h"

struct sib_sa_query {
	uint64_t tid;
	bool done;
	uint16_t status;
	struct sib_endpoint_record rec;
	struct sib_sa_query *next;
};

int sib_sa_client_init(struct sib_sa_client *sa)
{
	pthread_condattr_t ca;

	memset(sa, 0, sizeof(*sa));
	pthread_mutex_init(&sa->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sa->cond, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

void sib_sa_client_fini(struct sib_sa_client *sa)
{
	pthread_cond_destroy(&sa->cond);
	pthread_mutex_destroy(&sa->lock);
}

static bool key_matches(const struct sib_sa_cache_entry *e, bool by_gid, uint16_t lid,
			const uint8_t *gid)
{
	if (!e->used || e->by_gid != by_gid)
		return false;
	return by_gid ? !memcmp(e->gid, gid, 16) : e->lid == lid;
}

/* Under sa->lock: the entry for the key, or NULL; an expired one only
 * with stale (it stays until overwritten: the data path still uses it
 * while it asks again). */
static struct sib_sa_cache_entry *cache_find(struct sib_sa_client *sa, bool by_gid, uint16_t lid,
					     const uint8_t *gid, uint64_t now, bool stale)
{
	for (unsigned i = 0; i < SIB_SA_CACHE_SIZE; i++) {
		struct sib_sa_cache_entry *e = &sa->cache[i];

		if (key_matches(e, by_gid, lid, gid) && (stale || e->expires_ns > now))
			return e;
	}
	return NULL;
}

static void cache_put(struct sib_sa_client *sa, bool by_gid, uint16_t lid, const uint8_t *gid,
		      bool found, const struct sib_endpoint_record *rec, uint64_t now)
{
	struct sib_sa_cache_entry *e = NULL;

	for (unsigned i = 0; i < SIB_SA_CACHE_SIZE && !e; i++)
		if (key_matches(&sa->cache[i], by_gid, lid, gid) || !sa->cache[i].used)
			e = &sa->cache[i];
	if (!e) {
		e = &sa->cache[sa->next_victim];
		sa->next_victim = (sa->next_victim + 1) % SIB_SA_CACHE_SIZE;
	}
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->by_gid = by_gid;
	e->lid = lid;
	if (gid)
		memcpy(e->gid, gid, 16);
	e->found = found;
	if (found)
		e->rec = *rec;
	e->expires_ns = now + (found ? SIB_SA_POSITIVE_TTL_NS : SIB_SA_NEGATIVE_TTL_NS);
}

void sib_sa_flush_cache(struct sib_node *node)
{
	pthread_mutex_lock(&node->sa.lock);
	for (unsigned i = 0; i < SIB_SA_CACHE_SIZE; i++)
		node->sa.cache[i].used = false;
	pthread_mutex_unlock(&node->sa.lock);
}

/* Responses from the SA come back here; a node serves no SA requests.
 * Only the port's verified SM answers, and only what we asked. */
static bool sa_client_rx(void *owner, const struct sib_mad_recv *r)
{
	struct sib_node *node = owner;
	unsigned port_num = r->port_num;
	const uint8_t *mad = r->mad;
	const struct sib_endpoint *from = r->from;
	struct sib_sa_client *sa = &node->sa;
	struct sib_endpoint_record rec;
	struct ib_sa_mad m;
	bool from_sm, taken = false;

	if (!(mad[3] & IB_MAD_METHOD_RESP))
		return false;
	pthread_mutex_lock(&node->lock);
	from_sm = node->mgmt[port_num - 1].sm_heard && from &&
		  sib_endpoint_equal(from, &node->mgmt[port_num - 1].sm_ep);
	pthread_mutex_unlock(&node->lock);
	/* Only the port's verified SM answers SA queries, the RDMA CM's too. */
	if (from_sm && sib_sa_query_rx(node, port_num, mad))
		return true;
	ib_sa_mad_decode(&m, mad);
	if (!from_sm || ib_mad_method(&m.hdr) != IB_MAD_METHOD_GET_RESP ||
	    m.hdr.AttributeID != SIB_SA_ATTR_ENDPOINT_RECORD) {
		sib_link_count(&sa->foreign, 1);
		return true;
	}
	pthread_mutex_lock(&sa->lock);
	for (struct sib_sa_query *q = sa->queries; q; q = q->next) {
		if (q->tid != m.hdr.TransactionID || q->done)
			continue;
		q->status = m.hdr.Status;
		if (!q->status && sib_endpoint_record_decode(&q->rec, m.SubnAdmData))
			q->status = IB_SA_STATUS_NO_RECORDS; /* unusable address family */
		q->done = true;
		taken = true;
		pthread_cond_broadcast(&sa->cond);
		break;
	}
	for (unsigned i = 0; i < SIB_SA_ASYNC_MAX && !taken; i++) {
		struct sib_sa_async *as = &sa->async[i];
		bool found;

		if (!as->sent_ns || as->tid != m.hdr.TransactionID)
			continue;
		found = !m.hdr.Status && !sib_endpoint_record_decode(&rec, m.SubnAdmData) &&
			rec.LID == as->lid;
		cache_put(sa, false, as->lid, NULL, found, &rec, sib_link_now_ns());
		as->sent_ns = 0;
		taken = true;
	}
	pthread_mutex_unlock(&sa->lock);
	if (!taken)
		sib_link_count(&sa->foreign, 1);
	return true;
}

static const struct sib_mad_agent sa_client_agent = {
	.name = "SA client",
	.qp = SIB_QP1,
	.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
	.rx = sa_client_rx,
};

int sib_sa_client_register(struct sib_node *node)
{
	return sib_mad_agent_register(node, &sa_client_agent);
}

void sib_sa_wait_locked(struct sib_node *node, const bool *done, const uint64_t *since_ns,
			uint64_t timeout_ns)
{
	struct sib_sa_client *sa = &node->sa;

	while (!*done) {
		uint64_t now = sib_link_now_ns(), deadline = *since_ns + timeout_ns, until = deadline;
		struct timespec ts;

		if (now >= deadline)
			break;
		if (!node->ops->threaded(node)) {
			/* No progress thread (tests): drive the node ourselves,
			 * a millisecond at a time. */
			pthread_mutex_unlock(&sa->lock);
			node->ops->poll(node);
			pthread_mutex_lock(&sa->lock);
			if (*done)
				break;
			until = now + 1000000ull < deadline ? now + 1000000ull : deadline;
		}
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&sa->cond, &sa->lock, &ts);
	}
}

static int send_query(struct sib_node *node, unsigned port_num, uint64_t tid, bool by_gid,
		      uint16_t lid, const uint8_t *gid)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_endpoint_record rec;
	struct sib_endpoint sm_ep;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];
	struct ib_sa_mad m;
	uint16_t my_lid, sm_lid;
	bool heard;

	pthread_mutex_lock(&node->lock);
	sm_ep = pm->sm_ep;
	heard = pm->sm_heard;
	my_lid = node->ports[port_num - 1].LID;
	sm_lid = node->ports[port_num - 1].SMLID;
	pthread_mutex_unlock(&node->lock);
	if (!heard)
		return -ENETDOWN; /* no verified SM to ask */

	memset(&m, 0, sizeof(m));
	m.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	m.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	m.hdr.ClassVersion = IB_SA_CLASS_VERSION;
	ib_mad_set_method(&m.hdr, IB_MAD_METHOD_GET);
	m.hdr.TransactionID = tid;
	m.hdr.AttributeID = SIB_SA_ATTR_ENDPOINT_RECORD;
	m.ComponentMask = by_gid ? SIB_EPR_COMP_GID : SIB_EPR_COMP_LID;
	memset(&rec, 0, sizeof(rec));
	rec.LID = lid;
	if (gid)
		memcpy(rec.GID, gid, 16);
	sib_endpoint_record_encode(&rec, m.SubnAdmData);
	ib_sa_mad_encode(&m, mad);
	sib_mad_addr_init(&a, SIB_QP1, sm_lid, my_lid);
	sib_link_count(&node->sa.sent, 1);
	return sib_mgmt_send(pm->link, &a, mad, &sm_ep);
}

static int resolve(struct sib_node *node, unsigned port_num, bool by_gid, uint16_t lid,
		   const uint8_t *gid, struct sib_endpoint_record *out)
{
	struct sib_sa_client *sa = &node->sa;
	struct sib_port *port = sib_node_port(node, port_num);
	struct sib_sa_cache_entry *e;
	struct sib_sa_query q;
	bool self, active;
	int rc = -ETIMEDOUT;

	if (!port)
		return -EINVAL;
	if (!by_gid && (lid == 0 || lid > SIB_LID_UNICAST_MAX))
		return -EINVAL;
	pthread_mutex_lock(&node->lock);
	active = port->state == SIB_PORT_ACTIVE && node->mgmt[port_num - 1].sm_heard;
	self = by_gid ? !memcmp(gid, port->GID[0], 16) : lid == port->LID;
	if (self && node->mgmt[port_num - 1].link) {
		/* Our own port: no need to ask anyone (loopback QPs). */
		out->LID = port->LID;
		memcpy(out->GID, port->GID[0], 16);
		out->ep = node->mgmt[port_num - 1].link->local;
	}
	pthread_mutex_unlock(&node->lock);
	if (self)
		return 0;
	if (!active || !node->mgmt[port_num - 1].link || node->mgmt[port_num - 1].sm_none)
		return -ENETDOWN;
	if (node->ops->on_thread(node))
		return -EDEADLK;

	pthread_mutex_lock(&sa->lock);
	e = cache_find(sa, by_gid, lid, gid, sib_link_now_ns(), false);
	if (e) {
		sa->hits++;
		rc = e->found ? 0 : -ENOENT;
		if (e->found)
			*out = e->rec;
		pthread_mutex_unlock(&sa->lock);
		return rc;
	}
	memset(&q, 0, sizeof(q));
	q.tid = sib_mad_new_tid();
	q.next = sa->queries;
	sa->queries = &q;
	pthread_mutex_unlock(&sa->lock);

	for (unsigned attempt = 0; attempt < SIB_SA_TRIES && !q.done; attempt++) {
		uint64_t deadline = sib_link_now_ns() + SIB_SA_TIMEOUT_MS * 1000000ull;

		/* Same TID on every retry: a late answer to an earlier try
		 * still counts (IBA 13.4.6.4). */
		send_query(node, port_num, q.tid, by_gid, lid, gid);
		pthread_mutex_lock(&sa->lock);
		sib_sa_wait_locked(node, &q.done, &deadline, 0);
		pthread_mutex_unlock(&sa->lock);
	}

	pthread_mutex_lock(&sa->lock);
	for (struct sib_sa_query **pp = &sa->queries; *pp; pp = &(*pp)->next) {
		if (*pp == &q) {
			*pp = q.next;
			break;
		}
	}
	if (!q.done) {
		sa->timeouts++;
		rc = -ETIMEDOUT;
	} else if (q.status == 0) {
		*out = q.rec;
		cache_put(sa, by_gid, lid, gid, true, &q.rec, sib_link_now_ns());
		rc = 0;
	} else {
		/* NO_RECORDS and anything else the SA refuses: no such port. */
		cache_put(sa, by_gid, lid, gid, false, NULL, sib_link_now_ns());
		rc = -ENOENT;
	}
	pthread_mutex_unlock(&sa->lock);
	if (rc == -ETIMEDOUT)
		sib_warn("SA query for %s %u got no answer from the SM within %u ms; is softib-sm "
			 "still running (SOFTIB_SM)?",
			 by_gid ? "a GID of LID" : "LID", lid, SIB_SA_TIMEOUT_MS * SIB_SA_TRIES);
	return rc;
}

int sib_sa_resolve_lid(struct sib_node *node, unsigned port_num, uint16_t lid,
		       struct sib_endpoint *out)
{
	struct sib_endpoint_record rec;
	int rc = resolve(node, port_num, false, lid, NULL, &rec);

	if (!rc)
		*out = rec.ep;
	return rc;
}

int sib_sa_resolve_gid(struct sib_node *node, unsigned port_num, const uint8_t gid[16],
		       struct sib_endpoint *out, uint16_t *lid_out)
{
	struct sib_endpoint_record rec;
	int rc;

	if (!gid)
		return -EINVAL;
	rc = resolve(node, port_num, true, 0, gid, &rec);
	if (!rc) {
		*out = rec.ep;
		if (lid_out)
			*lid_out = rec.LID;
	}
	return rc;
}

int sib_sa_lookup_lid(struct sib_node *node, unsigned port_num, uint16_t lid, bool refresh,
		      struct sib_endpoint *out)
{
	struct sib_sa_client *sa = &node->sa;
	struct sib_port *port = sib_node_port(node, port_num);
	struct sib_sa_cache_entry *e;
	struct sib_sa_async *slot = NULL;
	uint64_t now = sib_link_now_ns(), tid = 0;
	bool ask, self;
	int rc;

	if (!port || lid == 0 || lid > SIB_LID_UNICAST_MAX)
		return -ENOENT;
	pthread_mutex_lock(&node->lock);
	self = lid == port->LID && node->mgmt[port_num - 1].link;
	if (self)
		*out = node->mgmt[port_num - 1].link->local;
	pthread_mutex_unlock(&node->lock);
	if (self)
		return 0;
	if (node->mgmt[port_num - 1].sm_none || !node->mgmt[port_num - 1].link)
		return -ENETDOWN;

	pthread_mutex_lock(&sa->lock);
	e = cache_find(sa, false, lid, NULL, now, true);
	rc = !e ? -EAGAIN : e->found ? 0 : e->expires_ns > now ? -ENOENT : -EAGAIN;
	if (e && e->found)
		*out = e->rec.ep;
	ask = rc == -EAGAIN || (e && e->expires_ns <= now) || refresh;
	for (unsigned i = 0; i < SIB_SA_ASYNC_MAX && ask; i++) {
		struct sib_sa_async *as = &sa->async[i];

		/* A lookup nobody has needed again for a while is given up. */
		if (as->sent_ns && now - as->sent_ns > SIB_SA_ASYNC_GIVEUP_NS)
			as->sent_ns = 0;
		if (as->sent_ns && as->lid == lid) {
			/* Asked already: asked again, with the same TID (IBA
			 * 13.4.6.4), once the wait doubled with each try has
			 * passed; a starved SM answers late, never too late. */
			if (now - as->sent_ns < SIB_SA_REFRESH_NS << as->tries) {
				ask = false;
			} else {
				slot = as;
				break;
			}
		} else if (!as->sent_ns && !slot) {
			slot = as;
		}
	}
	if (ask && slot) {
		if (slot->sent_ns && slot->lid == lid) {
			if (slot->tries < SIB_SA_ASYNC_BACKOFF_MAX)
				slot->tries++;
		} else {
			slot->lid = lid;
			slot->tid = sib_mad_new_tid();
			slot->tries = 0;
		}
		slot->sent_ns = now;
		tid = slot->tid;
	}
	pthread_mutex_unlock(&sa->lock);
	if (tid && send_query(node, port_num, tid, false, lid, NULL)) {
		pthread_mutex_lock(&sa->lock);
		slot->sent_ns = 0;
		pthread_mutex_unlock(&sa->lock);
	}
	return rc;
}

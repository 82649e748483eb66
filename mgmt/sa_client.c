/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "mgmt/cm.h"
#include "mgmt/mad_send.h"
#include "mgmt/mad_wait.h"
#include "mgmt/node.h"
#include "mgmt/sa_client.h"
#include "wire/sa.h"

/* A resolve a caller waits for: the key, and what the SM said. */
struct resolve_query {
	unsigned port_num;
	bool by_gid;
	uint16_t lid;
	const uint8_t *gid;
	bool answered, found;
	struct sib_endpoint_record rec;
};

int sib_sa_client_init(struct sib_sa_client *sa)
{
	memset(sa, 0, sizeof(*sa));
	pthread_mutex_init(&sa->lock, NULL);
	return 0;
}

void sib_sa_client_fini(struct sib_sa_client *sa)
{
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

/* An SA response none of our sends took: not from the port's SM, or to
 * nothing we asked (only the verified SM answers, the RDMA CM's queries
 * too).  A node serves no SA requests. */
static bool sa_client_rx(void *owner, const struct sib_mad_recv *r)
{
	struct sib_node *node = owner;

	if (!(r->mad[3] & IB_MAD_METHOD_RESP))
		return false;
	sib_link_count(&node->sa.foreign, 1);
	return true;
}

const struct sib_mad_agent sib_sa_client_agent = {
	.name = "SA client",
	.qp = SIB_QP1,
	.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
	.class_version = IB_SA_CLASS_VERSION,
	.rx = sa_client_rx,
};

int sib_sa_client_register(struct sib_node *node)
{
	return sib_mad_agent_register(node, &sib_sa_client_agent);
}

int sib_sa_route(struct sib_node *node, unsigned port_num, struct sib_mad_send_req *req)
{
	struct sib_port *port = sib_node_port(node, port_num);
	struct sib_port_mgmt *pm;
	int rc;

	memset(req, 0, sizeof(*req));
	if (!port)
		return -ENETDOWN;
	pm = &node->mgmt[port_num - 1];
	pthread_mutex_lock(&node->lock);
	rc = port->state != SIB_PORT_ACTIVE || !pm->link || pm->sm_none ? -ENETDOWN
	     : !pm->sm_heard						   ? -EAGAIN
									   : 0;
	req->port_num = port_num;
	req->dst = pm->sm_ep;
	sib_mad_addr_init(&req->addr, SIB_QP1, port->SMLID, port->LID);
	pthread_mutex_unlock(&node->lock);
	req->timeout_ns = SIB_SA_TIMEOUT_MS * 1000000ull;
	req->timeout_max_ns = req->timeout_ns << (SIB_SA_TRIES - 1);
	req->retries = SIB_SA_TRIES - 1;
	return rc;
}

/* SubnAdmGet(SoftibEndpointRecord) by LID or by GID. */
static void build_query(uint8_t *mad, bool by_gid, uint16_t lid, const uint8_t *gid)
{
	struct sib_endpoint_record rec;
	struct ib_sa_mad m;

	memset(&m, 0, sizeof(m));
	sib_mad_request_hdr(&m.hdr, IB_MGMT_CLASS_SUBN_ADM, IB_SA_CLASS_VERSION, IB_MAD_METHOD_GET,
			    SIB_SA_ATTR_ENDPOINT_RECORD, 0);
	m.ComponentMask = by_gid ? SIB_EPR_COMP_GID : SIB_EPR_COMP_LID;
	memset(&rec, 0, sizeof(rec));
	rec.LID = lid;
	if (gid)
		memcpy(rec.GID, gid, 16);
	sib_endpoint_record_encode(&rec, m.SubnAdmData);
	ib_sa_mad_encode(&m, mad);
}

/* The answer to an endpoint query: false when it is none (another
 * attribute or method: counted foreign, the query waits on). */
static bool is_endpoint_answer(struct sib_node *node, const uint8_t *mad)
{
	struct ib_mad_hdr h;

	ib_mad_hdr_decode(&h, mad);
	if (ib_mad_method(&h) == IB_MAD_METHOD_GET_RESP &&
	    h.AttributeID == SIB_SA_ATTR_ENDPOINT_RECORD)
		return true;
	sib_link_count(&node->sa.foreign, 1);
	return false;
}

/*
 * Caches the SM's answer for the key: where the port lives, or (any status,
 * an unusable address family, a record for another LID) that there is no
 * such port.  The owner hears of every answer for a LID.  True: found.
 */
static bool cache_answer(struct sib_node *node, unsigned port_num, bool by_gid, uint16_t lid,
			 const uint8_t *gid, const uint8_t *mad, struct sib_endpoint_record *rec)
{
	struct sib_sa_client *sa = &node->sa;
	struct ib_sa_mad m;
	bool found;

	ib_sa_mad_decode(&m, mad);
	found = !m.hdr.Status && !sib_endpoint_record_decode(rec, m.SubnAdmData) &&
		(by_gid || rec->LID == lid);
	pthread_mutex_lock(&sa->lock);
	cache_put(sa, by_gid, lid, gid, found, rec, sib_link_now_ns());
	pthread_mutex_unlock(&sa->lock);
	if (!by_gid && node->ops->lid_resolved)
		node->ops->lid_resolved(node, port_num, lid);
	if (!by_gid)
		sib_cm_source_known(node, port_num, lid);
	return found;
}

static enum sib_mad_verdict resolve_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_node *node = owner;
	struct resolve_query *q = wc->context;

	if (wc->status == SIB_MAD_RESENT)
		sib_link_count(&node->sa.sent, 1);
	if (wc->status != SIB_MAD_RESPONSE)
		return SIB_MAD_DONE;
	if (!is_endpoint_answer(node, wc->resp->mad))
		return SIB_MAD_MORE;
	q->found = cache_answer(node, q->port_num, q->by_gid, q->lid, q->gid, wc->resp->mad,
				&q->rec);
	q->answered = true;
	return SIB_MAD_DONE;
}

/* Asks the SM and waits (the cache missed). */
static int ask(struct sib_node *node, struct resolve_query *q)
{
	struct sib_mad_send_req req;
	enum sib_mad_status end;
	uint8_t mad[IB_MAD_BYTES];
	int rc;

	if (sib_sa_route(node, q->port_num, &req))
		return -ENETDOWN;
	build_query(mad, q->by_gid, q->lid, q->gid);
	req.mad = mad;
	req.fn = resolve_event;
	req.context = q;
	sib_link_count(&node->sa.sent, 1);
	rc = sib_mad_call(node, &sib_sa_client_agent, &req, &end);
	if (rc)
		return rc;
	if (q->answered)
		return q->found ? 0 : -ENOENT; /* NO_RECORDS and any refusal: no such port */
	pthread_mutex_lock(&node->sa.lock);
	node->sa.timeouts++;
	pthread_mutex_unlock(&node->sa.lock);
	sib_warn("SA query for %s %u got no answer from the SM within %u ms; is softib-sm "
		 "still running (SOFTIB_SM)?",
		 q->by_gid ? "a GID of LID" : "LID", q->lid, SIB_SA_WAIT_MS);
	return -ETIMEDOUT;
}

static int resolve(struct sib_node *node, unsigned port_num, bool by_gid, uint16_t lid,
		   const uint8_t *gid, struct sib_endpoint_record *out)
{
	struct resolve_query q = { .port_num = port_num, .by_gid = by_gid, .lid = lid, .gid = gid };
	struct sib_sa_client *sa = &node->sa;
	struct sib_port *port = sib_node_port(node, port_num);
	struct sib_sa_cache_entry *e;
	bool self, active;
	int rc;

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
	pthread_mutex_unlock(&sa->lock);
	rc = ask(node, &q);
	if (!rc)
		*out = q.rec;
	return rc;
}

/* A port cabled to a softib-switch reaches every LID through the cable
 * (node.h, fabric): no SA question.  True with *out set.  Both fields are
 * set when the HCA is made, before any thread runs, and never change: no
 * lock on the receive path. */
static bool through_cable(struct sib_node *node, unsigned port_num, struct sib_endpoint *out)
{
	const struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];

	if (!pm->fabric)
		return false;
	*out = pm->cable;
	return true;
}

int sib_sa_resolve_lid(struct sib_node *node, unsigned port_num, uint16_t lid,
		       struct sib_endpoint *out)
{
	struct sib_endpoint_record rec;
	int rc;

	/* a bad port or LID gets resolve()'s answer */
	if (sib_node_port(node, port_num) && lid && lid <= SIB_LID_UNICAST_MAX &&
	    through_cable(node, port_num, out))
		return 0;
	rc = resolve(node, port_num, false, lid, NULL, &rec);

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

static enum sib_mad_verdict lookup_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_node *node = owner;
	struct sib_sa_async *as = wc->context;
	struct sib_endpoint_record rec;

	if (wc->status == SIB_MAD_RESENT) {
		sib_link_count(&node->sa.sent, 1);
		return SIB_MAD_DONE;
	}
	if (wc->status == SIB_MAD_RESPONSE) {
		if (!is_endpoint_answer(node, wc->resp->mad))
			return SIB_MAD_MORE;
		cache_answer(node, as->port_num, false, as->lid, NULL, wc->resp->mad, &rec);
	}
	pthread_mutex_lock(&node->sa.lock);
	as->busy = false;
	pthread_mutex_unlock(&node->sa.lock);
	return SIB_MAD_DONE;
}

/* Under sa->lock: the slot for a background lookup of lid, or NULL when
 * none is needed (one is out already, refresh asked too lately) or free. */
static struct sib_sa_async *lookup_slot(struct sib_sa_client *sa, uint16_t lid, uint64_t now)
{
	struct sib_sa_async *slot = NULL;

	for (unsigned i = 0; i < SIB_SA_ASYNC_MAX; i++) {
		struct sib_sa_async *as = &sa->async[i];

		if (as->asked_ns && as->lid == lid) {
			/* Out already: its send asks again by itself (mad_send.h). */
			if (as->busy || now - as->asked_ns < SIB_SA_REFRESH_NS)
				return NULL;
			return as;
		}
		if (!as->busy && (!slot || as->asked_ns < slot->asked_ns))
			slot = as;
	}
	if (!slot)
		sa->async_full++; /* a flood of unknown sources waits its turn */
	return slot;
}

/* Asks in the background; the answer fills the cache (lookup_event). */
static void lookup_ask(struct sib_node *node, struct sib_sa_async *as)
{
	struct sib_mad_send_req req;
	uint8_t mad[IB_MAD_BYTES];

	if (!sib_sa_route(node, as->port_num, &req)) {
		build_query(mad, false, as->lid, NULL);
		req.mad = mad;
		req.timeout_ns = SIB_SA_REFRESH_NS;
		req.timeout_max_ns = SIB_SA_REFRESH_NS << SIB_SA_ASYNC_BACKOFF_MAX;
		req.retries = SIB_SA_ASYNC_RETRIES;
		req.fn = lookup_event;
		req.context = as;
		sib_link_count(&node->sa.sent, 1);
		if (!sib_mad_post(&node->mads, &sib_sa_client_agent, &req, NULL))
			return;
	}
	pthread_mutex_lock(&node->sa.lock);
	as->busy = false;
	pthread_mutex_unlock(&node->sa.lock);
}

int sib_sa_lookup_lid(struct sib_node *node, unsigned port_num, uint16_t lid, bool refresh,
		      struct sib_endpoint *out)
{
	struct sib_sa_client *sa = &node->sa;
	struct sib_port *port = sib_node_port(node, port_num);
	struct sib_sa_cache_entry *e;
	struct sib_sa_async *slot = NULL;
	uint64_t now = sib_link_now_ns();
	bool self;
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
	if (through_cable(node, port_num, out))
		return 0;

	pthread_mutex_lock(&sa->lock);
	e = cache_find(sa, false, lid, NULL, now, true);
	rc = !e ? -EAGAIN : e->found ? 0 : e->expires_ns > now ? -ENOENT : -EAGAIN;
	if (e && e->found)
		*out = e->rec.ep;
	if (rc == -EAGAIN || (e && e->expires_ns <= now) || refresh)
		slot = lookup_slot(sa, lid, now);
	if (slot) {
		slot->lid = lid;
		slot->port_num = port_num;
		slot->busy = true;
		slot->asked_ns = now;
	}
	pthread_mutex_unlock(&sa->lock);
	if (slot)
		lookup_ask(node, slot);
	return rc;
}

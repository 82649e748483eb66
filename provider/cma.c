/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rdma_cm ids over the IB CM, as the kernel's rdma_cm (drivers/infiniband/
 * core/cma.c) runs them for user space: what each ucma command does to an
 * id, how IB CM events become rdma_cm events, and the QP attributes a
 * connection implies (rdma_init_qp_attr).
 *
 * Connections: CONNECT sends a REQ (RC, UC) or SIDR_REQ (UD) whose private
 * data starts with the IP addressing header (IBA Annex A11; not for AF_IB
 * ids), with StartingPSN our receive queue's first PSN and the timing of
 * SOFTIB_CM_RESPONSE_TIMEOUT and SOFTIB_CM_MAX_RETRIES.  A REQ becomes a
 * CONNECT_REQUEST on the listener whose address covers the header's
 * destination (else REJ 8); a delayed MRA answers retransmissions while
 * the program decides.  ACCEPT sends REP (or SIDR_REP), REJECT sends REJ
 * (or a rejecting SIDR_REP); on the active side a REP is reported as
 * CONNECT_RESPONSE, and ACCEPT sends the RTU.  DISCONNECT sends DREQ, or
 * DREP to a DREQ received; each id reports DISCONNECTED once.
 */
#include <netinet/in.h>

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "base/log.h"
#include "base/thread.h"
#include "mgmt/sa_client.h"
#include "mgmt/sa_query.h"
#include "provider/rdma_cm.h"
#include "transport/caps.h"
#include "wire/cm_ip.h"

/* A CM listener for one ServiceID, shared by the ids listening on it
 * (on different addresses of one port number). */
struct cma_service {
	uint64_t sid;
	struct sib_cm_id *cm_id;
	unsigned refs;
	bool dirty;	 /* the SA's record for it is out of date */
	bool registered; /* the SA has a record for it */
	struct sib_timer linger;
	unsigned pending; /* linger callbacks that may still run */
	uint64_t deadline_ns;
	struct cma_held *held; /* REQs that came while nobody listened */
	struct cma_service *next;
};

/* A REQ held for a lingering service: its CM id waits in MRA_REQ_SENT
 * (delayed MRA) until someone listens again or the linger ends. */
struct cma_held {
	struct cma_service *s;
	struct sib_cm_id *id;
	struct ib_cm_req req;
	struct cma_held *next;
};

/*
 * A listener's SA record and CM listener outlive its last listening id by
 * this long: a program that listens on the port again meanwhile (perftest
 * -R does, between its two connections, and its client may be faster) is
 * found by clients as a kernel host is, where REQs always reach the
 * host's CM.  A REQ that comes while nothing listens is held (its sender
 * waits, as for a busy listener) and goes to the next listener; when the
 * linger ends without one it is rejected (REJ 8, as with no listener).
 */
#define CMA_LISTEN_LINGER_NS 1000000000ull

/* rdma_cm's delayed MRA (the kernel's CMA_CM_MRA_SETTING): ServiceTimeout
 * 24, about 69 s, sent only when the peer retransmits. */
#define CMA_MRA_SERVICE_TIMEOUT 24

/* ---------------------------------------------------------------- knobs */

static unsigned knob(const char *name, unsigned dflt, unsigned max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return dflt;
	x = strtoul(v, &end, 10);
	if (*end || v[0] == '-' || x > max) {
		sib_warn("%s=%s: want 0..%u; using %u", name, v, max, dflt);
		return dflt;
	}
	return (unsigned)x;
}

/* SOFTIB_CM_RESPONSE_TIMEOUT, SOFTIB_CM_MAX_RETRIES (man/softib-rdma-cm.7): the
 * REQ's CM response timeouts and MaxCMRetries, Linux's values by default. */
static struct sib_cm_timing timing(void)
{
	static struct sib_cm_timing t;
	static bool have;

	if (!have) {
		t.remote_cm_response_timeout = (uint8_t)knob("SOFTIB_CM_RESPONSE_TIMEOUT", 20, 31);
		t.local_cm_response_timeout = t.remote_cm_response_timeout;
		t.max_cm_retries = (uint8_t)knob("SOFTIB_CM_MAX_RETRIES", 15, 15);
		have = true;
	}
	return t;
}

/* ---------------------------------------------------------------- state */

const char *cma_state_name(enum cma_state s)
{
	static const char *const names[] = {
		[CMA_IDLE] = "IDLE",
		[CMA_ADDR_BOUND] = "ADDR_BOUND",
		[CMA_ADDR_QUERY] = "ADDR_QUERY",
		[CMA_ADDR_RESOLVED] = "ADDR_RESOLVED",
		[CMA_ROUTE_QUERY] = "ROUTE_QUERY",
		[CMA_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[CMA_CONNECT] = "CONNECT",
		[CMA_ESTABLISHED] = "ESTABLISHED", /* the kernel's CONNECT covers it */
		[CMA_DISCONNECT] = "DISCONNECT",
		[CMA_LISTEN] = "LISTEN",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

bool cma_transition(struct ucma_ctx *ctx, unsigned from, enum cma_state to)
{
	/* The kernel asserts its lock here (lockdep): a trylock that takes the
	 * CM lock shows that the caller did not hold it. */
	if (pthread_mutex_trylock(&sib_ucma.cm->lock) == 0) {
		pthread_mutex_unlock(&sib_ucma.cm->lock);
		sib_err("rdma_cm: id %u: %s to %s without the CM lock (a softib bug)", ctx->handle,
			cma_state_name(ctx->state), cma_state_name(to));
	}
	if (!(from & CMA_IN(ctx->state)))
		return false;
	sib_trace("rdma_cm: id %u: %s to %s", ctx->handle, cma_state_name(ctx->state),
		  cma_state_name(to));
	ctx->state = to;
	return true;
}

/*
 * A command the id's state does not allow: -EINVAL, as the kernel's
 * rdma_cm answers, and a debug line naming the rule.  Debug, not warn: the
 * kernel answers without a word, and programs that take the EINVAL in
 * their stride (a bind of a bound id, an accept after the peer gave up)
 * must not print softib: lines.
 */
static int state_refused(const struct ucma_ctx *ctx, const char *cmd, const char *rule)
{
	sib_dbg("rdma_cm: %s on id %u refused: it is %s; %s", cmd, ctx->handle,
		cma_state_name(ctx->state), rule);
	return -EINVAL;
}

/* ---------------------------------------------------------------- addresses */

socklen_t cma_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case SIB_AF_IB:
		return sizeof(struct sib_sockaddr_ib);
	}
	return 0;
}

uint16_t cma_port_of(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	case SIB_AF_IB:
		return (uint16_t)be64toh(((const struct sib_sockaddr_ib *)sa)->sib_sid);
	}
	return 0;
}

/* An IP sockaddr of family af (AF_INET when ip is IPv4-mapped and af
 * allows it) for ip and port. */
static void ip_sockaddr(struct sockaddr_storage *ss, int af, const uint8_t ip[16], uint16_t port)
{
	static const uint8_t v4m[12] = { [10] = 0xff, [11] = 0xff };

	memset(ss, 0, sizeof(*ss));
	if (af == AF_INET || (af != AF_INET6 && !memcmp(ip, v4m, 12))) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, ip + 12, 4);
		s4->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, ip, 16);
		s6->sin6_port = htons(port);
	}
}

/* The id's ServiceID (Linux's rdma_get_service_id). */
static uint64_t sid_of(const struct ucma_ctx *ctx, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == SIB_AF_IB)
		return be64toh(((const struct sib_sockaddr_ib *)ss)->sib_sid);
	return (uint64_t)ctx->ps << 16 | cma_port_of((const struct sockaddr *)ss);
}

static bool v4mapped(const uint8_t ip[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(ip, prefix, 12);
}

/* The wildcard means loopback as a destination (Linux). */
static void loopback_for(uint8_t ip[16])
{
	bool v4 = v4mapped(ip);

	memset(ip, 0, 16);
	if (v4) {
		ip[10] = ip[11] = 0xff;
		ip[12] = 127;
		ip[15] = 1;
	} else {
		ip[15] = 1;
	}
}

static bool is_af_ib(const struct ucma_ctx *ctx)
{
	return ctx->src.ss_family == SIB_AF_IB;
}

static bool is_ud(const struct ucma_ctx *ctx)
{
	return ctx->qp_type == IBV_QPT_UD;
}

static bool req_is_xrc(const struct ib_cm_req *req)
{
	return req->TransportServiceType == IB_CM_TRANSPORT_EXT;
}

/* The REQ's Transport Service Type for ctx's QP (IBA 12.6.5; XRC: Annex
 * A14, the kernel's cm_req_set_qp_type). */
static uint8_t req_transport(const struct ucma_ctx *ctx)
{
	if (ctx->qp_type == IBV_QPT_XRC_SEND)
		return IB_CM_TRANSPORT_EXT;
	return ctx->qp_type == IBV_QPT_UC ? IB_CM_TRANSPORT_UC : IB_CM_TRANSPORT_RC;
}

static void own_gid(uint8_t gid[16])
{
	struct sib_node *node = &sib_ucma.hca->node;

	pthread_mutex_lock(&node->lock);
	memcpy(gid, node->ports[0].GID[0], 16);
	pthread_mutex_unlock(&node->lock);
}

static uint16_t own_lid(void)
{
	struct sib_node *node = &sib_ucma.hca->node;
	uint16_t lid;

	pthread_mutex_lock(&node->lock);
	lid = node->ports[0].LID;
	pthread_mutex_unlock(&node->lock);
	return lid;
}

uint64_t cma_node_guid_be(const struct ucma_ctx *ctx)
{
	return ctx->bound_dev ? htobe64(sib_ucma.hca->node.node_guid) : 0;
}

void cma_user_path(const struct ucma_ctx *ctx, struct ib_user_path_rec *o)
{
	const struct ib_path_record *p = &ctx->path;

	memset(o, 0, sizeof(*o));
	memcpy(o->sgid, ctx->sgid, 16);
	memcpy(o->dgid, ctx->dgid, 16);
	o->pkey = htobe16(0xffff);
	if (!ctx->have_path)
		return;
	o->dlid = htobe16(p->DLID);
	o->slid = htobe16(p->SLID);
	o->flow_label = htobe32(p->FlowLabel);
	o->reversible = p->Reversible;
	o->mtu = p->MTU;
	o->pkey = htobe16(p->P_Key);
	o->hop_limit = p->HopLimit;
	o->traffic_class = p->TClass;
	o->numb_path = 1;
	o->sl = p->SL;
	o->mtu_selector = p->MTUSelector;
	o->rate_selector = p->RateSelector;
	o->rate = p->Rate;
	o->packet_life_time_selector = p->PacketLifeTimeSelector;
	o->packet_life_time = p->PacketLifeTime;
	o->preference = p->Preference;
}

void cma_gid_sockaddr(const struct ucma_ctx *ctx, bool dst, struct sib_sockaddr_ib *o)
{
	const struct sockaddr_storage *ss = dst ? &ctx->dst : &ctx->src;

	memset(o, 0, sizeof(*o));
	o->sib_family = SIB_AF_IB;
	o->sib_pkey = htobe16(0xffff);
	memcpy(o->sib_addr, dst ? ctx->dgid : ctx->sgid, 16);
	o->sib_sid = htobe64(sid_of(ctx, ss));
	o->sib_sid_mask = htobe64(~0ull);
}

/* ---------------------------------------------------------------- binding */

/* Binds ctx (in ADDR_BOUND already) to addr; 0 or -errno. */
static int bind_addr(struct ucma_ctx *ctx, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage ss;
	uint8_t ip[16];
	int rc;

	if (!len || len > sizeof(ss) || cma_addr_len(addr) == 0 || len < cma_addr_len(addr))
		return -EAFNOSUPPORT;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, cma_addr_len(addr));
	if (addr->sa_family == SIB_AF_IB) {
		struct sib_sockaddr_ib *ib = (struct sib_sockaddr_ib *)&ss;
		uint8_t gid[16];
		static const uint8_t zero[16];

		own_gid(gid);
		if (memcmp(ib->sib_addr, zero, 16) && memcmp(ib->sib_addr, gid, 16))
			return -EADDRNOTAVAIL;
		ctx->bound_dev = memcmp(ib->sib_addr, zero, 16) != 0;
		/* The port space's prefix, and a port of 0 when the mask
		 * leaves the port out (Linux's cma_select_ib_ps). */
		if ((be64toh(ib->sib_sid_mask) & 0xffff) != 0xffff)
			ib->sib_sid = htobe64(be64toh(ib->sib_sid) & SIB_PS_IP_MASK);
		if (!(be64toh(ib->sib_sid) & SIB_PS_IP_MASK))
			ib->sib_sid = htobe64((uint64_t)ctx->ps << 16 | (be64toh(ib->sib_sid) & 0xffff));
	} else {
		cma_ip16(addr, ip);
		if (!cma_ip16_any(ip) && !cma_ip16_local(ip))
			return -EADDRNOTAVAIL;
		ctx->bound_dev = !cma_ip16_any(ip);
	}
	/* The kernel's rdma_bind_addr: IPv4 ids are AFONLY; IPv6 ones as
	 * set, else as net.ipv6.bindv6only says. */
	if (ss.ss_family == AF_INET6 && !ctx->afonly_set)
		ctx->afonly = cma_resv_afonly_default();
	rc = cma_resv_bind(&ctx->resv, ctx->ps, &ss, ctx->reuseaddr,
			   ss.ss_family == AF_INET || (ss.ss_family == AF_INET6 && ctx->afonly));
	if (rc) {
		ctx->bound_dev = false;
		return rc;
	}
	ctx->src = ss;
	own_gid(ctx->sgid);
	return 0;
}

/* The kernel's rdma_bind_addr: the id claims ADDR_BOUND first, and goes
 * back to IDLE when the address cannot be had. */
int cma_bind(struct ucma_ctx *ctx, const struct sockaddr *addr, socklen_t len)
{
	int rc;

	if (!cma_transition(ctx, CMA_IN(CMA_IDLE), CMA_ADDR_BOUND))
		return state_refused(ctx, "bind", "an id is bound once, while IDLE");
	rc = bind_addr(ctx, addr, len);
	if (rc)
		cma_transition(ctx, CMA_IN(CMA_ADDR_BOUND), CMA_IDLE);
	return rc;
}

/* Binds an id that is not yet bound to the wildcard of family af, port 0. */
static int bind_any(struct ucma_ctx *ctx, int af)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (af == SIB_AF_IB) {
		struct sib_sockaddr_ib *ib = (struct sib_sockaddr_ib *)&ss;

		ib->sib_family = SIB_AF_IB;
		ib->sib_sid = htobe64((uint64_t)ctx->ps << 16);
		ib->sib_sid_mask = htobe64(SIB_PS_IP_MASK);
	} else {
		ss.ss_family = (sa_family_t)af;
	}
	return cma_bind(ctx, (struct sockaddr *)&ss, cma_addr_len((struct sockaddr *)&ss));
}

/* ---------------------------------------------------------------- resolution */

int cma_resolve_addr(struct ucma_ctx **ctxp, const struct sockaddr *src, socklen_t src_len,
		     const struct sockaddr *dst, socklen_t dst_len)
{
	struct ucma_ctx *ctx = *ctxp;
	uint32_t handle = ctx->handle;
	uint64_t gen = ctx->generation;
	uint8_t dip[16], sip[16], key[16], gid[16];
	bool af_ib = dst->sa_family == SIB_AF_IB, src_any = true;
	enum cma_state was;
	int rc = 0;

	if (!dst_len || cma_addr_len(dst) == 0 || dst_len < cma_addr_len(dst) ||
	    (src_len && (cma_addr_len(src) == 0 || src_len < cma_addr_len(src))))
		return -EINVAL;
	if (ctx->state == CMA_IDLE) {
		rc = src_len && src->sa_family ? cma_bind(ctx, src, src_len)
					       : bind_any(ctx, dst->sa_family);
		if (rc)
			return rc;
	}
	was = ctx->state;
	if (!cma_transition(ctx, CMA_IN(CMA_ADDR_BOUND) | CMA_IN(CMA_ADDR_RESOLVED),
			    CMA_ADDR_QUERY))
		return state_refused(ctx, "resolve_addr",
				     "it needs ADDR_BOUND or ADDR_RESOLVED (one query at a time)");
	if (!af_ib && ctx->src.ss_family != dst->sa_family) {
		sib_dbg("rdma_cm: resolve_addr on id %u: the destination's family is not the "
			"bound address's",
			ctx->handle);
		cma_transition(ctx, CMA_IN(CMA_ADDR_QUERY), was);
		return -EINVAL;
	}
	memset(&ctx->dst, 0, sizeof(ctx->dst));
	memcpy(&ctx->dst, dst, cma_addr_len(dst));
	memset(key, 0, sizeof(key));
	if (af_ib) {
		memcpy(gid, ((const struct sib_sockaddr_ib *)dst)->sib_addr, 16);
	} else {
		cma_ip16(dst, dip);
		if (cma_ip16((struct sockaddr *)&ctx->src, sip))
			src_any = cma_ip16_any(sip);
	}
	sib_cm_unlock(sib_ucma.cm);

	if (!af_ib && cma_ip16_multicast(dip)) {
		/* A group's address (rdma_join_multicast follows): nobody to
		 * find, the source is where the route to it leaves. */
		if (src_any && cma_route_source(dip, sip)) {
			memcpy(sip, dip, 16);
			loopback_for(sip);
		}
		own_gid(gid);
	} else if (!af_ib) {
		bool local;

		if (cma_ip16_any(dip))
			loopback_for(dip);
		local = cma_ip16_local(dip);
		if (src_any && !local)
			rc = cma_route_source(dip, sip);
		else if (src_any)
			memcpy(sip, dip, 16); /* the route to a local address */
		if (!rc && local) {
			cma_host_key(key);
			own_gid(gid);
		} else if (!rc) {
			cma_addrs_register(sib_ucma.hca);
			rc = cma_find_host(sib_ucma.hca, dip, key, gid);
			if (rc == -ENETDOWN)
				rc = -EHOSTUNREACH; /* no SM: a subnet of one */
		}
	}

	sib_cm_lock(sib_ucma.cm);
	ctx = *ctxp = ucma_ctx_find(handle, gen);
	if (!ctx)
		return 0;
	if (rc) {
		if (cma_transition(ctx, CMA_IN(CMA_ADDR_QUERY), CMA_ADDR_BOUND))
			ucma_queue_event(ctx, NULL, UCMA_EV_ADDR_ERROR, rc, NULL, NULL);
		return 0;
	}
	if (!cma_transition(ctx, CMA_IN(CMA_ADDR_QUERY), CMA_ADDR_RESOLVED))
		return 0;
	if (!af_ib && src_any) {
		uint16_t port = cma_port_of((struct sockaddr *)&ctx->src);

		ip_sockaddr(&ctx->src, ctx->src.ss_family, sip, port);
	}
	memcpy(ctx->dgid, gid, 16);
	own_gid(ctx->sgid);
	memcpy(ctx->host_key, key, 16);
	ctx->bound_dev = true;
	ucma_queue_event(ctx, NULL, UCMA_EV_ADDR_RESOLVED, 0, NULL, NULL);
	return 0;
}

/* A path to ourselves without an SA (SOFTIB_SM=none). */
static void self_path(struct ib_path_record *p, const uint8_t gid[16])
{
	struct sib_port *port = &sib_ucma.hca->node.ports[0];

	memset(p, 0, sizeof(*p));
	memcpy(p->SGID.raw, gid, 16);
	memcpy(p->DGID.raw, gid, 16);
	p->SLID = p->DLID = own_lid();
	p->Reversible = 1;
	p->NumbPath = 1;
	p->P_Key = 0xffff;
	p->MTUSelector = IB_SA_SELECTOR_EQ;
	p->MTU = (uint8_t)port->active_mtu;
	p->RateSelector = IB_SA_SELECTOR_EQ;
	p->Rate = 7;
	p->PacketLifeTimeSelector = IB_SA_SELECTOR_EQ;
	p->PacketLifeTime = 14;
}

/* In this process: a listener on sid, or one that lingers. */
static bool own_listener(uint64_t sid)
{
	for (struct cma_service *s = sib_ucma.services; s; s = s->next)
		if (s->sid == sid && (s->refs || s->cm_id))
			return true;
	return false;
}

/* A UDP id bound at ip and sid's port (cma_bound.c): its port's GID into
 * gid, left as it is when there is none.  Without the lock. */
static void bound_id_at(uint64_t sid, const uint8_t key[16], const uint8_t ip[16], uint8_t gid[16])
{
	int rc = cma_find_listener(sib_ucma.hca, cma_bound_sid(sid), key, ip, gid);

	sib_dbg("rdma_cm: route: bound id for ServiceID 0x%016llx: %s", (unsigned long long)sid,
		rc ? strerror(-rc) : "found");
}

int cma_resolve_route(struct ucma_ctx **ctxp)
{
	struct ucma_ctx *ctx = *ctxp;
	uint32_t handle = ctx->handle;
	uint64_t gen = ctx->generation;
	uint8_t dip[16], key[16], sgid[16], dgid[16], lgid[16];
	struct ib_path_record path;
	struct sib_endpoint peer;
	bool af_ib = ctx->dst.ss_family == SIB_AF_IB, mine, to_listener = af_ib;
	uint64_t sid = sid_of(ctx, &ctx->dst);
	uint8_t tclass = ctx->tos;
	bool udp = ctx->ps == RDMA_PS_UDP;
	int rc;

	if (!cma_transition(ctx, CMA_IN(CMA_ADDR_RESOLVED), CMA_ROUTE_QUERY))
		return state_refused(ctx, "resolve_route", "it needs ADDR_RESOLVED");
	memcpy(dgid, ctx->dgid, 16);
	memcpy(key, ctx->host_key, 16);
	memcpy(sgid, ctx->sgid, 16);
	if (!af_ib)
		cma_ip16((struct sockaddr *)&ctx->dst, dip);
	mine = own_listener(sid);
	sib_cm_unlock(sib_ucma.cm);

	/* The listener's port, when there is one: the kernel finds it on the
	 * far host as the REQ arrives; here the REQ must be sent there. */
	if (!af_ib) {
		if (cma_ip16_any(dip))
			loopback_for(dip);
		rc = cma_find_listener(sib_ucma.hca, sid, key, dip, lgid);
		sib_dbg("rdma_cm: route: listener for ServiceID 0x%016llx: %s",
			(unsigned long long)sid, rc ? strerror(-rc) : "found");
		if (rc == -ENOENT && udp)
			bound_id_at(sid, key, dip, dgid); /* to_listener stays false */
		if (!rc)
			memcpy(dgid, lgid, 16);
		else if (rc == -ENETDOWN && mine)
			own_gid(dgid);
		to_listener = !rc || (rc == -ENETDOWN && mine);
	}
	rc = sib_sa_path_record(&sib_ucma.hca->node, 1, sgid, dgid, sid, tclass, &path);
	if (rc == -ENETDOWN && !memcmp(sgid, dgid, 16)) {
		self_path(&path, sgid);
		rc = 0;
	}
	if (!rc) {
		rc = sib_sa_resolve_lid(&sib_ucma.hca->node, 1, path.DLID, &peer);
		if (rc == -ENOENT)
			rc = -EHOSTUNREACH;
	}
	if (rc == -ENETDOWN)
		rc = -EHOSTUNREACH;

	sib_cm_lock(sib_ucma.cm);
	ctx = *ctxp = ucma_ctx_find(handle, gen);
	if (!ctx)
		return 0;
	if (rc) {
		if (cma_transition(ctx, CMA_IN(CMA_ROUTE_QUERY), CMA_ADDR_RESOLVED))
			ucma_queue_event(ctx, NULL, UCMA_EV_ROUTE_ERROR, rc, NULL, NULL);
		return 0;
	}
	if (!cma_transition(ctx, CMA_IN(CMA_ROUTE_QUERY), CMA_ROUTE_RESOLVED))
		return 0;
	memcpy(ctx->dgid, dgid, 16);
	ctx->path = path;
	ctx->have_path = true;
	ctx->to_listener = to_listener;
	ctx->peer = peer;
	ucma_queue_event(ctx, NULL, UCMA_EV_ROUTE_RESOLVED, 0, NULL, NULL);
	return 0;
}

/*
 * The kernel's REQ finds the listener as it arrives; here CONNECT asks the
 * SA again for the newest listener record that covers the address,
 * whatever the route found.  A route resolved before its listener
 * registered leads to some port of the host, which would answer REJ 8
 * (qperf 0.4.11 tells its client the port before it listens); a route
 * resolved while a dead process's record was still the newest leads to a
 * port nobody answers for (pyverbs' rdma_cm test processes _exit, and the
 * next test's client may resolve before its server registers).
 *
 * A connect keeps looking while the host has no listener for the port,
 * for as long as a listener's record lingers (CMA_LISTEN_LINGER_NS): the
 * window between a server's bind and its listen, which the kernel closes
 * in microseconds, lasts an SA round trip here.  A REQ to a port that
 * listened before is held by its host under a delayed MRA meanwhile, but
 * one that never listened has no host to hold it, and SIDR has no MRA
 * (IBA 12.11), so the requester waits instead.  perftest -R -c UD creates
 * its UD listener only after the sync that starts its client's connect,
 * and qperf 0.4.11 -cm1 tells its client the port before it listens.
 * Lock dropped meanwhile, as in cma_resolve_route; the id stays in
 * CONNECT, which cma_connect claimed, so no other command moves it.
 */
#define CMA_LISTENER_LOOK_NS 20000000ull /* between two looks */

static void find_listener_late(struct ucma_ctx **ctxp, bool wait)
{
	struct ucma_ctx *ctx = *ctxp;
	uint32_t handle = ctx->handle;
	uint64_t gen = ctx->generation;
	uint64_t sid = sid_of(ctx, &ctx->dst);
	uint64_t until = sib_link_now_ns() + (wait ? CMA_LISTEN_LINGER_NS : 0);
	const struct timespec pause = { 0, CMA_LISTENER_LOOK_NS };
	uint8_t dip[16], key[16], gid[16];
	struct ib_path_record path;
	struct sib_endpoint peer;
	uint8_t tclass = ctx->tos;
	unsigned looks = 1;
	int rc;

	cma_ip16((struct sockaddr *)&ctx->dst, dip);
	if (cma_ip16_any(dip))
		loopback_for(dip);
	memcpy(key, ctx->host_key, 16);
	sib_cm_unlock(sib_ucma.cm);
	/* ENOENT: no listener registered; ENETDOWN: no SA, so only this
	 * process's own listeners count. */
	while ((rc = cma_find_listener(sib_ucma.hca, sid, key, dip, gid)) == -ENOENT ||
	       rc == -ENETDOWN) {
		bool mine;

		sib_cm_lock(sib_ucma.cm);
		mine = own_listener(sid);
		sib_cm_unlock(sib_ucma.cm);
		if (mine || sib_link_now_ns() >= until)
			break; /* a listener of ours: the route leads here already */
		nanosleep(&pause, NULL);
		looks++;
	}
	sib_dbg("rdma_cm: connect: listener for ServiceID 0x%016llx: %s (%u look%s)",
		(unsigned long long)sid, rc ? strerror(-rc) : "found", looks, looks == 1 ? "" : "s");
	if (!rc && memcmp(gid, ctx->dgid, 16))
		rc = sib_sa_path_record(&sib_ucma.hca->node, 1, ctx->sgid, gid, sid, tclass, &path);
	if (!rc && memcmp(gid, ctx->dgid, 16))
		rc = sib_sa_resolve_lid(&sib_ucma.hca->node, 1, path.DLID, &peer);
	sib_cm_lock(sib_ucma.cm);
	ctx = *ctxp = ucma_ctx_find(handle, gen);
	if (!ctx || ctx->state != CMA_CONNECT || rc)
		return;
	if (memcmp(gid, ctx->dgid, 16)) {
		memcpy(ctx->dgid, gid, 16);
		ctx->path = path;
		ctx->peer = peer;
	}
	ctx->to_listener = true;
}

/* ---------------------------------------------------------------- listening */

static int cma_listen_handler(struct sib_cm_id *id, const struct sib_cm_event *ev);
static int cma_conn_handler(struct sib_cm_id *id, const struct sib_cm_event *ev);
static void replay_held(struct cma_service *s);

static struct cma_service *service_get(uint64_t sid)
{
	struct cma_service *s;

	for (s = sib_ucma.services; s; s = s->next)
		if (s->sid == sid)
			break;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->sid = sid;
		s->next = sib_ucma.services;
		sib_ucma.services = s;
	}
	if (!s->cm_id) {
		s->cm_id = sib_cm_create_id(sib_ucma.cm, 1, cma_listen_handler, s);
		if (!s->cm_id || sib_cm_listen(s->cm_id, sid, ~0ull)) {
			if (s->cm_id)
				sib_cm_destroy_id(s->cm_id);
			s->cm_id = NULL;
			return NULL;
		}
	}
	s->refs++;
	s->dirty = true;
	return s;
}

static void withdraw_record(struct cma_service *s)
{
	cma_record_withdraw(sib_ucma.hca, s->sid);
	s->registered = false;
}

static void held_free(struct cma_held *hd)
{
	for (struct cma_held **pp = &hd->s->held; *pp; pp = &(*pp)->next)
		if (*pp == hd) {
			*pp = hd->next;
			break;
		}
	free(hd);
}

/* The linger ended or the process exits: held REQs get the answer no
 * listener gives. */
static void held_reject(struct cma_service *s)
{
	while (s->held) {
		struct cma_held *hd = s->held;

		sib_cm_send_rej(hd->id, IB_CM_REJ_INVALID_SERVICE_ID, NULL, 0, NULL, 0);
		sib_cm_destroy_id(hd->id);
		held_free(hd);
	}
}

/* A held REQ's id hears from its peer only when the peer gives up (REJ). */
static int cma_held_handler(struct sib_cm_id *id, const struct sib_cm_event *ev)
{
	(void)ev;
	held_free(id->context);
	return 1;
}

/* The linger is over (progress thread): unless someone listens again, held
 * REQs are rejected, the CM listener and the record go, and the service
 * once nothing refers to it. */
static void linger_end(void *arg)
{
	struct cma_service *s = arg;

	sib_cm_lock(sib_ucma.cm);
	s->pending--;
	if (!s->refs && sib_link_now_ns() >= s->deadline_ns && !sib_ucma.exiting) {
		held_reject(s);
		if (s->cm_id)
			sib_cm_destroy_id(s->cm_id);
		s->cm_id = NULL;
		if (s->registered)
			withdraw_record(s);
	}
	if (!s->refs && !s->registered && !s->pending && !s->cm_id) {
		for (struct cma_service **pp = &sib_ucma.services; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		free(s);
	}
	sib_cm_unlock(sib_ucma.cm);
}

static void service_put(struct cma_service *s)
{
	if (--s->refs) {
		s->dirty = true; /* fewer addresses */
		return;
	}
	s->deadline_ns = sib_link_now_ns() + CMA_LISTEN_LINGER_NS;
	if (s->pending && sib_timer_cancel(sib_ucma.hca->node.timers, &s->linger))
		s->pending--;
	s->pending++;
	sib_timer_arm(sib_ucma.hca->node.timers, &s->linger, CMA_LISTEN_LINGER_NS, linger_end, s);
}

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;

void cma_services_sync(void)
{
	struct work {
		uint64_t sid;
		unsigned n;
		uint8_t ips[4][16];
		bool afonly[4];
	} *w = NULL;
	unsigned nw = 0, cap = 0;

	pthread_mutex_lock(&sync_lock);
	sib_cm_lock(sib_ucma.cm);
	for (struct cma_service *s = sib_ucma.services; s; s = s->next) {
		struct work *nwk;

		if (!s->dirty || !s->refs)
			continue;
		if (nw == cap) {
			cap = cap ? 2 * cap : 4;
			nwk = realloc(w, cap * sizeof(*w));
			if (!nwk)
				break;
			w = nwk;
		}
		memset(&w[nw], 0, sizeof(w[nw]));
		w[nw].sid = s->sid;
		for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next) {
			if (c->service != s || c->state != CMA_LISTEN || w[nw].n == 4)
				continue;
			if (c->src.ss_family == SIB_AF_IB)
				memset(w[nw].ips[w[nw].n], 0, 16);
			else
				cma_ip16((struct sockaddr *)&c->src, w[nw].ips[w[nw].n]);
			w[nw].afonly[w[nw].n++] = c->afonly;
		}
		s->dirty = false;
		s->registered = true; /* a Set replaces what a lingering one left */
		nw++;
	}
	sib_cm_unlock(sib_ucma.cm);
	for (unsigned i = 0; i < nw; i++)
		cma_listener_record(sib_ucma.hca, w[i].sid, w[i].ips, w[i].afonly, w[i].n,
				    "listener");
	free(w);
	pthread_mutex_unlock(&sync_lock);
}

/*
 * CLIENT_REREGISTER (IBA 14.4.11): the SM that configured the port says its
 * SA does not hold what the port registered (it restarted, or dropped the
 * port for a while).  The event comes on the thread that runs the SMA, and
 * SA requests block, so a thread of its own sends the addresses and every
 * listener record again; events that come while it works make it go round
 * once more.  Multicast memberships are not joined again behind the
 * application's back: each joined id is told (cma_mcast_reset), as Linux
 * tells it.
 */
static bool rereg_pending, rereg_running;

static void *rereg_main(void *arg)
{
	struct sib_hca *hca = arg;

	do {
		while (__atomic_exchange_n(&rereg_pending, false, __ATOMIC_ACQ_REL)) {
			if (__atomic_load_n(&sib_ucma.exiting, __ATOMIC_ACQUIRE))
				break;
			cma_addrs_register_again(hca);
			sib_cm_lock(sib_ucma.cm);
			for (struct cma_service *s = sib_ucma.services; s; s = s->next)
				if (s->refs)
					s->dirty = true;
			cma_mcast_reset();
			sib_cm_unlock(sib_ucma.cm);
			cma_services_sync();
			cma_bound_register_again();
		}
		__atomic_store_n(&rereg_running, false, __ATOMIC_RELEASE);
	} while (__atomic_load_n(&rereg_pending, __ATOMIC_ACQUIRE) &&
		 !__atomic_exchange_n(&rereg_running, true, __ATOMIC_ACQ_REL));
	return NULL;
}

struct rereg_sink {
	struct sib_event_sink sink;
	struct sib_hca *hca;
};

static void rereg_deliver(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port)
{
	struct sib_hca *hca = ((struct rereg_sink *)sink)->hca;
	pthread_t th;
	int rc;

	(void)obj;
	if (ev != SIB_EV_CLIENT_REREGISTER)
		return;
	sib_info("rdma_cm: port %u: the SM's SA lost this port's records; registering the "
		 "addresses and listeners again",
		 port);
	__atomic_store_n(&rereg_pending, true, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&rereg_running, true, __ATOMIC_ACQ_REL))
		return;
	rc = sib_thread_create(&th, rereg_main, hca);
	if (rc) {
		__atomic_store_n(&rereg_running, false, __ATOMIC_RELEASE);
		sib_warn("rdma_cm: cannot start a thread to register the listeners again (%s); "
			 "other hosts may not find them until they listen again",
			 strerror(rc));
		return;
	}
	pthread_detach(th);
}

void cma_reregister_listen(struct sib_hca *hca)
{
	static struct rereg_sink sink = { .sink.deliver = rereg_deliver };
	static struct sib_hca_listener l;

	sink.hca = hca;
	sib_hca_listen(hca, &l, &sink.sink);
}

void cma_services_withdraw(void)
{
	for (struct cma_service *s = sib_ucma.services; s; s = s->next) {
		held_reject(s);
		if (s->registered)
			withdraw_record(s);
	}
}

int cma_listen(struct ucma_ctx **ctxp, int backlog)
{
	struct ucma_ctx *ctx = *ctxp;
	uint32_t handle = ctx->handle;
	uint64_t gen = ctx->generation;
	int rc;

	if (ctx->state == CMA_LISTEN) {
		ctx->backlog = backlog > 0 ? (unsigned)backlog : 1024;
		return 0;
	}
	if (ctx->state == CMA_IDLE && (rc = bind_any(ctx, AF_INET)))
		return rc;
	if (!cma_transition(ctx, CMA_IN(CMA_ADDR_BOUND), CMA_LISTEN))
		return state_refused(ctx, "listen", "it needs IDLE or ADDR_BOUND");
	/* The kernel's ucma takes backlog <= 0 for 1024. */
	ctx->backlog = backlog > 0 ? (unsigned)backlog : 1024;
	ctx->service = service_get(sid_of(ctx, &ctx->src));
	if (!ctx->service) {
		cma_transition(ctx, CMA_IN(CMA_LISTEN), CMA_ADDR_BOUND);
		return -ENOMEM;
	}
	/* The SA learns of the listener before its port shows as listening
	 * (ss -xl): a client that waits for that finds it. */
	sib_cm_unlock(sib_ucma.cm);
	cma_addrs_register(sib_ucma.hca);
	cma_services_sync();
	sib_cm_lock(sib_ucma.cm);
	ctx = *ctxp = ucma_ctx_find(handle, gen);
	if (!ctx || ctx->state != CMA_LISTEN)
		return 0;
	rc = cma_resv_listen(&ctx->resv);
	if (!rc && ctx->service->held)
		replay_held(ctx->service);
	if (rc) {
		/* An id with REUSEADDR that shares its address (cma_port.c). */
		service_put(ctx->service);
		ctx->service = NULL;
		cma_transition(ctx, CMA_IN(CMA_LISTEN), CMA_ADDR_BOUND);
		sib_cm_unlock(sib_ucma.cm);
		cma_services_sync();
		sib_cm_lock(sib_ucma.cm);
		*ctxp = ucma_ctx_find(handle, gen);
		return rc;
	}
	return 0;
}

/* The listener of service s whose address covers the REQ's destination. */
static struct ucma_ctx *listener_for(struct cma_service *s, const uint8_t ip[16], bool have_ip)
{
	struct ucma_ctx *best = NULL;
	int best_score = 0;

	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next) {
		uint8_t l[16];
		int score;

		if (c->service != s || c->state != CMA_LISTEN)
			continue;
		if (!have_ip || c->src.ss_family == SIB_AF_IB)
			return c;
		cma_ip16((struct sockaddr *)&c->src, l);
		if (!memcmp(l, ip, 16))
			score = 3;
		else if (cma_ip16_any(l) && c->src.ss_family == AF_INET6 &&
			 (!c->afonly || !v4mapped(ip)))
			score = 1;
		else if (cma_ip16_any(l) && c->src.ss_family == AF_INET && v4mapped(ip))
			score = 2;
		else
			continue;
		if (score > best_score) {
			best = c;
			best_score = score;
		}
	}
	return best;
}

static void path_from_cm(const struct sib_cm_path *c, struct ib_path_record *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->SGID.raw, c->SGID, 16);
	memcpy(p->DGID.raw, c->DGID, 16);
	p->SLID = c->SLID;
	p->DLID = c->DLID;
	p->FlowLabel = c->FlowLabel;
	p->HopLimit = c->HopLimit;
	p->TClass = c->TrafficClass;
	p->Reversible = 1;
	p->NumbPath = 1;
	p->P_Key = c->P_Key;
	p->SL = c->SL;
	p->MTUSelector = IB_SA_SELECTOR_EQ;
	p->MTU = c->MTU;
	p->RateSelector = IB_SA_SELECTOR_EQ;
	p->Rate = c->Rate;
	p->PacketLifeTimeSelector = IB_SA_SELECTOR_EQ;
	p->PacketLifeTime = c->PacketLifeTime;
}

static void path_to_cm(const struct ib_path_record *p, struct sib_cm_path *c)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->SGID, p->SGID.raw, 16);
	memcpy(c->DGID, p->DGID.raw, 16);
	c->SLID = p->SLID;
	c->DLID = p->DLID;
	c->FlowLabel = p->FlowLabel;
	c->Rate = p->Rate;
	c->TrafficClass = p->TClass;
	c->HopLimit = p->HopLimit;
	c->SL = p->SL;
	c->MTU = p->MTU;
	c->P_Key = p->P_Key;
	c->PacketLifeTime = p->PacketLifeTime;
}

static void ah_from_path(const struct ucma_ctx *ctx, struct ib_uverbs_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = ctx->path.DLID;
	ah->sl = ctx->path.SL;
	ah->static_rate = ctx->path.Rate;
	ah->port_num = 1;
	if (ctx->path.HopLimit > 1) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid, ctx->dgid, 16);
		ah->grh.flow_label = ctx->path.FlowLabel;
		ah->grh.hop_limit = ctx->path.HopLimit;
		ah->grh.traffic_class = ctx->path.TClass;
	}
}

/* A new id for a REQ or SIDR_REQ that listener l takes: addresses from the
 * IP addressing header, path and peer from the CM id. */
static struct ucma_ctx *child_new(struct ucma_ctx *l, struct sib_cm_id *id,
				  const struct ib_cm_ip_hdr *h)
{
	struct ucma_ctx *c = ucma_ctx_new(l->file, l->ps, l->qp_type, 0);

	if (!c)
		return NULL;
	if (h) {
		int af = h->IPV == 4 ? AF_INET : AF_INET6;

		ip_sockaddr(&c->src, af, h->DstIP, cma_port_of((struct sockaddr *)&l->src));
		ip_sockaddr(&c->dst, af, h->SrcIP, h->SrcPort);
	} else {
		struct sib_sockaddr_ib *d = (struct sib_sockaddr_ib *)&c->dst;

		c->src = l->src;
		d->sib_family = SIB_AF_IB;
		d->sib_pkey = htobe16(0xffff);
		memcpy(d->sib_addr, id->path.DGID, 16);
		d->sib_sid = htobe64(id->service_id);
		d->sib_sid_mask = htobe64(~0ull);
	}
	c->listener = l;
	c->cm_id = id;
	c->bound_dev = true;
	cma_transition(c, CMA_IN(CMA_IDLE), CMA_CONNECT); /* new: IDLE */
	memcpy(c->sgid, id->path.SGID, 16);
	memcpy(c->dgid, id->path.DGID, 16);
	path_from_cm(&id->path, &c->path);
	c->have_path = true;
	c->peer = id->peer;
	c->qkey = SIB_UDP_QKEY;
	id->handler = cma_conn_handler;
	id->context = c;
	return c;
}

/* The IP header of a REQ's or SIDR_REQ's private data; false when it is
 * not usable (reason in a debug line). */
static bool ip_header(const uint8_t *pd, struct ib_cm_ip_hdr *h)
{
	const char *why;

	ib_cm_ip_hdr_decode(h, pd);
	why = ib_cm_ip_hdr_check(h);
	if (why)
		sib_dbg("rdma_cm: REQ refused: %s", why);
	return !why;
}

/*
 * The listener a REQ or SIDR_REQ with private data pd is for, and whether
 * pd starts with the IP header.  Linux decides by the listener's family:
 * an AF_IB listener takes the REQ as it comes (its program parses any
 * header itself, as rsockets does), an IP listener needs the header to
 * know the destination address.
 */
static struct ucma_ctx *listener_of(struct cma_service *s, const uint8_t *pd,
				    struct ib_cm_ip_hdr *h, bool *have_h)
{
	uint8_t dip[16];

	*have_h = false;
	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next)
		if (c->service == s && c->state == CMA_LISTEN && c->src.ss_family == SIB_AF_IB)
			return c;
	if (!ib_cm_ip_service_id_is(s->sid) || !ip_header(pd, h))
		return NULL;
	memcpy(dip, h->DstIP, 16);
	if (h->IPV == 4) {
		memset(dip, 0, 10);
		dip[10] = dip[11] = 0xff;
	}
	*have_h = true;
	return listener_for(s, dip, true);
}

/*
 * Listener l of service s takes REQ req on CM id id; a REJ reason, or
 * SIB_CM_DROP when its backlog is full.  replay: a held REQ, whose id is
 * in MRA_REQ_SENT already and which no backlog turns away (its sender has
 * waited).
 */
static int take_req(struct ucma_ctx *l, const struct ib_cm_ip_hdr *h, struct sib_cm_id *id,
		    const struct ib_cm_req *req, bool replay)
{
	struct rdma_ucm_conn_param p;
	struct ucma_ctx *c;
	unsigned off = h ? IB_CM_IP_HDR_BYTES : 0;

	if (is_ud(l))
		return IB_CM_REJ_INVALID_SERVICE_ID;
	if (req_is_xrc(req) != (l->qp_type == IBV_QPT_XRC_RECV)) {
		/* The kernel's cma_check_req_qp_type: its handler fails, and
		 * the CM rejects for the consumer. */
		sib_dbg("rdma_cm: a%s REQ for listener %u, whose QP type is %u: rejected",
			req_is_xrc(req) ? "n XRC" : " non-XRC", l->handle, l->qp_type);
		return IB_CM_REJ_CONSUMER_DEFINED;
	}
	if (l->pending >= l->backlog && !replay)
		return SIB_CM_DROP; /* the requester retries, as with the kernel */
	c = child_new(l, id, h);
	if (!c)
		return IB_CM_REJ_NO_RESOURCES;
	c->remote_qpn = req->LocalQPN;
	c->remote_psn = req->StartingPSN;
	c->responder_resources = req->InitiatorDepth;
	c->initiator_depth = req->ResponderResources;
	c->retry_count = req->RetryCount;
	c->rnr_retry_count = req->RNRRetryCount;
	c->srq = req->SRQ;
	c->flow_control = req->EndToEndFlowControl;
	c->local_ack_timeout = req->Primary.LocalACKTimeout;
	if (!replay)
		sib_cm_send_mra(id, CMA_MRA_SERVICE_TIMEOUT, true, NULL, 0);
	memset(&p, 0, sizeof(p));
	memcpy(p.private_data, req->PrivateData + off, IB_CM_REQ_PRIVATE_DATA_BYTES - off);
	p.private_data_len = (uint8_t)(IB_CM_REQ_PRIVATE_DATA_BYTES - off);
	p.responder_resources = c->responder_resources;
	p.initiator_depth = c->initiator_depth;
	p.flow_control = c->flow_control;
	p.retry_count = c->retry_count;
	p.rnr_retry_count = c->rnr_retry_count;
	p.srq = c->srq;
	p.qp_num = c->remote_qpn;
	l->pending++;
	ucma_queue_event(l, c, UCMA_EV_CONNECT_REQUEST, 0, &p, NULL);
	return 0;
}

/* A REQ while service s lingers: held for the next listener. */
static int hold_req(struct cma_service *s, struct sib_cm_id *id, const struct ib_cm_req *req)
{
	struct cma_held *hd = calloc(1, sizeof(*hd));

	if (!hd)
		return IB_CM_REJ_NO_RESOURCES;
	hd->s = s;
	hd->id = id;
	hd->req = *req;
	hd->next = s->held;
	s->held = hd;
	id->handler = cma_held_handler;
	id->context = hd;
	sib_cm_send_mra(id, CMA_MRA_SERVICE_TIMEOUT, true, NULL, 0);
	sib_dbg("rdma_cm: REQ for ServiceID 0x%016llx held: nobody listens yet",
		(unsigned long long)s->sid);
	return 0;
}

static int listen_req(struct cma_service *s, struct sib_cm_id *id, const struct sib_cm_event *ev)
{
	struct ib_cm_ip_hdr h;
	struct ucma_ctx *l;
	bool ip;

	if (!s->refs)
		return hold_req(s, id, ev->req);
	l = listener_of(s, ev->req->PrivateData, &h, &ip);
	if (!l)
		return IB_CM_REJ_INVALID_SERVICE_ID;
	return take_req(l, ip ? &h : NULL, id, ev->req, false);
}

/* Someone listens on service s again: the REQs held for it go to their
 * listeners, or are rejected. */
static void replay_held(struct cma_service *s)
{
	struct cma_held *list = NULL, *next;

	/* Oldest first: they were pushed at the head. */
	for (struct cma_held *hd = s->held; hd; hd = next) {
		next = hd->next;
		hd->next = list;
		list = hd;
	}
	s->held = NULL;
	while (list) {
		struct cma_held *hd = list;
		struct ib_cm_ip_hdr h;
		struct ucma_ctx *l;
		bool ip;
		int rc;

		list = hd->next;
		l = listener_of(s, hd->req.PrivateData, &h, &ip);
		rc = l ? take_req(l, ip ? &h : NULL, hd->id, &hd->req, true)
		       : IB_CM_REJ_INVALID_SERVICE_ID;
		if (rc) {
			sib_cm_send_rej(hd->id, (uint16_t)rc, NULL, 0, NULL, 0);
			sib_cm_destroy_id(hd->id);
		}
		free(hd);
	}
}

static int listen_sidr(struct cma_service *s, struct sib_cm_id *id,
		       const struct sib_cm_event *ev)
{
	struct rdma_ucm_ud_param p;
	struct ib_cm_ip_hdr h;
	struct ucma_ctx *l, *c;
	bool ip;
	unsigned off;

	l = listener_of(s, ev->sidr_req->PrivateData, &h, &ip);
	off = ip ? IB_CM_IP_HDR_BYTES : 0;
	if (!l || !is_ud(l))
		return IB_CM_SIDR_UNSUPPORTED;
	if (l->pending >= l->backlog)
		return SIB_CM_DROP;
	c = child_new(l, id, ip ? &h : NULL);
	if (!c)
		return IB_CM_SIDR_NO_QP;
	memset(&p, 0, sizeof(p));
	memcpy(p.private_data, ev->sidr_req->PrivateData + off,
	       IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES - off);
	p.private_data_len = (uint8_t)(IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES - off);
	ah_from_path(c, &p.ah_attr);
	l->pending++;
	ucma_queue_event(l, c, UCMA_EV_CONNECT_REQUEST, 0, NULL, &p);
	return 0;
}

static int cma_listen_handler(struct sib_cm_id *id, const struct sib_cm_event *ev)
{
	struct cma_service *s = ev->listen_id ? ev->listen_id->context : NULL;

	if (!s || sib_ucma.exiting)
		return SIB_CM_DROP;
	if (ev->type == SIB_CM_EV_REQ_RECEIVED)
		return listen_req(s, id, ev);
	if (ev->type == SIB_CM_EV_SIDR_REQ_RECEIVED)
		return listen_sidr(s, id, ev);
	return 0;
}

/* ---------------------------------------------------------------- CM events */

static void conn_param_from_rep(const struct ib_cm_rep *rep, struct rdma_ucm_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->private_data, rep->PrivateData, IB_CM_REP_PRIVATE_DATA_BYTES);
	p->private_data_len = IB_CM_REP_PRIVATE_DATA_BYTES;
	/* IBA 12.7: the peer's resources are our depth, and back. */
	p->responder_resources = rep->InitiatorDepth;
	p->initiator_depth = rep->ResponderResources;
	p->flow_control = rep->EndToEndFlowControl;
	p->rnr_retry_count = rep->RNRRetryCount;
	p->srq = rep->SRQ;
	p->qp_num = rep->LocalQPN;
}

/* Each connection reports DISCONNECTED once: from CONNECT or ESTABLISHED
 * (the kernel's CONNECT), never again from DISCONNECT. */
static void report_disconnect(struct ucma_ctx *ctx, int status)
{
	if (!cma_transition(ctx, CMA_IN(CMA_CONNECT) | CMA_IN(CMA_ESTABLISHED), CMA_DISCONNECT))
		return;
	ucma_queue_event(ctx, NULL, UCMA_EV_DISCONNECTED, status, NULL, NULL);
}

/* The connection ends for good (REJ, or the CM gave up): the CM id is
 * done; true when its event is to be reported (the id was in from). */
static bool connection_ended(struct ucma_ctx *ctx, unsigned from)
{
	ctx->cm_id = NULL;
	ctx->rejected = true;
	return cma_transition(ctx, from, CMA_DISCONNECT);
}

static int cma_conn_handler(struct sib_cm_id *id, const struct sib_cm_event *ev)
{
	struct ucma_ctx *ctx = id->context;
	struct rdma_ucm_conn_param p;
	struct rdma_ucm_ud_param ud;

	switch (ev->type) {
	case SIB_CM_EV_REP_RECEIVED:
		ctx->remote_qpn = ev->rep->LocalQPN;
		ctx->remote_psn = ev->rep->StartingPSN;
		ctx->rnr_retry_count = ev->rep->RNRRetryCount;
		ctx->initiator_depth = ev->rep->ResponderResources;
		ctx->responder_resources = ev->rep->InitiatorDepth;
		ctx->local_ack_timeout =
			sib_cm_ack_timeout(ctx->path.PacketLifeTime, ev->rep->TargetACKDelay);
		sib_cm_send_mra(id, CMA_MRA_SERVICE_TIMEOUT, true, NULL, 0);
		conn_param_from_rep(ev->rep, &p);
		ucma_queue_event(ctx, NULL, UCMA_EV_CONNECT_RESPONSE, 0, &p, NULL);
		return 0;
	case SIB_CM_EV_RTU_RECEIVED:
	case SIB_CM_EV_USER_ESTABLISHED:
		if (cma_transition(ctx, CMA_IN(CMA_CONNECT), CMA_ESTABLISHED))
			ucma_queue_event(ctx, NULL, UCMA_EV_ESTABLISHED, 0, NULL, NULL);
		return 0;
	case SIB_CM_EV_REJ_RECEIVED:
		memset(&p, 0, sizeof(p));
		memcpy(p.private_data, ev->rej->PrivateData, IB_CM_REJ_PRIVATE_DATA_BYTES);
		p.private_data_len = IB_CM_REJ_PRIVATE_DATA_BYTES;
		/* The CM delivers a REJ after the RTU too (in its ESTABLISHED). */
		if (connection_ended(ctx, CMA_IN(CMA_CONNECT) | CMA_IN(CMA_ESTABLISHED)))
			ucma_queue_event(ctx, NULL, UCMA_EV_REJECTED, ev->rej->Reason, &p, NULL);
		return 1; /* the CM id is done */
	case SIB_CM_EV_REQ_ERROR:
	case SIB_CM_EV_REP_ERROR:
	case SIB_CM_EV_SIDR_REQ_ERROR:
		if (connection_ended(ctx, CMA_IN(CMA_CONNECT))) /* no answer to REQ or REP */
			ucma_queue_event(ctx, NULL, UCMA_EV_UNREACHABLE, -ETIMEDOUT, NULL, NULL);
		return 1;
	case SIB_CM_EV_DREQ_RECEIVED:
		report_disconnect(ctx, 0);
		return 0;
	case SIB_CM_EV_DREP_RECEIVED:
		report_disconnect(ctx, 0);
		return 0;
	case SIB_CM_EV_DREQ_ERROR:
		report_disconnect(ctx, -ETIMEDOUT);
		return 0;
	case SIB_CM_EV_TIMEWAIT_EXIT:
		ucma_queue_event(ctx, NULL, UCMA_EV_TIMEWAIT_EXIT, 0, NULL, NULL);
		return 0;
	case SIB_CM_EV_SIDR_REP_RECEIVED:
		ctx->cm_id = NULL;
		if (ev->sidr_rep->Status != IB_CM_SIDR_SUCCESS) {
			ucma_queue_event(ctx, NULL, UCMA_EV_UNREACHABLE, ev->sidr_rep->Status,
					 NULL, NULL);
			return 1;
		}
		if (ev->sidr_rep->Q_Key != ctx->qkey) {
			ucma_queue_event(ctx, NULL, UCMA_EV_UNREACHABLE, -EINVAL, NULL, NULL);
			return 1;
		}
		memset(&ud, 0, sizeof(ud));
		memcpy(ud.private_data, ev->sidr_rep->PrivateData,
		       IB_CM_SIDR_REP_PRIVATE_DATA_BYTES);
		ud.private_data_len = IB_CM_SIDR_REP_PRIVATE_DATA_BYTES;
		ah_from_path(ctx, &ud.ah_attr);
		ud.qp_num = ev->sidr_rep->QPN;
		ud.qkey = ev->sidr_rep->Q_Key;
		ctx->remote_qpn = ud.qp_num;
		if (cma_transition(ctx, CMA_IN(CMA_CONNECT), CMA_ESTABLISHED))
			ucma_queue_event(ctx, NULL, UCMA_EV_ESTABLISHED, 0, NULL, &ud);
		return 1;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------------- connecting */

/* An id's first receive PSN, chosen when it is made (Linux: seq_num):
 * librdmacm moves the QP to RTR before the REP that announces it. */
uint32_t cma_random_psn(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (uint32_t)sib_link_now_ns();
	return v & 0xffffff;
}

/* Private data of a REQ or SIDR_REQ: the IP header, then the program's. */
static int request_pd(const struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p,
		      unsigned cap, uint8_t *pd, unsigned *len)
{
	struct ib_cm_ip_hdr h;
	unsigned off = is_af_ib(ctx) || ctx->dst.ss_family == SIB_AF_IB ? 0 : IB_CM_IP_HDR_BYTES;

	if (p->private_data_len > cap - off) {
		sib_warn("rdma_cm: connect on id %u: %u bytes of private data; at most %u fit",
			 ctx->handle, p->private_data_len, cap - off);
		return -EINVAL;
	}
	memset(pd, 0, cap);
	if (off) {
		memset(&h, 0, sizeof(h));
		h.IPV = ctx->src.ss_family == AF_INET ? 4 : 6;
		h.SrcPort = cma_port_of((struct sockaddr *)&ctx->src);
		cma_ip16((struct sockaddr *)&ctx->src, h.SrcIP);
		cma_ip16((struct sockaddr *)&ctx->dst, h.DstIP);
		if (h.IPV == 4) {
			memset(h.SrcIP, 0, 12);
			memset(h.DstIP, 0, 12);
		}
		ib_cm_ip_hdr_encode(&h, pd);
	}
	memcpy(pd + off, p->private_data, p->private_data_len);
	*len = off + p->private_data_len;
	return 0;
}

/* CONNECT's REQ or SIDR_REQ with private data pd, on a new CM id that
 * becomes ctx's; 0 or -errno. */
static int send_request(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p,
			const uint8_t *pd, unsigned len)
{
	struct sib_cm_id *id;
	int rc;

	id = sib_cm_create_id(sib_ucma.cm, 1, cma_conn_handler, ctx);
	if (!id)
		return -ENOMEM;
	ctx->qp_num = p->qp_num;
	ctx->qkey = SIB_UDP_QKEY;
	if (is_ud(ctx)) {
		struct sib_cm_sidr_req_param q;

		memset(&q, 0, sizeof(q));
		q.service_id = sid_of(ctx, &ctx->dst);
		path_to_cm(&ctx->path, &q.path);
		q.timing = timing();
		q.peer = ctx->peer;
		q.private_data = pd;
		q.private_data_len = len;
		rc = sib_cm_send_sidr_req(id, &q);
	} else {
		struct sib_cm_req_param q;

		ctx->srq = p->srq;
		ctx->responder_resources = p->responder_resources;
		ctx->initiator_depth = p->initiator_depth;
		ctx->flow_control = p->flow_control;
		ctx->retry_count = p->retry_count > 7 ? 7 : p->retry_count;
		ctx->rnr_retry_count = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
		memset(&q, 0, sizeof(q));
		q.service_id = sid_of(ctx, &ctx->dst);
		q.qpn = p->qp_num;
		q.transport = req_transport(ctx);
		q.starting_psn = ctx->local_psn;
		q.responder_resources = p->responder_resources;
		q.initiator_depth = p->initiator_depth;
		q.retry_count = ctx->retry_count;
		q.rnr_retry_count = ctx->rnr_retry_count;
		q.flow_control = p->flow_control;
		q.srq = p->srq;
		q.local_ack_timeout =
			sib_cm_ack_timeout(ctx->path.PacketLifeTime, SIB_LOCAL_CA_ACK_DELAY);
		path_to_cm(&ctx->path, &q.path);
		q.timing = timing();
		q.peer = ctx->peer;
		q.private_data = pd;
		q.private_data_len = len;
		rc = sib_cm_send_req(id, &q);
	}
	if (rc) {
		sib_cm_destroy_id(id);
		return rc;
	}
	ctx->cm_id = id;
	return 0;
}

/* The kernel's rdma_connect: the id claims CONNECT first (a second CONNECT
 * meanwhile is refused), and goes back to ROUTE_RESOLVED when no request
 * could be sent. */
int cma_connect(struct ucma_ctx **ctxp, const struct rdma_ucm_conn_param *p)
{
	uint8_t pd[IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES];
	struct ucma_ctx *ctx = *ctxp;
	unsigned len;
	int rc;

	if (!cma_transition(ctx, CMA_IN(CMA_ROUTE_RESOLVED), CMA_CONNECT))
		return state_refused(ctx, "connect", "it needs ROUTE_RESOLVED, once");
	if (ctx->dst.ss_family != SIB_AF_IB) { /* AF_IB names the port itself */
		find_listener_late(ctxp, true);
		ctx = *ctxp;
		if (!ctx)
			return 0;
	}
	rc = request_pd(ctx, p,
			is_ud(ctx) ? IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES : IB_CM_REQ_PRIVATE_DATA_BYTES,
			pd, &len);
	if (!rc)
		rc = send_request(ctx, p, pd, len);
	if (rc)
		cma_transition(ctx, CMA_IN(CMA_CONNECT), CMA_ROUTE_RESOLVED);
	return rc;
}

int cma_accept(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p, uint64_t uid)
{
	struct sib_cm_id *id = ctx->cm_id;
	int rc;

	if (!id || ctx->rejected) {
		sib_dbg("rdma_cm: accept on id %u: no connection request to answer", ctx->handle);
		return -EINVAL;
	}
	if (ctx->state != CMA_CONNECT)
		return state_refused(ctx, "accept", "it needs CONNECT (a request, or the active "
						    "side's REP, not answered yet)");
	if (id->state == SIB_CM_SIDR_REQ_RCVD) {
		if (!p->valid || p->private_data_len > IB_CM_SIDR_REP_PRIVATE_DATA_BYTES)
			return -EINVAL;
		ctx->uid = uid;
		ctx->qp_num = p->qp_num;
		rc = sib_cm_send_sidr_rep(id, IB_CM_SIDR_SUCCESS, p->qp_num, ctx->qkey,
					  p->private_data, p->private_data_len);
		if (!rc) {
			sib_cm_destroy_id(id);
			ctx->cm_id = NULL;
			cma_transition(ctx, CMA_IN(CMA_CONNECT), CMA_ESTABLISHED);
		}
		return rc;
	}
	if (id->state == SIB_CM_REQ_RCVD || id->state == SIB_CM_MRA_REQ_SENT) {
		struct sib_cm_rep_param r;

		if (!p->valid || p->private_data_len > IB_CM_REP_PRIVATE_DATA_BYTES) {
			sib_warn("rdma_cm: accept on id %u: %u bytes of private data; at most %u fit",
				 ctx->handle, p->private_data_len, IB_CM_REP_PRIVATE_DATA_BYTES);
			return -EINVAL;
		}
		ctx->uid = uid;
		ctx->qp_num = p->qp_num;
		ctx->srq = p->srq;
		ctx->responder_resources = p->responder_resources;
		ctx->initiator_depth = p->initiator_depth;
		memset(&r, 0, sizeof(r));
		r.qpn = p->qp_num;
		r.starting_psn = ctx->local_psn;
		r.responder_resources = p->responder_resources;
		r.initiator_depth = p->initiator_depth;
		r.target_ack_delay = SIB_LOCAL_CA_ACK_DELAY;
		r.flow_control = p->flow_control;
		r.rnr_retry_count = p->rnr_retry_count;
		r.srq = p->srq;
		r.private_data = p->private_data;
		r.private_data_len = p->private_data_len;
		return sib_cm_send_rep(id, &r);
	}
	if (id->state == SIB_CM_REP_RCVD || id->state == SIB_CM_MRA_REP_SENT) {
		/* The active side's ACCEPT is its RTU (librdmacm, after it
		 * moved the QP to RTS, or rdma_establish). */
		rc = sib_cm_send_rtu(id, NULL, 0);
		if (!rc)
			cma_transition(ctx, CMA_IN(CMA_CONNECT), CMA_ESTABLISHED);
		return rc;
	}
	return -EINVAL;
}

int cma_reject(struct ucma_ctx *ctx, uint8_t reason, const uint8_t *pd, unsigned len)
{
	struct sib_cm_id *id = ctx->cm_id;
	int rc;

	if (!reason)
		reason = IB_CM_REJ_CONSUMER_DEFINED;
	/* Linux's ucma takes these two only (35: the ECE option). */
	if (reason != IB_CM_REJ_CONSUMER_DEFINED && reason != 35)
		return -EINVAL;
	if (!id)
		return -EINVAL;
	if (id->state == SIB_CM_SIDR_REQ_RCVD) {
		if (len > IB_CM_SIDR_REP_PRIVATE_DATA_BYTES)
			return -EINVAL;
		rc = sib_cm_send_sidr_rep(id, IB_CM_SIDR_REJECT, 0, 0, pd, len);
	} else {
		if (len > IB_CM_REJ_PRIVATE_DATA_BYTES)
			return -EINVAL;
		rc = sib_cm_send_rej(id, reason, NULL, 0, pd, len);
	}
	if (rc)
		return rc;
	sib_cm_destroy_id(id);
	connection_ended(ctx, CMA_IN(CMA_CONNECT)); /* the CM sends REJ before the RTU only */
	return 0;
}

int cma_disconnect(struct ucma_ctx *ctx)
{
	struct sib_cm_id *id = ctx->cm_id;

	if (!id || is_ud(ctx))
		return -EINVAL;
	/* Linux: a DREQ, or the DREP a DREQ received is owed. */
	if (sib_cm_send_dreq(id, NULL, 0) == 0)
		return 0;
	return sib_cm_send_drep(id, NULL, 0);
}

int cma_notify(struct ucma_ctx *ctx, uint32_t event)
{
	if (event != IBV_EVENT_COMM_EST)
		return 0;
	if (!ctx->cm_id)
		return -EINVAL;
	return sib_cm_establish(ctx->cm_id);
}

/* ---------------------------------------------------------------- QP attributes */

int cma_init_qp_attr(struct ucma_ctx *ctx, uint32_t qp_state, struct ib_uverbs_qp_attr *a)
{
	bool conn = ctx->cm_id || ctx->state == CMA_ESTABLISHED;
	uint32_t m = IBV_QP_STATE;

	memset(a, 0, sizeof(*a));
	a->qp_state = qp_state;
	if (qp_state == IBV_QPS_INIT) {
		a->port_num = 1;
		a->pkey_index = 0;
		m |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (is_ud(ctx)) {
			a->qkey = ctx->qkey ? ctx->qkey : SIB_UDP_QKEY;
			m |= IBV_QP_QKEY;
		} else {
			/* IBA 12.7: REMOTE_WRITE for any connection; READ and
			 * atomics when it gives us responder resources, and FLUSH to
			 * global visibility as the kernel's CM adds for a device
			 * that flushes (1 << 8: IBV_ACCESS_FLUSH_GLOBAL, rdma-core 45). */
			a->qp_access_flags = conn ? IBV_ACCESS_REMOTE_WRITE : 0;
			if (conn && ctx->responder_resources)
				a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
						      MEMREG_ACCESS_FLUSH_GLOBAL;
			m |= IBV_QP_ACCESS_FLAGS;
		}
	} else if (is_ud(ctx)) {
		if (qp_state == IBV_QPS_RTS) {
			a->sq_psn = 0;
			m |= IBV_QP_SQ_PSN;
		}
	} else if (qp_state == IBV_QPS_RTR) {
		if (!conn || !ctx->have_path || !ctx->remote_qpn)
			return -EINVAL;
		ah_from_path(ctx, &a->ah_attr);
		a->path_mtu = ctx->path.MTU;
		a->dest_qp_num = ctx->remote_qpn;
		a->rq_psn = ctx->local_psn;
		m |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (ctx->qp_type == IBV_QPT_RC || ctx->qp_type == IBV_QPT_XRC_RECV) {
			a->max_dest_rd_atomic = ctx->responder_resources;
			a->min_rnr_timer = 0;
			m |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	} else if (qp_state == IBV_QPS_RTS) {
		if (!conn || !ctx->remote_qpn)
			return -EINVAL;
		a->sq_psn = ctx->remote_psn;
		m |= IBV_QP_SQ_PSN;
		if (ctx->qp_type == IBV_QPT_RC || ctx->qp_type == IBV_QPT_XRC_SEND) {
			a->retry_cnt = ctx->retry_count;
			a->rnr_retry = ctx->rnr_retry_count;
			a->max_rd_atomic = ctx->initiator_depth;
			m |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		if (ctx->qp_type == IBV_QPT_RC || ctx->qp_type == IBV_QPT_XRC_SEND ||
		    ctx->qp_type == IBV_QPT_XRC_RECV) {
			a->timeout = ctx->ack_timeout_set ? ctx->ack_timeout : ctx->local_ack_timeout;
			m |= IBV_QP_TIMEOUT;
		}
	} else {
		return -EINVAL;
	}
	a->qp_attr_mask = m;
	return 0;
}

/* ---------------------------------------------------------------- options */

/* RDMA_OPTION_IB_PATH: the route given, not asked for (ibacm's way). */
static int set_ib_path(struct ucma_ctx **ctxp, const struct ib_path_rec_data *d, unsigned n)
{
	struct ucma_ctx *ctx = *ctxp;
	uint32_t handle = ctx->handle;
	uint64_t gen = ctx->generation;
	struct ib_path_record path;
	struct sib_endpoint peer;
	int rc;

	for (unsigned i = 0;; i++) {
		if (i == n) {
			sib_dbg("rdma_cm: set_option IB_PATH on id %u: no path is marked primary",
				ctx->handle);
			return -EINVAL;
		}
		if (d[i].flags & IB_PATH_PRIMARY) {
			ib_path_record_decode(&path, (const uint8_t *)d[i].path_rec);
			break;
		}
	}
	if (!cma_transition(ctx, CMA_IN(CMA_ADDR_RESOLVED), CMA_ROUTE_QUERY))
		return state_refused(ctx, "set_option IB_PATH", "it needs ADDR_RESOLVED");
	sib_cm_unlock(sib_ucma.cm);
	rc = sib_sa_resolve_lid(&sib_ucma.hca->node, 1, path.DLID, &peer);
	sib_cm_lock(sib_ucma.cm);
	ctx = *ctxp = ucma_ctx_find(handle, gen);
	if (!ctx)
		return 0;
	if (rc) {
		if (!cma_transition(ctx, CMA_IN(CMA_ROUTE_QUERY), CMA_ADDR_RESOLVED))
			return 0;
		return rc == -ENOENT ? -EHOSTUNREACH : rc;
	}
	if (!cma_transition(ctx, CMA_IN(CMA_ROUTE_QUERY), CMA_ROUTE_RESOLVED))
		return 0;
	ctx->path = path;
	ctx->have_path = true;
	memcpy(ctx->dgid, path.DGID.raw, 16);
	ctx->peer = peer;
	ucma_queue_event(ctx, NULL, UCMA_EV_ROUTE_RESOLVED, 0, NULL, NULL);
	return 0;
}

int cma_set_option(struct ucma_ctx **ctxp, uint32_t level, uint32_t optname, const void *optval,
		   uint32_t optlen)
{
	struct ucma_ctx *ctx = *ctxp;
	int v;

	if (level == RDMA_OPTION_ID) {
		switch (optname) {
		case RDMA_OPTION_ID_TOS:
			if (optlen != 1)
				return -EINVAL;
			ctx->tos = *(const uint8_t *)optval;
			ctx->tos_set = true;
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
		case RDMA_OPTION_ID_AFONLY:
			if (optlen != sizeof(int))
				return -EINVAL;
			memcpy(&v, optval, sizeof(v));
			/* Linux: only before the id is bound (REUSEADDR may be
			 * turned on later, short of listening). */
			if (optname == RDMA_OPTION_ID_REUSEADDR) {
				if (ctx->state == CMA_LISTEN || (ctx->state != CMA_IDLE && !v))
					return state_refused(ctx, "set_option REUSEADDR",
							     "it may be turned off while IDLE only, "
							     "on before LISTEN");
				ctx->reuseaddr = v != 0;
				return v ? cma_resv_reuseaddr(&ctx->resv) : 0;
			}
			if (ctx->state != CMA_IDLE)
				return state_refused(ctx, "set_option AFONLY", "it needs IDLE");
			ctx->afonly = v != 0;
			ctx->afonly_set = true;
			return 0;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			if (optlen != 1)
				return -EINVAL;
			ctx->ack_timeout = *(const uint8_t *)optval;
			if (ctx->ack_timeout > 31)
				ctx->ack_timeout = 31;
			ctx->ack_timeout_set = true;
			return 0;
		}
		return -ENOSYS;
	}
	if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH) {
		if (!optlen || optlen % sizeof(struct ib_path_rec_data))
			return -EINVAL;
		return set_ib_path(ctxp, optval, optlen / sizeof(struct ib_path_rec_data));
	}
	return -ENOSYS;
}

/* ---------------------------------------------------------------- teardown */

void cma_teardown(struct ucma_ctx *ctx)
{
	if (ctx->cm_id) {
		sib_cm_destroy_id(ctx->cm_id);
		ctx->cm_id = NULL;
	}
	if (ctx->service) {
		service_put(ctx->service);
		ctx->service = NULL;
	}
	cma_resv_release(&ctx->resv);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Ids of the UDP port space that a program bound, registered with the SA,
 * so that a route to their address and port leads to this process.
 *
 * The kernel's rdma_resolve_route needs no port: the path leads to the
 * host, whose one HCA holds every QP.  Here each process is a port of its
 * own, and a route to a host without a listener on the port leads to some
 * process of that host.  A UD id that binds and never listens is reached
 * without the CM: rsockets' datagram sockets (rdma-core's rsocket.c, ds_*)
 * bind one id per source address to the address and port of their UDP
 * socket, tell the peer the QPN over UDP, and the peer resolves a route to
 * that address and port for its address handle.  So such ids register a
 * record too, under a ServiceID of their own (SIB_SR_BOUND_SID_PREFIX and
 * the Annex A11 ServiceID's port space and port: a listener on the port
 * keeps its own record), otherwise laid out as a listener's (cma_addr.c).
 * Only the BIND commands register: an id that RESOLVE_ADDR bound has an
 * ephemeral port nobody resolves.  cma_resolve_route looks here when no
 * listener covers the address; connect never does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "provider/rdma_cm.h"

#define BOUND_IPS 3 /* as a listener record carries */

struct bound_set {
	uint64_t sid;
	unsigned n;
	uint8_t ips[BOUND_IPS][16];
	bool afonly[BOUND_IPS];
};

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bound_set *regs; /* what the SA holds for us */
static unsigned nregs;

uint64_t cma_bound_sid(uint64_t sid)
{
	return SIB_SR_BOUND_SID_PREFIX | (sid & 0xffffffffull);
}

void cma_bound_mark(struct ucma_ctx *ctx)
{
	ctx->sa_bound = ctx->ps == RDMA_PS_UDP && ctx->src.ss_family != SIB_AF_IB;
}

static struct bound_set *find_set(struct bound_set *v, unsigned n, uint64_t sid)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i].sid == sid)
			return &v[i];
	return NULL;
}

/* The sets the bound ids make now; NULL with *n 0 when there are none. */
static struct bound_set *wanted(unsigned *n)
{
	struct bound_set *v = NULL, *s;
	unsigned cap = 0;

	*n = 0;
	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next) {
		uint64_t sid = (uint64_t)c->ps << 16 | cma_port_of((struct sockaddr *)&c->src);

		if (!c->sa_bound || c->state == CMA_IDLE)
			continue;
		s = find_set(v, *n, sid);
		if (!s) {
			if (*n == cap) {
				struct bound_set *nv = realloc(v, (cap ? 2 * cap : 4) * sizeof(*v));

				if (!nv)
					break; /* fewer records: their routes go to the host */
				v = nv;
				cap = cap ? 2 * cap : 4;
			}
			s = &v[(*n)++];
			memset(s, 0, sizeof(*s));
			s->sid = sid;
		}
		if (s->n < BOUND_IPS) {
			cma_ip16((struct sockaddr *)&c->src, s->ips[s->n]);
			s->afonly[s->n++] = c->afonly;
		}
	}
	return v;
}

static bool same_set(const struct bound_set *a, const struct bound_set *b)
{
	return a && b && a->n == b->n && !memcmp(a->ips, b->ips, sizeof(a->ips)) &&
	       !memcmp(a->afonly, b->afonly, sizeof(a->afonly));
}

void cma_bound_sync(void)
{
	struct bound_set *want;
	unsigned nwant;

	pthread_mutex_lock(&sync_lock);
	sib_cm_lock(sib_ucma.cm);
	want = wanted(&nwant);
	sib_cm_unlock(sib_ucma.cm);
	for (unsigned i = 0; i < nwant; i++)
		if (!same_set(&want[i], find_set(regs, nregs, want[i].sid)))
			cma_listener_record(sib_ucma.hca, cma_bound_sid(want[i].sid), want[i].ips,
					    want[i].afonly, want[i].n, "bound id");
	for (unsigned i = 0; i < nregs; i++)
		if (!find_set(want, nwant, regs[i].sid))
			cma_listener_record(sib_ucma.hca, cma_bound_sid(regs[i].sid), NULL, NULL, 0,
					    "bound id");
	free(regs);
	regs = want;
	nregs = nwant;
	pthread_mutex_unlock(&sync_lock);
}

void cma_bound_register_again(void)
{
	pthread_mutex_lock(&sync_lock);
	free(regs);
	regs = NULL;
	nregs = 0;
	pthread_mutex_unlock(&sync_lock);
	cma_bound_sync();
}

void cma_bound_withdraw(void)
{
	for (unsigned i = 0; i < nregs; i++)
		cma_record_withdraw(sib_ucma.hca, cma_bound_sid(regs[i].sid));
	nregs = 0;
}

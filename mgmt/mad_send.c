/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Outstanding sends of one MAD layer: post, the response that answers one,
 * resends and timeouts, cancel (mad_send.h has the rules).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mgmt/mad_send.h"
#include "wire/bitfield.h"

struct sib_mad_send {
	struct sib_mad_send *next; /* the layer's list: still out */
	struct sib_mad_send *work; /* a tick's batch */
	uint64_t tid;
	unsigned port_num;
	struct sib_mad_addr addr;
	struct sib_endpoint dst;
	uint8_t mad[IB_MAD_BYTES];
	uint64_t wait_ns, wait_max_ns, deadline_ns;
	unsigned retries_left;
	sib_mad_send_fn fn;
	void *context;
	unsigned refs;	/* the list's, and each thread using it without the lock */
	bool canceled;	/* ends CANCELED at the next tick */
	bool handling;	/* its handler runs (one at a time) or it is being resent */
};

static uint64_t now(struct sib_mad_layer *l)
{
	return l->ops->now(l->owner);
}

/* Under the lock. */
static void put(struct sib_mad_send *s)
{
	if (!--s->refs)
		free(s);
}

/* Under the lock: the owner's timer must fire by d. */
static void arm_by(struct sib_mad_layer *l, uint64_t d)
{
	if (!l->ops->arm || (l->armed_ns && l->armed_ns <= d))
		return;
	l->armed_ns = d;
	l->ops->arm(l->owner, d);
}

/* Under the lock: the earliest deadline of a send nobody holds; 0: none. */
static uint64_t earliest(const struct sib_mad_layer *l)
{
	uint64_t d = 0;

	for (const struct sib_mad_send *s = l->sends; s; s = s->next)
		if (!s->handling && (!d || s->deadline_ns < d))
			d = s->deadline_ns;
	return d;
}

static void rearm(struct sib_mad_layer *l)
{
	uint64_t d = earliest(l);

	l->armed_ns = 0;
	if (d)
		arm_by(l, d);
}

/* A bijection of 32 bits (a counter keyed twice): unique, not a counter. */
static uint32_t permute(uint32_t x, const uint32_t key[2])
{
	x ^= key[0];
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x ^ key[1];
}

uint64_t sib_mad_tid(struct sib_mad_layer *l, const struct sib_mad_agent *agent)
{
	uint32_t id = sib_mad_agent_id(l, agent);
	uint32_t n = __atomic_fetch_add(&l->tid_count, 1, __ATOMIC_RELAXED);

	return id ? (uint64_t)id << 32 | permute(n, l->tid_key) : 0;
}

static void set_tid(uint8_t *mad, uint64_t tid)
{
	ib_bits_put(mad, 64, 64, tid); /* TransactionID, IBA 13.4.3 */
}

int sib_mad_post(struct sib_mad_layer *l, const struct sib_mad_agent *agent,
		 const struct sib_mad_send_req *req, uint64_t *tid)
{
	uint64_t t = req->tid ? req->tid : sib_mad_tid(l, agent);
	struct sib_mad_send *s;

	if (!t || !sib_mad_agent_id(l, agent) || (req->timeout_ns && !req->fn))
		return -EINVAL;
	if (tid)
		*tid = t;
	if (!req->timeout_ns) {
		uint8_t mad[IB_MAD_BYTES];

		memcpy(mad, req->mad, IB_MAD_BYTES);
		set_tid(mad, t);
		return l->ops->xmit(l->owner, req->port_num, &req->addr, mad, &req->dst);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->tid = t;
	s->port_num = req->port_num;
	s->addr = req->addr;
	s->dst = req->dst;
	memcpy(s->mad, req->mad, IB_MAD_BYTES);
	set_tid(s->mad, t);
	s->wait_ns = req->timeout_ns;
	s->wait_max_ns = req->timeout_max_ns > req->timeout_ns ? req->timeout_max_ns : 0;
	s->retries_left = req->retries;
	s->fn = req->fn;
	s->context = req->context;
	s->refs = 2; /* the list's and ours, until it left */
	pthread_mutex_lock(&l->lock);
	s->deadline_ns = now(l) + s->wait_ns;
	s->next = l->sends;
	l->sends = s;
	arm_by(l, s->deadline_ns);
	pthread_mutex_unlock(&l->lock);
	/* Out before it leaves: an answer may beat the return of xmit. */
	l->ops->xmit(l->owner, s->port_num, &s->addr, s->mad, &s->dst);
	pthread_mutex_lock(&l->lock);
	put(s);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* Under the lock: s leaves the list (if still there), and the list's
 * reference with it; the caller holds one of its own. */
static void unlink_send(struct sib_mad_layer *l, struct sib_mad_send *s)
{
	for (struct sib_mad_send **pp = &l->sends; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->refs--;
			return;
		}
}

static struct sib_mad_send_wc wc_of(const struct sib_mad_send *s, enum sib_mad_status st,
				    const struct sib_mad_recv *resp)
{
	return (struct sib_mad_send_wc){ .status = st, .tid = s->tid, .context = s->context,
					 .port_num = s->port_num, .mad = s->mad, .dst = &s->dst,
					 .resp = resp };
}

bool sib_mad_send_answer(struct sib_mad_layer *l, const struct sib_mad_recv *r)
{
	uint64_t tid = ib_bits_get(r->mad, 64, 64);
	struct sib_mad_send_wc wc;
	enum sib_mad_verdict v;
	struct sib_mad_send *s;

	pthread_mutex_lock(&l->lock);
	/* IBA 13.4.6.4 matches by TID (and class, as the kernel does); the
	 * endpoint is softib's: an answer counts only from where we asked. */
	for (s = l->sends; s; s = s->next)
		if (!s->canceled && s->tid == tid && s->mad[1] == r->mad[1] && r->from &&
		    sib_endpoint_equal(&s->dst, r->from))
			break;
	if (!s || s->handling) {
		pthread_mutex_unlock(&l->lock);
		return s != NULL; /* busy: dropped as a lost packet would be */
	}
	s->handling = true;
	s->refs++;
	pthread_mutex_unlock(&l->lock);
	wc = wc_of(s, SIB_MAD_RESPONSE, r);
	v = s->fn(l->owner, &wc);
	pthread_mutex_lock(&l->lock);
	s->handling = false;
	if (v == SIB_MAD_DONE) {
		unlink_send(l, s);
	} else if (!s->canceled) {
		s->deadline_ns = now(l) + s->wait_ns; /* the wait starts again */
		arm_by(l, s->deadline_ns);
	} else {
		arm_by(l, s->deadline_ns); /* canceled meanwhile: ends at the tick */
	}
	put(s);
	pthread_mutex_unlock(&l->lock);
	return true;
}

/* Under the lock: the next wait of s (twice the last one, with a cap). */
static void next_wait(struct sib_mad_send *s, uint64_t t)
{
	if (s->wait_max_ns)
		s->wait_ns = s->wait_ns * 2 < s->wait_max_ns ? s->wait_ns * 2 : s->wait_max_ns;
	s->deadline_ns = t + s->wait_ns;
}

void sib_mad_tick(struct sib_mad_layer *l)
{
	struct sib_mad_send *again = NULL, *ended = NULL, *s, **pp;
	struct sib_mad_send_wc wc;
	uint64_t t;

	pthread_mutex_lock(&l->lock);
	t = now(l);
	for (pp = &l->sends; (s = *pp);) {
		if (s->handling || s->deadline_ns > t) {
			pp = &s->next;
		} else if (!s->canceled && s->retries_left) {
			/* IBA 13.4.6.4: the same MAD, the same TID. */
			if (s->retries_left != SIB_MAD_RETRY_FOREVER)
				s->retries_left--;
			next_wait(s, t);
			s->handling = true;
			s->refs++;
			s->work = again;
			again = s;
			pp = &s->next;
		} else {
			*pp = s->next; /* the list's reference goes with it */
			s->work = ended;
			ended = s;
		}
	}
	pthread_mutex_unlock(&l->lock);

	for (s = again; s; s = s->work) {
		/* The handler first: a state it keeps for the wait (the CM's
		 * MRA) changes before an answer to this try can come. */
		wc = wc_of(s, SIB_MAD_RESENT, NULL);
		s->fn(l->owner, &wc);
		l->ops->xmit(l->owner, s->port_num, &s->addr, s->mad, &s->dst);
	}
	while ((s = ended)) {
		ended = s->work;
		wc = wc_of(s, s->canceled ? SIB_MAD_CANCELED : SIB_MAD_TIMEOUT, NULL);
		s->fn(l->owner, &wc);
		pthread_mutex_lock(&l->lock);
		put(s);
		pthread_mutex_unlock(&l->lock);
	}

	pthread_mutex_lock(&l->lock);
	while ((s = again)) {
		again = s->work;
		s->handling = false;
		put(s);
	}
	rearm(l);
	pthread_mutex_unlock(&l->lock);
}

uint64_t sib_mad_next_deadline(struct sib_mad_layer *l)
{
	uint64_t d;

	pthread_mutex_lock(&l->lock);
	d = earliest(l);
	pthread_mutex_unlock(&l->lock);
	return d;
}

/* Under the lock: s ends at the next tick. */
static void cancel_send(struct sib_mad_layer *l, struct sib_mad_send *s, uint64_t t)
{
	s->canceled = true;
	s->deadline_ns = t ? t : 1; /* due now; 0 would read as "no deadline" */
	if (!s->handling)
		arm_by(l, s->deadline_ns);
}

int sib_mad_cancel(struct sib_mad_layer *l, uint64_t tid, const void *context)
{
	struct sib_mad_send *s;

	pthread_mutex_lock(&l->lock);
	for (s = l->sends; s; s = s->next)
		if (!s->canceled && s->tid == tid && s->context == context)
			break;
	if (s)
		cancel_send(l, s, now(l));
	pthread_mutex_unlock(&l->lock);
	return s ? 0 : -ENOENT;
}

unsigned sib_mad_cancel_to(struct sib_mad_layer *l, const struct sib_endpoint *dst,
			   const void *context)
{
	unsigned n = 0;
	uint64_t t;

	pthread_mutex_lock(&l->lock);
	t = now(l);
	for (struct sib_mad_send *s = l->sends; s; s = s->next)
		if (!s->canceled && sib_endpoint_equal(&s->dst, dst) &&
		    (context == SIB_MAD_ANY || s->context == context)) {
			cancel_send(l, s, t);
			n++;
		}
	pthread_mutex_unlock(&l->lock);
	return n;
}

int sib_mad_modify(struct sib_mad_layer *l, uint64_t tid, const void *context,
		   uint64_t timeout_ns)
{
	struct sib_mad_send *s;

	pthread_mutex_lock(&l->lock);
	for (s = l->sends; s; s = s->next)
		if (!s->canceled && s->tid == tid && s->context == context)
			break;
	if (s) {
		s->deadline_ns = now(l) + timeout_ns;
		arm_by(l, s->deadline_ns);
	}
	pthread_mutex_unlock(&l->lock);
	return s ? 0 : -ENOENT;
}

void sib_mad_sends_fini(struct sib_mad_layer *l)
{
	struct sib_mad_send_wc wc;
	struct sib_mad_send *s;

	/* A handler may post again while it hears of the end: until none is
	 * left. */
	for (;;) {
		pthread_mutex_lock(&l->lock);
		s = l->sends;
		if (s)
			l->sends = s->next;
		pthread_mutex_unlock(&l->lock);
		if (!s)
			break;
		wc = wc_of(s, SIB_MAD_CANCELED, NULL);
		s->fn(l->owner, &wc);
		free(s);
	}
	l->armed_ns = 0;
}

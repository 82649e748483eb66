/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <time.h>

#include "mgmt/mad_wait.h"
#include "mgmt/node.h"

/* One blocking send: the caller's handler and how the send ended. */
struct call {
	struct sib_mad_waits *waits;
	sib_mad_send_fn fn;
	void *context;
	enum sib_mad_status end;
	bool done;
};

void sib_mad_waits_init(struct sib_mad_waits *w)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
}

void sib_mad_waits_fini(struct sib_mad_waits *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

static enum sib_mad_verdict call_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct call *c = wc->context;
	struct sib_mad_send_wc mine = *wc;
	enum sib_mad_verdict v;

	mine.context = c->context;
	v = c->fn(owner, &mine);
	if (wc->status == SIB_MAD_RESENT || (wc->status == SIB_MAD_RESPONSE && v == SIB_MAD_MORE))
		return v;
	/* c lives on the waiter's stack: untouched once it is done. */
	pthread_mutex_lock(&c->waits->lock);
	c->end = wc->status;
	c->done = true;
	pthread_cond_broadcast(&c->waits->cond);
	pthread_mutex_unlock(&c->waits->lock);
	return v;
}

/* Under w->lock: sleeps until ns from now at most. */
static void sleep_locked(struct sib_mad_waits *w, uint64_t ns)
{
	uint64_t until = sib_link_now_ns() + ns;
	struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull),
			       .tv_nsec = (long)(until % 1000000000ull) };

	pthread_cond_timedwait(&w->cond, &w->lock, &ts);
}

int sib_mad_call(struct sib_node *node, const struct sib_mad_agent *agent,
		 const struct sib_mad_send_req *req, enum sib_mad_status *end)
{
	struct sib_mad_waits *w = &node->waits;
	struct call c = { .waits = w, .fn = req->fn, .context = req->context };
	struct sib_mad_send_req r = *req;
	int rc;

	if (!req->timeout_ns || !req->fn)
		return -EINVAL;
	r.fn = call_event;
	r.context = &c;
	rc = sib_mad_post(&node->mads, agent, &r, NULL);
	if (rc)
		return rc;
	pthread_mutex_lock(&w->lock);
	while (!c.done) {
		if (node->ops->threaded(node)) {
			/* The send's timeout ends the wait; the bound only
			 * notices a progress thread that stopped meanwhile. */
			sleep_locked(w, 100000000ull);
			continue;
		}
		/* No progress thread (tests): drive the node ourselves, a
		 * millisecond at a time (its timers run the send's). */
		pthread_mutex_unlock(&w->lock);
		node->ops->poll(node);
		pthread_mutex_lock(&w->lock);
		if (!c.done)
			sleep_locked(w, 1000000ull);
	}
	pthread_mutex_unlock(&w->lock);
	*end = c.end;
	return 0;
}

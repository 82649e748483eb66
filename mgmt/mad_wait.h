/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Blocking on a send (mad_send.h), for callers on a node's application
 * threads: the SA client's resolves and queries.  sib_mad_call posts and
 * waits until the send is over -- its response handled, its last try timed
 * out, or canceled -- on a condition its end signals; without a progress
 * thread (unit tests) the waiter drives the node itself with
 * node->ops->poll.  Never on the thread that delivers MADs: the answer
 * could not arrive there (callers check node->ops->on_thread and return
 * -EDEADLK).
 */
#ifndef SIB_MGMT_MAD_WAIT_H
#define SIB_MGMT_MAD_WAIT_H

#include <pthread.h>

#include "mgmt/mad_send.h"

struct sib_node;

/* What the node's waiters sleep on (node->waits). */
struct sib_mad_waits {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
};

void sib_mad_waits_init(struct sib_mad_waits *w);
void sib_mad_waits_fini(struct sib_mad_waits *w);

/*
 * Posts req for agent on the node's layer and blocks until the send is
 * over.  req->fn sees every event as usual, first.  0 with *end set to
 * SIB_MAD_RESPONSE (req->fn said SIB_MAD_DONE), SIB_MAD_TIMEOUT or
 * SIB_MAD_CANCELED; or the error of sib_mad_post.  req->timeout_ns must
 * not be 0.
 */
int sib_mad_call(struct sib_node *node, const struct sib_mad_agent *agent,
		 const struct sib_mad_send_req *req, enum sib_mad_status *end);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The send side of the MAD layer (mad_agent.h), as the kernel's
 * ib_post_send_mad: an agent posts a request with a timeout and a retry
 * count, and gets back, through the handler it posted with, either the
 * response or the end of the send.
 *
 * TransactionIDs (IBA 13.4.6.4): the agent's id in the upper 32 bits, a
 * counter through a keyed permutation in the lower 32 (mad_agent.c).  A
 * retry goes with the same TID, so a late answer to an earlier try still
 * counts.
 *
 * A response counts only when its TID and class are those of a send still
 * out AND it comes from the endpoint that send went to: TIDs are guessable,
 * endpoints are not (softib's source check, docs/architecture.md section 5).  Anything
 * else is no answer (mad_agent.h: the class's agent may count it).
 *
 * A send with a timeout stays out until
 *   - a response comes and its handler says SIB_MAD_DONE (SIB_MAD_MORE
 *     keeps it and restarts its wait: more of the answer is coming, the
 *     RMPP segments of a GetTable answer, IBA 13.6);
 *   - its wait runs out with no retry left (SIB_MAD_TIMEOUT); each wait
 *     that runs out before that sends it again (SIB_MAD_RESENT);
 *   - it is canceled (SIB_MAD_CANCELED, from the next sib_mad_tick).
 * A send without a timeout expects nothing: sib_mad_post returns once the
 * link took it, and its handler is never called.
 *
 * Handlers run with no lock of the layer held (they may post, cancel and
 * take their own locks), never from sib_mad_post, sib_mad_cancel* or
 * sib_mad_modify, one at a time per send.  A response that arrives while
 * another one of the same send is being handled is dropped, as a lost
 * packet.
 *
 * Time: the owner's clock (struct sib_mad_ops); sib_mad_tick runs what is
 * due: from a timer the owner arms through ops->arm (a node), or from the
 * owner's loop, which includes sib_mad_next_deadline in its own (softib-sm).
 */
#ifndef SIB_MGMT_MAD_SEND_H
#define SIB_MGMT_MAD_SEND_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_packet.h"

enum sib_mad_status {
	SIB_MAD_RESPONSE, /* wc->resp answers it, from where it went */
	SIB_MAD_RESENT,	  /* a wait ran out: it went again, same TID (for counters) */
	SIB_MAD_TIMEOUT,  /* no answer after the last try: it is over */
	SIB_MAD_CANCELED, /* canceled, or the layer closed: it is over */
};

/* What a handler says of a response. */
enum sib_mad_verdict {
	SIB_MAD_DONE, /* the transaction is over */
	SIB_MAD_MORE, /* more of the answer comes: keep it, restart its wait */
};

struct sib_mad_send_wc {
	enum sib_mad_status status;
	uint64_t tid;
	void *context;			 /* as posted */
	unsigned port_num;
	const uint8_t *mad;		 /* the request, as sent */
	const struct sib_endpoint *dst;	 /* where it went */
	const struct sib_mad_recv *resp; /* SIB_MAD_RESPONSE */
};

/* Called with the layer's owner; the return value counts for a response. */
typedef enum sib_mad_verdict (*sib_mad_send_fn)(void *owner, const struct sib_mad_send_wc *wc);

#define SIB_MAD_RETRY_FOREVER UINT_MAX /* until answered or canceled */

struct sib_mad_send_req {
	unsigned port_num;	   /* whose link (the owner's xmit) */
	struct sib_mad_addr addr;
	struct sib_endpoint dst;
	const uint8_t *mad;	   /* IB_MAD_BYTES; its TID is replaced by the send's */
	uint64_t tid;		   /* 0: a fresh one of the agent (sib_mad_tid) */
	uint64_t timeout_ns;	   /* each wait for the answer; 0: none expected */
	uint64_t timeout_max_ns;   /* 0: every wait timeout_ns; else each doubles up to this */
	unsigned retries;	   /* sent again at most this often */
	sib_mad_send_fn fn;	   /* with a timeout: the response and the end */
	void *context;
};

/* A fresh TID of a registered agent: (agent id << 32) | permuted counter. */
uint64_t sib_mad_tid(struct sib_mad_layer *l, const struct sib_mad_agent *agent);

/*
 * Sends req->mad for agent (registered) and, with a timeout, keeps it out
 * as above; *tid (may be NULL) gets its TID.  0; -EINVAL (unregistered
 * agent, a timeout without a handler); -ENOMEM; without a timeout, the
 * link's error.  With a timeout a link error is a lost packet: the send
 * stays and is tried again.
 */
int sib_mad_post(struct sib_mad_layer *l, const struct sib_mad_agent *agent,
		 const struct sib_mad_send_req *req, uint64_t *tid);

/* Ends the send with TID tid posted with context (the CM's REQ once the
 * REP is in, IBA 12.9; ib_cancel_mad).  0, or -ENOENT when it is not out
 * any more (its end may be on its way to the handler). */
int sib_mad_cancel(struct sib_mad_layer *l, uint64_t tid, const void *context);
/* Ends every send to dst posted with context, or (SIB_MAD_ANY) any
 * context: a port that is gone.  Returns how many. */
#define SIB_MAD_ANY ((const void *)-1)
unsigned sib_mad_cancel_to(struct sib_mad_layer *l, const struct sib_endpoint *dst,
			   const void *context);
/* The current wait of that send ends timeout_ns from now, later waits are
 * its own (an MRA, IBA 12.6.6).  0 or -ENOENT. */
int sib_mad_modify(struct sib_mad_layer *l, uint64_t tid, const void *context,
		   uint64_t timeout_ns);

/* Resends what waited long enough, ends what timed out or was canceled. */
void sib_mad_tick(struct sib_mad_layer *l);
/* When sib_mad_tick next has work (absolute ns, the owner's clock); 0: none. */
uint64_t sib_mad_next_deadline(struct sib_mad_layer *l);

/* mad_agent.c's: response r to the send it answers; false when it
 * answers none (unknown TID or class, or not from where the send went). */
bool sib_mad_send_answer(struct sib_mad_layer *l, const struct sib_mad_recv *r);
/* mad_agent.c's: every send still out ends CANCELED (layer fini). */
void sib_mad_sends_fini(struct sib_mad_layer *l);

#endif

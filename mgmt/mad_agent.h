/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The MAD layer of one MAD endpoint -- a node's QP0 and QP1, or softib-sm
 * -- as the kernel's ib_mad: agents register for a QP, a management class
 * and version and the methods they serve (ib_register_mad_agent), send
 * requests through the layer (mad_send.h), and the layer hands on every
 * MAD that arrives without naming an agent:
 *   - a response (the R bit set, or TrapRepress for a Trap) goes to the
 *     send it answers: its TID and the endpoint the send went to
 *     (mad_send.h);
 *   - a request goes to the agent registered for its QP, class, version
 *     and method (a CM Send to the CM, a Trap at softib-sm to the SM);
 *   - a response no send takes goes to the first agent registered for its
 *     QP and class, which may count it (the SA client's answers not from
 *     its SM, the SM's misrouted ones).
 *
 * One piece of code for two owners: a node (hca/, threaded: MADs arrive on
 * the progress thread and on application threads, timeouts run from the
 * node's timers) and softib-sm (fabric/, one thread, time passed in).  The
 * owner gives the layer a clock, a way onto its links and, when timers of
 * its own run the layer, a way to be told when the next timeout is due
 * (struct sib_mad_ops).
 *
 * Registration may happen while MADs are delivered (an agent that starts
 * late); unregistration only once nothing delivers any more (fini).
 */
#ifndef SIB_MGMT_MAD_AGENT_H
#define SIB_MGMT_MAD_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"
#include "wire/mad.h"

struct sib_node;
struct sib_mad_send;
struct sib_mad_reg;

/* One MAD as it arrived: IB_MAD_BYTES at mad, with its address and the
 * UDP endpoint it came from. */
struct sib_mad_recv {
	unsigned port_num;
	const struct sib_mad_addr *a;
	const uint8_t *mad;
	const struct sib_endpoint *from;
};

/* Methods an agent serves, one bit per request method (IBA 13.4.5 defines
 * them all below 0x40). */
#define SIB_MAD_METHOD(m) (1ull << ((m) & 0x3f))
#define SIB_MAD_METHODS_ALL (~0ull)

struct sib_mad_agent {
	const char *name;      /* for log lines */
	uint32_t qp;	       /* SIB_QP0 (SMPs) or SIB_QP1 (GMPs) */
	uint8_t mgmt_class;
	/* 0: every version; the agent answers those it does not speak with
	 * BAD_VERSION itself (IBA 13.4.7), as the SMA does. */
	uint8_t class_version;
	/* The requests it serves; 0: none, it only sends (its responses find
	 * it through its sends). */
	uint64_t methods;
	/* A request of its class and one of its methods, or a response no
	 * send took.  True when the agent took it; false when nothing here
	 * serves it (the caller counts those).  Runs on the delivering thread
	 * with no lock of the layer held; owner is the layer's. */
	bool (*rx)(void *owner, const struct sib_mad_recv *r);
};

/* What the layer's owner does for it. */
struct sib_mad_ops {
	/* The owner's clock, ns (CLOCK_MONOTONIC, or softib-sm's step time). */
	uint64_t (*now)(void *owner);
	/* One MAD onto port port_num's link, to dst: 0 or a negative errno. */
	int (*xmit)(void *owner, unsigned port_num, const struct sib_mad_addr *a,
		    const uint8_t *mad, const struct sib_endpoint *dst);
	/* The earliest timeout is now due at deadline_ns (absolute): run
	 * sib_mad_tick then.  Called with the layer's lock held (arm a timer,
	 * nothing more).  NULL: the owner asks sib_mad_next_deadline. */
	void (*arm)(void *owner, uint64_t deadline_ns);
};

/* The MAD layer of one endpoint; the owner embeds it. */
struct sib_mad_layer {
	void *owner;
	const struct sib_mad_ops *ops;
	pthread_mutex_t lock;	     /* registrations and sends; a leaf lock but for ops->arm */
	struct sib_mad_reg *agents;  /* read without the lock (mad_agent.c) */
	uint32_t next_agent_id;
	struct sib_mad_send *sends;  /* outstanding (mad_send.c) */
	uint32_t tid_count, tid_key[2];
	uint64_t armed_ns;	     /* the deadline ops->arm was last given; 0: none */
};

void sib_mad_layer_init(struct sib_mad_layer *l, void *owner, const struct sib_mad_ops *ops);
/* Every send still out ends (its handler gets SIB_MAD_CANCELED, mad_send.h),
 * every agent is forgotten.  Nothing may deliver MADs any more. */
void sib_mad_layer_fini(struct sib_mad_layer *l);

/* 0; -EEXIST when an agent of that QP and class already serves one of its
 * methods in an overlapping version; -ENOMEM. */
int sib_mad_register(struct sib_mad_layer *l, const struct sib_mad_agent *agent);
/* The request methods registered agents serve on qp for mclass (any
 * version): what a further agent of that class may still take. */
uint64_t sib_mad_methods_served(struct sib_mad_layer *l, uint32_t qp, uint8_t mclass);

/* The id of a registered agent (the upper half of its TIDs); 0: none. */
uint32_t sib_mad_agent_id(struct sib_mad_layer *l, const struct sib_mad_agent *agent);

/* Hands one MAD on as above: what the taker said, or false when nobody
 * took it (unknown BaseVersion, IBA 13.4.4.1, included). */
bool sib_mad_deliver(struct sib_mad_layer *l, const struct sib_mad_recv *r);

/* A response to a request (IBA 13.4.5): the R bit, or TrapRepress. */
static inline bool sib_mad_is_response(const uint8_t *mad)
{
	return (mad[3] & IB_MAD_METHOD_RESP) || mad[3] == IB_MAD_METHOD_TRAP_REPRESS;
}

/* The node's layer (node->mads): registration, and delivery from the
 * progress thread or a thread that drains a link (hca/progress.c). */
int sib_mad_agent_register(struct sib_node *node, const struct sib_mad_agent *agent);
bool sib_mad_agent_deliver(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
			   const uint8_t *mad, const struct sib_endpoint *from);

#endif

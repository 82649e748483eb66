/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Agents and who gets what (mad_agent.h); the sends are mad_send.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_send.h"
#include "mgmt/node.h"

/* A registration: prepended with a release store, so a deliverer walking
 * the list sees each entry whole. */
struct sib_mad_reg {
	const struct sib_mad_agent *agent;
	uint32_t id;
	struct sib_mad_reg *next;
};

void sib_mad_layer_init(struct sib_mad_layer *l, void *owner, const struct sib_mad_ops *ops)
{
	memset(l, 0, sizeof(*l));
	l->owner = owner;
	l->ops = ops;
	pthread_mutex_init(&l->lock, NULL);
	/* The low half of a TID is a counter through a keyed permutation:
	 * unique for 2^32 sends, and nothing a stranger guesses from the
	 * counter alone (the endpoint check is what protects, mad_send.h). */
	if (getrandom(l->tid_key, sizeof(l->tid_key), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(l->tid_key)) {
		l->tid_key[0] = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);
		l->tid_key[1] = (uint32_t)(uintptr_t)l * 2246822519u;
	}
}

void sib_mad_layer_fini(struct sib_mad_layer *l)
{
	struct sib_mad_reg *r;

	sib_mad_sends_fini(l);
	r = l->agents;
	l->agents = NULL;
	while (r) {
		struct sib_mad_reg *next = r->next;

		free(r);
		r = next;
	}
	pthread_mutex_destroy(&l->lock);
}

static bool versions_overlap(uint8_t a, uint8_t b)
{
	return !a || !b || a == b;
}

int sib_mad_register(struct sib_mad_layer *l, const struct sib_mad_agent *agent)
{
	struct sib_mad_reg *r;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	for (r = l->agents; r; r = r->next)
		if (r->agent->qp == agent->qp && r->agent->mgmt_class == agent->mgmt_class &&
		    versions_overlap(r->agent->class_version, agent->class_version) &&
		    ((r->agent->methods & agent->methods) || r->agent == agent))
			break;
	if (r) {
		sib_err("MAD agent %s: QP%u class 0x%02x: %s already serves those methods",
			agent->name, agent->qp, agent->mgmt_class, r->agent->name);
		rc = -EEXIST;
	} else if (!(r = malloc(sizeof(*r)))) {
		rc = -ENOMEM;
	} else {
		r->agent = agent;
		r->id = ++l->next_agent_id;
		r->next = l->agents;
		__atomic_store_n(&l->agents, r, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

uint64_t sib_mad_methods_served(struct sib_mad_layer *l, uint32_t qp, uint8_t mclass)
{
	uint64_t m = 0;

	for (struct sib_mad_reg *r = __atomic_load_n(&l->agents, __ATOMIC_ACQUIRE); r; r = r->next)
		if (r->agent->qp == qp && r->agent->mgmt_class == mclass)
			m |= r->agent->methods;
	return m;
}

uint32_t sib_mad_agent_id(struct sib_mad_layer *l, const struct sib_mad_agent *agent)
{
	for (struct sib_mad_reg *r = __atomic_load_n(&l->agents, __ATOMIC_ACQUIRE); r; r = r->next)
		if (r->agent == agent)
			return r->id;
	return 0;
}

/*
 * The agent for a MAD of qp and mclass: the one serving its version and
 * method, or (any_method, for a response no send took) the first one
 * registered for the class.  The list is newest first.
 */
static const struct sib_mad_agent *find(struct sib_mad_layer *l, uint32_t qp, const uint8_t *mad,
					bool any_method)
{
	const struct sib_mad_agent *first = NULL;
	struct sib_mad_reg *r = __atomic_load_n(&l->agents, __ATOMIC_ACQUIRE);

	for (; r; r = r->next) {
		const struct sib_mad_agent *a = r->agent;

		if (a->qp != qp || a->mgmt_class != mad[1])
			continue;
		if (any_method)
			first = a;
		else if (versions_overlap(a->class_version, mad[2]) &&
			 (a->methods & SIB_MAD_METHOD(mad[3])) && !(mad[3] & 0xc0))
			return a;
	}
	return first;
}

bool sib_mad_deliver(struct sib_mad_layer *l, const struct sib_mad_recv *r)
{
	const struct sib_mad_agent *agent;
	bool response = sib_mad_is_response(r->mad);

	if (r->mad[0] != IB_MAD_BASE_VERSION)
		return false; /* IBA 13.4.4.1: an unknown BaseVersion is discarded */
	if (response && sib_mad_send_answer(l, r))
		return true;
	agent = find(l, r->a->DestQP, r->mad, response);
	return agent && agent->rx && agent->rx(l->owner, r);
}

int sib_mad_agent_register(struct sib_node *node, const struct sib_mad_agent *agent)
{
	return sib_mad_register(&node->mads, agent);
}

bool sib_mad_agent_deliver(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
			   const uint8_t *mad, const struct sib_endpoint *from)
{
	struct sib_mad_recv r = { .port_num = port_num, .a = a, .mad = mad, .from = from };

	return sib_mad_deliver(&node->mads, &r);
}

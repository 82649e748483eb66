/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>

#include "base/log.h"
#include "mgmt/mad_agent.h"
#include "mgmt/node.h"

/* A registration: prepended with a release store, so a deliverer walking
 * the list sees each entry whole. */
struct sib_mad_agent_reg {
	const struct sib_mad_agent *agent;
	struct sib_mad_agent_reg *next;
};

static const struct sib_mad_agent *find(struct sib_node *node, uint32_t qp, uint8_t mgmt_class)
{
	for (struct sib_mad_agent_reg *r = __atomic_load_n(&node->agents, __ATOMIC_ACQUIRE); r;
	     r = r->next)
		if (r->agent->qp == qp && r->agent->mgmt_class == mgmt_class)
			return r->agent;
	return NULL;
}

int sib_mad_agent_register(struct sib_node *node, const struct sib_mad_agent *agent)
{
	struct sib_mad_agent_reg *r;
	int rc = 0;

	pthread_mutex_lock(&node->lock);
	if (find(node, agent->qp, agent->mgmt_class)) {
		sib_err("MAD agent %s: QP%u class 0x%02x already has an agent", agent->name,
			agent->qp, agent->mgmt_class);
		rc = -EEXIST;
	} else if (!(r = malloc(sizeof(*r)))) {
		rc = -ENOMEM;
	} else {
		r->agent = agent;
		r->next = node->agents;
		__atomic_store_n(&node->agents, r, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&node->lock);
	return rc;
}

bool sib_mad_agent_deliver(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
			   const uint8_t *mad, const struct sib_endpoint *from)
{
	const struct sib_mad_agent *agent = find(node, a->DestQP, mad[1]);

	return agent && agent->rx(node, port_num, a, mad, from);
}

void sib_mad_agents_clear(struct sib_node *node)
{
	struct sib_mad_agent_reg *r = node->agents;

	node->agents = NULL;
	while (r) {
		struct sib_mad_agent_reg *next = r->next;

		free(r);
		r = next;
	}
}

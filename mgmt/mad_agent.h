/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The MAD layer of a node (as the kernel's ib_register_mad_agent): an agent
 * registers for a management class on QP0 or QP1, and every MAD that
 * arrives on that QP in that class goes to it.  The progress thread hands
 * each management packet to sib_mad_agent_deliver and names no agent.
 *
 * Registration may happen while MADs are delivered (an agent that starts
 * late); unregistration only once nothing delivers any more (sib_node_fini).
 */
#ifndef SIB_MGMT_MAD_AGENT_H
#define SIB_MGMT_MAD_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"

struct sib_node;

struct sib_mad_agent {
	const char *name; /* for log lines */
	uint32_t qp;	  /* SIB_QP0 (SMPs) or SIB_QP1 (GMPs) */
	uint8_t mgmt_class;
	/* One MAD (IB_MAD_BYTES) with the address it came with.  True when
	 * the agent took it; false when nothing here serves it (the caller
	 * counts those).  Runs on the delivering thread with no lock held. */
	bool (*rx)(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
		   const uint8_t *mad, const struct sib_endpoint *from);
};

/* 0, -EEXIST when that QP and class already have an agent, or -ENOMEM. */
int sib_mad_agent_register(struct sib_node *node, const struct sib_mad_agent *agent);

/* Gives a MAD to the agent of its QP and class: what its rx returned, or
 * false when no agent registered for them. */
bool sib_mad_agent_deliver(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
			   const uint8_t *mad, const struct sib_endpoint *from);

/* Forgets every agent (sib_node_fini). */
void sib_mad_agents_clear(struct sib_node *node);

#endif

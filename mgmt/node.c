/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "mgmt/mad_agent.h"
#include "mgmt/mad_send.h"
#include "mgmt/mcast_ports.h"
#include "mgmt/node.h"

/* The node's MAD layer: the link clock, the ports' links, and the node's
 * timers for the sends' timeouts. */
static uint64_t mad_now(void *owner)
{
	(void)owner;
	return sib_link_now_ns();
}

static int mad_xmit(void *owner, unsigned port_num, const struct sib_mad_addr *a,
		    const uint8_t *mad, const struct sib_endpoint *dst)
{
	struct sib_node *node = owner;
	struct sib_link *l = port_num >= 1 && port_num <= SIB_NUM_PORTS
				     ? node->mgmt[port_num - 1].link : NULL;

	return l ? sib_mgmt_send(l, a, mad, dst) : -ENETDOWN;
}

static void mad_tick(void *arg)
{
	sib_mad_tick(&((struct sib_node *)arg)->mads);
}

static void mad_arm(void *owner, uint64_t deadline_ns)
{
	struct sib_node *node = owner;
	uint64_t now = sib_link_now_ns();

	if (node->timers)
		sib_timer_arm(node->timers, &node->mad_timer,
			      deadline_ns > now ? deadline_ns - now : 0, mad_tick, node);
}

static const struct sib_mad_ops node_mad_ops = {
	.now = mad_now,
	.xmit = mad_xmit,
	.arm = mad_arm,
};

int sib_node_init(struct sib_node *node, uint64_t node_guid, struct sib_timers *timers,
		  const struct sib_node_ops *ops)
{
	pthread_condattr_t ca;

	memset(node, 0, sizeof(*node));
	pthread_mutex_init(&node->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&node->port_cond, &ca);
	pthread_condattr_destroy(&ca);
	node->node_guid = node_guid;
	node->sys_image_guid = node_guid;
	node->timers = timers;
	node->ops = ops;
	sib_mad_layer_init(&node->mads, node, &node_mad_ops);
	sib_mad_waits_init(&node->waits);
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		sib_port_init(&node->ports[i], (uint8_t)(i + 1), node_guid + i + 1);
		node->mgmt[i].node = node;
		node->mgmt[i].port_num = i + 1;
	}
	return sib_sa_client_init(&node->sa);
}

void sib_node_fini(struct sib_node *node)
{
	if (node->timers)
		sib_timer_cancel(node->timers, &node->mad_timer);
	sib_mad_layer_fini(&node->mads);
	sib_mad_waits_fini(&node->waits);
	sib_sma_mcast_ports_fini(node);
	sib_sa_client_fini(&node->sa);
	pthread_cond_destroy(&node->port_cond);
	pthread_mutex_destroy(&node->lock);
}

struct sib_port *sib_node_port(struct sib_node *node, unsigned port_num)
{
	if (!node || port_num < 1 || port_num > SIB_NUM_PORTS)
		return NULL;
	return &node->ports[port_num - 1];
}

void sib_node_port_set_lid(struct sib_node *node, unsigned port_num, uint16_t lid,
			   uint16_t sm_lid)
{
	struct sib_port *port = sib_node_port(node, port_num);
	uint16_t old_lid;
	bool activated;

	if (!port)
		return;
	pthread_mutex_lock(&node->lock);
	old_lid = port->LID;
	activated = sib_port_set_lid(port, lid, sm_lid);
	pthread_cond_broadcast(&node->port_cond);
	if (activated)
		node->ops->port_event(node, port_num, SIB_EV_PORT_ACTIVE);
	else if (old_lid != port->LID)
		node->ops->port_event(node, port_num, SIB_EV_LID_CHANGE);
	pthread_mutex_unlock(&node->lock);
}

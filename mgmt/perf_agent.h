/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The port's performance management agent (IBA 16.1): SubnGet-style Gets
 * of class PerfMgt (0x04) on QP1 for ClassPortInfo, PortCounters and
 * PortCountersExtended, answered from the counters the node's owner keeps
 * (struct sib_node_counters).  What perfquery asks of a port.
 *
 * Counters are read-only here: a Set (perfquery -r) gets status 0x000C, so
 * that nobody can wipe the count of what was dropped.  Otherwise, as for
 * the SMA: another method 0x0008, ClassVersion other than 1 0x0004,
 * PortSelect other than the port the MAD came in on 0x001C.
 */
#ifndef SIB_MGMT_PERF_AGENT_H
#define SIB_MGMT_PERF_AGENT_H

#include <stdbool.h>
#include <stdint.h>

struct sib_node;

/* Processes one PerfMgt request (in: IB_MAD_BYTES) that arrived on
 * port_num; writes the response into out.  False: nothing to answer. */
bool sib_perf_process(struct sib_node *node, unsigned port_num, const uint8_t *in, uint8_t *out);

/* Registers the agent with the node's MAD layer (QP1, class 0x04). */
int sib_perf_agent_register(struct sib_node *node);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The port's subnet management agent (IBA 14.2, 14.3): answers SubnGet and
 * SubnSet from the subnet manager, LID-routed and directed-route, for
 * NodeDescription, NodeInfo, GUIDInfo, PortInfo, P_KeyTable and SMInfo.
 * Anything else gets a GetResp with the status IBA 13.4.7 gives:
 *   unknown attribute, or Set of a read-only one  UNSUP_METHOD_ATTR (0x0C)
 *   method other than Get/Set                      UNSUP_METHOD (0x08)
 *   ClassVersion other than 1                      BAD_VERSION (0x04)
 *   bad AttributeModifier or PortInfo value        INVALID_FIELD (0x1C)
 * Responses (R bit), and directed-route SMPs that would need forwarding
 * (a CA forwards nothing, IBA 14.2.2.2), are dropped.  Every request passes
 * the M_Key check first (IBA 14.2.4; sma.c mkey_check): a discarded one
 * gets no response, counts in PortInfo:M_KeyViolations and sends trap 256
 * to the port's SM.
 */
#ifndef SIB_MGMT_SMA_H
#define SIB_MGMT_SMA_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"

struct sib_node;

/*
 * Processes one SMP request (in: IB_MAD_BYTES) that arrived on port_num
 * with address a from `from`.  Writes the response MAD into out and returns
 * true when one must be sent; false when the SMP is discarded (a response,
 * a bad M_Key, a Set from a stranger before the port has an M_Key:
 * sma.c admit()).
 */
bool sib_sma_handle(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
		    const uint8_t *in, const struct sib_endpoint *from, uint8_t *out);
/* The same for a request of the port's owner (no address, no sender). */
bool sib_sma_process(struct sib_node *node, unsigned port_num, const uint8_t *in, uint8_t *out);

/* A TrapRepress that answers one of the port's traps (port_up.c): true
 * when it passes the M_Key check as a Set must (IBA 14.2.4.1); the SM's
 * word then counts against its silence. */
struct sib_mad_recv;
bool sib_sma_repress_admitted(struct sib_node *node, const struct sib_mad_recv *r);

/* Registers the SMA with the node's MAD layer for both SMP classes on
 * QP0 (every SMP request is then processed and answered to where it came
 * from), and port bring-up (port_up.h) after it. */
int sib_sma_register(struct sib_node *node);

/* Fills PortInfo from the port as it is now (caller holds node->lock); c
 * (may be NULL) gives the violation counters. */
struct ib_port_info;
struct sib_node_counters;
void sib_sma_port_info(struct sib_node *node, unsigned port_num, struct ib_port_info *pi,
		       const struct sib_node_counters *c);

#endif

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
 * (a CA forwards nothing, IBA 14.2.2.2), are dropped.
 */
#ifndef SIB_MGMT_SMA_H
#define SIB_MGMT_SMA_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"

struct sib_node;

/*
 * Processes one SMP (in: IB_MAD_BYTES) that arrived on port_num.  Writes the
 * response MAD into out and returns true when one must be sent.
 */
bool sib_sma_process(struct sib_node *node, unsigned port_num, const uint8_t *in, uint8_t *out);

/* Registers the SMA with the node's MAD layer for both SMP classes on
 * QP0: every SMP is then processed and answered to where it came from. */
int sib_sma_register(struct sib_node *node);

/* Fills PortInfo from the port as it is now (caller holds node->lock). */
struct ib_port_info;
void sib_sma_port_info(struct sib_node *node, unsigned port_num, struct ib_port_info *pi);

#endif

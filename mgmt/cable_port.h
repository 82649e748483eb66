/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A port's end of its cable to a softib-switch (wire/cable.h): attaching
 * as a CA of the switch's topology, keeping the link up, saying goodbye.
 * Used by an HCA's port (SOFTIB_FABRIC, SOFTIB_NODE) and by softib-sm,
 * which attaches like an HCA.
 */
#ifndef SIB_MGMT_CABLE_PORT_H
#define SIB_MGMT_CABLE_PORT_H

#include <stdint.h>

#include "link/link.h"
#include "wire/cable.h"

/*
 * Attach `link` to the switch process at `fabric` (ADDR[:PORT], default
 * port SIB_FABRIC_PORT_DEFAULT) as CA `node` (NULL or "": any free one),
 * asking again every 200 ms until `timeout_ms` pass.  Reads the link
 * itself (call before anyone else does), dropping what is not the
 * answer.  0 with *got (ATTACHED) and *sw (the switch's endpoint);
 * -ECONNREFUSED with *got (REFUSED: got->reason says why); -ETIMEDOUT;
 * -EINVAL for a bad address.
 */
int sib_cable_attach(struct sib_link *link, const char *fabric, const char *node,
		     unsigned timeout_ms, struct sib_cable_msg *got, struct sib_endpoint *sw);

/* A KEEPALIVE or DETACH to the switch, sent and flushed. */
int sib_cable_say(struct sib_link *link, const struct sib_endpoint *sw, uint8_t type);

enum { SIB_FABRIC_PORT_DEFAULT = 18755 };

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Bringing a port up (DESIGN.md section 5).  The port's link comes up: the
 * port is INIT and sends a trap (Notice 128, "link state changed", mgmt/
 * mad_packet.h) to the SM at SOFTIB_SM, again every 100 ms until the SM answers
 * and for the first 3 s, then every 2 s (so a port that found no SM
 * becomes ACTIVE when one is started later).  The SM represses the trap
 * and configures the port through its SMA (sma.c) up to ACTIVE.  An ACTIVE
 * port that hears nothing from the SM for SIB_PORT_SM_SILENCE_NS (the SM
 * sweeps every 2 s) traps again, so a restarted SM learns of it.
 *
 * At HCA creation sib_port_bringup() waits: SIB_PORT_SM_PROBE_NS for any
 * answer; without one it starts `softib-sm --daemon --listen SOFTIB_SM`
 * (which returns once an SM listens there).  Then it waits for ACTIVE until
 * SIB_PORT_BRINGUP_NS pass without a word from an SM (an SM that talks to
 * the port is configuring it, however slow the machine), at most
 * SIB_PORT_BRINGUP_MAX_NS.  If that fails the port stays INIT with LID 0
 * and a warning says what to check.
 */
#ifndef SIB_MGMT_PORT_UP_H
#define SIB_MGMT_PORT_UP_H

#include <stdbool.h>
#include <stdint.h>

struct sib_node;

#define SIB_PORT_SM_PROBE_NS (300ull * 1000000ull)
#define SIB_PORT_BRINGUP_NS (4000ull * 1000000ull)
#define SIB_PORT_BRINGUP_MAX_NS (60000ull * 1000000ull)
#define SIB_PORT_SM_SILENCE_NS (8000ull * 1000000ull)

/* Sends the first trap and arms the resend timer. */
void sib_port_up_start(struct sib_node *node, unsigned port_num);
/* Stops trapping (HCA teardown). */
void sib_port_up_stop(struct sib_node *node, unsigned port_num);
/* The whole policy above, blocking; returns 0 once ACTIVE, else -ETIMEDOUT. */
int sib_port_bringup(struct sib_node *node, unsigned port_num, bool may_spawn);

/* Waits until the port is ACTIVE (want_active) or has heard from an SM,
 * at most timeout_ns.  0 or -ETIMEDOUT. */
int sib_port_up_wait(struct sib_node *node, unsigned port_num, uint64_t timeout_ns,
		     bool want_active);

/*
 * Starts `softib-sm --daemon --listen listen` and reaps its first process
 * (the daemon detaches itself).  The program is $SOFTIB_SM_BIN, else
 * softib-sm beside the library or program this code is in (build tree:
 * build/softib-sm; installed: PREFIX/bin/softib-sm for PREFIX/lib/softib/),
 * else softib-sm on PATH.  0 or a negative errno.
 */
int sib_sm_spawn(const char *listen);

#endif

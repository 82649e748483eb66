/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Bringing a port up (docs/architecture.md section 5), and which subnet manager the
 * port listens to.
 *
 * The port's link comes up: the port is INIT and sends a trap (Notice 128,
 * "link state changed", mgmt/mad_packet.h) and a SubnGet(SMInfo) to every
 * SM address it was configured with (SOFTIB_SM: one, or a master and its
 * standbys separated by commas), again every 100 ms until an SM verifies
 * itself and for the first 3 s, then every 2 s (so a port that found no SM
 * becomes ACTIVE when one is started later).  The SM represses the trap
 * and configures the port through its SMA (sma.c) up to ACTIVE.  Traps and
 * queries are sends of the node's MAD layer (mad_send.h): a trap is new
 * every time (its NoticeCount moves on) and waits 2 s for its TrapRepress;
 * a query to one address goes again with its TID until answered (every
 * 100 ms, then one try of 2 s per round of the trap timer), and an answer
 * counts only from the address it was sent to.
 *
 * The port's SM -- where its traps and SA queries go (sm_ep) -- is never
 * whoever sent the last SMP.  It is the configured address that answers
 * SubnGet(SMInfo) from that address with SMState MASTER and, once the port
 * holds an M_Key, has shown it that M_Key in an SMP (only an SM holding the
 * subnet's key file knows it; the port never sends it).  A second master
 * is taken only while the current one is silent.  (IBA 14.4 gives the
 * SM_Key only to SMs that present it, so a port cannot check it; the M_Key
 * is what an SM proves itself with to a port.)
 *
 * An ACTIVE port that hears nothing from its SM for SIB_PORT_SM_SILENCE_NS
 * (the SM sweeps every 2 s) traps again to every configured address, every
 * 2 s, with its LID in the trap, so that a restarted SM or a standby that
 * took over learns of it and gives it back that LID.
 *
 * At HCA creation sib_port_bringup() waits: SIB_PORT_SM_PROBE_NS for an SM
 * to verify itself; without one it starts `softib-sm --daemon --listen`
 * the first SM address (which returns once an SM listens there).  Then it
 * waits for ACTIVE until SIB_PORT_BRINGUP_NS pass without a word from the
 * verified SM (an SM that talks to the port is configuring it, however
 * slow the machine), at most SIB_PORT_BRINGUP_MAX_NS.  If that fails the
 * port stays INIT with LID 0 and a warning says what to check.
 */
#ifndef SIB_MGMT_PORT_UP_H
#define SIB_MGMT_PORT_UP_H

#include <stdbool.h>
#include <stdint.h>

struct sib_node;

#define SIB_PORT_SM_PROBE_NS (300ull * 1000000ull)
#define SIB_PORT_SM_SILENCE_NS (8000ull * 1000000ull)
/* One silence rule: a port gives up waiting for ACTIVE after the silence
 * that tells an ACTIVE port its SM is gone (a loaded make test starved an
 * ASan SM serving four MPI ranks for more than 4 s). */
#define SIB_PORT_BRINGUP_NS SIB_PORT_SM_SILENCE_NS
#define SIB_PORT_BRINGUP_MAX_NS (60000ull * 1000000ull)

struct sib_port_mgmt;
struct sib_endpoint;
struct ib_notice_bad_m_key;

/* SOFTIB_SM: "none", or ADDR[:PORT] entries separated by commas.  0, or
 * -EINVAL when an entry is bad (the good ones are kept; none: the default). */
int sib_port_sm_config(struct sib_port_mgmt *pm, const char *sm);
/* Which configured SM address `from` is, or -1 (lock held). */
int sib_port_sm_addr_index(const struct sib_port_mgmt *pm, const struct sib_endpoint *from);

/* For the SMA (sma.c): an SMP request from `from` passed the M_Key check;
 * keyed: it carried the port's M_Key (not 0). */
void sib_port_sm_smp_seen(struct sib_node *node, unsigned port_num,
			  const struct sib_endpoint *from, bool keyed);
/* Asks every configured SM address no SMInfo query is out to (the trap
 * timer does, while no SM verified itself or ours went silent). */
void sib_port_sm_probe(struct sib_node *node, unsigned port_num);
/* Trap 256, bad M_Key, to the verified SM (none: not sent). */
void sib_port_trap_bad_m_key(struct sib_node *node, unsigned port_num,
			     const struct ib_notice_bad_m_key *d);
/* Trap 257 (IBA 10.9.4: a port that drops a packet for its P_Key tells
 * the SM), at most one a second, to the verified SM only. */
struct ib_notice_bad_key;
void sib_port_trap_bad_p_key(struct sib_node *node, unsigned port_num,
			     const struct ib_notice_bad_key *d);

/* Registers bring-up's sends with the node's MAD layer (QP0, after the
 * SMA: sma.c). */
int sib_port_up_register(struct sib_node *node);
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

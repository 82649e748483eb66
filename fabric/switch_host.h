/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What softib-switch does: host the switches of a topology behind one
 * link (one UDP socket), with a slot for every CA cabled to them.
 *
 * The rule, in one sentence: one thread reads the link, and carries each
 * packet that arrives from an attached port through the hosted switches,
 * hop by hop (fabric/switch.h), until it leaves for an attached port or is
 * dropped; nothing waits, so nothing is queued.  A port attaches with a
 * cable packet (wire/cable.h) naming the CA it is; a packet from an
 * endpoint that attached to no slot is dropped and counted: the cable is
 * the source check.  A slot whose port is silent for SIB_CABLE_DEAD_MS is
 * detached and its switch port goes down.  Cables between hosted switches
 * are always up; a cable to a switch this process does not host stays
 * down (links between switch processes are not there yet).
 */
#ifndef SIB_FABRIC_SWITCH_HOST_H
#define SIB_FABRIC_SWITCH_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/switch.h"
#include "fabric/topology.h"
#include "link/link.h"
#include "wire/cable.h"

struct sib_switch_slot {
	int node;	   /* the CA in the topology */
	unsigned ca_port;  /* its port on this cable */
	int sw;		   /* the hosted switch at the other end, and its port */
	unsigned sw_port;
	bool attached;
	struct sib_endpoint ep;
	uint64_t last_seen_ns;
	uint64_t detached_ns; /* when it said goodbye (0: it did not) */
};

struct sib_switch_host_counters {
	uint64_t attached, detached, refused, dead; /* dead: silent too long */
	uint64_t rx_unattached;	/* packets from no attached port */
	uint64_t rx_late;	/* from a port in the SIB_CABLE_DEAD_MS after its goodbye */
	uint64_t rx_malformed;	/* not a packet the decoder takes (LRH, CRCs ...) */
	uint64_t rx_cable_bad;	/* cable packets that made no sense */
	uint64_t forwarded;	/* packets sent to a port */
	uint64_t hop_limit;	/* carried through more than 64 hosted switches */
	uint64_t rx_cut;	/* packets from a CA whose cable is cut */
};

struct sib_switch_host {
	struct sib_topo topo;
	struct sib_switch *sw;
	unsigned nsw;
	int *sw_of; /* topology node -> hosted switch index, -1 */
	struct sib_switch_slot *slot;
	unsigned nslots;
	struct sib_link *link;
	enum sib_data_mode mode;
	struct sib_switch_host_counters c;
};

/*
 * Host the switches named in `only` (comma-separated node ids; NULL: every
 * switch of the topology) of `topo`, which the host takes over.  0, or -1
 * with err saying why.
 */
int sib_switch_host_init(struct sib_switch_host *h, struct sib_topo *topo, const char *only,
			 enum sib_data_mode mode, struct sib_link *link, char *err, size_t errlen);
void sib_switch_host_free(struct sib_switch_host *h);

/* The link's receive function (sib_link_rx_fn): arg is the host. */
void sib_switch_host_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from);

/* Detach the slots whose ports went silent, and send the traps that are
 * due (sib_switch_trap); call at least once a second. */
void sib_switch_host_tick(struct sib_switch_host *h, uint64_t now_ns);

/*
 * The control channel (softib fabric, softib info --switch; a counters
 * socket: this user only).  "show": every hosted switch's ports, LFT and
 * drops; "unlink SWITCH PORT" cuts that cable, both ends DOWN (a CA
 * behind it stays attached, its packets dropped, as a pulled cable);
 * "relink SWITCH PORT" puts it back.  The answer, into buf; its length.
 */
size_t sib_switch_host_command(void *arg, const char *line, char *buf, size_t len);

/* The current time the host uses (CLOCK_MONOTONIC, ns). */
uint64_t sib_switch_host_now(void);

#endif

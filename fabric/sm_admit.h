/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What softib-sm takes in, and how much from whom (softib-sm(8), "Under
 * flood").  Two rules:
 *
 * - One pass of the SM reads at most SIB_SM_RX_BUDGET datagrams; its
 *   timers, resends and sends run between passes, so a flood slows the SM
 *   by one budget a pass and never stops it (sm.c, sib_sm_step).
 * - One UDP endpoint gets at most SIB_SM_SOURCE_RATE MADs a second
 *   through, in bursts of up to SIB_SM_SOURCE_BURST; the rest are dropped
 *   before they are parsed and counted in over_rate.  Every port has an
 *   endpoint of its own, so a port that floods the SM spends its own share
 *   and no other port's: a new port still comes up and the SA still
 *   answers the others.
 *
 * The SM tracks SIB_SM_SOURCES endpoints (a fixed table: a stranger makes
 * it allocate nothing); a new source takes the slot of the longest idle
 * one nearby.  Many sockets are many sources: what one process with
 * thousands of sockets can do is not bounded here (softib-subnet(7), What softib's
 * security does not cover).
 */
#ifndef SIB_FABRIC_SM_ADMIT_H
#define SIB_FABRIC_SM_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"

#define SIB_SM_RX_BUDGET 256
#define SIB_SM_SOURCE_RATE 2000 /* MADs a second from one endpoint */
#define SIB_SM_SOURCE_BURST 2000
#define SIB_SM_SOURCES 512
#define SIB_SM_SOURCE_PROBE 8

struct sib_sm_source {
	struct sib_endpoint ep;
	/* When the source's bucket is full again (GCRA's theoretical arrival
	 * time); 0: the slot is free. */
	uint64_t full_ns;
};

struct sib_sm_admit {
	struct sib_sm_source slot[SIB_SM_SOURCES];
	uint64_t over_rate; /* MADs dropped: their source was over its rate */
	uint64_t evicted;   /* sources forgotten for a new one while still in debt */
};

/* Whether a datagram from `from` at now_ns is taken (true) or dropped and
 * counted (false). */
bool sib_sm_admit(struct sib_sm_admit *ad, const struct sib_endpoint *from, uint64_t now_ns);

#endif

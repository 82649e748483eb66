/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the subnet manager writes into a discovered fabric, in the order
 * OpenSM writes it (IBA 14.4.2): the LID (and MasterSMLID) of every CA
 * port and switch port 0 that does not have it yet (PortInfo), the routes (LinearForwardingTable blocks that differ
 * from what the switch holds, then SwitchInfo.LinearFDBTop, which also
 * clears PortStateChange), and the links' ports to Armed, then all of
 * them to Active (IBA 7.2: a link carries data once both ends are Active).
 *
 * No I/O: the plan is a list of SubnSet SMPs along directed routes; the
 * caller sends them in order and feeds failures back to a new sweep.  The
 * SM's own port (discovery's node 0, whose PortInfo it never asks for)
 * it sets itself.
 */
#ifndef SIB_FABRIC_SM_CONFIGURE_H
#define SIB_FABRIC_SM_CONFIGURE_H

#include <stdint.h>

#include "fabric/routing.h"
#include "fabric/sm_discover.h"

struct sib_cfg_set {
	uint8_t path[IB_SMP_MAX_HOPS + 1]; /* InitialPath[1..hops] */
	unsigned hops;
	uint16_t attr;
	uint32_t mod;
	uint8_t data[IB_SMP_DATA_BYTES];
};

/* What the SM keeps between sweeps: each switch's LFT as last written,
 * by NodeGUID, so a sweep writes only blocks that change. */
struct sib_cfg_state {
	unsigned n, cap;
	struct sib_cfg_lft {
		uint64_t guid;
		uint16_t top; /* LinearFDBTop written */
		uint8_t *lft; /* [0..top] */
	} *sw;
};

struct sib_cfg_counts {
	unsigned lid_sets, lft_sets, switch_info_sets, arm_sets, activate_sets;
	unsigned unrouted; /* (switch, LID) pairs with no route that need one */
};

/*
 * The plan for discovery `d`, with lids[i] the LID of node i's port (a
 * CA's port it was found by; a switch's port 0), 0 for none; sm_lid is
 * MasterSMLID.  *sets (malloc'ed, the caller frees) gets *nsets entries;
 * `st` is updated as if every Set succeeds.  0, -ENOMEM or -EINVAL.
 */
int sib_cfg_plan(const struct sib_disc *d, const uint16_t *lids, uint16_t sm_lid,
		 enum sib_rt_engine engine, struct sib_cfg_state *st, struct sib_cfg_set **sets,
		 unsigned *nsets, struct sib_cfg_counts *counts);

void sib_cfg_state_free(struct sib_cfg_state *st);

#endif

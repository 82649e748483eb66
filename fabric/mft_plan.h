/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The multicast forwarding tables of a discovered fabric (IBA 14.2.5.12,
 * 18.2.4.3.2): for each multicast group, the SubnSet(MulticastForwarding-
 * Table) blocks that make its MLID reach every member.
 *
 * A group's packets follow one tree: breadth first from the switch of its
 * first member, over the cables between switches the sweep found, pruned
 * to the branches that lead to members.  Each switch on the tree gets the
 * ports of its tree cables and of its members that receive (FullMember,
 * NonMember; a SendOnly member's switch is on the tree, so that what it
 * sends reaches the rest, but its own port gets nothing).  A switch sends
 * a multicast packet out of every port of the entry but the one it came in
 * by, so along a tree every member gets one copy.
 *
 * What each switch holds is kept between plans (struct sib_mft_state):
 * only blocks that change are written, as with the LFTs (sm_configure.h).
 */
#ifndef SIB_FABRIC_MFT_PLAN_H
#define SIB_FABRIC_MFT_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/sm_configure.h"
#include "fabric/sm_discover.h"

enum {
	SIB_MFT_MLID_BASE = 0xc000,
	SIB_MFT_MLIDS = 1024, /* 0xc000..0xc3ff: the SA's groups (sa_mcast.h) */
};

struct sib_mft_member {
	uint64_t port_guid;
	bool receives; /* FullMember or NonMember (SendOnly: false) */
};

struct sib_mft_group {
	uint16_t mlid;
	const struct sib_mft_member *m;
	unsigned n;
};

struct sib_mft_state {
	unsigned n, cap;
	struct sib_mft_switch {
		uint64_t guid;
		unsigned positions;
		uint16_t *mask; /* [(mlid - base) * positions + position] */
	} *sw;
};

/*
 * The Sets (malloc'd into *sets, *nsets of them; NULL and 0 when none) that
 * bring every switch of d from what st says it holds to the groups' trees;
 * st then holds the result.  Groups whose MLID is out of range, and members
 * the sweep did not find, are left out.  0 or -ENOMEM.
 */
int sib_mft_plan(const struct sib_disc *d, const struct sib_mft_group *g, unsigned ng,
		 struct sib_mft_state *st, struct sib_cfg_set **sets, unsigned *nsets);

void sib_mft_state_free(struct sib_mft_state *st);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Routing engines: the linear forwarding table of every switch, from the
 * switches, their cables and where each LID lives (IBA 18.2.4.3; what an
 * SM computes after discovery).  Pure computation on a fabric described
 * below, so that softib-sm and the tests run the same engines.
 *
 * minhop: every switch forwards each LID on a shortest path, and among
 * equally short ports takes the one that carries the fewest LIDs so far
 * (OpenSM's default engine does the same).
 *
 * updn: up-then-down routing (Schroeder et al., Autonet; the IBA modelling
 * seed's engine; OpenSM's -R updn).  A breadth-first search from the root
 * switches gives every switch a level; a cable points "up" toward the
 * lower level (at equal levels, toward the lower GUID), so the up
 * direction has no cycle.  A route is any number of up hops, then any
 * number of down hops, never up after down: the channels routes hold
 * cannot wait on each other in a cycle, so credit-based flow control
 * never deadlocks.  Each switch takes the shortest such route: straight
 * down when the destination lies below it, else up to the nearest switch
 * from which it does.  Without a root given, the roots are the switches
 * nearest to every switch with a CA (the smallest greatest distance, all
 * that tie): the spines of a fat tree, the centre of an irregular fabric.
 * With several roots, a root may have no legal route to another root's
 * own LID (down, then up): such entries stay SIB_RT_NONE.  Switches send
 * nothing but answers to an SM at a CA, so nothing needs them.
 */
#ifndef SIB_FABRIC_ROUTING_H
#define SIB_FABRIC_ROUTING_H

#include <stdint.h>

enum { SIB_RT_NONE = 0xff }; /* no port: the LID is not reachable from here */

struct sib_rt_switch {
	uint64_t guid;
	unsigned nports;
	int *peer;	     /* [1..nports]: switch index of the far end, -1: none or a CA */
	uint8_t *peer_port;  /* [1..nports] */
};

/* Where a LID lives: behind port `port` of switch `sw` (a CA's port), or
 * at the switch itself (port 0: its management port). */
struct sib_rt_dest {
	uint16_t lid;
	int sw;
	uint8_t port;
};

struct sib_rt_fabric {
	unsigned nsw;
	struct sib_rt_switch *sw;
	unsigned ndest;
	const struct sib_rt_dest *dest;
	uint16_t max_lid; /* every dest's LID is at most this */
};

enum sib_rt_engine { SIB_RT_MINHOP, SIB_RT_UPDN };

/*
 * Fill lft[s][lid] (0..max_lid) for every switch s: the output port, 0 for
 * the switch's own LID, SIB_RT_NONE where there is no route.  updn's one
 * root is `root` (a switch index), or when root < 0 the roots
 * sib_route_updn_roots() names.  0, or -ENOMEM / -EINVAL (a dest names no
 * switch or port, root is no switch).
 */
int sib_route(const struct sib_rt_fabric *f, enum sib_rt_engine engine, int root, uint8_t **lft);

/* The roots updn takes by itself, into roots[0..nsw): how many, or -ENOMEM. */
int sib_route_updn_roots(const struct sib_rt_fabric *f, int *roots);

/* "minhop", "updn"; -1 for another name. */
int sib_route_engine_parse(const char *name);
const char *sib_route_engine_name(enum sib_rt_engine e);

#endif

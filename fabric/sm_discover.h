/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * How the subnet manager finds the fabric (IBA 14.2.2, 14.4.1; the order
 * OpenSM follows): with directed-route SMPs from its own port, hop by hop.
 * NodeInfo at the end of each path says who is there and by which port
 * the SMP came in; a node not seen before gets its NodeDescription and
 * PortInfo (every port of a switch, with SwitchInfo), and every switch
 * port whose link is up leads one hop further.  A GUID seen again closes
 * a cable, not a new node.
 *
 * No I/O: the caller sends what sib_disc_next() asks, as a Get along the
 * path it gives, and hands back each answer (or its timeout).  Several may
 * be out at once.
 */
#ifndef SIB_FABRIC_SM_DISCOVER_H
#define SIB_FABRIC_SM_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/smp.h"

enum { SIB_DISC_MAX_NODES = 4096 };

struct sib_disc_port {
	int peer;	   /* node index of the far end, -1: nothing found there */
	uint8_t peer_port;
	bool have_pi;
	struct ib_port_info pi;
};

struct sib_disc_node {
	struct ib_node_info ni;	/* LocalPortNum: the port the first SMP came in by */
	char desc[IB_NODE_DESCRIPTION_BYTES + 1];
	bool have_si;
	struct ib_switch_info si;
	uint8_t path[IB_SMP_MAX_HOPS + 1]; /* InitialPath[1..hops] from the SM */
	unsigned hops;
	struct sib_disc_port *port; /* [0..NumPorts] */
};

/* One Get to send: along InitialPath path[1..hops], attribute and modifier;
 * `tag` goes back with the answer. */
struct sib_disc_smp {
	uint8_t path[IB_SMP_MAX_HOPS + 1];
	unsigned hops;
	uint16_t attr;
	uint32_t mod;
	uint32_t tag;
};

struct sib_disc_req;

struct sib_disc {
	struct sib_disc_node *node; /* [0] is the SM's own CA */
	unsigned nnodes, node_cap;
	struct sib_disc_req *req;   /* every Get asked for, by tag */
	unsigned nreq, req_cap, next_req, outstanding;
	unsigned smps, timeouts, dropped; /* dropped: answers that made no sense */
};

/*
 * Begin at the SM's own CA: its NodeInfo (LocalPortNum = the SM's port)
 * and description.  The first Gets go to the SM's own port and through it.
 * 0 or -ENOMEM.
 */
int sib_disc_start(struct sib_disc *d, const struct ib_node_info *self, const char *desc);
void sib_disc_free(struct sib_disc *d);

/* The next Get to send, false when none is waiting (then either all
 * answers are in, or some are still out). */
bool sib_disc_next(struct sib_disc *d, struct sib_disc_smp *smp);

/* The answer to Get `tag`: its DR SMP (GetResp), or NULL when it timed out
 * (the path leads nowhere: that port is not explored). */
void sib_disc_answer(struct sib_disc *d, uint32_t tag, const struct ib_dr_smp *resp);

/* Nothing waiting and nothing out. */
bool sib_disc_done(const struct sib_disc *d);

/* The node with this NodeGUID, or -1. */
int sib_disc_find(const struct sib_disc *d, uint64_t guid);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * topo_compare TOPOLOGY DISCOVERED: does what ibnetdiscover printed
 * (DISCOVERED, a netfile too) equal the topology file softib-switch
 * hosts?  Nodes are matched by node GUID (the topology's own, or the one
 * softib gives a node that names none, as the switch does), then every
 * cable is compared both ways.  Every switch must have been found, and its
 * type and port count must agree; a CA that no program attached is not
 * on the fabric, so its cables are compared only when it was found.
 * Prints one line per difference and a summary "equal: N switches, M CAs,
 * K cables"; exit 0 when equal, 1 when not, 2 when a file does not load.
 */
#include <inttypes.h>
#include <stdio.h>

#include "fabric/topology.h"

static int by_guid(const struct sib_topo *t, uint64_t guid)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		if (t->node[i].node_guid == guid)
			return (int)i;
	return -1;
}

/* Cables of node a in x that y lacks (or has elsewhere); counts them. */
static unsigned cables_missing(const struct sib_topo *x, const struct sib_topo *y, const char *xname,
			       const char *yname, unsigned *matched)
{
	unsigned bad = 0;

	for (unsigned i = 0; i < x->nnodes; i++) {
		const struct sib_topo_node *n = &x->node[i];
		int j = by_guid(y, n->node_guid);

		if (j < 0)
			continue;
		for (unsigned p = 1; p <= n->nports; p++) {
			const struct sib_topo_link *l = &n->port[p];
			const struct sib_topo_node *m = &y->node[j];
			const struct sib_topo_link *k;
			int peer_in_y;

			if (l->peer < 0)
				continue;
			peer_in_y = by_guid(y, x->node[l->peer].node_guid);
			if (peer_in_y < 0)
				continue; /* a CA nobody attached (the caller judges nodes) */
			k = p <= m->nports ? &m->port[p] : NULL;
			if (!k || k->peer != peer_in_y || k->peer_port != l->peer_port) {
				printf("cable %s[%u] -> %s[%u] of %s is not in %s\n", n->id, p,
				       x->node[l->peer].id, l->peer_port, xname, yname);
				bad++;
			} else if (matched) {
				(*matched)++;
			}
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct sib_topo t, d;
	char err[256];
	unsigned bad = 0, nsw = 0, nca = 0, cables = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: topo_compare TOPOLOGY DISCOVERED\n");
		return 2;
	}
	if (sib_topo_load(&t, argv[1], err, sizeof(err)) ||
	    sib_topo_load(&d, argv[2], err, sizeof(err))) {
		fprintf(stderr, "topo_compare: %s\n", err);
		return 2;
	}
	for (unsigned i = 0; i < d.nnodes; i++) {
		const struct sib_topo_node *n = &d.node[i];
		int j = by_guid(&t, n->node_guid);

		if (j < 0) {
			printf("node %s (GUID 0x%016" PRIx64 ") is not in the topology\n", n->id,
			       n->node_guid);
			bad++;
		} else if (t.node[j].type != n->type || t.node[j].nports != n->nports) {
			printf("node %s: type %d with %u ports, the topology's %s type %d with %u\n",
			       n->id, n->type, n->nports, t.node[j].id, t.node[j].type,
			       t.node[j].nports);
			bad++;
		} else {
			nsw += n->type == SIB_TOPO_SWITCH;
			nca += n->type == SIB_TOPO_CA;
		}
	}
	for (unsigned i = 0; i < t.nnodes; i++)
		if (t.node[i].type == SIB_TOPO_SWITCH && by_guid(&d, t.node[i].node_guid) < 0) {
			printf("switch %s (GUID 0x%016" PRIx64 ") was not discovered\n", t.node[i].id,
			       t.node[i].node_guid);
			bad++;
		}
	bad += cables_missing(&t, &d, "the topology", "what was discovered", &cables);
	bad += cables_missing(&d, &t, "what was discovered", "the topology", NULL);
	sib_topo_free(&t);
	sib_topo_free(&d);
	if (bad) {
		printf("different: %u differences\n", bad);
		return 1;
	}
	/* each cable was seen from both of its ends */
	printf("equal: %u switches, %u CAs, %u cables\n", nsw, nca, cables / 2);
	return 0;
}

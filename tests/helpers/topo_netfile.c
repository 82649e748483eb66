/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * topo_netfile TOPOLOGY: the topology file as an ibsim netfile with every
 * node's GUID written out (switchguid=, caguid=: the GUIDs softib-switch
 * gives the nodes that name none), so that ibsim's fabric and softib's
 * have the same GUIDs and OpenSM numbers them alike
 * (test_ibsim_oracle.sh).  Exit 2 when the file does not load.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "fabric/topology.h"

int main(int argc, char **argv)
{
	struct sib_topo t;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: topo_netfile TOPOLOGY\n");
		return 2;
	}
	if (sib_topo_load(&t, argv[1], err, sizeof(err))) {
		fprintf(stderr, "topo_netfile: %s\n", err);
		return 2;
	}
	for (unsigned i = 0; i < t.nnodes; i++) {
		const struct sib_topo_node *n = &t.node[i];
		bool sw = n->type == SIB_TOPO_SWITCH;

		printf("%s=0x%016" PRIx64 "\n%s\t%u \"%s\"\t# \"%s\"\n", sw ? "switchguid" : "caguid",
		       n->node_guid, sw ? "Switch" : "Hca", n->nports, n->id, n->desc);
		for (unsigned p = 1; p <= n->nports; p++) {
			const struct sib_topo_link *l = &n->port[p];

			if (l->peer >= 0)
				printf("[%u]\t\"%s\"[%u]\n", p, t.node[l->peer].id, l->peer_port);
		}
		printf("\n");
	}
	sib_topo_free(&t);
	return 0;
}

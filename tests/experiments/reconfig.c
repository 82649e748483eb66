/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * reconfig FILE...: what softib-sm's discovery and configuration cost on
 * each topology (the IBA modelling seed's Figs. 26 and 27): the SMPs of a
 * full discovery from the first CA, the time each routing engine takes,
 * and the LinearForwardingTable SubnSets of a first configuration, beside
 * OpenSM's count for the same fabric (one Set per 64-LID block per switch,
 * osm_ucast_mgr.c).  The SMPs are answered from the topology itself, so
 * the counts are the SM's and the times are computation only: the time to
 * detect a change and the packets lost need HCAs on softib-switch.
 *
 * One line per file: switches hosts nodes discovery_smps minhop_us updn_us
 * lft_sets opensm_lft_sets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/sm_configure.h"
#include "fabric/sm_discover.h"
#include "fabric/topology.h"

/* The node at the end of a directed route from CA `from`, and the port
 * the SMP came in by; -1 when the path leads nowhere. */
static int walk(const struct sib_topo *t, int from, const uint8_t *path, unsigned hops,
		unsigned *in_port)
{
	int at = from;

	for (unsigned i = 1; i <= hops; i++) {
		const struct sib_topo_node *n = &t->node[at];
		unsigned p = path[i];

		if ((i > 1 && n->type != SIB_TOPO_SWITCH) || p == 0 || p > n->nports ||
		    n->port[p].peer < 0)
			return -1;
		*in_port = n->port[p].peer_port;
		at = n->port[p].peer;
	}
	return at;
}

/* The answer the node at the end of the path gives (what fabric/switch.c
 * and an HCA's agent answer), or false when nothing answers. */
static bool answer(const struct sib_topo *t, int sm, const struct sib_disc_smp *q,
		   struct ib_dr_smp *r)
{
	unsigned in = 0;
	int at = walk(t, sm, q->path, q->hops, &in);
	const struct sib_topo_node *n;

	if (at < 0)
		return false;
	n = &t->node[at];
	memset(r, 0, sizeof(*r));
	r->AttributeID = q->attr;
	switch (q->attr) {
	case IB_SMP_ATTR_NODE_INFO: {
		struct ib_node_info ni = {
			.BaseVersion = 1,
			.ClassVersion = 1,
			.NodeType = (uint8_t)n->type,
			.NumPorts = (uint8_t)n->nports,
			.SystemImageGUID = n->sys_image_guid,
			.NodeGUID = n->node_guid,
			.PortGUID = sib_topo_port_guid(n, in),
			.LocalPortNum = (uint8_t)in,
		};
		ib_node_info_encode(&ni, r->SMPData);
		break;
	}
	case IB_SMP_ATTR_NODE_DESCRIPTION:
		memcpy(r->SMPData, n->desc, strlen(n->desc));
		break;
	case IB_SMP_ATTR_SWITCH_INFO: {
		struct ib_switch_info si = { .LinearFDBCap = 0xc000, .MulticastFDBCap = 1024 };

		ib_switch_info_encode(&si, r->SMPData);
		break;
	}
	case IB_SMP_ATTR_PORT_INFO: {
		struct ib_port_info pi = { .LocalPortNum = (uint8_t)in };

		if (q->mod > n->nports)
			return false;
		pi.PortState = q->mod == 0 || n->port[q->mod].peer >= 0 ? IB_PORT_STATE_INIT
								       : IB_PORT_STATE_DOWN;
		ib_port_info_encode(&pi, r->SMPData);
		break;
	}
	}
	return true;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The time of one configuration plan (routing included), the best of 5. */
static double plan_us(const struct sib_disc *d, const uint16_t *lids, enum sib_rt_engine e,
		      unsigned *lft_sets)
{
	double best = 1e30;

	for (int i = 0; i < 5; i++) {
		struct sib_cfg_state st = { 0 };
		struct sib_cfg_counts c;
		struct sib_cfg_set *sets;
		unsigned n;
		double t0 = now_us(), t;

		if (sib_cfg_plan(d, lids, lids[0], e, &st, &sets, &n, &c)) {
			fprintf(stderr, "reconfig: no plan\n");
			exit(1);
		}
		t = now_us() - t0;
		best = t < best ? t : best;
		*lft_sets = c.lft_sets;
		free(sets);
		sib_cfg_state_free(&st);
	}
	return best;
}

int main(int argc, char **argv)
{
	for (int f = 1; f < argc; f++) {
		struct sib_topo t;
		struct sib_disc d;
		struct sib_disc_smp q;
		struct ib_dr_smp r;
		char err[300];
		int sm = -1;
		unsigned nsw = 0, nca = 0, lft_minhop, lft_updn, opensm = 0;
		uint16_t *lids;
		double minhop, updn;

		if (sib_topo_load(&t, argv[f], err, sizeof(err))) {
			fprintf(stderr, "reconfig: %s\n", err);
			return 1;
		}
		for (unsigned i = 0; i < t.nnodes; i++) {
			nsw += t.node[i].type == SIB_TOPO_SWITCH;
			nca += t.node[i].type == SIB_TOPO_CA;
			if (sm < 0 && t.node[i].type == SIB_TOPO_CA)
				sm = (int)i;
		}
		if (sm < 0) {
			fprintf(stderr, "reconfig: %s has no CA for the SM\n", argv[f]);
			return 1;
		}
		{
			struct ib_node_info self = {
				.NodeType = IB_NODE_TYPE_CA,
				.NumPorts = (uint8_t)t.node[sm].nports,
				.NodeGUID = t.node[sm].node_guid,
				.LocalPortNum = 1,
			};

			if (sib_disc_start(&d, &self, t.node[sm].desc))
				return 1;
		}
		while (sib_disc_next(&d, &q))
			sib_disc_answer(&d, q.tag, answer(&t, sm, &q, &r) ? &r : NULL);
		lids = calloc(d.nnodes, sizeof(*lids));
		for (unsigned i = 0; i < d.nnodes; i++)
			lids[i] = (uint16_t)(i + 1);
		minhop = plan_us(&d, lids, SIB_RT_MINHOP, &lft_minhop);
		updn = plan_us(&d, lids, SIB_RT_UPDN, &lft_updn);
		for (unsigned i = 0; i < d.nnodes; i++)
			if (d.node[i].ni.NodeType == IB_NODE_TYPE_SWITCH)
				opensm += d.nnodes / 64 + 1; /* the top LID is d.nnodes */
		printf("%u %u %u %u %.0f %.0f %u %u\n", nsw, nca, d.nnodes, d.smps, minhop, updn,
		       lft_updn, opensm);
		free(lids);
		sib_disc_free(&d);
		sib_topo_free(&t);
	}
	return 0;
}

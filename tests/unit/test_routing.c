/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The routing engines (fabric/routing.h) on the fabrics of tests/fabric/:
 * every CA reaches every LID by following the tables; minhop's routes are
 * shortest; updn's never climb after descending, and the channels its
 * routes hold form no cycle (no credit deadlock), which minhop cannot
 * promise on the irregular fabric; routes spread over parallel links; a
 * cut cable is routed around.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/routing.c"
#include "fabric/topology.c"

struct net {
	struct sib_topo topo;
	struct sib_rt_fabric f;
	struct sib_rt_switch sw[64];
	struct sib_rt_dest dest[128];
	int sw_index[128]; /* topology node -> switch index, -1 for a CA */
	int ca_lid[128];   /* topology node -> LID of its port 1 */
	uint8_t *lft[64];
};

static void load(struct net *n, const char *file)
{
	const char *top = getenv("SOFTIB_TOP");
	char path[512], err[256];
	unsigned nd = 0;

	memset(n, 0, sizeof(*n));
	snprintf(path, sizeof(path), "%s/tests/fabric/%s", top ? top : ".", file);
	if (sib_topo_load(&n->topo, path, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < n->topo.nnodes; i++) {
		n->sw_index[i] = -1;
		if (n->topo.node[i].type == SIB_TOPO_SWITCH)
			n->sw_index[i] = (int)n->f.nsw++;
	}
	for (unsigned i = 0; i < n->topo.nnodes; i++) {
		const struct sib_topo_node *t = &n->topo.node[i];
		int s = n->sw_index[i];
		struct sib_rt_switch *sw;

		if (s < 0)
			continue;
		sw = &n->sw[s];
		sw->guid = t->node_guid;
		sw->nports = t->nports;
		sw->peer = calloc(t->nports + 1, sizeof(int));
		sw->peer_port = calloc(t->nports + 1, 1);
		for (unsigned p = 0; p <= t->nports; p++) {
			int peer = t->port[p].peer;

			sw->peer[p] = peer >= 0 ? n->sw_index[peer] : -1;
			sw->peer_port[p] = t->port[p].peer_port;
			if (peer >= 0 && n->sw_index[peer] < 0) { /* a CA: LIDs 1.. in file order */
				n->dest[nd].sw = s;
				n->dest[nd].port = (uint8_t)p;
				nd++;
			}
		}
	}
	/* CAs first, then one LID per switch, at its port 0 */
	for (unsigned i = 0; i < nd; i++)
		n->dest[i].lid = (uint16_t)(i + 1);
	for (unsigned s = 0; s < n->f.nsw; s++) {
		n->dest[nd].sw = (int)s;
		n->dest[nd].port = 0;
		n->dest[nd].lid = (uint16_t)(nd + 1);
		nd++;
	}
	n->f.sw = n->sw;
	n->f.dest = n->dest;
	n->f.ndest = nd;
	n->f.max_lid = (uint16_t)nd;
	for (unsigned s = 0; s < n->f.nsw; s++)
		n->lft[s] = malloc(n->f.max_lid + 1u);
}

static void unload(struct net *n)
{
	for (unsigned s = 0; s < n->f.nsw; s++) {
		free(n->sw[s].peer);
		free(n->sw[s].peer_port);
		free(n->lft[s]);
	}
	sib_topo_free(&n->topo);
}

/* The channel dependency graph (Dally and Seitz): a channel is a
 * switch's output port, numbered on first use; a route that holds channel
 * a and asks for b makes an edge a -> b. */
enum { MAX_CH = 512 };
static int chan_id[64 * 256], nchan;
static bool adj[MAX_CH][MAX_CH];
static int color[MAX_CH];

static int channel(int sw, unsigned port)
{
	int *c = &chan_id[sw * 256 + (int)port];

	if (*c < 0) {
		assert_true(nchan < MAX_CH);
		*c = nchan++;
	}
	return *c;
}

static bool cyclic_from(int c)
{
	color[c] = 1;
	for (int d = 0; d < nchan; d++)
		if (adj[c][d] && (color[d] == 1 || (color[d] == 0 && cyclic_from(d))))
			return true;
	color[c] = 2;
	return false;
}

static bool has_ca(const struct net *n, int sw)
{
	for (unsigned i = 0; i < n->f.ndest; i++)
		if (n->dest[i].sw == sw && n->dest[i].port)
			return true;
	return false;
}

/* Follow the tables from every switch to every LID; returns true when the
 * channels the routes hold form a cycle. */
static bool walk_all(struct net *n, enum sib_rt_engine e, int root)
{
	const struct sib_rt_fabric *f = &n->f;
	int *dist = malloc(f->nsw * sizeof(int)), *queue = malloc(f->nsw * sizeof(int));
	struct run lv = { .f = f, .level = malloc(f->nsw * sizeof(int)) };
	int roots[64], nroots = root >= 0 ? 1 : sib_route_updn_roots(f, roots);
	bool cycle = false;

	memset(chan_id, 0xff, sizeof(chan_id));
	memset(adj, 0, sizeof(adj));
	nchan = 0;
	if (root >= 0)
		roots[0] = root;
	if (e == SIB_RT_UPDN)
		bfs_from(f, roots, (unsigned)nroots, lv.level, queue);
	for (unsigned s = 0; s < f->nsw; s++)
		for (unsigned i = 0; i < f->ndest; i++) {
			const struct sib_rt_dest *d = &f->dest[i];
			int at = (int)s, hops = 0, prev_channel = -1;
			bool went_down = false;

			/* switches without CAs originate nothing but answers to
			 * the SM, at a CA: with several updn roots, one root may
			 * have no legal route to another's LID (nor needs one) */
			if (n->lft[s][d->lid] == SIB_RT_NONE && e == SIB_RT_UPDN && !d->port &&
			    !has_ca(n, (int)s))
				continue;
			bfs(f, (int)s, dist, queue);
			while (at != d->sw) {
				unsigned p = n->lft[at][d->lid];
				int next;

				if (p == SIB_RT_NONE || p == 0 || p > f->sw[at].nports)
					fail_msg("switch %u has no route to LID %u (at %d: %u)", s, d->lid,
						 at, p);
				next = f->sw[at].peer[p];
				if (next < 0)
					fail_msg("LID %u: switch %d port %u leads to no switch", d->lid, at,
						 p);
				if (e == SIB_RT_UPDN) {
					bool is_up = up(&lv, at, next);

					if (is_up && went_down)
						fail_msg("updn: LID %u from switch %u climbs after "
							 "descending, at switch %d", d->lid, s, at);
					went_down |= !is_up;
				}
				if (prev_channel >= 0)
					adj[prev_channel][channel(at, p)] = true;
				prev_channel = channel(at, p);
				at = next;
				if (++hops > (int)f->nsw)
					fail_msg("LID %u from switch %u goes round in circles", d->lid, s);
			}
			if (n->lft[at][d->lid] != d->port)
				fail_msg("LID %u: its own switch sends it out %u, not %u", d->lid,
					 n->lft[at][d->lid], d->port);
			if (e == SIB_RT_MINHOP && hops != dist[d->sw])
				fail_msg("minhop: %d hops from %u to LID %u, shortest %d", hops, s,
					 d->lid, dist[d->sw]);
		}
	/* the channel dependency graph: a cycle is a possible deadlock */
	memset(color, 0, sizeof(color));
	for (int c = 0; c < nchan && !cycle; c++)
		if (!color[c])
			cycle = cyclic_from(c);
	free(dist);
	free(queue);
	free(lv.level);
	return cycle;
}

static void route(struct net *n, enum sib_rt_engine e, int root)
{
	assert_int_equal(sib_route(&n->f, e, root, n->lft), 0);
}

static void test_every_lid_reached_on_every_fabric(void **state)
{
	static const char *const files[] = { "one-switch-8.topo", "two-switches-2-links.topo",
					     "fat-tree-4x2.topo", "irregular-16x14.topo" };
	struct net *n = malloc(sizeof(*n));

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		load(n, files[i]);
		route(n, SIB_RT_MINHOP, -1);
		walk_all(n, SIB_RT_MINHOP, -1);
		route(n, SIB_RT_UPDN, -1);
		if (walk_all(n, SIB_RT_UPDN, -1))
			fail_msg("%s: updn's routes hold channels in a cycle", files[i]);
		unload(n);
	}
	free(n);
}

/* The reason updn exists: on the irregular fabric minhop's routes can wait
 * on each other in a cycle; updn's cannot, from any root. */
static void test_updn_is_deadlock_free_where_minhop_is_not(void **state)
{
	struct net *n = malloc(sizeof(*n));

	(void)state;
	load(n, "irregular-16x14.topo");
	route(n, SIB_RT_MINHOP, -1);
	assert_true(walk_all(n, SIB_RT_MINHOP, -1));
	for (int root = 0; root < (int)n->f.nsw; root++) {
		route(n, SIB_RT_UPDN, root);
		if (walk_all(n, SIB_RT_UPDN, root))
			fail_msg("updn from root %d holds channels in a cycle", root);
	}
	unload(n);
	free(n);
}

static void test_routes_spread_over_parallel_links(void **state)
{
	struct net *n = malloc(sizeof(*n));
	unsigned via[9] = { 0 };
	int leaf1 = -1;

	(void)state;
	load(n, "two-switches-2-links.topo");
	route(n, SIB_RT_MINHOP, -1);
	/* H3 and H4 (LIDs 3, 4) live on S2: S1 sends one out 7, one out 8 */
	assert_true((n->lft[0][3] == 7 && n->lft[0][4] == 8) ||
		    (n->lft[0][3] == 8 && n->lft[0][4] == 7));
	unload(n);

	load(n, "fat-tree-4x2.topo");
	for (unsigned i = 0; i < n->topo.nnodes; i++)
		if (!strcmp(n->topo.node[i].id, "leaf1"))
			leaf1 = n->sw_index[i];
	for (int e = SIB_RT_MINHOP; e <= SIB_RT_UPDN; e++) {
		route(n, (enum sib_rt_engine)e, -1);
		memset(via, 0, sizeof(via));
		for (unsigned i = 0; i < n->f.ndest; i++)
			if (n->dest[i].sw != leaf1)
				via[n->lft[leaf1][n->dest[i].lid]]++;
		/* 6 remote HCAs and 5 other switches' LIDs over two spines
		 * (updn's roots: both spines) */
		if (abs((int)via[7] - (int)via[8]) > 1)
			fail_msg("%s: leaf1 sends %u LIDs up port 7 and %u up port 8",
				 sib_route_engine_name((enum sib_rt_engine)e), via[7], via[8]);
	}
	unload(n);
	free(n);
}

static void test_a_cut_cable_is_routed_around(void **state)
{
	struct net *n = malloc(sizeof(*n));

	(void)state;
	load(n, "two-switches-2-links.topo");
	/* cut S1[7] - S2[7] */
	n->sw[0].peer[7] = -1;
	n->sw[1].peer[7] = -1;
	for (int e = SIB_RT_MINHOP; e <= SIB_RT_UPDN; e++) {
		route(n, (enum sib_rt_engine)e, -1);
		walk_all(n, (enum sib_rt_engine)e, 0);
		assert_int_equal(n->lft[0][3], 8);
		assert_int_equal(n->lft[0][4], 8);
	}
	/* and with both cut, S2's LIDs are unreachable from S1 */
	n->sw[0].peer[8] = -1;
	n->sw[1].peer[8] = -1;
	route(n, SIB_RT_MINHOP, -1);
	assert_int_equal(n->lft[0][3], SIB_RT_NONE);
	assert_int_equal(n->lft[0][1], 1);
	unload(n);
	free(n);
}

static void test_bad_input(void **state)
{
	struct net *n = malloc(sizeof(*n));
	struct sib_rt_dest bad;

	(void)state;
	load(n, "one-switch-8.topo");
	bad = n->dest[0];
	n->dest[0].port = 9; /* the switch has 8 ports */
	assert_int_equal(sib_route(&n->f, SIB_RT_MINHOP, -1, n->lft), -EINVAL);
	n->dest[0] = bad;
	assert_int_equal(sib_route(&n->f, SIB_RT_UPDN, 5, n->lft), -EINVAL); /* 1 switch */
	assert_int_equal(sib_route_engine_parse("updn"), SIB_RT_UPDN);
	assert_int_equal(sib_route_engine_parse("ftree"), -1);
	unload(n);
	free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_lid_reached_on_every_fabric),
		cmocka_unit_test(test_updn_is_deadlock_free_where_minhop_is_not),
		cmocka_unit_test(test_routes_spread_over_parallel_links),
		cmocka_unit_test(test_a_cut_cable_is_routed_around),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Fabric discovery by directed route (fabric/sm_discover.h) on the
 * fabrics of tests/fabric/, carried through the switch model: every node
 * and every cable of the topology file is found from one CA, with nothing
 * timed out or refused; a cable that is down is not crossed; a path that
 * leads nowhere costs a timeout, not the sweep.  Then the routes the
 * engines compute from what was found, written into the switches with
 * SubnSet SMPs, carry data between every two CAs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fabric/mft_plan.c"
#include "fabric/routing.c"
#include "fabric/sm_configure.c"
#include "fabric/sm_discover.c"
#include "fabric/switch.c"
#include "fabric/topology.c"

#include "fabric_world.h"

static struct world w;

/* Run a whole discovery from CA `sm`; every Get goes out and comes back
 * (or not) before the next. */
static void discover(struct sib_disc *d, int sm)
{
	const struct sib_topo_node *t = &w.topo.node[sm];
	struct ib_node_info self = {
		.BaseVersion = 1,
		.ClassVersion = 1,
		.NodeType = IB_NODE_TYPE_CA,
		.NumPorts = (uint8_t)t->nports,
		.NodeGUID = t->node_guid,
		.PortGUID = sib_topo_port_guid(t, 1),
		.LocalPortNum = 1,
	};
	struct sib_disc_smp smp;
	struct ib_dr_smp resp;

	assert_int_equal(sib_disc_start(d, &self, t->desc), 0);
	while (sib_disc_next(d, &smp)) {
		bool ok = world_dr(&w, sm, smp.path + 1, smp.hops, IB_MAD_METHOD_GET, smp.attr,
				   smp.mod, NULL, 0, &resp);

		sib_disc_answer(d, smp.tag, ok ? &resp : NULL);
	}
	assert_true(sib_disc_done(d));
}

/* What was found is the topology file, cable for cable. */
static void assert_found_everything(const struct sib_disc *d)
{
	assert_int_equal(d->nnodes, w.topo.nnodes);
	for (unsigned n = 0; n < w.topo.nnodes; n++) {
		const struct sib_topo_node *t = &w.topo.node[n];
		int i = sib_disc_find(d, t->node_guid);

		if (i < 0)
			fail_msg("%s was not found", t->id);
		assert_int_equal(d->node[i].ni.NodeType, t->type);
		assert_int_equal(d->node[i].ni.NumPorts, t->nports);
		assert_string_equal(d->node[i].desc, t->desc);
		assert_int_equal(d->node[i].have_si, t->type == SIB_TOPO_SWITCH);
		for (unsigned p = 1; p <= t->nports; p++) {
			const struct sib_topo_link *l = &t->port[p];
			const struct sib_disc_port *dp = &d->node[i].port[p];

			if (l->peer < 0) {
				assert_int_equal(dp->peer, -1);
				continue;
			}
			if (dp->peer < 0 ||
			    d->node[dp->peer].ni.NodeGUID != w.topo.node[l->peer].node_guid ||
			    dp->peer_port != l->peer_port)
				fail_msg("%s[%u]: found %d[%u], cabled to %s[%u]", t->id, p, dp->peer,
					 dp->peer_port, w.topo.node[l->peer].id, l->peer_port);
		}
	}
}

static void test_discovers_every_fabric(void **state)
{
	static const char *const files[] = { "one-switch-8.topo", "two-switches-2-links.topo",
					     "fat-tree-4x2.topo", "irregular-16x14.topo" };

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct sib_disc d;

		world_init(&w, files[f], NULL);
		discover(&d, world_node(&w, "H1"));
		assert_found_everything(&d);
		assert_int_equal(d.timeouts, 0);
		assert_int_equal(d.dropped, 0);
		print_message("%s: %u nodes in %u SMPs\n", files[f], d.nnodes, d.smps);
		sib_disc_free(&d);
		world_free(&w);
	}
}

/* A cable that is down is not crossed: what lies only behind it stays
 * unknown, and nothing waits on it. */
static void test_a_down_cable_is_not_crossed(void **state)
{
	struct sib_disc d;
	int s2;

	(void)state;
	world_init(&w, "two-switches-2-links.topo", NULL);
	s2 = world_node(&w, "S2");
	sib_switch_link(&w.sw[0], 7, false);
	sib_switch_link(&w.sw[w.sw_of[s2]], 7, false);
	sib_switch_link(&w.sw[0], 8, false);
	sib_switch_link(&w.sw[w.sw_of[s2]], 8, false);
	discover(&d, world_node(&w, "H1"));
	assert_int_equal(d.nnodes, 3); /* H1, S1, H2 */
	assert_int_equal(sib_disc_find(&d, w.topo.node[s2].node_guid), -1);
	assert_int_equal(d.timeouts, 0);
	sib_disc_free(&d);
	world_free(&w);
}

/* A switch port that says it is up but leads nowhere (the far end died):
 * its NodeInfo times out, and the rest is found all the same. */
static void test_a_dead_end_times_out(void **state)
{
	struct sib_disc d;
	int s2;

	(void)state;
	world_init(&w, "two-switches-2-links.topo", NULL);
	s2 = world_node(&w, "S2");
	w.topo.node[s2].port[2].peer = -1; /* S2[2] is up, and nothing answers behind it */
	discover(&d, world_node(&w, "H1"));
	assert_int_equal(d.nnodes, w.topo.nnodes - 1);
	assert_int_equal(d.timeouts, 1);
	sib_disc_free(&d);
	world_free(&w);
}

static void test_answers_that_make_no_sense(void **state)
{
	struct ib_node_info self = { .NodeType = IB_NODE_TYPE_CA, .NumPorts = 1,
				     .NodeGUID = 0x10, .LocalPortNum = 1 };
	struct sib_disc d;
	struct sib_disc_smp smp;
	struct ib_dr_smp resp;
	struct ib_node_info ni = { .NodeType = IB_NODE_TYPE_SWITCH, .NumPorts = 4,
				   .NodeGUID = 0x20, .LocalPortNum = 9 };

	(void)state;
	assert_int_equal(sib_disc_start(&d, &self, "sm"), 0);
	assert_true(sib_disc_next(&d, &smp));
	memset(&resp, 0, sizeof(resp));
	resp.AttributeID = IB_SMP_ATTR_NODE_INFO;
	ib_node_info_encode(&ni, resp.SMPData); /* came in by port 9 of 4 */
	sib_disc_answer(&d, smp.tag, &resp);
	assert_int_equal(d.dropped, 1);
	assert_int_equal(d.nnodes, 1);
	sib_disc_answer(&d, smp.tag, &resp); /* answered twice */
	sib_disc_answer(&d, 77, &resp);	     /* never asked */
	assert_int_equal(d.dropped, 3);
	assert_true(sib_disc_done(&d));
	sib_disc_free(&d);
	self.LocalPortNum = 2; /* the SM's port must be one it has */
	assert_int_equal(sib_disc_start(&d, &self, "sm"), -EINVAL);
}

/* LIDs by discovery order: the SM's CA 1, then everyone as found. */
static void assign_lids(const struct sib_disc *d, uint16_t *lids)
{
	for (unsigned i = 0; i < d->nnodes; i++)
		lids[i] = (uint16_t)(i + 1);
}

static struct sib_cfg_counts configure(struct sib_disc *d, const uint16_t *lids,
				       enum sib_rt_engine e, struct sib_cfg_state *st, int sm)
{
	struct sib_cfg_set *sets;
	struct sib_cfg_counts c;
	struct ib_dr_smp resp;
	unsigned n;

	assert_int_equal(sib_cfg_plan(d, lids, lids[0], e, st, &sets, &n, &c), 0);
	for (unsigned i = 0; i < n; i++) {
		if (!world_dr(&w, sm, sets[i].path + 1, sets[i].hops, IB_MAD_METHOD_SET,
			      sets[i].attr, sets[i].mod, sets[i].data, 0, &resp))
			fail_msg("Set %u of %u (attribute 0x%x) got no answer", i, n, sets[i].attr);
		if (resp.Status)
			fail_msg("Set %u (attribute 0x%x mod %u) answered status 0x%x", i,
				 sets[i].attr, sets[i].mod, resp.Status);
	}
	free(sets);
	return c;
}

/* Data from every CA to every other lands where its DLID lives. */
static void assert_all_pairs_carry(const struct sib_disc *d, const uint16_t *lids)
{
	for (unsigned a = 0; a < d->nnodes; a++)
		for (unsigned b = 0; b < d->nnodes; b++) {
			const struct sib_disc_node *na = &d->node[a], *nb = &d->node[b];
			int from = -1, to = -1;
			uint8_t pkt[IB_MAX_PACKET], payload[IB_MAD_BYTES] = { 0 };
			struct sib_mad_addr addr;
			size_t len;

			if (a == b || na->ni.NodeType != IB_NODE_TYPE_CA ||
			    nb->ni.NodeType != IB_NODE_TYPE_CA)
				continue;
			for (unsigned n = 0; n < w.topo.nnodes; n++) {
				if (w.topo.node[n].node_guid == na->ni.NodeGUID)
					from = (int)n;
				if (w.topo.node[n].node_guid == nb->ni.NodeGUID)
					to = (int)n;
			}
			sib_mad_addr_init(&addr, SIB_QP1, lids[b], lids[a]);
			len = sib_mgmt_build(&addr, payload, pkt, sizeof(pkt));
			if (world_carry(&w, from, 1, pkt, &len) != to)
				fail_msg("LID %u to LID %u (%s to %s) did not arrive", lids[a], lids[b],
					 w.topo.node[from].id, w.topo.node[to].id);
		}
}

static void test_configured_fabric_carries_data(void **state)
{
	static const char *const files[] = { "one-switch-8.topo", "two-switches-2-links.topo",
					     "fat-tree-4x2.topo", "irregular-16x14.topo" };

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		for (int e = SIB_RT_MINHOP; e <= SIB_RT_UPDN; e++) {
			struct sib_cfg_state st = { 0 };
			struct sib_cfg_counts c;
			struct sib_disc d;
			uint16_t lids[WORLD_MAX_NODES];
			int sm;

			world_init(&w, files[f], NULL);
			sm = world_node(&w, "H1");
			discover(&d, sm);
			assign_lids(&d, lids);
			c = configure(&d, lids, (enum sib_rt_engine)e, &st, sm);
			assert_int_equal(c.unrouted, 0);
			assert_all_pairs_carry(&d, lids);
			print_message("%s, %s: %u LFT blocks, %u LID, %u Armed and %u Active "
				      "Sets\n", files[f], sib_route_engine_name((enum sib_rt_engine)e),
				      c.lft_sets, c.lid_sets, c.arm_sets, c.activate_sets);
			/* a second sweep finds it configured: no block, no port to change */
			sib_disc_free(&d);
			discover(&d, sm);
			c = configure(&d, lids, (enum sib_rt_engine)e, &st, sm);
			assert_int_equal(c.lid_sets, 0);
			assert_int_equal(c.lft_sets, 0);
			assert_int_equal(c.arm_sets, 0);
			assert_int_equal(c.activate_sets, 0);
			sib_disc_free(&d);
			sib_cfg_state_free(&st);
			world_free(&w);
		}
}

/* A spine's cable to a leaf goes down: the next sweep finds the fabric
 * without it, rewrites the blocks that change, and every pair talks again. */
static void test_a_cut_cable_is_routed_around(void **state)
{
	struct sib_cfg_state st = { 0 };
	struct sib_cfg_counts c;
	struct sib_disc d;
	uint16_t lids[WORLD_MAX_NODES];
	int sm, leaf1, spine1;

	(void)state;
	world_init(&w, "fat-tree-4x2.topo", NULL);
	sm = world_node(&w, "H3"); /* the SM on leaf2: leaf1 is remote */
	leaf1 = w.sw_of[world_node(&w, "leaf1")];
	spine1 = w.sw_of[world_node(&w, "spine1")];
	discover(&d, sm);
	assign_lids(&d, lids);
	configure(&d, lids, SIB_RT_UPDN, &st, sm);
	assert_all_pairs_carry(&d, lids);
	sib_switch_link(&w.sw[leaf1], 7, false); /* leaf1[7] - spine1[1] */
	sib_switch_link(&w.sw[spine1], 1, false);
	assert_int_equal(w.sw[leaf1].si.PortStateChange, 1); /* what a light sweep reads */
	sib_disc_free(&d);
	discover(&d, sm);
	assert_int_equal(d.nnodes, w.topo.nnodes); /* still all there, by the other spine */
	c = configure(&d, lids, SIB_RT_UPDN, &st, sm);
	assert_true(c.lft_sets > 0);
	assert_int_equal(c.unrouted, 0);
	assert_int_equal(w.sw[leaf1].si.PortStateChange, 0);
	assert_all_pairs_carry(&d, lids);
	sib_disc_free(&d);
	sib_cfg_state_free(&st);
	world_free(&w);
}

/* ---------------------------------------------------------------- multicast */

/* A multicast packet from CA `from` flooded through the switches by their
 * MFTs: how many copies reach each node (CAs only). */
static void mcast_flood(int from, uint16_t slid, uint16_t mlid, unsigned *got)
{
	struct {
		int node;
		unsigned port;
	} q[4096];
	unsigned head = 0, tail = 0;
	uint8_t payload[IB_MAD_BYTES] = { 0 }, pkt[IB_MAX_PACKET];
	struct sib_mad_addr addr;
	size_t len;

	memset(got, 0, WORLD_MAX_NODES * sizeof(*got));
	sib_mad_addr_init(&addr, SIB_QP1, mlid, slid); /* the switch checks the SLID */
	len = sib_mgmt_build(&addr, payload, pkt, sizeof(pkt));
	q[tail].node = from;
	q[tail++].port = 1;
	while (head < tail) {
		const struct sib_topo_link *l = &w.topo.node[q[head].node].port[q[head].port];
		struct sib_switch_out out;
		struct ib_packet p;
		uint8_t buf[IB_MAX_PACKET];

		head++;
		if (l->peer < 0)
			continue;
		if (w.sw_of[l->peer] < 0) {
			got[l->peer]++;
			continue;
		}
		assert_int_equal(ib_packet_decode(pkt, len, &p), IB_PKT_OK);
		sib_switch_route(&w.sw[w.sw_of[l->peer]], l->peer_port, &p, len, buf, &out);
		for (unsigned k = 0; k < out.nports; k++) {
			if (tail == sizeof(q) / sizeof(q[0]))
				fail_msg("MLID 0x%04x loops", mlid);
			q[tail].node = l->peer;
			q[tail++].port = out.port[k];
		}
	}
}

static unsigned write_mfts(struct sib_disc *d, const struct sib_mft_group *g, unsigned ng,
			   struct sib_mft_state *st, int sm)
{
	struct sib_cfg_set *sets;
	struct ib_dr_smp resp;
	unsigned n;

	assert_int_equal(sib_mft_plan(d, g, ng, st, &sets, &n), 0);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(sets[i].attr, IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE);
		assert_true(world_dr(&w, sm, sets[i].path + 1, sets[i].hops, IB_MAD_METHOD_SET,
				     sets[i].attr, sets[i].mod, sets[i].data, 0, &resp));
		assert_int_equal(resp.Status, 0);
	}
	free(sets);
	return n;
}

/* The LID the SM gave topology node n (a CA). */
static uint16_t lid_of_node(const struct sib_disc *d, const uint16_t *lids, int n)
{
	for (unsigned i = 0; i < d->nnodes; i++)
		if (d->node[i].ni.NodeGUID == w.topo.node[n].node_guid)
			return lids[i];
	fail_msg("%s was not found", w.topo.node[n].id);
	return 0;
}

/*
 * mft_plan.h: on every fabric (two switches joined by two cables among
 * them: a tree takes one), each member sends to its group and every member
 * that receives gets exactly one copy, the sender too unless it is a
 * SendOnly member (the loopback is the HCA's, not the switch's: a switch
 * never sends back out of the port a packet came in by, so the sender's
 * own copy is 0 here); non-members get none.  A second plan changes
 * nothing; a member leaving rewrites blocks and stops getting copies.
 */
static void test_groups_reach_their_members_once(void **state)
{
	static const char *const files[] = { "one-switch-8.topo", "two-switches-2-links.topo",
					     "fat-tree-4x2.topo", "irregular-16x14.topo" };

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct sib_cfg_state st = { 0 };
		struct sib_mft_state mst = { 0 };
		struct sib_mft_member m[4];
		struct sib_mft_group g = { .mlid = 0xc005, .m = m };
		unsigned got[WORLD_MAX_NODES], ca[WORLD_MAX_NODES], nca = 0;
		uint16_t lids[WORLD_MAX_NODES];
		struct sib_disc d;
		int sm;

		world_init(&w, files[f], NULL);
		sm = world_node(&w, "H1");
		discover(&d, sm);
		assign_lids(&d, lids);
		configure(&d, lids, SIB_RT_UPDN, &st, sm);
		for (unsigned n = 0; n < w.topo.nnodes; n++)
			if (w.sw_of[n] < 0)
				ca[nca++] = n;
		assert_true(nca >= 4);
		/* members: the second and the last two receive; the first only
		 * sends */
		g.n = 0;
		m[g.n++] = (struct sib_mft_member){ sib_topo_port_guid(&w.topo.node[ca[1]], 1), true };
		m[g.n++] = (struct sib_mft_member){ sib_topo_port_guid(&w.topo.node[ca[nca - 1]], 1),
						     true };
		m[g.n++] = (struct sib_mft_member){ sib_topo_port_guid(&w.topo.node[ca[nca - 2]], 1),
						     true };
		m[g.n++] = (struct sib_mft_member){ sib_topo_port_guid(&w.topo.node[ca[0]], 1), false };
		assert_true(write_mfts(&d, &g, 1, &mst, sm) > 0);
		for (unsigned s = 0; s < g.n; s++) {
			int from = -1;

			for (unsigned k = 0; k < nca; k++)
				if (sib_topo_port_guid(&w.topo.node[ca[k]], 1) == m[s].port_guid)
					from = (int)ca[k];
			mcast_flood(from, lid_of_node(&d, lids, from), g.mlid, got);
			for (unsigned k = 0; k < nca; k++) {
				unsigned want = 0;

				for (unsigned r = 0; r < g.n; r++)
					want += m[r].receives && (int)ca[k] != from &&
						sib_topo_port_guid(&w.topo.node[ca[k]], 1) == m[r].port_guid;
				if (got[ca[k]] != want)
					fail_msg("%s: %s sent, %s got %u copies, not %u", files[f],
						 w.topo.node[from].id, w.topo.node[ca[k]].id, got[ca[k]],
						 want);
			}
		}
		assert_int_equal(write_mfts(&d, &g, 1, &mst, sm), 0);
		/* the last member leaves */
		g.n = 3;
		m[2] = m[3];
		assert_true(write_mfts(&d, &g, 1, &mst, sm) > 0);
		mcast_flood((int)ca[1], lid_of_node(&d, lids, (int)ca[1]), g.mlid, got);
		assert_int_equal(got[ca[nca - 2]], 0);
		assert_int_equal(got[ca[nca - 1]], 1);
		print_message("%s: a group of 4 in %u switches' MFTs\n", files[f], w.topo.nnodes - nca);
		sib_disc_free(&d);
		sib_cfg_state_free(&st);
		sib_mft_state_free(&mst);
		world_free(&w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovers_every_fabric),
		cmocka_unit_test(test_a_down_cable_is_not_crossed),
		cmocka_unit_test(test_a_dead_end_times_out),
		cmocka_unit_test(test_answers_that_make_no_sense),
		cmocka_unit_test(test_configured_fabric_carries_data),
		cmocka_unit_test(test_a_cut_cable_is_routed_around),
		cmocka_unit_test(test_groups_reach_their_members_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

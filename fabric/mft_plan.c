/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Multicast forwarding tables from the groups and the discovered fabric
 * (mft_plan.h).
 */
#include "fabric/mft_plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire/smp.h"

static bool mft_is_switch(const struct sib_disc *d, int i)
{
	return i >= 0 && d->node[i].ni.NodeType == IB_NODE_TYPE_SWITCH;
}

static unsigned mft_positions_of(const struct sib_disc_node *n)
{
	return (n->ni.NumPorts + IB_MFT_PORTS_PER_MASK) / IB_MFT_PORTS_PER_MASK;
}

static void mft_set_bit(uint16_t *mask, unsigned positions, unsigned idx, unsigned port)
{
	mask[idx * positions + port / IB_MFT_PORTS_PER_MASK] |=
		(uint16_t)(1u << (port % IB_MFT_PORTS_PER_MASK));
}

/* The CA node whose port GUID is guid, and the switch and port its cable
 * reaches; false when the sweep found no such CA behind a switch. */
static bool mft_member_at(const struct sib_disc *d, uint64_t guid, int *sw, unsigned *sw_port)
{
	for (unsigned i = 0; i < d->nnodes; i++) {
		const struct sib_disc_node *n = &d->node[i];
		const struct sib_disc_port *p;

		if (n->ni.NodeType != IB_NODE_TYPE_CA || n->ni.PortGUID != guid)
			continue;
		p = &n->port[n->ni.LocalPortNum];
		if (!mft_is_switch(d, p->peer))
			return false;
		*sw = p->peer;
		*sw_port = p->peer_port;
		return true;
	}
	return false;
}

/* Breadth first from root over cables between switches: each switch's
 * parent, the port towards it, and the parent's port back (-1: not
 * reached; the root is its own parent). */
static void mft_tree(const struct sib_disc *d, int root, int *parent, uint8_t *up_port,
		 uint8_t *down_port, int *queue)
{
	unsigned head = 0, tail = 0;

	for (unsigned i = 0; i < d->nnodes; i++)
		parent[i] = -1;
	parent[root] = root;
	queue[tail++] = root;
	while (head < tail) {
		int s = queue[head++];
		const struct sib_disc_node *n = &d->node[s];

		for (unsigned p = 1; p <= n->ni.NumPorts; p++) {
			int peer = n->port[p].peer;

			if (!mft_is_switch(d, peer) || parent[peer] >= 0)
				continue;
			parent[peer] = s;
			up_port[peer] = n->port[p].peer_port;
			down_port[peer] = (uint8_t)p;
			queue[tail++] = peer;
		}
	}
}

/* One group's entries into want (mask arrays per node, NULL for CAs). */
static void mft_route_group(const struct sib_disc *d, const struct sib_mft_group *g,
			uint16_t **want, int *parent, uint8_t *up, uint8_t *down, int *queue,
			bool *on_tree)
{
	unsigned idx = g->mlid - SIB_MFT_MLID_BASE;
	int root = -1;

	for (unsigned k = 0; k < g->n && root < 0; k++) {
		unsigned port;

		if (!mft_member_at(d, g->m[k].port_guid, &root, &port))
			root = -1;
	}
	if (root < 0)
		return;
	mft_tree(d, root, parent, up, down, queue);
	memset(on_tree, 0, d->nnodes * sizeof(*on_tree));
	on_tree[root] = true;
	for (unsigned k = 0; k < g->n; k++) {
		unsigned port;
		int s;

		if (!mft_member_at(d, g->m[k].port_guid, &s, &port) || parent[s] < 0)
			continue;
		if (g->m[k].receives)
			mft_set_bit(want[s], mft_positions_of(&d->node[s]), idx, port);
		for (; !on_tree[s]; s = parent[s]) {
			on_tree[s] = true;
			mft_set_bit(want[s], mft_positions_of(&d->node[s]), idx, up[s]);
			mft_set_bit(want[parent[s]], mft_positions_of(&d->node[parent[s]]), idx, down[s]);
		}
	}
}

static struct sib_mft_switch *mft_state_of(struct sib_mft_state *st, const struct sib_disc_node *n)
{
	unsigned positions = mft_positions_of(n);
	struct sib_mft_switch *s;

	for (unsigned i = 0; i < st->n; i++)
		if (st->sw[i].guid == n->ni.NodeGUID) {
			s = &st->sw[i];
			if (s->positions == positions)
				return s;
			/* another switch under that GUID: start over */
			free(s->mask);
			s->mask = calloc((size_t)SIB_MFT_MLIDS * positions, sizeof(*s->mask));
			s->positions = positions;
			return s->mask ? s : NULL;
		}
	if (st->n == st->cap) {
		unsigned cap = st->cap ? st->cap * 2 : 16;
		void *a = realloc(st->sw, cap * sizeof(*st->sw));

		if (!a)
			return NULL;
		st->sw = a;
		st->cap = cap;
	}
	s = &st->sw[st->n];
	s->guid = n->ni.NodeGUID;
	s->positions = positions;
	s->mask = calloc((size_t)SIB_MFT_MLIDS * positions, sizeof(*s->mask));
	if (!s->mask)
		return NULL;
	st->n++;
	return s;
}

/* The Sets for one switch: every (block, position) that differs. */
static int mft_diff_switch(const struct sib_disc_node *n, const uint16_t *want,
		       struct sib_mft_switch *have, struct sib_cfg_set **sets, unsigned *nsets,
		       unsigned *cap)
{
	unsigned positions = have->positions;

	for (unsigned b = 0; b < SIB_MFT_MLIDS / IB_MFT_BLOCK; b++)
		for (unsigned pos = 0; pos < positions; pos++) {
			struct ib_mft_block blk;
			struct sib_cfg_set *s;
			bool same = true;

			for (unsigned k = 0; k < IB_MFT_BLOCK; k++) {
				unsigned at = (b * IB_MFT_BLOCK + k) * positions + pos;

				blk.PortMask[k] = want[at];
				same &= want[at] == have->mask[at];
			}
			if (same)
				continue;
			if (*nsets == *cap) {
				unsigned c = *cap ? *cap * 2 : 16;
				void *a = realloc(*sets, c * sizeof(**sets));

				if (!a)
					return -ENOMEM;
				*sets = a;
				*cap = c;
			}
			s = &(*sets)[(*nsets)++];
			memset(s, 0, sizeof(*s));
			memcpy(s->path, n->path, sizeof(s->path));
			s->hops = n->hops;
			s->attr = IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE;
			s->mod = (uint32_t)pos << 28 | b;
			ib_mft_block_encode(&blk, s->data);
			for (unsigned k = 0; k < IB_MFT_BLOCK; k++) {
				unsigned at = (b * IB_MFT_BLOCK + k) * positions + pos;

				have->mask[at] = want[at];
			}
		}
	return 0;
}

int sib_mft_plan(const struct sib_disc *d, const struct sib_mft_group *g, unsigned ng,
		 struct sib_mft_state *st, struct sib_cfg_set **sets, unsigned *nsets)
{
	unsigned nn = d->nnodes, cap = 0;
	uint16_t **want = calloc(nn ? nn : 1, sizeof(*want));
	int *parent = calloc(nn ? nn : 1, sizeof(*parent));
	int *queue = calloc(nn ? nn : 1, sizeof(*queue));
	uint8_t *up = calloc(nn ? nn : 1, 1), *down = calloc(nn ? nn : 1, 1);
	bool *on_tree = calloc(nn ? nn : 1, sizeof(*on_tree));
	int rc = -ENOMEM;

	*sets = NULL;
	*nsets = 0;
	if (!want || !parent || !queue || !up || !down || !on_tree)
		goto out;
	for (unsigned i = 0; i < nn; i++)
		if (mft_is_switch(d, (int)i) &&
		    !(want[i] = calloc((size_t)SIB_MFT_MLIDS * mft_positions_of(&d->node[i]),
				       sizeof(**want))))
			goto out;
	for (unsigned k = 0; k < ng; k++)
		if (g[k].mlid >= SIB_MFT_MLID_BASE && g[k].mlid < SIB_MFT_MLID_BASE + SIB_MFT_MLIDS)
			mft_route_group(d, &g[k], want, parent, up, down, queue, on_tree);
	rc = 0;
	for (unsigned i = 0; i < nn && !rc; i++) {
		struct sib_mft_switch *have;

		if (!want[i])
			continue;
		if (!(have = mft_state_of(st, &d->node[i])))
			rc = -ENOMEM;
		else
			rc = mft_diff_switch(&d->node[i], want[i], have, sets, nsets, &cap);
	}
	if (rc) {
		free(*sets);
		*sets = NULL;
		*nsets = 0;
		sib_mft_state_free(st); /* half written: write all next time */
	}
out:
	for (unsigned i = 0; want && i < nn; i++)
		free(want[i]);
	free(want);
	free(parent);
	free(queue);
	free(up);
	free(down);
	free(on_tree);
	return rc;
}

void sib_mft_state_free(struct sib_mft_state *st)
{
	for (unsigned i = 0; i < st->n; i++)
		free(st->sw[i].mask);
	free(st->sw);
	memset(st, 0, sizeof(*st));
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The subnet manager's configuration plan (sm_configure.h): LIDs, routes,
 * port states, as a list of SubnSet SMPs.
 */
#include "fabric/sm_configure.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct plan {
	const struct sib_disc *d;
	struct sib_cfg_set *sets;
	unsigned n, cap;
};

static struct sib_cfg_set *add(struct plan *pl, unsigned node, uint16_t attr, uint32_t mod)
{
	const struct sib_disc_node *n = &pl->d->node[node];
	struct sib_cfg_set *s;

	if (pl->n == pl->cap) {
		unsigned cap = pl->cap ? pl->cap * 2 : 64;
		struct sib_cfg_set *a = realloc(pl->sets, cap * sizeof(*a));

		if (!a)
			return NULL;
		pl->sets = a;
		pl->cap = cap;
	}
	s = &pl->sets[pl->n++];
	memset(s, 0, sizeof(*s));
	memcpy(s->path, n->path, n->hops + 1u);
	s->hops = n->hops;
	s->attr = attr;
	s->mod = mod;
	return s;
}

/* A PortInfo to write back: what was read, with every field whose 0
 * means "no change" at 0 (IBA 14.2.5.6), so only what the SM means to
 * change changes. */
static struct ib_port_info port_info_base(const struct sib_disc_port *p)
{
	struct ib_port_info pi = p->pi;

	pi.PortState = 0;
	pi.PortPhysicalState = 0;
	pi.LinkDownDefaultState = 0;
	pi.LinkWidthEnabled = 0;
	pi.LinkSpeedEnabled = 0;
	pi.LinkSpeedExtEnabled = 0;
	pi.OperationalVLs = 0;
	return pi;
}

static struct sib_cfg_lft *state_of(struct sib_cfg_state *st, uint64_t guid)
{
	for (unsigned i = 0; i < st->n; i++)
		if (st->sw[i].guid == guid)
			return &st->sw[i];
	if (st->n == st->cap) {
		unsigned cap = st->cap ? st->cap * 2 : 16;
		struct sib_cfg_lft *a = realloc(st->sw, cap * sizeof(*a));

		if (!a)
			return NULL;
		st->sw = a;
		st->cap = cap;
	}
	st->sw[st->n] = (struct sib_cfg_lft){ .guid = guid };
	return &st->sw[st->n++];
}

void sib_cfg_state_free(struct sib_cfg_state *st)
{
	for (unsigned i = 0; i < st->n; i++)
		free(st->sw[i].lft);
	free(st->sw);
	memset(st, 0, sizeof(*st));
}

/* The routing engine's view: switches, their cables to other switches,
 * and where each LID lives. */
static int build_fabric(const struct sib_disc *d, const uint16_t *lids, int *sw_index,
			struct sib_rt_fabric *f, struct sib_rt_dest *dest)
{
	struct sib_rt_switch *sw = calloc(d->nnodes, sizeof(*sw));
	unsigned ns = 0, nd = 0;

	if (!sw)
		return -ENOMEM;
	for (unsigned i = 0; i < d->nnodes; i++)
		sw_index[i] = d->node[i].ni.NodeType == IB_NODE_TYPE_SWITCH ? (int)ns++ : -1;
	f->max_lid = 0;
	for (unsigned i = 0; i < d->nnodes; i++) {
		const struct sib_disc_node *n = &d->node[i];
		int s = sw_index[i];

		if (lids[i] > f->max_lid)
			f->max_lid = lids[i];
		if (s < 0) {
			/* a CA: its LID lives behind the switch port it is cabled to */
			const struct sib_disc_port *p = &n->port[n->ni.LocalPortNum];

			if (lids[i] && p->peer >= 0 && sw_index[p->peer] >= 0)
				dest[nd++] = (struct sib_rt_dest){ lids[i], sw_index[p->peer],
								   p->peer_port };
			continue;
		}
		sw[s].guid = n->ni.NodeGUID;
		sw[s].nports = n->ni.NumPorts;
		sw[s].peer = calloc(n->ni.NumPorts + 1u, sizeof(int));
		sw[s].peer_port = calloc(n->ni.NumPorts + 1u, 1);
		if (!sw[s].peer || !sw[s].peer_port) {
			f->sw = sw;
			f->nsw = ns;
			return -ENOMEM;
		}
		for (unsigned p = 0; p <= n->ni.NumPorts; p++) {
			int peer = n->port[p].peer;

			sw[s].peer[p] = p && peer >= 0 ? sw_index[peer] : -1;
			sw[s].peer_port[p] = n->port[p].peer_port;
		}
		if (lids[i])
			dest[nd++] = (struct sib_rt_dest){ lids[i], s, 0 };
	}
	f->sw = sw;
	f->nsw = ns;
	f->dest = dest;
	f->ndest = nd;
	return 0;
}

static void free_fabric(struct sib_rt_fabric *f)
{
	for (unsigned s = 0; s < f->nsw && f->sw; s++) {
		free(f->sw[s].peer);
		free(f->sw[s].peer_port);
	}
	free(f->sw);
}

static bool switch_has_ca(const struct sib_rt_fabric *f, int sw)
{
	for (unsigned k = 0; k < f->ndest; k++)
		if (f->dest[k].sw == sw && f->dest[k].port)
			return true;
	return false;
}

/* Every port with a cable whose state is below `to`, to `to`.  The
 * PortInfo carries the LID and SM LID the port has been given (its read
 * copy may predate them: writing that back would undo them). */
static int port_states(struct plan *pl, const uint16_t *lids, uint16_t sm_lid, uint8_t to,
		       unsigned *count)
{
	const struct sib_disc *d = pl->d;

	for (unsigned i = 0; i < d->nnodes; i++) {
		const struct sib_disc_node *n = &d->node[i];
		bool sw = n->ni.NodeType == IB_NODE_TYPE_SWITCH;

		for (unsigned p = 1; p <= n->ni.NumPorts; p++) {
			const struct sib_disc_port *dp = &n->port[p];
			struct ib_port_info pi;
			struct sib_cfg_set *s;

			if (dp->peer < 0 || !dp->have_pi || dp->pi.PortState >= to ||
			    (!sw && p != n->ni.LocalPortNum))
				continue;
			s = add(pl, i, IB_SMP_ATTR_PORT_INFO, p);
			if (!s)
				return -ENOMEM;
			pi = port_info_base(dp);
			pi.PortState = to;
			if (!sw) {
				pi.LID = lids[i];
				pi.MasterSMLID = sm_lid;
			}
			ib_port_info_encode(&pi, s->data);
			(*count)++;
		}
	}
	return 0;
}

int sib_cfg_plan(const struct sib_disc *d, const uint16_t *lids, uint16_t sm_lid,
		 enum sib_rt_engine engine, struct sib_cfg_state *st, struct sib_cfg_set **sets,
		 unsigned *nsets, struct sib_cfg_counts *counts)
{
	struct plan pl = { .d = d };
	struct sib_rt_fabric f = { 0 };
	struct sib_rt_dest *dest = calloc(d->nnodes + 1u, sizeof(*dest));
	int *sw_index = calloc(d->nnodes + 1u, sizeof(int));
	uint8_t **lft = NULL;
	int rc;

	memset(counts, 0, sizeof(*counts));
	*sets = NULL;
	*nsets = 0;
	if (!dest || !sw_index) {
		rc = -ENOMEM;
		goto out;
	}
	rc = build_fabric(d, lids, sw_index, &f, dest);
	if (rc)
		goto out;
	if (f.max_lid >= 0xc000) {
		rc = -EINVAL;
		goto out;
	}
	lft = calloc(f.nsw + 1u, sizeof(*lft));
	for (unsigned s = 0; lft && s < f.nsw; s++)
		if (!(lft[s] = malloc(f.max_lid + 1u)))
			break;
	if (!lft || (f.nsw && !lft[f.nsw - 1])) {
		rc = -ENOMEM;
		goto out;
	}
	rc = sib_route(&f, engine, -1, lft);
	if (rc)
		goto out;

	/* 1. LIDs */
	for (unsigned i = 0; i < d->nnodes; i++) {
		const struct sib_disc_node *n = &d->node[i];
		unsigned p = sw_index[i] >= 0 ? 0 : n->ni.LocalPortNum;
		struct ib_port_info pi;
		struct sib_cfg_set *s;

		if (!lids[i] || !n->port[p].have_pi ||
		    (n->port[p].pi.LID == lids[i] && n->port[p].pi.MasterSMLID == sm_lid))
			continue;
		if (!(s = add(&pl, i, IB_SMP_ATTR_PORT_INFO, p))) {
			rc = -ENOMEM;
			goto out;
		}
		pi = port_info_base(&n->port[p]);
		pi.LID = lids[i];
		pi.MasterSMLID = sm_lid;
		ib_port_info_encode(&pi, s->data);
		counts->lid_sets++;
	}
	/* 2. routes: changed LFT blocks, then LinearFDBTop */
	for (unsigned i = 0; i < d->nnodes; i++) {
		const struct sib_disc_node *n = &d->node[i];
		int sx = sw_index[i];
		struct sib_cfg_lft *old;
		struct ib_switch_info si;
		struct sib_cfg_set *s;
		uint8_t *copy;

		if (sx < 0)
			continue;
		/* what must reach: every CA's LID, and every LID from a switch
		 * with CAs (updn may leave one root without a route to another
		 * root's own LID: routing.h) */
		for (unsigned k = 0; k < f.ndest; k++)
			counts->unrouted += lft[sx][f.dest[k].lid] == SIB_RT_NONE &&
					    (f.dest[k].port || switch_has_ca(&f, sx));
		if (!(old = state_of(st, n->ni.NodeGUID))) {
			rc = -ENOMEM;
			goto out;
		}
		for (unsigned b = 0; b <= f.max_lid / IB_LFT_BLOCK; b++) {
			struct ib_lft_block blk;
			unsigned first = b * IB_LFT_BLOCK;

			memset(blk.Port, IB_LFT_PORT_NONE, sizeof(blk.Port));
			for (unsigned k = 0; k < IB_LFT_BLOCK && first + k <= f.max_lid; k++)
				blk.Port[k] = first + k ? lft[sx][first + k] : IB_LFT_PORT_NONE;
			if (old->lft && first <= old->top) {
				bool same = true;

				for (unsigned k = 0; k < IB_LFT_BLOCK; k++) {
					unsigned lid = first + k;
					uint8_t was = lid <= old->top ? old->lft[lid] : IB_LFT_PORT_NONE;

					same &= was == blk.Port[k];
				}
				if (same)
					continue;
			}
			if (!(s = add(&pl, i, IB_SMP_ATTR_LINEAR_FORWARDING_TABLE, b))) {
				rc = -ENOMEM;
				goto out;
			}
			ib_lft_block_encode(&blk, s->data);
			counts->lft_sets++;
		}
		if (!(copy = malloc(f.max_lid + 1u))) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(copy, lft[sx], f.max_lid + 1u);
		copy[0] = IB_LFT_PORT_NONE;
		free(old->lft);
		old->lft = copy;
		old->top = f.max_lid;
		if (!(s = add(&pl, i, IB_SMP_ATTR_SWITCH_INFO, 0))) {
			rc = -ENOMEM;
			goto out;
		}
		si = n->si;
		si.LinearFDBTop = f.max_lid;
		/* Every MFT entry the switch has is in use (mft_plan.h writes
		 * them; an empty one drops); 0xffff: none (IBA 14.2.5.4). */
		si.MulticastFDBTop = n->si.MulticastFDBCap
					     ? (uint16_t)(0xc000 + n->si.MulticastFDBCap - 1)
					     : 0xffff;
		si.PortStateChange = 1; /* writing 1 clears it */
		ib_switch_info_encode(&si, s->data);
		counts->switch_info_sets++;
	}
	/* 3. links: all Armed, then all Active */
	rc = port_states(&pl, lids, sm_lid, IB_PORT_STATE_ARMED, &counts->arm_sets);
	if (!rc)
		rc = port_states(&pl, lids, sm_lid, IB_PORT_STATE_ACTIVE, &counts->activate_sets);
out:
	if (lft)
		for (unsigned s = 0; s < f.nsw; s++)
			free(lft[s]);
	free(lft);
	free_fabric(&f);
	free(dest);
	free(sw_index);
	if (rc) {
		free(pl.sets);
		return rc;
	}
	*sets = pl.sets;
	*nsets = pl.n;
	return 0;
}

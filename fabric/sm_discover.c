/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Fabric discovery by directed route (sm_discover.h).  Every Get asked for
 * is kept in one array, by tag; the answers grow the node table.
 */
#include "fabric/sm_discover.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sib_disc_req {
	struct sib_disc_smp smp;
	int node;	/* the node it asks about; -1 for a NodeInfo one hop further */
	int from;	/* NodeInfo: the node and port the path leaves by */
	uint8_t from_port;
	bool out;	/* sent, not yet answered */
};

static int ask(struct sib_disc *d, const uint8_t *path, unsigned hops, uint16_t attr,
	       uint32_t mod, int node, int from, unsigned from_port)
{
	struct sib_disc_req *r;

	if (hops > IB_SMP_MAX_HOPS)
		return -EINVAL;
	if (d->nreq == d->req_cap) {
		unsigned cap = d->req_cap ? d->req_cap * 2 : 64;
		struct sib_disc_req *a = realloc(d->req, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		d->req = a;
		d->req_cap = cap;
	}
	r = &d->req[d->nreq];
	memset(r, 0, sizeof(*r));
	memcpy(r->smp.path, path, hops + 1u);
	r->smp.hops = hops;
	r->smp.attr = attr;
	r->smp.mod = mod;
	r->smp.tag = d->nreq++;
	r->node = node;
	r->from = from;
	r->from_port = (uint8_t)from_port;
	return 0;
}

static int add_node(struct sib_disc *d, const struct ib_node_info *ni, const uint8_t *path,
		    unsigned hops)
{
	struct sib_disc_node *n;

	if (d->nnodes == SIB_DISC_MAX_NODES)
		return -ENOSPC;
	if (d->nnodes == d->node_cap) {
		unsigned cap = d->node_cap ? d->node_cap * 2 : 32;
		struct sib_disc_node *a = realloc(d->node, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		d->node = a;
		d->node_cap = cap;
	}
	n = &d->node[d->nnodes];
	memset(n, 0, sizeof(*n));
	n->ni = *ni;
	n->port = calloc(ni->NumPorts + 1u, sizeof(*n->port));
	if (!n->port)
		return -ENOMEM;
	for (unsigned p = 0; p <= ni->NumPorts; p++)
		n->port[p].peer = -1;
	memcpy(n->path, path, hops + 1u);
	n->hops = hops;
	return (int)d->nnodes++;
}

int sib_disc_start(struct sib_disc *d, const struct ib_node_info *self, const char *desc)
{
	uint8_t path[IB_SMP_MAX_HOPS + 1] = { 0 };
	int rc;

	memset(d, 0, sizeof(*d));
	if (self->LocalPortNum == 0 || self->LocalPortNum > self->NumPorts)
		return -EINVAL;
	rc = add_node(d, self, path, 0);
	if (rc < 0)
		return rc;
	strncpy(d->node[0].desc, desc, IB_NODE_DESCRIPTION_BYTES);
	path[1] = self->LocalPortNum;
	return ask(d, path, 1, IB_SMP_ATTR_NODE_INFO, 0, -1, 0, self->LocalPortNum);
}

void sib_disc_free(struct sib_disc *d)
{
	for (unsigned i = 0; i < d->nnodes; i++)
		free(d->node[i].port);
	free(d->node);
	free(d->req);
	memset(d, 0, sizeof(*d));
}

int sib_disc_find(const struct sib_disc *d, uint64_t guid)
{
	for (unsigned i = 0; i < d->nnodes; i++)
		if (d->node[i].ni.NodeGUID == guid)
			return (int)i;
	return -1;
}

bool sib_disc_next(struct sib_disc *d, struct sib_disc_smp *smp)
{
	if (d->next_req == d->nreq)
		return false;
	d->req[d->next_req].out = true;
	*smp = d->req[d->next_req++].smp;
	d->outstanding++;
	d->smps++;
	return true;
}

bool sib_disc_done(const struct sib_disc *d)
{
	return d->next_req == d->nreq && d->outstanding == 0;
}

/* A new node, or a known one by another path: the cable from the node the
 * path left by to the port NodeInfo came in by. */
static void node_info(struct sib_disc *d, const struct sib_disc_req *r, const uint8_t *data)
{
	struct ib_node_info ni;
	int idx;
	unsigned in;

	ib_node_info_decode(&ni, data);
	in = ni.LocalPortNum;
	if (!ni.NodeGUID || in == 0 || in > ni.NumPorts ||
	    (ni.NodeType != IB_NODE_TYPE_SWITCH && ni.NodeType != IB_NODE_TYPE_CA)) {
		d->dropped++;
		return;
	}
	idx = sib_disc_find(d, ni.NodeGUID);
	if (idx < 0) {
		idx = add_node(d, &ni, r->smp.path, r->smp.hops);
		if (idx < 0) {
			d->dropped++;
			return;
		}
		ask(d, r->smp.path, r->smp.hops, IB_SMP_ATTR_NODE_DESCRIPTION, 0, idx, -1, 0);
		if (ni.NodeType == IB_NODE_TYPE_SWITCH) {
			ask(d, r->smp.path, r->smp.hops, IB_SMP_ATTR_SWITCH_INFO, 0, idx, -1, 0);
			for (unsigned p = 0; p <= ni.NumPorts; p++)
				ask(d, r->smp.path, r->smp.hops, IB_SMP_ATTR_PORT_INFO, p, idx, -1, 0);
		} else {
			ask(d, r->smp.path, r->smp.hops, IB_SMP_ATTR_PORT_INFO, in, idx, -1, 0);
		}
	} else if (in > d->node[idx].ni.NumPorts) {
		d->dropped++;
		return;
	}
	d->node[r->from].port[r->from_port].peer = idx;
	d->node[r->from].port[r->from_port].peer_port = (uint8_t)in;
	d->node[idx].port[in].peer = r->from;
	d->node[idx].port[in].peer_port = r->from_port;
}

static void port_info(struct sib_disc *d, const struct sib_disc_req *r, const uint8_t *data)
{
	struct sib_disc_node *n = &d->node[r->node];
	struct sib_disc_port *p;
	uint8_t path[IB_SMP_MAX_HOPS + 1];

	if (r->smp.mod > n->ni.NumPorts) {
		d->dropped++;
		return;
	}
	p = &n->port[r->smp.mod];
	ib_port_info_decode(&p->pi, data);
	p->have_pi = true;
	/* a switch port whose link is up and whose far end is not known yet
	 * leads one hop further (only switches forward a DR SMP) */
	if (n->ni.NodeType != IB_NODE_TYPE_SWITCH || r->smp.mod == 0 || p->peer >= 0 ||
	    p->pi.PortState < IB_PORT_STATE_INIT || n->hops >= IB_SMP_MAX_HOPS)
		return;
	memcpy(path, n->path, n->hops + 1u);
	path[n->hops + 1] = (uint8_t)r->smp.mod;
	ask(d, path, n->hops + 1, IB_SMP_ATTR_NODE_INFO, 0, -1, r->node, r->smp.mod);
}

void sib_disc_answer(struct sib_disc *d, uint32_t tag, const struct ib_dr_smp *resp)
{
	const struct sib_disc_req *r;
	struct sib_disc_req copy;

	if (tag >= d->next_req || !d->req[tag].out) { /* never asked, or answered */
		d->dropped++;
		return;
	}
	d->req[tag].out = false;
	d->outstanding--;
	if (!resp) {
		d->timeouts++;
		return;
	}
	if (resp->Status || resp->AttributeID != d->req[tag].smp.attr) {
		d->dropped++;
		return;
	}
	copy = d->req[tag]; /* ask() may move the array */
	r = &copy;
	switch (r->smp.attr) {
	case IB_SMP_ATTR_NODE_INFO:
		node_info(d, r, resp->SMPData);
		break;
	case IB_SMP_ATTR_NODE_DESCRIPTION: {
		struct sib_disc_node *n = &d->node[r->node];

		memcpy(n->desc, resp->SMPData, IB_NODE_DESCRIPTION_BYTES);
		n->desc[IB_NODE_DESCRIPTION_BYTES] = 0;
		break;
	}
	case IB_SMP_ATTR_SWITCH_INFO:
		ib_switch_info_decode(&d->node[r->node].si, resp->SMPData);
		d->node[r->node].have_si = true;
		break;
	case IB_SMP_ATTR_PORT_INFO:
		port_info(d, r, resp->SMPData);
		break;
	}
}

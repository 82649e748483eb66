/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SoftibMulticastPorts (mcast_ports.h): its encoding, and the SMA putting
 * the blocks of a port list together and handing a complete list to the
 * owner (node ops mcast_ports: the HCA's data path).
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "mgmt/mcast_ports.h"
#include "mgmt/node.h"
#include "wire/bitfield.h"
#include "wire/mad.h"
#include "wire/smp.h"

static void ep_put(uint8_t *p, const struct sib_endpoint *ep)
{
	p[0] = ep->family;
	ib_bits_put(p, 16, 16, ep->port);
	memcpy(p + 4, ep->addr, 16);
}

static void ep_get(const uint8_t *p, struct sib_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	if (p[0] != SIB_AF_INET && p[0] != SIB_AF_INET6)
		return;
	ep->family = p[0];
	ep->port = (uint16_t)ib_bits_get(p, 16, 16);
	memcpy(ep->addr, p + 4, ep->family == SIB_AF_INET ? 4 : 16);
}

void sib_mcast_ports_encode(const struct sib_mcast_ports *b, uint8_t *p)
{
	memset(p, 0, IB_SMP_DATA_BYTES);
	ib_bits_put(p, 0, 32, b->Generation);
	ib_bits_put(p, 32, 16, b->NumPorts);
	p[6] = b->Installed;
	for (int i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++)
		if (b->ep[i].family)
			ep_put(p + 8 + 20 * i, &b->ep[i]);
}

void sib_mcast_ports_decode(struct sib_mcast_ports *b, const uint8_t *p)
{
	memset(b, 0, sizeof(*b));
	b->Generation = (uint32_t)ib_bits_get(p, 0, 32);
	b->NumPorts = (uint16_t)ib_bits_get(p, 32, 16);
	b->Installed = p[6];
	for (int i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++)
		ep_get(p + 8 + 20 * i, &b->ep[i]);
}

/* One MLID's list being put together (or installed). */
struct sib_mcast_stage {
	uint16_t mlid;
	uint32_t gen;
	uint16_t n;
	bool installed;
	uint16_t have; /* blocks arrived */
	uint8_t *got;  /* per block */
	struct sib_endpoint *ep;
};

struct sib_mcast_stages {
	struct sib_mcast_stage *s;
	unsigned n, cap;
};

static struct sib_mcast_stage *stage_for(struct sib_port_mgmt *pm, uint16_t mlid, bool add)
{
	struct sib_mcast_stages *st = pm->mcast_stages;

	if (!st) {
		if (!add)
			return NULL;
		st = pm->mcast_stages = calloc(1, sizeof(*st));
		if (!st)
			return NULL;
	}
	for (unsigned i = 0; i < st->n; i++)
		if (st->s[i].mlid == mlid)
			return &st->s[i];
	if (!add)
		return NULL;
	if (st->n == st->cap) {
		unsigned cap = st->cap ? st->cap * 2 : 4;
		struct sib_mcast_stage *ns = realloc(st->s, cap * sizeof(*ns));

		if (!ns)
			return NULL;
		st->s = ns;
		st->cap = cap;
	}
	memset(&st->s[st->n], 0, sizeof(st->s[0]));
	st->s[st->n].mlid = mlid;
	st->s[st->n].gen = UINT32_MAX; /* nothing yet */
	return &st->s[st->n++];
}

static bool stage_reset(struct sib_mcast_stage *s, uint32_t gen, uint16_t n)
{
	unsigned blocks = n ? (n + SIB_MCAST_PORTS_PER_BLOCK - 1) / SIB_MCAST_PORTS_PER_BLOCK : 1;
	struct sib_endpoint *ep = calloc(n ? n : 1, sizeof(*ep));
	uint8_t *got = calloc(blocks, 1);

	if (!ep || !got) {
		free(ep);
		free(got);
		return false;
	}
	free(s->ep);
	free(s->got);
	s->ep = ep;
	s->got = got;
	s->gen = gen;
	s->n = n;
	s->have = 0;
	s->installed = false;
	return true;
}

uint16_t sib_sma_mcast_ports(struct sib_node *node, unsigned port_num, bool set, uint32_t mod,
			     const uint8_t *in, uint8_t *out)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	uint16_t mlid = (uint16_t)(mod & 0xffff), block = (uint16_t)(mod >> 16);
	struct sib_mcast_ports b;
	struct sib_mcast_stage *s;
	unsigned blocks;

	/* IBA 4.1.3: multicast LIDs are 0xC000..0xFFFE. */
	if (mlid < 0xc000 || mlid == 0xffff)
		return IB_MAD_STATUS_INVALID_FIELD;
	if (!set) {
		pthread_mutex_lock(&node->lock);
		s = stage_for(pm, mlid, false);
		memset(&b, 0, sizeof(b));
		if (s) {
			b.Generation = s->gen;
			b.NumPorts = s->n;
			b.Installed = s->installed;
			for (unsigned i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++) {
				unsigned k = block * SIB_MCAST_PORTS_PER_BLOCK + i;

				if (k < s->n && s->installed)
					b.ep[i] = s->ep[k];
			}
		}
		pthread_mutex_unlock(&node->lock);
		sib_mcast_ports_encode(&b, out);
		return 0;
	}
	sib_mcast_ports_decode(&b, in);
	blocks = b.NumPorts ? (b.NumPorts + SIB_MCAST_PORTS_PER_BLOCK - 1u) / SIB_MCAST_PORTS_PER_BLOCK
			    : 1;
	if (b.NumPorts > SIB_MCAST_PORTS_MAX || block >= blocks)
		return IB_MAD_STATUS_INVALID_FIELD;
	pthread_mutex_lock(&node->lock);
	s = stage_for(pm, mlid, true);
	if (!s || ((s->gen != b.Generation || s->n != b.NumPorts) &&
		   !stage_reset(s, b.Generation, b.NumPorts))) {
		pthread_mutex_unlock(&node->lock);
		return IB_MAD_STATUS_BUSY;
	}
	if (!s->got[block]) {
		for (unsigned i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++) {
			unsigned k = block * SIB_MCAST_PORTS_PER_BLOCK + i;

			if (k < s->n)
				s->ep[k] = b.ep[i];
		}
		s->got[block] = 1;
		s->have++;
	}
	struct sib_endpoint *list = NULL;
	bool install = !s->installed && s->have == blocks;

	if (install) {
		list = malloc((s->n ? s->n : 1) * sizeof(*list));
		if (list) {
			memcpy(list, s->ep, s->n * sizeof(*list));
			s->installed = true;
		} else {
			install = false;
		}
	}
	b.Installed = s->installed;
	pthread_mutex_unlock(&node->lock);
	/* The data path takes the list outside the node's lock (it has its own). */
	if (install && node->ops && node->ops->mcast_ports &&
	    node->ops->mcast_ports(node, port_num, mlid, list, b.NumPorts)) {
		sib_warn("SubnSet(SoftibMulticastPorts) MLID 0x%04x: the data path refused the "
			 "list of %u ports",
			 mlid, b.NumPorts);
		b.Installed = 0;
	}
	free(list);
	sib_mcast_ports_encode(&b, out);
	return 0;
}

void sib_sma_mcast_ports_fini(struct sib_node *node)
{
	for (unsigned p = 0; p < SIB_NUM_PORTS; p++) {
		struct sib_mcast_stages *st = node->mgmt[p].mcast_stages;

		if (!st)
			continue;
		for (unsigned i = 0; i < st->n; i++) {
			free(st->s[i].ep);
			free(st->s[i].got);
		}
		free(st->s);
		free(st);
		node->mgmt[p].mcast_stages = NULL;
	}
}

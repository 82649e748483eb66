/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * NodeRecord (IBA 15.2.5.2) and PortInfoRecord (15.2.5.3) on a fabric:
 * what the last sweep found (sa.h), with the LIDs the SM gave, as saquery
 * reads them.  Records are kept encoded; a query's components are compared
 * byte for byte, field by field, as the record lays them out, except
 * PortInfoRecord's CapabilityMask, which matches when every bit asked for
 * is set (as OpenSM answers saquery -s).  M_Keys are never told.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric/sa.h"
#include "fabric/sm_discover.h"

enum {
	NODE_RECORD_BYTES = 108, /* LID, reserved, NodeInfo, NodeDescription */
	PORT_INFO_RECORD_BYTES = 68, /* EndportLID, PortNum, Options, PortInfo */
	PIR_COMP_CAPABILITY_MASK = 7,
};

/* A component: its bit offset and width in the record (byte-aligned). */
struct comp {
	uint16_t off, bits;
};

/* NodeRecord components 0..14: LID, reserved, then NodeInfo field by field
 * (14.2.5.3), then NodeDescription. */
static const struct comp node_comps[] = {
	{ 0, 16 },    { 16, 16 },   { 32, 8 },	 { 40, 8 },   { 48, 8 },
	{ 56, 8 },    { 64, 64 },   { 128, 64 }, { 192, 64 }, { 256, 16 },
	{ 272, 16 },  { 288, 32 },  { 320, 8 },	 { 328, 24 }, { 352, 512 },
};

/* PortInfoRecord components 0..10: EndportLID, PortNum, Options, then
 * PortInfo's M_Key, GidPrefix, LID, MasterSMLID, CapabilityMask, DiagCode,
 * M_KeyLeasePeriod, LocalPortNum.  Later ones (sub-byte fields) are not
 * compared. */
static const struct comp port_comps[] = {
	{ 0, 16 },   { 16, 8 },	  { 24, 8 },   { 32, 64 },  { 96, 64 }, { 160, 16 },
	{ 176, 16 }, { 192, 32 }, { 224, 16 }, { 240, 16 }, { 256, 8 },
};

static bool matches(const uint8_t *rec, const uint8_t *q, uint64_t cm, const struct comp *c,
		    unsigned ncomp, int any_bits_comp)
{
	for (unsigned i = 0; i < ncomp; i++) {
		const uint8_t *r = rec + c[i].off / 8, *w = q + c[i].off / 8;

		if (!(cm & (1ull << i)))
			continue;
		if ((int)i == any_bits_comp) {
			for (unsigned b = 0; b < c[i].bits / 8u; b++)
				if ((r[b] & w[b]) != w[b])
					return false;
		} else if (memcmp(r, w, c[i].bits / 8u)) {
			return false;
		}
	}
	return true;
}

static void nodes_free(struct sib_sa_state *s)
{
	free(s->node_recs);
	free(s->port_recs);
	s->node_recs = s->port_recs = NULL;
	s->n_node_recs = s->n_port_recs = 0;
}

void sib_sa_nodes_set(struct sib_sm *sm, const struct sib_disc *d, const uint16_t *lids)
{
	struct sib_sa_state *s = sib_sa_state(sm);
	unsigned nports = 0;

	if (!s)
		return;
	nodes_free(s);
	s->have_nodes = true;
	for (unsigned i = 0; i < d->nnodes; i++)
		nports += d->node[i].ni.NumPorts + 1u;
	s->node_recs = calloc(d->nnodes ? d->nnodes : 1, NODE_RECORD_BYTES);
	s->port_recs = calloc(nports ? nports : 1, PORT_INFO_RECORD_BYTES);
	if (!s->node_recs || !s->port_recs) {
		nodes_free(s);
		return;
	}
	for (unsigned i = 0; i < d->nnodes; i++) {
		const struct sib_disc_node *n = &d->node[i];
		bool sw = n->ni.NodeType == IB_NODE_TYPE_SWITCH;
		uint8_t *r = s->node_recs + (size_t)s->n_node_recs * NODE_RECORD_BYTES;

		if (!lids[i])
			continue;
		r[0] = (uint8_t)(lids[i] >> 8);
		r[1] = (uint8_t)lids[i];
		ib_node_info_encode(&n->ni, r + 4);
		memcpy(r + 4 + IB_NODE_INFO_BYTES, n->desc, strnlen(n->desc, IB_NODE_DESCRIPTION_BYTES));
		s->n_node_recs++;
		/* A switch's ports 0..N, a CA's port: each with the node's LID
		 * (a switch's ports share port 0's). */
		unsigned first = sw ? 0 : n->ni.LocalPortNum, last = sw ? n->ni.NumPorts : first;

		for (unsigned p = first; p <= last; p++) {
			struct ib_port_info pi;
			uint8_t *pr;

			if (!n->port[p].have_pi)
				continue;
			pi = n->port[p].pi;
			pi.M_Key = 0;
			if (!sw || p == 0) {
				pi.LID = lids[i];
				pi.MasterSMLID = SIB_SM_LID;
			}
			pr = s->port_recs + (size_t)s->n_port_recs * PORT_INFO_RECORD_BYTES;
			pr[0] = (uint8_t)(lids[i] >> 8);
			pr[1] = (uint8_t)lids[i];
			pr[2] = (uint8_t)p;
			ib_port_info_encode(&pi, pr + 4);
			s->n_port_recs++;
		}
	}
}

void sib_sa_nodes_free(struct sib_sa_state *s)
{
	nodes_free(s);
}

/* Get (one record, else NO_RECORDS or TOO_MANY_RECORDS) or GetTable. */
static void lookup(struct sib_sm *sm, const struct sib_mad_addr *a,
		   const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		   const uint8_t *recs, unsigned nrecs, unsigned rec_bytes, const struct comp *c,
		   unsigned ncomp, int any_bits_comp)
{
	unsigned stride = ib_sa_attribute_offset(rec_bytes) * 8u, n = 0;
	uint8_t *out = calloc(nrecs ? nrecs : 1, stride);

	if (!out) {
		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_NO_RESOURCES,
			       NULL, 0, 0);
		return;
	}
	for (unsigned i = 0; i < nrecs; i++) {
		const uint8_t *r = recs + (size_t)i * rec_bytes;

		if (matches(r, m->SubnAdmData, m->ComponentMask, c, ncomp, any_bits_comp))
			memcpy(out + (size_t)n++ * stride, r, rec_bytes);
	}
	if (method == IB_MAD_METHOD_GET)
		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
			       n == 0	? IB_SA_STATUS_NO_RECORDS
			       : n > 1 ? IB_SA_STATUS_TOO_MANY_RECORDS
				       : 0,
			       n == 1 ? out : NULL, n == 1 ? stride : 0, n == 1);
	else
		sib_sa_send_table(sm, a, from, m, out, stride, n);
	free(out);
}

bool sib_sa_nodes_query(struct sib_sm *sm, const struct sib_mad_addr *a,
			const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method)
{
	struct sib_sa_state *s = sm->sa;

	if (!s || !s->have_nodes ||
	    (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_GET_TABLE))
		return false;
	if (m->hdr.AttributeID == IB_SA_ATTR_NODE_RECORD)
		lookup(sm, a, from, m, method, s->node_recs, s->n_node_recs, NODE_RECORD_BYTES,
		       node_comps, sizeof(node_comps) / sizeof(node_comps[0]), -1);
	else if (m->hdr.AttributeID == IB_SA_ATTR_PORT_INFO_RECORD)
		lookup(sm, a, from, m, method, s->port_recs, s->n_port_recs,
		       PORT_INFO_RECORD_BYTES, port_comps, sizeof(port_comps) / sizeof(port_comps[0]),
		       PIR_COMP_CAPABILITY_MASK);
	else
		return false;
	return true;
}

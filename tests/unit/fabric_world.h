/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A fabric in one test process: the switches of a topology file
 * (fabric/switch.c) and its CAs, with the test as every cable.  A CA
 * answers directed-route SMPs for itself (NodeInfo, NodeDescription,
 * PortInfo Get and Set) as an HCA's agent would; a packet is carried
 * hop by hop until it lands at a CA or is dropped.
 *
 * Include after <cmocka.h>, fabric/switch.c and fabric/topology.c.
 */
#ifndef SIB_TESTS_FABRIC_WORLD_H
#define SIB_TESTS_FABRIC_WORLD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgmt/mad_packet.h"

enum { WORLD_MAX_NODES = 64 };

struct world {
	struct sib_topo topo;
	struct sib_switch sw[WORLD_MAX_NODES];
	int sw_of[WORLD_MAX_NODES];		 /* node -> switch index, -1 for a CA */
	struct ib_port_info ca_pi[WORLD_MAX_NODES]; /* a CA's port 1 */
	unsigned smps_carried;			 /* DR SMP hops, both ways */
};

/* A fabric from a topology file of tests/fabric/, or from text. */
static void world_init(struct world *w, const char *file, const char *text)
{
	char path[512], err[256];
	const char *top = getenv("SOFTIB_TOP");
	unsigned ns = 0;

	memset(w, 0, sizeof(*w));
	snprintf(path, sizeof(path), "%s/tests/fabric/%s", top ? top : ".", file ? file : "");
	if (file ? sib_topo_load(&w->topo, path, err, sizeof(err))
		 : sib_topo_parse(&w->topo, text, "fabric", NULL, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(w->topo.nnodes <= WORLD_MAX_NODES);
	for (unsigned n = 0; n < w->topo.nnodes; n++) {
		const struct sib_topo_node *t = &w->topo.node[n];

		w->sw_of[n] = -1;
		if (t->type != SIB_TOPO_SWITCH) {
			w->ca_pi[n].LocalPortNum = 1;
			w->ca_pi[n].PortState = t->port[1].peer >= 0 ? IB_PORT_STATE_INIT
								      : IB_PORT_STATE_DOWN;
			w->ca_pi[n].PortPhysicalState = t->port[1].peer >= 0 ? IB_PORT_PHYS_LINK_UP
									     : IB_PORT_PHYS_POLLING;
			continue;
		}
		assert_int_equal(sib_switch_init(&w->sw[ns], t), 0);
		w->sw_of[n] = (int)ns++;
		for (unsigned p = 1; p <= t->nports; p++) {
			int peer = t->port[p].peer;

			sib_switch_link(&w->sw[w->sw_of[n]], p, peer >= 0);
			w->sw[w->sw_of[n]].port[p].edge =
				peer >= 0 && w->topo.node[peer].type != SIB_TOPO_SWITCH;
		}
	}
}

static void world_free(struct world *w)
{
	for (unsigned n = 0; n < w->topo.nnodes; n++)
		if (w->sw_of[n] >= 0)
			sib_switch_free(&w->sw[w->sw_of[n]]);
	sib_topo_free(&w->topo);
}

static int world_node(const struct world *w, const char *id)
{
	int n = sib_topo_find(&w->topo, id);

	assert_true(n >= 0);
	return n;
}

/* CA `ca` answers a DR SMP that ends there (in pkt, rewritten in place);
 * returns the port the answer leaves by, 0 when there is none. */
static unsigned world_ca_answers(struct world *w, int ca, unsigned in_port, uint8_t *pkt,
				 size_t *len)
{
	const struct sib_topo_node *t = &w->topo.node[ca];
	struct ib_packet p;
	struct sib_mad_addr a;
	const uint8_t *in;
	uint8_t mad[IB_MAD_BYTES];
	struct ib_dr_smp dr;
	const char *why;
	unsigned out = 0;

	assert_int_equal(ib_packet_decode(pkt, *len, &p), IB_PKT_OK);
	in = sib_mgmt_parse(&p, &a);
	if (!in || in[1] != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return 0;
	ib_dr_smp_decode(&dr, in);
	if (ib_dr_smp_arrive(&dr, false, t->nports, in_port, &out, &why) != IB_DR_DELIVER ||
	    dr.D)
		return 0;
	dr.Status = 0;
	switch (dr.AttributeID) {
	case IB_SMP_ATTR_NODE_INFO: {
		struct ib_node_info ni = {
			.BaseVersion = 1,
			.ClassVersion = 1,
			.NodeType = IB_NODE_TYPE_CA,
			.NumPorts = (uint8_t)t->nports,
			.SystemImageGUID = t->sys_image_guid,
			.NodeGUID = t->node_guid,
			.PortGUID = sib_topo_port_guid(t, in_port),
			.PartitionCap = 32,
			.LocalPortNum = (uint8_t)in_port,
		};
		ib_node_info_encode(&ni, dr.SMPData);
		break;
	}
	case IB_SMP_ATTR_NODE_DESCRIPTION:
		memset(dr.SMPData, 0, sizeof(dr.SMPData));
		memcpy(dr.SMPData, t->desc, strlen(t->desc));
		break;
	case IB_SMP_ATTR_PORT_INFO: {
		struct ib_port_info *pi = &w->ca_pi[ca];

		if (dr.AttributeModifier != 1) {
			dr.Status = IB_MAD_STATUS_INVALID_FIELD;
			break;
		}
		if ((dr.R << 7 | dr.Method) == IB_MAD_METHOD_SET) {
			struct ib_port_info in_pi;

			ib_port_info_decode(&in_pi, dr.SMPData);
			if (in_pi.LID == 0 || in_pi.LID >= 0xc000) { /* as an HCA's agent */
				dr.Status = IB_MAD_STATUS_INVALID_FIELD;
				break;
			}
			pi->LID = in_pi.LID;
			pi->MasterSMLID = in_pi.MasterSMLID;
			if (in_pi.PortState > IB_PORT_STATE_INIT)
				pi->PortState = in_pi.PortState;
		}
		ib_port_info_encode(pi, dr.SMPData);
		break;
	}
	default:
		dr.Status = IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	}
	dr.R = 1;
	dr.Method = IB_MAD_METHOD_GET_RESP & 0x7f;
	dr.D = 1;
	if (ib_dr_smp_depart(&dr, &out, &why) != IB_DR_FORWARD)
		return 0;
	memcpy(mad, in, sizeof(mad));
	ib_dr_smp_encode(&dr, mad);
	*len = sib_mgmt_build(&a, mad, pkt, IB_MAX_PACKET);
	return out;
}

/* Carry a packet out of node `from` by `port` until it lands at a CA (its
 * node index; a DR request is answered there and carried on) or is dropped
 * (-1).  The packet ends in pkt/len. */
static int world_carry(struct world *w, int from, unsigned port, uint8_t *pkt, size_t *len)
{
	for (int hops = 0; hops < 256; hops++) {
		const struct sib_topo_link *l = &w->topo.node[from].port[port];
		struct sib_switch_out out;
		struct ib_packet p;
		uint8_t buf[IB_MAX_PACKET];
		struct sib_switch *s;

		if (l->peer < 0)
			return -1;
		assert_int_equal(ib_packet_decode(pkt, *len, &p), IB_PKT_OK);
		if (p.lrh.VL == 15)
			w->smps_carried++;
		if (w->sw_of[l->peer] < 0) {
			unsigned back = world_ca_answers(w, l->peer, l->peer_port, pkt, len);

			if (!back)
				return l->peer;
			from = l->peer;
			port = back;
			continue;
		}
		s = &w->sw[w->sw_of[l->peer]];
		sib_switch_route(s, l->peer_port, &p, *len, buf, &out);
		if (out.to_port0) {
			struct ib_packet q;

			assert_int_equal(ib_packet_decode(out.rewritten ? buf : pkt, out.len, &q),
					 IB_PKT_OK);
			if (!sib_switch_mgmt(s, l->peer_port, &q, buf, &out)) {
				print_message("port 0 of %s sent nothing (%s)\n", s->node->id,
					      s->last_drop ? s->last_drop : "no drop");
				return -1;
			}
		}
		if (out.nports != 1) {
			print_message("%s sent it out %u ports (%s)\n", s->node->id, out.nports,
				      s->last_drop ? s->last_drop : "no drop");
			return -1;
		}
		if (out.rewritten) {
			memcpy(pkt, buf, out.len);
			*len = out.len;
		}
		sib_switch_sent(s, out.port[0], pkt, *len);
		from = l->peer;
		port = out.port[0];
	}
	fail_msg("a packet went round in circles");
	return -1;
}

/* A DR SMP along path[0..hops) (the first hop is the sender's own port),
 * as the SM sends it (mgmt/mad_packet.h, sib_dr_smp_build). */
static size_t world_dr_smp(uint8_t *pkt, uint8_t method, uint16_t attr, uint32_t mod,
			   const uint8_t *path, unsigned hops, const uint8_t *data, uint64_t m_key,
			   uint64_t tid)
{
	uint8_t initial[IB_SMP_MAX_HOPS + 1] = { 0 };
	unsigned out;
	size_t len;

	memcpy(&initial[1], path, hops);
	len = sib_dr_smp_build(method, attr, mod, initial, hops, data, m_key, tid, pkt,
			       IB_MAX_PACKET, &out);
	assert_true(len > 0);
	return len;
}

/* Send a DR SMP from CA `sm` and take the response that comes back to it
 * (false when none does). */
static bool world_dr(struct world *w, int sm, const uint8_t *path, unsigned hops, uint8_t method,
		     uint16_t attr, uint32_t mod, const uint8_t *data, uint64_t m_key,
		     struct ib_dr_smp *resp)
{
	uint8_t pkt[IB_MAX_PACKET];
	size_t len = world_dr_smp(pkt, method, attr, mod, path, hops, data, m_key, 0x1234);
	struct ib_packet p;
	struct sib_mad_addr a;
	const uint8_t *mad;
	const char *why;
	unsigned out;

	if (world_carry(w, sm, path[0], pkt, &len) != sm)
		return false;
	assert_int_equal(ib_packet_decode(pkt, len, &p), IB_PKT_OK);
	mad = sib_mgmt_parse(&p, &a);
	assert_non_null(mad);
	ib_dr_smp_decode(resp, mad);
	assert_int_equal(ib_dr_smp_arrive(resp, false, w->topo.node[sm].nports, path[0], &out, &why),
			 IB_DR_DELIVER);
	assert_int_equal(resp->D, 1);
	assert_int_equal(resp->R, 1);
	assert_int_equal(resp->TransactionID, 0x1234);
	return true;
}

#endif

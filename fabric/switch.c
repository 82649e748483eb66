/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One switch: forwarding by LID, MLID and directed route, and the agents
 * of its management port 0 (switch.h).
 */
#include "fabric/switch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "mgmt/mad_packet.h"
#include "wire/mad.h"

enum { MLID_BASE = 0xc000 };

static bool mlid(uint16_t dlid)
{
	return dlid >= MLID_BASE && dlid != SIB_LID_PERMISSIVE;
}

static const char *const drop_names[SIB_DROP_COUNT] = {
	[SIB_DROP_NO_ROUTE] = "no_route",     [SIB_DROP_LOOP] = "loop",
	[SIB_DROP_PORT_STATE] = "port_state", [SIB_DROP_DR] = "directed_route",
	[SIB_DROP_MALFORMED] = "malformed",   [SIB_DROP_M_KEY] = "m_key",
	[SIB_DROP_SLID] = "slid",
};

const char *sib_switch_drop_name(enum sib_switch_drop d)
{
	return (unsigned)d < SIB_DROP_COUNT ? drop_names[d] : "unknown";
}

static void port_defaults(struct sib_switch_port *sp, unsigned p, const struct sib_topo_link *l)
{
	struct ib_port_info *pi = &sp->pi;

	memset(sp, 0, sizeof(*sp));
	pi->LocalPortNum = (uint8_t)p;
	pi->LinkWidthSupported = 1 | 2 | 8;
	pi->LinkWidthEnabled = l && l->width ? l->width : 2;
	pi->LinkWidthActive = pi->LinkWidthEnabled & 8 ? 8 : pi->LinkWidthEnabled & 2 ? 2 : 1;
	pi->LinkSpeedSupported = 1 | 2 | 4;
	pi->LinkSpeedEnabled = l && l->speed ? l->speed : 4;
	pi->LinkSpeedActive = pi->LinkSpeedEnabled & 4 ? 4 : pi->LinkSpeedEnabled & 2 ? 2 : 1;
	pi->LinkSpeedExtEnabled = l ? l->ext_speed : 0;
	pi->PortState = p ? IB_PORT_STATE_DOWN : IB_PORT_STATE_ACTIVE;
	pi->PortPhysicalState = p ? IB_PORT_PHYS_POLLING : IB_PORT_PHYS_LINK_UP;
	pi->LinkDownDefaultState = IB_PORT_PHYS_POLLING;
	pi->MTUCap = 5; /* 4096 */
	pi->NeighborMTU = 5;
	pi->VLCap = 1; /* VL0: virtual lanes come with their own issue */
	pi->OperationalVLs = 1;
	pi->GUIDCap = 1;
	pi->SubnetTimeOut = 18;
	pi->RespTimeValue = 16; /* 4.096 us * 2^16, about 268 ms */
	pi->LocalPhyErrors = 15;
	pi->OverrunErrors = 15;
	/* MulticastFDBTop bounds the MFT (below 0xc000: no entry in use), so
	 * port 0 says it has it: OpenSM sets it only then. */
	if (!p)
		pi->CapabilityMask = IB_PORT_CAP_IS_TRAP_SUP | IB_PORT_CAP_IS_SYS_IMAGE_GUID_SUP |
				     IB_PORT_CAP_IS_MCAST_FDB_TOP_SUP;
}

int sib_switch_init(struct sib_switch *sw, const struct sib_topo_node *node)
{
	memset(sw, 0, sizeof(*sw));
	sw->node = node;
	sw->nports = node->nports;
	sw->mft_positions = (node->nports + IB_MFT_PORTS_PER_MASK) / IB_MFT_PORTS_PER_MASK;
	sw->mft = calloc(SIB_SWITCH_MFT_CAP, sizeof(*sw->mft));
	sw->port = calloc(node->nports + 1u, sizeof(*sw->port));
	if (!sw->mft || !sw->port) {
		sib_switch_free(sw);
		return -ENOMEM;
	}
	memset(sw->lft, IB_LFT_PORT_NONE, sizeof(sw->lft));
	for (unsigned p = 0; p <= sw->nports; p++)
		port_defaults(&sw->port[p], p, p ? &node->port[p] : NULL);
	sw->si.LinearFDBCap = SIB_SWITCH_LFT_CAP;
	sw->si.MulticastFDBCap = SIB_SWITCH_MFT_CAP;
	sw->si.LinearFDBTop = 0;
	sw->si.DefaultPort = IB_LFT_PORT_NONE;
	sw->si.DefaultMulticastPrimaryPort = IB_LFT_PORT_NONE;
	sw->si.DefaultMulticastNotPrimaryPort = IB_LFT_PORT_NONE;
	sw->si.LifeTimeValue = SIB_SWITCH_LIFETIME;
	sw->si.PartitionEnforcementCap = IB_P_KEY_TABLE_BLOCK;
	sw->si.EnhancedPort0 = node->enhanced_port0 ? 1 : 0;
	sw->si.MulticastFDBTop = MLID_BASE - 1; /* below 0xc000: no entry in use */
	sw->p_keys[0] = 0xffff;
	return 0;
}

void sib_switch_free(struct sib_switch *sw)
{
	free(sw->mft);
	free(sw->port);
	sw->mft = NULL;
	sw->port = NULL;
}

void sib_switch_link(struct sib_switch *sw, unsigned p, bool up)
{
	struct sib_switch_port *sp;

	if (p == 0 || p > sw->nports)
		return;
	sp = &sw->port[p];
	if (sp->cabled == up)
		return;
	sp->cabled = up;
	if (up) {
		sp->pi.PortPhysicalState = IB_PORT_PHYS_LINK_UP;
		sp->pi.PortState = IB_PORT_STATE_INIT;
	} else {
		sp->pi.PortPhysicalState = IB_PORT_PHYS_POLLING;
		sp->pi.PortState = IB_PORT_STATE_DOWN;
		if (sp->pc.LinkDownedCounter < 0xff)
			sp->pc.LinkDownedCounter++;
	}
	sw->si.PortStateChange = 1; /* IBA 14.2.5.4: until the SM clears it */
	sw->trap_repressed = false;  /* and the SM hears of it (trap 128) */
	sw->trap_sent_ns = 0;
}

static void drop(struct sib_switch *sw, unsigned in_port, enum sib_switch_drop why,
		 const char *rule, struct sib_switch_out *out)
{
	sw->drops[why]++;
	sw->last_drop = rule;
	if (in_port && in_port <= sw->nports &&
	    sw->port[in_port].pc.PortRcvSwitchRelayErrors < 0xffff)
		sw->port[in_port].pc.PortRcvSwitchRelayErrors++;
	out->nports = 0;
	out->to_port0 = false;
}

/* Data leaves only by an Active port; an SMP by any port whose link is up
 * (IBA 7.2: Init and Armed carry SMPs). */
static bool may_leave(const struct sib_switch *sw, unsigned p, bool vl15)
{
	const struct ib_port_info *pi = &sw->port[p].pi;

	return vl15 ? pi->PortState >= IB_PORT_STATE_INIT : pi->PortState == IB_PORT_STATE_ACTIVE;
}

static void route_lid(struct sib_switch *sw, unsigned in_port, uint16_t dlid, bool vl15,
		      struct sib_switch_out *out)
{
	unsigned p;

	if (mlid(dlid)) {
		unsigned idx = dlid - MLID_BASE;

		if (idx >= SIB_SWITCH_MFT_CAP || dlid > sw->si.MulticastFDBTop)
			return drop(sw, in_port, SIB_DROP_NO_ROUTE, "an MLID past MulticastFDBTop",
				    out);
		for (p = 1; p <= sw->nports; p++) {
			uint16_t mask = sw->mft[idx][p / IB_MFT_PORTS_PER_MASK];

			if ((mask >> (p % IB_MFT_PORTS_PER_MASK) & 1) && p != in_port &&
			    may_leave(sw, p, vl15))
				out->port[out->nports++] = (uint8_t)p;
		}
		if (!out->nports && !(sw->mft[idx][0] & 1))
			return drop(sw, in_port, SIB_DROP_NO_ROUTE, "no MFT port for the MLID", out);
		return;
	}
	if (dlid == 0 || dlid >= SIB_SWITCH_LFT_CAP || dlid > sw->si.LinearFDBTop ||
	    sw->lft[dlid] == IB_LFT_PORT_NONE)
		return drop(sw, in_port, SIB_DROP_NO_ROUTE, "no LFT entry for the DLID (IBA 18.2.4.3)",
			    out);
	p = sw->lft[dlid];
	if (p == 0) {
		out->to_port0 = true;
		return;
	}
	if (p > sw->nports)
		return drop(sw, in_port, SIB_DROP_NO_ROUTE, "an LFT entry past the last port", out);
	if (p == in_port)
		return drop(sw, in_port, SIB_DROP_LOOP, "the LFT sends it back out its input port",
			    out);
	if (!may_leave(sw, p, vl15))
		return drop(sw, in_port, SIB_DROP_PORT_STATE, "its output port is not Active", out);
	out->port[out->nports++] = (uint8_t)p;
}

/* A DR SMP one hop on: arrive() at an input port, depart() from port 0. */
static void route_dr(struct sib_switch *sw, unsigned in_port, const struct ib_packet *pkt,
		     uint8_t *buf, struct sib_switch_out *out)
{
	struct sib_mad_addr a;
	const uint8_t *mad = sib_mgmt_parse(pkt, &a);
	uint8_t copy[IB_MAD_BYTES];
	struct ib_dr_smp dr;
	enum ib_dr_action act;
	const char *why = NULL;
	unsigned p = 0;

	if (!mad || mad[1] != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE || a.DestQP != SIB_QP0)
		return drop(sw, in_port, SIB_DROP_MALFORMED,
			    "to the permissive LID but not a directed-route SMP", out);
	ib_dr_smp_decode(&dr, mad);
	act = in_port ? ib_dr_smp_arrive(&dr, true, sw->nports, in_port, &p, &why)
		      : ib_dr_smp_depart(&dr, &p, &why);
	if (act == IB_DR_DROP)
		return drop(sw, in_port, SIB_DROP_DR, why, out);
	memcpy(copy, mad, sizeof(copy));
	ib_dr_smp_encode(&dr, copy);
	out->len = sib_mgmt_build(&a, copy, buf, IB_MAX_PACKET);
	out->rewritten = true;
	if (act == IB_DR_DELIVER) {
		out->to_port0 = true;
		return;
	}
	if (p == 0 || p > sw->nports || !sw->port[p].cabled || !may_leave(sw, p, true))
		return drop(sw, in_port, SIB_DROP_PORT_STATE, "the directed route leads to a port "
			    "that is down", out);
	out->port[out->nports++] = (uint8_t)p;
}

/* The edge check (switch.h): the LFT routes the SLID back out of in_port;
 * the permissive SLID only on a directed-route SMP (VL15). */
static bool slid_lives_behind(const struct sib_switch *sw, unsigned in_port,
			      const struct ib_packet *pkt)
{
	uint16_t slid = pkt->lrh.SLID;

	if (slid == SIB_LID_PERMISSIVE)
		return pkt->lrh.VL == 15 && pkt->lrh.DLID == SIB_LID_PERMISSIVE;
	return slid && slid < SIB_SWITCH_LFT_CAP && slid <= sw->si.LinearFDBTop &&
	       sw->lft[slid] == in_port;
}

void sib_switch_route(struct sib_switch *sw, unsigned in_port, const struct ib_packet *pkt,
		      size_t raw_len, uint8_t *buf, struct sib_switch_out *out)
{
	bool vl15 = pkt->lrh.VL == 15;
	uint16_t dlid = pkt->lrh.DLID, my_lid = sw->port[0].pi.LID;

	memset(out, 0, offsetof(struct sib_switch_out, port));
	out->len = raw_len;
	if (in_port) {
		struct sib_switch_port *sp = &sw->port[in_port];

		sp->rcv_pkts++;
		sp->mcast_rcv_pkts += mlid(dlid);
		sp->rcv_data += raw_len / 4;
		sp->pc.PortRcvPkts = sp->rcv_pkts > UINT32_MAX ? UINT32_MAX : (uint32_t)sp->rcv_pkts;
		sp->pc.PortRcvData = sp->rcv_data > UINT32_MAX ? UINT32_MAX : (uint32_t)sp->rcv_data;
		/* IBA 7.2: a port takes data only once Armed or Active */
		if (!vl15 && sp->pi.PortState < IB_PORT_STATE_ARMED)
			return drop(sw, in_port, SIB_DROP_PORT_STATE, "data into a port not yet Armed",
				    out);
		if (sp->edge && !slid_lives_behind(sw, in_port, pkt))
			return drop(sw, in_port, SIB_DROP_SLID,
				    "an SLID that does not live behind the CA port it came in by",
				    out);
		/* IBA 7.2: an Armed port goes Active when a packet other than
		 * VL15 arrives: its neighbour is Active, so the SM's Set for
		 * this end is on its way.  (A CA the SM activated first sent
		 * an SA request, and the answer's first segment found this
		 * port still Armed and was dropped.) */
		if (!vl15 && sp->pi.PortState == IB_PORT_STATE_ARMED)
			sp->pi.PortState = IB_PORT_STATE_ACTIVE;
	}
	if (vl15 && dlid == SIB_LID_PERMISSIVE)
		return route_dr(sw, in_port, pkt, buf, out);
	if (my_lid && dlid == my_lid) {
		out->to_port0 = true;
		return;
	}
	route_lid(sw, in_port, dlid, vl15, out);
}

bool sib_switch_trap(struct sib_switch *sw, uint64_t now_ns, uint8_t *buf,
		     struct sib_switch_out *out)
{
	const struct ib_port_info *pi = &sw->port[0].pi;
	struct ib_notice n;
	struct ib_smp smp;
	struct sib_mad_addr a;
	struct ib_packet p;
	uint8_t mad[IB_MAD_BYTES], copy[IB_MAX_PACKET];
	size_t len;

	memset(out, 0, offsetof(struct sib_switch_out, port));
	if (!sw->si.PortStateChange || sw->trap_repressed || !pi->LID || !pi->MasterSMLID ||
	    (sw->trap_sent_ns && now_ns - sw->trap_sent_ns < 1000000000ull))
		return false;
	memset(&n, 0, sizeof(n));
	n.IsGeneric = 1;
	n.Type = IB_NOTICE_TYPE_URGENT;
	n.ProducerType = 2; /* a switch */
	n.TrapNumber = IB_TRAP_LINK_STATE_CHANGE;
	n.IssuerLID = pi->LID;
	sw->notice_count = (uint16_t)((sw->notice_count + 1) & 0x7fff);
	n.NoticeCount = sw->notice_count;
	ib_bits_put(n.DataDetails, 16, 16, pi->LID); /* LIDADDR: the switch */
	memset(&smp, 0, sizeof(smp));
	smp.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	smp.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp.hdr.ClassVersion = IB_SMP_CLASS_VERSION;
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP);
	smp.hdr.TransactionID = sw->node->node_guid << 16 | sw->notice_count;
	smp.hdr.AttributeID = IB_SMP_ATTR_NOTICE;
	ib_notice_encode(&n, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, pi->MasterSMLID, pi->LID);
	len = sib_mgmt_build(&a, mad, buf, IB_MAX_PACKET);
	if (!len)
		return false;
	memcpy(copy, buf, len);
	if (ib_packet_decode(copy, len, &p) != IB_PKT_OK)
		return false;
	sib_switch_route(sw, 0, &p, len, buf, out);
	out->len = len;
	out->rewritten = true; /* the trap is in buf */
	sw->trap_sent_ns = now_ns;
	sw->traps_sent++;
	return out->nports > 0;
}

void sib_switch_sent(struct sib_switch *sw, unsigned p, const uint8_t *pkt, size_t len)
{
	struct sib_switch_port *sp;

	if (p == 0 || p > sw->nports)
		return;
	sp = &sw->port[p];
	sp->xmit_pkts++;
	sp->mcast_xmit_pkts += len >= 4 && mlid((uint16_t)(pkt[2] << 8 | pkt[3]));
	sp->xmit_data += len / 4;
	sp->pc.PortXmitPkts = sp->xmit_pkts > UINT32_MAX ? UINT32_MAX : (uint32_t)sp->xmit_pkts;
	sp->pc.PortXmitData = sp->xmit_data > UINT32_MAX ? UINT32_MAX : (uint32_t)sp->xmit_data;
}

/* ---------------------------------------------------------------- port 0 */

/* IBA 14.2.4.1: the M_Key of port 0 guards the switch.  Gets pass without
 * it at protection 0 and 1 (1 hides the key), Sets never. */
static bool m_key_ok(struct sib_switch *sw, uint8_t method, uint64_t key, bool *hide)
{
	struct ib_port_info *pi = &sw->port[0].pi;

	*hide = false;
	if (!pi->M_Key || key == pi->M_Key)
		return true;
	if (method == IB_MAD_METHOD_GET && pi->M_KeyProtectBits <= 1) {
		*hide = pi->M_KeyProtectBits == 1;
		return true;
	}
	if (pi->M_KeyViolations < 0xffff)
		pi->M_KeyViolations++;
	return false;
}

/* PortInfo Set on port p (IBA 14.2.5.6): the fields an SM writes.  Armed
 * only from Init, Active only from Armed; PortState 0 and 2 and any
 * PortPhysicalState change nothing (an SM writes back what it read). */
static uint16_t port_info_set(struct sib_switch *sw, unsigned p, const struct ib_port_info *in)
{
	struct ib_port_info *pi = &sw->port[p].pi;
	uint8_t st = p ? in->PortState : 0; /* base port 0 is always Active */

	if (st == IB_PORT_STATE_ARMED && pi->PortState != IB_PORT_STATE_INIT &&
	    pi->PortState != IB_PORT_STATE_ARMED)
		return IB_MAD_STATUS_INVALID_FIELD;
	if (st == IB_PORT_STATE_ACTIVE && pi->PortState != IB_PORT_STATE_ARMED &&
	    pi->PortState != IB_PORT_STATE_ACTIVE)
		return IB_MAD_STATUS_INVALID_FIELD;
	if (st > IB_PORT_STATE_ACTIVE)
		return IB_MAD_STATUS_INVALID_FIELD;
	if (p == 0) {
		pi->M_Key = in->M_Key;
		pi->GidPrefix = in->GidPrefix;
		pi->LID = in->LID;
		pi->MasterSMLID = in->MasterSMLID;
		pi->M_KeyLeasePeriod = in->M_KeyLeasePeriod;
		pi->M_KeyProtectBits = in->M_KeyProtectBits;
		pi->LMC = in->LMC;
		pi->MasterSMSL = in->MasterSMSL;
		pi->SubnetTimeOut = in->SubnetTimeOut;
		return 0;
	}
	if (st == IB_PORT_STATE_DOWN) {
		/* the link retrains: back to Init while the cable is there */
		pi->PortState = sw->port[p].cabled ? IB_PORT_STATE_INIT : IB_PORT_STATE_DOWN;
		sw->si.PortStateChange = 1;
	} else if (st > IB_PORT_STATE_INIT) {
		pi->PortState = st;
	}
	if (in->LinkWidthEnabled)
		pi->LinkWidthEnabled = in->LinkWidthEnabled;
	if (in->LinkSpeedEnabled)
		pi->LinkSpeedEnabled = in->LinkSpeedEnabled;
	if (in->NeighborMTU)
		pi->NeighborMTU = in->NeighborMTU < pi->MTUCap ? in->NeighborMTU : pi->MTUCap;
	if (in->OperationalVLs)
		pi->OperationalVLs = in->OperationalVLs <= pi->VLCap ? in->OperationalVLs
								      : pi->VLCap;
	pi->HOQLife = in->HOQLife;
	pi->VLStallCount = in->VLStallCount;
	return 0;
}

static uint16_t sma_attr(struct sib_switch *sw, unsigned in_port, uint8_t method, uint16_t attr,
			 uint32_t mod, bool hide, const uint8_t *data, uint8_t *resp)
{
	bool set = method == IB_MAD_METHOD_SET;
	const struct sib_topo_node *n = sw->node;

	switch (attr) {
	case IB_SMP_ATTR_NODE_DESCRIPTION: {
		struct ib_node_description d;

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		memset(&d, 0, sizeof(d));
		memcpy(d.NodeString, n->desc, strnlen(n->desc, sizeof(d.NodeString)));
		ib_node_description_encode(&d, resp);
		return 0;
	}
	case IB_SMP_ATTR_NODE_INFO: {
		struct ib_node_info ni = {
			.BaseVersion = IB_MAD_BASE_VERSION,
			.ClassVersion = IB_SMP_CLASS_VERSION,
			.NodeType = IB_NODE_TYPE_SWITCH,
			.NumPorts = (uint8_t)sw->nports,
			.SystemImageGUID = n->sys_image_guid,
			.NodeGUID = n->node_guid,
			.PortGUID = n->node_guid,
			.PartitionCap = IB_P_KEY_TABLE_BLOCK,
			.DeviceID = n->device_id,
			.LocalPortNum = (uint8_t)in_port,
			.VendorID = n->vendor_id,
		};

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		ib_node_info_encode(&ni, resp);
		return 0;
	}
	case IB_SMP_ATTR_SWITCH_INFO:
		if (set) {
			struct ib_switch_info in;

			ib_switch_info_decode(&in, data);
			if (in.LinearFDBTop >= SIB_SWITCH_LFT_CAP ||
			    (in.MulticastFDBTop >= MLID_BASE + SIB_SWITCH_MFT_CAP &&
			     in.MulticastFDBTop != 0xffff))
				return IB_MAD_STATUS_INVALID_FIELD;
			sw->si.LinearFDBTop = in.LinearFDBTop;
			sw->si.DefaultPort = in.DefaultPort;
			sw->si.DefaultMulticastPrimaryPort = in.DefaultMulticastPrimaryPort;
			sw->si.DefaultMulticastNotPrimaryPort = in.DefaultMulticastNotPrimaryPort;
			sw->si.LifeTimeValue = in.LifeTimeValue;
			if (in.PortStateChange) /* writing 1 clears it */
				sw->si.PortStateChange = 0;
			sw->si.MulticastFDBTop = in.MulticastFDBTop == 0xffff ? MLID_BASE - 1
									       : in.MulticastFDBTop;
		}
		ib_switch_info_encode(&sw->si, resp);
		return 0;
	case IB_SMP_ATTR_PORT_INFO: {
		struct ib_port_info pi;

		if (mod > sw->nports)
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set) {
			uint16_t st;

			ib_port_info_decode(&pi, data);
			st = port_info_set(sw, mod, &pi);
			if (st)
				return st;
		}
		pi = sw->port[mod].pi;
		pi.LocalPortNum = (uint8_t)in_port; /* IBA 14.2.5.6: the port it came in by */
		if (hide)
			pi.M_Key = 0;
		if (mod) { /* only port 0 has a LID, a key and an SM */
			pi.LID = sw->port[0].pi.LID;
			pi.M_Key = 0;
		}
		ib_port_info_encode(&pi, resp);
		return 0;
	}
	case IB_SMP_ATTR_P_KEY_TABLE: {
		struct ib_p_key_table t;

		if ((mod & 0xffff) != 0 || (mod >> 16) > sw->nports)
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set) {
			ib_p_key_table_decode(&t, data);
			memcpy(sw->p_keys, t.P_KeyTableBlock, sizeof(sw->p_keys));
		}
		memcpy(t.P_KeyTableBlock, sw->p_keys, sizeof(sw->p_keys));
		ib_p_key_table_encode(&t, resp);
		return 0;
	}
	case IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE: {
		/* IBA 14.2.5.8: input port in bits 15:8, output port in 7:0 */
		unsigned ip = (mod >> 8) & 0xff, op = mod & 0xff;

		if ((mod & 0xffff0000) || ip > sw->nports || op > sw->nports)
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set)
			memcpy(sw->port[op].sl2vl, data, IB_SL2VL_BYTES);
		memcpy(resp, sw->port[op].sl2vl, IB_SL2VL_BYTES);
		return 0;
	}
	case IB_SMP_ATTR_LINEAR_FORWARDING_TABLE: {
		struct ib_lft_block b;

		if (mod >= SIB_SWITCH_LFT_CAP / IB_LFT_BLOCK)
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set) {
			ib_lft_block_decode(&b, data);
			for (unsigned i = 0; i < IB_LFT_BLOCK; i++)
				if (b.Port[i] > sw->nports && b.Port[i] != IB_LFT_PORT_NONE)
					return IB_MAD_STATUS_INVALID_FIELD;
			memcpy(&sw->lft[mod * IB_LFT_BLOCK], b.Port, IB_LFT_BLOCK);
		}
		memcpy(b.Port, &sw->lft[mod * IB_LFT_BLOCK], IB_LFT_BLOCK);
		ib_lft_block_encode(&b, resp);
		return 0;
	}
	case IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE: {
		unsigned pos = ib_mft_mod_position(mod), blk = ib_mft_mod_block(mod);
		struct ib_mft_block b;

		if (pos >= sw->mft_positions || blk >= SIB_SWITCH_MFT_CAP / IB_MFT_BLOCK ||
		    (mod & 0x0ffffe00))
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set) {
			ib_mft_block_decode(&b, data);
			for (unsigned i = 0; i < IB_MFT_BLOCK; i++)
				sw->mft[blk * IB_MFT_BLOCK + i][pos] = b.PortMask[i];
		}
		for (unsigned i = 0; i < IB_MFT_BLOCK; i++)
			b.PortMask[i] = sw->mft[blk * IB_MFT_BLOCK + i][pos];
		ib_mft_block_encode(&b, resp);
		return 0;
	}
	default:
		return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	}
}

/* The PMA's ClassPortInfo (IBA 16.1.3.1, 13.4.8.1): PortCounters of one
 * port or all (AllPortSelect), and PortCountersExtended (ExtWidth). */
static uint16_t pma_class_port_info(uint8_t *resp)
{
	struct ib_class_port_info cpi = {
		.BaseVersion = IB_MAD_BASE_VERSION,
		.ClassVersion = IB_PERF_CLASS_VERSION,
		.CapabilityMask = IB_PERF_CAP_ALL_PORT_SELECT | IB_PERF_CAP_EXT_WIDTH,
		.RespTimeValue = 8,
	};

	ib_class_port_info_encode(&cpi, resp);
	return 0;
}

/* The ports PortSelect names: one, or all (0xff, AllPortSelect). */
static bool pma_ports(const struct sib_switch *sw, uint8_t sel, unsigned *first, unsigned *last)
{
	if (sel == 0xff) {
		*first = 1;
		*last = sw->nports;
		return true;
	}
	*first = *last = sel;
	return sel <= sw->nports;
}

/* A Set of PortCounters or PortCountersExtended clears both: the 32-bit
 * data counters follow the 64-bit ones. */
static void pma_clear(struct sib_switch *sw, unsigned first, unsigned last)
{
	for (unsigned p = first; p <= last; p++) {
		struct sib_switch_port *sp = &sw->port[p];

		memset(&sp->pc, 0, sizeof(sp->pc));
		sp->xmit_data = sp->rcv_data = sp->xmit_pkts = sp->rcv_pkts = 0;
		sp->mcast_xmit_pkts = sp->mcast_rcv_pkts = 0;
	}
}

/* PortCounters (IBA 16.1.4.10) of one port, or of all (PortSelect 0xff,
 * summed); a Set clears the port's counters. */
static uint16_t pma_counters(struct sib_switch *sw, uint8_t method, const uint8_t *data,
			     uint8_t *resp)
{
	struct ib_port_counters in, pc;
	unsigned first, last;

	ib_port_counters_decode(&in, data);
	if (!pma_ports(sw, in.PortSelect, &first, &last))
		return IB_MAD_STATUS_INVALID_FIELD;
	if (method == IB_MAD_METHOD_SET)
		pma_clear(sw, first, last);
	memset(&pc, 0, sizeof(pc));
	for (unsigned p = first; p <= last; p++) {
		const struct ib_port_counters *c = &sw->port[p].pc;

#define ADD(f, max) pc.f = (uint64_t)pc.f + c->f > (max) ? (max) : pc.f + c->f
		ADD(SymbolErrorCounter, 0xffff);
		ADD(LinkDownedCounter, 0xff);
		ADD(PortRcvErrors, 0xffff);
		ADD(PortRcvSwitchRelayErrors, 0xffff);
		ADD(PortXmitDiscards, 0xffff);
		ADD(VL15Dropped, 0xffff);
		ADD(PortXmitData, 0xffffffffu);
		ADD(PortRcvData, 0xffffffffu);
		ADD(PortXmitPkts, 0xffffffffu);
		ADD(PortRcvPkts, 0xffffffffu);
		ADD(PortXmitWait, 0xffffffffu);
#undef ADD
	}
	pc.PortSelect = in.PortSelect;
	pc.CounterSelect = in.CounterSelect;
	ib_port_counters_encode(&pc, resp);
	return 0;
}

/* PortCountersExtended (IBA 16.1.4.11): 64 bits, of one port or of all
 * (PortSelect 0xff, summed); a Set clears them. */
static uint16_t pma_counters_ext(struct sib_switch *sw, uint8_t method, const uint8_t *data,
				 uint8_t *resp)
{
	struct ib_port_counters_ext in, x;
	unsigned first, last;

	ib_port_counters_ext_decode(&in, data);
	if (!pma_ports(sw, in.PortSelect, &first, &last))
		return IB_MAD_STATUS_INVALID_FIELD;
	if (method == IB_MAD_METHOD_SET)
		pma_clear(sw, first, last);
	memset(&x, 0, sizeof(x));
	for (unsigned p = first; p <= last; p++) {
		const struct sib_switch_port *sp = &sw->port[p];

		x.PortXmitData += sp->xmit_data;
		x.PortRcvData += sp->rcv_data;
		x.PortXmitPkts += sp->xmit_pkts;
		x.PortRcvPkts += sp->rcv_pkts;
		x.PortUnicastXmitPkts += sp->xmit_pkts - sp->mcast_xmit_pkts;
		x.PortUnicastRcvPkts += sp->rcv_pkts - sp->mcast_rcv_pkts;
		x.PortMulticastXmitPkts += sp->mcast_xmit_pkts;
		x.PortMulticastRcvPkts += sp->mcast_rcv_pkts;
	}
	x.PortSelect = in.PortSelect;
	x.CounterSelect = in.CounterSelect;
	ib_port_counters_ext_encode(&x, resp);
	return 0;
}

bool sib_switch_mgmt(struct sib_switch *sw, unsigned in_port, const struct ib_packet *pkt,
		     uint8_t *buf, struct sib_switch_out *out)
{
	uint8_t mad[IB_MAD_BYTES], resp[IB_MAD_BYTES - IB_PERF_DATA_OFFSET];
	size_t rlen = IB_SMP_DATA_BYTES;
	const uint8_t *in;
	struct sib_mad_addr a, ra;
	struct ib_mad_hdr h;
	uint64_t key = 0;
	uint16_t status;
	unsigned off;
	bool hide = false, smp;

	memset(out, 0, offsetof(struct sib_switch_out, port));
	in = sib_mgmt_parse(pkt, &a);
	if (!in)
		return false;
	memcpy(mad, in, sizeof(mad));
	ib_mad_hdr_decode(&h, mad);
	if (h.BaseVersion != IB_MAD_BASE_VERSION || (h.Method & IB_MAD_METHOD_RESP))
		return false;
	if (h.Method == IB_MAD_METHOD_TRAP_REPRESS) {
		/* IBA 14.2.5.1: the SM heard our trap; no answer is defined */
		if ((h.MgmtClass == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
		     h.MgmtClass == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) &&
		    h.AttributeID == IB_SMP_ATTR_NOTICE &&
		    m_key_ok(sw, IB_MAD_METHOD_SET, ib_bits_get(mad, 192, 64), &hide))
			sw->trap_repressed = true;
		return false;
	}
	smp = h.MgmtClass == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE ||
	      h.MgmtClass == IB_MGMT_CLASS_SUBN_LID_ROUTED;
	if (smp) {
		key = ib_bits_get(mad, 192, 64);
		off = IB_SMP_DATA_OFFSET;
	} else if (h.MgmtClass == IB_MGMT_CLASS_PERF) {
		off = IB_PERF_DATA_OFFSET;
	} else {
		return false; /* no agent for the class here */
	}
	if (h.Method != IB_MAD_METHOD_GET && h.Method != IB_MAD_METHOD_SET)
		status = IB_MAD_STATUS_UNSUP_METHOD;
	else if (smp && !m_key_ok(sw, h.Method, key, &hide)) {
		drop(sw, 0, SIB_DROP_M_KEY, "an SMP without port 0's M_Key (IBA 14.2.4.1)", out);
		return false;
	} else if (h.ClassVersion != 1)
		status = IB_MAD_STATUS_BAD_VERSION;
	else if (smp)
		status = sma_attr(sw, in_port, h.Method, h.AttributeID, h.AttributeModifier, hide,
				  mad + off, resp);
	else if (h.AttributeID == IB_PERF_ATTR_PORT_COUNTERS) {
		status = pma_counters(sw, h.Method, mad + off, resp);
		rlen = IB_PORT_COUNTERS_BYTES;
	} else if (h.AttributeID == IB_PERF_ATTR_PORT_COUNTERS_EXT) {
		status = pma_counters_ext(sw, h.Method, mad + off, resp);
		rlen = IB_PORT_COUNTERS_EXT_BYTES;
	} else if (h.AttributeID == IB_PERF_ATTR_CLASS_PORT_INFO && h.Method == IB_MAD_METHOD_GET) {
		status = pma_class_port_info(resp); /* perfquery asks it first */
		rlen = IB_CLASS_PORT_INFO_BYTES;
	} else {
		status = IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	}

	/* The response keeps the request, with GetResp and the status
	 * (IBA 13.4.5; a DR SMP's Status is 15 bits beside D). */
	if (!status)
		memcpy(mad + off, resp, rlen);
	if (h.MgmtClass == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		struct ib_dr_smp dr;

		ib_dr_smp_decode(&dr, mad);
		ib_dr_smp_to_response(&dr, status);
		ib_dr_smp_encode(&dr, mad);
		ra = a;
		if (!(out->len = sib_mgmt_build(&ra, mad, buf, IB_MAX_PACKET)))
			return false;
	} else {
		ib_mad_set_method(&h, IB_MAD_METHOD_GET_RESP);
		h.Status = status;
		ib_mad_hdr_encode(&h, mad);
		sib_mad_addr_reply(&a, sw->port[0].pi.LID, &ra);
		if (!(out->len = sib_mgmt_build(&ra, mad, buf, IB_MAX_PACKET)))
			return false;
	}
	/* It leaves as a packet port 0 sends. */
	{
		struct ib_packet rp;
		uint8_t again[IB_MAX_PACKET];
		size_t len = out->len;

		memcpy(again, buf, len);
		if (ib_packet_decode(again, len, &rp) != IB_PKT_OK)
			return false;
		sib_switch_route(sw, 0, &rp, len, buf, out);
		if (!out->rewritten) { /* route() left buf alone: it holds the answer */
			out->len = len;
			out->rewritten = true;
		}
	}
	return out->nports > 0;
}

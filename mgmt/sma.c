/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <string.h>

#include "mgmt/mad_agent.h"
#include "mgmt/node.h"
#include "base/log.h"
#include "mgmt/sma.h"
#include "mgmt/sa_client.h"
#include "wire/smp.h"

/* PortInfo:LinkWidth/LinkSpeed encodings (IBA 14.2.5.6): 4X at QDR, the
 * figure query_port reports too. */
enum {
	LINK_WIDTH_1X_4X = 3,
	LINK_WIDTH_4X = 2,
	LINK_SPEED_SDR_DDR_QDR = 7,
	LINK_SPEED_QDR = 4,
};

static const uint64_t gid_prefix_link_local = 0xfe80000000000000ull;

void sib_sma_port_info(struct sib_node *node, unsigned port_num, struct ib_port_info *pi)
{
	struct sib_port *port = sib_node_port(node, port_num);
	bool link_up = node->mgmt[port_num - 1].link != NULL;

	memset(pi, 0, sizeof(*pi));
	pi->GidPrefix = gid_prefix_link_local;
	pi->LID = port->LID;
	pi->MasterSMLID = port->SMLID;
	pi->CapabilityMask = IB_PORT_CAP_IS_TRAP_SUP | IB_PORT_CAP_IS_SYS_IMAGE_GUID_SUP;
	pi->LocalPortNum = (uint8_t)port_num;
	pi->LinkWidthEnabled = LINK_WIDTH_1X_4X;
	pi->LinkWidthSupported = LINK_WIDTH_1X_4X;
	pi->LinkWidthActive = LINK_WIDTH_4X;
	pi->LinkSpeedSupported = LINK_SPEED_SDR_DDR_QDR;
	pi->PortState = (uint8_t)port->state;
	pi->PortPhysicalState = link_up ? IB_PORT_PHYS_LINK_UP : IB_PORT_PHYS_DISABLED;
	pi->LinkDownDefaultState = IB_PORT_PHYS_POLLING;
	pi->LMC = port->LMC;
	pi->LinkSpeedActive = LINK_SPEED_QDR;
	pi->LinkSpeedEnabled = LINK_SPEED_SDR_DDR_QDR;
	pi->NeighborMTU = (uint8_t)port->active_mtu;
	pi->MasterSMSL = port->SMSL;
	pi->VLCap = 1; /* VL0 only (plus VL15) */
	pi->VLArbitrationHighCap = 1;
	pi->VLArbitrationLowCap = 1;
	pi->MTUCap = (uint8_t)port->max_mtu;
	pi->HOQLife = 0x1f; /* infinite: the link never discards for head-of-queue age */
	pi->OperationalVLs = 1;
	pi->PartitionEnforcementInbound = 1;
	pi->PartitionEnforcementOutbound = 1;
	pi->GUIDCap = SIB_GID_TBL_LEN;
	pi->SubnetTimeOut = port->SubnetTimeOut;
	pi->RespTimeValue = 8; /* 4.096 us * 2^8 = 1 ms, IBA 13.4.6.2 */
}

/* SubnSet(PortInfo) (IBA 14.2.5.6, state transitions 7.2): validate all,
 * then apply; on error nothing changes. */
static uint16_t port_info_set(struct sib_node *node, unsigned port_num, const uint8_t *data)
{
	struct sib_port *port = sib_node_port(node, port_num);
	struct ib_port_info pi;
	enum sib_port_state cur, next;
	bool activate, deactivate;
	uint16_t lid;

	ib_port_info_decode(&pi, data);
	pthread_mutex_lock(&node->lock);
	cur = port->state;
	next = cur;
	switch (pi.PortState) {
	case IB_PORT_STATE_NOP:
		break;
	case IB_PORT_STATE_DOWN:
		/* The link retrains and comes back in INIT (IBA 7.2). */
		next = SIB_PORT_INIT;
		break;
	case IB_PORT_STATE_ARMED:
		if (cur != SIB_PORT_INIT && cur != SIB_PORT_ARMED)
			goto invalid;
		next = SIB_PORT_ARMED;
		break;
	case IB_PORT_STATE_ACTIVE:
		if (cur != SIB_PORT_ARMED && cur != SIB_PORT_ACTIVE)
			goto invalid;
		next = SIB_PORT_ACTIVE;
		break;
	default:
		goto invalid;
	}
	lid = pi.LID;
	if (lid > SIB_LID_UNICAST_MAX || pi.MasterSMLID > SIB_LID_UNICAST_MAX)
		goto invalid;
	if (lid == 0 && (next == SIB_PORT_ARMED || next == SIB_PORT_ACTIVE))
		goto invalid;
	if (pi.LMC != 0) /* one LID per port: LMC 0 only */
		goto invalid;

	port->SMSL = pi.MasterSMSL;
	port->SubnetTimeOut = pi.SubnetTimeOut;
	activate = next == SIB_PORT_ACTIVE;
	deactivate = next == SIB_PORT_INIT && cur != SIB_PORT_INIT;
	if (!activate) {
		port->LID = lid;
		port->SMLID = pi.MasterSMLID;
		port->state = next;
	}
	pthread_cond_broadcast(&node->port_cond);
	pthread_mutex_unlock(&node->lock);

	if (activate) {
		/* Raises PORT_ACTIVE the first time, LID_CHANGE on a new LID. */
		sib_node_port_set_lid(node, port_num, lid, pi.MasterSMLID);
		sib_info("port %u ACTIVE: LID %u, SM LID %u", port_num, lid, pi.MasterSMLID);
	} else if (deactivate && cur == SIB_PORT_ACTIVE) {
		pthread_mutex_lock(&node->lock);
		node->ops->port_event(node, port_num, SIB_EV_PORT_ERR);
		pthread_mutex_unlock(&node->lock);
		sib_sa_flush_cache(node);
	}
	return 0;

invalid:
	pthread_mutex_unlock(&node->lock);
	sib_dbg("SubnSet(PortInfo) on port %u refused: PortState %u from %u, LID 0x%x, LMC %u",
		port_num, pi.PortState, cur, pi.LID, pi.LMC);
	return IB_MAD_STATUS_INVALID_FIELD;
}

/* One attribute: fills out (SMP Data) and returns the MAD status. */
static uint16_t sma_attr(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
			 uint32_t mod, const uint8_t *in, uint8_t *out)
{
	struct sib_port *port = sib_node_port(node, port_num);
	bool set = method == IB_MAD_METHOD_SET;
	uint16_t status = 0;

	switch (attr) {
	case IB_SMP_ATTR_NODE_DESCRIPTION: {
		struct ib_node_description nd;

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR; /* read-only, IBA 14.2.5.2 */
		memcpy(nd.NodeString, node->mgmt[port_num - 1].node_desc, sizeof(nd.NodeString));
		ib_node_description_encode(&nd, out);
		return 0;
	}
	case IB_SMP_ATTR_NODE_INFO: {
		struct ib_node_info ni = {
			.BaseVersion = IB_MAD_BASE_VERSION,
			.ClassVersion = IB_SMP_CLASS_VERSION,
			.NodeType = IB_NODE_TYPE_CA,
			.NumPorts = SIB_NUM_PORTS,
			.SystemImageGUID = node->sys_image_guid,
			.NodeGUID = node->node_guid,
			.PortGUID = port->port_guid,
			.PartitionCap = SIB_MAX_PKEYS,
			.DeviceID = SIB_VENDOR_PART_ID,
			.Revision = SIB_HW_VER,
			.LocalPortNum = (uint8_t)port_num,
			.VendorID = SIB_VENDOR_ID,
		};

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		ib_node_info_encode(&ni, out);
		return 0;
	}
	case IB_SMP_ATTR_GUID_INFO: {
		struct ib_guid_info gi;

		/* Block 0: the port GUID, then empty alias slots; read-only. */
		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		if (mod != 0)
			return IB_MAD_STATUS_INVALID_FIELD;
		memset(&gi, 0, sizeof(gi));
		gi.GUIDBlock[0] = port->port_guid;
		ib_guid_info_encode(&gi, out);
		return 0;
	}
	case IB_SMP_ATTR_PORT_INFO: {
		struct ib_port_info pi;

		/* IBA 14.2.5.6: on a CA the modifier is the port number, 0
		 * meaning the port the SMP came in on. */
		if (mod != 0 && mod != port_num)
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set)
			status = port_info_set(node, port_num, in);
		pthread_mutex_lock(&node->lock);
		sib_sma_port_info(node, port_num, &pi);
		pthread_mutex_unlock(&node->lock);
		ib_port_info_encode(&pi, out);
		return status;
	}
	case IB_SMP_ATTR_P_KEY_TABLE: {
		struct ib_p_key_table pt;

		/* PartitionCap 1: one fixed entry, the default partition. */
		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		if ((mod & 0xffff) != 0)
			return IB_MAD_STATUS_INVALID_FIELD;
		memset(&pt, 0, sizeof(pt));
		for (unsigned i = 0; i < SIB_MAX_PKEYS; i++)
			pt.P_KeyTableBlock[i] = port->P_Key[i];
		ib_p_key_table_encode(&pt, out);
		return 0;
	}
	case IB_SMP_ATTR_SM_INFO: {
		/* No SM runs on a softib port: SMInfo says so (IBA 14.4.1). */
		struct ib_sm_info si = {
			.GUID = port->port_guid,
			.SMState = IB_SM_STATE_NOT_ACTIVE,
		};

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		ib_sm_info_encode(&si, out);
		return 0;
	}
	default:
		return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	}
}

static void trap_repressed(struct sib_node *node, unsigned port_num, uint64_t tid)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];

	pthread_mutex_lock(&node->lock);
	if (tid == pm->trap_tid) {
		pm->sm_heard = true;
		pm->last_smp_ns = sib_link_now_ns();
		pthread_cond_broadcast(&node->port_cond);
	}
	pthread_mutex_unlock(&node->lock);
}

bool sib_sma_process(struct sib_node *node, unsigned port_num, const uint8_t *in, uint8_t *out)
{
	uint8_t data[IB_SMP_DATA_BYTES];
	uint8_t resp_data[IB_SMP_DATA_BYTES];
	uint8_t method, mclass = in[1];
	uint16_t status, attr;
	uint32_t mod;
	uint64_t tid;
	struct ib_dr_smp dr;
	struct ib_smp smp;

	if (!sib_node_port(node, port_num) || in[0] != IB_MAD_BASE_VERSION)
		return false; /* IBA 13.4.4.1: unknown BaseVersion is discarded */
	if (mclass == IB_MGMT_CLASS_SUBN_LID_ROUTED) {
		ib_smp_decode(&smp, in);
		method = ib_mad_method(&smp.hdr);
		attr = smp.hdr.AttributeID;
		mod = smp.hdr.AttributeModifier;
		tid = smp.hdr.TransactionID;
		memcpy(data, smp.SMPData, sizeof(data));
	} else if (mclass == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		ib_dr_smp_decode(&dr, in);
		method = (uint8_t)(dr.R << 7 | dr.Method);
		attr = dr.AttributeID;
		mod = dr.AttributeModifier;
		tid = dr.TransactionID;
		/* IBA 14.2.2.2: a CA is the end of an outbound path (D=0) when
		 * HopPointer has reached HopCount (or HopCount is 0); anything
		 * else would need forwarding, which a CA cannot do. */
		if (dr.D || dr.HopCount > IB_SMP_MAX_HOPS ||
		    (dr.HopCount != 0 && dr.HopPointer != dr.HopCount))
			return false;
		memcpy(data, dr.SMPData, sizeof(data));
	} else {
		return false;
	}

	if (method & IB_MAD_METHOD_RESP)
		return false;
	pthread_mutex_lock(&node->lock);
	node->mgmt[port_num - 1].last_smp_ns = sib_link_now_ns();
	pthread_mutex_unlock(&node->lock);
	if (method == IB_MAD_METHOD_TRAP_REPRESS) {
		if (attr == IB_SMP_ATTR_NOTICE)
			trap_repressed(node, port_num, tid);
		return false;
	}
	if (method == IB_MAD_METHOD_TRAP || method == IB_MAD_METHOD_SEND ||
	    method == IB_MAD_METHOD_REPORT)
		return false; /* no response is defined for these (IBA 13.4.5) */

	memset(resp_data, 0, sizeof(resp_data));
	if (in[2] != IB_SMP_CLASS_VERSION)
		status = IB_MAD_STATUS_BAD_VERSION;
	else if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
		status = IB_MAD_STATUS_UNSUP_METHOD;
	else
		status = sma_attr(node, port_num, method, attr, mod, data, resp_data);

	/* The response keeps the request's header, with R set and the
	 * method GetResp (IBA 13.4.5, also for a Set). */
	if (mclass == IB_MGMT_CLASS_SUBN_LID_ROUTED) {
		ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_GET_RESP);
		smp.hdr.Status = status;
		memcpy(smp.SMPData, resp_data, sizeof(resp_data));
		ib_smp_encode(&smp, out);
	} else {
		dr.R = 1;
		dr.Method = IB_MAD_METHOD_GET_RESP & 0x7f;
		dr.D = 1;
		dr.Status = status & 0x7fff;
		/* IBA 14.2.2.2: the responder records the port it received on
		 * in ReturnPath at HopPointer. */
		if (dr.HopCount)
			dr.ReturnPath[dr.HopPointer] = (uint8_t)port_num;
		memcpy(dr.SMPData, resp_data, sizeof(resp_data));
		ib_dr_smp_encode(&dr, out);
	}
	if (status)
		sib_dbg("SMP %s(%s) mod 0x%x on port %u: status 0x%04x",
			ib_mad_method_str(method), ib_mad_attr_str(mclass, attr), mod, port_num,
			status);
	return true;
}

/* The QP0 receive path: process and answer to `from`. */
static bool sma_rx(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
		   const uint8_t *mad, const struct sib_endpoint *from)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	uint8_t out[IB_MAD_BYTES];
	struct sib_mad_addr ra;
	uint16_t my_lid;

	if (!sib_sma_process(node, port_num, mad, out))
		return true;
	pthread_mutex_lock(&node->lock);
	/* Whoever drives our SMA is our SM: its datagrams say where it is. */
	pm->sm_ep = *from;
	pm->sm_heard = true;
	my_lid = node->ports[port_num - 1].LID;
	pthread_cond_broadcast(&node->port_cond);
	pthread_mutex_unlock(&node->lock);
	sib_mad_addr_reply(a, my_lid ? my_lid : SIB_LID_PERMISSIVE, &ra);
	/* IBA 14.2.2: directed-route responses travel with permissive LIDs
	 * until the end of the path. */
	if (mad[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		ra.DLID = SIB_LID_PERMISSIVE;
		ra.SLID = my_lid ? my_lid : SIB_LID_PERMISSIVE;
	}
	if (pm->link)
		sib_mgmt_send(pm->link, &ra, out, from);
	return true;
}

/* SMPs come LID-routed and directed-route: two classes, one agent. */
static const struct sib_mad_agent sma_lid_routed = {
	.name = "SMA",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED,
	.rx = sma_rx,
};
static const struct sib_mad_agent sma_directed_route = {
	.name = "SMA",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
	.rx = sma_rx,
};

int sib_sma_register(struct sib_node *node)
{
	int rc = sib_mad_agent_register(node, &sma_lid_routed);

	return rc ? rc : sib_mad_agent_register(node, &sma_directed_route);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SMP layouts (IBA Vol 1 14.2.1) and SMP attribute layouts (14.2.5), one
 * field table each.  Reserved bits are absent from the tables and so encode
 * as zero.
 */
#include "wire/smp.h"

#define F(type, name, member, bit, bits) IB_FIELD(type, name, member, bit, bits)

static const struct ib_field_desc smp_fields[] = {
	IB_MAD_HDR_FIELDS(struct ib_smp, hdr),
	F(struct ib_smp, "M_Key", M_Key, 192, 64),
	/* 256 reserved bits, then SMP Data, then 128 reserved bytes */
	F(struct ib_smp, "SMPData", SMPData, 512, 512),
};

#define DR(name, member, bit, bits) F(struct ib_dr_smp, name, member, bit, bits)
static const struct ib_field_desc dr_smp_fields[] = {
	DR("BaseVersion", BaseVersion, 0, 8),
	DR("MgmtClass", MgmtClass, 8, 8),
	DR("ClassVersion", ClassVersion, 16, 8),
	DR("R", R, 24, 1),
	DR("Method", Method, 25, 7),
	DR("D", D, 32, 1),
	DR("Status", Status, 33, 15),
	DR("HopPointer", HopPointer, 48, 8),
	DR("HopCount", HopCount, 56, 8),
	DR("TransactionID", TransactionID, 64, 64),
	DR("AttributeID", AttributeID, 128, 16),
	DR("AttributeModifier", AttributeModifier, 160, 32),
	DR("M_Key", M_Key, 192, 64),
	DR("DrSLID", DrSLID, 256, 16),
	DR("DrDLID", DrDLID, 272, 16),
	/* 28 reserved bytes */
	DR("SMPData", SMPData, 512, 512),
	DR("InitialPath", InitialPath, 1024, 512),
	DR("ReturnPath", ReturnPath, 1536, 512),
};

#define NI(name, member, bit, bits) F(struct ib_node_info, name, member, bit, bits)
static const struct ib_field_desc node_info_fields[] = {
	NI("BaseVersion", BaseVersion, 0, 8),
	NI("ClassVersion", ClassVersion, 8, 8),
	NI("NodeType", NodeType, 16, 8),
	NI("NumPorts", NumPorts, 24, 8),
	NI("SystemImageGUID", SystemImageGUID, 32, 64),
	NI("NodeGUID", NodeGUID, 96, 64),
	NI("PortGUID", PortGUID, 160, 64),
	NI("PartitionCap", PartitionCap, 224, 16),
	NI("DeviceID", DeviceID, 240, 16),
	NI("Revision", Revision, 256, 32),
	NI("LocalPortNum", LocalPortNum, 288, 8),
	NI("VendorID", VendorID, 296, 24),
};

static const struct ib_field_desc node_description_fields[] = {
	F(struct ib_node_description, "NodeString", NodeString, 0, 512),
};

#define PI(name, bit, bits) F(struct ib_port_info, #name, name, bit, bits)
static const struct ib_field_desc port_info_fields[] = {
	PI(M_Key, 0, 64),
	PI(GidPrefix, 64, 64),
	PI(LID, 128, 16),
	PI(MasterSMLID, 144, 16),
	PI(CapabilityMask, 160, 32),
	PI(DiagCode, 192, 16),
	PI(M_KeyLeasePeriod, 208, 16),
	PI(LocalPortNum, 224, 8),
	PI(LinkWidthEnabled, 232, 8),
	PI(LinkWidthSupported, 240, 8),
	PI(LinkWidthActive, 248, 8),
	PI(LinkSpeedSupported, 256, 4),
	PI(PortState, 260, 4),
	PI(PortPhysicalState, 264, 4),
	PI(LinkDownDefaultState, 268, 4),
	PI(M_KeyProtectBits, 272, 2),
	/* 3 reserved bits */
	PI(LMC, 277, 3),
	PI(LinkSpeedActive, 280, 4),
	PI(LinkSpeedEnabled, 284, 4),
	PI(NeighborMTU, 288, 4),
	PI(MasterSMSL, 292, 4),
	PI(VLCap, 296, 4),
	PI(InitType, 300, 4),
	PI(VLHighLimit, 304, 8),
	PI(VLArbitrationHighCap, 312, 8),
	PI(VLArbitrationLowCap, 320, 8),
	PI(InitTypeReply, 328, 4),
	PI(MTUCap, 332, 4),
	PI(VLStallCount, 336, 3),
	PI(HOQLife, 339, 5),
	PI(OperationalVLs, 344, 4),
	PI(PartitionEnforcementInbound, 348, 1),
	PI(PartitionEnforcementOutbound, 349, 1),
	PI(FilterRawInbound, 350, 1),
	PI(FilterRawOutbound, 351, 1),
	PI(M_KeyViolations, 352, 16),
	PI(P_KeyViolations, 368, 16),
	PI(Q_KeyViolations, 384, 16),
	PI(GUIDCap, 400, 8),
	PI(ClientReregister, 408, 1),
	PI(MulticastPKeyTrapSuppressionEnabled, 409, 2),
	PI(SubnetTimeOut, 411, 5),
	/* 3 reserved bits */
	PI(RespTimeValue, 419, 5),
	PI(LocalPhyErrors, 424, 4),
	PI(OverrunErrors, 428, 4),
	PI(MaxCreditHint, 432, 16),
	/* 8 reserved bits */
	PI(LinkRoundTripLatency, 456, 24),
	PI(CapabilityMask2, 480, 16),
	PI(LinkSpeedExtActive, 496, 4),
	PI(LinkSpeedExtSupported, 500, 4),
	/* 3 reserved bits */
	PI(LinkSpeedExtEnabled, 507, 5),
};

#define PK(i) F(struct ib_p_key_table, "P_KeyTableBlock[" #i "]", P_KeyTableBlock[i], 16 * (i), 16)
static const struct ib_field_desc p_key_table_fields[] = {
	PK(0),	PK(1),	PK(2),	PK(3),	PK(4),	PK(5),	PK(6),	PK(7),
	PK(8),	PK(9),	PK(10), PK(11), PK(12), PK(13), PK(14), PK(15),
	PK(16), PK(17), PK(18), PK(19), PK(20), PK(21), PK(22), PK(23),
	PK(24), PK(25), PK(26), PK(27), PK(28), PK(29), PK(30), PK(31),
};

#define GI(i) F(struct ib_guid_info, "GUIDBlock[" #i "]", GUIDBlock[i], 64 * (i), 64)
static const struct ib_field_desc guid_info_fields[] = {
	GI(0), GI(1), GI(2), GI(3), GI(4), GI(5), GI(6), GI(7),
};

#define SI(name, bit, bits) F(struct ib_sm_info, #name, name, bit, bits)
static const struct ib_field_desc sm_info_fields[] = {
	SI(GUID, 0, 64),
	SI(SM_Key, 64, 64),
	SI(ActCount, 128, 32),
	SI(Priority, 160, 4),
	SI(SMState, 164, 4),
};

#define SW(name, bit, bits) F(struct ib_switch_info, #name, name, bit, bits)
static const struct ib_field_desc switch_info_fields[] = {
	SW(LinearFDBCap, 0, 16),
	SW(RandomFDBCap, 16, 16),
	SW(MulticastFDBCap, 32, 16),
	SW(LinearFDBTop, 48, 16),
	SW(DefaultPort, 64, 8),
	SW(DefaultMulticastPrimaryPort, 72, 8),
	SW(DefaultMulticastNotPrimaryPort, 80, 8),
	SW(LifeTimeValue, 88, 5),
	SW(PortStateChange, 93, 1),
	SW(OptimizedSLtoVLMappingProgramming, 94, 2),
	SW(LIDsPerPort, 96, 16),
	SW(PartitionEnforcementCap, 112, 16),
	SW(InboundEnforcementCap, 128, 1),
	SW(OutboundEnforcementCap, 129, 1),
	SW(FilterRawInboundCap, 130, 1),
	SW(FilterRawOutboundCap, 131, 1),
	SW(EnhancedPort0, 132, 1),
	/* 11 reserved bits */
	SW(MulticastFDBTop, 144, 16),
};

static const struct ib_field_desc lft_block_fields[] = {
	F(struct ib_lft_block, "Port", Port, 0, 512),
};

#define MF(i) F(struct ib_mft_block, "PortMask[" #i "]", PortMask[i], 16 * (i), 16)
static const struct ib_field_desc mft_block_fields[] = {
	MF(0),	MF(1),	MF(2),	MF(3),	MF(4),	MF(5),	MF(6),	MF(7),
	MF(8),	MF(9),	MF(10), MF(11), MF(12), MF(13), MF(14), MF(15),
	MF(16), MF(17), MF(18), MF(19), MF(20), MF(21), MF(22), MF(23),
	MF(24), MF(25), MF(26), MF(27), MF(28), MF(29), MF(30), MF(31),
};

const struct ib_header_desc ib_smp_desc = IB_DESC("SMP", IB_SMP_BYTES, smp_fields);
const struct ib_header_desc ib_dr_smp_desc = IB_DESC("DR SMP", IB_DR_SMP_BYTES, dr_smp_fields);
const struct ib_header_desc ib_node_info_desc =
	IB_DESC("NodeInfo", IB_NODE_INFO_BYTES, node_info_fields);
const struct ib_header_desc ib_node_description_desc =
	IB_DESC("NodeDescription", IB_NODE_DESCRIPTION_BYTES, node_description_fields);
const struct ib_header_desc ib_port_info_desc =
	IB_DESC("PortInfo", IB_PORT_INFO_BYTES, port_info_fields);
const struct ib_header_desc ib_p_key_table_desc =
	IB_DESC("P_KeyTable", IB_P_KEY_TABLE_BYTES, p_key_table_fields);
const struct ib_header_desc ib_guid_info_desc =
	IB_DESC("GUIDInfo", IB_GUID_INFO_BYTES, guid_info_fields);
const struct ib_header_desc ib_sm_info_desc = IB_DESC("SMInfo", IB_SM_INFO_BYTES, sm_info_fields);
const struct ib_header_desc ib_switch_info_desc =
	IB_DESC("SwitchInfo", IB_SWITCH_INFO_BYTES, switch_info_fields);
const struct ib_header_desc ib_lft_block_desc =
	IB_DESC("LinearForwardingTable", IB_SMP_DATA_BYTES, lft_block_fields);
const struct ib_header_desc ib_mft_block_desc =
	IB_DESC("MulticastForwardingTable", IB_SMP_DATA_BYTES, mft_block_fields);

IB_LAYOUT_CODEC(smp)
IB_LAYOUT_CODEC(dr_smp)
IB_LAYOUT_CODEC(node_info)
IB_LAYOUT_CODEC(node_description)
IB_LAYOUT_CODEC(port_info)
IB_LAYOUT_CODEC(p_key_table)
IB_LAYOUT_CODEC(guid_info)
IB_LAYOUT_CODEC(sm_info)
IB_LAYOUT_CODEC(switch_info)
IB_LAYOUT_CODEC(lft_block)
IB_LAYOUT_CODEC(mft_block)

enum { DR_LID_PERMISSIVE = 0xffff };

static enum ib_dr_action dr_drop(const char **why, const char *rule)
{
	*why = rule;
	return IB_DR_DROP;
}

enum ib_dr_action ib_dr_smp_arrive(struct ib_dr_smp *dr, bool is_switch, unsigned num_ports,
				   unsigned in_port, unsigned *out_port, const char **why)
{
	unsigned hp = dr->HopPointer, hc = dr->HopCount, next;

	*why = NULL;
	if (hc > IB_SMP_MAX_HOPS)
		return dr_drop(why, "HopCount beyond 63 (IBA 14.2.2)");
	if (!dr->D) {
		if (hc && hp == 0)
			return dr_drop(why, "HopPointer 0 on the wire (C14-9:5)");
		if (hp && hp < hc) { /* C14-9:2: a switch on the way */
			if (!is_switch)
				return dr_drop(why, "a CA in the middle of a path (C14-9:2)");
			next = dr->InitialPath[hp + 1];
			if (next == 0 || next > num_ports)
				return dr_drop(why, "InitialPath names no port of this switch (C14-9:2)");
			dr->ReturnPath[hp] = (uint8_t)in_port;
			dr->HopPointer = (uint8_t)(hp + 1);
			*out_port = next;
			return IB_DR_FORWARD;
		}
		if (hp == hc) { /* C14-9:3: the end of the directed part */
			if (dr->DrDLID != DR_LID_PERMISSIVE)
				return dr_drop(why, "a LID-routed last segment (C14-9:3), not supported");
			if (hc)
				dr->ReturnPath[hp] = (uint8_t)in_port;
			dr->HopPointer = (uint8_t)(hp + 1);
			return IB_DR_DELIVER;
		}
		return dr_drop(why, "HopPointer past HopCount (C14-9:5)");
	}
	if (hp >= 2 && hp <= hc) { /* C14-13:2: a switch on the way back */
		if (!is_switch)
			return dr_drop(why, "a CA in the middle of a return path (C14-13:2)");
		next = dr->ReturnPath[hp - 1];
		if (next == 0 || next > num_ports)
			return dr_drop(why, "ReturnPath names no port of this switch (C14-13:2)");
		dr->HopPointer = (uint8_t)(hp - 1);
		*out_port = next;
		return IB_DR_FORWARD;
	}
	if (hp == 1) { /* C14-13:3: back at the requester */
		if (dr->DrSLID != DR_LID_PERMISSIVE)
			return dr_drop(why, "a LID-routed first segment (C14-13:3), not supported");
		dr->HopPointer = 0;
		return IB_DR_DELIVER;
	}
	return dr_drop(why, "HopPointer outside the return path (C14-13:5)");
}

enum ib_dr_action ib_dr_smp_depart(struct ib_dr_smp *dr, unsigned *out_port, const char **why)
{
	unsigned hc = dr->HopCount;

	*why = NULL;
	if (hc > IB_SMP_MAX_HOPS)
		return dr_drop(why, "HopCount beyond 63 (IBA 14.2.2)");
	if (dr->D ? dr->DrSLID != DR_LID_PERMISSIVE : dr->DrDLID != DR_LID_PERMISSIVE)
		return dr_drop(why, "a LID-routed segment (C14-9, C14-13), not supported");
	if (hc == 0)
		return IB_DR_DELIVER;
	if (!dr->D) { /* C14-9:1 */
		if (dr->HopPointer != 0)
			return dr_drop(why, "a request leaves with HopPointer 0 (C14-9:1)");
		dr->HopPointer = 1;
		*out_port = dr->InitialPath[1];
		return IB_DR_FORWARD;
	}
	if (dr->HopPointer != hc + 1) /* C14-13:1 */
		return dr_drop(why, "a response leaves with HopPointer HopCount+1 (C14-13:1)");
	dr->HopPointer = (uint8_t)hc;
	*out_port = dr->ReturnPath[hc];
	return IB_DR_FORWARD;
}

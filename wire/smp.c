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

IB_LAYOUT_CODEC(smp)
IB_LAYOUT_CODEC(dr_smp)
IB_LAYOUT_CODEC(node_info)
IB_LAYOUT_CODEC(node_description)
IB_LAYOUT_CODEC(port_info)
IB_LAYOUT_CODEC(p_key_table)
IB_LAYOUT_CODEC(guid_info)
IB_LAYOUT_CODEC(sm_info)

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * PerfMgt attribute layouts (IBA Vol 1 13.4.8.1, 16.1.3.5, 16.1.4.11), one
 * field table each.  Reserved bits are absent from the tables and so
 * encode as zero.
 */
#include "wire/perfmgt.h"

#define F(type, name, member, bit, bits) IB_FIELD(type, name, member, bit, bits)

#define CPI(name, bit, bits) F(struct ib_class_port_info, #name, name, bit, bits)
static const struct ib_field_desc class_port_info_fields[] = {
	CPI(BaseVersion, 0, 8),
	CPI(ClassVersion, 8, 8),
	CPI(CapabilityMask, 16, 16),
	CPI(CapabilityMask2, 32, 27),
	CPI(RespTimeValue, 59, 5),
	CPI(RedirectGID, 64, 128),
	CPI(RedirectTC, 192, 8),
	CPI(RedirectSL, 200, 4),
	CPI(RedirectFL, 204, 20),
	CPI(RedirectLID, 224, 16),
	CPI(RedirectP_Key, 240, 16),
	/* 8 reserved bits */
	CPI(RedirectQP, 264, 24),
	CPI(RedirectQ_Key, 288, 32),
	CPI(TrapGID, 320, 128),
	CPI(TrapTC, 448, 8),
	CPI(TrapSL, 456, 4),
	CPI(TrapFL, 460, 20),
	CPI(TrapLID, 480, 16),
	CPI(TrapP_Key, 496, 16),
	CPI(TrapHL, 512, 8),
	CPI(TrapQP, 520, 24),
	CPI(TrapQ_Key, 544, 32),
};

#define PC(name, bit, bits) F(struct ib_port_counters, #name, name, bit, bits)
static const struct ib_field_desc port_counters_fields[] = {
	/* 8 reserved bits */
	PC(PortSelect, 8, 8),
	PC(CounterSelect, 16, 16),
	PC(SymbolErrorCounter, 32, 16),
	PC(LinkErrorRecoveryCounter, 48, 8),
	PC(LinkDownedCounter, 56, 8),
	PC(PortRcvErrors, 64, 16),
	PC(PortRcvRemotePhysicalErrors, 80, 16),
	PC(PortRcvSwitchRelayErrors, 96, 16),
	PC(PortXmitDiscards, 112, 16),
	PC(PortXmitConstraintErrors, 128, 8),
	PC(PortRcvConstraintErrors, 136, 8),
	PC(CounterSelect2, 144, 8),
	PC(LocalLinkIntegrityErrors, 152, 4),
	PC(ExcessiveBufferOverrunErrors, 156, 4),
	/* 16 reserved bits */
	PC(VL15Dropped, 176, 16),
	PC(PortXmitData, 192, 32),
	PC(PortRcvData, 224, 32),
	PC(PortXmitPkts, 256, 32),
	PC(PortRcvPkts, 288, 32),
	PC(PortXmitWait, 320, 32),
};

#define PCX(name, bit, bits) F(struct ib_port_counters_ext, #name, name, bit, bits)
static const struct ib_field_desc port_counters_ext_fields[] = {
	/* 8 reserved bits */
	PCX(PortSelect, 8, 8),
	PCX(CounterSelect, 16, 16),
	/* 32 reserved bits */
	PCX(PortXmitData, 64, 64),
	PCX(PortRcvData, 128, 64),
	PCX(PortXmitPkts, 192, 64),
	PCX(PortRcvPkts, 256, 64),
	PCX(PortUnicastXmitPkts, 320, 64),
	PCX(PortUnicastRcvPkts, 384, 64),
	PCX(PortMulticastXmitPkts, 448, 64),
	PCX(PortMulticastRcvPkts, 512, 64),
};

const struct ib_header_desc ib_class_port_info_desc =
	IB_DESC("ClassPortInfo", IB_CLASS_PORT_INFO_BYTES, class_port_info_fields);
const struct ib_header_desc ib_port_counters_desc =
	IB_DESC("PortCounters", IB_PORT_COUNTERS_BYTES, port_counters_fields);
const struct ib_header_desc ib_port_counters_ext_desc =
	IB_DESC("PortCountersExtended", IB_PORT_COUNTERS_EXT_BYTES, port_counters_ext_fields);

IB_LAYOUT_CODEC(class_port_info)
IB_LAYOUT_CODEC(port_counters)
IB_LAYOUT_CODEC(port_counters_ext)

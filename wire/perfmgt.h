/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Performance management (IBA Vol 1 16.1): the PerfMgt MAD's data area and
 * the attributes a port's performance management agent serves --
 * ClassPortInfo (13.4.8.1), PortCounters (16.1.3.5) and
 * PortCountersExtended (16.1.4.11, with the unicast and multicast packet
 * counts).  A PerfMgt MAD is the 24-byte common header, 40 reserved bytes,
 * then 192 bytes of data (IB_PERF_DATA_OFFSET); the layouts below start
 * there (ClassPortInfo starts there too).
 */
#ifndef SIB_WIRE_PERFMGT_H
#define SIB_WIRE_PERFMGT_H

#include <stdint.h>

#include "wire/mad.h"

enum {
	IB_PERF_DATA_OFFSET = 64,
	IB_PERF_DATA_BYTES = 192,
	IB_CLASS_PORT_INFO_BYTES = 72,
	IB_PORT_COUNTERS_BYTES = 44,
	IB_PORT_COUNTERS_EXT_BYTES = 72,
};

/* PerfMgt AttributeIDs (IBA 16.1.2 Table 225). */
enum {
	IB_PERF_ATTR_CLASS_PORT_INFO = 0x0001,
	IB_PERF_ATTR_PORT_SAMPLES_CONTROL = 0x0010,
	IB_PERF_ATTR_PORT_SAMPLES_RESULT = 0x0011,
	IB_PERF_ATTR_PORT_COUNTERS = 0x0012,
	IB_PERF_ATTR_PORT_COUNTERS_EXT = 0x001d,
};

/* ClassPortInfo:CapabilityMask bits of PerfMgt (IBA 16.1.2). */
enum {
	IB_PERF_CAP_ALL_PORT_SELECT = 1u << 8,
	IB_PERF_CAP_EXT_WIDTH = 1u << 9, /* PortCountersExtended, with unicast/multicast */
};

/* ClassPortInfo (IBA 13.4.8.1). */
struct ib_class_port_info {
	uint8_t BaseVersion;
	uint8_t ClassVersion;
	uint16_t CapabilityMask;
	uint32_t CapabilityMask2; /* 27 bits */
	uint8_t RespTimeValue;	  /* 5 bits */
	uint8_t RedirectGID[16];
	uint8_t RedirectTC;
	uint8_t RedirectSL;   /* 4 bits */
	uint32_t RedirectFL;  /* 20 bits */
	uint16_t RedirectLID;
	uint16_t RedirectP_Key;
	uint32_t RedirectQP;  /* 24 bits */
	uint32_t RedirectQ_Key;
	uint8_t TrapGID[16];
	uint8_t TrapTC;
	uint8_t TrapSL;	      /* 4 bits */
	uint32_t TrapFL;      /* 20 bits */
	uint16_t TrapLID;
	uint16_t TrapP_Key;
	uint8_t TrapHL;
	uint32_t TrapQP;      /* 24 bits */
	uint32_t TrapQ_Key;
};

/* PortCounters (IBA 16.1.3.5): saturating counters; the data counters
 * count 4-byte words. */
struct ib_port_counters {
	uint8_t PortSelect;
	uint16_t CounterSelect;
	uint16_t SymbolErrorCounter;
	uint8_t LinkErrorRecoveryCounter;
	uint8_t LinkDownedCounter;
	uint16_t PortRcvErrors;
	uint16_t PortRcvRemotePhysicalErrors;
	uint16_t PortRcvSwitchRelayErrors;
	uint16_t PortXmitDiscards;
	uint8_t PortXmitConstraintErrors;
	uint8_t PortRcvConstraintErrors;
	uint8_t CounterSelect2;
	uint8_t LocalLinkIntegrityErrors;     /* 4 bits */
	uint8_t ExcessiveBufferOverrunErrors; /* 4 bits */
	uint16_t VL15Dropped;
	uint32_t PortXmitData;
	uint32_t PortRcvData;
	uint32_t PortXmitPkts;
	uint32_t PortRcvPkts;
	uint32_t PortXmitWait;
};

/* PortCountersExtended (IBA 16.1.4.11): 64 bits, never saturating. */
struct ib_port_counters_ext {
	uint8_t PortSelect;
	uint16_t CounterSelect;
	uint64_t PortXmitData;
	uint64_t PortRcvData;
	uint64_t PortXmitPkts;
	uint64_t PortRcvPkts;
	uint64_t PortUnicastXmitPkts;
	uint64_t PortUnicastRcvPkts;
	uint64_t PortMulticastXmitPkts;
	uint64_t PortMulticastRcvPkts;
};

void ib_class_port_info_encode(const struct ib_class_port_info *h, uint8_t *p);
void ib_class_port_info_decode(struct ib_class_port_info *h, const uint8_t *p);
void ib_port_counters_encode(const struct ib_port_counters *h, uint8_t *p);
void ib_port_counters_decode(struct ib_port_counters *h, const uint8_t *p);
void ib_port_counters_ext_encode(const struct ib_port_counters_ext *h, uint8_t *p);
void ib_port_counters_ext_decode(struct ib_port_counters_ext *h, const uint8_t *p);

extern const struct ib_header_desc ib_class_port_info_desc, ib_port_counters_desc,
	ib_port_counters_ext_desc;

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Management datagrams (IBA Vol 1 chapter 13.4): the 24-byte common MAD
 * header every management class shares, the RMPP header (13.6), the class,
 * method and status constants, and the lookup that names every MAD layout in
 * wire/ (SMP, SA, CM) so a tool can print any of them field by field.
 *
 * Every MAD is exactly IB_MAD_BYTES long.  Layout structs and field tables
 * follow wire/headers.h: IBA names, one table per layout, encode and decode
 * generated from it.  Pure: no I/O, no allocation.
 */
#ifndef SIB_WIRE_MAD_H
#define SIB_WIRE_MAD_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/bitfield.h"
#include "wire/headers.h"

enum {
	IB_MAD_BYTES = 256,
	IB_MAD_HDR_BYTES = 24,
	IB_MAD_DATA_BYTES = 232, /* after the common header */
	IB_RMPP_HDR_BYTES = 12,
	IB_MAD_BASE_VERSION = 1,
};

/* MgmtClass (IBA 13.4.4). */
enum ib_mgmt_class {
	IB_MGMT_CLASS_SUBN_LID_ROUTED = 0x01,
	IB_MGMT_CLASS_SUBN_ADM = 0x03,
	IB_MGMT_CLASS_PERF = 0x04,
	IB_MGMT_CLASS_BM = 0x05,
	IB_MGMT_CLASS_DEVICE_MGT = 0x06,
	IB_MGMT_CLASS_CM = 0x07,
	IB_MGMT_CLASS_SNMP = 0x08,
	IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE = 0x81,
};

/* ClassVersion each class speaks. */
enum {
	IB_SMP_CLASS_VERSION = 1,
	IB_SA_CLASS_VERSION = 2,
	IB_PERF_CLASS_VERSION = 1,
	IB_CM_CLASS_VERSION = 2,
};

/* R bit plus Method, as one byte (IBA 13.4.5); R is 0x80. */
enum ib_mad_method {
	IB_MAD_METHOD_GET = 0x01,
	IB_MAD_METHOD_SET = 0x02,
	IB_MAD_METHOD_SEND = 0x03,
	IB_MAD_METHOD_TRAP = 0x05,
	IB_MAD_METHOD_REPORT = 0x06,
	IB_MAD_METHOD_TRAP_REPRESS = 0x07,
	IB_MAD_METHOD_GET_TABLE = 0x12,
	IB_MAD_METHOD_GET_TRACE_TABLE = 0x13,
	IB_MAD_METHOD_GET_MULTI = 0x14,
	IB_MAD_METHOD_DELETE = 0x15,
	IB_MAD_METHOD_RESP = 0x80,
	IB_MAD_METHOD_GET_RESP = 0x81,
	IB_MAD_METHOD_REPORT_RESP = 0x86,
	IB_MAD_METHOD_GET_TABLE_RESP = 0x92,
	IB_MAD_METHOD_GET_MULTI_RESP = 0x94,
	IB_MAD_METHOD_DELETE_RESP = 0x95,
};

/* Status (IBA 13.4.7 Table 132): bits 0-4 common, 8-14 class specific. */
enum {
	IB_MAD_STATUS_BUSY = 0x0001,
	IB_MAD_STATUS_REDIRECT = 0x0002,
	IB_MAD_STATUS_BAD_VERSION = 0x0004,	   /* BaseVersion or ClassVersion */
	IB_MAD_STATUS_UNSUP_METHOD = 0x0008,	   /* method not supported */
	IB_MAD_STATUS_UNSUP_METHOD_ATTR = 0x000c, /* method/attribute combination */
	IB_MAD_STATUS_INVALID_FIELD = 0x001c,	   /* attribute or modifier value */
	IB_MAD_STATUS_CODE_MASK = 0x001c,
	IB_MAD_STATUS_CLASS_MASK = 0x7f00,
};

/* AttributeIDs common to all classes (IBA 13.4.8). */
enum {
	IB_MAD_ATTR_CLASS_PORT_INFO = 0x0001,
	IB_MAD_ATTR_NOTICE = 0x0002,
	IB_MAD_ATTR_INFORM_INFO = 0x0003,
};

/* Encoded MTUs, as PortInfo, PathRecord and the CM REQ carry them. */
enum ib_mtu_code {
	IB_MTU_256 = 1,
	IB_MTU_512 = 2,
	IB_MTU_1024 = 3,
	IB_MTU_2048 = 4,
	IB_MTU_4096 = 5,
};

struct ib_mad_hdr {
	uint8_t BaseVersion;
	uint8_t MgmtClass;
	uint8_t ClassVersion;
	uint8_t R;	/* 1 bit: response */
	uint8_t Method; /* 7 bits */
	uint16_t Status;
	uint16_t ClassSpecific;
	uint64_t TransactionID;
	uint16_t AttributeID;
	uint32_t AttributeModifier;
};

/* RMPP header (IBA 13.6.2.1), at byte 24 of classes that use RMPP. */
enum ib_rmpp_type {
	IB_RMPP_TYPE_NONE = 0,
	IB_RMPP_TYPE_DATA = 1,
	IB_RMPP_TYPE_ACK = 2,
	IB_RMPP_TYPE_STOP = 3,
	IB_RMPP_TYPE_ABORT = 4,
};
enum {
	IB_RMPP_VERSION = 1,
	IB_RMPP_FLAG_ACTIVE = 0x1,
	IB_RMPP_FLAG_FIRST = 0x2,
	IB_RMPP_FLAG_LAST = 0x4,
};

struct ib_rmpp_hdr {
	uint8_t RMPPVersion;
	uint8_t RMPPType;
	uint8_t RRespTime; /* 5 bits */
	uint8_t RMPPFlags; /* 3 bits: Active, First, Last (IBA 13.6.2.1) */
	uint8_t RMPPStatus;
	uint32_t Data1; /* SegmentNumber (DATA, ACK) */
	uint32_t Data2; /* PayloadLength (DATA) or NewWindowLast (ACK) */
};

void ib_mad_hdr_encode(const struct ib_mad_hdr *h, uint8_t *p);
void ib_mad_hdr_decode(struct ib_mad_hdr *h, const uint8_t *p);
/* The RMPP header alone; p points at MAD byte 24. */
void ib_rmpp_hdr_encode(const struct ib_rmpp_hdr *h, uint8_t *p);
void ib_rmpp_hdr_decode(struct ib_rmpp_hdr *h, const uint8_t *p);

/* The method byte as on the wire: R in bit 7. */
static inline uint8_t ib_mad_method(const struct ib_mad_hdr *h)
{
	return (uint8_t)(((h->R & 1) << 7) | (h->Method & 0x7f));
}
static inline void ib_mad_set_method(struct ib_mad_hdr *h, uint8_t method)
{
	h->R = method >> 7;
	h->Method = method & 0x7f;
}

/* The common-header fields, for layouts that embed a struct ib_mad_hdr. */
#define IB_MAD_HDR_FIELDS(type, m)                                                                 \
	IB_FIELD(type, "BaseVersion", m.BaseVersion, 0, 8),                                        \
		IB_FIELD(type, "MgmtClass", m.MgmtClass, 8, 8),                                    \
		IB_FIELD(type, "ClassVersion", m.ClassVersion, 16, 8),                             \
		IB_FIELD(type, "R", m.R, 24, 1), IB_FIELD(type, "Method", m.Method, 25, 7),        \
		IB_FIELD(type, "Status", m.Status, 32, 16),                                        \
		IB_FIELD(type, "ClassSpecific", m.ClassSpecific, 48, 16),                          \
		IB_FIELD(type, "TransactionID", m.TransactionID, 64, 64),                          \
		IB_FIELD(type, "AttributeID", m.AttributeID, 128, 16),                             \
		IB_FIELD(type, "AttributeModifier", m.AttributeModifier, 160, 32)

#define IB_RMPP_HDR_FIELDS(type, m, base)                                                          \
	IB_FIELD(type, "RMPPVersion", m.RMPPVersion, (base) + 0, 8),                               \
		IB_FIELD(type, "RMPPType", m.RMPPType, (base) + 8, 8),                             \
		IB_FIELD(type, "RRespTime", m.RRespTime, (base) + 16, 5),                          \
		IB_FIELD(type, "RMPPFlags", m.RMPPFlags, (base) + 21, 3),                          \
		IB_FIELD(type, "RMPPStatus", m.RMPPStatus, (base) + 24, 8),                        \
		IB_FIELD(type, "Data1", m.Data1, (base) + 32, 32),                                 \
		IB_FIELD(type, "Data2", m.Data2, (base) + 64, 32)

/*
 * Every MAD layout wire/ knows.  Whole-MAD layouts (HDR, SMP, DR_SMP, SA)
 * start at MAD byte 0; attribute, record and CM message layouts start where
 * their class puts its data (ib_mad_data_offset()).
 */
enum ib_mad_layout {
	IB_MAD_LAYOUT_HDR,
	IB_MAD_LAYOUT_RMPP_HDR,
	IB_MAD_LAYOUT_SMP,
	IB_MAD_LAYOUT_DR_SMP,
	IB_MAD_LAYOUT_NODE_DESCRIPTION,
	IB_MAD_LAYOUT_NODE_INFO,
	IB_MAD_LAYOUT_PORT_INFO,
	IB_MAD_LAYOUT_P_KEY_TABLE,
	IB_MAD_LAYOUT_GUID_INFO,
	IB_MAD_LAYOUT_SM_INFO,
	IB_MAD_LAYOUT_SA,
	IB_MAD_LAYOUT_PATH_RECORD,
	IB_MAD_LAYOUT_MCMEMBER_RECORD,
	IB_MAD_LAYOUT_SERVICE_RECORD,
	IB_MAD_LAYOUT_CM_REQ,
	IB_MAD_LAYOUT_CM_MRA,
	IB_MAD_LAYOUT_CM_REJ,
	IB_MAD_LAYOUT_CM_REP,
	IB_MAD_LAYOUT_CM_RTU,
	IB_MAD_LAYOUT_CM_DREQ,
	IB_MAD_LAYOUT_CM_DREP,
	IB_MAD_LAYOUT_CLASS_PORT_INFO,
	IB_MAD_LAYOUT_PORT_COUNTERS,
	IB_MAD_LAYOUT_PORT_COUNTERS_EXT,
	IB_MAD_LAYOUT_CM_SIDR_REQ,
	IB_MAD_LAYOUT_CM_SIDR_REP,
	IB_MAD_LAYOUT_SWITCH_INFO,
	IB_MAD_LAYOUT_LFT_BLOCK,
	IB_MAD_LAYOUT_MFT_BLOCK,
	IB_MAD_LAYOUT_COUNT
};

/* NULL for a value outside the enum. */
const struct ib_header_desc *ib_mad_layout_desc(enum ib_mad_layout layout);

/* Generic views over any layout (same rules as ib_desc_encode/decode). */
void ib_mad_layout_encode(enum ib_mad_layout layout, const void *s, uint8_t *p);
void ib_mad_layout_decode(enum ib_mad_layout layout, void *s, const uint8_t *p);

/*
 * Byte offset of the class's data within the MAD: 64 for SMPs (SMP Data) and
 * PerfMgt, 56 for SA (SubnAdmData), 24 for CM and other classes (right
 * after the common header).
 */
unsigned ib_mad_data_offset(uint8_t mgmt_class);

/*
 * Which layout the attribute of a MAD of this class carries, and where it
 * starts.  False when wire/ has no layout for it (the data stays opaque).
 */
bool ib_mad_attr_layout(uint8_t mgmt_class, uint16_t attr_id, enum ib_mad_layout *layout,
			unsigned *offset);

/* Names for printing; never NULL ("UnknownClass", "UnknownMethod", "UnknownAttribute"). */
const char *ib_mad_class_str(uint8_t mgmt_class);
const char *ib_mad_method_str(uint8_t method); /* R bit included: "GetResp" */
const char *ib_mad_attr_str(uint8_t mgmt_class, uint16_t attr_id);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Subnet administration MADs (IBA Vol 1 15.2): the SA MAD with its RMPP
 * header (13.6) and SA header, and the records softib serves: PathRecord,
 * MCMemberRecord, ServiceRecord.  Record layouts are relative to SubnAdmData
 * (MAD byte 56).
 */
#ifndef SIB_WIRE_SA_H
#define SIB_WIRE_SA_H

#include <stdint.h>

#include "wire/mad.h"

enum {
	IB_SA_MAD_BYTES = 256,
	IB_SA_DATA_OFFSET = 56,
	IB_SA_DATA_BYTES = 200,
	IB_SA_CLASS_HDR_BYTES = 20, /* SM_Key, AttributeOffset, Reserved, ComponentMask */
	IB_SA_RMPP_SEG_BYTES = 220, /* RMPP payload per segment: SA header + data */
	IB_PATH_RECORD_BYTES = 64,
	IB_MCMEMBER_RECORD_BYTES = 52,
	IB_SERVICE_RECORD_BYTES = 176,
};

/* SA AttributeIDs (IBA 15.2.5 Table 176). */
enum {
	IB_SA_ATTR_CLASS_PORT_INFO = 0x0001,
	IB_SA_ATTR_NOTICE = 0x0002,
	IB_SA_ATTR_INFORM_INFO = 0x0003,
	IB_SA_ATTR_NODE_RECORD = 0x0011,
	IB_SA_ATTR_PORT_INFO_RECORD = 0x0012,
	IB_SA_ATTR_SL_TO_VL_MAPPING_TABLE_RECORD = 0x0013,
	IB_SA_ATTR_SWITCH_INFO_RECORD = 0x0014,
	IB_SA_ATTR_LINEAR_FORWARDING_TABLE_RECORD = 0x0015,
	IB_SA_ATTR_RANDOM_FORWARDING_TABLE_RECORD = 0x0016,
	IB_SA_ATTR_MULTICAST_FORWARDING_TABLE_RECORD = 0x0017,
	IB_SA_ATTR_SM_INFO_RECORD = 0x0018,
	IB_SA_ATTR_LINK_RECORD = 0x0020,
	IB_SA_ATTR_GUID_INFO_RECORD = 0x0030,
	IB_SA_ATTR_SERVICE_RECORD = 0x0031,
	IB_SA_ATTR_P_KEY_TABLE_RECORD = 0x0033,
	IB_SA_ATTR_PATH_RECORD = 0x0035,
	IB_SA_ATTR_VL_ARBITRATION_TABLE_RECORD = 0x0036,
	IB_SA_ATTR_MCMEMBER_RECORD = 0x0038,
	IB_SA_ATTR_TRACE_RECORD = 0x0039,
	IB_SA_ATTR_MULTI_PATH_RECORD = 0x003a,
	IB_SA_ATTR_INFORM_INFO_RECORD = 0x00f3,
};

/* SA class-specific Status codes, MAD Status bits 8-14 (IBA 15.2.1.1 Table 174). */
enum {
	IB_SA_STATUS_NO_RESOURCES = 1 << 8,
	IB_SA_STATUS_REQ_INVALID = 2 << 8,
	IB_SA_STATUS_NO_RECORDS = 3 << 8,
	IB_SA_STATUS_TOO_MANY_RECORDS = 4 << 8,
	IB_SA_STATUS_REQ_INVALID_GID = 5 << 8,
	IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS = 6 << 8,
	IB_SA_STATUS_REQ_DENIED = 7 << 8,
};

/* ComponentMask bit n says record field n takes part in the query (IBA 15.2.1.3). */
#define IB_SA_COMP(n) (UINT64_C(1) << (n))

/* PathRecord ComponentMask bits (IBA 15.2.5.16). */
enum {
	IB_PR_COMP_SERVICE_ID = IB_SA_COMP(0) | IB_SA_COMP(1), /* ServiceID8MSB, ServiceID56LSB */
	IB_PR_COMP_DGID = IB_SA_COMP(2),
	IB_PR_COMP_SGID = IB_SA_COMP(3),
	IB_PR_COMP_DLID = IB_SA_COMP(4),
	IB_PR_COMP_SLID = IB_SA_COMP(5),
	IB_PR_COMP_RAW_TRAFFIC = IB_SA_COMP(6),
	IB_PR_COMP_FLOW_LABEL = IB_SA_COMP(8),
	IB_PR_COMP_HOP_LIMIT = IB_SA_COMP(9),
	IB_PR_COMP_TCLASS = IB_SA_COMP(10),
	IB_PR_COMP_REVERSIBLE = IB_SA_COMP(11),
	IB_PR_COMP_NUMB_PATH = IB_SA_COMP(12),
	IB_PR_COMP_P_KEY = IB_SA_COMP(13),
	IB_PR_COMP_QOS_CLASS = IB_SA_COMP(14),
	IB_PR_COMP_SL = IB_SA_COMP(15),
	IB_PR_COMP_MTU_SELECTOR = IB_SA_COMP(16),
	IB_PR_COMP_MTU = IB_SA_COMP(17),
	IB_PR_COMP_RATE_SELECTOR = IB_SA_COMP(18),
	IB_PR_COMP_RATE = IB_SA_COMP(19),
	IB_PR_COMP_PACKET_LIFE_TIME_SELECTOR = IB_SA_COMP(20),
	IB_PR_COMP_PACKET_LIFE_TIME = IB_SA_COMP(21),
	IB_PR_COMP_PREFERENCE = IB_SA_COMP(22),
};

/* MCMemberRecord ComponentMask bits (IBA 15.2.5.17). */
enum {
	IB_MCR_COMP_MGID = IB_SA_COMP(0),
	IB_MCR_COMP_PORT_GID = IB_SA_COMP(1),
	IB_MCR_COMP_Q_KEY = IB_SA_COMP(2),
	IB_MCR_COMP_MLID = IB_SA_COMP(3),
	IB_MCR_COMP_MTU_SELECTOR = IB_SA_COMP(4),
	IB_MCR_COMP_MTU = IB_SA_COMP(5),
	IB_MCR_COMP_TCLASS = IB_SA_COMP(6),
	IB_MCR_COMP_P_KEY = IB_SA_COMP(7),
	IB_MCR_COMP_RATE_SELECTOR = IB_SA_COMP(8),
	IB_MCR_COMP_RATE = IB_SA_COMP(9),
	IB_MCR_COMP_PACKET_LIFE_TIME_SELECTOR = IB_SA_COMP(10),
	IB_MCR_COMP_PACKET_LIFE_TIME = IB_SA_COMP(11),
	IB_MCR_COMP_SL = IB_SA_COMP(12),
	IB_MCR_COMP_FLOW_LABEL = IB_SA_COMP(13),
	IB_MCR_COMP_HOP_LIMIT = IB_SA_COMP(14),
	IB_MCR_COMP_SCOPE = IB_SA_COMP(15),
	IB_MCR_COMP_JOIN_STATE = IB_SA_COMP(16),
	IB_MCR_COMP_PROXY_JOIN = IB_SA_COMP(17),
};

/* ServiceRecord ComponentMask bits (IBA 15.2.5.14), the fixed fields. */
enum {
	IB_SR_COMP_SERVICE_ID = IB_SA_COMP(0),
	IB_SR_COMP_SERVICE_GID = IB_SA_COMP(1),
	IB_SR_COMP_SERVICE_P_KEY = IB_SA_COMP(2),
	IB_SR_COMP_SERVICE_LEASE = IB_SA_COMP(4),
	IB_SR_COMP_SERVICE_KEY = IB_SA_COMP(5),
	IB_SR_COMP_SERVICE_NAME = IB_SA_COMP(6),
};

/* softib's address records (provider/cma_addr.c): ServiceIDs with "SIB"
 * in the top 24 bits, one per IP address.  softib-sm keeps each address
 * to one host (one ServiceKey) at a time (fabric/sa_service.c). */
#define SIB_SR_ADDRESS_SID_PREFIX 0x5349420000000000ull
#define SIB_SR_ADDRESS_SID_MASK 0xffffff0000000000ull
/* softib's records of bound UDP ids (provider/cma_bound.c): "BND" in the
 * top 24 bits, the Annex A11 ServiceID's port space and port below. */
#define SIB_SR_BOUND_SID_PREFIX 0x424e440000000000ull

/* Selectors in PathRecord/MCMemberRecord (IBA 15.2.5.16). */
enum { IB_SA_SELECTOR_GT = 0, IB_SA_SELECTOR_LT = 1, IB_SA_SELECTOR_EQ = 2, IB_SA_SELECTOR_MAX = 3 };

/* The SA MAD (IBA 15.2.1.1). */
struct ib_sa_mad {
	struct ib_mad_hdr hdr;
	struct ib_rmpp_hdr rmpp;
	uint64_t SM_Key;
	uint16_t AttributeOffset; /* record size in 8-byte words (GetTable responses) */
	uint64_t ComponentMask;
	uint8_t SubnAdmData[IB_SA_DATA_BYTES];
};

struct ib_path_record {
	uint64_t ServiceID;
	union ib_gid DGID; /* raw[] in wire order */
	union ib_gid SGID;
	uint16_t DLID;
	uint16_t SLID;
	uint8_t RawTraffic; /* 1 bit */
	uint32_t FlowLabel; /* 20 bits */
	uint8_t HopLimit;
	uint8_t TClass;
	uint8_t Reversible; /* 1 bit */
	uint8_t NumbPath;   /* 7 bits */
	uint16_t P_Key;
	uint16_t QosClass; /* 12 bits */
	uint8_t SL;	   /* 4 bits */
	uint8_t MTUSelector;		/* 2 bits */
	uint8_t MTU;			/* 6 bits, enum ib_mtu_code */
	uint8_t RateSelector;		/* 2 bits */
	uint8_t Rate;			/* 6 bits */
	uint8_t PacketLifeTimeSelector; /* 2 bits */
	uint8_t PacketLifeTime;		/* 6 bits */
	uint8_t Preference;
};

/* MCMemberRecord.JoinState bits (IBA 15.2.5.17). */
enum {
	IB_MCR_JOIN_FULL_MEMBER = 1,
	IB_MCR_JOIN_NON_MEMBER = 2,
	IB_MCR_JOIN_SEND_ONLY_NON_MEMBER = 4,
};

struct ib_mcmember_record {
	union ib_gid MGID;
	union ib_gid PortGID;
	uint32_t Q_Key;
	uint16_t MLID;
	uint8_t MTUSelector; /* 2 bits */
	uint8_t MTU;	     /* 6 bits */
	uint8_t TClass;
	uint16_t P_Key;
	uint8_t RateSelector;		/* 2 bits */
	uint8_t Rate;			/* 6 bits */
	uint8_t PacketLifeTimeSelector; /* 2 bits */
	uint8_t PacketLifeTime;		/* 6 bits */
	uint8_t SL;			/* 4 bits */
	uint32_t FlowLabel;		/* 20 bits */
	uint8_t HopLimit;
	uint8_t Scope;	   /* 4 bits */
	uint8_t JoinState; /* 4 bits */
	uint8_t ProxyJoin; /* 1 bit */
};

struct ib_service_record {
	uint64_t ServiceID;
	union ib_gid ServiceGID;
	uint16_t ServiceP_Key;
	uint32_t ServiceLease;	 /* seconds; 0xffffffff is infinite */
	uint8_t ServiceKey[16];	 /* opaque */
	uint8_t ServiceName[64]; /* UTF-8, NUL-padded */
	uint8_t ServiceData8[16];
	uint16_t ServiceData16[8];
	uint32_t ServiceData32[4];
	uint64_t ServiceData64[2];
};

#define IB_SA_OPS(name)                                                                            \
	void ib_##name##_encode(const struct ib_##name *h, uint8_t *p);                           \
	void ib_##name##_decode(struct ib_##name *h, const uint8_t *p);

IB_SA_OPS(sa_mad)
IB_SA_OPS(path_record)
IB_SA_OPS(mcmember_record)
IB_SA_OPS(service_record)
#undef IB_SA_OPS

extern const struct ib_header_desc ib_sa_mad_desc, ib_path_record_desc, ib_mcmember_record_desc,
	ib_service_record_desc;

/* AttributeOffset for records of this many bytes (IBA 15.2.1.1: 8-byte units). */
static inline uint16_t ib_sa_attribute_offset(unsigned record_bytes)
{
	return (uint16_t)((record_bytes + 7) / 8);
}

/*
 * RMPP segmentation of an SA response of data_len bytes of records
 * (IBA 13.6.2.3).  Each segment repeats the 20-byte SA header and carries up to
 * 200 bytes of records.  Segments are numbered from 1.  PayloadLength (Data2)
 * counts every segment's SA header plus the records in the first segment,
 * and the last segment's own bytes in the last one; 0 in the middle.
 */
uint32_t ib_sa_rmpp_segments(uint32_t data_len);
uint32_t ib_sa_rmpp_payload_length(uint32_t data_len, uint32_t segment);
uint8_t ib_sa_rmpp_flags(uint32_t data_len, uint32_t segment);

#endif

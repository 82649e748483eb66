/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Communication management messages (IBA Vol 1 12.6 and 12.11): REQ, MRA,
 * REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP.  Each layout covers the 232
 * bytes of MAD data after the common header (MAD byte 24), as IBA's message
 * tables count offsets.
 */
#ifndef SIB_WIRE_CM_H
#define SIB_WIRE_CM_H

#include <stdint.h>

#include "wire/mad.h"

enum {
	IB_CM_MSG_BYTES = IB_MAD_DATA_BYTES,
	IB_CM_DATA_OFFSET = IB_MAD_HDR_BYTES,
	IB_CM_REQ_PRIVATE_DATA_BYTES = 92,
	IB_CM_MRA_PRIVATE_DATA_BYTES = 222,
	IB_CM_REJ_ARI_BYTES = 72,
	IB_CM_REJ_PRIVATE_DATA_BYTES = 148,
	IB_CM_REP_PRIVATE_DATA_BYTES = 196,
	IB_CM_RTU_PRIVATE_DATA_BYTES = 224,
	IB_CM_DREQ_PRIVATE_DATA_BYTES = 220,
	IB_CM_DREP_PRIVATE_DATA_BYTES = 224,
	IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES = 216,
	IB_CM_SIDR_REP_INFO_BYTES = 72,
	IB_CM_SIDR_REP_PRIVATE_DATA_BYTES = 136,
};

/* CM AttributeIDs (IBA 12.6.1 Table 99). */
enum {
	IB_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	IB_CM_ATTR_REQ = 0x0010,
	IB_CM_ATTR_MRA = 0x0011,
	IB_CM_ATTR_REJ = 0x0012,
	IB_CM_ATTR_REP = 0x0013,
	IB_CM_ATTR_RTU = 0x0014,
	IB_CM_ATTR_DREQ = 0x0015,
	IB_CM_ATTR_DREP = 0x0016,
	IB_CM_ATTR_SIDR_REQ = 0x0017,
	IB_CM_ATTR_SIDR_REP = 0x0018,
	IB_CM_ATTR_LAP = 0x0019,
	IB_CM_ATTR_APR = 0x001a,
};

/* REQ Transport Service Type (IBA 12.6.5); 3 says the Extended Transport
 * Type field tells (IBA Annex A14, XRC: 1). */
enum { IB_CM_TRANSPORT_RC = 0, IB_CM_TRANSPORT_UC = 1, IB_CM_TRANSPORT_RD = 2, IB_CM_TRANSPORT_EXT = 3 };
enum { IB_CM_EXT_TRANSPORT_XRC = 1 };

/* REJ Message Rejected / MRA Message MRAed (IBA 12.6.6, 12.6.7). */
enum { IB_CM_MSG_REQ = 0, IB_CM_MSG_REP = 1, IB_CM_MSG_OTHER = 2 };

/* REJ Reason (IBA 12.6.7.2 Table 112). */
enum ib_cm_rej_reason {
	IB_CM_REJ_NO_QP = 1,
	IB_CM_REJ_NO_EEC = 2,
	IB_CM_REJ_NO_RESOURCES = 3,
	IB_CM_REJ_TIMEOUT = 4,
	IB_CM_REJ_UNSUPPORTED_REQ = 5,
	IB_CM_REJ_INVALID_COMM_ID = 6,
	IB_CM_REJ_INVALID_COMM_INSTANCE = 7,
	IB_CM_REJ_INVALID_SERVICE_ID = 8,
	IB_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	IB_CM_REJ_STALE_CONN = 10,
	IB_CM_REJ_RDC_NOT_EXIST = 11,
	IB_CM_REJ_INVALID_GID = 12,
	IB_CM_REJ_INVALID_LID = 13,
	IB_CM_REJ_INVALID_SL = 14,
	IB_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	IB_CM_REJ_INVALID_HOP_LIMIT = 16,
	IB_CM_REJ_INVALID_PACKET_RATE = 17,
	IB_CM_REJ_INVALID_ALT_GID = 18,
	IB_CM_REJ_INVALID_ALT_LID = 19,
	IB_CM_REJ_INVALID_ALT_SL = 20,
	IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	IB_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	IB_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	IB_CM_REJ_PORT_CM_REDIRECT = 24,
	IB_CM_REJ_PORT_REDIRECT = 25,
	IB_CM_REJ_INVALID_MTU = 26,
	IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	IB_CM_REJ_CONSUMER_DEFINED = 28,
	IB_CM_REJ_INVALID_RNR_RETRY = 29,
	IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	IB_CM_REJ_INVALID_CLASS_VERSION = 31,
	IB_CM_REJ_INVALID_FLOW_LABEL = 32,
	IB_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
};

/* SIDR_REP Status (IBA 12.11.2 Table 121). */
enum ib_cm_sidr_status {
	IB_CM_SIDR_SUCCESS = 0,
	IB_CM_SIDR_UNSUPPORTED = 1, /* ServiceID not supported */
	IB_CM_SIDR_REJECT = 2,	    /* the service provider rejected it */
	IB_CM_SIDR_NO_QP = 3,
	IB_CM_SIDR_REDIRECT = 4,
	IB_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/* One path of a REQ (primary at byte 52, alternate at byte 96; 44 bytes). */
struct ib_cm_req_path {
	uint16_t LocalPortLID;
	uint16_t RemotePortLID;
	union ib_gid LocalPortGID; /* raw[] in wire order */
	union ib_gid RemotePortGID;
	uint32_t FlowLabel;	  /* 20 bits */
	uint8_t PacketRate;	  /* 6 bits */
	uint8_t TrafficClass;
	uint8_t HopLimit;
	uint8_t SL;		  /* 4 bits */
	uint8_t SubnetLocal;	  /* 1 bit */
	uint8_t LocalACKTimeout;  /* 5 bits */
};

struct ib_cm_req {
	uint32_t LocalCommID;
	uint32_t VendorID; /* 24 bits */
	uint64_t ServiceID;
	uint64_t LocalCAGUID;
	uint32_t LocalQ_Key;
	uint32_t LocalQPN;	/* 24 bits */
	uint8_t ResponderResources;
	uint32_t LocalEECN;	/* 24 bits */
	uint8_t InitiatorDepth;
	uint32_t RemoteEECN;	/* 24 bits */
	uint8_t RemoteCMResponseTimeout; /* 5 bits */
	uint8_t TransportServiceType;	 /* 2 bits */
	uint8_t EndToEndFlowControl;	 /* 1 bit */
	uint32_t StartingPSN;		 /* 24 bits */
	uint8_t LocalCMResponseTimeout;	 /* 5 bits */
	uint8_t RetryCount;		 /* 3 bits */
	uint16_t P_Key;
	uint8_t PathPacketPayloadMTU;	/* 4 bits */
	uint8_t RDCExists;		/* 1 bit */
	uint8_t RNRRetryCount;		/* 3 bits */
	uint8_t MaxCMRetries;		/* 4 bits */
	uint8_t SRQ;			/* 1 bit */
	uint8_t ExtendedTransportType;	/* 3 bits */
	struct ib_cm_req_path Primary;
	struct ib_cm_req_path Alternate;
	uint8_t PrivateData[IB_CM_REQ_PRIVATE_DATA_BYTES];
};

struct ib_cm_mra {
	uint32_t LocalCommID;
	uint32_t RemoteCommID;
	uint8_t MessageMRAed;	/* 2 bits */
	uint8_t ServiceTimeout; /* 5 bits */
	uint8_t PrivateData[IB_CM_MRA_PRIVATE_DATA_BYTES];
};

struct ib_cm_rej {
	uint32_t LocalCommID;
	uint32_t RemoteCommID;
	uint8_t MessageRejected;	/* 2 bits */
	uint8_t RejectedInfoLength;	/* 7 bits */
	uint16_t Reason;
	uint8_t ARI[IB_CM_REJ_ARI_BYTES];
	uint8_t PrivateData[IB_CM_REJ_PRIVATE_DATA_BYTES];
};

struct ib_cm_rep {
	uint32_t LocalCommID;
	uint32_t RemoteCommID;
	uint32_t LocalQ_Key;
	uint32_t LocalQPN;  /* 24 bits */
	uint32_t LocalEECN; /* 24 bits: Local EE Context Number */
	uint32_t StartingPSN; /* 24 bits */
	uint8_t ResponderResources;
	uint8_t InitiatorDepth;
	uint8_t TargetACKDelay;	     /* 5 bits */
	uint8_t FailoverAccepted;    /* 2 bits */
	uint8_t EndToEndFlowControl; /* 1 bit */
	uint8_t RNRRetryCount;	     /* 3 bits */
	uint8_t SRQ;		     /* 1 bit */
	uint64_t LocalCAGUID;
	uint8_t PrivateData[IB_CM_REP_PRIVATE_DATA_BYTES];
};

struct ib_cm_rtu {
	uint32_t LocalCommID;
	uint32_t RemoteCommID;
	uint8_t PrivateData[IB_CM_RTU_PRIVATE_DATA_BYTES];
};

struct ib_cm_dreq {
	uint32_t LocalCommID;
	uint32_t RemoteCommID;
	uint32_t RemoteQPN; /* 24 bits: Remote QPN/EECN */
	uint8_t PrivateData[IB_CM_DREQ_PRIVATE_DATA_BYTES];
};

struct ib_cm_drep {
	uint32_t LocalCommID;
	uint32_t RemoteCommID;
	uint8_t PrivateData[IB_CM_DREP_PRIVATE_DATA_BYTES];
};

/* SIDR_REQ (IBA 12.11.1 Table 119): which QP serves ServiceID? */
struct ib_cm_sidr_req {
	uint32_t RequestID;
	uint16_t P_Key;
	uint64_t ServiceID;
	uint8_t PrivateData[IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES];
};

/* SIDR_REP (IBA 12.11.2 Table 120). */
struct ib_cm_sidr_rep {
	uint32_t RequestID;
	uint8_t Status;
	uint8_t AdditionalInfoLength;
	uint32_t QPN; /* 24 bits */
	uint64_t ServiceID;
	uint32_t Q_Key;
	uint8_t ClassPortInfo[IB_CM_SIDR_REP_INFO_BYTES]; /* Additional Information */
	uint8_t PrivateData[IB_CM_SIDR_REP_PRIVATE_DATA_BYTES];
};

#define IB_CM_OPS(name)                                                                            \
	void ib_##name##_encode(const struct ib_##name *h, uint8_t *p);                           \
	void ib_##name##_decode(struct ib_##name *h, const uint8_t *p);

IB_CM_OPS(cm_req)
IB_CM_OPS(cm_mra)
IB_CM_OPS(cm_rej)
IB_CM_OPS(cm_rep)
IB_CM_OPS(cm_rtu)
IB_CM_OPS(cm_dreq)
IB_CM_OPS(cm_drep)
IB_CM_OPS(cm_sidr_req)
IB_CM_OPS(cm_sidr_rep)
#undef IB_CM_OPS

extern const struct ib_header_desc ib_cm_req_desc, ib_cm_mra_desc, ib_cm_rej_desc, ib_cm_rep_desc,
	ib_cm_rtu_desc, ib_cm_dreq_desc, ib_cm_drep_desc, ib_cm_sidr_req_desc, ib_cm_sidr_rep_desc;

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * CM message layouts (IBA Vol 1 12.6.5-12.6.11, 12.11), one field table each.  Bit
 * offsets count from the first byte after the common MAD header.
 */
#include "wire/cm.h"

#define F(type, name, member, bit, bits) IB_FIELD(type, name, member, bit, bits)

#define RQ(name, bit, bits) F(struct ib_cm_req, #name, name, bit, bits)
/* A REQ path: base is its first bit (416 primary, 768 alternate). */
#define RQP(path, name, base, bit, bits)                                                           \
	F(struct ib_cm_req, #path #name, path.name, (base) + (bit), bits)
#define REQ_PATH_FIELDS(path, base)                                                                \
	RQP(path, LocalPortLID, base, 0, 16), RQP(path, RemotePortLID, base, 16, 16),              \
		RQP(path, LocalPortGID, base, 32, 128),                                            \
		RQP(path, RemotePortGID, base, 160, 128),                                          \
		RQP(path, FlowLabel, base, 288, 20), /* 6 reserved bits */                         \
		RQP(path, PacketRate, base, 314, 6), RQP(path, TrafficClass, base, 320, 8),        \
		RQP(path, HopLimit, base, 328, 8), RQP(path, SL, base, 336, 4),                    \
		RQP(path, SubnetLocal, base, 340, 1), /* 3 reserved bits */                        \
		RQP(path, LocalACKTimeout, base, 344, 5) /* 3 reserved bits */

static const struct ib_field_desc cm_req_fields[] = {
	RQ(LocalCommID, 0, 32),
	/* 8 reserved bits */
	RQ(VendorID, 40, 24),
	RQ(ServiceID, 64, 64),
	RQ(LocalCAGUID, 128, 64),
	/* 32 reserved bits */
	RQ(LocalQ_Key, 224, 32),
	RQ(LocalQPN, 256, 24),
	RQ(ResponderResources, 280, 8),
	RQ(LocalEECN, 288, 24),
	RQ(InitiatorDepth, 312, 8),
	RQ(RemoteEECN, 320, 24),
	RQ(RemoteCMResponseTimeout, 344, 5),
	RQ(TransportServiceType, 349, 2),
	RQ(EndToEndFlowControl, 351, 1),
	RQ(StartingPSN, 352, 24),
	RQ(LocalCMResponseTimeout, 376, 5),
	RQ(RetryCount, 381, 3),
	RQ(P_Key, 384, 16),
	RQ(PathPacketPayloadMTU, 400, 4),
	RQ(RDCExists, 404, 1),
	RQ(RNRRetryCount, 405, 3),
	RQ(MaxCMRetries, 408, 4),
	RQ(SRQ, 412, 1),
	RQ(ExtendedTransportType, 413, 3),
	REQ_PATH_FIELDS(Primary, 416),
	REQ_PATH_FIELDS(Alternate, 768),
	RQ(PrivateData, 1120, 736),
};

#define MR(name, bit, bits) F(struct ib_cm_mra, #name, name, bit, bits)
static const struct ib_field_desc cm_mra_fields[] = {
	MR(LocalCommID, 0, 32),
	MR(RemoteCommID, 32, 32),
	MR(MessageMRAed, 64, 2),
	/* 6 reserved bits */
	MR(ServiceTimeout, 72, 5),
	/* 3 reserved bits */
	MR(PrivateData, 80, 1776),
};

#define RJ(name, bit, bits) F(struct ib_cm_rej, #name, name, bit, bits)
static const struct ib_field_desc cm_rej_fields[] = {
	RJ(LocalCommID, 0, 32),
	RJ(RemoteCommID, 32, 32),
	RJ(MessageRejected, 64, 2),
	/* 6 reserved bits */
	RJ(RejectedInfoLength, 72, 7),
	/* 1 reserved bit */
	RJ(Reason, 80, 16),
	RJ(ARI, 96, 576),
	RJ(PrivateData, 672, 1184),
};

#define RP(name, bit, bits) F(struct ib_cm_rep, #name, name, bit, bits)
static const struct ib_field_desc cm_rep_fields[] = {
	RP(LocalCommID, 0, 32),
	RP(RemoteCommID, 32, 32),
	RP(LocalQ_Key, 64, 32),
	RP(LocalQPN, 96, 24),
	/* 8 reserved bits */
	RP(LocalEECN, 128, 24),
	/* 8 reserved bits */
	RP(StartingPSN, 160, 24),
	/* 8 reserved bits */
	RP(ResponderResources, 192, 8),
	RP(InitiatorDepth, 200, 8),
	RP(TargetACKDelay, 208, 5),
	RP(FailoverAccepted, 213, 2),
	RP(EndToEndFlowControl, 215, 1),
	RP(RNRRetryCount, 216, 3),
	RP(SRQ, 219, 1),
	/* 4 reserved bits */
	RP(LocalCAGUID, 224, 64),
	RP(PrivateData, 288, 1568),
};

#define RT(name, bit, bits) F(struct ib_cm_rtu, #name, name, bit, bits)
static const struct ib_field_desc cm_rtu_fields[] = {
	RT(LocalCommID, 0, 32),
	RT(RemoteCommID, 32, 32),
	RT(PrivateData, 64, 1792),
};

#define DQ(name, bit, bits) F(struct ib_cm_dreq, #name, name, bit, bits)
static const struct ib_field_desc cm_dreq_fields[] = {
	DQ(LocalCommID, 0, 32),
	DQ(RemoteCommID, 32, 32),
	DQ(RemoteQPN, 64, 24),
	/* 8 reserved bits */
	DQ(PrivateData, 96, 1760),
};

#define DP(name, bit, bits) F(struct ib_cm_drep, #name, name, bit, bits)
static const struct ib_field_desc cm_drep_fields[] = {
	DP(LocalCommID, 0, 32),
	DP(RemoteCommID, 32, 32),
	DP(PrivateData, 64, 1792),
};

#define SQ(name, bit, bits) F(struct ib_cm_sidr_req, #name, name, bit, bits)
static const struct ib_field_desc cm_sidr_req_fields[] = {
	SQ(RequestID, 0, 32),
	SQ(P_Key, 32, 16),
	/* 16 reserved bits */
	SQ(ServiceID, 64, 64),
	SQ(PrivateData, 128, 1728),
};

#define SP(name, bit, bits) F(struct ib_cm_sidr_rep, #name, name, bit, bits)
static const struct ib_field_desc cm_sidr_rep_fields[] = {
	SP(RequestID, 0, 32),
	SP(Status, 32, 8),
	SP(AdditionalInfoLength, 40, 8),
	/* 16 reserved bits */
	SP(QPN, 64, 24),
	/* 8 reserved bits */
	SP(ServiceID, 96, 64),
	SP(Q_Key, 160, 32),
	SP(ClassPortInfo, 192, 576),
	SP(PrivateData, 768, 1088),
};

const struct ib_header_desc ib_cm_req_desc = IB_DESC("CM REQ", IB_CM_MSG_BYTES, cm_req_fields);
const struct ib_header_desc ib_cm_mra_desc = IB_DESC("CM MRA", IB_CM_MSG_BYTES, cm_mra_fields);
const struct ib_header_desc ib_cm_rej_desc = IB_DESC("CM REJ", IB_CM_MSG_BYTES, cm_rej_fields);
const struct ib_header_desc ib_cm_rep_desc = IB_DESC("CM REP", IB_CM_MSG_BYTES, cm_rep_fields);
const struct ib_header_desc ib_cm_rtu_desc = IB_DESC("CM RTU", IB_CM_MSG_BYTES, cm_rtu_fields);
const struct ib_header_desc ib_cm_dreq_desc = IB_DESC("CM DREQ", IB_CM_MSG_BYTES, cm_dreq_fields);
const struct ib_header_desc ib_cm_drep_desc = IB_DESC("CM DREP", IB_CM_MSG_BYTES, cm_drep_fields);
const struct ib_header_desc ib_cm_sidr_req_desc =
	IB_DESC("CM SIDR_REQ", IB_CM_MSG_BYTES, cm_sidr_req_fields);
const struct ib_header_desc ib_cm_sidr_rep_desc =
	IB_DESC("CM SIDR_REP", IB_CM_MSG_BYTES, cm_sidr_rep_fields);

IB_LAYOUT_CODEC(cm_req)
IB_LAYOUT_CODEC(cm_mra)
IB_LAYOUT_CODEC(cm_rej)
IB_LAYOUT_CODEC(cm_rep)
IB_LAYOUT_CODEC(cm_rtu)
IB_LAYOUT_CODEC(cm_dreq)
IB_LAYOUT_CODEC(cm_drep)
IB_LAYOUT_CODEC(cm_sidr_req)
IB_LAYOUT_CODEC(cm_sidr_rep)

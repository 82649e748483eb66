/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SA MAD (IBA Vol 1 15.2.1.1) and SA record layouts (15.2.5), one field
 * table each, plus the arithmetic of RMPP segmentation for SA responses.
 */
#include "wire/sa.h"

#define F(type, name, member, bit, bits) IB_FIELD(type, name, member, bit, bits)

static const struct ib_field_desc sa_mad_fields[] = {
	IB_MAD_HDR_FIELDS(struct ib_sa_mad, hdr),
	IB_RMPP_HDR_FIELDS(struct ib_sa_mad, rmpp, 192),
	F(struct ib_sa_mad, "SM_Key", SM_Key, 288, 64),
	F(struct ib_sa_mad, "AttributeOffset", AttributeOffset, 352, 16),
	/* 16 reserved bits */
	F(struct ib_sa_mad, "ComponentMask", ComponentMask, 384, 64),
	F(struct ib_sa_mad, "SubnAdmData", SubnAdmData, 448, 1600),
};

#define PR(name, bit, bits) F(struct ib_path_record, #name, name, bit, bits)
static const struct ib_field_desc path_record_fields[] = {
	PR(ServiceID, 0, 64),
	PR(DGID, 64, 128),
	PR(SGID, 192, 128),
	PR(DLID, 320, 16),
	PR(SLID, 336, 16),
	PR(RawTraffic, 352, 1),
	/* 3 reserved bits */
	PR(FlowLabel, 356, 20),
	PR(HopLimit, 376, 8),
	PR(TClass, 384, 8),
	PR(Reversible, 392, 1),
	PR(NumbPath, 393, 7),
	PR(P_Key, 400, 16),
	PR(QosClass, 416, 12),
	PR(SL, 428, 4),
	PR(MTUSelector, 432, 2),
	PR(MTU, 434, 6),
	PR(RateSelector, 440, 2),
	PR(Rate, 442, 6),
	PR(PacketLifeTimeSelector, 448, 2),
	PR(PacketLifeTime, 450, 6),
	PR(Preference, 456, 8),
	/* 48 reserved bits */
};

#define MC(name, bit, bits) F(struct ib_mcmember_record, #name, name, bit, bits)
static const struct ib_field_desc mcmember_record_fields[] = {
	MC(MGID, 0, 128),
	MC(PortGID, 128, 128),
	MC(Q_Key, 256, 32),
	MC(MLID, 288, 16),
	MC(MTUSelector, 304, 2),
	MC(MTU, 306, 6),
	MC(TClass, 312, 8),
	MC(P_Key, 320, 16),
	MC(RateSelector, 336, 2),
	MC(Rate, 338, 6),
	MC(PacketLifeTimeSelector, 344, 2),
	MC(PacketLifeTime, 346, 6),
	MC(SL, 352, 4),
	MC(FlowLabel, 356, 20),
	MC(HopLimit, 376, 8),
	MC(Scope, 384, 4),
	MC(JoinState, 388, 4),
	MC(ProxyJoin, 392, 1),
	/* 23 reserved bits */
};

#define SR(name, bit, bits) F(struct ib_service_record, #name, name, bit, bits)
#define SRD(n, i, base) F(struct ib_service_record, "ServiceData" #n "[" #i "]", \
			  ServiceData##n[i], (base) + (n) * (i), n)
static const struct ib_field_desc service_record_fields[] = {
	SR(ServiceID, 0, 64),
	SR(ServiceGID, 64, 128),
	SR(ServiceP_Key, 192, 16),
	/* 16 reserved bits */
	SR(ServiceLease, 224, 32),
	SR(ServiceKey, 256, 128),
	SR(ServiceName, 384, 512),
	SRD(8, 0, 896), SRD(8, 1, 896), SRD(8, 2, 896), SRD(8, 3, 896),
	SRD(8, 4, 896), SRD(8, 5, 896), SRD(8, 6, 896), SRD(8, 7, 896),
	SRD(8, 8, 896), SRD(8, 9, 896), SRD(8, 10, 896), SRD(8, 11, 896),
	SRD(8, 12, 896), SRD(8, 13, 896), SRD(8, 14, 896), SRD(8, 15, 896),
	SRD(16, 0, 1024), SRD(16, 1, 1024), SRD(16, 2, 1024), SRD(16, 3, 1024),
	SRD(16, 4, 1024), SRD(16, 5, 1024), SRD(16, 6, 1024), SRD(16, 7, 1024),
	SRD(32, 0, 1152), SRD(32, 1, 1152), SRD(32, 2, 1152), SRD(32, 3, 1152),
	SRD(64, 0, 1280), SRD(64, 1, 1280),
};

const struct ib_header_desc ib_sa_mad_desc = IB_DESC("SA", IB_SA_MAD_BYTES, sa_mad_fields);
const struct ib_header_desc ib_path_record_desc =
	IB_DESC("PathRecord", IB_PATH_RECORD_BYTES, path_record_fields);
const struct ib_header_desc ib_mcmember_record_desc =
	IB_DESC("MCMemberRecord", IB_MCMEMBER_RECORD_BYTES, mcmember_record_fields);
const struct ib_header_desc ib_service_record_desc =
	IB_DESC("ServiceRecord", IB_SERVICE_RECORD_BYTES, service_record_fields);

IB_LAYOUT_CODEC(sa_mad)
IB_LAYOUT_CODEC(path_record)
IB_LAYOUT_CODEC(mcmember_record)
IB_LAYOUT_CODEC(service_record)

uint32_t ib_sa_rmpp_segments(uint32_t data_len)
{
	/* An empty response is still one segment carrying the SA header. */
	if (data_len == 0)
		return 1;
	return (uint32_t)(((uint64_t)data_len + IB_SA_DATA_BYTES - 1) / IB_SA_DATA_BYTES);
}

uint32_t ib_sa_rmpp_payload_length(uint32_t data_len, uint32_t segment)
{
	uint32_t n = ib_sa_rmpp_segments(data_len);

	if (segment == 1) {
		uint64_t total = (uint64_t)n * IB_SA_CLASS_HDR_BYTES + data_len;

		/* PayloadLength is 32 bits; absurd sizes saturate rather than wrap */
		return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	}
	if (segment == n)
		return IB_SA_CLASS_HDR_BYTES + (data_len - (n - 1) * IB_SA_DATA_BYTES);
	return 0;
}

uint8_t ib_sa_rmpp_flags(uint32_t data_len, uint32_t segment)
{
	uint32_t n = ib_sa_rmpp_segments(data_len);
	uint8_t flags = IB_RMPP_FLAG_ACTIVE;

	if (segment == 0 || segment > n)
		return 0;
	if (segment == 1)
		flags |= IB_RMPP_FLAG_FIRST;
	if (segment == n)
		flags |= IB_RMPP_FLAG_LAST;
	return flags;
}

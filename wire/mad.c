/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The common MAD header (IBA Vol 1 13.4.3), the RMPP header (13.6.2.1), and
 * the directory of every MAD layout in wire/: which layout an attribute of a
 * class carries, where it starts, and what things are called.
 */
#include <stddef.h>

#include "wire/cm.h"
#include "wire/mad.h"
#include "wire/perfmgt.h"
#include "wire/sa.h"
#include "wire/smp.h"

/* The field macros name members through an enclosing struct; the header alone
 * is its own first member, so the offsets are those of the bare struct. */
struct mad_hdr_alone {
	struct ib_mad_hdr h;
};
struct rmpp_hdr_alone {
	struct ib_rmpp_hdr h;
};

static const struct ib_field_desc mad_hdr_fields[] = {
	IB_MAD_HDR_FIELDS(struct mad_hdr_alone, h),
};

static const struct ib_field_desc rmpp_hdr_fields[] = {
	IB_RMPP_HDR_FIELDS(struct rmpp_hdr_alone, h, 0),
};

static const struct ib_header_desc mad_hdr_desc =
	IB_DESC("MAD", IB_MAD_HDR_BYTES, mad_hdr_fields);
static const struct ib_header_desc rmpp_hdr_desc =
	IB_DESC("RMPP", IB_RMPP_HDR_BYTES, rmpp_hdr_fields);

void ib_mad_hdr_encode(const struct ib_mad_hdr *h, uint8_t *p)
{
	ib_desc_encode(&mad_hdr_desc, h, p);
}

void ib_mad_hdr_decode(struct ib_mad_hdr *h, const uint8_t *p)
{
	ib_desc_decode(&mad_hdr_desc, h, p);
}

void ib_rmpp_hdr_encode(const struct ib_rmpp_hdr *h, uint8_t *p)
{
	ib_desc_encode(&rmpp_hdr_desc, h, p);
}

void ib_rmpp_hdr_decode(struct ib_rmpp_hdr *h, const uint8_t *p)
{
	ib_desc_decode(&rmpp_hdr_desc, h, p);
}

static const struct ib_header_desc *const layouts[IB_MAD_LAYOUT_COUNT] = {
	[IB_MAD_LAYOUT_HDR] = &mad_hdr_desc,
	[IB_MAD_LAYOUT_RMPP_HDR] = &rmpp_hdr_desc,
	[IB_MAD_LAYOUT_SMP] = &ib_smp_desc,
	[IB_MAD_LAYOUT_DR_SMP] = &ib_dr_smp_desc,
	[IB_MAD_LAYOUT_NODE_DESCRIPTION] = &ib_node_description_desc,
	[IB_MAD_LAYOUT_NODE_INFO] = &ib_node_info_desc,
	[IB_MAD_LAYOUT_PORT_INFO] = &ib_port_info_desc,
	[IB_MAD_LAYOUT_P_KEY_TABLE] = &ib_p_key_table_desc,
	[IB_MAD_LAYOUT_GUID_INFO] = &ib_guid_info_desc,
	[IB_MAD_LAYOUT_SM_INFO] = &ib_sm_info_desc,
	[IB_MAD_LAYOUT_SA] = &ib_sa_mad_desc,
	[IB_MAD_LAYOUT_PATH_RECORD] = &ib_path_record_desc,
	[IB_MAD_LAYOUT_MCMEMBER_RECORD] = &ib_mcmember_record_desc,
	[IB_MAD_LAYOUT_SERVICE_RECORD] = &ib_service_record_desc,
	[IB_MAD_LAYOUT_CM_REQ] = &ib_cm_req_desc,
	[IB_MAD_LAYOUT_CM_MRA] = &ib_cm_mra_desc,
	[IB_MAD_LAYOUT_CM_REJ] = &ib_cm_rej_desc,
	[IB_MAD_LAYOUT_CM_REP] = &ib_cm_rep_desc,
	[IB_MAD_LAYOUT_CM_RTU] = &ib_cm_rtu_desc,
	[IB_MAD_LAYOUT_CM_DREQ] = &ib_cm_dreq_desc,
	[IB_MAD_LAYOUT_CM_DREP] = &ib_cm_drep_desc,
	[IB_MAD_LAYOUT_CLASS_PORT_INFO] = &ib_class_port_info_desc,
	[IB_MAD_LAYOUT_PORT_COUNTERS] = &ib_port_counters_desc,
	[IB_MAD_LAYOUT_PORT_COUNTERS_EXT] = &ib_port_counters_ext_desc,
	[IB_MAD_LAYOUT_CM_SIDR_REQ] = &ib_cm_sidr_req_desc,
	[IB_MAD_LAYOUT_CM_SIDR_REP] = &ib_cm_sidr_rep_desc,
	[IB_MAD_LAYOUT_SWITCH_INFO] = &ib_switch_info_desc,
	[IB_MAD_LAYOUT_LFT_BLOCK] = &ib_lft_block_desc,
	[IB_MAD_LAYOUT_MFT_BLOCK] = &ib_mft_block_desc,
};

const struct ib_header_desc *ib_mad_layout_desc(enum ib_mad_layout layout)
{
	if ((unsigned)layout >= IB_MAD_LAYOUT_COUNT)
		return NULL;
	return layouts[layout];
}

void ib_mad_layout_encode(enum ib_mad_layout layout, const void *s, uint8_t *p)
{
	const struct ib_header_desc *d = ib_mad_layout_desc(layout);

	if (d)
		ib_desc_encode(d, s, p);
}

void ib_mad_layout_decode(enum ib_mad_layout layout, void *s, const uint8_t *p)
{
	const struct ib_header_desc *d = ib_mad_layout_desc(layout);

	if (d)
		ib_desc_decode(d, s, p);
}

unsigned ib_mad_data_offset(uint8_t mgmt_class)
{
	switch (mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		return IB_SMP_DATA_OFFSET;
	case IB_MGMT_CLASS_SUBN_ADM:
		return IB_SA_DATA_OFFSET;
	case IB_MGMT_CLASS_PERF:
		return IB_PERF_DATA_OFFSET;
	default:
		return IB_MAD_HDR_BYTES;
	}
}

struct attr_entry {
	uint16_t id;
	int layout; /* enum ib_mad_layout, or -1 when wire/ has none */
	const char *name;
};

static const struct attr_entry smp_attrs[] = {
	{IB_MAD_ATTR_CLASS_PORT_INFO, -1, "ClassPortInfo"},
	{IB_SMP_ATTR_NOTICE, -1, "Notice"},
	{IB_SMP_ATTR_NODE_DESCRIPTION, IB_MAD_LAYOUT_NODE_DESCRIPTION, "NodeDescription"},
	{IB_SMP_ATTR_NODE_INFO, IB_MAD_LAYOUT_NODE_INFO, "NodeInfo"},
	{IB_SMP_ATTR_SWITCH_INFO, IB_MAD_LAYOUT_SWITCH_INFO, "SwitchInfo"},
	{IB_SMP_ATTR_GUID_INFO, IB_MAD_LAYOUT_GUID_INFO, "GUIDInfo"},
	{IB_SMP_ATTR_PORT_INFO, IB_MAD_LAYOUT_PORT_INFO, "PortInfo"},
	{IB_SMP_ATTR_P_KEY_TABLE, IB_MAD_LAYOUT_P_KEY_TABLE, "P_KeyTable"},
	{IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE, -1, "SLtoVLMappingTable"},
	{IB_SMP_ATTR_VL_ARBITRATION_TABLE, -1, "VLArbitrationTable"},
	{IB_SMP_ATTR_LINEAR_FORWARDING_TABLE, IB_MAD_LAYOUT_LFT_BLOCK, "LinearForwardingTable"},
	{IB_SMP_ATTR_RANDOM_FORWARDING_TABLE, -1, "RandomForwardingTable"},
	{IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE, IB_MAD_LAYOUT_MFT_BLOCK,
	 "MulticastForwardingTable"},
	{IB_SMP_ATTR_SM_INFO, IB_MAD_LAYOUT_SM_INFO, "SMInfo"},
	{IB_SMP_ATTR_VENDOR_DIAG, -1, "VendorDiag"},
	{IB_SMP_ATTR_LED_INFO, -1, "LedInfo"},
	{0xff20, -1, "SoftibMulticastPorts"}, /* vendor: mgmt/mcast_ports.h */
};

static const struct attr_entry sa_attrs[] = {
	{IB_SA_ATTR_CLASS_PORT_INFO, -1, "ClassPortInfo"},
	{IB_SA_ATTR_NOTICE, -1, "Notice"},
	{IB_SA_ATTR_INFORM_INFO, -1, "InformInfo"},
	{IB_SA_ATTR_NODE_RECORD, -1, "NodeRecord"},
	{IB_SA_ATTR_PORT_INFO_RECORD, -1, "PortInfoRecord"},
	{IB_SA_ATTR_SL_TO_VL_MAPPING_TABLE_RECORD, -1, "SLtoVLMappingTableRecord"},
	{IB_SA_ATTR_SWITCH_INFO_RECORD, -1, "SwitchInfoRecord"},
	{IB_SA_ATTR_LINEAR_FORWARDING_TABLE_RECORD, -1, "LinearForwardingTableRecord"},
	{IB_SA_ATTR_RANDOM_FORWARDING_TABLE_RECORD, -1, "RandomForwardingTableRecord"},
	{IB_SA_ATTR_MULTICAST_FORWARDING_TABLE_RECORD, -1, "MulticastForwardingTableRecord"},
	{IB_SA_ATTR_SM_INFO_RECORD, -1, "SMInfoRecord"},
	{IB_SA_ATTR_LINK_RECORD, -1, "LinkRecord"},
	{IB_SA_ATTR_GUID_INFO_RECORD, -1, "GuidInfoRecord"},
	{IB_SA_ATTR_SERVICE_RECORD, IB_MAD_LAYOUT_SERVICE_RECORD, "ServiceRecord"},
	{IB_SA_ATTR_P_KEY_TABLE_RECORD, -1, "P_KeyTableRecord"},
	{IB_SA_ATTR_PATH_RECORD, IB_MAD_LAYOUT_PATH_RECORD, "PathRecord"},
	{IB_SA_ATTR_VL_ARBITRATION_TABLE_RECORD, -1, "VLArbitrationTableRecord"},
	{IB_SA_ATTR_MCMEMBER_RECORD, IB_MAD_LAYOUT_MCMEMBER_RECORD, "MCMemberRecord"},
	{IB_SA_ATTR_TRACE_RECORD, -1, "TraceRecord"},
	{IB_SA_ATTR_MULTI_PATH_RECORD, -1, "MultiPathRecord"},
	{IB_SA_ATTR_INFORM_INFO_RECORD, -1, "InformInfoRecord"},
};

static const struct attr_entry perf_attrs[] = {
	{IB_PERF_ATTR_CLASS_PORT_INFO, IB_MAD_LAYOUT_CLASS_PORT_INFO, "ClassPortInfo"},
	{IB_PERF_ATTR_PORT_SAMPLES_CONTROL, -1, "PortSamplesControl"},
	{IB_PERF_ATTR_PORT_SAMPLES_RESULT, -1, "PortSamplesResult"},
	{IB_PERF_ATTR_PORT_COUNTERS, IB_MAD_LAYOUT_PORT_COUNTERS, "PortCounters"},
	{IB_PERF_ATTR_PORT_COUNTERS_EXT, IB_MAD_LAYOUT_PORT_COUNTERS_EXT, "PortCountersExtended"},
};

static const struct attr_entry cm_attrs[] = {
	{IB_CM_ATTR_CLASS_PORT_INFO, -1, "ClassPortInfo"},
	{IB_CM_ATTR_REQ, IB_MAD_LAYOUT_CM_REQ, "ConnectRequest"},
	{IB_CM_ATTR_MRA, IB_MAD_LAYOUT_CM_MRA, "MsgRcptAck"},
	{IB_CM_ATTR_REJ, IB_MAD_LAYOUT_CM_REJ, "ConnectReject"},
	{IB_CM_ATTR_REP, IB_MAD_LAYOUT_CM_REP, "ConnectReply"},
	{IB_CM_ATTR_RTU, IB_MAD_LAYOUT_CM_RTU, "ReadyToUse"},
	{IB_CM_ATTR_DREQ, IB_MAD_LAYOUT_CM_DREQ, "DisconnectRequest"},
	{IB_CM_ATTR_DREP, IB_MAD_LAYOUT_CM_DREP, "DisconnectReply"},
	{IB_CM_ATTR_SIDR_REQ, IB_MAD_LAYOUT_CM_SIDR_REQ, "ServiceIDResReq"},
	{IB_CM_ATTR_SIDR_REP, IB_MAD_LAYOUT_CM_SIDR_REP, "ServiceIDResReqResp"},
	{IB_CM_ATTR_LAP, -1, "LoadAlternatePath"},
	{IB_CM_ATTR_APR, -1, "AlternatePathResponse"},
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct attr_entry *attr_find(uint8_t mgmt_class, uint16_t attr_id)
{
	const struct attr_entry *t;
	size_t n;

	switch (mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		t = smp_attrs;
		n = ARRAY_LEN(smp_attrs);
		break;
	case IB_MGMT_CLASS_SUBN_ADM:
		t = sa_attrs;
		n = ARRAY_LEN(sa_attrs);
		break;
	case IB_MGMT_CLASS_CM:
		t = cm_attrs;
		n = ARRAY_LEN(cm_attrs);
		break;
	case IB_MGMT_CLASS_PERF:
		t = perf_attrs;
		n = ARRAY_LEN(perf_attrs);
		break;
	default:
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (t[i].id == attr_id)
			return &t[i];
	return NULL;
}

bool ib_mad_attr_layout(uint8_t mgmt_class, uint16_t attr_id, enum ib_mad_layout *layout,
			unsigned *offset)
{
	const struct attr_entry *e = attr_find(mgmt_class, attr_id);

	if (!e || e->layout < 0)
		return false;
	if (layout)
		*layout = (enum ib_mad_layout)e->layout;
	if (offset)
		*offset = ib_mad_data_offset(mgmt_class);
	return true;
}

const char *ib_mad_attr_str(uint8_t mgmt_class, uint16_t attr_id)
{
	const struct attr_entry *e = attr_find(mgmt_class, attr_id);

	return e ? e->name : "UnknownAttribute";
}

const char *ib_mad_class_str(uint8_t mgmt_class)
{
	switch (mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
		return "SubnMgt(LID-routed)";
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		return "SubnMgt(directed-route)";
	case IB_MGMT_CLASS_SUBN_ADM:
		return "SubnAdm";
	case IB_MGMT_CLASS_PERF:
		return "PerfMgt";
	case IB_MGMT_CLASS_BM:
		return "BaseboardMgt";
	case IB_MGMT_CLASS_DEVICE_MGT:
		return "DevMgt";
	case IB_MGMT_CLASS_CM:
		return "CM";
	case IB_MGMT_CLASS_SNMP:
		return "SNMP";
	}
	if ((mgmt_class >= 0x09 && mgmt_class <= 0x0f) || (mgmt_class >= 0x30 && mgmt_class <= 0x4f))
		return "Vendor";
	if (mgmt_class >= 0x10 && mgmt_class <= 0x2f)
		return "Application";
	return "UnknownClass";
}

const char *ib_mad_method_str(uint8_t method)
{
	switch (method) {
	case IB_MAD_METHOD_GET:
		return "Get";
	case IB_MAD_METHOD_SET:
		return "Set";
	case IB_MAD_METHOD_SEND:
		return "Send";
	case IB_MAD_METHOD_TRAP:
		return "Trap";
	case IB_MAD_METHOD_REPORT:
		return "Report";
	case IB_MAD_METHOD_TRAP_REPRESS:
		return "TrapRepress";
	case IB_MAD_METHOD_GET_TABLE:
		return "GetTable";
	case IB_MAD_METHOD_GET_TRACE_TABLE:
		return "GetTraceTable";
	case IB_MAD_METHOD_GET_MULTI:
		return "GetMulti";
	case IB_MAD_METHOD_DELETE:
		return "Delete";
	case IB_MAD_METHOD_GET_RESP:
		return "GetResp";
	case IB_MAD_METHOD_REPORT_RESP:
		return "ReportResp";
	case IB_MAD_METHOD_GET_TABLE_RESP:
		return "GetTableResp";
	case IB_MAD_METHOD_GET_MULTI_RESP:
		return "GetMultiResp";
	case IB_MAD_METHOD_DELETE_RESP:
		return "DeleteResp";
	}
	return "UnknownMethod";
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * CM message layouts (IBA 12.6, 12.11): every message round trips, fields sit
 * at the bit positions of IBA's message tables, the REQ/REP/RTU of a real
 * hardware capture decode to what tshark reads in them, and the RDMA IP CM
 * header (Annex A11) sits where Linux's rdma_cm puts it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "wire/cm.h"
#include "wire/cm_ip.h"
#include "wire/mad.h"

#include "mad_capture.h"

static void fill_bytes(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13);
}

static struct ib_cm_req sample_req(void)
{
	struct ib_cm_req r;

	memset(&r, 0, sizeof(r));
	r.LocalCommID = 0x11223344;
	r.VendorID = 0x0002c9;
	r.ServiceID = UINT64_C(0x0000000001060000);
	r.LocalCAGUID = UINT64_C(0x0002c90300001234);
	r.LocalQ_Key = 0x80010000;
	r.LocalQPN = 0x000345;
	r.ResponderResources = 4;
	r.LocalEECN = 0xabcdef;
	r.InitiatorDepth = 8;
	r.RemoteEECN = 0x123456;
	r.RemoteCMResponseTimeout = 0x14;
	r.TransportServiceType = IB_CM_TRANSPORT_UC;
	r.EndToEndFlowControl = 1;
	r.StartingPSN = 0x000777;
	r.LocalCMResponseTimeout = 0x17;
	r.RetryCount = 7;
	r.P_Key = 0xffff;
	r.PathPacketPayloadMTU = IB_MTU_4096;
	r.RDCExists = 1;
	r.RNRRetryCount = 6;
	r.MaxCMRetries = 15;
	r.SRQ = 1;
	r.ExtendedTransportType = 1;
	r.Primary.LocalPortLID = 0x0004;
	r.Primary.RemotePortLID = 0x0001;
	r.Primary.LocalPortGID.raw[0] = 0xfe;
	r.Primary.LocalPortGID.raw[1] = 0x80;
	r.Primary.LocalPortGID.raw[15] = 0x36;
	r.Primary.RemotePortGID.raw[15] = 0xdd;
	r.Primary.FlowLabel = 0xfedcb;
	r.Primary.PacketRate = 0x3f;
	r.Primary.TrafficClass = 0x12;
	r.Primary.HopLimit = 0x40;
	r.Primary.SL = 0xa;
	r.Primary.SubnetLocal = 1;
	r.Primary.LocalACKTimeout = 0x13;
	r.Alternate.LocalPortLID = 0x0104;
	r.Alternate.RemotePortLID = 0x0101;
	r.Alternate.RemotePortGID.raw[15] = 0xee;
	r.Alternate.FlowLabel = 1;
	r.Alternate.PacketRate = 3;
	r.Alternate.SL = 5;
	r.Alternate.LocalACKTimeout = 0x1f;
	fill_bytes(r.PrivateData, sizeof(r.PrivateData), 1);
	return r;
}

static void test_req_round_trips(void **state)
{
	struct ib_cm_req r = sample_req(), back;
	uint8_t p[IB_CM_MSG_BYTES], again[IB_CM_MSG_BYTES];

	(void)state;
	ib_cm_req_encode(&r, p);
	memset(&back, 0x5a, sizeof(back));
	ib_cm_req_decode(&back, p);
	assert_int_equal(back.LocalCommID, r.LocalCommID);
	assert_int_equal(back.VendorID, r.VendorID);
	assert_true(back.ServiceID == r.ServiceID);
	assert_true(back.LocalCAGUID == r.LocalCAGUID);
	assert_int_equal(back.LocalQPN, r.LocalQPN);
	assert_int_equal(back.LocalEECN, r.LocalEECN);
	assert_int_equal(back.RemoteEECN, r.RemoteEECN);
	assert_int_equal(back.TransportServiceType, r.TransportServiceType);
	assert_int_equal(back.StartingPSN, r.StartingPSN);
	assert_int_equal(back.RetryCount, r.RetryCount);
	assert_int_equal(back.RNRRetryCount, r.RNRRetryCount);
	assert_int_equal(back.ExtendedTransportType, r.ExtendedTransportType);
	assert_int_equal(back.Primary.FlowLabel, r.Primary.FlowLabel);
	assert_int_equal(back.Primary.PacketRate, r.Primary.PacketRate);
	assert_int_equal(back.Primary.LocalACKTimeout, r.Primary.LocalACKTimeout);
	assert_memory_equal(back.Primary.LocalPortGID.raw, r.Primary.LocalPortGID.raw, 16);
	assert_memory_equal(back.Alternate.RemotePortGID.raw, r.Alternate.RemotePortGID.raw, 16);
	assert_int_equal(back.Alternate.LocalPortLID, r.Alternate.LocalPortLID);
	assert_int_equal(back.Alternate.SL, r.Alternate.SL);
	assert_memory_equal(back.PrivateData, r.PrivateData, sizeof(r.PrivateData));
	ib_cm_req_encode(&back, again);
	assert_memory_equal(again, p, sizeof(p));
}

static void test_req_fields_at_iba_positions(void **state)
{
	struct ib_cm_req r = sample_req();
	uint8_t p[IB_CM_MSG_BYTES];

	(void)state;
	ib_cm_req_encode(&r, p);
	assert_int_equal(p[0], 0x11);
	assert_int_equal(p[3], 0x44);
	assert_int_equal(p[4], 0); /* reserved */
	assert_int_equal(p[7], 0xc9);
	assert_int_equal(p[13], 0x06);
	assert_int_equal(p[23], 0x34);
	assert_int_equal(p[28], 0x80);
	assert_int_equal(p[32], 0x00);
	assert_int_equal(p[33], 0x03);
	assert_int_equal(p[34], 0x45);
	assert_int_equal(p[35], 4);
	assert_int_equal(p[36], 0xab);
	assert_int_equal(p[39], 8);
	assert_int_equal(p[40], 0x12);
	/* RemoteCMResponseTimeout 0x14, TransportServiceType 1, EndToEndFlowControl 1 */
	assert_int_equal(p[43], 0xa3);
	assert_int_equal(p[46], 0x77);
	/* LocalCMResponseTimeout 0x17, RetryCount 7 */
	assert_int_equal(p[47], 0xbf);
	assert_int_equal(p[48], 0xff);
	/* MTU 5, RDCExists 1, RNRRetryCount 6 */
	assert_int_equal(p[50], 0x5e);
	/* MaxCMRetries 15, SRQ 1, ExtendedTransportType 1 */
	assert_int_equal(p[51], 0xf9);
	assert_int_equal(p[53], 0x04);
	assert_int_equal(p[55], 0x01);
	assert_int_equal(p[56], 0xfe);
	assert_int_equal(p[71], 0x36);
	assert_int_equal(p[87], 0xdd);
	/* FlowLabel 0xfedcb, 6 reserved bits, PacketRate 0x3f */
	assert_int_equal(p[88], 0xfe);
	assert_int_equal(p[89], 0xdc);
	assert_int_equal(p[90], 0xb0);
	assert_int_equal(p[91], 0x3f);
	assert_int_equal(p[92], 0x12);
	assert_int_equal(p[93], 0x40);
	assert_int_equal(p[94], 0xa8);
	assert_int_equal(p[95], 0x98);
	assert_int_equal(p[96], 0x01);
	assert_int_equal(p[99], 0x01);
	assert_int_equal(p[131], 0xee);
	assert_int_equal(p[134], 0x10);
	assert_int_equal(p[135], 0x03);
	assert_int_equal(p[138], 0x50);
	assert_int_equal(p[139], 0xf8);
	assert_int_equal(p[140], r.PrivateData[0]);
	assert_int_equal(p[231], r.PrivateData[91]);
}

static void test_rep_fields_at_iba_positions(void **state)
{
	struct ib_cm_rep r, back;
	uint8_t p[IB_CM_MSG_BYTES];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.LocalCommID = 0xf9024539;
	r.RemoteCommID = 0xe9488627;
	r.LocalQ_Key = 0x01020304;
	r.LocalQPN = 0xfc0407;
	r.LocalEECN = 0x0a0b0c;
	r.StartingPSN = 0xd40a55;
	r.ResponderResources = 1;
	r.InitiatorDepth = 2;
	r.TargetACKDelay = 0x0f;
	r.FailoverAccepted = 2;
	r.EndToEndFlowControl = 1;
	r.RNRRetryCount = 7;
	r.SRQ = 1;
	r.LocalCAGUID = UINT64_C(0x0002c9020020b4dc);
	fill_bytes(r.PrivateData, sizeof(r.PrivateData), 9);
	ib_cm_rep_encode(&r, p);
	assert_int_equal(p[4], 0xe9);
	assert_int_equal(p[8], 0x01);
	assert_int_equal(p[12], 0xfc);
	assert_int_equal(p[14], 0x07);
	assert_int_equal(p[15], 0);
	assert_int_equal(p[16], 0x0a);
	assert_int_equal(p[20], 0xd4);
	assert_int_equal(p[22], 0x55);
	assert_int_equal(p[24], 1);
	assert_int_equal(p[25], 2);
	assert_int_equal(p[26], 0x7d);
	assert_int_equal(p[27], 0xf0);
	assert_int_equal(p[28], 0x00);
	assert_int_equal(p[35], 0xdc);
	assert_int_equal(p[36], r.PrivateData[0]);
	assert_int_equal(p[231], r.PrivateData[195]);
	ib_cm_rep_decode(&back, p);
	assert_int_equal(back.LocalQPN, r.LocalQPN);
	assert_int_equal(back.FailoverAccepted, 2);
	assert_true(back.LocalCAGUID == r.LocalCAGUID);
	assert_memory_equal(back.PrivateData, r.PrivateData, sizeof(r.PrivateData));
}

static void test_rej_fields_at_iba_positions(void **state)
{
	struct ib_cm_rej r, back;
	uint8_t p[IB_CM_MSG_BYTES];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.LocalCommID = 1;
	r.RemoteCommID = 2;
	r.MessageRejected = IB_CM_MSG_REP;
	r.RejectedInfoLength = 0x48;
	r.Reason = IB_CM_REJ_INVALID_SERVICE_ID;
	fill_bytes(r.ARI, sizeof(r.ARI), 3);
	fill_bytes(r.PrivateData, sizeof(r.PrivateData), 4);
	ib_cm_rej_encode(&r, p);
	assert_int_equal(p[8], 0x40);
	assert_int_equal(p[9], 0x90);
	assert_int_equal(p[10], 0);
	assert_int_equal(p[11], 8);
	assert_int_equal(p[12], r.ARI[0]);
	assert_int_equal(p[83], r.ARI[71]);
	assert_int_equal(p[84], r.PrivateData[0]);
	assert_int_equal(p[231], r.PrivateData[147]);
	ib_cm_rej_decode(&back, p);
	assert_int_equal(back.MessageRejected, IB_CM_MSG_REP);
	assert_int_equal(back.RejectedInfoLength, 0x48);
	assert_int_equal(back.Reason, IB_CM_REJ_INVALID_SERVICE_ID);
	assert_memory_equal(back.ARI, r.ARI, sizeof(r.ARI));
}

static void test_mra_rtu_dreq_drep_fields_at_iba_positions(void **state)
{
	struct ib_cm_mra mra, mra2;
	struct ib_cm_rtu rtu, rtu2;
	struct ib_cm_dreq dreq, dreq2;
	struct ib_cm_drep drep, drep2;
	uint8_t p[IB_CM_MSG_BYTES];

	(void)state;
	memset(&mra, 0, sizeof(mra));
	mra.LocalCommID = 0xa1a2a3a4;
	mra.RemoteCommID = 0xb1b2b3b4;
	mra.MessageMRAed = IB_CM_MSG_OTHER;
	mra.ServiceTimeout = 0x1f;
	fill_bytes(mra.PrivateData, sizeof(mra.PrivateData), 5);
	ib_cm_mra_encode(&mra, p);
	assert_int_equal(p[7], 0xb4);
	assert_int_equal(p[8], 0x80);
	assert_int_equal(p[9], 0xf8);
	assert_int_equal(p[10], mra.PrivateData[0]);
	ib_cm_mra_decode(&mra2, p);
	assert_int_equal(mra2.ServiceTimeout, 0x1f);
	assert_int_equal(mra2.MessageMRAed, IB_CM_MSG_OTHER);
	assert_memory_equal(mra2.PrivateData, mra.PrivateData, sizeof(mra.PrivateData));

	memset(&rtu, 0, sizeof(rtu));
	rtu.LocalCommID = 0x01020304;
	rtu.RemoteCommID = 0x05060708;
	fill_bytes(rtu.PrivateData, sizeof(rtu.PrivateData), 6);
	ib_cm_rtu_encode(&rtu, p);
	assert_int_equal(p[4], 0x05);
	assert_int_equal(p[8], rtu.PrivateData[0]);
	ib_cm_rtu_decode(&rtu2, p);
	assert_int_equal(rtu2.RemoteCommID, 0x05060708);
	assert_memory_equal(rtu2.PrivateData, rtu.PrivateData, sizeof(rtu.PrivateData));

	memset(&dreq, 0, sizeof(dreq));
	dreq.LocalCommID = 7;
	dreq.RemoteCommID = 8;
	dreq.RemoteQPN = 0x123456;
	fill_bytes(dreq.PrivateData, sizeof(dreq.PrivateData), 7);
	ib_cm_dreq_encode(&dreq, p);
	assert_int_equal(p[8], 0x12);
	assert_int_equal(p[10], 0x56);
	assert_int_equal(p[11], 0);
	assert_int_equal(p[12], dreq.PrivateData[0]);
	ib_cm_dreq_decode(&dreq2, p);
	assert_int_equal(dreq2.RemoteQPN, 0x123456);

	memset(&drep, 0, sizeof(drep));
	drep.LocalCommID = 8;
	drep.RemoteCommID = 7;
	fill_bytes(drep.PrivateData, sizeof(drep.PrivateData), 8);
	ib_cm_drep_encode(&drep, p);
	assert_int_equal(p[3], 8);
	assert_int_equal(p[231], drep.PrivateData[223]);
	ib_cm_drep_decode(&drep2, p);
	assert_int_equal(drep2.LocalCommID, 8);
	assert_memory_equal(drep2.PrivateData, drep.PrivateData, sizeof(drep.PrivateData));
}

/* IBA 12.11 Tables 119 and 120: byte positions of every SIDR field. */
static void test_sidr_fields_at_iba_positions(void **state)
{
	struct ib_cm_sidr_req q, q2;
	struct ib_cm_sidr_rep r, r2;
	uint8_t p[IB_CM_MSG_BYTES];

	(void)state;
	memset(&q, 0, sizeof(q));
	q.RequestID = 0x0a0b0c0d;
	q.P_Key = 0xffff;
	q.ServiceID = UINT64_C(0x0000000001111c06);
	fill_bytes(q.PrivateData, sizeof(q.PrivateData), 3);
	memset(p, 0xee, sizeof(p));
	ib_cm_sidr_req_encode(&q, p);
	assert_int_equal(p[3], 0x0d);
	assert_int_equal(p[4], 0xff);
	assert_int_equal(p[5], 0xff);
	assert_int_equal(p[6], 0); /* reserved */
	assert_int_equal(p[7], 0);
	assert_int_equal(p[12], 0x01);
	assert_int_equal(p[13], 0x11);
	assert_int_equal(p[15], 0x06);
	assert_int_equal(p[16], q.PrivateData[0]);
	assert_int_equal(p[231], q.PrivateData[215]);
	ib_cm_sidr_req_decode(&q2, p);
	assert_true(q2.ServiceID == q.ServiceID);
	assert_memory_equal(q2.PrivateData, q.PrivateData, sizeof(q.PrivateData));

	memset(&r, 0, sizeof(r));
	r.RequestID = 0x0a0b0c0d;
	r.Status = IB_CM_SIDR_REJECT;
	r.AdditionalInfoLength = 0;
	r.QPN = 0x123456;
	r.ServiceID = UINT64_C(0x0000000001111c06);
	r.Q_Key = 0x01234567;
	fill_bytes(r.PrivateData, sizeof(r.PrivateData), 9);
	ib_cm_sidr_rep_encode(&r, p);
	assert_int_equal(p[4], IB_CM_SIDR_REJECT);
	assert_int_equal(p[8], 0x12);
	assert_int_equal(p[10], 0x56);
	assert_int_equal(p[11], 0); /* reserved */
	assert_int_equal(p[19], 0x06);
	assert_int_equal(p[20], 0x01);
	assert_int_equal(p[23], 0x67);
	assert_int_equal(p[96], r.PrivateData[0]);
	assert_int_equal(p[231], r.PrivateData[135]);
	ib_cm_sidr_rep_decode(&r2, p);
	assert_int_equal(r2.QPN, 0x123456);
	assert_int_equal(r2.Q_Key, 0x01234567);
	assert_memory_equal(r2.PrivateData, r.PrivateData, sizeof(r.PrivateData));
}

/* Annex A11: the service ID of port 7174 over TCP is what rping's REQ
 * carries, and the header puts an IPv4 address in its last 4 bytes. */
static void test_ip_cm_service_id_and_header(void **state)
{
	struct ib_cm_ip_hdr h, h2;
	uint8_t p[IB_CM_IP_HDR_BYTES];

	(void)state;
	assert_true(ib_cm_ip_service_id(6, 7174) == UINT64_C(0x0000000001061c06));
	assert_true(ib_cm_ip_service_id_is(UINT64_C(0x0000000001111c06)));
	assert_false(ib_cm_ip_service_id_is(UINT64_C(0x1000000000000404)));
	memset(&h, 0, sizeof(h));
	h.IPV = 4;
	h.SrcPort = 0xabcd;
	h.SrcIP[12] = 127;
	h.SrcIP[15] = 1;
	h.DstIP[12] = 10;
	h.DstIP[15] = 2;
	ib_cm_ip_hdr_encode(&h, p);
	assert_int_equal(p[0], 0x00);
	assert_int_equal(p[1], 0x40);
	assert_int_equal(p[2], 0xab);
	assert_int_equal(p[3], 0xcd);
	assert_int_equal(p[16], 127);
	assert_int_equal(p[19], 1);
	assert_int_equal(p[32], 10);
	assert_int_equal(p[35], 2);
	ib_cm_ip_hdr_decode(&h2, p);
	assert_null(ib_cm_ip_hdr_check(&h2));
	assert_memory_equal(h2.DstIP, h.DstIP, 16);
	p[0] = 0x10;
	ib_cm_ip_hdr_decode(&h2, p);
	assert_non_null(ib_cm_ip_hdr_check(&h2));
	p[0] = 0;
	p[1] = 0x50;
	ib_cm_ip_hdr_decode(&h2, p);
	assert_non_null(ib_cm_ip_hdr_check(&h2));
	p[1] = 0x40;
	p[5] = 1; /* IPv4 padding */
	ib_cm_ip_hdr_decode(&h2, p);
	assert_non_null(ib_cm_ip_hdr_check(&h2));
}

/* Values wider than a field keep only the field's bits: they never spill
 * into a neighbour. */
static void test_oversized_values_do_not_spill(void **state)
{
	struct ib_cm_req r;
	uint8_t p[IB_CM_MSG_BYTES];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.LocalQPN = 0xff000001;
	r.TransportServiceType = 0xff;
	ib_cm_req_encode(&r, p);
	assert_int_equal(p[31], 0);
	assert_int_equal(p[34], 0x01);
	assert_int_equal(p[35], 0);
	assert_int_equal(p[43], 0x06);
}

static void test_cm_layouts_are_listed(void **state)
{
	static const struct {
		uint16_t attr;
		enum ib_mad_layout layout;
	} want[] = {
		{IB_CM_ATTR_REQ, IB_MAD_LAYOUT_CM_REQ},	  {IB_CM_ATTR_MRA, IB_MAD_LAYOUT_CM_MRA},
		{IB_CM_ATTR_REJ, IB_MAD_LAYOUT_CM_REJ},	  {IB_CM_ATTR_REP, IB_MAD_LAYOUT_CM_REP},
		{IB_CM_ATTR_RTU, IB_MAD_LAYOUT_CM_RTU},	  {IB_CM_ATTR_DREQ, IB_MAD_LAYOUT_CM_DREQ},
		{IB_CM_ATTR_DREP, IB_MAD_LAYOUT_CM_DREP},
		{IB_CM_ATTR_SIDR_REQ, IB_MAD_LAYOUT_CM_SIDR_REQ},
		{IB_CM_ATTR_SIDR_REP, IB_MAD_LAYOUT_CM_SIDR_REP},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		enum ib_mad_layout l;
		unsigned off;

		assert_true(ib_mad_attr_layout(IB_MGMT_CLASS_CM, want[i].attr, &l, &off));
		assert_int_equal(l, want[i].layout);
		assert_int_equal(off, IB_CM_DATA_OFFSET);
		assert_int_equal(ib_mad_layout_desc(l)->bytes, IB_CM_MSG_BYTES);
	}
	assert_string_equal(ib_mad_attr_str(IB_MGMT_CLASS_CM, IB_CM_ATTR_REQ), "ConnectRequest");
	assert_false(ib_mad_attr_layout(IB_MGMT_CLASS_CM, IB_CM_ATTR_LAP, NULL, NULL));
}

/* ------------------------------------------------------------ hardware capture */

static void assert_cm_mad(const uint8_t *m, uint16_t attr)
{
	struct ib_mad_hdr h;

	ib_mad_hdr_decode(&h, m);
	assert_int_equal(h.MgmtClass, IB_MGMT_CLASS_CM);
	assert_int_equal(h.ClassVersion, IB_CM_CLASS_VERSION);
	assert_int_equal(ib_mad_method(&h), IB_MAD_METHOD_SEND);
	assert_true(h.TransactionID == UINT64_C(0x00000010278648e9));
	assert_int_equal(h.AttributeID, attr);
}

static void assert_data_round_trips(enum ib_mad_layout l, const uint8_t *data)
{
	uint8_t s[512], out[IB_CM_MSG_BYTES];

	ib_mad_layout_decode(l, s, data);
	ib_mad_layout_encode(l, s, out);
	assert_memory_equal(out, data, IB_CM_MSG_BYTES);
}

/* Frame 7: ConnectRequest, LID 4 to LID 1. */
static void test_capture_req(void **state)
{
	static const uint8_t lgid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					 0x00, 0x02, 0xc9, 0x02, 0x00, 0x24, 0xf6, 0x36};
	static const uint8_t rgid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					 0x00, 0x02, 0xc9, 0x02, 0x00, 0x20, 0xb4, 0xdd};
	const uint8_t *m;
	struct ib_cm_req r;

	(void)state;
	m = cap_mad(7);
	assert_cm_mad(m, IB_CM_ATTR_REQ);
	ib_cm_req_decode(&r, m + IB_CM_DATA_OFFSET);
	assert_int_equal(r.LocalCommID, 0xe9488627);
	assert_true(r.ServiceID == UINT64_C(0x1000000000000404));
	assert_true(r.LocalCAGUID == UINT64_C(0x0002c9020024f634));
	assert_int_equal(r.LocalQ_Key, 0);
	assert_int_equal(r.LocalQPN, 0x870408);
	assert_int_equal(r.ResponderResources, 4);
	assert_int_equal(r.InitiatorDepth, 0);
	assert_int_equal(r.RemoteCMResponseTimeout, 0x14);
	assert_int_equal(r.TransportServiceType, IB_CM_TRANSPORT_RC);
	assert_int_equal(r.EndToEndFlowControl, 0);
	assert_int_equal(r.StartingPSN, 0);
	assert_int_equal(r.LocalCMResponseTimeout, 0x14);
	assert_int_equal(r.RetryCount, 0);
	assert_int_equal(r.P_Key, 0xffff);
	assert_int_equal(r.PathPacketPayloadMTU, IB_MTU_2048);
	assert_int_equal(r.RDCExists, 0);
	assert_int_equal(r.RNRRetryCount, 0);
	assert_int_equal(r.MaxCMRetries, 15);
	assert_int_equal(r.SRQ, 1);
	assert_int_equal(r.ExtendedTransportType, 0);
	assert_int_equal(r.Primary.LocalPortLID, 4);
	assert_int_equal(r.Primary.RemotePortLID, 1);
	assert_memory_equal(r.Primary.LocalPortGID.raw, lgid, 16);
	assert_memory_equal(r.Primary.RemotePortGID.raw, rgid, 16);
	assert_int_equal(r.Primary.FlowLabel, 0);
	assert_int_equal(r.Primary.SL, 0);
	assert_int_equal(r.Primary.SubnetLocal, 1);
	assert_int_equal(r.Primary.LocalACKTimeout, 0x13);
	assert_int_equal(r.Alternate.LocalPortLID, 0);
	assert_int_equal(r.Alternate.SubnetLocal, 0);
	assert_int_equal(r.PrivateData[2], 0x04);
	assert_int_equal(r.PrivateData[3], 0x05);
	assert_int_equal(r.PrivateData[6], 0xff);
	assert_int_equal(r.PrivateData[7], 0xf4);
	assert_data_round_trips(IB_MAD_LAYOUT_CM_REQ, m + IB_CM_DATA_OFFSET);
}

/* Frame 8: ConnectReply, LID 1 to LID 4. */
static void test_capture_rep(void **state)
{
	const uint8_t *m;
	struct ib_cm_rep r;

	(void)state;
	m = cap_mad(8);
	assert_cm_mad(m, IB_CM_ATTR_REP);
	ib_cm_rep_decode(&r, m + IB_CM_DATA_OFFSET);
	assert_int_equal(r.LocalCommID, 0xf9024539);
	assert_int_equal(r.RemoteCommID, 0xe9488627);
	assert_int_equal(r.LocalQ_Key, 0);
	assert_int_equal(r.LocalQPN, 0xfc0407);
	assert_int_equal(r.LocalEECN, 0);
	assert_int_equal(r.StartingPSN, 0xd40a55);
	assert_int_equal(r.ResponderResources, 0);
	assert_int_equal(r.InitiatorDepth, 0);
	assert_int_equal(r.TargetACKDelay, 0x0f);
	assert_int_equal(r.FailoverAccepted, 0);
	assert_int_equal(r.EndToEndFlowControl, 0);
	assert_int_equal(r.RNRRetryCount, 0);
	assert_int_equal(r.SRQ, 1);
	assert_true(r.LocalCAGUID == UINT64_C(0x0002c9020020b4dc));
	assert_int_equal(r.PrivateData[2], 0x04);
	assert_int_equal(r.PrivateData[3], 0x04);
	assert_data_round_trips(IB_MAD_LAYOUT_CM_REP, m + IB_CM_DATA_OFFSET);
}

/* Frame 9: ReadyToUse, LID 4 to LID 1. */
static void test_capture_rtu(void **state)
{
	const uint8_t *m;
	struct ib_cm_rtu r;

	(void)state;
	m = cap_mad(9);
	assert_cm_mad(m, IB_CM_ATTR_RTU);
	ib_cm_rtu_decode(&r, m + IB_CM_DATA_OFFSET);
	assert_int_equal(r.LocalCommID, 0xe9488627);
	assert_int_equal(r.RemoteCommID, 0xf9024539);
	for (size_t i = 0; i < sizeof(r.PrivateData); i++)
		assert_int_equal(r.PrivateData[i], 0);
	assert_data_round_trips(IB_MAD_LAYOUT_CM_RTU, m + IB_CM_DATA_OFFSET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_round_trips),
		cmocka_unit_test(test_req_fields_at_iba_positions),
		cmocka_unit_test(test_rep_fields_at_iba_positions),
		cmocka_unit_test(test_rej_fields_at_iba_positions),
		cmocka_unit_test(test_mra_rtu_dreq_drep_fields_at_iba_positions),
		cmocka_unit_test(test_sidr_fields_at_iba_positions),
		cmocka_unit_test(test_ip_cm_service_id_and_header),
		cmocka_unit_test(test_oversized_values_do_not_spill),
		cmocka_unit_test(test_cm_layouts_are_listed),
		cmocka_unit_test(test_capture_req),
		cmocka_unit_test(test_capture_rep),
		cmocka_unit_test(test_capture_rtu),
	};

	return cmocka_run_group_tests_name("wire_cm", tests, cap_setup, cap_teardown);
}

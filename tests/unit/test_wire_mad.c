/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * MAD, SMP, SMP attribute and SA layouts: the generic bit-field codec, the
 * soundness of every field table, round trips, fields at the bit positions
 * IBA gives, and the MADs of a real hardware capture.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "wire/bitfield.h"
#include "wire/cm.h"
#include "wire/mad.h"
#include "wire/perfmgt.h"
#include "wire/sa.h"
#include "wire/smp.h"

#include "mad_capture.h"

/* ------------------------------------------------------------ helpers */

static uint64_t mask_of(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

static uint64_t member_get(const void *s, const struct ib_field_desc *f)
{
	return ib_member_load((const uint8_t *)s + f->offset, f->size);
}

static void member_set(void *s, const struct ib_field_desc *f, uint64_t v)
{
	uint8_t *m = (uint8_t *)s + f->offset;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		memcpy(m, &u8, 1);
		break;
	case 2:
		memcpy(m, &u16, 2);
		break;
	case 4:
		memcpy(m, &u32, 4);
		break;
	default:
		memcpy(m, &v, 8);
		break;
	}
}

static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* Every field gets a distinct value that fits its width. */
static void fill_fields(const struct ib_header_desc *d, void *s, uint64_t seed)
{
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];

		if (f->bits > 64) {
			uint8_t *m = (uint8_t *)s + f->offset;

			for (unsigned k = 0; k < f->bits / 8u; k++)
				m[k] = (uint8_t)mix(seed + i * 1000u + k);
		} else {
			member_set(s, f, mix(seed + i) & mask_of(f->bits));
		}
	}
}

static void assert_fields_equal(const struct ib_header_desc *d, const void *a, const void *b)
{
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];

		if (f->bits > 64) {
			assert_memory_equal((const uint8_t *)a + f->offset,
					    (const uint8_t *)b + f->offset, f->bits / 8u);
		} else if (member_get(a, f) != member_get(b, f)) {
			fail_msg("%s.%s: %#llx != %#llx", d->name, f->name,
				 (unsigned long long)member_get(a, f),
				 (unsigned long long)member_get(b, f));
		}
	}
}

/* Largest struct any layout decodes into. */
#define STRUCT_MAX 512
_Static_assert(sizeof(struct ib_sa_mad) <= STRUCT_MAX, "STRUCT_MAX");
_Static_assert(sizeof(struct ib_dr_smp) <= STRUCT_MAX, "STRUCT_MAX");
_Static_assert(sizeof(struct ib_service_record) <= STRUCT_MAX, "STRUCT_MAX");
_Static_assert(sizeof(struct ib_cm_req) <= STRUCT_MAX, "STRUCT_MAX");
_Static_assert(sizeof(struct ib_cm_rej) <= STRUCT_MAX, "STRUCT_MAX");
_Static_assert(sizeof(struct ib_cm_drep) <= STRUCT_MAX, "STRUCT_MAX");
_Static_assert(sizeof(struct ib_cm_sidr_rep) <= STRUCT_MAX, "STRUCT_MAX");

static const uint8_t *hex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return out;
}

/* ------------------------------------------------------------ bit fields */

static void test_bits_get_reads_msb_first_across_bytes(void **state)
{
	const uint8_t p[] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f};

	(void)state;
	assert_int_equal(ib_bits_get(p, 0, 8), 0x12);
	assert_int_equal(ib_bits_get(p, 4, 8), 0x23);
	assert_int_equal(ib_bits_get(p, 12, 20), 0x45678);
	assert_int_equal(ib_bits_get(p, 0, 1), 0);
	assert_int_equal(ib_bits_get(p, 3, 1), 1);
	assert_true(ib_bits_get(p, 0, 64) == UINT64_C(0x123456789abcdef0));
	/* 64 bits starting mid-byte span nine bytes */
	assert_true(ib_bits_get(p, 4, 64) == UINT64_C(0x23456789abcdef00));
}

static void test_bits_put_preserves_neighbouring_bits(void **state)
{
	uint8_t p[9];

	(void)state;
	memset(p, 0xff, sizeof(p));
	ib_bits_put(p, 5, 6, 0);
	assert_int_equal(p[0], 0xf8);
	assert_int_equal(p[1], 0x1f);
	memset(p, 0, sizeof(p));
	ib_bits_put(p, 4, 64, UINT64_C(0xfedcba9876543210));
	assert_int_equal(p[0], 0x0f);
	assert_int_equal(p[8], 0x00);
	assert_int_equal(p[7], 0x21);
	assert_true(ib_bits_get(p, 4, 64) == UINT64_C(0xfedcba9876543210));
	/* bits of the value above the width are ignored */
	memset(p, 0, sizeof(p));
	ib_bits_put(p, 8, 4, 0xff3);
	assert_int_equal(p[1], 0x30);
	assert_int_equal(p[0], 0);
}

/* ------------------------------------------------------------ tables */

static void test_every_layout_table_is_sound(void **state)
{
	(void)state;
	for (int l = 0; l < IB_MAD_LAYOUT_COUNT; l++) {
		const struct ib_header_desc *d = ib_mad_layout_desc((enum ib_mad_layout)l);
		uint8_t used[IB_MAD_BYTES * 8];

		assert_non_null(d);
		assert_non_null(d->name);
		assert_true(d->bytes > 0 && d->bytes <= IB_MAD_BYTES);
		assert_true(d->nfields > 0);
		memset(used, 0, sizeof(used));
		for (unsigned i = 0; i < d->nfields; i++) {
			const struct ib_field_desc *f = &d->fields[i];

			assert_non_null(f->name);
			assert_true(f->name[0] != 0);
			if (f->bit + f->bits > d->bytes * 8u)
				fail_msg("%s.%s runs past the layout", d->name, f->name);
			if (f->bits > 64) {
				if (f->bit % 8 || f->bits % 8 || f->size != f->bits / 8)
					fail_msg("%s.%s: byte field misdescribed", d->name,
						 f->name);
			} else if (f->bits == 0 || !(f->size == 1 || f->size == 2 ||
						     f->size == 4 || f->size == 8) ||
				   f->bits > f->size * 8u) {
				fail_msg("%s.%s: member too small", d->name, f->name);
			}
			for (unsigned b = f->bit; b < f->bit + f->bits; b++) {
				if (used[b])
					fail_msg("%s.%s overlaps another field", d->name, f->name);
				used[b] = 1;
			}
			for (unsigned j = 0; j < i; j++)
				if (strcmp(d->fields[j].name, f->name) == 0)
					fail_msg("%s: two fields named %s", d->name, f->name);
		}
	}
	assert_null(ib_mad_layout_desc(IB_MAD_LAYOUT_COUNT));
	assert_null(ib_mad_layout_desc((enum ib_mad_layout)-1));
}

static void test_every_layout_round_trips(void **state)
{
	(void)state;
	for (int l = 0; l < IB_MAD_LAYOUT_COUNT; l++) {
		const struct ib_header_desc *d = ib_mad_layout_desc((enum ib_mad_layout)l);
		uint8_t a[STRUCT_MAX], b[STRUCT_MAX];
		uint8_t w1[IB_MAD_BYTES + 1], w2[IB_MAD_BYTES + 1];

		for (uint64_t seed = 1; seed < 4; seed++) {
			memset(a, 0, sizeof(a));
			memset(b, 0xa5, sizeof(b));
			fill_fields(d, a, seed * 7919 + (uint64_t)l);
			memset(w1, 0xcc, sizeof(w1));
			ib_mad_layout_encode((enum ib_mad_layout)l, a, w1);
			/* exactly d->bytes written */
			assert_int_equal(w1[d->bytes], 0xcc);
			ib_mad_layout_decode((enum ib_mad_layout)l, b, w1);
			assert_fields_equal(d, a, b);
			ib_mad_layout_encode((enum ib_mad_layout)l, b, w2);
			assert_memory_equal(w1, w2, d->bytes);
		}
	}
}

/* Decoding all-ones and encoding again sets exactly the described bits:
 * reserved bits go out as zero, and no field loses a bit. */
static void test_reserved_bits_encode_as_zero(void **state)
{
	(void)state;
	for (int l = 0; l < IB_MAD_LAYOUT_COUNT; l++) {
		const struct ib_header_desc *d = ib_mad_layout_desc((enum ib_mad_layout)l);
		uint8_t s[STRUCT_MAX], ones[IB_MAD_BYTES], out[IB_MAD_BYTES], want[IB_MAD_BYTES];

		memset(ones, 0xff, sizeof(ones));
		memset(want, 0, sizeof(want));
		for (unsigned i = 0; i < d->nfields; i++)
			for (unsigned b = d->fields[i].bit; b < d->fields[i].bit + d->fields[i].bits;
			     b++)
				want[b / 8] |= (uint8_t)(0x80 >> (b % 8));
		ib_mad_layout_decode((enum ib_mad_layout)l, s, ones);
		ib_mad_layout_encode((enum ib_mad_layout)l, s, out);
		if (memcmp(out, want, d->bytes) != 0)
			fail_msg("%s: reserved bits not zero or field bits lost", d->name);
	}
}

/* ------------------------------------------------------------ MAD header */

static void test_mad_hdr_fields_at_iba_positions(void **state)
{
	uint8_t raw[IB_MAD_HDR_BYTES], out[IB_MAD_HDR_BYTES];
	struct ib_mad_hdr h;

	(void)state;
	hex("0181018180000102" "0001509c000125c8" "0020abcd" "01020304", raw, sizeof(raw));
	ib_mad_hdr_decode(&h, raw);
	assert_int_equal(h.BaseVersion, 1);
	assert_int_equal(h.MgmtClass, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	assert_int_equal(h.ClassVersion, 1);
	assert_int_equal(h.R, 1);
	assert_int_equal(h.Method, 1);
	assert_int_equal(ib_mad_method(&h), IB_MAD_METHOD_GET_RESP);
	assert_int_equal(h.Status, 0x8000);
	assert_int_equal(h.ClassSpecific, 0x0102);
	assert_true(h.TransactionID == UINT64_C(0x0001509c000125c8));
	assert_int_equal(h.AttributeID, IB_SMP_ATTR_SM_INFO);
	assert_int_equal(h.AttributeModifier, 0x01020304);
	ib_mad_hdr_encode(&h, out);
	raw[18] = raw[19] = 0; /* the reserved word goes out as zero */
	assert_memory_equal(out, raw, sizeof(raw));
}

static void test_mad_set_method_splits_r_bit(void **state)
{
	struct ib_mad_hdr h;
	uint8_t p[IB_MAD_HDR_BYTES];

	(void)state;
	memset(&h, 0, sizeof(h));
	ib_mad_set_method(&h, IB_MAD_METHOD_GET_TABLE_RESP);
	assert_int_equal(h.R, 1);
	assert_int_equal(h.Method, 0x12);
	ib_mad_hdr_encode(&h, p);
	assert_int_equal(p[3], 0x92);
}

static void test_rmpp_hdr_fields_at_iba_positions(void **state)
{
	struct ib_rmpp_hdr r = {
		.RMPPVersion = IB_RMPP_VERSION,
		.RMPPType = IB_RMPP_TYPE_DATA,
		.RRespTime = 0x1f,
		.RMPPFlags = IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_LAST,
		.RMPPStatus = 0,
		.Data1 = 2,
		.Data2 = 21,
	};
	uint8_t p[IB_RMPP_HDR_BYTES], want[IB_RMPP_HDR_BYTES];

	(void)state;
	ib_rmpp_hdr_encode(&r, p);
	assert_memory_equal(p, hex("0101fd00" "00000002" "00000015", want, sizeof(want)),
			    sizeof(want));
}

/* ------------------------------------------------------------ SMP */

static void test_smp_places_mkey_and_data(void **state)
{
	struct ib_smp s, d;
	uint8_t p[IB_SMP_BYTES];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.hdr.BaseVersion = 1;
	s.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	s.M_Key = UINT64_C(0x0102030405060708);
	for (int i = 0; i < IB_SMP_DATA_BYTES; i++)
		s.SMPData[i] = (uint8_t)(i + 1);
	ib_smp_encode(&s, p);
	assert_int_equal(p[24], 0x01);
	assert_int_equal(p[31], 0x08);
	for (int i = 32; i < 64; i++)
		assert_int_equal(p[i], 0);
	assert_int_equal(p[64], 1);
	assert_int_equal(p[127], 64);
	for (int i = 128; i < 256; i++)
		assert_int_equal(p[i], 0);
	ib_smp_decode(&d, p);
	assert_true(d.M_Key == s.M_Key);
	assert_memory_equal(d.SMPData, s.SMPData, sizeof(s.SMPData));
}

static void test_dr_smp_packs_d_bit_and_hops(void **state)
{
	struct ib_dr_smp s;
	uint8_t p[IB_DR_SMP_BYTES];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.D = 1;
	s.Status = 0x001c;
	s.HopPointer = 3;
	s.HopCount = 4;
	s.DrSLID = 0xffff;
	s.DrDLID = 0x1234;
	s.InitialPath[1] = 7;
	s.ReturnPath[63] = 9;
	ib_dr_smp_encode(&s, p);
	assert_int_equal(p[4], 0x80);
	assert_int_equal(p[5], 0x1c);
	assert_int_equal(p[6], 3);
	assert_int_equal(p[7], 4);
	assert_int_equal(p[32], 0xff);
	assert_int_equal(p[34], 0x12);
	assert_int_equal(p[35], 0x34);
	assert_int_equal(p[129], 7);
	assert_int_equal(p[255], 9);
}

static void test_port_info_fields_at_iba_positions(void **state)
{
	struct ib_port_info pi;
	uint8_t p[IB_PORT_INFO_BYTES];

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pi.GidPrefix = UINT64_C(0xfe80000000000000);
	pi.LID = 0x1234;
	pi.MasterSMLID = 0x0001;
	pi.CapabilityMask = IB_PORT_CAP_IS_CM_SUP | IB_PORT_CAP_IS_SM;
	pi.LocalPortNum = 1;
	pi.PortState = IB_PORT_STATE_ACTIVE;
	pi.LinkSpeedSupported = 1;
	pi.PortPhysicalState = IB_PORT_PHYS_LINK_UP;
	pi.M_KeyProtectBits = 2;
	pi.LMC = 5;
	pi.NeighborMTU = IB_MTU_4096;
	pi.MTUCap = IB_MTU_4096;
	pi.VLStallCount = 7;
	pi.HOQLife = 0x13;
	pi.PartitionEnforcementInbound = 1;
	pi.FilterRawOutbound = 1;
	pi.ClientReregister = 1;
	pi.SubnetTimeOut = 0x12;
	pi.RespTimeValue = 0x11;
	pi.MaxCreditHint = 0xbeef;
	pi.LinkRoundTripLatency = 0xabcdef;
	pi.LinkSpeedExtEnabled = 0x1f;
	ib_port_info_encode(&pi, p);
	assert_int_equal(p[8], 0xfe);
	assert_int_equal(p[16], 0x12);
	assert_int_equal(p[17], 0x34);
	assert_int_equal(p[19], 0x01);
	assert_int_equal(p[21], 0x01); /* bit 16 of CapabilityMask */
	assert_int_equal(p[23], 0x02);
	assert_int_equal(p[28], 1);
	assert_int_equal(p[32], 0x14);
	assert_int_equal(p[33], 0x50);
	assert_int_equal(p[34], 0x85);
	assert_int_equal(p[36], 0x50);
	assert_int_equal(p[41], 0x05);
	assert_int_equal(p[42], 0xf3);
	assert_int_equal(p[43], 0x09);
	assert_int_equal(p[51], 0x92);
	assert_int_equal(p[52], 0x11);
	assert_int_equal(p[54], 0xbe);
	assert_int_equal(p[55], 0xef);
	assert_int_equal(p[56], 0);
	assert_int_equal(p[57], 0xab);
	assert_int_equal(p[59], 0xef);
	assert_int_equal(p[63], 0x1f);
}

static void test_node_info_fields_at_iba_positions(void **state)
{
	struct ib_node_info ni = {
		.BaseVersion = 1,
		.ClassVersion = 1,
		.NodeType = IB_NODE_TYPE_CA,
		.NumPorts = 2,
		.SystemImageGUID = UINT64_C(0x0002c90300001111),
		.NodeGUID = UINT64_C(0x0002c90300002222),
		.PortGUID = UINT64_C(0x0002c90300003333),
		.PartitionCap = 128,
		.DeviceID = 0x1003,
		.Revision = 0xa0,
		.LocalPortNum = 1,
		.VendorID = 0x0002c9,
	};
	struct ib_node_info back;
	uint8_t p[IB_NODE_INFO_BYTES];

	(void)state;
	ib_node_info_encode(&ni, p);
	assert_int_equal(p[2], 1);
	assert_int_equal(p[3], 2);
	assert_int_equal(p[11], 0x11);
	assert_int_equal(p[19], 0x22);
	assert_int_equal(p[27], 0x33);
	assert_int_equal(p[29], 128);
	assert_int_equal(p[30], 0x10);
	assert_int_equal(p[35], 0xa0);
	assert_int_equal(p[36], 1);
	assert_int_equal(p[37], 0x00);
	assert_int_equal(p[38], 0x02);
	assert_int_equal(p[39], 0xc9);
	ib_node_info_decode(&back, p);
	assert_true(back.PortGUID == ni.PortGUID);
	assert_int_equal(back.VendorID, 0x0002c9);
}

static void test_p_key_table_and_guid_info_blocks(void **state)
{
	struct ib_p_key_table pk;
	struct ib_guid_info gi;
	uint8_t p[64];

	(void)state;
	memset(&pk, 0, sizeof(pk));
	pk.P_KeyTableBlock[0] = 0xffff;
	pk.P_KeyTableBlock[31] = 0x8001;
	ib_p_key_table_encode(&pk, p);
	assert_int_equal(p[0], 0xff);
	assert_int_equal(p[62], 0x80);
	assert_int_equal(p[63], 0x01);
	memset(&gi, 0, sizeof(gi));
	gi.GUIDBlock[7] = UINT64_C(0x0102030405060708);
	ib_guid_info_encode(&gi, p);
	assert_int_equal(p[56], 0x01);
	assert_int_equal(p[63], 0x08);
	assert_int_equal(p[0], 0);
}

static void test_node_description_copies_string(void **state)
{
	struct ib_node_description nd, back;
	uint8_t p[IB_NODE_DESCRIPTION_BYTES];

	(void)state;
	memset(&nd, 0, sizeof(nd));
	memcpy(nd.NodeString, "softib0 HCA-1", 13);
	ib_node_description_encode(&nd, p);
	assert_memory_equal(p, "softib0 HCA-1", 13);
	assert_int_equal(p[13], 0);
	ib_node_description_decode(&back, p);
	assert_memory_equal(back.NodeString, nd.NodeString, sizeof(nd.NodeString));
}

/* ------------------------------------------------------------ SA */

static void test_sa_mad_places_rmpp_and_sa_header(void **state)
{
	struct ib_sa_mad s;
	uint8_t p[IB_SA_MAD_BYTES];

	(void)state;
	memset(&s, 0, sizeof(s));
	s.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	s.rmpp.RMPPVersion = 1;
	s.rmpp.RMPPType = IB_RMPP_TYPE_ACK;
	s.rmpp.RMPPFlags = IB_RMPP_FLAG_ACTIVE;
	s.rmpp.Data2 = 0x11223344;
	s.SM_Key = UINT64_C(0x0102030405060708);
	s.AttributeOffset = ib_sa_attribute_offset(IB_PATH_RECORD_BYTES);
	s.ComponentMask = IB_PR_COMP_DGID | IB_PR_COMP_SGID | IB_PR_COMP_NUMB_PATH;
	s.SubnAdmData[0] = 0xaa;
	s.SubnAdmData[199] = 0xbb;
	ib_sa_mad_encode(&s, p);
	assert_int_equal(p[24], 1);
	assert_int_equal(p[25], 2);
	assert_int_equal(p[26], 0x01);
	assert_int_equal(p[32], 0x11);
	assert_int_equal(p[35], 0x44);
	assert_int_equal(p[36], 0x01);
	assert_int_equal(p[43], 0x08);
	assert_int_equal(p[45], 8);
	assert_int_equal(p[55], 0x0c);
	assert_int_equal(p[54], 0x10);
	assert_int_equal(p[56], 0xaa);
	assert_int_equal(p[255], 0xbb);
}

static void test_mcmember_record_fields_at_iba_positions(void **state)
{
	struct ib_mcmember_record m;
	uint8_t p[IB_MCMEMBER_RECORD_BYTES];

	(void)state;
	memset(&m, 0, sizeof(m));
	m.MGID.raw[0] = 0xff;
	m.PortGID.raw[15] = 0x42;
	m.Q_Key = 0x80010000;
	m.MLID = 0xc001;
	m.MTUSelector = IB_SA_SELECTOR_EQ;
	m.MTU = IB_MTU_2048;
	m.SL = 0xa;
	m.FlowLabel = 0xbcdef;
	m.HopLimit = 0x40;
	m.Scope = 2;
	m.JoinState = IB_MCR_JOIN_FULL_MEMBER;
	m.ProxyJoin = 1;
	ib_mcmember_record_encode(&m, p);
	assert_int_equal(p[0], 0xff);
	assert_int_equal(p[31], 0x42);
	assert_int_equal(p[32], 0x80);
	assert_int_equal(p[36], 0xc0);
	assert_int_equal(p[38], 0x84);
	assert_int_equal(p[44], 0xab);
	assert_int_equal(p[46], 0xef);
	assert_int_equal(p[47], 0x40);
	assert_int_equal(p[48], 0x21);
	assert_int_equal(p[49], 0x80);
}

static void test_service_record_fields_at_iba_positions(void **state)
{
	struct ib_service_record r;
	uint8_t p[IB_SERVICE_RECORD_BYTES];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.ServiceID = UINT64_C(0x1000000000000404);
	r.ServiceP_Key = 0xffff;
	r.ServiceLease = 0xffffffff;
	memcpy(r.ServiceName, "softib", 6);
	r.ServiceData8[15] = 0x15;
	r.ServiceData16[0] = 0x1617;
	r.ServiceData32[3] = 0x32333435;
	r.ServiceData64[1] = UINT64_C(0x6465666768696a6b);
	ib_service_record_encode(&r, p);
	assert_int_equal(p[0], 0x10);
	assert_int_equal(p[24], 0xff);
	assert_int_equal(p[26], 0);
	assert_int_equal(p[28], 0xff);
	assert_memory_equal(p + 48, "softib", 6);
	assert_int_equal(p[127], 0x15);
	assert_int_equal(p[128], 0x16);
	assert_int_equal(p[156], 0x32);
	assert_int_equal(p[168], 0x64);
	assert_int_equal(p[175], 0x6b);
}

static void test_sa_rmpp_segmentation(void **state)
{
	(void)state;
	assert_int_equal(ib_sa_rmpp_segments(0), 1);
	assert_int_equal(ib_sa_rmpp_segments(200), 1);
	assert_int_equal(ib_sa_rmpp_segments(201), 2);
	assert_int_equal(ib_sa_rmpp_segments(600), 3);
	assert_int_equal(ib_sa_rmpp_payload_length(0, 1), 20);
	assert_int_equal(ib_sa_rmpp_payload_length(128, 1), 148);
	assert_int_equal(ib_sa_rmpp_payload_length(201, 1), 241);
	assert_int_equal(ib_sa_rmpp_payload_length(201, 2), 21);
	assert_int_equal(ib_sa_rmpp_payload_length(600, 2), 0);
	assert_int_equal(ib_sa_rmpp_payload_length(600, 3), 220);
	assert_int_equal(ib_sa_rmpp_flags(64, 1),
			 IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_FIRST | IB_RMPP_FLAG_LAST);
	assert_int_equal(ib_sa_rmpp_flags(600, 1), IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_FIRST);
	assert_int_equal(ib_sa_rmpp_flags(600, 2), IB_RMPP_FLAG_ACTIVE);
	assert_int_equal(ib_sa_rmpp_flags(600, 3), IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_LAST);
	assert_int_equal(ib_sa_rmpp_flags(600, 4), 0);
	assert_int_equal(ib_sa_rmpp_flags(600, 0), 0);
	assert_true(ib_sa_rmpp_payload_length(UINT32_MAX, 1) == UINT32_MAX);
}

/* ------------------------------------------------------------ directory */

static void test_attr_lookup_names_layout_and_offset(void **state)
{
	enum ib_mad_layout l;
	unsigned off;

	(void)state;
	assert_true(ib_mad_attr_layout(IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, IB_SMP_ATTR_SM_INFO, &l,
				       &off));
	assert_int_equal(l, IB_MAD_LAYOUT_SM_INFO);
	assert_int_equal(off, 64);
	assert_true(ib_mad_attr_layout(IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_SMP_ATTR_PORT_INFO, &l,
				       &off));
	assert_int_equal(l, IB_MAD_LAYOUT_PORT_INFO);
	assert_true(ib_mad_attr_layout(IB_MGMT_CLASS_SUBN_ADM, IB_SA_ATTR_PATH_RECORD, &l, &off));
	assert_int_equal(l, IB_MAD_LAYOUT_PATH_RECORD);
	assert_int_equal(off, 56);
	/* the same ID means different things in different classes */
	assert_true(ib_mad_attr_layout(IB_MGMT_CLASS_CM, 0x0011, &l, &off));
	assert_int_equal(l, IB_MAD_LAYOUT_CM_MRA);
	assert_int_equal(off, 24);
	assert_string_equal(ib_mad_attr_str(IB_MGMT_CLASS_SUBN_LID_ROUTED, 0x0011), "NodeInfo");
	assert_string_equal(ib_mad_attr_str(IB_MGMT_CLASS_SUBN_ADM, 0x0011), "NodeRecord");
	assert_false(ib_mad_attr_layout(IB_MGMT_CLASS_SUBN_ADM, IB_SA_ATTR_NODE_RECORD, &l, &off));
	assert_true(ib_mad_attr_layout(IB_MGMT_CLASS_PERF, 0x0012, &l, &off));
	assert_int_equal(l, IB_MAD_LAYOUT_PORT_COUNTERS);
	assert_int_equal(off, 64); /* after 40 reserved bytes (IBA 16.1.1) */
	assert_false(ib_mad_attr_layout(IB_MGMT_CLASS_PERF, 0x0010, &l, &off));
	assert_false(ib_mad_attr_layout(IB_MGMT_CLASS_SUBN_ADM, 0xffff, NULL, NULL));
	assert_string_equal(ib_mad_attr_str(0x42, 0x0001), "UnknownAttribute");
}

/* PortCounters and PortCountersExtended byte by byte (IBA 16.1.3.5,
 * 16.1.4.11; the same offsets Linux's struct ib_pma_portcounters has). */
static void test_port_counters_layouts(void **state)
{
	struct ib_port_counters pc = { .PortSelect = 1, .CounterSelect = 0xffff,
				       .PortRcvErrors = 0x0102, .PortXmitDiscards = 0x0304,
				       .LocalLinkIntegrityErrors = 0xa,
				       .ExcessiveBufferOverrunErrors = 0xb, .VL15Dropped = 0x0506,
				       .PortXmitData = 0x11223344, .PortRcvData = 0x55667788,
				       .PortXmitPkts = 0x99aabbcc, .PortRcvPkts = 0xddeeff00 };
	struct ib_port_counters_ext x = { .PortSelect = 1, .PortXmitData = 0x0102030405060708ull,
					  .PortMulticastRcvPkts = 0x1112131415161718ull };
	uint8_t p[IB_PORT_COUNTERS_EXT_BYTES];

	(void)state;
	ib_port_counters_encode(&pc, p);
	assert_int_equal(p[1], 1);
	assert_int_equal(p[2], 0xff);
	assert_int_equal(p[8], 0x01);
	assert_int_equal(p[9], 0x02);
	assert_int_equal(p[14], 0x03);
	assert_int_equal(p[19], 0xab);
	assert_int_equal(p[22], 0x05);
	assert_int_equal(p[23], 0x06);
	assert_int_equal(p[24], 0x11);
	assert_int_equal(p[31], 0x88);
	assert_int_equal(p[32], 0x99);
	assert_int_equal(p[39], 0x00);
	ib_port_counters_ext_encode(&x, p);
	assert_int_equal(p[1], 1);
	assert_int_equal(p[8], 0x01);
	assert_int_equal(p[15], 0x08);
	assert_int_equal(p[64], 0x11);
	assert_int_equal(p[71], 0x18);
}

static void test_method_and_class_names(void **state)
{
	(void)state;
	assert_string_equal(ib_mad_method_str(IB_MAD_METHOD_GET), "Get");
	assert_string_equal(ib_mad_method_str(0x81), "GetResp");
	assert_string_equal(ib_mad_method_str(0x92), "GetTableResp");
	assert_string_equal(ib_mad_method_str(0x7f), "UnknownMethod");
	assert_string_equal(ib_mad_class_str(0x03), "SubnAdm");
	assert_string_equal(ib_mad_class_str(0x07), "CM");
	assert_string_equal(ib_mad_class_str(0x0a), "Vendor");
	assert_string_equal(ib_mad_class_str(0xff), "UnknownClass");
}

/* ------------------------------------------------------------ hardware capture */

static void assert_mad_round_trips(enum ib_mad_layout l, const uint8_t *m)
{
	uint8_t s[STRUCT_MAX], out[IB_MAD_BYTES];
	const struct ib_header_desc *d = ib_mad_layout_desc(l);

	ib_mad_layout_decode(l, s, m);
	ib_mad_layout_encode(l, s, out);
	assert_memory_equal(out, m, d->bytes);
}

/* Frames 1-2: SubnGet/SubnGetResp(SMInfo), directed route, on QP0. */
static void test_capture_dr_smp_sminfo(void **state)
{
	const uint8_t *get, *resp;
	struct ib_dr_smp g, r;
	struct ib_sm_info si;

	(void)state;
	get = cap_mad(1);
	resp = cap_mad(2);
	ib_dr_smp_decode(&g, get);
	ib_dr_smp_decode(&r, resp);

	assert_int_equal(g.MgmtClass, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	assert_int_equal(g.ClassVersion, 1);
	assert_int_equal(g.R, 0);
	assert_int_equal(g.Method, IB_MAD_METHOD_GET);
	assert_int_equal(g.D, 0);
	assert_int_equal(g.HopPointer, 1);
	assert_int_equal(g.HopCount, 2);
	assert_true(g.TransactionID == UINT64_C(0x0001509c000125c8));
	assert_int_equal(g.AttributeID, IB_SMP_ATTR_SM_INFO);
	assert_int_equal(g.DrSLID, 0xffff);
	assert_int_equal(g.DrDLID, 0xffff);
	assert_int_equal(g.InitialPath[1], 2);
	assert_int_equal(g.InitialPath[2], 3);

	/* the response came back: D set, Status otherwise 0 (raw 0x8000) */
	assert_int_equal(r.R, 1);
	assert_int_equal(r.Method, IB_MAD_METHOD_GET);
	assert_int_equal(r.D, 1);
	assert_int_equal(r.Status, 0);
	assert_true(r.TransactionID == g.TransactionID);
	assert_int_equal(r.ReturnPath[1], 6);
	assert_int_equal(r.ReturnPath[2], 1);

	ib_sm_info_decode(&si, r.SMPData);
	assert_true(si.GUID == UINT64_C(0x0002c9020020b4dd));
	assert_true(si.SM_Key == 0);
	assert_int_equal(si.ActCount, 0x923a);
	assert_int_equal(si.Priority, 0);
	assert_int_equal(si.SMState, IB_SM_STATE_MASTER);

	assert_mad_round_trips(IB_MAD_LAYOUT_DR_SMP, get);
	assert_mad_round_trips(IB_MAD_LAYOUT_DR_SMP, resp);
}

static const uint8_t gid_dst[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				    0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x18, 0x95};
static const uint8_t gid_src[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				    0x00, 0x02, 0xc9, 0x02, 0x00, 0x24, 0xf6, 0x36};

/* Frames 32-33: SubnAdmGet/GetResp(PathRecord) on QP1. */
static void test_capture_sa_path_record(void **state)
{
	const uint8_t *get, *resp;
	struct ib_sa_mad q, a;
	struct ib_path_record pq, pa;

	(void)state;
	get = cap_mad(32);
	resp = cap_mad(33);
	ib_sa_mad_decode(&q, get);
	ib_sa_mad_decode(&a, resp);

	assert_int_equal(q.hdr.MgmtClass, IB_MGMT_CLASS_SUBN_ADM);
	assert_int_equal(q.hdr.ClassVersion, IB_SA_CLASS_VERSION);
	assert_int_equal(ib_mad_method(&q.hdr), IB_MAD_METHOD_GET);
	assert_int_equal(ib_mad_method(&a.hdr), IB_MAD_METHOD_GET_RESP);
	assert_true(q.hdr.TransactionID == UINT64_C(0x0000000bb9647f9e));
	assert_true(a.hdr.TransactionID == q.hdr.TransactionID);
	assert_int_equal(q.hdr.AttributeID, IB_SA_ATTR_PATH_RECORD);
	assert_int_equal(q.rmpp.RMPPType, IB_RMPP_TYPE_NONE);
	assert_int_equal(q.rmpp.RMPPFlags, 0);
	assert_true(q.ComponentMask == UINT64_C(0x340c));
	assert_true(q.ComponentMask == (IB_PR_COMP_DGID | IB_PR_COMP_SGID | IB_PR_COMP_TCLASS |
					IB_PR_COMP_NUMB_PATH | IB_PR_COMP_P_KEY));
	assert_int_equal(q.AttributeOffset, 0);
	assert_int_equal(a.AttributeOffset, 8);

	ib_path_record_decode(&pq, q.SubnAdmData);
	assert_memory_equal(pq.DGID.raw, gid_dst, 16);
	assert_memory_equal(pq.SGID.raw, gid_src, 16);
	assert_int_equal(pq.NumbPath, 1);
	assert_int_equal(pq.P_Key, 0xffff);
	assert_int_equal(pq.DLID, 0);

	ib_path_record_decode(&pa, a.SubnAdmData);
	assert_memory_equal(pa.DGID.raw, gid_dst, 16);
	assert_int_equal(pa.DLID, 2);
	assert_int_equal(pa.SLID, 4);
	assert_int_equal(pa.Reversible, 1);
	assert_int_equal(pa.NumbPath, 0);
	assert_int_equal(pa.P_Key, 0xffff);
	assert_int_equal(pa.SL, 0);
	assert_int_equal(pa.MTUSelector, IB_SA_SELECTOR_EQ);
	assert_int_equal(pa.MTU, IB_MTU_2048);
	assert_int_equal(pa.RateSelector, IB_SA_SELECTOR_EQ);
	assert_int_equal(pa.Rate, 3);
	assert_int_equal(pa.PacketLifeTimeSelector, IB_SA_SELECTOR_EQ);
	assert_int_equal(pa.PacketLifeTime, 0x12);
	assert_int_equal(pa.Preference, 0);

	assert_mad_round_trips(IB_MAD_LAYOUT_SA, get);
	assert_mad_round_trips(IB_MAD_LAYOUT_SA, resp);
	assert_mad_round_trips(IB_MAD_LAYOUT_PATH_RECORD, resp + IB_SA_DATA_OFFSET);
}

/* Every MAD in the capture decodes by its header to a known layout. */
static void test_capture_every_mad_finds_its_layout(void **state)
{
	static const unsigned frames[] = {1, 2, 7, 8, 9, 12, 13, 27, 28, 29, 32, 33, 34, 35, 37};
	unsigned seen = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		const uint8_t *m = cap_mad(frames[i]);
		struct ib_mad_hdr h;
		enum ib_mad_layout l;
		unsigned off;

		ib_mad_hdr_decode(&h, m);
		assert_int_equal(h.BaseVersion, IB_MAD_BASE_VERSION);
		if (!ib_mad_attr_layout(h.MgmtClass, h.AttributeID, &l, &off))
			fail_msg("frame %u: no layout for class %#x attribute %#x", frames[i],
				 h.MgmtClass, h.AttributeID);
		assert_true(off + ib_mad_layout_desc(l)->bytes <= IB_MAD_BYTES);
		seen++;
	}
	assert_int_equal(seen, 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits_get_reads_msb_first_across_bytes),
		cmocka_unit_test(test_bits_put_preserves_neighbouring_bits),
		cmocka_unit_test(test_every_layout_table_is_sound),
		cmocka_unit_test(test_every_layout_round_trips),
		cmocka_unit_test(test_reserved_bits_encode_as_zero),
		cmocka_unit_test(test_mad_hdr_fields_at_iba_positions),
		cmocka_unit_test(test_mad_set_method_splits_r_bit),
		cmocka_unit_test(test_rmpp_hdr_fields_at_iba_positions),
		cmocka_unit_test(test_smp_places_mkey_and_data),
		cmocka_unit_test(test_dr_smp_packs_d_bit_and_hops),
		cmocka_unit_test(test_port_info_fields_at_iba_positions),
		cmocka_unit_test(test_node_info_fields_at_iba_positions),
		cmocka_unit_test(test_p_key_table_and_guid_info_blocks),
		cmocka_unit_test(test_node_description_copies_string),
		cmocka_unit_test(test_sa_mad_places_rmpp_and_sa_header),
		cmocka_unit_test(test_mcmember_record_fields_at_iba_positions),
		cmocka_unit_test(test_service_record_fields_at_iba_positions),
		cmocka_unit_test(test_sa_rmpp_segmentation),
		cmocka_unit_test(test_attr_lookup_names_layout_and_offset),
		cmocka_unit_test(test_method_and_class_names),
		cmocka_unit_test(test_port_counters_layouts),
		cmocka_unit_test(test_capture_dr_smp_sminfo),
		cmocka_unit_test(test_capture_sa_path_record),
		cmocka_unit_test(test_capture_every_mad_finds_its_layout),
	};

	return cmocka_run_group_tests_name("wire_mad", tests, cap_setup, cap_teardown);
}

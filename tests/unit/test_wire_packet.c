/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The validating decoder: each rule rejects with its own reason, no
 * truncation or corruption passes, the builder's CRCs match known vectors,
 * and every packet of a real hardware capture is accepted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/crc.h"
#include "wire/packet.h"

#include "skip.h"

static size_t from_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;

	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* Recomputes both CRCs after a test edits header bytes, so that the
 * decoder gets as far as the rule under test. */
static void fix_crcs(uint8_t *p, size_t len)
{
	ib_icrc_put(p, len, ib_icrc(p, len));
	ib_vcrc_put(p, len, ib_vcrc(p, len));
}

static void base_fields(struct ib_packet *p, uint8_t opcode, bool grh)
{
	memset(p, 0, sizeof(*p));
	p->lrh.LNH = grh ? IB_LNH_IBA_GLOBAL : IB_LNH_IBA_LOCAL;
	p->lrh.DLID = 4;
	p->lrh.SLID = 1;
	p->bth.OpCode = opcode;
	p->bth.P_Key = 0xffff;
	p->bth.DestQP = 0x123;
	p->bth.PSN = 0x456;
	if (grh) {
		p->grh.HopLmt = 64;
		p->grh.SGID.raw[0] = 0xfe;
		p->grh.SGID.raw[1] = 0x80;
		p->grh.DGID.raw[0] = 0xfe;
		p->grh.DGID.raw[1] = 0x80;
		p->grh.DGID.raw[15] = 2;
	}
	p->deth.Q_Key = 0x11111111;
	p->deth.SrcQP = 7;
	p->aeth.Syndrome = ib_aeth_syndrome(IB_AETH_ACK, 0x1f);
	p->aeth.MSN = 1;
}

/* Builds a valid packet; returns its length. */
static size_t build(uint8_t *buf, uint8_t opcode, bool grh, const void *payload, uint32_t plen)
{
	struct ib_packet p, check;
	size_t len;

	base_fields(&p, opcode, grh);
	len = ib_packet_encode(&p, payload, plen, buf, IB_MAX_PACKET);
	assert_true(len > 0);
	assert_int_equal(ib_packet_decode(buf, len, &check), IB_PKT_OK);
	return len;
}

static enum ib_pkt_err decode(const uint8_t *buf, size_t len)
{
	struct ib_packet p;

	return ib_packet_decode(buf, len, &p);
}

#define assert_rejected(buf, len, want)                                                            \
	do {                                                                                       \
		enum ib_pkt_err got_ = decode(buf, len);                                          \
		if (got_ != (want))                                                                \
			fail_msg("got %s, want %s", ib_pkt_err_name(got_), ib_pkt_err_name(want)); \
	} while (0)

static void test_too_short(void **state)
{
	uint8_t buf[IB_MAX_PACKET] = { 0 };
	size_t len = build(buf, IB_OP_ACKNOWLEDGE, false, NULL, 0);

	(void)state;
	assert_int_equal(len, 30);
	assert_rejected(buf, 25, IB_PKT_ERR_TOO_SHORT);
	assert_rejected(buf, 0, IB_PKT_ERR_TOO_SHORT);
}

static void test_too_long(void **state)
{
	static uint8_t buf[IB_MAX_PACKET + 1];

	(void)state;
	assert_rejected(buf, sizeof(buf), IB_PKT_ERR_TOO_LONG);
}

static void test_vcrc_mismatch(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	buf[len - 1] ^= 0x01;
	assert_rejected(buf, len, IB_PKT_ERR_VCRC);
	buf[len - 1] ^= 0x01;
	buf[10] ^= 0x80; /* a header bit: caught by the link layer first */
	assert_rejected(buf, len, IB_PKT_ERR_VCRC);
}

static void test_lver_nonzero(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	buf[0] |= 0x01; /* LVer = 1 */
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_LVER);
}

static void test_raw_lnh(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	for (uint8_t lnh = IB_LNH_RAW; lnh <= IB_LNH_IPV6; lnh++) {
		buf[1] = (uint8_t)((buf[1] & ~3) | lnh);
		fix_crcs(buf, len);
		assert_rejected(buf, len, IB_PKT_ERR_LNH);
	}
}

static void test_pktlen_disagrees(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	buf[5] += 1;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_PKTLEN);
	buf[5] -= 2;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_PKTLEN);
}

static void test_grh_announced_but_missing(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_ACKNOWLEDGE, false, NULL, 0);

	(void)state;
	buf[1] |= IB_LNH_IBA_GLOBAL;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_GRH_TRUNC);
}

static void test_grh_ipver_not_6(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, true, "hello", 5);

	(void)state;
	buf[8] = (uint8_t)((4 << 4) | (buf[8] & 0x0f));
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_GRH_IPVER);
}

static void test_grh_nxthdr_not_iba(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, true, "hello", 5);

	(void)state;
	assert_int_equal(buf[8 + 6], 0x1b);
	buf[8 + 6] = 0x11;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_GRH_NXTHDR);
}

static void test_grh_paylen_disagrees(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, true, "hello", 5);

	(void)state;
	/* 12 BTH + 8 payload and pad + 4 ICRC */
	assert_int_equal(buf[8 + 4] << 8 | buf[8 + 5], 24);
	buf[8 + 5] += 4;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_GRH_PAYLEN);
}

static void test_tver_nonzero(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	buf[9] |= 0x01;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_TVER);
}

static void test_reserved_opcode(void **state)
{
	static const uint8_t bad[] = { 0x15, 0x1f, 0x2c, 0x66, 0x82, 0xb5, 0xff };
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		buf[8] = bad[i];
		fix_crcs(buf, len);
		assert_rejected(buf, len, IB_PKT_ERR_OPCODE);
	}
}

static void test_extended_headers_do_not_fit(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);

	(void)state;
	/* 34 bytes leave 8 after the BTH: no room for a 28-byte AtomicETH,
	 * a 16-byte RETH, or a DETH plus anything. */
	assert_int_equal(len, 34);
	buf[8] = IB_OP_CMP_SWAP;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_HDR_TRUNC);
	buf[8] = IB_OP_READ_REQUEST;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_HDR_TRUNC);
	buf[8] = IB_OPCODE(IB_TRANSPORT_RD, IB_OP_SEND_ONLY); /* RDETH + DETH = 12 */
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_HDR_TRUNC);
}

static void set_padcnt(uint8_t *buf, size_t len, size_t bth, unsigned pad)
{
	buf[bth + 1] = (uint8_t)((buf[bth + 1] & ~0x30) | pad << 4);
	fix_crcs(buf, len);
}

static void test_pad_where_none_may_be(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len;

	(void)state;
	/* Larger than the payload. */
	len = build(buf, IB_OP_SEND_ONLY, false, NULL, 0);
	set_padcnt(buf, len, 8, 1);
	assert_rejected(buf, len, IB_PKT_ERR_PAD);

	/* On a First or Middle packet: only the last may pad. */
	len = build(buf, IB_OP_SEND_FIRST, false, "12345678", 8);
	set_padcnt(buf, len, 8, 1);
	assert_rejected(buf, len, IB_PKT_ERR_PAD);
	len = build(buf, IB_OP_WRITE_MIDDLE, false, "12345678", 8);
	set_padcnt(buf, len, 8, 2);
	assert_rejected(buf, len, IB_PKT_ERR_PAD);
	len = build(buf, IB_OP_READ_RESPONSE_FIRST, false, "12345678", 8);
	set_padcnt(buf, len, 8, 3);
	assert_rejected(buf, len, IB_PKT_ERR_PAD);

	/* On an opcode that never carries payload. */
	len = build(buf, IB_OP_ACKNOWLEDGE, false, NULL, 0);
	buf[5] += 1; /* room for 4 more bytes */
	len += 4;
	memset(buf + len - 6, 0, 6);
	set_padcnt(buf, len, 8, 2);
	assert_rejected(buf, len, IB_PKT_ERR_PAD);

	/* The same pad on a Last packet is fine. */
	len = build(buf, IB_OP_SEND_LAST, false, "12345678", 8);
	set_padcnt(buf, len, 8, 3);
	assert_rejected(buf, len, IB_PKT_OK);
}

static void test_payload_on_opcode_without_one(void **state)
{
	static const uint8_t ops[] = { IB_OP_ACKNOWLEDGE, IB_OP_READ_REQUEST, IB_OP_CMP_SWAP,
				       IB_OP_FETCH_ADD, IB_OP_ATOMIC_ACKNOWLEDGE };
	uint8_t buf[IB_MAX_PACKET];

	(void)state;
	for (size_t i = 0; i < sizeof(ops); i++) {
		/* Build a payload-carrying packet of the right length, then
		 * relabel it. */
		struct ib_packet p;
		const struct ib_opcode_info *info = ib_opcode_info(ops[i]);
		size_t len;

		base_fields(&p, ops[i], false);
		len = ib_packet_encode_headers(&p, 0, buf, sizeof(buf));
		assert_int_equal(len, 8 + 12 + ib_opcode_eth_bytes(info));
		/* grow by one word of payload */
		memset(buf + len, 0xab, 4);
		buf[5] += 1;
		len = ib_packet_len(len, 4);
		fix_crcs(buf, len);
		assert_rejected(buf, len, IB_PKT_ERR_PAYLOAD);
	}
}

static void test_vl15_is_for_qp0_only_and_qp0_for_vl15_only(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	struct ib_packet p;
	uint8_t mad[256] = { 1, 0x81, 1, 1 };
	size_t len;

	(void)state;
	/* A data packet on VL15. */
	len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);
	buf[0] |= 0xf0;
	fix_crcs(buf, len);
	assert_rejected(buf, len, IB_PKT_ERR_VL15);

	/* An SMP (UD to QP0) on VL0. */
	base_fields(&p, IB_OPCODE(IB_TRANSPORT_UD, IB_OP_SEND_ONLY), false);
	p.bth.DestQP = 0;
	p.lrh.DLID = 0xffff;
	len = ib_packet_encode(&p, mad, sizeof(mad), buf, sizeof(buf));
	assert_rejected(buf, len, IB_PKT_ERR_VL15);

	/* The same SMP on VL15, permissive DLID: accepted. */
	p.lrh.VL = 15;
	len = ib_packet_encode(&p, mad, sizeof(mad), buf, sizeof(buf));
	assert_rejected(buf, len, IB_PKT_OK);
}

static void test_icrc_mismatch_in_payload_and_headers(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len;

	(void)state;
	len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);
	buf[20] ^= 0x20;
	ib_vcrc_put(buf, len, ib_vcrc(buf, len));
	assert_rejected(buf, len, IB_PKT_ERR_ICRC);

	len = build(buf, IB_OP_SEND_ONLY, true, "hello", 5);
	buf[8 + 30] ^= 0x01; /* inside the DGID */
	ib_vcrc_put(buf, len, ib_vcrc(buf, len));
	assert_rejected(buf, len, IB_PKT_ERR_ICRC);

	len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);
	buf[len - 6] ^= 0xff; /* the ICRC itself */
	ib_vcrc_put(buf, len, ib_vcrc(buf, len));
	assert_rejected(buf, len, IB_PKT_ERR_ICRC);
}

/* The ICRC leaves out what switches may rewrite (IBA 7.8.1): VL, and the
 * FECN/BECN byte of the BTH; the GRH's TClass, FlowLabel and HopLmt. */
static void test_icrc_ignores_variant_fields(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	size_t len;

	(void)state;
	len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);
	buf[0] = (uint8_t)((3 << 4) | (buf[0] & 0x0f)); /* VL 3 */
	buf[8 + 4] |= 0xc0;				 /* FECN, BECN */
	ib_vcrc_put(buf, len, ib_vcrc(buf, len));
	assert_rejected(buf, len, IB_PKT_OK);

	len = build(buf, IB_OP_SEND_ONLY, true, "hello", 5);
	buf[8 + 1] ^= 0xff; /* TClass/FlowLabel */
	buf[8 + 7] -= 1;    /* HopLmt, as a router would */
	ib_vcrc_put(buf, len, ib_vcrc(buf, len));
	assert_rejected(buf, len, IB_PKT_OK);
}

static void check_every_truncation(const uint8_t *pkt, size_t len)
{
	for (size_t n = 0; n < len; n++) {
		/* An exact-size heap copy, so a sanitizer sees any overread. */
		uint8_t *copy = malloc(n ? n : 1);
		struct ib_packet p;

		assert_non_null(copy);
		memcpy(copy, pkt, n);
		assert_int_not_equal(ib_packet_decode(copy, n, &p), IB_PKT_OK);
		free(copy);
	}
	uint8_t *copy = malloc(len);
	struct ib_packet p;

	memcpy(copy, pkt, len);
	assert_int_equal(ib_packet_decode(copy, len, &p), IB_PKT_OK);
	free(copy);
}

static void test_truncation_at_every_length_is_rejected(void **state)
{
	uint8_t buf[IB_MAX_PACKET], data[300];
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	len = build(buf, IB_OP_SEND_ONLY, false, "hello", 5);
	check_every_truncation(buf, len);
	len = build(buf, IB_OP_WRITE_ONLY_IMM, true, data, 257);
	check_every_truncation(buf, len);
	len = build(buf, IB_OP_ATOMIC_ACKNOWLEDGE, false, NULL, 0);
	check_every_truncation(buf, len);
	len = build(buf, IB_OPCODE(IB_TRANSPORT_XRC, IB_OP_CMP_SWAP), true, NULL, 0);
	check_every_truncation(buf, len);
}

/* A synthetic RC SEND Only "hello", as tshark decodes it. */
static void test_built_send_only_matches_reference_vector_bytes(void **state)
{
	uint8_t want[64], buf[IB_MAX_PACKET];
	size_t wlen = from_hex("00020004000800010470ffff000001238000045668656c6c6f00000090b8ad7013c3",
			       want, sizeof(want));
	struct ib_packet p;
	size_t len;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.lrh.LNH = IB_LNH_IBA_LOCAL;
	p.lrh.DLID = 4;
	p.lrh.SLID = 1;
	p.bth.OpCode = IB_OPCODE(IB_TRANSPORT_RC, IB_OP_SEND_ONLY);
	p.bth.M = 1;
	p.bth.P_Key = 0xffff;
	p.bth.DestQP = 0x123;
	p.bth.A = 1;
	p.bth.PSN = 0x456;
	len = ib_packet_encode(&p, "hello", 5, buf, sizeof(buf));
	assert_int_equal(len, wlen);
	assert_memory_equal(buf, want, wlen);
	assert_int_equal(p.lrh.PktLen, 8);
	assert_int_equal(p.bth.PadCnt, 3);

	struct ib_packet d;
	assert_int_equal(ib_packet_decode(want, wlen, &d), IB_PKT_OK);
	assert_int_equal(d.ICRC, 0x70adb890);
	assert_int_equal(d.VCRC, 0xc313);
	assert_int_equal(d.icrc_calc, d.ICRC);
	assert_int_equal(d.vcrc_calc, d.VCRC);
	assert_int_equal(d.payload_len, 5);
	assert_memory_equal(d.payload, "hello", 5);
}

/* The same section: frame 5 (UD with GRH) and frame 11 (local RC ACK) of
 * the hardware capture.  Decoding and rebuilding from the fields gives the
 * captured bytes, CRCs included. */
static void test_built_packets_with_and_without_grh_match_hardware(void **state)
{
	static const char *const frames[] = {
		"0003c000002100046000000000541b00fe800000000000000002c9020024f636ff12401bffff00000000"
		"0000ffffffff6440ffff00ffffff000020af00000b1b0000040508060000002008001404000180000405"
		"fe800000000000000002c9020024f6360a0001220000000000000000000000000000000000000000"
		"0a00003abd6bd6a88883",
		"00020004000700011140ffff0087040800d40a551f000001a80355503081",
	};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		uint8_t want[256], buf[IB_MAX_PACKET];
		size_t wlen = from_hex(frames[i], want, sizeof(want)), len;
		struct ib_packet p;

		assert_int_equal(ib_packet_decode(want, wlen, &p), IB_PKT_OK);
		assert_int_equal(p.has_grh, i == 0);
		len = ib_packet_encode(&p, p.payload, p.payload_len, buf, sizeof(buf));
		assert_int_equal(len, wlen);
		assert_memory_equal(buf, want, wlen);
	}
}

static void test_encode_refuses_what_it_cannot_build(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	struct ib_packet p;

	(void)state;
	base_fields(&p, 0x15, false); /* reserved opcode */
	assert_int_equal(ib_packet_encode(&p, NULL, 0, buf, sizeof(buf)), 0);
	base_fields(&p, IB_OP_SEND_ONLY, false);
	p.lrh.LNH = IB_LNH_RAW;
	assert_int_equal(ib_packet_encode(&p, NULL, 0, buf, sizeof(buf)), 0);
	base_fields(&p, IB_OP_SEND_ONLY, false);
	assert_int_equal(ib_packet_encode(&p, "hello", 5, buf, 33), 0); /* needs 34 */
	assert_int_equal(ib_packet_encode(&p, "hello", 5, buf, 34), 34);
	static uint8_t big[IB_MAX_PACKET];
	assert_int_equal(ib_packet_encode(&p, big, IB_MAX_PACKET, buf, sizeof(buf)), 0);
}

/* A payload sent from where it lies (seal_split) gets the very bytes a
 * packet built in one buffer gets, for every pad, local and global. */
static void test_seal_split_equals_seal_of_the_joined_packet(void **state)
{
	static uint8_t payload[IB_MAX_PACKET], one[IB_MAX_PACKET + 64],
		split[IB_MAX_PACKET + 64];
	struct ib_packet p;

	(void)state;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 131 + 7);
	for (int global = 0; global < 2; global++) {
		for (uint32_t n = 0; n <= 4096; n += n < 64 ? 1 : 509) {
			size_t hdr, len, tl;
			struct ib_packet d;

			base_fields(&p, IB_OP_SEND_ONLY, global);
			hdr = ib_packet_encode_headers(&p, n, one, sizeof(one));
			assert_true(hdr > 0);
			memcpy(split, one, hdr);
			memcpy(one + hdr, payload, n);
			len = ib_packet_seal(one, hdr, n);
			tl = ib_packet_seal_split(split, hdr, payload, n);
			assert_int_equal(hdr + n + tl, len);
			assert_memory_equal(split, one, hdr);
			assert_memory_equal(split + hdr, one + hdr + n, tl);
			assert_int_equal(ib_packet_decode(one, len, &d), IB_PKT_OK);
		}
	}
}

static void test_seal_zeroes_the_pad(void **state)
{
	uint8_t buf[IB_MAX_PACKET];
	struct ib_packet p, d;
	size_t hdr, len;

	(void)state;
	base_fields(&p, IB_OP_SEND_ONLY, false);
	memset(buf, 0xee, sizeof(buf));
	hdr = ib_packet_encode_headers(&p, 5, buf, sizeof(buf));
	assert_int_equal(hdr, 20);
	memcpy(buf + hdr, "hello", 5);
	len = ib_packet_seal(buf, hdr, 5);
	assert_int_equal(len, 34);
	assert_int_equal(buf[25], 0);
	assert_int_equal(buf[26], 0);
	assert_int_equal(buf[27], 0);
	assert_int_equal(ib_packet_decode(buf, len, &d), IB_PKT_OK);
}

static void test_error_names_and_reasons_exist_for_every_value(void **state)
{
	(void)state;
	for (int e = 0; e < IB_PKT_ERR_COUNT; e++) {
		assert_non_null(ib_pkt_err_str(e));
		assert_non_null(ib_pkt_err_name(e));
		assert_true(strlen(ib_pkt_err_name(e)) > 0);
		for (int f = 0; f < e; f++)
			assert_string_not_equal(ib_pkt_err_name(e), ib_pkt_err_name(f));
	}
	assert_string_equal(ib_pkt_err_name(IB_PKT_ERR_ICRC), "ICRC");
	assert_non_null(ib_pkt_err_str(IB_PKT_ERR_COUNT));
	assert_non_null(ib_pkt_err_name((enum ib_pkt_err)-1));
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* shared/data/ib-hw-capture.pcap: 43 packets from real IB hardware. */
static void test_every_hardware_captured_packet_decodes_ok(void **state)
{
	char why[4200];
	FILE *f;
	static uint8_t file[1 << 20];
	size_t n, off;
	unsigned count = 0, rebuilt_same = 0;
	bool swap;

	(void)state;
	f = sib_hw_capture_open(why, sizeof(why));
	if (!f)
		sib_skip("%s", why);
	n = fread(file, 1, sizeof(file), f);
	fclose(f);
	assert_true(n >= 24);
	swap = rd32(file, false) == 0xd4c3b2a1;
	assert_int_equal(rd32(file, swap), 0xa1b2c3d4);
	assert_int_equal(rd32(file + 20, swap), 197); /* ERF */
	for (off = 24; off + 16 <= n;) {
		uint32_t incl = rd32(file + off + 8, swap);
		const uint8_t *erf = file + off + 16;
		uint8_t buf[IB_MAX_PACKET];
		struct ib_packet p;
		enum ib_pkt_err err;

		assert_true(off + 16 + incl <= n);
		assert_true(incl > 16);
		assert_int_equal(erf[8], 21); /* ERF type InfiniBand */
		err = ib_packet_decode(erf + 16, incl - 16, &p);
		if (err != IB_PKT_OK)
			fail_msg("frame %u: %s", count + 1, ib_pkt_err_str(err));
		if (ib_packet_encode(&p, p.payload, p.payload_len, buf, sizeof(buf)) == incl - 16 &&
		    !memcmp(buf, erf + 16, incl - 16))
			rebuilt_same++;
		count++;
		off += 16 + incl;
	}
	assert_int_equal(count, 43);
	/* Hardware writes reserved bits and pad as zero, as we do. */
	assert_int_equal(rebuilt_same, 43);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_too_short),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_vcrc_mismatch),
		cmocka_unit_test(test_lver_nonzero),
		cmocka_unit_test(test_raw_lnh),
		cmocka_unit_test(test_pktlen_disagrees),
		cmocka_unit_test(test_grh_announced_but_missing),
		cmocka_unit_test(test_grh_ipver_not_6),
		cmocka_unit_test(test_grh_nxthdr_not_iba),
		cmocka_unit_test(test_grh_paylen_disagrees),
		cmocka_unit_test(test_tver_nonzero),
		cmocka_unit_test(test_reserved_opcode),
		cmocka_unit_test(test_extended_headers_do_not_fit),
		cmocka_unit_test(test_pad_where_none_may_be),
		cmocka_unit_test(test_payload_on_opcode_without_one),
		cmocka_unit_test(test_vl15_is_for_qp0_only_and_qp0_for_vl15_only),
		cmocka_unit_test(test_icrc_mismatch_in_payload_and_headers),
		cmocka_unit_test(test_icrc_ignores_variant_fields),
		cmocka_unit_test(test_truncation_at_every_length_is_rejected),
		cmocka_unit_test(test_built_send_only_matches_reference_vector_bytes),
		cmocka_unit_test(test_built_packets_with_and_without_grh_match_hardware),
		cmocka_unit_test(test_encode_refuses_what_it_cannot_build),
		cmocka_unit_test(test_seal_zeroes_the_pad),
		cmocka_unit_test(test_seal_split_equals_seal_of_the_joined_packet),
		cmocka_unit_test(test_error_names_and_reasons_exist_for_every_value),
		cmocka_unit_test(test_every_hardware_captured_packet_decodes_ok),
	};

	return cmocka_run_group_tests_name("wire_packet", tests, NULL, NULL);
}

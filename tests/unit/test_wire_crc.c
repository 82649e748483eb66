/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ICRC and VCRC (IBA Vol 1 7.8): check values, every fast path against the
 * bitwise reference, and packets captured from real hardware.
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
#include "wire/crc_impl.h"

#include "skip.h"

static const char check_input[] = "123456789";

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; s[0] && s[1]; s += 2) {
		unsigned int v;

		while (*s == ' ')
			s++;
		assert_true(sscanf(s, "%2x", &v) == 1);
		assert_true(n < cap);
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* Every test that switches implementation puts the best one back. */
static int restore_impl(void **state)
{
	(void)state;
	assert_int_equal(ib_crc16_force_impl(NULL), 0);
	return 0;
}

static void crc32_check_value_is_cbf43926(void **state)
{
	(void)state;
	assert_int_equal(ib_crc32(0, check_input, 9), 0xCBF43926u);
	assert_int_equal(ib_crc32_ref(0, check_input, 9), 0xCBF43926u);
	assert_int_equal(ib_crc32(0, check_input, 0), 0);
}

static void crc16_check_value_is_0a3d(void **state)
{
	(void)state;
	assert_int_equal(ib_crc16_ref(0, check_input, 9), 0x0A3D);
	assert_int_equal(ib_crc16(0, check_input, 9), 0x0A3D);
	assert_int_equal(ib_crc16_force_impl("table"), 0);
	assert_string_equal(ib_crc16_impl(), "table");
	assert_int_equal(ib_crc16(0, check_input, 9), 0x0A3D);
	assert_int_equal(ib_crc16(0, check_input, 0), 0);
}

static void unknown_impl_name_is_refused(void **state)
{
	(void)state;
	assert_int_equal(ib_crc16_force_impl("table"), 0);
	assert_int_equal(ib_crc16_force_impl("sse9"), -1);
	assert_int_equal(ib_crc16_force_impl("pclmul-"), -1);
	assert_string_equal(ib_crc16_impl(), "table");
}

/* ISA-L's convention is zlib's: a seed is a previous final CRC.  zlib's
 * crc32(0x12345678, "123456789", 9) is 0x01F4807B. */
static void crc32_chains_like_zlib(void **state)
{
	uint8_t buf[3000];
	uint32_t whole;

	(void)state;
	assert_int_equal(ib_crc32(0x12345678, check_input, 9), 0x01F4807Bu);
	assert_int_equal(ib_crc32(ib_crc32(0, check_input, 4), check_input + 4, 5), 0xCBF43926u);
	fill_random(buf, sizeof(buf));
	whole = ib_crc32_ref(0, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut += 97) {
		uint32_t c = ib_crc32(0, buf, cut);

		assert_int_equal(ib_crc32(c, buf + cut, sizeof(buf) - cut), whole);
	}
}

/* Every length 0..1024 from a random seed; then random lengths up to 9000
 * at every alignment 0..15. */
static void crc_fast_paths_match_reference(const char *impl)
{
	static uint8_t buf[9000 + 16];

	if (ib_crc16_force_impl(impl) != 0)
		sib_skip("this CPU (or architecture) cannot run the CRC path %s", impl);
	fill_random(buf, sizeof(buf));
	for (size_t len = 0; len <= 1024; len++) {
		uint16_t s16 = (uint16_t)rnd();
		uint32_t s32 = (uint32_t)rnd();
		size_t off = len % 16;

		assert_int_equal(ib_crc16(s16, buf + off, len), ib_crc16_ref(s16, buf + off, len));
		assert_int_equal(ib_crc32(s32, buf + off, len), ib_crc32_ref(s32, buf + off, len));
	}
	for (int round = 0; round < 8; round++)
		for (size_t off = 0; off < 16; off++) {
			size_t len = rnd() % 9001;
			uint16_t s16 = (uint16_t)rnd();
			uint32_t s32 = (uint32_t)rnd();

			fill_random(buf + off, len);
			assert_int_equal(ib_crc16(s16, buf + off, len),
					 ib_crc16_ref(s16, buf + off, len));
			assert_int_equal(ib_crc32(s32, buf + off, len),
					 ib_crc32_ref(s32, buf + off, len));
		}
}

static void crc16_pclmul_sse_matches_reference(void **state)
{
	(void)state;
	crc_fast_paths_match_reference("pclmul-sse");
	assert_string_equal(ib_crc16_impl(), "pclmul");
}

static void crc16_pclmul_avx_matches_reference(void **state)
{
	(void)state;
	crc_fast_paths_match_reference("pclmul-avx");
	assert_string_equal(ib_crc16_impl(), "pclmul");
}

static void crc16_pclmul_avx512_matches_reference(void **state)
{
	(void)state;
	crc_fast_paths_match_reference("pclmul-avx512"); /* skipped without VPCLMULQDQ */
	assert_string_equal(ib_crc16_impl(), "pclmul");
}

static void crc16_table_matches_reference(void **state)
{
	(void)state;
	crc_fast_paths_match_reference("table");
	assert_string_equal(ib_crc16_impl(), "table");
}

/* A CRC split anywhere and chained gives the CRC of the whole. */
static void crc16_chains_at_any_cut(void **state)
{
	static const char *impls[] = { "table", "pclmul-sse", "pclmul-avx", "pclmul-avx512" };
	uint8_t buf[700];

	(void)state;
	fill_random(buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		uint16_t whole;

		if (ib_crc16_force_impl(impls[i]) != 0)
			continue;
		whole = ib_crc16(0, buf, sizeof(buf));
		assert_int_equal(whole, ib_crc16_ref(0, buf, sizeof(buf)));
		for (size_t cut = 0; cut <= sizeof(buf); cut++)
			assert_int_equal(ib_crc16(ib_crc16(0, buf, cut), buf + cut,
						  sizeof(buf) - cut),
					 whole);
	}
}

struct vector {
	const char *name, *hex;
	uint32_t icrc;
	uint16_t vcrc;
};

/* Frames 11 and 5 of the hardware
 * capture, and a synthetic RC SEND ONLY "hello" checked with tshark. */
static const struct vector vectors[] = {
	{ "frame 11, local RC ACK",
	  "00020004000700011140ffff0087040800d40a551f000001a80355503081", 0x505503a8, 0x8130 },
	{ "frame 5, GRH UD IPoIB ARP",
	  "0003c000002100046000000000541b00fe800000000000000002c9020024f636ff12401bffff00000000"
	  "0000ffffffff6440ffff00ffffff000020af00000b1b0000040508060000002008001404000180000405"
	  "fe800000000000000002c9020024f6360a00012200000000000000000000000000000000000000000a00"
	  "003abd6bd6a88883",
	  0xa8d66bbd, 0x8388 },
	{ "synthetic RC SEND ONLY hello",
	  "00020004000800010470ffff000001238000045668656c6c6f00000090b8ad7013c3", 0x70adb890,
	  0xc313 },
};

static void check_vectors(void)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const struct vector *v = &vectors[i];
		uint8_t pkt[256];
		size_t len = unhex(v->hex, pkt, sizeof(pkt));
		uint32_t ic;
		uint16_t vc;

		print_message("%s (%zu bytes)\n", v->name, len);
		assert_int_equal(ib_icrc(pkt, len), v->icrc);
		assert_int_equal(ib_vcrc(pkt, len), v->vcrc);
		assert_int_equal(ib_icrc_get(pkt, len), v->icrc);
		assert_int_equal(ib_vcrc_get(pkt, len), v->vcrc);
		ib_crcs(pkt, len, &ic, &vc);
		assert_int_equal(ic, v->icrc);
		assert_int_equal(vc, v->vcrc);
	}
}

static void hardware_vectors_give_carried_crcs(void **state)
{
	(void)state;
	check_vectors();
	if (ib_crc16_force_impl("table") == 0)
		check_vectors();
}

/* All 43 packets of the real-hardware capture (pcap, link type 197: ERF
 * records of type 21 holding LRH..VCRC) carry the ICRC and VCRC we compute:
 * local and global, VL15 SMPs, UD, RC, CM.  Skipped without ../shared. */
static void hardware_capture_crcs_all_match(void **state)
{
	static uint8_t file[65536];
	char why[4200];
	FILE *f;
	size_t size, off = 24;
	int packets = 0;

	(void)state;
	f = sib_hw_capture_open(why, sizeof(why));
	if (!f)
		sib_skip("%s", why);
	size = fread(file, 1, sizeof(file), f);
	fclose(f);
	assert_true(size > 24 && size < sizeof(file));
	assert_memory_equal(file, "\xd4\xc3\xb2\xa1", 4); /* little-endian pcap */
	assert_int_equal(file[20], 197);		  /* LINKTYPE_ERF */
	while (off + 16 <= size) {
		uint32_t incl = file[off + 8] | file[off + 9] << 8 | file[off + 10] << 16 |
				(uint32_t)file[off + 11] << 24;
		const uint8_t *erf = file + off + 16;
		const uint8_t *pkt = erf + 16;
		size_t len;
		uint32_t ic;
		uint16_t vc;

		assert_true(incl >= 16 && off + 16 + incl <= size);
		assert_int_equal(erf[8], 21); /* ERF type InfiniBand */
		len = (size_t)erf[14] << 8 | erf[15]; /* wlen */
		assert_true(len <= incl - 16);
		ib_crcs(pkt, len, &ic, &vc);
		assert_int_equal(ib_icrc(pkt, len), ib_icrc_get(pkt, len));
		assert_int_equal(ib_vcrc(pkt, len), ib_vcrc_get(pkt, len));
		assert_int_equal(ic, ib_icrc_get(pkt, len));
		assert_int_equal(vc, ib_vcrc_get(pkt, len));
		packets++;
		off += 16 + incl;
	}
	assert_int_equal(off, size);
	assert_int_equal(packets, 43);
}

/* Frame 11 carries ICRC 0x505503a8 as a8 03 55 50 and VCRC 0x8130 as 30 81. */
static void crcs_are_stored_lsb_first(void **state)
{
	uint8_t pkt[8] = { 0 };

	(void)state;
	ib_icrc_put(pkt, sizeof(pkt), 0x505503a8);
	ib_vcrc_put(pkt, sizeof(pkt), 0x8130);
	assert_memory_equal(pkt + 2, "\xa8\x03\x55\x50\x30\x81", 6);
	assert_int_equal(ib_icrc_get(pkt, sizeof(pkt)), 0x505503a8);
	assert_int_equal(ib_vcrc_get(pkt, sizeof(pkt)), 0x8130);
}

/* Sealing with ib_crcs then put reproduces the captured bytes, and a
 * changed variant field (VL, FECN/BECN byte, HopLmt...) leaves the ICRC
 * alone while the VCRC sees it. */
static void icrc_ignores_variant_fields(void **state)
{
	uint8_t pkt[256], orig[256];
	size_t len;
	uint32_t ic;
	uint16_t vc;
	/* offsets of masked bits per vector: local, then global */
	static const size_t local[] = { 0, 12 };
	static const size_t global[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 52 };

	(void)state;
	len = unhex(vectors[0].hex, orig, sizeof(orig));
	for (size_t i = 0; i < 2; i++) {
		memcpy(pkt, orig, len);
		pkt[local[i]] ^= i == 0 ? 0x70 : 0xff;
		assert_int_equal(ib_icrc(pkt, len), vectors[0].icrc);
		assert_int_not_equal(ib_vcrc(pkt, len), vectors[0].vcrc);
	}
	memcpy(pkt, orig, len);
	pkt[0] ^= 0x01; /* LVer is covered in a local packet */
	assert_int_not_equal(ib_icrc(pkt, len), vectors[0].icrc);

	len = unhex(vectors[1].hex, orig, sizeof(orig));
	for (size_t i = 0; i < sizeof(global) / sizeof(global[0]); i++) {
		memcpy(pkt, orig, len);
		/* keep LNH = 3 in byte 1, flip only masked bits in byte 8 */
		pkt[global[i]] ^= global[i] == 1 ? 0xfc : global[i] == 8 ? 0x0f : 0xff;
		assert_int_equal(ib_icrc(pkt, len), vectors[1].icrc);
	}
	memcpy(pkt, orig, len);
	pkt[8] ^= 0x10; /* IPVer is covered */
	assert_int_not_equal(ib_icrc(pkt, len), vectors[1].icrc);

	/* seal a copy whose CRC bytes are zero */
	memcpy(pkt, orig, len);
	memset(pkt + len - 6, 0, 6);
	ib_crcs(pkt, len, &ic, &vc);
	ib_icrc_put(pkt, len, ic);
	ib_vcrc_put(pkt, len, vc);
	assert_memory_equal(pkt, orig, len);
}

/* ib_crcs equals ib_icrc + ib_vcrc on a sealed packet of any size and both
 * LNH kinds, on both CRC-16 paths. */
static void crcs_agree_with_separate_calls(void **state)
{
	static uint8_t pkt[4200];
	static const char *impls[] = { "table", "pclmul-sse", "pclmul-avx", "pclmul-avx512" };

	(void)state;
	for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		if (ib_crc16_force_impl(impls[i]) != 0)
			continue;
		/* from 8 bytes on, the ICRC field no longer overlaps LNH */
		for (size_t len = 8; len < sizeof(pkt); len += 1 + len / 8) {
			uint32_t ic;
			uint16_t vc;

			fill_random(pkt, len);
			pkt[1] = (pkt[1] & ~3) | (len & 1 ? 3 : 2);
			ib_icrc_put(pkt, len, ib_icrc(pkt, len));
			ib_crcs(pkt, len, &ic, &vc);
			assert_int_equal(ic, ib_icrc(pkt, len));
			assert_int_equal(vc, ib_vcrc(pkt, len));
		}
	}
}

/* Short and garbage packets: each length 0..70 copied to the end of a
 * heap block, so ASan catches any read past pkt+len. */
static void short_packets_are_read_in_bounds(void **state)
{
	uint8_t src[70], before[70];

	(void)state;
	fill_random(src, sizeof(src));
	for (int lnh = 2; lnh <= 3; lnh++)
		for (size_t len = 0; len <= sizeof(src); len++) {
			uint8_t *pkt = malloc(len ? len : 1);
			uint32_t ic;
			uint16_t vc;

			assert_non_null(pkt);
			memcpy(pkt, src, len);
			if (len > 1)
				pkt[1] = (pkt[1] & ~3) | lnh;
			ic = ib_icrc(pkt, len);
			vc = ib_vcrc(pkt, len);
			if (len >= 6) {
				/* ICRC covers all but the last 6 bytes */
				uint8_t m[70];

				memcpy(m, pkt, len - 6);
				if (lnh == 2) {
					if (len - 6 > 0)
						m[0] |= 0xf0;
					if (len - 6 > 12)
						m[12] = 0xff;
				}
				if (lnh == 3) {
					for (size_t j = 0; j < len - 6; j++)
						if (j < 8 || (j >= 9 && j < 12) || j == 15 || j == 52)
							m[j] = 0xff;
						else if (j == 8)
							m[j] |= 0x0f;
				}
				assert_int_equal(ic, ib_crc32_ref(0, m, len - 6));
				assert_int_equal(vc, ib_crc16_ref(0, pkt, len - 2));
			} else {
				assert_int_equal(ic, 0);
				assert_int_equal(vc, len > 2 ? ib_crc16_ref(0, pkt, len - 2) : 0);
			}
			/* get then put of what is carried changes nothing */
			memcpy(before, pkt, len);
			ib_crcs(pkt, len, &ic, &vc);
			ib_icrc_put(pkt, len, ib_icrc_get(pkt, len));
			ib_vcrc_put(pkt, len, ib_vcrc_get(pkt, len));
			assert_memory_equal(pkt, before, len);
			free(pkt);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32_check_value_is_cbf43926),
		cmocka_unit_test_teardown(crc16_check_value_is_0a3d, restore_impl),
		cmocka_unit_test_teardown(unknown_impl_name_is_refused, restore_impl),
		cmocka_unit_test(crc32_chains_like_zlib),
		cmocka_unit_test_teardown(crc16_pclmul_sse_matches_reference, restore_impl),
		cmocka_unit_test_teardown(crc16_pclmul_avx_matches_reference, restore_impl),
		cmocka_unit_test_teardown(crc16_pclmul_avx512_matches_reference, restore_impl),
		cmocka_unit_test_teardown(crc16_table_matches_reference, restore_impl),
		cmocka_unit_test_teardown(crc16_chains_at_any_cut, restore_impl),
		cmocka_unit_test_teardown(hardware_vectors_give_carried_crcs, restore_impl),
		cmocka_unit_test(hardware_capture_crcs_all_match),
		cmocka_unit_test(crcs_are_stored_lsb_first),
		cmocka_unit_test(icrc_ignores_variant_fields),
		cmocka_unit_test_teardown(crcs_agree_with_separate_calls, restore_impl),
		cmocka_unit_test(short_packets_are_read_in_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Header encode/decode: every header round-trips both ways, each field
 * lands exactly on its IBA bits, reserved bits stay zero, and a packet
 * captured from real hardware decodes to the values its bytes hold.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/headers.h"

union any_header {
	struct ib_lrh lrh;
	struct ib_grh grh;
	struct ib_bth bth;
	struct ib_rdeth rdeth;
	struct ib_deth deth;
	struct ib_xrceth xrceth;
	struct ib_reth reth;
	struct ib_atomiceth atomiceth;
	struct ib_aeth aeth;
	struct ib_atomicacketh atomicacketh;
	struct ib_immdt immdt;
	struct ib_ieth ieth;
	struct ib_feth feth;
};

static const size_t struct_size[IB_HDR_COUNT] = {
	[IB_HDR_LRH] = sizeof(struct ib_lrh),
	[IB_HDR_GRH] = sizeof(struct ib_grh),
	[IB_HDR_BTH] = sizeof(struct ib_bth),
	[IB_HDR_RDETH] = sizeof(struct ib_rdeth),
	[IB_HDR_DETH] = sizeof(struct ib_deth),
	[IB_HDR_XRCETH] = sizeof(struct ib_xrceth),
	[IB_HDR_RETH] = sizeof(struct ib_reth),
	[IB_HDR_ATOMICETH] = sizeof(struct ib_atomiceth),
	[IB_HDR_AETH] = sizeof(struct ib_aeth),
	[IB_HDR_ATOMICACKETH] = sizeof(struct ib_atomicacketh),
	[IB_HDR_IMMDT] = sizeof(struct ib_immdt),
	[IB_HDR_IETH] = sizeof(struct ib_ieth),
	[IB_HDR_FETH] = sizeof(struct ib_feth),
};

/* The sizes IBA gives each header (independent of the enum in headers.h). */
static const unsigned iba_bytes[IB_HDR_COUNT] = {
	[IB_HDR_LRH] = 8,
	[IB_HDR_GRH] = 40,
	[IB_HDR_BTH] = 12,
	[IB_HDR_RDETH] = 4,
	[IB_HDR_DETH] = 8,
	[IB_HDR_XRCETH] = 4,
	[IB_HDR_RETH] = 16,
	[IB_HDR_ATOMICETH] = 28,
	[IB_HDR_AETH] = 4,
	[IB_HDR_ATOMICACKETH] = 8,
	[IB_HDR_IMMDT] = 4,
	[IB_HDR_IETH] = 4,
	[IB_HDR_FETH] = 4,
};

static void encode(enum ib_hdr h, const union any_header *s, uint8_t *p)
{
	switch (h) {
	case IB_HDR_LRH:
		ib_lrh_encode(&s->lrh, p);
		break;
	case IB_HDR_GRH:
		ib_grh_encode(&s->grh, p);
		break;
	case IB_HDR_BTH:
		ib_bth_encode(&s->bth, p);
		break;
	case IB_HDR_RDETH:
		ib_rdeth_encode(&s->rdeth, p);
		break;
	case IB_HDR_DETH:
		ib_deth_encode(&s->deth, p);
		break;
	case IB_HDR_XRCETH:
		ib_xrceth_encode(&s->xrceth, p);
		break;
	case IB_HDR_RETH:
		ib_reth_encode(&s->reth, p);
		break;
	case IB_HDR_ATOMICETH:
		ib_atomiceth_encode(&s->atomiceth, p);
		break;
	case IB_HDR_AETH:
		ib_aeth_encode(&s->aeth, p);
		break;
	case IB_HDR_ATOMICACKETH:
		ib_atomicacketh_encode(&s->atomicacketh, p);
		break;
	case IB_HDR_IMMDT:
		ib_immdt_encode(&s->immdt, p);
		break;
	case IB_HDR_IETH:
		ib_ieth_encode(&s->ieth, p);
		break;
	case IB_HDR_FETH:
		ib_feth_encode(&s->feth, p);
		break;
	default:
		fail();
	}
}

static void decode(enum ib_hdr h, union any_header *s, const uint8_t *p)
{
	switch (h) {
	case IB_HDR_LRH:
		ib_lrh_decode(&s->lrh, p);
		break;
	case IB_HDR_GRH:
		ib_grh_decode(&s->grh, p);
		break;
	case IB_HDR_BTH:
		ib_bth_decode(&s->bth, p);
		break;
	case IB_HDR_RDETH:
		ib_rdeth_decode(&s->rdeth, p);
		break;
	case IB_HDR_DETH:
		ib_deth_decode(&s->deth, p);
		break;
	case IB_HDR_XRCETH:
		ib_xrceth_decode(&s->xrceth, p);
		break;
	case IB_HDR_RETH:
		ib_reth_decode(&s->reth, p);
		break;
	case IB_HDR_ATOMICETH:
		ib_atomiceth_decode(&s->atomiceth, p);
		break;
	case IB_HDR_AETH:
		ib_aeth_decode(&s->aeth, p);
		break;
	case IB_HDR_ATOMICACKETH:
		ib_atomicacketh_decode(&s->atomicacketh, p);
		break;
	case IB_HDR_IMMDT:
		ib_immdt_decode(&s->immdt, p);
		break;
	case IB_HDR_IETH:
		ib_ieth_decode(&s->ieth, p);
		break;
	case IB_HDR_FETH:
		ib_feth_decode(&s->feth, p);
		break;
	default:
		fail();
	}
}

/* Sets bits [bit, bit+bits) of a big-endian byte string, MSB first. */
static void set_bits(uint8_t *m, unsigned bit, unsigned bits)
{
	for (unsigned b = bit; b < bit + bits; b++)
		m[b / 8] |= (uint8_t)(0x80 >> (b % 8));
}

/* Bytes with every bit some field of `d` owns set; reserved bits clear. */
static void field_mask(const struct ib_header_desc *d, uint8_t *m)
{
	memset(m, 0, d->bytes);
	for (unsigned i = 0; i < d->nfields; i++)
		set_bits(m, d->fields[i].bit, d->fields[i].bits);
}

static void put_member(union any_header *s, const struct ib_field_desc *f, uint64_t v)
{
	uint8_t *m = (uint8_t *)s + f->offset;
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (f->size) {
	case 1: memcpy(m, &u8, 1); break;
	case 2: memcpy(m, &u16, 2); break;
	case 4: memcpy(m, &u32, 4); break;
	case 8: memcpy(m, &v, 8); break;
	default:
		fail_msg("field %s has size %u", f->name, f->size);
	}
}

static uint64_t rand64(void)
{
	uint64_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 16 | (uint64_t)(rand() & 0xffff);
	return v;
}

static void assert_same_fields(const struct ib_header_desc *d, const union any_header *a,
			       const union any_header *b)
{
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];

		if (f->bits == 128)
			assert_memory_equal((const uint8_t *)a + f->offset,
					    (const uint8_t *)b + f->offset, 16);
		else
			assert_int_equal(ib_field_get(a, f), ib_field_get(b, f));
	}
}

static void test_descriptions_match_iba_sizes_and_never_overlap(void **state)
{
	(void)state;
	for (int h = 0; h < IB_HDR_COUNT; h++) {
		const struct ib_header_desc *d = ib_header_desc(h);
		uint8_t owned[40] = { 0 };

		assert_non_null(d);
		assert_non_null(d->name);
		assert_int_equal(d->bytes, iba_bytes[h]);
		assert_true(d->nfields > 0);
		for (unsigned i = 0; i < d->nfields; i++) {
			const struct ib_field_desc *f = &d->fields[i];

			assert_non_null(f->name);
			assert_true(f->bit + f->bits <= d->bytes * 8u);
			assert_true(f->offset + f->size <= struct_size[h]);
			if (f->bits == 128) {
				assert_int_equal(f->bit % 8, 0);
				assert_int_equal(f->size, 16);
			} else if (f->bits == 64) {
				assert_int_equal(f->bit % 32, 0);
				assert_int_equal(f->size, 8);
			} else {
				/* IBA fields never straddle a 32-bit word. */
				assert_true(f->bits <= 32);
				assert_int_equal(f->bit / 32, (f->bit + f->bits - 1) / 32);
				assert_true(f->bits <= f->size * 8u);
			}
			for (unsigned b = f->bit; b < f->bit + f->bits; b++) {
				assert_false(owned[b / 8] & (0x80 >> (b % 8)));
				owned[b / 8] |= (uint8_t)(0x80 >> (b % 8));
			}
		}
	}
	assert_null(ib_header_desc(IB_HDR_COUNT));
}

static void test_every_field_at_max_sets_only_its_own_bits(void **state)
{
	(void)state;
	for (int h = 0; h < IB_HDR_COUNT; h++) {
		const struct ib_header_desc *d = ib_header_desc(h);

		for (unsigned i = 0; i < d->nfields; i++) {
			const struct ib_field_desc *f = &d->fields[i];
			union any_header s, back;
			uint8_t got[48], want[48] = { 0 };

			memset(&s, 0, sizeof(s));
			/* All ones in the whole member: excess bits must be dropped. */
			memset((uint8_t *)&s + f->offset, 0xff, f->size);
			memset(got, 0xa5, sizeof(got));
			encode(h, &s, got);
			set_bits(want, f->bit, f->bits);
			if (memcmp(got, want, d->bytes)) {
				print_error("%s.%s bleeds into its neighbours\n", d->name, f->name);
				assert_memory_equal(got, want, d->bytes);
			}
			/* Nothing written past the header. */
			assert_int_equal(got[d->bytes], 0xa5);

			memset(&back, 0, sizeof(back));
			decode(h, &back, got);
			for (unsigned j = 0; j < d->nfields; j++) {
				const struct ib_field_desc *g = &d->fields[j];
				uint64_t max = g->bits >= 64 ? ~0ull : (1ull << g->bits) - 1;

				if (g->bits == 128)
					continue;
				assert_int_equal(ib_field_get(&back, g), j == i ? max : 0);
			}
		}
	}
}

static void test_random_structs_round_trip_encode_then_decode(void **state)
{
	(void)state;
	srand(1);
	for (int h = 0; h < IB_HDR_COUNT; h++) {
		const struct ib_header_desc *d = ib_header_desc(h);

		for (int n = 0; n < 200; n++) {
			union any_header s, back;
			uint8_t p[40];

			memset(&s, 0, sizeof(s));
			for (unsigned i = 0; i < d->nfields; i++) {
				const struct ib_field_desc *f = &d->fields[i];

				if (f->bits == 128) {
					for (int k = 0; k < 16; k++)
						((uint8_t *)&s)[f->offset + k] = (uint8_t)rand();
				} else {
					uint64_t v = rand64();

					if (f->bits < 64)
						v &= (1ull << f->bits) - 1;
					put_member(&s, f, v);
				}
			}
			encode(h, &s, p);
			memset(&back, 0x5a, sizeof(back));
			decode(h, &back, p);
			assert_same_fields(d, &s, &back);
		}
	}
}

static void test_random_bytes_round_trip_decode_then_encode(void **state)
{
	(void)state;
	srand(2);
	for (int h = 0; h < IB_HDR_COUNT; h++) {
		const struct ib_header_desc *d = ib_header_desc(h);
		uint8_t mask[40];

		field_mask(d, mask);
		for (int n = 0; n < 200; n++) {
			uint8_t in[40], out[40];
			union any_header s;

			for (unsigned k = 0; k < d->bytes; k++)
				in[k] = (uint8_t)rand() & mask[k];
			decode(h, &s, in);
			encode(h, &s, out);
			assert_memory_equal(in, out, d->bytes);
		}
	}
}

static void test_reserved_bits_are_ignored_and_written_as_zero(void **state)
{
	(void)state;
	for (int h = 0; h < IB_HDR_COUNT; h++) {
		const struct ib_header_desc *d = ib_header_desc(h);
		uint8_t mask[40], in[40], out[40];
		union any_header s;

		field_mask(d, mask);
		memset(in, 0xff, sizeof(in));
		decode(h, &s, in);
		encode(h, &s, out);
		for (unsigned k = 0; k < d->bytes; k++)
			assert_int_equal(out[k], mask[k]);
	}
}

static void test_lrh_and_bth_reserved_bits_are_where_iba_puts_them(void **state)
{
	/* VL LVer | SL rsv2 LNH | DLID | rsv5 PktLen | SLID */
	static const uint8_t lrh_want[8] = { 0xff, 0xf3, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff };
	/* OpCode | SE M Pad TVer | P_Key | FECN BECN rsv6 | DestQP | A rsv7 | PSN */
	static const uint8_t bth_want[12] = { 0xff, 0xff, 0xff, 0xff, 0xc0, 0xff,
					      0xff, 0xff, 0x80, 0xff, 0xff, 0xff };
	uint8_t mask[12];

	(void)state;
	field_mask(ib_header_desc(IB_HDR_LRH), mask);
	assert_memory_equal(mask, lrh_want, 8);
	field_mask(ib_header_desc(IB_HDR_BTH), mask);
	assert_memory_equal(mask, bth_want, 12);
}

/* IBA 1.5 FETH: one word, SEL in bits 5:4 and PLT in bits 3:0 of its last byte. */
static void test_feth_puts_sel_and_plt_in_the_low_bits_of_its_word(void **state)
{
	struct ib_feth f = { .SEL = IB_FETH_SEL_REGION, .PLT = IB_FETH_PLT_PERSISTENT };
	static const uint8_t want[4] = { 0, 0, 0, 0x12 };
	uint8_t p[4], mask[4];

	(void)state;
	ib_feth_encode(&f, p);
	assert_memory_equal(p, want, 4);
	field_mask(ib_header_desc(IB_HDR_FETH), mask);
	assert_memory_equal(mask, ((uint8_t[4]){ 0, 0, 0, 0x3f }), 4);
}

static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* Frame 11 of the hardware capture, a local RC ACK. */
static void test_hardware_rc_ack_decodes_to_its_field_values(void **state)
{
	const char *hex = "00020004000700011140ffff0087040800d40a551f000001a80355503081";
	uint8_t p[30], again[30];
	struct ib_lrh lrh;
	struct ib_bth bth;
	struct ib_aeth aeth;

	(void)state;
	hex_to_bytes(hex, p, sizeof(p));
	ib_lrh_decode(&lrh, p);
	assert_int_equal(lrh.VL, 0);
	assert_int_equal(lrh.LVer, 0);
	assert_int_equal(lrh.SL, 0);
	assert_int_equal(lrh.LNH, IB_LNH_IBA_LOCAL);
	assert_int_equal(lrh.DLID, 4);
	assert_int_equal(lrh.PktLen, 7);
	assert_int_equal(lrh.SLID, 1);

	ib_bth_decode(&bth, p + 8);
	assert_int_equal(bth.OpCode, 0x11);
	assert_int_equal(bth.SE, 0);
	assert_int_equal(bth.M, 1);
	assert_int_equal(bth.PadCnt, 0);
	assert_int_equal(bth.TVer, 0);
	assert_int_equal(bth.P_Key, 0xffff);
	assert_int_equal(bth.FECN, 0);
	assert_int_equal(bth.BECN, 0);
	assert_int_equal(bth.DestQP, 0x870408);
	assert_int_equal(bth.A, 0);
	assert_int_equal(bth.PSN, 0xd40a55);

	ib_aeth_decode(&aeth, p + 20);
	assert_int_equal(aeth.Syndrome, 0x1f);
	assert_int_equal(ib_aeth_kind(aeth.Syndrome), IB_AETH_ACK);
	assert_int_equal(ib_aeth_value(aeth.Syndrome), 0x1f);
	assert_int_equal(aeth.MSN, 1);

	/* And back: the same 24 header bytes. */
	ib_lrh_encode(&lrh, again);
	ib_bth_encode(&bth, again + 8);
	ib_aeth_encode(&aeth, again + 20);
	assert_memory_equal(again, p, 24);
}

static void test_gid_bytes_are_copied_in_wire_order(void **state)
{
	struct ib_grh grh, back;
	uint8_t p[40];

	(void)state;
	memset(&grh, 0, sizeof(grh));
	for (int i = 0; i < 16; i++) {
		grh.SGID.raw[i] = (uint8_t)(0x10 + i);
		grh.DGID.raw[i] = (uint8_t)(0xe0 + i);
	}
	grh.IPVer = 6;
	grh.NxtHdr = IB_GRH_NXTHDR_IBA;
	grh.HopLmt = 0x40;
	grh.FlowLabel = 0xabcde;
	grh.TClass = 0x12;
	grh.PayLen = 0x1234;
	ib_grh_encode(&grh, p);
	assert_memory_equal(p + 8, grh.SGID.raw, 16);
	assert_memory_equal(p + 24, grh.DGID.raw, 16);
	static const uint8_t head[8] = { 0x61, 0x2a, 0xbc, 0xde, 0x12, 0x34, 0x1b, 0x40 };
	assert_memory_equal(p, head, 8);
	ib_grh_decode(&back, p);
	assert_memory_equal(&back.SGID, &grh.SGID, 16);
	assert_memory_equal(&back.DGID, &grh.DGID, 16);
	assert_int_equal(back.FlowLabel, 0xabcde);
}

static void test_field_get_reads_struct_values_and_not_gids(void **state)
{
	const struct ib_header_desc *d = ib_header_desc(IB_HDR_RETH);
	struct ib_reth reth = { .VA = 0x0123456789abcdefull, .R_Key = 0xdeadbeef, .DMALen = 77 };

	(void)state;
	assert_string_equal(d->fields[0].name, "VA");
	assert_true(ib_field_get(&reth, &d->fields[0]) == 0x0123456789abcdefull);
	assert_int_equal(ib_field_get(&reth, &d->fields[1]), 0xdeadbeef);
	assert_int_equal(ib_field_get(&reth, &d->fields[2]), 77);

	const struct ib_header_desc *g = ib_header_desc(IB_HDR_GRH);
	struct ib_grh grh;
	memset(&grh, 0xff, sizeof(grh));
	for (unsigned i = 0; i < g->nfields; i++)
		if (g->fields[i].bits == 128)
			assert_int_equal(ib_field_get(&grh, &g->fields[i]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptions_match_iba_sizes_and_never_overlap),
		cmocka_unit_test(test_every_field_at_max_sets_only_its_own_bits),
		cmocka_unit_test(test_random_structs_round_trip_encode_then_decode),
		cmocka_unit_test(test_random_bytes_round_trip_decode_then_encode),
		cmocka_unit_test(test_reserved_bits_are_ignored_and_written_as_zero),
		cmocka_unit_test(test_lrh_and_bth_reserved_bits_are_where_iba_puts_them),
		cmocka_unit_test(test_feth_puts_sel_and_plt_in_the_low_bits_of_its_word),
		cmocka_unit_test(test_hardware_rc_ack_decodes_to_its_field_values),
		cmocka_unit_test(test_gid_bytes_are_copied_in_wire_order),
		cmocka_unit_test(test_field_get_reads_struct_values_and_not_gids),
	};

	return cmocka_run_group_tests_name("wire_headers", tests, NULL, NULL);
}

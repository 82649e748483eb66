/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Header layouts, each described once as a field table; encode and decode
 * are the same walk over that table in opposite directions.
 *
 * IBA draws every header as 32-bit big-endian words, and no field crosses
 * a word boundary except the word-aligned 64-bit ones (VA, SwapDt, ...) and
 * the GIDs.  So a header is loaded into host-order words once and each
 * field is a shift and a mask of one word (or two for 64-bit fields).
 */
#include <string.h>

#include "wire/bitfield.h"
#include "wire/headers.h"

#define FIELD(hdr, NAME, BIT, BITS, member)                                                        \
	{                                                                                          \
		.name = NAME, .bit = BIT, .bits = BITS,                                            \
		.offset = offsetof(struct ib_##hdr, member),                                       \
		.size = sizeof(((struct ib_##hdr *)0)->member),                                    \
	}

/* IBA 7.7: LRH.  Bits 12-13 and 32-36 are reserved. */
static const struct ib_field_desc lrh_fields[] = {
	FIELD(lrh, "VL", 0, 4, VL),	    FIELD(lrh, "LVer", 4, 4, LVer),
	FIELD(lrh, "SL", 8, 4, SL),	    FIELD(lrh, "LNH", 14, 2, LNH),
	FIELD(lrh, "DLID", 16, 16, DLID),   FIELD(lrh, "PktLen", 37, 11, PktLen),
	FIELD(lrh, "SLID", 48, 16, SLID),
};

/* IBA 8.3: GRH. */
static const struct ib_field_desc grh_fields[] = {
	FIELD(grh, "IPVer", 0, 4, IPVer),	  FIELD(grh, "TClass", 4, 8, TClass),
	FIELD(grh, "FlowLabel", 12, 20, FlowLabel), FIELD(grh, "PayLen", 32, 16, PayLen),
	FIELD(grh, "NxtHdr", 48, 8, NxtHdr),	  FIELD(grh, "HopLmt", 56, 8, HopLmt),
	FIELD(grh, "SGID", 64, 128, SGID),	  FIELD(grh, "DGID", 192, 128, DGID),
};

/* IBA 9.2: BTH.  FECN/BECN live in the top of resv8a (congestion control, IBA Annex A10);
 * bits 34-39 and 65-71 are reserved. */
static const struct ib_field_desc bth_fields[] = {
	FIELD(bth, "OpCode", 0, 8, OpCode), FIELD(bth, "SE", 8, 1, SE),
	FIELD(bth, "M", 9, 1, M),	    FIELD(bth, "PadCnt", 10, 2, PadCnt),
	FIELD(bth, "TVer", 12, 4, TVer),    FIELD(bth, "P_Key", 16, 16, P_Key),
	FIELD(bth, "FECN", 32, 1, FECN),    FIELD(bth, "BECN", 33, 1, BECN),
	FIELD(bth, "DestQP", 40, 24, DestQP), FIELD(bth, "A", 64, 1, A),
	FIELD(bth, "PSN", 72, 24, PSN),
};

/* IBA 9.3: the extended transport headers, in ib_eth_order. */
static const struct ib_field_desc rdeth_fields[] = {
	FIELD(rdeth, "EECnxt", 8, 24, EECnxt),
};

static const struct ib_field_desc deth_fields[] = {
	FIELD(deth, "Q_Key", 0, 32, Q_Key),
	FIELD(deth, "SrcQP", 40, 24, SrcQP),
};

/* XRC (IBA Annex A14) */
static const struct ib_field_desc xrceth_fields[] = {
	FIELD(xrceth, "XRCSRQ", 8, 24, XRCSRQ),
};

static const struct ib_field_desc reth_fields[] = {
	FIELD(reth, "VA", 0, 64, VA),
	FIELD(reth, "R_Key", 64, 32, R_Key),
	FIELD(reth, "DMALen", 96, 32, DMALen),
};

static const struct ib_field_desc atomiceth_fields[] = {
	FIELD(atomiceth, "VA", 0, 64, VA),	    FIELD(atomiceth, "R_Key", 64, 32, R_Key),
	FIELD(atomiceth, "SwapDt", 96, 64, SwapDt), FIELD(atomiceth, "CmpDt", 160, 64, CmpDt),
};

static const struct ib_field_desc aeth_fields[] = {
	FIELD(aeth, "Syndrome", 0, 8, Syndrome),
	FIELD(aeth, "MSN", 8, 24, MSN),
};

static const struct ib_field_desc atomicacketh_fields[] = {
	FIELD(atomicacketh, "OrigRemDt", 0, 64, OrigRemDt),
};

static const struct ib_field_desc immdt_fields[] = {
	FIELD(immdt, "ImmDt", 0, 32, ImmDt),
};

static const struct ib_field_desc ieth_fields[] = {
	FIELD(ieth, "R_Key", 0, 32, R_Key),
};

/* IBA 1.5 FETH: bits 0-25 are reserved. */
static const struct ib_field_desc feth_fields[] = {
	FIELD(feth, "SEL", 26, 2, SEL),
	FIELD(feth, "PLT", 28, 4, PLT),
};

#define DESC(NAME, BYTES, table)                                                                   \
	{                                                                                          \
		.name = NAME, .bytes = BYTES,                                                      \
		.nfields = sizeof(table) / sizeof(table[0]), .fields = table,                      \
	}

static const struct ib_header_desc header_descs[IB_HDR_COUNT] = {
	[IB_HDR_LRH] = DESC("LRH", IB_LRH_BYTES, lrh_fields),
	[IB_HDR_GRH] = DESC("GRH", IB_GRH_BYTES, grh_fields),
	[IB_HDR_BTH] = DESC("BTH", IB_BTH_BYTES, bth_fields),
	[IB_HDR_RDETH] = DESC("RDETH", IB_RDETH_BYTES, rdeth_fields),
	[IB_HDR_DETH] = DESC("DETH", IB_DETH_BYTES, deth_fields),
	[IB_HDR_XRCETH] = DESC("XRCETH", IB_XRCETH_BYTES, xrceth_fields),
	[IB_HDR_RETH] = DESC("RETH", IB_RETH_BYTES, reth_fields),
	[IB_HDR_ATOMICETH] = DESC("AtomicETH", IB_ATOMICETH_BYTES, atomiceth_fields),
	[IB_HDR_AETH] = DESC("AETH", IB_AETH_BYTES, aeth_fields),
	[IB_HDR_ATOMICACKETH] = DESC("AtomicAckETH", IB_ATOMICACKETH_BYTES, atomicacketh_fields),
	[IB_HDR_IMMDT] = DESC("ImmDt", IB_IMMDT_BYTES, immdt_fields),
	[IB_HDR_IETH] = DESC("IETH", IB_IETH_BYTES, ieth_fields),
	[IB_HDR_FETH] = DESC("FETH", IB_FETH_BYTES, feth_fields),
};

const struct ib_header_desc *ib_header_desc(enum ib_hdr hdr)
{
	if ((unsigned)hdr >= IB_HDR_COUNT)
		return NULL;
	return &header_descs[hdr];
}

enum { MAX_WORDS = IB_GRH_BYTES / 4 };

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint64_t field_mask(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

static inline uint64_t member_get(const void *h, const struct ib_field_desc *f)
{
	return ib_member_load((const uint8_t *)h + f->offset, f->size);
}

static inline void member_put(void *h, const struct ib_field_desc *f, uint64_t v)
{
	ib_member_store((uint8_t *)h + f->offset, f->size, v);
}

uint64_t ib_field_get(const void *hdr_struct, const struct ib_field_desc *f)
{
	if (f->bits > 64)
		return 0;
	return member_get(hdr_struct, f) & field_mask(f->bits);
}

/* Shift of a field of at most 32 bits within its word, counted from bit 0. */
static inline unsigned word_shift(const struct ib_field_desc *f)
{
	return 32 - f->bit % 32 - f->bits;
}

/*
 * Always inlined with a constant descriptor, and its loops unrolled: the
 * compiler then reads the table at build time and each ib_<hdr>_encode /
 * _decode is straight-line shifts and masks, while the table stays the one
 * description of the layout.
 */
#define SPECIALIZE __attribute__((always_inline)) static inline

SPECIALIZE void header_decode(const struct ib_header_desc *d, void *h, const uint8_t *p)
{
	uint32_t w[MAX_WORDS];
	unsigned i, nw = d->bytes / 4;

#pragma GCC unroll 16
	for (i = 0; i < nw; i++)
		w[i] = load_be32(p + 4 * i);
#pragma GCC unroll 16
	for (i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];
		unsigned wi = f->bit / 32;
		uint64_t v;

		if (f->bits == 128) {
			memcpy((uint8_t *)h + f->offset, p + f->bit / 8, 16);
			continue;
		}
		if (f->bits == 64)
			v = (uint64_t)w[wi] << 32 | w[wi + 1];
		else
			v = (w[wi] >> word_shift(f)) & field_mask(f->bits);
		member_put(h, f, v);
	}
}

/* Bits not named by any field (reserved) come out zero. */
SPECIALIZE void header_encode(const struct ib_header_desc *d, const void *h, uint8_t *p)
{
	uint32_t w[MAX_WORDS] = { 0 };
	unsigned i, nw = d->bytes / 4;

#pragma GCC unroll 16
	for (i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];
		unsigned wi = f->bit / 32;
		uint64_t v;

		if (f->bits == 128)
			continue;
		v = member_get(h, f) & field_mask(f->bits);
		if (f->bits == 64) {
			w[wi] = (uint32_t)(v >> 32);
			w[wi + 1] = (uint32_t)v;
		} else {
			w[wi] |= (uint32_t)v << word_shift(f);
		}
	}
#pragma GCC unroll 16
	for (i = 0; i < nw; i++)
		store_be32(p + 4 * i, w[i]);
#pragma GCC unroll 16
	for (i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];

		if (f->bits == 128)
			memcpy(p + f->bit / 8, (const uint8_t *)h + f->offset, 16);
	}
}

#define HEADER_OPS(name, HDR)                                                                      \
	void ib_##name##_encode(const struct ib_##name *h, uint8_t *p)                             \
	{                                                                                          \
		header_encode(&header_descs[HDR], h, p);                                           \
	}                                                                                          \
	void ib_##name##_decode(struct ib_##name *h, const uint8_t *p)                             \
	{                                                                                          \
		header_decode(&header_descs[HDR], h, p);                                           \
	}

HEADER_OPS(lrh, IB_HDR_LRH)
HEADER_OPS(grh, IB_HDR_GRH)
HEADER_OPS(bth, IB_HDR_BTH)
HEADER_OPS(rdeth, IB_HDR_RDETH)
HEADER_OPS(deth, IB_HDR_DETH)
HEADER_OPS(xrceth, IB_HDR_XRCETH)
HEADER_OPS(reth, IB_HDR_RETH)
HEADER_OPS(atomiceth, IB_HDR_ATOMICETH)
HEADER_OPS(aeth, IB_HDR_AETH)
HEADER_OPS(atomicacketh, IB_HDR_ATOMICACKETH)
HEADER_OPS(immdt, IB_HDR_IMMDT)
HEADER_OPS(ieth, IB_HDR_IETH)
HEADER_OPS(feth, IB_HDR_FETH)

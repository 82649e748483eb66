/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Big-endian bit fields as IBA draws them: bit 0 is the most significant bit
 * of byte 0, and a field of `bits` bits starting at `bit` holds its value
 * most significant bit first.  Fields may straddle bytes and be up to 64
 * bits wide.  Pure helpers for every table-driven layout in wire/.
 */
#ifndef SIB_WIRE_BITFIELD_H
#define SIB_WIRE_BITFIELD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ib_header_desc;

/* One struct ib_field_desc initialiser: IBA name, bit offset and width on the
 * wire, and where the value lives in `type`. */
#define IB_FIELD(type, name, member, bit, bits)                                                    \
	{                                                                                          \
		(name), (bit), (bits), offsetof(type, member), sizeof(((type *)0)->member)         \
	}

#define IB_DESC(label, nbytes, table)                                                              \
	{                                                                                          \
		(label), (nbytes), sizeof(table) / sizeof((table)[0]), (table)                     \
	}

static inline uint64_t ib_bits_get(const uint8_t *p, unsigned bit, unsigned bits)
{
	unsigned end = bit + bits;
	uint64_t v = 0;

	while (bit < end) {
		unsigned off = bit & 7;
		unsigned take = 8 - off < end - bit ? 8 - off : end - bit;
		unsigned chunk = ((unsigned)p[bit >> 3] >> (8 - off - take)) & ((1u << take) - 1);

		v = (v << take) | chunk;
		bit += take;
	}
	return v;
}

/* Bits of `v` above `bits` are ignored; neighbouring bits are preserved. */
static inline void ib_bits_put(uint8_t *p, unsigned bit, unsigned bits, uint64_t v)
{
	unsigned end = bit + bits;

	while (bit < end) {
		unsigned off = bit & 7;
		unsigned take = 8 - off < end - bit ? 8 - off : end - bit;
		unsigned shift = 8 - off - take;
		unsigned mask = ((1u << take) - 1) << shift;
		unsigned chunk = (unsigned)(v >> (end - bit - take)) << shift;

		p[bit >> 3] = (uint8_t)((p[bit >> 3] & ~mask) | (chunk & mask));
		bit += take;
	}
}

/* A layout struct's member of `size` bytes (1, 2, 4 or 8), read or written
 * as an unsigned value; memcpy keeps it alignment-safe. */
static inline uint64_t ib_member_load(const void *m, unsigned size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, m, 1);
		return u8;
	case 2:
		memcpy(&u16, m, 2);
		return u16;
	case 4:
		memcpy(&u32, m, 4);
		return u32;
	case 8:
		memcpy(&u64, m, 8);
		return u64;
	}
	return 0;
}

static inline void ib_member_store(void *m, unsigned size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(m, &u8, 1);
		break;
	case 2:
		memcpy(m, &u16, 2);
		break;
	case 4:
		memcpy(m, &u32, 4);
		break;
	case 8:
		memcpy(m, &v, 8);
		break;
	}
}

/* Defines ib_<name>_encode/_decode over the table ib_<name>_desc. */
#define IB_LAYOUT_CODEC(name)                                                                      \
	void ib_##name##_encode(const struct ib_##name *h, uint8_t *p)                             \
	{                                                                                          \
		ib_desc_encode(&ib_##name##_desc, h, p);                                           \
	}                                                                                          \
	void ib_##name##_decode(struct ib_##name *h, const uint8_t *p)                             \
	{                                                                                          \
		ib_desc_decode(&ib_##name##_desc, h, p);                                           \
	}

/*
 * Table-driven encode/decode over a struct ib_header_desc (wire/headers.h).
 * Fields up to 64 bits live in a uint8/16/32/64_t member; wider fields are
 * byte-aligned byte arrays (GIDs, private data) copied verbatim in wire order.
 * Encode writes exactly desc->bytes bytes, reserved bits as zero; decode
 * reads exactly that many.
 */
void ib_desc_encode(const struct ib_header_desc *desc, const void *s, uint8_t *p);
void ib_desc_decode(const struct ib_header_desc *desc, void *s, const uint8_t *p);

#endif

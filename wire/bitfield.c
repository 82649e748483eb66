/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Generic encode/decode driven by a field table: one description per layout,
 * two views of it (STYLE.md).
 */
#include <string.h>

#include "wire/bitfield.h"
#include "wire/headers.h"

static uint64_t member_load(const uint8_t *m, unsigned size)
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

static void member_store(uint8_t *m, unsigned size, uint64_t v)
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

void ib_desc_encode(const struct ib_header_desc *desc, const void *s, uint8_t *p)
{
	const uint8_t *base = s;

	memset(p, 0, desc->bytes);
	for (unsigned i = 0; i < desc->nfields; i++) {
		const struct ib_field_desc *f = &desc->fields[i];

		if (f->bits > 64)
			memcpy(p + f->bit / 8, base + f->offset, f->bits / 8);
		else
			ib_bits_put(p, f->bit, f->bits, member_load(base + f->offset, f->size));
	}
}

void ib_desc_decode(const struct ib_header_desc *desc, void *s, const uint8_t *p)
{
	uint8_t *base = s;

	for (unsigned i = 0; i < desc->nfields; i++) {
		const struct ib_field_desc *f = &desc->fields[i];

		if (f->bits > 64)
			memcpy(base + f->offset, p + f->bit / 8, f->bits / 8);
		else
			member_store(base + f->offset, f->size, ib_bits_get(p, f->bit, f->bits));
	}
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Generic encode/decode driven by a field table: one description per layout,
 * two views of it (STYLE.md).
 */
#include <string.h>

#include "wire/bitfield.h"
#include "wire/headers.h"

void ib_desc_encode(const struct ib_header_desc *desc, const void *s, uint8_t *p)
{
	const uint8_t *base = s;

	memset(p, 0, desc->bytes);
	for (unsigned i = 0; i < desc->nfields; i++) {
		const struct ib_field_desc *f = &desc->fields[i];

		if (f->bits > 64)
			memcpy(p + f->bit / 8, base + f->offset, f->bits / 8);
		else
			ib_bits_put(p, f->bit, f->bits, ib_member_load(base + f->offset, f->size));
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
			ib_member_store(base + f->offset, f->size, ib_bits_get(p, f->bit, f->bits));
	}
}

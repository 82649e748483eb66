/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * VCRC CRC-16, portable path: slicing-by-16.  T[k][v] is the register
 * contribution of byte v followed by k zero bytes, so 16 bytes cost 16
 * independent lookups.  The tables are filled once at load time (wire/ does
 * not allocate; they are static).
 */
#include "wire/crc_impl.h"

static uint16_t crc16_slice[16][256];

void ib_crc16_table_init(void)
{
	for (unsigned int v = 0; v < 256; v++) {
		uint16_t r = v;

		for (int i = 0; i < 8; i++)
			r = (r >> 1) ^ (IB_CRC16_POLY_REFL & -(r & 1u));
		crc16_slice[0][v] = r;
	}
	for (int k = 1; k < 16; k++)
		for (unsigned int v = 0; v < 256; v++) {
			uint16_t r = crc16_slice[k - 1][v];

			crc16_slice[k][v] = (r >> 8) ^ crc16_slice[0][r & 0xff];
		}
}

uint16_t ib_crc16_table_update(uint16_t reg, const uint8_t *p, size_t len)
{
	uint16_t (*t)[256] = crc16_slice;

	while (len >= 16) {
		/* A 16-bit register only reaches the first two bytes. */
		reg = t[15][p[0] ^ (reg & 0xff)] ^ t[14][p[1] ^ (reg >> 8)] ^ t[13][p[2]] ^
		      t[12][p[3]] ^ t[11][p[4]] ^ t[10][p[5]] ^ t[9][p[6]] ^ t[8][p[7]] ^
		      t[7][p[8]] ^ t[6][p[9]] ^ t[5][p[10]] ^ t[4][p[11]] ^ t[3][p[12]] ^
		      t[2][p[13]] ^ t[1][p[14]] ^ t[0][p[15]];
		p += 16;
		len -= 16;
	}
	/* The last 15 bytes (an ACK's VCRC is mostly tail, here and after the
	 * clmul folds) by 8 and 4 at once, as above with fewer tables. */
	if (len >= 8) {
		reg = t[7][p[0] ^ (reg & 0xff)] ^ t[6][p[1] ^ (reg >> 8)] ^ t[5][p[2]] ^
		      t[4][p[3]] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		reg = t[3][p[0] ^ (reg & 0xff)] ^ t[2][p[1] ^ (reg >> 8)] ^ t[1][p[2]] ^ t[0][p[3]];
		p += 4;
		len -= 4;
	}
	while (len--)
		reg = (reg >> 8) ^ t[0][(reg ^ *p++) & 0xff];
	return reg;
}

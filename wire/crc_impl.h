/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Inside the CRC-16 (VCRC) code: the two implementations behind ib_crc16()
 * and the switch between them.  Not part of the wire/ API; tests and the
 * benchmark use it to run each implementation on purpose.
 *
 * The *_update functions work on the raw CRC register: no inversion on the
 * way in or out (ib_crc16 does init 0xFFFF / xorout 0xFFFF around them).
 */
#ifndef SIB_WIRE_CRC_IMPL_H
#define SIB_WIRE_CRC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reflected form of the VCRC polynomial x^16 + x^12 + x^3 + x + 1 (IBA 7.8.2). */
#define IB_CRC16_POLY_REFL 0xD008u

typedef uint16_t ib_crc16_update_fn(uint16_t reg, const uint8_t *p, size_t len);

/* Slicing-by-16 tables: portable, any CPU. */
void ib_crc16_table_init(void);
uint16_t ib_crc16_table_update(uint16_t reg, const uint8_t *p, size_t len);

/* Carry-less multiplication folding (PCLMULQDQ).  encoding "sse" or "avx"
 * (VEX), or NULL for the best here; NULL when the CPU lacks it. */
void ib_crc16_clmul_init(void);
ib_crc16_update_fn *ib_crc16_clmul(const char *encoding);

/* Selects the implementation ib_crc16() uses: "table", "pclmul" (the best
 * encoding here), "pclmul-sse", "pclmul-avx", or NULL for the best this CPU
 * has.  Returns 0, or -1 (nothing changed) when the name is unknown or the
 * CPU lacks it.  ib_crc16_impl() names the family ("pclmul" or "table"). */
int ib_crc16_force_impl(const char *name);

#endif

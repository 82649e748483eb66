/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The two InfiniBand CRCs (IBA Vol 1 7.8).
 *
 * ICRC: CRC-32 as Ethernet and zlib use it, over LRH..payload+pad with the
 * variant fields masked to ones.  VCRC: CRC-16, polynomial 0x100B, over
 * LRH..ICRC unmasked.  Both are stored least significant byte first.
 */
#ifndef SIB_WIRE_CRC_H
#define SIB_WIRE_CRC_H

#include <stddef.h>
#include <stdint.h>

/* Plain CRCs, chainable like zlib: ib_crc32(0, "123456789", 9) == 0xCBF43926,
 * ib_crc16(0, "123456789", 9) == 0x0A3D. */
uint32_t ib_crc32(uint32_t crc, const void *buf, size_t len);
uint16_t ib_crc16(uint16_t crc, const void *buf, size_t len);

/* Bitwise reference implementations, for tests and the portable fallback's
 * own checks. */
uint32_t ib_crc32_ref(uint32_t crc, const void *buf, size_t len);
uint16_t ib_crc16_ref(uint16_t crc, const void *buf, size_t len);

/* The ICRC of pkt[0 .. len-6) with the IBA masks applied (local or global
 * per LRH.LNH).  `len` is the whole packet length including ICRC and VCRC.
 * Safe for any len: bytes not present are not read. */
uint32_t ib_icrc(const uint8_t *pkt, size_t len);

/* The VCRC of pkt[0 .. len-2). */
uint16_t ib_vcrc(const uint8_t *pkt, size_t len);

/* Both at once, in one pass where the implementation can.  *vcrc covers the
 * ICRC bytes as *icrc will be stored (so a sender seals with one call); it
 * equals ib_vcrc(pkt, len) whenever the carried ICRC is *icrc.  For len < 6
 * the results are those of ib_icrc and ib_vcrc. */
void ib_crcs(const uint8_t *pkt, size_t len, uint32_t *icrc, uint16_t *vcrc);

/* ib_crcs of a packet held in pieces: hdr[0..hdr_len) (all its headers,
 * so every masked field), body[0..body_len) (the payload), pad_len zero
 * bytes, then the 6 CRC bytes. */
void ib_crcs_split(const uint8_t *hdr, size_t hdr_len, const uint8_t *body, size_t body_len,
		   size_t pad_len, uint32_t *icrc, uint16_t *vcrc);

/* Reads/writes the carried values (LSB first) at the end of a packet. */
uint32_t ib_icrc_get(const uint8_t *pkt, size_t len);
uint16_t ib_vcrc_get(const uint8_t *pkt, size_t len);
void ib_icrc_put(uint8_t *pkt, size_t len, uint32_t icrc);
void ib_vcrc_put(uint8_t *pkt, size_t len, uint16_t vcrc);

/* Which VCRC implementation runs here ("pclmul" or "table"), for bench output. */
const char *ib_crc16_impl(void);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ICRC and VCRC (IBA Vol 1 7.8): which bytes each covers, the ICRC's masks,
 * and the choice of CRC-16 implementation.
 */
#include <string.h>

#include <isa-l/crc.h>

#include "wire/crc.h"
#include "wire/crc_impl.h"
#include "wire/headers.h"

/*
 * ISA-L's crc32_gzip_refl is CRC-32/ISO-HDLC (reflected 0xEDB88320) with the
 * zlib calling convention: the argument is a previous *final* CRC (0 to
 * start), inverted on entry and on exit, so crc32_gzip_refl(0, "123456789", 9)
 * == 0xCBF43926 and calls chain like zlib's crc32() (checked by the tests).
 */
uint32_t ib_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t ib_crc32_ref(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t r = ~crc;

	while (len--) {
		r ^= *p++;
		for (int i = 0; i < 8; i++)
			r = (r >> 1) ^ (0xEDB88320u & -(r & 1u));
	}
	return ~r;
}

uint16_t ib_crc16_ref(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint16_t r = ~crc;

	while (len--) {
		r ^= *p++;
		for (int i = 0; i < 8; i++)
			r = (r >> 1) ^ (IB_CRC16_POLY_REFL & -(r & 1u));
	}
	return ~r;
}

/* ---------------------------------------------------------------- CRC-16 */

static ib_crc16_update_fn *crc16_update;
static const char *crc16_name = "table";

static void crc16_use(ib_crc16_update_fn *fn)
{
	crc16_update = fn;
	crc16_name = fn == ib_crc16_table_update ? "table" : "pclmul";
}

static void crc16_select_best(void)
{
	ib_crc16_update_fn *fn = ib_crc16_clmul(NULL);

	crc16_use(fn ? fn : ib_crc16_table_update);
}

/* Tables and fold constants are static data filled before main(). */
__attribute__((constructor)) static void crc16_init(void)
{
	ib_crc16_table_init();
	ib_crc16_clmul_init();
	crc16_select_best();
}

int ib_crc16_force_impl(const char *name)
{
	ib_crc16_update_fn *fn = NULL;

	if (!crc16_update)
		crc16_init();
	if (!name) {
		crc16_select_best();
		return 0;
	}
	if (!strcmp(name, "table"))
		fn = ib_crc16_table_update;
	else if (!strcmp(name, "pclmul"))
		fn = ib_crc16_clmul(NULL);
	else if (!strncmp(name, "pclmul-", 7))
		fn = ib_crc16_clmul(name + 7);
	if (!fn)
		return -1;
	crc16_use(fn);
	return 0;
}

const char *ib_crc16_impl(void)
{
	if (!crc16_update)
		crc16_init();
	return crc16_name;
}

/* Init 0xFFFF and xorout 0xFFFF (IBA 7.8.2), chained like zlib. */
uint16_t ib_crc16(uint16_t crc, const void *buf, size_t len)
{
	/* Only a caller running before our constructor gets here unset. */
	if (__builtin_expect(!crc16_update, 0))
		crc16_init();
	return ~crc16_update(~crc, buf, len);
}

/* ---------------------------------------------------------------- ICRC/VCRC */

enum { ICRC_HEAD_MAX = IB_LRH_BYTES + IB_GRH_BYTES + IB_BTH_BYTES };

/*
 * The variant fields (IBA 7.8.1, C7-47/48) count as ones in the ICRC.
 * Local: LRH.VL and BTH.resv8a.  Global: the whole LRH, GRH TClass,
 * FlowLabel and HopLmt, and BTH.resv8a.  Any other LNH is treated as
 * local.  LNH is read when the packet (len) has it.
 */
static bool icrc_global(const uint8_t *pkt, size_t len)
{
	return len >= 2 && (pkt[1] & 3) == IB_LNH_IBA_GLOBAL;
}

/* How many of the first n bytes can hold variant fields. */
static size_t icrc_head_len(bool global, size_t n)
{
	size_t h = global ? ICRC_HEAD_MAX : IB_LRH_BYTES + IB_BTH_BYTES;

	return h > n ? n : h;
}

/* Sets the variant fields among head[0..h) to ones; head is a copy of the
 * packet's first bytes. */
static void icrc_mask(uint8_t *head, bool global, size_t h)
{
	size_t bth = global ? IB_LRH_BYTES + IB_GRH_BYTES : IB_LRH_BYTES;

	if (global) {
		for (size_t i = 0; i < IB_LRH_BYTES && i < h; i++)
			head[i] = 0xff;
		if (h > IB_LRH_BYTES)
			head[IB_LRH_BYTES] |= 0x0f; /* TClass high nibble */
		for (size_t i = IB_LRH_BYTES + 1; i < IB_LRH_BYTES + 4 && i < h; i++)
			head[i] = 0xff; /* TClass low nibble, FlowLabel */
		if (h > IB_LRH_BYTES + 7)
			head[IB_LRH_BYTES + 7] = 0xff; /* HopLmt */
	} else if (h > 0) {
		head[0] |= 0xf0; /* VL */
	}
	if (h > bth + 4)
		head[bth + 4] = 0xff; /* resv8a (FECN/BECN in IBA 1.3) */
}

/* Copies the first bytes of pkt[0..n) that can hold variant fields into
 * head, masked; returns how many bytes were copied. */
static size_t icrc_masked_head(const uint8_t *pkt, size_t len, size_t n,
			       uint8_t head[ICRC_HEAD_MAX])
{
	bool global = icrc_global(pkt, len);
	size_t h = icrc_head_len(global, n);

	memcpy(head, pkt, h);
	icrc_mask(head, global, h);
	return h;
}

/* Bytes covered by the ICRC: all but ICRC and VCRC. */
static size_t icrc_span(size_t len)
{
	return len > IB_ICRC_BYTES + IB_VCRC_BYTES ? len - IB_ICRC_BYTES - IB_VCRC_BYTES : 0;
}

/* Packets up to this long (ACKs, small sends) are masked in one copy and
 * take one CRC call: the call's fixed cost is most of their ICRC. */
enum { ICRC_SMALL = 128 };

uint32_t ib_icrc(const uint8_t *pkt, size_t len)
{
	uint8_t head[ICRC_HEAD_MAX];
	size_t n = icrc_span(len), h;

	if (n <= ICRC_SMALL) {
		uint8_t copy[ICRC_SMALL];
		bool global = icrc_global(pkt, len);

		memcpy(copy, pkt, n);
		icrc_mask(copy, global, icrc_head_len(global, n));
		return ib_crc32(0, copy, n);
	}
	h = icrc_masked_head(pkt, len, n, head);
	return ib_crc32(ib_crc32(0, head, h), pkt + h, n - h);
}

uint16_t ib_vcrc(const uint8_t *pkt, size_t len)
{
	return ib_crc16(0, pkt, len > IB_VCRC_BYTES ? len - IB_VCRC_BYTES : 0);
}

void ib_crcs(const uint8_t *pkt, size_t len, uint32_t *icrc, uint16_t *vcrc)
{
	uint8_t tail[IB_ICRC_BYTES];
	size_t n = icrc_span(len);
	uint32_t ic = ib_icrc(pkt, len);

	if (len < IB_ICRC_BYTES + IB_VCRC_BYTES) {
		*icrc = ic;
		*vcrc = ib_vcrc(pkt, len);
		return;
	}
	/* The VCRC runs over the ICRC as it will be stored, so a sender can
	 * seal with one call; equal to ib_vcrc() when the stored ICRC is ic. */
	for (int i = 0; i < IB_ICRC_BYTES; i++)
		tail[i] = ic >> (8 * i);
	*icrc = ic;
	*vcrc = ib_crc16(ib_crc16(0, pkt, n), tail, sizeof(tail));
}

void ib_crcs_split(const uint8_t *hdr, size_t hdr_len, const uint8_t *body, size_t body_len,
		   size_t pad_len, uint32_t *icrc, uint16_t *vcrc)
{
	static const uint8_t zeros[3]; /* IBA pads to a word: at most 3 bytes */
	uint8_t head[ICRC_HEAD_MAX], tail[IB_ICRC_BYTES];
	size_t len, h;
	uint32_t ic;
	uint16_t vc;

	if (pad_len > sizeof(zeros))
		pad_len = sizeof(zeros);
	len = hdr_len + body_len + pad_len + IB_ICRC_BYTES + IB_VCRC_BYTES;
	h = icrc_masked_head(hdr, len, hdr_len, head);
	ic = ib_crc32(0, head, h);
	ic = ib_crc32(ib_crc32(ib_crc32(ic, hdr + h, hdr_len - h), body, body_len), zeros, pad_len);
	for (int i = 0; i < IB_ICRC_BYTES; i++)
		tail[i] = ic >> (8 * i);
	vc = ib_crc16(ib_crc16(ib_crc16(0, hdr, hdr_len), body, body_len), zeros, pad_len);
	*icrc = ic;
	*vcrc = ib_crc16(vc, tail, sizeof(tail));
}

/* ---------------------------------------------------------------- carried values */

uint32_t ib_icrc_get(const uint8_t *pkt, size_t len)
{
	const uint8_t *p;

	if (len < IB_ICRC_BYTES + IB_VCRC_BYTES)
		return 0;
	p = pkt + len - IB_ICRC_BYTES - IB_VCRC_BYTES;
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint16_t ib_vcrc_get(const uint8_t *pkt, size_t len)
{
	if (len < IB_VCRC_BYTES)
		return 0;
	return pkt[len - 2] | pkt[len - 1] << 8;
}

void ib_icrc_put(uint8_t *pkt, size_t len, uint32_t icrc)
{
	uint8_t *p;

	if (len < IB_ICRC_BYTES + IB_VCRC_BYTES)
		return;
	p = pkt + len - IB_ICRC_BYTES - IB_VCRC_BYTES;
	for (int i = 0; i < IB_ICRC_BYTES; i++)
		p[i] = icrc >> (8 * i);
}

void ib_vcrc_put(uint8_t *pkt, size_t len, uint16_t vcrc)
{
	if (len < IB_VCRC_BYTES)
		return;
	pkt[len - 2] = vcrc;
	pkt[len - 1] = vcrc >> 8;
}

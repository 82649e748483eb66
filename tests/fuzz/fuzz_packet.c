/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * libFuzzer harness for the packet decoder.  Any input must decode without
 * touching memory outside it; an input that decodes OK must rebuild, from
 * its decoded fields alone, into a packet that decodes OK to the same
 * fields and payload.  Each input is tried twice: as given, and with its
 * ICRC and VCRC recomputed, so that mutations reach the checks behind the
 * CRCs instead of all dying at the VCRC.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/crc.h"
#include "wire/packet.h"

static void same_header(enum ib_hdr h, const void *a, const void *b)
{
	const struct ib_header_desc *d = ib_header_desc(h);

	for (unsigned i = 0; i < d->nfields; i++) {
		const struct ib_field_desc *f = &d->fields[i];

		if (f->bits == 128) {
			if (memcmp((const uint8_t *)a + f->offset, (const uint8_t *)b + f->offset, 16))
				abort();
		} else if (ib_field_get(a, f) != ib_field_get(b, f)) {
			abort();
		}
	}
}

static const void *header_of(const struct ib_packet *p, enum ib_hdr h)
{
	const void *s = ib_packet_header(p, h);

	if (!s)
		abort();
	return s;
}

static void check(const uint8_t *data, size_t size)
{
	static uint8_t out[IB_MAX_PACKET];
	struct ib_packet a, b, build;
	size_t len;

	if (ib_packet_decode(data, size, &a) != IB_PKT_OK)
		return;

	build = a;
	len = ib_packet_encode(&build, a.payload, a.payload_len, out, sizeof(out));
	if (len != size)
		abort();
	if (ib_packet_decode(out, len, &b) != IB_PKT_OK)
		abort();

	if (a.op != b.op || a.headers != b.headers || a.has_grh != b.has_grh ||
	    a.hdr_len != b.hdr_len || a.payload_len != b.payload_len)
		abort();
	if (memcmp(a.payload, b.payload, a.payload_len))
		abort();
	same_header(IB_HDR_LRH, &a.lrh, &b.lrh);
	if (a.has_grh)
		same_header(IB_HDR_GRH, &a.grh, &b.grh);
	same_header(IB_HDR_BTH, &a.bth, &b.bth);
	for (unsigned i = 0; i < ib_eth_order_count; i++) {
		enum ib_hdr h = ib_eth_order[i];

		if (a.headers & IB_HDRBIT(h))
			same_header(h, header_of(&a, h), header_of(&b, h));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	check(data, size);
	if (size < IB_ICRC_BYTES + IB_VCRC_BYTES || size > IB_MAX_PACKET)
		return 0;
	/* An exact-size copy keeps the sanitizer's bounds tight. */
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	ib_icrc_put(copy, size, ib_icrc(copy, size));
	ib_vcrc_put(copy, size, ib_vcrc(copy, size));
	check(copy, size);
	free(copy);
	return 0;
}

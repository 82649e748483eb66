/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * libFuzzer harness for the capture reader: any file must be walked to a
 * clean end or an error without touching memory outside it, every packet
 * it hands out must lie inside the input, and each packet then goes
 * through the packet decoder.  Whatever the input, one packet written with
 * the capture writer must read back unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/capture.h"
#include "wire/packet.h"

static void walk(const uint8_t *data, size_t size)
{
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	struct ib_packet pkt;
	int rc;

	if (ib_pcap_reader_init(&r, data, size))
		return;
	while ((rc = ib_pcap_next(&r, &rec)) == 1) {
		if (rec.skip)
			continue;
		if (rec.pkt < data || rec.len > size || rec.pkt + rec.len > data + size)
			abort();
		ib_packet_decode(rec.pkt, rec.len, &pkt);
	}
	if (rc < 0 && !r.err)
		abort();
}

static void roundtrip(const uint8_t *data, size_t size)
{
	static uint8_t file[IB_PCAP_FILE_HDR_BYTES + IB_PCAP_RECORD_HDR_BYTES + 8192];
	size_t len = size < 8192 ? size : 8192, off = 0;
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;

	ib_pcap_file_header(file);
	off += IB_PCAP_FILE_HDR_BYTES;
	if (!ib_pcap_record_header(file + off, (uint64_t)len * 1000003u, len))
		abort();
	off += IB_PCAP_RECORD_HDR_BYTES;
	memcpy(file + off, data, len);
	off += len;
	if (ib_pcap_reader_init(&r, file, off) || ib_pcap_next(&r, &rec) != 1 || rec.skip ||
	    rec.len != len || memcmp(rec.pkt, data, len) || ib_pcap_next(&r, &rec) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so an overread past the input is caught. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	walk(copy, size);
	free(copy);
	roundtrip(data, size);
	return 0;
}

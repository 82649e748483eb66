/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * wire/capture: what the writer emits reads back; the reader survives every
 * truncation and damaged length; and the real-hardware capture in
 * ../shared/data decodes packet by packet with both CRCs right.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/capture.h"
#include "wire/packet.h"

#include "skip.h"

/* ------------------------------------------------------------------ helpers */

struct file {
	uint8_t *buf;
	size_t len, cap;
};

static void file_add(struct file *f, const void *p, size_t n)
{
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2;
		f->buf = realloc(f->buf, f->cap);
		assert_non_null(f->buf);
	}
	memcpy(f->buf + f->len, p, n);
	f->len += n;
}

static void fill_pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* A file of three records: 0, 30 and 4200 packet bytes, ports 0, 1, 3. */
static const size_t sample_lens[] = { 0, 30, 4200 };
static const unsigned sample_ports[] = { 0, 1, 3 };
static const uint64_t sample_ts[] = { 0, 1210794488680434100ull, 4000000000123456789ull };

static struct file sample_file(void)
{
	struct file f = { 0 };
	uint8_t hdr[IB_PCAP_RECORD_HDR_BYTES], pkt[4200];

	ib_pcap_file_header(hdr);
	file_add(&f, hdr, IB_PCAP_FILE_HDR_BYTES);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ib_pcap_record_header_port(hdr, sample_ts[i], sample_lens[i],
							     sample_ports[i]),
				 IB_PCAP_RECORD_HDR_BYTES);
		file_add(&f, hdr, sizeof(hdr));
		fill_pattern(pkt, sample_lens[i], (uint8_t)i);
		file_add(&f, pkt, sample_lens[i]);
	}
	return f;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v, bool big)
{
	for (int i = 0; i < 4; i++)
		p[big ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *p, uint16_t v, bool big)
{
	p[big ? 1 : 0] = (uint8_t)v;
	p[big ? 0 : 1] = (uint8_t)(v >> 8);
}

/* A hand-made pcap header in either byte order. */
static void handmade_file_header(uint8_t out[24], uint32_t magic, bool big, uint32_t linktype)
{
	put32(out, magic, big);
	put16(out + 4, 2, big);
	put16(out + 6, 4, big);
	put32(out + 8, 0, big);
	put32(out + 12, 0, big);
	put32(out + 16, 65535, big);
	put32(out + 20, linktype, big);
}

static void handmade_record_header(uint8_t out[16], uint32_t sec, uint32_t frac, uint32_t incl,
				   uint32_t orig, bool big)
{
	put32(out, sec, big);
	put32(out + 4, frac, big);
	put32(out + 8, incl, big);
	put32(out + 12, orig, big);
}

/* ------------------------------------------------------------------ writer */

static void test_file_header_is_little_endian_us_erf(void **state)
{
	uint8_t h[IB_PCAP_FILE_HDR_BYTES];
	static const uint8_t want[] = { 0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0,
					0,    0,    0,    0,    0xff, 0xff, 0, 0, 197, 0, 0, 0 };
	(void)state;

	ib_pcap_file_header(h);
	assert_memory_equal(h, want, sizeof(want));
}

static void test_record_header_has_erf_type21_layout(void **state)
{
	uint8_t h[IB_PCAP_RECORD_HDR_BYTES];
	/* 1210794488.5 s: ERF fraction 0x80000000, pcap usec 500000. */
	uint64_t ts = 1210794488ull * 1000000000u + 500000000u;
	const uint8_t *erf = h + IB_PCAP_REC_HDR_BYTES;
	(void)state;

	assert_int_equal(ib_pcap_record_header(h, ts, 30), IB_PCAP_RECORD_HDR_BYTES);
	assert_int_equal(le32(h), 1210794488u);
	assert_int_equal(le32(h + 4), 500000u);
	assert_int_equal(le32(h + 8), 46u);  /* incl_len = 16 + 30 */
	assert_int_equal(le32(h + 12), 46u); /* orig_len */
	assert_int_equal(le32(erf), 0x80000000u);
	assert_int_equal(le32(erf + 4), 1210794488u);
	assert_int_equal(erf[8], 0x15);
	assert_int_equal(erf[9], 0x04);
	assert_int_equal(erf[10] << 8 | erf[11], 46); /* rlen, big-endian */
	assert_int_equal(erf[12] << 8 | erf[13], 0);  /* lctr */
	assert_int_equal(erf[14] << 8 | erf[15], 30); /* wlen, big-endian */

	assert_int_equal(ib_pcap_record_header_port(h, ts, 30, IB_PCAP_PORT_RECEIVED),
			 IB_PCAP_RECORD_HDR_BYTES);
	assert_int_equal(erf[9], 0x05);
}

static void test_record_header_refuses_packets_rlen_cannot_hold(void **state)
{
	uint8_t h[IB_PCAP_RECORD_HDR_BYTES];
	(void)state;

	assert_int_equal(ib_pcap_record_header(h, 0, IB_PCAP_MAX_PACKET), IB_PCAP_RECORD_HDR_BYTES);
	assert_int_equal(ib_pcap_record_header(h, 0, IB_PCAP_MAX_PACKET + 1), 0);
	assert_true((size_t)IB_PCAP_MAX_PACKET >= (size_t)IB_MAX_PACKET);
}

static void test_writer_output_reads_back(void **state)
{
	struct file f = sample_file();
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	uint8_t want[4200];
	(void)state;

	assert_int_equal(ib_pcap_reader_init(&r, f.buf, f.len), 0);
	assert_false(r.swapped);
	assert_false(r.nanosec);
	assert_int_equal(r.linktype, IB_PCAP_LINKTYPE_ERF);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ib_pcap_next(&r, &rec), 1);
		assert_int_equal(rec.frame, i + 1);
		assert_null(rec.skip);
		assert_int_equal(rec.len, sample_lens[i]);
		assert_int_equal(rec.orig_len, sample_lens[i]);
		assert_int_equal(rec.port, sample_ports[i]);
		/* The pcap header keeps microseconds. */
		assert_int_equal(rec.ts_ns, sample_ts[i] / 1000 * 1000);
		fill_pattern(want, sample_lens[i], (uint8_t)i);
		if (sample_lens[i])
			assert_memory_equal(rec.pkt, want, sample_lens[i]);
	}
	assert_int_equal(ib_pcap_next(&r, &rec), 0);
	assert_int_equal(ib_pcap_next(&r, &rec), 0);
	free(f.buf);
}

/* ------------------------------------------------------------------ reader */

static void test_reader_rejects_every_truncation(void **state)
{
	struct file f = sample_file();
	/* Record boundaries: where a cut leaves a complete, shorter file. */
	size_t ends[4], n_ends = 0, off = IB_PCAP_FILE_HDR_BYTES;
	(void)state;

	ends[n_ends++] = off;
	for (int i = 0; i < 3; i++) {
		off += IB_PCAP_RECORD_HDR_BYTES + sample_lens[i];
		ends[n_ends++] = off;
	}
	assert_int_equal(off, f.len);

	for (size_t cut = 0; cut < f.len; cut++) {
		/* An exact-size heap copy, so a sanitizer sees any overread. */
		uint8_t *b = malloc(cut ? cut : 1);
		struct ib_pcap_reader r;
		struct ib_pcap_record rec;
		int got = 0, rc, whole = -1;

		assert_non_null(b);
		memcpy(b, f.buf, cut);
		for (size_t e = 0; e < n_ends; e++)
			if (ends[e] == cut)
				whole = (int)e;
		if (cut < IB_PCAP_FILE_HDR_BYTES) {
			assert_int_equal(ib_pcap_reader_init(&r, b, cut), -1);
			assert_non_null(r.err);
			free(b);
			continue;
		}
		assert_int_equal(ib_pcap_reader_init(&r, b, cut), 0);
		while ((rc = ib_pcap_next(&r, &rec)) == 1) {
			assert_true(rec.pkt + rec.len <= b + cut);
			got++;
		}
		if (whole >= 0) {
			assert_int_equal(rc, 0);
			assert_int_equal(got, whole);
		} else {
			assert_int_equal(rc, -1);
			assert_non_null(r.err);
			assert_int_equal(ib_pcap_next(&r, &rec), -1); /* sticky */
		}
		free(b);
	}
	free(f.buf);
}

static void check_byte_order(uint32_t magic, bool big, uint64_t frac_unit)
{
	uint8_t file[24 + 16 + 16 + 6];
	uint8_t *erf = file + 40;
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;

	handmade_file_header(file, magic, big, IB_PCAP_LINKTYPE_ERF);
	handmade_record_header(file + 24, 7, 123, 22, 22, big);
	/* The ERF header's own byte orders do not follow the file's. */
	memset(erf, 0, 16);
	erf[8] = 21;
	erf[9] = 0x06;
	erf[11] = 22; /* rlen */
	erf[15] = 6;  /* wlen */
	memcpy(erf + 16, "\x01\x02\x03\x04\x05\x06", 6);

	assert_int_equal(ib_pcap_reader_init(&r, file, sizeof(file)), 0);
	assert_int_equal(r.swapped, big);
	assert_int_equal(r.nanosec, frac_unit == 1);
	assert_int_equal(r.snaplen, 65535);
	assert_int_equal(ib_pcap_next(&r, &rec), 1);
	assert_null(rec.skip);
	assert_int_equal(rec.ts_ns, 7 * 1000000000ull + 123 * frac_unit);
	assert_int_equal(rec.len, 6);
	assert_int_equal(rec.port, 2);
	assert_memory_equal(rec.pkt, "\x01\x02\x03\x04\x05\x06", 6);
	assert_int_equal(ib_pcap_next(&r, &rec), 0);
}

static void test_reader_accepts_both_byte_orders_and_ns_magic(void **state)
{
	(void)state;
	check_byte_order(0xa1b2c3d4, false, 1000);
	check_byte_order(0xa1b2c3d4, true, 1000);
	check_byte_order(0xa1b23c4d, false, 1);
	check_byte_order(0xa1b23c4d, true, 1);
}

static void test_reader_reads_linktype_247_records_raw(void **state)
{
	uint8_t file[24 + 16 + 5];
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	(void)state;

	handmade_file_header(file, 0xa1b2c3d4, true, IB_PCAP_LINKTYPE_INFINIBAND);
	handmade_record_header(file + 24, 1, 2, 5, 9, true);
	memcpy(file + 40, "abcde", 5);
	assert_int_equal(ib_pcap_reader_init(&r, file, sizeof(file)), 0);
	assert_int_equal(ib_pcap_next(&r, &rec), 1);
	assert_ptr_equal(rec.pkt, file + 40);
	assert_int_equal(rec.len, 5);
	assert_int_equal(rec.orig_len, 9);
	assert_int_equal(ib_pcap_next(&r, &rec), 0);
}

static void test_reader_names_what_is_wrong_with_a_file_header(void **state)
{
	uint8_t h[24];
	struct ib_pcap_reader r;
	(void)state;

	handmade_file_header(h, 0xa1b2c3d4, false, 1); /* Ethernet */
	assert_int_equal(ib_pcap_reader_init(&r, h, sizeof(h)), -1);
	assert_non_null(strstr(r.err, "link type"));

	handmade_file_header(h, 0x0a0d0d0a, false, 197);
	assert_int_equal(ib_pcap_reader_init(&r, h, sizeof(h)), -1);
	assert_non_null(strstr(r.err, "pcapng"));

	handmade_file_header(h, 0x12345678, false, 197);
	assert_int_equal(ib_pcap_reader_init(&r, h, sizeof(h)), -1);
	assert_non_null(strstr(r.err, "not a pcap"));

	handmade_file_header(h, 0xa1b2c3d4, false, 197);
	put16(h + 4, 3, false);
	assert_int_equal(ib_pcap_reader_init(&r, h, sizeof(h)), -1);
	assert_non_null(strstr(r.err, "version"));

	assert_int_equal(ib_pcap_reader_init(&r, NULL, 0), -1);
	assert_non_null(r.err);
}

static void test_reader_flags_erf_records_that_hold_no_ib_packet(void **state)
{
	uint8_t file[24 + (16 + 16 + 4) + (16 + 8) + (16 + 16 + 8 + 8 + 2) + (16 + 16 + 8)];
	uint8_t *p = file + 24;
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	(void)state;

	memset(file, 0, sizeof(file));
	handmade_file_header(file, 0xa1b2c3d4, false, IB_PCAP_LINKTYPE_ERF);
	/* 1: an Ethernet ERF record (type 2). */
	handmade_record_header(p, 0, 0, 20, 20, false);
	p[16 + 8] = 2;
	p[16 + 11] = 20;
	p += 16 + 20;
	/* 2: a record too short for an ERF header. */
	handmade_record_header(p, 0, 0, 8, 8, false);
	p += 16 + 8;
	/* 3: type 21 with two extension headers, then a 2-byte packet. */
	handmade_record_header(p, 0, 0, 34, 34, false);
	p[16 + 8] = 0x80 | 21;
	p[16 + 11] = 34;
	p[16 + 15] = 2;
	p[16 + 16] = 0x80; /* another extension header follows */
	p[16 + 32] = 0xab;
	p[16 + 33] = 0xcd;
	p += 16 + 34;
	/* 4: extension headers that claim to continue past the record. */
	handmade_record_header(p, 0, 0, 24, 24, false);
	p[16 + 8] = 0x80 | 21;
	p[16 + 11] = 24;
	p[16 + 16] = 0x80;
	p += 16 + 24;
	assert_int_equal(p - file, sizeof(file));

	assert_int_equal(ib_pcap_reader_init(&r, file, sizeof(file)), 0);
	assert_int_equal(ib_pcap_next(&r, &rec), 1);
	assert_non_null(strstr(rec.skip, "type 21"));
	assert_int_equal(ib_pcap_next(&r, &rec), 1);
	assert_non_null(rec.skip);
	assert_int_equal(ib_pcap_next(&r, &rec), 1);
	assert_null(rec.skip);
	assert_int_equal(rec.len, 2);
	assert_int_equal(rec.pkt[0], 0xab);
	assert_int_equal(ib_pcap_next(&r, &rec), 1);
	assert_non_null(strstr(rec.skip, "extension"));
	assert_int_equal(rec.frame, 4);
	assert_int_equal(ib_pcap_next(&r, &rec), 0);
}

static void test_reader_rejects_impossible_record_length(void **state)
{
	uint8_t file[24 + 16 + 8];
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	(void)state;

	memset(file, 0, sizeof(file));
	handmade_file_header(file, 0xa1b2c3d4, false, IB_PCAP_LINKTYPE_INFINIBAND);
	handmade_record_header(file + 24, 0, 0, 0xffffffffu, 8, false);
	assert_int_equal(ib_pcap_reader_init(&r, file, sizeof(file)), 0);
	assert_int_equal(ib_pcap_next(&r, &rec), -1);
	assert_non_null(strstr(r.err, "length"));
	assert_int_equal(ib_pcap_next(&r, &rec), -1);
}

/* Random record bodies behind a valid file header: the reader ends every
 * walk with 0 or -1, and every packet it returns lies inside the buffer. */
static void test_reader_survives_random_bytes(void **state)
{
	uint32_t x = 12345;
	(void)state;

	for (int iter = 0; iter < 3000; iter++) {
		size_t len = 24 + (size_t)(iter % 300);
		uint8_t *b = malloc(len);
		struct ib_pcap_reader r;
		struct ib_pcap_record rec;
		int rc, n = 0;

		assert_non_null(b);
		handmade_file_header(b, 0xa1b2c3d4, iter & 1,
				     iter & 2 ? IB_PCAP_LINKTYPE_ERF : IB_PCAP_LINKTYPE_INFINIBAND);
		for (size_t i = 24; i < len; i++) {
			x = x * 1103515245u + 12345u;
			/* Small lengths are likelier to land inside the buffer. */
			b[i] = (uint8_t)((x >> 16) & ((i % 4 == 0) ? 0x3f : 0xff));
		}
		assert_int_equal(ib_pcap_reader_init(&r, b, len), 0);
		while ((rc = ib_pcap_next(&r, &rec)) == 1) {
			if (!rec.skip)
				assert_true(rec.pkt >= b + 24 && rec.pkt + rec.len <= b + len);
			n++;
		}
		assert_true(rc == 0 || rc == -1);
		assert_true(n <= (int)len);
		free(b);
	}
}

/* ------------------------------------------------------------ real hardware */

struct hw {
	uint8_t *buf;
	size_t len;
};

static char hw_absent[4200]; /* why the capture is not loaded */

static int hw_setup(void **state)
{
	struct hw *hw;
	FILE *fp;
	long n;

	*state = NULL;
	fp = sib_hw_capture_open(hw_absent, sizeof(hw_absent));
	if (!fp)
		return 0;
	hw = calloc(1, sizeof(*hw));
	if (!hw || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET))
		goto fail;
	hw->len = (size_t)n;
	hw->buf = malloc(hw->len ? hw->len : 1);
	if (!hw->buf || fread(hw->buf, 1, hw->len, fp) != hw->len)
		goto fail;
	fclose(fp);
	*state = hw;
	return 0;
fail:
	fclose(fp);
	if (hw)
		free(hw->buf);
	free(hw);
	return -1;
}

static int hw_teardown(void **state)
{
	struct hw *hw = *state;

	if (hw)
		free(hw->buf);
	free(hw);
	return 0;
}

static struct hw *hw_or_skip(void **state)
{
	if (!*state)
		sib_skip("%s", hw_absent);
	return *state;
}

/* Decodes frame `frame` of the capture into *pkt; returns the verdict. */
static enum ib_pkt_err hw_frame(struct hw *hw, uint32_t frame, struct ib_packet *pkt,
				struct ib_pcap_record *rec)
{
	struct ib_pcap_reader r;

	assert_int_equal(ib_pcap_reader_init(&r, hw->buf, hw->len), 0);
	while (ib_pcap_next(&r, rec) == 1)
		if (rec->frame == frame)
			return ib_packet_decode(rec->pkt, rec->len, pkt);
	fail_msg("frame %u not in the capture", frame);
	return IB_PKT_ERR_COUNT;
}

static void test_hw_capture_all_43_packets_decode_with_both_crcs(void **state)
{
	struct hw *hw = hw_or_skip(state);
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	unsigned n = 0, grh = 0;

	assert_int_equal(ib_pcap_reader_init(&r, hw->buf, hw->len), 0);
	assert_int_equal(r.linktype, IB_PCAP_LINKTYPE_ERF);
	while (ib_pcap_next(&r, &rec) == 1) {
		struct ib_packet pkt;
		enum ib_pkt_err err;

		assert_null(rec.skip);
		assert_int_equal(rec.len, rec.orig_len);
		err = ib_packet_decode(rec.pkt, rec.len, &pkt);
		if (err != IB_PKT_OK)
			fail_msg("frame %u: %s", rec.frame, ib_pkt_err_str(err));
		assert_int_equal(pkt.icrc_calc, pkt.ICRC);
		assert_int_equal(pkt.vcrc_calc, pkt.VCRC);
		grh += pkt.has_grh;
		n++;
	}
	assert_null(r.err);
	assert_int_equal(n, 43);
	assert_int_equal(grh, 6); /* research note: 6 GRH packets */
}

static void test_hw_frame5_ud_grh_fields(void **state)
{
	struct hw *hw = hw_or_skip(state);
	struct ib_pcap_record rec;
	struct ib_packet pkt;
	/* fe80::2:c902:24:f636 and ff12:401b:ffff::ffff:ffff */
	static const uint8_t sgid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					  0, 0x02, 0xc9, 0x02, 0x00, 0x24, 0xf6, 0x36 };
	static const uint8_t dgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					  0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

	assert_int_equal(hw_frame(hw, 5, &pkt, &rec), IB_PKT_OK);
	assert_int_equal(rec.len, 134);
	assert_int_equal(pkt.lrh.VL, 0);
	assert_int_equal(pkt.lrh.LVer, 0);
	assert_int_equal(pkt.lrh.SL, 0);
	assert_int_equal(pkt.lrh.LNH, IB_LNH_IBA_GLOBAL);
	assert_int_equal(pkt.lrh.DLID, 49152);
	assert_int_equal(pkt.lrh.PktLen, 33);
	assert_int_equal(pkt.lrh.SLID, 4);
	assert_true(pkt.has_grh);
	assert_int_equal(pkt.grh.IPVer, 6);
	assert_int_equal(pkt.grh.TClass, 0);
	assert_int_equal(pkt.grh.FlowLabel, 0);
	assert_int_equal(pkt.grh.PayLen, 84);
	assert_int_equal(pkt.grh.NxtHdr, 27);
	assert_int_equal(pkt.grh.HopLmt, 0);
	assert_memory_equal(pkt.grh.SGID.raw, sgid, 16);
	assert_memory_equal(pkt.grh.DGID.raw, dgid, 16);
	assert_int_equal(pkt.bth.OpCode, 0x64);
	assert_non_null(pkt.op);
	assert_int_equal(pkt.bth.SE, 0);
	assert_int_equal(pkt.bth.M, 1);
	assert_int_equal(pkt.bth.PadCnt, 0);
	assert_int_equal(pkt.bth.TVer, 0);
	assert_int_equal(pkt.bth.P_Key, 0xffff);
	assert_int_equal(pkt.bth.DestQP, 0xffffff);
	assert_int_equal(pkt.bth.A, 0);
	assert_int_equal(pkt.bth.PSN, 8367);
	assert_true(pkt.headers & IB_HDRBIT(IB_HDR_DETH));
	assert_int_equal(pkt.deth.Q_Key, 0x00000b1b);
	assert_int_equal(pkt.deth.SrcQP, 0x000405);
	assert_int_equal(pkt.hdr_len, 8 + 40 + 12 + 8);
	assert_int_equal(pkt.payload_len, 134 - 68 - 6);
	assert_ptr_equal(pkt.payload, rec.pkt + 68);
	assert_int_equal(pkt.ICRC, 0xa8d66bbd);
	assert_int_equal(pkt.VCRC, 0x8388);
	assert_int_equal(pkt.icrc_calc, 0xa8d66bbd);
	assert_int_equal(pkt.vcrc_calc, 0x8388);
}

static void test_hw_frame11_rc_ack_fields(void **state)
{
	struct hw *hw = hw_or_skip(state);
	struct ib_pcap_record rec;
	struct ib_packet pkt;

	assert_int_equal(hw_frame(hw, 11, &pkt, &rec), IB_PKT_OK);
	assert_int_equal(rec.len, 30);
	assert_int_equal(pkt.lrh.LNH, IB_LNH_IBA_LOCAL);
	assert_false(pkt.has_grh);
	assert_int_equal(pkt.lrh.DLID, 4);
	assert_int_equal(pkt.lrh.SLID, 1);
	assert_int_equal(pkt.lrh.PktLen, 7);
	assert_int_equal(pkt.bth.OpCode, 0x11);
	assert_int_equal(pkt.bth.P_Key, 0xffff);
	assert_int_equal(pkt.bth.DestQP, 0x870408);
	assert_int_equal(pkt.bth.PSN, 13896277);
	assert_true(pkt.headers & IB_HDRBIT(IB_HDR_AETH));
	assert_int_equal(pkt.aeth.Syndrome, 31);
	assert_int_equal(ib_aeth_kind(pkt.aeth.Syndrome), IB_AETH_ACK);
	assert_int_equal(pkt.aeth.MSN, 1);
	assert_int_equal(pkt.payload_len, 0);
	assert_int_equal(pkt.ICRC, 0x505503a8);
	assert_int_equal(pkt.VCRC, 0x8130);
	assert_int_equal(pkt.icrc_calc, 0x505503a8);
	assert_int_equal(pkt.vcrc_calc, 0x8130);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_header_is_little_endian_us_erf),
		cmocka_unit_test(test_record_header_has_erf_type21_layout),
		cmocka_unit_test(test_record_header_refuses_packets_rlen_cannot_hold),
		cmocka_unit_test(test_writer_output_reads_back),
		cmocka_unit_test(test_reader_rejects_every_truncation),
		cmocka_unit_test(test_reader_accepts_both_byte_orders_and_ns_magic),
		cmocka_unit_test(test_reader_reads_linktype_247_records_raw),
		cmocka_unit_test(test_reader_names_what_is_wrong_with_a_file_header),
		cmocka_unit_test(test_reader_flags_erf_records_that_hold_no_ib_packet),
		cmocka_unit_test(test_reader_rejects_impossible_record_length),
		cmocka_unit_test(test_reader_survives_random_bytes),
		cmocka_unit_test_setup_teardown(test_hw_capture_all_43_packets_decode_with_both_crcs,
						hw_setup, hw_teardown),
		cmocka_unit_test_setup_teardown(test_hw_frame5_ud_grh_fields, hw_setup,
						hw_teardown),
		cmocka_unit_test_setup_teardown(test_hw_frame11_rc_ack_fields, hw_setup,
						hw_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pcap with ERF type 21 records: the writer's header bytes and a bounds-
 * checked reader.  Layouts: pcap (tcpdump.org pcap-savefile(5)); ERF (Endace
 * ERF types reference: type 21 INFINIBAND, 16-byte header, ts little-endian,
 * everything else big-endian).
 */
#include "wire/capture.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAPNG_MAGIC 0x0a0d0d0au
#define PCAP_VERSION_MAJOR 2
#define PCAP_VERSION_MINOR 4

/* ERF header: ts(8, LE) type(1) flags(1) rlen(2) lctr(2) wlen(2), BE. */
#define ERF_TYPE_MASK 0x7f
#define ERF_TYPE_EXT 0x80  /* extension headers follow the 16 bytes */
#define ERF_EXT_MORE 0x80  /* in an extension header: another one follows */
#define ERF_EXT_BYTES 8
#define ERF_FLAG_VLEN 0x04 /* varying-length record */
#define ERF_FLAG_PORT 0x03

/* Wireshark's own ceiling on a record (WTAP_MAX_PACKET_SIZE_STANDARD); a
 * larger incl_len means a damaged file, not a big packet. */
#define PCAP_MAX_RECORD 262144u

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t bswap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

void ib_pcap_file_header(uint8_t out[IB_PCAP_FILE_HDR_BYTES])
{
	put_le32(out, PCAP_MAGIC_US);
	put_le16(out + 4, PCAP_VERSION_MAJOR);
	put_le16(out + 6, PCAP_VERSION_MINOR);
	put_le32(out + 8, 0);  /* thiszone */
	put_le32(out + 12, 0); /* sigfigs */
	put_le32(out + 16, IB_PCAP_SNAPLEN);
	put_le32(out + 20, IB_PCAP_LINKTYPE_ERF);
}

size_t ib_pcap_record_header_port(uint8_t out[IB_PCAP_RECORD_HDR_BYTES], uint64_t ts_ns,
				  size_t pkt_len, unsigned port)
{
	uint64_t sec = ts_ns / 1000000000u;
	uint64_t ns = ts_ns % 1000000000u;
	/* ERF time is 32.32 fixed point; ns < 2^30, so ns << 32 fits. */
	uint64_t erf_ts = sec << 32 | ((ns << 32) / 1000000000u);
	uint32_t rec_len = (uint32_t)(IB_ERF_HDR_BYTES + pkt_len);
	uint8_t *erf = out + IB_PCAP_REC_HDR_BYTES;

	if (pkt_len > IB_PCAP_MAX_PACKET)
		return 0;

	put_le32(out, (uint32_t)sec);
	put_le32(out + 4, (uint32_t)(ns / 1000));
	put_le32(out + 8, rec_len);  /* incl_len */
	put_le32(out + 12, rec_len); /* orig_len */

	put_le32(erf, (uint32_t)erf_ts);
	put_le32(erf + 4, (uint32_t)(erf_ts >> 32));
	erf[8] = IB_ERF_TYPE_INFINIBAND;
	erf[9] = (uint8_t)(ERF_FLAG_VLEN | (port & ERF_FLAG_PORT));
	put_be16(erf + 10, (uint16_t)rec_len);
	put_be16(erf + 12, 0); /* lctr: nothing lost */
	put_be16(erf + 14, (uint16_t)pkt_len);
	return IB_PCAP_RECORD_HDR_BYTES;
}

size_t ib_pcap_record_header(uint8_t out[IB_PCAP_RECORD_HDR_BYTES], uint64_t ts_ns,
			     size_t pkt_len)
{
	return ib_pcap_record_header_port(out, ts_ns, pkt_len, IB_PCAP_PORT_SENT);
}

static uint32_t rd32(const struct ib_pcap_reader *r, const uint8_t *p)
{
	uint32_t v = get_le32(p);

	return r->swapped ? bswap32(v) : v;
}

static uint16_t rd16(const struct ib_pcap_reader *r, const uint8_t *p)
{
	uint16_t v = (uint16_t)(p[0] | p[1] << 8);

	return r->swapped ? (uint16_t)(v >> 8 | v << 8) : v;
}

static int fail(struct ib_pcap_reader *r, const char *why)
{
	r->err = why;
	r->off = r->len; /* sticky: nothing more is read */
	return -1;
}

int ib_pcap_reader_init(struct ib_pcap_reader *r, const uint8_t *buf, size_t len)
{
	uint32_t magic;

	*r = (struct ib_pcap_reader){ .buf = buf, .len = len };
	if (!buf || len < IB_PCAP_FILE_HDR_BYTES)
		return fail(r, "too short for a pcap file header (24 bytes)");

	magic = get_le32(buf);
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS) {
		r->swapped = false;
	} else if (bswap32(magic) == PCAP_MAGIC_US || bswap32(magic) == PCAP_MAGIC_NS) {
		r->swapped = true;
		magic = bswap32(magic);
	} else if (magic == PCAPNG_MAGIC) {
		return fail(r, "pcapng is not supported (convert with: editcap -F pcap IN OUT)");
	} else {
		return fail(r, "not a pcap file (unknown magic number)");
	}
	r->nanosec = magic == PCAP_MAGIC_NS;

	if (rd16(r, buf + 4) != PCAP_VERSION_MAJOR)
		return fail(r, "unsupported pcap version (major version is not 2)");
	r->snaplen = rd32(r, buf + 16);
	/* The low 16 bits are the link type; the rest hold FCS hints. */
	r->linktype = rd32(r, buf + 20) & 0xffff;
	if (r->linktype != IB_PCAP_LINKTYPE_ERF && r->linktype != IB_PCAP_LINKTYPE_INFINIBAND)
		return fail(r, "link type is neither ERF (197) nor InfiniBand (247)");
	r->off = IB_PCAP_FILE_HDR_BYTES;
	return 0;
}

/* Fills out->pkt from the ERF record rec[0..n): the ERF header, its
 * extension headers, then the packet. */
static void erf_record(const uint8_t *rec, size_t n, struct ib_pcap_record *out)
{
	size_t hdr = IB_ERF_HDR_BYTES, body;
	uint16_t rlen, wlen;
	uint8_t type;

	if (n < IB_ERF_HDR_BYTES) {
		out->skip = "ERF record shorter than its 16-byte header";
		return;
	}
	type = rec[8];
	out->port = rec[9] & ERF_FLAG_PORT;
	rlen = get_be16(rec + 10);
	wlen = get_be16(rec + 14);
	if ((type & ERF_TYPE_MASK) != IB_ERF_TYPE_INFINIBAND) {
		out->skip = "ERF record is not of type 21 (InfiniBand)";
		return;
	}
	if (type & ERF_TYPE_EXT) {
		/* Each extension header says whether another follows. */
		for (;;) {
			if (hdr + ERF_EXT_BYTES > n) {
				out->skip = "ERF extension headers run past the record";
				return;
			}
			hdr += ERF_EXT_BYTES;
			if (!(rec[hdr - ERF_EXT_BYTES] & ERF_EXT_MORE))
				break;
		}
	}
	/* rlen may be shorter than what pcap captured (padding) or longer
	 * (snaplen cut it); the packet is what both hold, up to wlen. */
	if (rlen < n)
		n = rlen;
	if (n < hdr) {
		out->skip = "ERF rlen shorter than the ERF headers";
		return;
	}
	body = n - hdr;
	if (body > wlen)
		body = wlen;
	out->pkt = rec + hdr;
	out->len = body;
	out->orig_len = wlen;
}

int ib_pcap_next(struct ib_pcap_reader *r, struct ib_pcap_record *out)
{
	const uint8_t *p;
	uint32_t incl, orig, sec, frac;

	if (r->err)
		return -1;
	if (r->off == r->len)
		return 0;
	if (r->len - r->off < IB_PCAP_REC_HDR_BYTES)
		return fail(r, "truncated pcap record header at end of file");
	p = r->buf + r->off;
	sec = rd32(r, p);
	frac = rd32(r, p + 4);
	incl = rd32(r, p + 8);
	orig = rd32(r, p + 12);
	if (incl > PCAP_MAX_RECORD)
		return fail(r, "pcap record length larger than any packet (damaged file)");
	if (incl > r->len - r->off - IB_PCAP_REC_HDR_BYTES)
		return fail(r, "truncated pcap record: file ends inside it");

	*out = (struct ib_pcap_record){
		.frame = ++r->frame,
		.ts_ns = (uint64_t)sec * 1000000000u + (uint64_t)frac * (r->nanosec ? 1 : 1000),
	};
	p += IB_PCAP_REC_HDR_BYTES;
	if (r->linktype == IB_PCAP_LINKTYPE_ERF) {
		erf_record(p, incl, out);
	} else {
		out->pkt = p;
		out->len = incl;
		out->orig_len = orig;
	}
	r->off += IB_PCAP_REC_HDR_BYTES + (size_t)incl;
	return 1;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Capture files: pcap holding bare InfiniBand packets (LRH first, VCRC last)
 * in the form Wireshark decodes without options: link type ERF (197), each
 * record a 16-byte ERF header of type 21 (INFINIBAND) and then the packet.
 * Not LINKTYPE_INFINIBAND (247): Wireshark has no code for it (its
 * wiretap/pcap-common.c maps no encapsulation to 247), while its own
 * sample capture of real hardware, infiniband.pcap, is ERF type 21.
 *
 * Pure: the writer fills header bytes, the reader walks a buffer the caller
 * has already loaded.  No I/O, no allocation.  The reader never reads outside
 * [buf, buf + len), whatever the file contains.
 */
#ifndef SIB_WIRE_CAPTURE_H
#define SIB_WIRE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	IB_PCAP_FILE_HDR_BYTES = 24,
	IB_PCAP_REC_HDR_BYTES = 16, /* the pcap record header alone */
	IB_ERF_HDR_BYTES = 16,
	/* What the writer puts before each packet: pcap record + ERF header. */
	IB_PCAP_RECORD_HDR_BYTES = IB_PCAP_REC_HDR_BYTES + IB_ERF_HDR_BYTES,

	IB_PCAP_LINKTYPE_ERF = 197,
	IB_PCAP_LINKTYPE_INFINIBAND = 247, /* raw IB, LRH first; tshark 4.0 cannot read it */
	IB_ERF_TYPE_INFINIBAND = 21,

	/* ERF rlen is 16 bits, so no record can be larger; also the snaplen we
	 * announce, comfortably above IB_MAX_PACKET + 16. */
	IB_PCAP_SNAPLEN = 65535,
	IB_PCAP_MAX_PACKET = IB_PCAP_SNAPLEN - IB_ERF_HDR_BYTES,
};

/* The 24-byte pcap file header: little-endian, microsecond timestamps,
 * snaplen IB_PCAP_SNAPLEN, link type ERF. */
void ib_pcap_file_header(uint8_t out[IB_PCAP_FILE_HDR_BYTES]);

/*
 * The 32 bytes that precede one packet of pkt_len bytes: pcap record header
 * (time ts_ns since the epoch, incl_len = orig_len = 16 + pkt_len) and ERF
 * header (same time, type 21, varying-length flag, rlen, wlen).  Write these,
 * then the packet itself.  Returns IB_PCAP_RECORD_HDR_BYTES, or 0 (nothing
 * written) when pkt_len exceeds IB_PCAP_MAX_PACKET.
 *
 * ib_pcap_record_header_port also sets the ERF capture interface (0..3),
 * which Wireshark shows as "Port A".."Port D": softib uses it for direction.
 */
size_t ib_pcap_record_header(uint8_t out[IB_PCAP_RECORD_HDR_BYTES], uint64_t ts_ns,
			     size_t pkt_len);
size_t ib_pcap_record_header_port(uint8_t out[IB_PCAP_RECORD_HDR_BYTES], uint64_t ts_ns,
				  size_t pkt_len, unsigned port);

/* ERF capture interface numbers softib writes.  DROPPED: dropped by
 * SOFTIB_FAULTS before it left (send) or after it arrived (receive). */
enum { IB_PCAP_PORT_SENT = 0, IB_PCAP_PORT_RECEIVED = 1, IB_PCAP_PORT_DROPPED = 2 };

/* One record as the reader found it. */
struct ib_pcap_record {
	uint32_t frame;	     /* 1 for the first record, as Wireshark numbers */
	uint64_t ts_ns;	     /* from the pcap record header */
	const uint8_t *pkt;  /* the IB packet (LRH first), into the buffer; NULL
			      * when `skip` is set */
	size_t len;	     /* bytes of the packet in the file */
	size_t orig_len;     /* bytes it had on the wire (ERF wlen, pcap orig_len) */
	uint8_t port;	     /* ERF capture interface, 0 for link type 247 */
	const char *skip;    /* non-NULL: the record holds no IB packet; why */
};

struct ib_pcap_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;	     /* next record header */
	bool swapped;	     /* file written big-endian */
	bool nanosec;	     /* timestamps in ns (magic 0xa1b23c4d) */
	uint32_t linktype;
	uint32_t snaplen;
	uint32_t frame;	     /* records returned so far */
	const char *err;     /* why init or the last ib_pcap_next failed */
};

/*
 * Checks the file header of buf[0..len) (either byte order, micro- or
 * nanosecond magic; link type 197 or 247).  Returns 0, or -1 with r->err
 * saying why ("not a pcap file", "link type 1 is not ERF (197) or
 * InfiniBand (247)", ...).  The buffer must outlive the reader.
 */
int ib_pcap_reader_init(struct ib_pcap_reader *r, const uint8_t *buf, size_t len);

/*
 * The next record: 1 and *out filled, 0 at a clean end of file, or -1 with
 * r->err saying why (a truncated record, an impossible length).  After -1
 * every further call returns -1.  An ERF record of another type (or too
 * short to hold an IB packet's ERF header) is returned with out->skip set.
 */
int ib_pcap_next(struct ib_pcap_reader *r, struct ib_pcap_record *out);

#endif

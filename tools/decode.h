/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib decode's parts that its drawings share: decode.c reads a capture
 * and decodes each record into one line; ladder.c (--svg) draws the
 * records as a ladder diagram, each arrow's tooltip that same line.
 */
#ifndef SIB_TOOLS_DECODE_H
#define SIB_TOOLS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/capture.h"
#include "wire/packet.h"

/* What softib_decode_record found in one capture record. */
struct softib_decoded {
	enum { SIB_REC_SKIPPED, SIB_REC_CABLE, SIB_REC_IB } kind;
	bool ok;	      /* softib decode counts it ok (else bad) */
	bool dropped;	      /* ERF port 2: SOFTIB_FAULTS dropped it, it never left */
	enum ib_pkt_err err;  /* SIB_REC_IB: the first rule broken, or IB_PKT_OK */
	bool fields;	      /* p is decoded (only a CRC may be wrong) */
	bool has_lrh;	      /* lrh is decoded (from p, or alone when !fields) */
	bool icrc_ok, vcrc_ok;
	struct ib_lrh lrh;
	struct ib_packet p;   /* its payload points into rec, or into a copy that
			       * the next call overwrites */
};

/*
 * Writes softib decode's line for rec to o, without the newline (frame
 * number, opcode, LIDs, QP, PSN, lengths, extended headers, MAD, CRC
 * verdicts, BAD: why, DROPPED), and fills *d.
 */
void softib_decode_record(FILE *o, const struct ib_pcap_record *rec, struct softib_decoded *d);

/* "PSN sequence error" for an AETH NAK code. */
const char *softib_nak_name(uint8_t code);

/* The whole file, malloc'ed; NULL with errno set on failure. */
uint8_t *softib_read_file(const char *path, size_t *len);

/*
 * ladder.c: draws the capture buf[0..len) (read from path, whose file
 * header ib_pcap_reader_init accepted) as an SVG ladder diagram on out.
 * Returns SIB_EXIT_OK, or SIB_EXIT_USAGE after a line on stderr when the
 * file is damaged part way (what came before it is still drawn).
 */
int softib_ladder_svg(FILE *out, const char *path, const uint8_t *buf, size_t len);

#endif

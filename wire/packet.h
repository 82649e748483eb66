/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * wire/: the InfiniBand packet formats (IBA Vol 1 chapters 5-9, 13-16):
 * every header, the opcode table, ICRC and VCRC, the validating decoder,
 * MAD layouts and capture files.  Pure functions, no I/O, no threads, no
 * allocation; wire/ may use base/ and nothing else.
 *
 * Whole packets: building one from a description, and the validating
 * decoder that every received datagram passes before anything trusts it.
 *
 * A packet here is what an IB wire carries: LRH first, VCRC last.  The
 * decoder never reads outside [buf, buf + len), whatever the bytes say.
 */
#ifndef SIB_WIRE_PACKET_H
#define SIB_WIRE_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/headers.h"
#include "wire/opcode.h"

/* Largest packet: LRH + GRH + BTH + biggest ETH set + 4096 payload + CRCs. */
enum { IB_MAX_MTU = 4096, IB_MAX_PACKET = 8 + 40 + 12 + 28 + 4 + 4 + 4096 + 4 + 2 + 8 };

/* Why a packet was rejected.  Checks run in this order; the first failure
 * is reported.  ib_pkt_err_str() gives a one-line reason for logs. */
enum ib_pkt_err {
	IB_PKT_OK = 0,
	IB_PKT_ERR_TOO_SHORT,	 /* shorter than LRH + BTH + ICRC + VCRC */
	IB_PKT_ERR_TOO_LONG,	 /* longer than any legal packet */
	IB_PKT_ERR_VCRC,	 /* VCRC does not match (checked first: link layer) */
	IB_PKT_ERR_LVER,	 /* LRH.LVer is not 0 */
	IB_PKT_ERR_LNH,		 /* LRH.LNH is raw (0 or 1): not an IBA transport packet */
	IB_PKT_ERR_PKTLEN,	 /* LRH.PktLen * 4 + 2 differs from the datagram length */
	IB_PKT_ERR_GRH_TRUNC,	 /* LNH says GRH but it does not fit */
	IB_PKT_ERR_GRH_IPVER,	 /* GRH.IPVer is not 6 */
	IB_PKT_ERR_GRH_NXTHDR,	 /* GRH.NxtHdr is not 0x1B (IBA transport) */
	IB_PKT_ERR_GRH_PAYLEN,	 /* GRH.PayLen differs from the bytes that follow the GRH */
	IB_PKT_ERR_TVER,	 /* BTH.TVer is not 0 */
	IB_PKT_ERR_OPCODE,	 /* BTH.OpCode is reserved or unknown */
	IB_PKT_ERR_HDR_TRUNC,	 /* the opcode's extended headers do not fit */
	IB_PKT_ERR_PAD,		 /* PadCnt larger than the payload, or nonzero where no payload may be */
	IB_PKT_ERR_PAYLOAD,	 /* payload on an opcode that carries none */
	IB_PKT_ERR_VL15,	 /* VL15 carries only subnet management (QP0) packets */
	IB_PKT_ERR_ICRC,	 /* ICRC does not match */
	IB_PKT_ERR_COUNT
};

const char *ib_pkt_err_str(enum ib_pkt_err err);  /* "ICRC mismatch" */
const char *ib_pkt_err_name(enum ib_pkt_err err); /* "ICRC" (short, for counters) */

/*
 * A decoded packet.  Header structs are valid only when carried: GRH when
 * has_grh, the others when IB_HDRBIT(h) is set in `headers`.
 */
struct ib_packet {
	struct ib_lrh lrh;
	bool has_grh;
	struct ib_grh grh;
	struct ib_bth bth;
	const struct ib_opcode_info *op; /* NULL when the opcode is unknown */
	uint32_t headers;		 /* IB_HDRBIT() of carried ETHs */
	struct ib_rdeth rdeth;
	struct ib_deth deth;
	struct ib_xrceth xrceth;
	struct ib_reth reth;
	struct ib_atomiceth atomiceth;
	struct ib_aeth aeth;
	struct ib_atomicacketh atomicacketh;
	struct ib_immdt immdt;
	struct ib_ieth ieth;
	struct ib_feth feth;

	uint32_t hdr_len;	/* bytes from the first LRH byte to the payload */
	const uint8_t *payload; /* into the decoded buffer; NULL when building */
	uint32_t payload_len;	/* payload bytes, pad excluded */
	uint32_t ICRC, VCRC;	/* as carried (VCRC in the low 16 bits) */
	uint32_t icrc_calc, vcrc_calc; /* as computed; set when checked */
};

/*
 * Decodes and validates buf[0..len).  Fills *pkt as far as decoding got
 * (so a tool can still show the fields of a bad packet) and returns the
 * first rule broken, or IB_PKT_OK.
 */
enum ib_pkt_err ib_packet_decode(const uint8_t *buf, size_t len, struct ib_packet *pkt);

/* The decoded struct of header h inside *p (struct ib_lrh for IB_HDR_LRH,
 * ...), or NULL for an unknown h.  Whether it is carried is the caller's
 * question (has_grh, headers). */
const void *ib_packet_header(const struct ib_packet *p, enum ib_hdr h);

/*
 * Building.  The caller fills lrh (VL, SL, LNH, DLID, SLID), grh when
 * LNH == IB_LNH_IBA_GLOBAL (TClass, FlowLabel, HopLmt, SGID, DGID), bth
 * (OpCode, SE, M, P_Key, DestQP, A, PSN) and the ETHs the opcode carries.
 * These functions compute LVer, PktLen, PadCnt, TVer, IPVer, NxtHdr and
 * PayLen, and write them back into *pkt.
 *
 * ib_packet_encode_headers writes the headers only and returns their length
 * (0 when cap is too small or the opcode unknown); the caller then places
 * payload_len bytes right after them and calls ib_packet_seal.
 */
size_t ib_packet_encode_headers(struct ib_packet *pkt, uint32_t payload_len, uint8_t *buf,
				size_t cap);

/* Zeroes the pad, writes ICRC and VCRC.  hdr_len and payload_len as above;
 * returns the total packet length. */
size_t ib_packet_seal(uint8_t *buf, size_t hdr_len, uint32_t payload_len);

/*
 * The same for a payload that stays where it is (sent straight from the
 * application's memory): the packet is buf[0..hdr_len), then
 * payload[0..payload_len), then the trailer this writes at buf + hdr_len
 * (pad, ICRC, VCRC).  Returns the trailer's length.
 */
size_t ib_packet_seal_split(uint8_t *buf, size_t hdr_len, const uint8_t *payload,
			    uint32_t payload_len);

/* Headers + payload copy + seal, in one call.  Returns the total length, or
 * 0 when it does not fit in cap. */
size_t ib_packet_encode(struct ib_packet *pkt, const void *payload, uint32_t payload_len,
			uint8_t *buf, size_t cap);

/*
 * The length of the packet that begins at buf, as its LRH says: PktLen
 * counts the LRH through the ICRC in 4-byte words, and the VCRC follows
 * (IBA 7.7.8).  0 when room cannot hold an LRH.  Nothing is checked but
 * the two bytes; the decoder judges the packet.
 */
static inline size_t ib_packet_len_from_lrh(const uint8_t *buf, size_t room)
{
	if (room < IB_LRH_BYTES)
		return 0;
	return (((size_t)buf[4] & 0x7) << 8 | buf[5]) * 4 + IB_VCRC_BYTES;
}

/* Total length of a packet with this header length and payload. */
static inline size_t ib_packet_len(size_t hdr_len, uint32_t payload_len)
{
	return hdr_len + ((payload_len + 3u) & ~3u) + 4 + 2;
}

#endif

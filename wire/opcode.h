/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The BTH opcode table (IBA Vol 1 9.2.1 and Table 38 "OpCode field"): for
 * each opcode, its name, transport, which extended headers it carries and
 * what kind of packet it is.  Every code path that needs to know where a
 * header is asks this table; nothing switches on opcodes to find one.
 */
#ifndef SIB_WIRE_OPCODE_H
#define SIB_WIRE_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/headers.h"

/* BTH.OpCode bits 7:5 */
enum ib_transport {
	IB_TRANSPORT_RC = 0,
	IB_TRANSPORT_UC = 1,
	IB_TRANSPORT_RD = 2,
	IB_TRANSPORT_UD = 3,
	IB_TRANSPORT_CNP = 4,
	IB_TRANSPORT_XRC = 5,
};

/* Header bits: 1u << enum ib_hdr (LRH/GRH/BTH are not listed per opcode). */
#define IB_HDRBIT(h) (1u << (h))

enum ib_op_flags {
	IB_OPF_REQUEST = 1u << 0,  /* sent by a requester */
	IB_OPF_RESPONSE = 1u << 1, /* sent by a responder (ACK, read response, atomic ACK) */
	IB_OPF_FIRST = 1u << 2,
	IB_OPF_MIDDLE = 1u << 3,
	IB_OPF_LAST = 1u << 4,
	IB_OPF_ONLY = IB_OPF_FIRST | IB_OPF_LAST,
	IB_OPF_PAYLOAD = 1u << 5, /* may carry a payload */
	IB_OPF_SEND = 1u << 6,
	IB_OPF_WRITE = 1u << 7,
	IB_OPF_READ = 1u << 8, /* read request or read response */
	IB_OPF_ATOMIC = 1u << 9,
	IB_OPF_IMM = 1u << 10,
	IB_OPF_INV = 1u << 11,
	IB_OPF_ACK = 1u << 12, /* Acknowledge or Atomic Acknowledge */
	IB_OPF_CNP = 1u << 13,
	IB_OPF_ATOMIC_WRITE = 1u << 14, /* IBA 1.5: 8 bytes stored at once, RETH-addressed */
	IB_OPF_FLUSH = 1u << 15,	/* IBA 1.5: make earlier writes visible / persistent */
};

/* Operation codes, BTH.OpCode bits 4:0 (the same for every transport). */
enum ib_op {
	IB_OP_SEND_FIRST = 0x00,
	IB_OP_SEND_MIDDLE = 0x01,
	IB_OP_SEND_LAST = 0x02,
	IB_OP_SEND_LAST_IMM = 0x03,
	IB_OP_SEND_ONLY = 0x04,
	IB_OP_SEND_ONLY_IMM = 0x05,
	IB_OP_WRITE_FIRST = 0x06,
	IB_OP_WRITE_MIDDLE = 0x07,
	IB_OP_WRITE_LAST = 0x08,
	IB_OP_WRITE_LAST_IMM = 0x09,
	IB_OP_WRITE_ONLY = 0x0a,
	IB_OP_WRITE_ONLY_IMM = 0x0b,
	IB_OP_READ_REQUEST = 0x0c,
	IB_OP_READ_RESPONSE_FIRST = 0x0d,
	IB_OP_READ_RESPONSE_MIDDLE = 0x0e,
	IB_OP_READ_RESPONSE_LAST = 0x0f,
	IB_OP_READ_RESPONSE_ONLY = 0x10,
	IB_OP_ACKNOWLEDGE = 0x11,
	IB_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	IB_OP_CMP_SWAP = 0x13,
	IB_OP_FETCH_ADD = 0x14,
	IB_OP_SEND_LAST_INV = 0x16,
	IB_OP_SEND_ONLY_INV = 0x17,
	IB_OP_FLUSH = 0x1c,	   /* IBA 1.5 */
	IB_OP_ATOMIC_WRITE = 0x1d, /* IBA 1.5 */
};

#define IB_OPCODE(transport, op) ((uint8_t)(((transport) << 5) | (op)))
#define IB_OPCODE_CNP 0x81

struct ib_opcode_info {
	const char *name;	/* IBA name, e.g. "RC SEND Only" */
	uint8_t opcode;
	uint8_t transport;	/* enum ib_transport */
	uint32_t headers;	/* IB_HDRBIT(IB_HDR_RETH) | ... */
	uint32_t flags;		/* enum ib_op_flags */
};

/* The entry for an opcode, or NULL when IBA reserves it (or we do not speak
 * it: RD is decoded for display only where the table has it). */
const struct ib_opcode_info *ib_opcode_info(uint8_t opcode);

/* Extended headers appear in this fixed order after the BTH (IBA 9.2). */
extern const enum ib_hdr ib_eth_order[];
extern const unsigned ib_eth_order_count;

/* Bytes of extended transport headers an opcode carries after the BTH. */
unsigned ib_opcode_eth_bytes(const struct ib_opcode_info *info);

/* Offset of header `hdr` from the start of the BTH, or -1 if not carried. */
int ib_opcode_hdr_offset(const struct ib_opcode_info *info, enum ib_hdr hdr);

#endif

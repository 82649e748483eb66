/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The opcode table (IBA Vol 1 9.2.1, "OpCode field", and the per-opcode
 * header lists of 9.2/9.3).  RC, UC, RD and XRC share one set of operations
 * (bits 4:0); each transport adds its own headers: RD puts RDETH on every
 * packet and DETH on requests, XRC puts XRCETH on requests only.
 */
#include "wire/opcode.h"

#define H(x) IB_HDRBIT(IB_HDR_##x)
#define F(x) IB_OPF_##x

#define REQ F(REQUEST)
#define RSP F(RESPONSE)
#define DATA F(PAYLOAD)

/* X(op, name, headers, flags): operations RC, UC, RD and XRC share. */
#define OPS_SEND_WRITE(X)                                                                          \
	X(SEND_FIRST, "SEND First", 0, REQ | F(SEND) | F(FIRST) | DATA)                            \
	X(SEND_MIDDLE, "SEND Middle", 0, REQ | F(SEND) | F(MIDDLE) | DATA)                         \
	X(SEND_LAST, "SEND Last", 0, REQ | F(SEND) | F(LAST) | DATA)                               \
	X(SEND_LAST_IMM, "SEND Last with Immediate", H(IMMDT),                                     \
	  REQ | F(SEND) | F(LAST) | DATA | F(IMM))                                                 \
	X(SEND_ONLY, "SEND Only", 0, REQ | F(SEND) | F(ONLY) | DATA)                               \
	X(SEND_ONLY_IMM, "SEND Only with Immediate", H(IMMDT),                                     \
	  REQ | F(SEND) | F(ONLY) | DATA | F(IMM))                                                 \
	X(WRITE_FIRST, "RDMA WRITE First", H(RETH), REQ | F(WRITE) | F(FIRST) | DATA)              \
	X(WRITE_MIDDLE, "RDMA WRITE Middle", 0, REQ | F(WRITE) | F(MIDDLE) | DATA)                 \
	X(WRITE_LAST, "RDMA WRITE Last", 0, REQ | F(WRITE) | F(LAST) | DATA)                       \
	X(WRITE_LAST_IMM, "RDMA WRITE Last with Immediate", H(IMMDT),                              \
	  REQ | F(WRITE) | F(LAST) | DATA | F(IMM))                                                \
	X(WRITE_ONLY, "RDMA WRITE Only", H(RETH), REQ | F(WRITE) | F(ONLY) | DATA)                 \
	X(WRITE_ONLY_IMM, "RDMA WRITE Only with Immediate", H(RETH) | H(IMMDT),                    \
	  REQ | F(WRITE) | F(ONLY) | DATA | F(IMM))

/* Reads and atomics (not on UC).  Single-packet operations, ACKs included,
 * are marked ONLY: each is a whole message (it counts once toward the MSN). */
#define OPS_READ_ATOMIC(X)                                                                         \
	X(READ_REQUEST, "RDMA READ Request", H(RETH), REQ | F(READ) | F(ONLY))                     \
	X(READ_RESPONSE_FIRST, "RDMA READ Response First", H(AETH),                                \
	  RSP | F(READ) | F(FIRST) | DATA)                                                         \
	X(READ_RESPONSE_MIDDLE, "RDMA READ Response Middle", 0, RSP | F(READ) | F(MIDDLE) | DATA)  \
	X(READ_RESPONSE_LAST, "RDMA READ Response Last", H(AETH), RSP | F(READ) | F(LAST) | DATA) \
	X(READ_RESPONSE_ONLY, "RDMA READ Response Only", H(AETH), RSP | F(READ) | F(ONLY) | DATA) \
	X(ACKNOWLEDGE, "Acknowledge", H(AETH), RSP | F(ACK) | F(ONLY))                             \
	X(ATOMIC_ACKNOWLEDGE, "Atomic Acknowledge", H(AETH) | H(ATOMICACKETH),                     \
	  RSP | F(ACK) | F(ATOMIC) | F(ONLY))                                                      \
	X(CMP_SWAP, "CmpSwap", H(ATOMICETH), REQ | F(ATOMIC) | F(ONLY))                            \
	X(FETCH_ADD, "FetchAdd", H(ATOMICETH), REQ | F(ATOMIC) | F(ONLY))

/* IBA 1.5 FLUSH (BTH, FETH, RETH) and ATOMIC WRITE (BTH, RETH, 8 bytes).
 * Each is answered by an RDMA READ Response Only with no payload and holds
 * a responder resource like a READ.  RC and XRC; RD has FLUSH too. */
#define OP_FLUSH(X) X(FLUSH, "FLUSH", H(FETH) | H(RETH), REQ | F(FLUSH) | F(ONLY))
#define OPS_IBA15(X)                                                                               \
	OP_FLUSH(X)                                                                                \
	X(ATOMIC_WRITE, "ATOMIC WRITE", H(RETH), REQ | F(ATOMIC_WRITE) | F(ONLY) | DATA)

/* SEND with Invalidate: RC and XRC only. */
#define OPS_INV(X)                                                                                 \
	X(SEND_LAST_INV, "SEND Last with Invalidate", H(IETH),                                     \
	  REQ | F(SEND) | F(LAST) | DATA | F(INV))                                                 \
	X(SEND_ONLY_INV, "SEND Only with Invalidate", H(IETH),                                     \
	  REQ | F(SEND) | F(ONLY) | DATA | F(INV))

#define ENTRY(T, PFX, REQ_HDRS, RSP_HDRS, op, NAME, HDRS, FLAGS)                                   \
	[IB_OPCODE(T, IB_OP_##op)] = {                                                             \
		.name = PFX NAME,                                                                  \
		.opcode = IB_OPCODE(T, IB_OP_##op),                                                \
		.transport = T,                                                                    \
		.headers = (HDRS) | (((FLAGS)&REQ) ? (REQ_HDRS) : (RSP_HDRS)),                     \
		.flags = (FLAGS),                                                                  \
	},

#define RC(op, n, h, f) ENTRY(IB_TRANSPORT_RC, "RC ", 0, 0, op, n, h, f)
#define UC(op, n, h, f) ENTRY(IB_TRANSPORT_UC, "UC ", 0, 0, op, n, h, f)
#define RD(op, n, h, f) ENTRY(IB_TRANSPORT_RD, "RD ", H(RDETH) | H(DETH), H(RDETH), op, n, h, f)
#define UD(op, n, h, f) ENTRY(IB_TRANSPORT_UD, "UD ", H(DETH), 0, op, n, h, f)
#define XRC(op, n, h, f) ENTRY(IB_TRANSPORT_XRC, "XRC ", H(XRCETH), 0, op, n, h, f)

static const struct ib_opcode_info opcode_table[256] = {
	OPS_SEND_WRITE(RC) OPS_READ_ATOMIC(RC) OPS_INV(RC) OPS_IBA15(RC)

	OPS_SEND_WRITE(UC)

	/* RD is decoded for display only; RESYNC (0x55) carries RDETH+DETH. */
	OPS_SEND_WRITE(RD) OPS_READ_ATOMIC(RD) OP_FLUSH(RD)
	[IB_OPCODE(IB_TRANSPORT_RD, 0x15)] = {
		.name = "RD RESYNC",
		.opcode = IB_OPCODE(IB_TRANSPORT_RD, 0x15),
		.transport = IB_TRANSPORT_RD,
		.headers = H(RDETH) | H(DETH),
		.flags = REQ | F(ONLY),
	},

	UD(SEND_ONLY, "SEND Only", 0, REQ | F(SEND) | F(ONLY) | DATA)
	UD(SEND_ONLY_IMM, "SEND Only with Immediate", H(IMMDT),
	   REQ | F(SEND) | F(ONLY) | DATA | F(IMM))

	/*
	 * Congestion notification: BTH only.  0x80 is the native IB CNP of
	 * Annex A10; 0x81 is the RoCEv2 CNP of Annex A17, which carries 16
	 * reserved bytes after the BTH.  Both may carry bytes here, so a CNP
	 * from either world decodes.
	 */
	[0x80] = {
		.name = "CNP",
		.opcode = 0x80,
		.transport = IB_TRANSPORT_CNP,
		.headers = 0,
		.flags = F(CNP) | F(ONLY) | DATA,
	},
	[IB_OPCODE_CNP] = {
		.name = "CNP",
		.opcode = IB_OPCODE_CNP,
		.transport = IB_TRANSPORT_CNP,
		.headers = 0,
		.flags = F(CNP) | F(ONLY) | DATA,
	},

	OPS_SEND_WRITE(XRC) OPS_READ_ATOMIC(XRC) OPS_INV(XRC) OPS_IBA15(XRC)
};

const struct ib_opcode_info *ib_opcode_info(uint8_t opcode)
{
	const struct ib_opcode_info *info = &opcode_table[opcode];

	return info->name ? info : NULL;
}

const enum ib_hdr ib_eth_order[] = {
	IB_HDR_RDETH, IB_HDR_DETH,	   IB_HDR_XRCETH, IB_HDR_FETH, IB_HDR_RETH, IB_HDR_ATOMICETH,
	IB_HDR_AETH,  IB_HDR_ATOMICACKETH, IB_HDR_IMMDT,  IB_HDR_IETH,
};
const unsigned ib_eth_order_count = sizeof(ib_eth_order) / sizeof(ib_eth_order[0]);

static const uint8_t hdr_bytes[IB_HDR_COUNT] = {
	[IB_HDR_LRH] = IB_LRH_BYTES,
	[IB_HDR_GRH] = IB_GRH_BYTES,
	[IB_HDR_BTH] = IB_BTH_BYTES,
	[IB_HDR_RDETH] = IB_RDETH_BYTES,
	[IB_HDR_DETH] = IB_DETH_BYTES,
	[IB_HDR_XRCETH] = IB_XRCETH_BYTES,
	[IB_HDR_RETH] = IB_RETH_BYTES,
	[IB_HDR_ATOMICETH] = IB_ATOMICETH_BYTES,
	[IB_HDR_AETH] = IB_AETH_BYTES,
	[IB_HDR_ATOMICACKETH] = IB_ATOMICACKETH_BYTES,
	[IB_HDR_IMMDT] = IB_IMMDT_BYTES,
	[IB_HDR_IETH] = IB_IETH_BYTES,
	[IB_HDR_FETH] = IB_FETH_BYTES,
};

unsigned ib_opcode_eth_bytes(const struct ib_opcode_info *info)
{
	uint32_t h;
	unsigned n = 0;

	if (!info)
		return 0;
	/* A sum needs no order: only the set bits, one or two (every packet
	 * is encoded and decoded through here). */
	h = info->headers & ~(IB_HDRBIT(IB_HDR_LRH) | IB_HDRBIT(IB_HDR_GRH) | IB_HDRBIT(IB_HDR_BTH));
	for (; h; h &= h - 1)
		n += hdr_bytes[__builtin_ctz(h)];
	return n;
}

int ib_opcode_hdr_offset(const struct ib_opcode_info *info, enum ib_hdr hdr)
{
	unsigned i, off = IB_BTH_BYTES;

	if (!info)
		return -1;
	if (hdr == IB_HDR_BTH)
		return 0;
	if ((unsigned)hdr >= IB_HDR_COUNT || !(info->headers & IB_HDRBIT(hdr)))
		return -1;
	for (i = 0; i < ib_eth_order_count && ib_eth_order[i] != hdr; i++)
		if (info->headers & IB_HDRBIT(ib_eth_order[i]))
			off += hdr_bytes[ib_eth_order[i]];
	return (int)off;
}

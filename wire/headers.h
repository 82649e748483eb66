/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * InfiniBand packet headers (IBA Vol 1 chapter 7 for LRH/GRH, chapter 9 for
 * BTH and the extended transport headers).  Struct fields carry the IBA names
 * so code and spec read alike.  Each header's layout is described once (a
 * field table in headers.c); encode, decode and field printing are views of
 * that one description.
 *
 * Everything here is pure: no I/O, no allocation.  Encoders write exactly
 * IB_*_BYTES bytes; decoders read exactly that many.  Callers check lengths.
 */
#ifndef SIB_WIRE_HEADERS_H
#define SIB_WIRE_HEADERS_H

#include <stddef.h>
#include <stdint.h>

enum {
	IB_LRH_BYTES = 8,
	IB_GRH_BYTES = 40,
	IB_BTH_BYTES = 12,
	IB_RDETH_BYTES = 4,
	IB_DETH_BYTES = 8,
	IB_XRCETH_BYTES = 4,
	IB_RETH_BYTES = 16,
	IB_ATOMICETH_BYTES = 28,
	IB_AETH_BYTES = 4,
	IB_ATOMICACKETH_BYTES = 8,
	IB_IMMDT_BYTES = 4,
	IB_IETH_BYTES = 4,
	IB_FETH_BYTES = 4,
	IB_ICRC_BYTES = 4,
	IB_VCRC_BYTES = 2,
};

/* LRH.LNH: what follows the LRH (IBA 7.7.3). */
enum ib_lnh {
	IB_LNH_RAW = 0,	 /* raw packet, non-IBA transport */
	IB_LNH_IPV6 = 1, /* raw IPv6 */
	IB_LNH_IBA_LOCAL = 2,
	IB_LNH_IBA_GLOBAL = 3,
};

enum { IB_GRH_NXTHDR_IBA = 0x1b, IB_GRH_IPVER = 6, IB_BTH_TVER = 0, IB_LRH_LVER = 0 };

union ib_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix; /* host order */
		uint64_t interface_id;	/* host order */
	} global;
};

struct ib_lrh {
	uint8_t VL;	 /* 4 bits */
	uint8_t LVer;	 /* 4 bits */
	uint8_t SL;	 /* 4 bits */
	uint8_t LNH;	 /* 2 bits */
	uint16_t DLID;
	uint16_t PktLen; /* 11 bits, in 4-byte words, LRH through ICRC */
	uint16_t SLID;
};

struct ib_grh {
	uint8_t IPVer;	    /* 4 bits */
	uint8_t TClass;
	uint32_t FlowLabel; /* 20 bits */
	uint16_t PayLen;    /* bytes after the GRH up to and including the ICRC */
	uint8_t NxtHdr;
	uint8_t HopLmt;
	union ib_gid SGID; /* raw[] in wire order */
	union ib_gid DGID;
};

struct ib_bth {
	uint8_t OpCode;
	uint8_t SE;	/* 1 bit */
	uint8_t M;	/* 1 bit: MigReq */
	uint8_t PadCnt; /* 2 bits */
	uint8_t TVer;	/* 4 bits */
	uint16_t P_Key;
	uint8_t FECN; /* 1 bit (resv8a bit 7) */
	uint8_t BECN; /* 1 bit (resv8a bit 6) */
	uint32_t DestQP; /* 24 bits */
	uint8_t A;	 /* 1 bit: AckReq */
	uint32_t PSN;	 /* 24 bits */
};

struct ib_rdeth {
	uint32_t EECnxt; /* 24 bits */
};

struct ib_deth {
	uint32_t Q_Key;
	uint32_t SrcQP; /* 24 bits */
};

struct ib_xrceth {
	uint32_t XRCSRQ; /* 24 bits */
};

struct ib_reth {
	uint64_t VA;
	uint32_t R_Key;
	uint32_t DMALen;
};

struct ib_atomiceth {
	uint64_t VA;
	uint32_t R_Key;
	uint64_t SwapDt; /* swap data, or the add data for FetchAdd */
	uint64_t CmpDt;
};

/* AETH.Syndrome (IBA 9.7.5.2): bits 6:5 say ACK/RNR NAK/NAK, 4:0 the value. */
enum ib_aeth_kind { IB_AETH_ACK = 0, IB_AETH_RNR_NAK = 1, IB_AETH_RESERVED = 2, IB_AETH_NAK = 3 };
enum ib_nak_code {
	IB_NAK_PSN_SEQ_ERR = 0,
	IB_NAK_INVALID_REQUEST = 1,
	IB_NAK_REMOTE_ACCESS_ERR = 2,
	IB_NAK_REMOTE_OP_ERR = 3,
	IB_NAK_INVALID_RD_REQUEST = 4,
};

struct ib_aeth {
	uint8_t Syndrome;
	uint32_t MSN; /* 24 bits */
};

static inline enum ib_aeth_kind ib_aeth_kind(uint8_t syndrome)
{
	return (enum ib_aeth_kind)((syndrome >> 5) & 3);
}
static inline uint8_t ib_aeth_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}
static inline uint8_t ib_aeth_syndrome(enum ib_aeth_kind kind, uint8_t value)
{
	return (uint8_t)(((unsigned)kind << 5) | (value & 0x1f));
}

struct ib_atomicacketh {
	uint64_t OrigRemDt;
};

struct ib_immdt {
	uint32_t ImmDt; /* carried big-endian; here in host order */
};

struct ib_ieth {
	uint32_t R_Key;
};

/* FLUSH Extended Transport Header (IBA 1.5, 9.3.7): what a FLUSH makes
 * visible or persistent, and over which part of the region. */
enum ib_feth_plt { IB_FETH_PLT_GLOBAL = 1 << 0, IB_FETH_PLT_PERSISTENT = 1 << 1 };
enum ib_feth_sel { IB_FETH_SEL_RANGE = 0, IB_FETH_SEL_REGION = 1 };

struct ib_feth {
	uint8_t SEL; /* 2 bits: selectivity level, enum ib_feth_sel */
	uint8_t PLT; /* 4 bits: placement type, enum ib_feth_plt bits */
};

#define IB_HEADER_OPS(name)                                                                        \
	void ib_##name##_encode(const struct ib_##name *h, uint8_t *p);                           \
	void ib_##name##_decode(struct ib_##name *h, const uint8_t *p);

IB_HEADER_OPS(lrh)
IB_HEADER_OPS(grh)
IB_HEADER_OPS(bth)
IB_HEADER_OPS(rdeth)
IB_HEADER_OPS(deth)
IB_HEADER_OPS(xrceth)
IB_HEADER_OPS(reth)
IB_HEADER_OPS(atomiceth)
IB_HEADER_OPS(aeth)
IB_HEADER_OPS(atomicacketh)
IB_HEADER_OPS(immdt)
IB_HEADER_OPS(ieth)
IB_HEADER_OPS(feth)
#undef IB_HEADER_OPS

/*
 * Field descriptions, for printing every field by name (softib decode -v)
 * and for generic tests.  A field is `bits` wide and starts `bit` bits from
 * the first byte of its header, most significant bit first as IBA draws it.
 * Fields wider than 64 bits (GIDs) have bits == 128 and are printed as GIDs.
 */
struct ib_field_desc {
	const char *name; /* IBA name, e.g. "DLID" */
	uint16_t bit;
	uint16_t bits;
	uint16_t offset; /* offsetof() the member in the header struct */
	uint8_t size;	 /* sizeof the member */
};

struct ib_header_desc {
	const char *name; /* "LRH", "BTH", "AtomicETH", ... */
	uint16_t bytes;
	uint16_t nfields;
	const struct ib_field_desc *fields;
};

enum ib_hdr {
	IB_HDR_LRH,
	IB_HDR_GRH,
	IB_HDR_BTH,
	IB_HDR_RDETH,
	IB_HDR_DETH,
	IB_HDR_XRCETH,
	IB_HDR_RETH,
	IB_HDR_ATOMICETH,
	IB_HDR_AETH,
	IB_HDR_ATOMICACKETH,
	IB_HDR_IMMDT,
	IB_HDR_IETH,
	IB_HDR_FETH,
	IB_HDR_COUNT
};

const struct ib_header_desc *ib_header_desc(enum ib_hdr hdr);

/* Reads one field's value from a header struct (GIDs: not supported, returns 0). */
uint64_t ib_field_get(const void *hdr_struct, const struct ib_field_desc *f);

#endif

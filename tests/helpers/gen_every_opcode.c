/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * gen_every_opcode OUT.pcap OUT.expected
 *
 * Writes one packet of every RC, UC, UD, XRC and CNP opcode in the opcode
 * table, built with ib_packet_encode and written with the capture writer,
 * each with its own field values; some carry a GRH.  Beside it, the values
 * tshark should print for each packet: a header line "#field|field|..."
 * naming the tshark fields, then one line per packet in tshark's
 * `-T fields -E separator='|' -E occurrence=f` format.  Empty means "tshark
 * must not show this field".  tests/integration/test_tshark_oracle.sh runs
 * tshark with exactly the header's fields and compares; a field named
 * "x@last" is compared with x's last occurrence, every other with its first.
 *
 * tshark 4.0.17 does not know the XRC and CNP opcodes: it shows LRH, GRH and
 * BTH, then everything after the BTH (through the VCRC) as
 * infiniband.vendor.  For those packets the expected vendor bytes are built
 * here by hand from the field values, in IBA order, so they still check our
 * XRCETH and the ETHs after it byte for byte.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/capture.h"
#include "wire/packet.h"

#define COLUMNS(X)                                                                                 \
	X(FRAME, "frame.number")                                                                   \
	X(LRH_VL, "infiniband.lrh.vl")                                                             \
	X(LRH_LVER, "infiniband.lrh.lver")                                                         \
	X(LRH_SL, "infiniband.lrh.sl")                                                             \
	X(LRH_LNH, "infiniband.lrh.lnh")                                                           \
	X(LRH_DLID, "infiniband.lrh.dlid")                                                         \
	X(LRH_PKTLEN, "infiniband.lrh.pktlen")                                                     \
	X(LRH_SLID, "infiniband.lrh.slid")                                                         \
	X(GRH_IPVER, "infiniband.grh.ipver")                                                       \
	X(GRH_TCLASS, "infiniband.grh.tclass")                                                     \
	X(GRH_FLOWLABEL, "infiniband.grh.flowlabel")                                               \
	X(GRH_PAYLEN, "infiniband.grh.paylen")                                                     \
	X(GRH_NXTHDR, "infiniband.grh.nxthdr")                                                     \
	X(GRH_HOPLMT, "infiniband.grh.hoplmt")                                                     \
	X(GRH_SGID, "infiniband.grh.sgid")                                                         \
	X(GRH_DGID, "infiniband.grh.dgid")                                                         \
	X(BTH_OPCODE, "infiniband.bth.opcode")                                                     \
	X(BTH_SE, "infiniband.bth.se")                                                             \
	X(BTH_M, "infiniband.bth.m")                                                               \
	X(BTH_PADCNT, "infiniband.bth.padcnt")                                                     \
	X(BTH_TVER, "infiniband.bth.tver")                                                         \
	X(BTH_P_KEY, "infiniband.bth.p_key")                                                       \
	X(BTH_DESTQP, "infiniband.bth.destqp")                                                     \
	X(BTH_A, "infiniband.bth.a")                                                               \
	X(BTH_PSN, "infiniband.bth.psn")                                                           \
	X(RETH_VA, "infiniband.reth.va")                                                           \
	X(RETH_R_KEY, "infiniband.reth.r_key")                                                     \
	X(RETH_DMALEN, "infiniband.reth.dmalen")                                                   \
	X(ATOMIC_SWAPDT, "infiniband.atomiceth.swapdt")                                            \
	X(ATOMIC_CMPDT, "infiniband.atomiceth.cmpdt")                                              \
	X(AETH_SYNDROME, "infiniband.aeth.syndrome")                                               \
	X(AETH_MSN, "infiniband.aeth.msn")                                                         \
	X(ATOMICACK_ORIGREMDT, "infiniband.atomicacketh.origremdt")                                \
	X(DETH_Q_KEY, "infiniband.deth.q_key")                                                     \
	X(DETH_SRCQP, "infiniband.deth.srcqp")                                                     \
	X(IMMDT, "infiniband.immdt")                                                               \
	X(IETH, "infiniband.ieth")                                                                 \
	X(ICRC, "infiniband.invariant.crc")                                                        \
	X(VCRC, "infiniband.variant.crc")                                                          \
	X(DATA_LEN, "data.len")                                                                    \
	X(DATA, "data.data")                                                                       \
	X(VENDOR, "infiniband.vendor@last")                                                        \
	X(MALFORMED, "_ws.malformed")                                                              \
	X(EXPERT, "_ws.expert")

#define COL_ENUM(id, field) COL_##id,
#define COL_NAME(id, field) field,
enum col { COLUMNS(COL_ENUM) NCOLS };
static const char *const col_field[NCOLS] = { COLUMNS(COL_NAME) };

struct line {
	char v[NCOLS][2 * IB_MAX_MTU + 1]; /* data.data is the widest: hex of payload + pad */
};

static void set(struct line *l, enum col c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set(struct line *l, enum col c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->v[c], sizeof(l->v[c]), fmt, ap);
	va_end(ap);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gen_every_opcode: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void make_gid(union ib_gid *g, uint16_t a, uint16_t b)
{
	/* fec0::2:c9ff:feAA:BBBB, a site-local unicast GID: no IPv4-mapped
	 * form, so inet_ntop and tshark print it alike. */
	static const uint8_t prefix[12] = { 0xfe, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0xc9, 0xff };

	memcpy(g->raw, prefix, sizeof(prefix));
	g->raw[12] = (uint8_t)(a >> 8);
	g->raw[13] = (uint8_t)a;
	g->raw[14] = (uint8_t)(b >> 8);
	g->raw[15] = (uint8_t)b;
}

/* AETH syndromes to cycle through: ACK with credits, NAK remote access
 * error, RNR NAK with a timer, ACK with "no credit information". */
static const uint8_t syndromes[] = { 0x0a, 0x62, 0x2e, 0x1f };

/* Fills pkt and the payload for the n-th packet, opcode `info`. */
static uint32_t build(unsigned n, const struct ib_opcode_info *info, struct ib_packet *pkt,
		      uint8_t *payload)
{
	uint32_t plen = 0;

	memset(pkt, 0, sizeof(*pkt));
	pkt->lrh.VL = (uint8_t)(n % 15); /* VL15 is for QP0 only */
	pkt->lrh.SL = (uint8_t)((n * 7 + 3) % 16);
	pkt->lrh.LNH = n % 3 == 2 ? IB_LNH_IBA_GLOBAL : IB_LNH_IBA_LOCAL;
	pkt->lrh.DLID = (uint16_t)(0x0100 + n * 0x11);
	pkt->lrh.SLID = (uint16_t)(0x0a00 + n * 0x13);
	if (pkt->lrh.LNH == IB_LNH_IBA_GLOBAL) {
		pkt->grh.TClass = (uint8_t)(0x20 + n);
		pkt->grh.FlowLabel = 0x12345u + n * 0x101u;
		pkt->grh.HopLmt = (uint8_t)(64 + n);
		make_gid(&pkt->grh.SGID, (uint16_t)(0x5100 + n), (uint16_t)(0x1000 + n));
		make_gid(&pkt->grh.DGID, (uint16_t)(0x5200 + n), (uint16_t)(0x2000 + n));
	}
	pkt->bth.OpCode = info->opcode;
	pkt->bth.SE = n & 1;
	pkt->bth.M = (n >> 1) & 1;
	pkt->bth.P_Key = (uint16_t)(0x8000 | (0x0123 + n * 0x0135));
	pkt->bth.DestQP = 0x100000u + n * 0x1011u; /* never QP0/QP1 */
	pkt->bth.A = (n >> 2) & 1;
	pkt->bth.PSN = (0x0abcdeu + n * 0x010101u) & 0xffffff;

	pkt->deth.Q_Key = 0x11110000u + n * 0x10001u;
	pkt->deth.SrcQP = 0x200000u + n * 0x203u;
	pkt->xrceth.XRCSRQ = 0x300000u + n * 0x305u;
	pkt->reth.VA = 0x00007f0000000000ull + (uint64_t)n * 0x10203040ull;
	pkt->reth.R_Key = 0x10000000u + n * 0x01020304u;
	pkt->reth.DMALen = 4096u + n * 3u;
	pkt->atomiceth.VA = 0x00007e0000000000ull + (uint64_t)n * 0x1000ull; /* 8-byte aligned */
	pkt->atomiceth.R_Key = 0x20000000u + n * 0x00010203u;
	pkt->atomiceth.SwapDt = 0x1111222233334444ull + n;
	pkt->atomiceth.CmpDt = 0x5555666677778888ull + n;
	pkt->aeth.Syndrome = syndromes[n % (sizeof(syndromes))];
	pkt->aeth.MSN = 0x00abc0u + n;
	pkt->atomicacketh.OrigRemDt = 0x0102030405060708ull * (n + 1);
	pkt->immdt.ImmDt = 0xdead0000u + n;
	pkt->ieth.R_Key = 0x0bad0000u + n;
	pkt->feth.SEL = n & 1;
	pkt->feth.PLT = 1 + n % 3;

	if (info->transport == IB_TRANSPORT_CNP) {
		/* The RoCEv2 CNP (Annex A17) carries 16 reserved bytes. */
		plen = info->opcode == IB_OPCODE_CNP ? 16 : 0;
		memset(payload, 0, plen);
	} else if (info->flags & IB_OPF_PAYLOAD) {
		/* First and middle packets carry whole words (no pad); an
		 * ATOMIC WRITE its 8 bytes. */
		if (info->flags & IB_OPF_ATOMIC_WRITE)
			plen = 8;
		else if (info->flags & (IB_OPF_LAST))
			plen = 1 + (n * 5) % 23;
		else
			plen = 32;
		for (uint32_t k = 0; k < plen; k++)
			payload[k] = (uint8_t)(0x80 | ((k * 37 + n * 11) & 0x7f));
	}
	return plen;
}

/* Appends `bytes` bytes of v, most significant first, as hex. */
static char *hex_be(char *d, uint64_t v, int bytes)
{
	while (bytes--)
		d += sprintf(d, "%02x", (unsigned)(v >> (8 * bytes)) & 0xff);
	return d;
}

/* Everything after the BTH, built from the field values (IBA 9.2: XRCETH,
 * FETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, payload, pad, ICRC,
 * VCRC), for the opcodes tshark 4.0 shows as vendor data. */
static void expect_vendor(const struct ib_packet *pkt, uint32_t h, const uint8_t *payload,
			  uint32_t plen, const uint8_t *buf, size_t len, char *d)
{
	if (h & IB_HDRBIT(IB_HDR_XRCETH))
		d = hex_be(d, pkt->xrceth.XRCSRQ, 4); /* 8 reserved bits, 24-bit XRCSRQ */
	if (h & IB_HDRBIT(IB_HDR_FETH))
		d = hex_be(d, (uint64_t)pkt->feth.SEL << 4 | pkt->feth.PLT, 4);
	if (h & IB_HDRBIT(IB_HDR_RETH)) {
		d = hex_be(d, pkt->reth.VA, 8);
		d = hex_be(d, pkt->reth.R_Key, 4);
		d = hex_be(d, pkt->reth.DMALen, 4);
	}
	if (h & IB_HDRBIT(IB_HDR_ATOMICETH)) {
		d = hex_be(d, pkt->atomiceth.VA, 8);
		d = hex_be(d, pkt->atomiceth.R_Key, 4);
		d = hex_be(d, pkt->atomiceth.SwapDt, 8);
		d = hex_be(d, pkt->atomiceth.CmpDt, 8);
	}
	if (h & IB_HDRBIT(IB_HDR_AETH))
		d = hex_be(d, (uint64_t)pkt->aeth.Syndrome << 24 | pkt->aeth.MSN, 4);
	if (h & IB_HDRBIT(IB_HDR_ATOMICACKETH))
		d = hex_be(d, pkt->atomicacketh.OrigRemDt, 8);
	if (h & IB_HDRBIT(IB_HDR_IMMDT))
		d = hex_be(d, pkt->immdt.ImmDt, 4);
	if (h & IB_HDRBIT(IB_HDR_IETH))
		d = hex_be(d, pkt->ieth.R_Key, 4);
	for (uint32_t k = 0; k < plen; k++)
		d = hex_be(d, payload[k], 1);
	for (uint32_t k = plen; k % 4; k++)
		d = hex_be(d, 0, 1);
	for (size_t k = len - 6; k < len; k++)
		d = hex_be(d, buf[k], 1);
}

/* tshark 4.0.17 dissects the ETHs of RC, UC, RD and UD opcodes only, and
 * not IBA 1.5's FLUSH and ATOMIC WRITE. */
static bool tshark_knows(const struct ib_opcode_info *info)
{
	return info->transport <= IB_TRANSPORT_UD &&
	       !(info->flags & (IB_OPF_FLUSH | IB_OPF_ATOMIC_WRITE));
}

static void expect(unsigned frame, const struct ib_packet *pkt, const uint8_t *payload,
		   uint32_t plen, const uint8_t *buf, size_t len, struct line *l)
{
	uint32_t h = pkt->op->headers; /* the table's word, not the decoder's */
	uint32_t pad = (4 - plen % 4) % 4;
	char gid[INET6_ADDRSTRLEN];
	char *d;

	memset(l, 0, sizeof(*l));
	set(l, COL_FRAME, "%u", frame);
	set(l, COL_LRH_VL, "0x%02x", pkt->lrh.VL);
	set(l, COL_LRH_LVER, "0");
	set(l, COL_LRH_SL, "%u", pkt->lrh.SL);
	set(l, COL_LRH_LNH, "0x%02x", pkt->lrh.LNH);
	set(l, COL_LRH_DLID, "%u", pkt->lrh.DLID);
	set(l, COL_LRH_PKTLEN, "%zu", (len - 2) / 4); /* from the length, not the encoder */
	set(l, COL_LRH_SLID, "%u", pkt->lrh.SLID);
	if (pkt->lrh.LNH == IB_LNH_IBA_GLOBAL) {
		set(l, COL_GRH_IPVER, "6");
		set(l, COL_GRH_TCLASS, "%u", pkt->grh.TClass);
		set(l, COL_GRH_FLOWLABEL, "%u", pkt->grh.FlowLabel);
		set(l, COL_GRH_PAYLEN, "%zu", len - IB_LRH_BYTES - IB_GRH_BYTES - IB_VCRC_BYTES);
		set(l, COL_GRH_NXTHDR, "27");
		set(l, COL_GRH_HOPLMT, "%u", pkt->grh.HopLmt);
		set(l, COL_GRH_SGID, "%s", inet_ntop(AF_INET6, pkt->grh.SGID.raw, gid, sizeof(gid)));
		set(l, COL_GRH_DGID, "%s", inet_ntop(AF_INET6, pkt->grh.DGID.raw, gid, sizeof(gid)));
	}
	set(l, COL_BTH_OPCODE, "%u", pkt->bth.OpCode);
	set(l, COL_BTH_SE, "%u", pkt->bth.SE);
	set(l, COL_BTH_M, "%u", pkt->bth.M);
	set(l, COL_BTH_PADCNT, "%u", pad);
	set(l, COL_BTH_TVER, "0");
	set(l, COL_BTH_P_KEY, "%u", pkt->bth.P_Key);
	set(l, COL_BTH_DESTQP, "0x%06x", pkt->bth.DestQP);
	set(l, COL_BTH_A, "%u", pkt->bth.A);
	set(l, COL_BTH_PSN, "%u", pkt->bth.PSN);
	if (!tshark_knows(pkt->op)) {
		expect_vendor(pkt, h, payload, plen, buf, len, l->v[COL_VENDOR]);
		return;
	}
	if (h & IB_HDRBIT(IB_HDR_RETH)) {
		set(l, COL_RETH_VA, "0x%016" PRIx64, pkt->reth.VA);
		set(l, COL_RETH_R_KEY, "0x%08x", pkt->reth.R_Key);
		set(l, COL_RETH_DMALEN, "%u", pkt->reth.DMALen);
	}
	if (h & IB_HDRBIT(IB_HDR_ATOMICETH)) {
		/* tshark files the AtomicETH VA and R_Key under reth. */
		set(l, COL_RETH_VA, "0x%016" PRIx64, pkt->atomiceth.VA);
		set(l, COL_RETH_R_KEY, "0x%08x", pkt->atomiceth.R_Key);
		set(l, COL_ATOMIC_SWAPDT, "%" PRIu64, pkt->atomiceth.SwapDt);
		set(l, COL_ATOMIC_CMPDT, "%" PRIu64, pkt->atomiceth.CmpDt);
	}
	if (h & IB_HDRBIT(IB_HDR_AETH)) {
		set(l, COL_AETH_SYNDROME, "%u", pkt->aeth.Syndrome);
		set(l, COL_AETH_MSN, "%u", pkt->aeth.MSN);
	}
	if (h & IB_HDRBIT(IB_HDR_ATOMICACKETH))
		set(l, COL_ATOMICACK_ORIGREMDT, "%" PRIu64, pkt->atomicacketh.OrigRemDt);
	if (h & IB_HDRBIT(IB_HDR_DETH)) {
		set(l, COL_DETH_Q_KEY, "0x%016" PRIx32, pkt->deth.Q_Key);
		set(l, COL_DETH_SRCQP, "0x%08x", pkt->deth.SrcQP);
	}
	if (h & IB_HDRBIT(IB_HDR_IMMDT))
		set(l, COL_IMMDT, "%08x", pkt->immdt.ImmDt);
	if (h & IB_HDRBIT(IB_HDR_IETH))
		set(l, COL_IETH, "%08x", pkt->ieth.R_Key);
	/* tshark shows the CRCs as a big-endian read of the wire bytes. */
	set(l, COL_ICRC, "0x%02x%02x%02x%02x", buf[len - 6], buf[len - 5], buf[len - 4],
	    buf[len - 3]);
	set(l, COL_VCRC, "0x%02x%02x", buf[len - 2], buf[len - 1]);
	if (plen) {
		/* data.* includes the pad bytes, which are zero. */
		set(l, COL_DATA_LEN, "%u", plen + pad);
		d = l->v[COL_DATA];
		for (uint32_t k = 0; k < plen + pad; k++)
			d += sprintf(d, "%02x", k < plen ? payload[k] : 0);
	}
}

int main(int argc, char **argv)
{
	static uint8_t buf[IB_MAX_PACKET], payload[IB_MAX_MTU];
	static struct line line;
	uint8_t hdr[IB_PCAP_RECORD_HDR_BYTES];
	FILE *pcap, *exp;
	unsigned n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: gen_every_opcode OUT.pcap OUT.expected\n");
		return 2;
	}
	pcap = fopen(argv[1], "wb");
	exp = fopen(argv[2], "w");
	if (!pcap || !exp)
		die("cannot create %s or %s", argv[1], argv[2]);

	ib_pcap_file_header(hdr);
	fwrite(hdr, 1, IB_PCAP_FILE_HDR_BYTES, pcap);
	for (int c = 0; c < NCOLS; c++)
		fprintf(exp, "%s%s", c ? "|" : "#", col_field[c]);
	fprintf(exp, "\n");

	for (unsigned op = 0; op < 256; op++) {
		const struct ib_opcode_info *info = ib_opcode_info((uint8_t)op);
		struct ib_packet pkt, chk;
		enum ib_pkt_err err;
		uint32_t plen;
		size_t len;

		/* RD is in the table for display only; softib does not speak it. */
		if (!info || info->transport == IB_TRANSPORT_RD)
			continue;
		plen = build(n, info, &pkt, payload);
		len = ib_packet_encode(&pkt, payload, plen, buf, sizeof(buf));
		if (!len)
			die("ib_packet_encode failed for opcode 0x%02x (%s)", op, info->name);
		err = ib_packet_decode(buf, len, &chk);
		if (err != IB_PKT_OK)
			die("opcode 0x%02x (%s): our own decoder rejects it: %s", op, info->name,
			    ib_pkt_err_str(err));
		n++;
		ib_pcap_record_header_port(hdr, 1700000000ull * 1000000000ull + n * 1000ull, len,
					   n & 1);
		fwrite(hdr, 1, sizeof(hdr), pcap);
		fwrite(buf, 1, len, pcap);
		pkt.op = info;
		expect(n, &pkt, payload, plen, buf, len, &line);
		for (int c = 0; c < NCOLS; c++)
			fprintf(exp, "%s%s", c ? "|" : "", line.v[c]);
		fprintf(exp, "\n");
	}
	if (fclose(pcap) || fclose(exp))
		die("write error");
	if (!n)
		die("the opcode table is empty");
	fprintf(stderr, "gen_every_opcode: %u packets\n", n);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Whole packets: the validating decoder and the builder.  Both walk the
 * headers in wire order (LRH, GRH, BTH, then the opcode's extended headers
 * in ib_eth_order) and let the opcode table say which ETHs are present.
 */
#include <string.h>

#include "wire/crc.h"
#include "wire/packet.h"

/* LRH + BTH + ICRC + VCRC: nothing shorter is an IBA transport packet. */
enum { MIN_PACKET = IB_LRH_BYTES + IB_BTH_BYTES + IB_ICRC_BYTES + IB_VCRC_BYTES };
enum { CRC_BYTES = IB_ICRC_BYTES + IB_VCRC_BYTES };
enum { IB_VL15 = 15 };

static const struct {
	const char *name;
	const char *str;
} pkt_errs[IB_PKT_ERR_COUNT] = {
	[IB_PKT_OK] = { "OK", "valid packet" },
	[IB_PKT_ERR_TOO_SHORT] = { "TOO_SHORT", "shorter than LRH + BTH + ICRC + VCRC" },
	[IB_PKT_ERR_TOO_LONG] = { "TOO_LONG", "longer than any legal packet" },
	[IB_PKT_ERR_VCRC] = { "VCRC", "VCRC mismatch" },
	[IB_PKT_ERR_LVER] = { "LVER", "LRH.LVer is not 0" },
	[IB_PKT_ERR_LNH] = { "LNH", "LRH.LNH is raw: not an IBA transport packet" },
	[IB_PKT_ERR_PKTLEN] = { "PKTLEN", "LRH.PktLen disagrees with the packet length" },
	[IB_PKT_ERR_GRH_TRUNC] = { "GRH_TRUNC", "LRH.LNH announces a GRH that does not fit" },
	[IB_PKT_ERR_GRH_IPVER] = { "GRH_IPVER", "GRH.IPVer is not 6" },
	[IB_PKT_ERR_GRH_NXTHDR] = { "GRH_NXTHDR", "GRH.NxtHdr is not 0x1B (IBA transport)" },
	[IB_PKT_ERR_GRH_PAYLEN] = { "GRH_PAYLEN", "GRH.PayLen disagrees with the packet length" },
	[IB_PKT_ERR_TVER] = { "TVER", "BTH.TVer is not 0" },
	[IB_PKT_ERR_OPCODE] = { "OPCODE", "BTH.OpCode is reserved or unsupported" },
	[IB_PKT_ERR_HDR_TRUNC] = { "HDR_TRUNC", "extended transport headers do not fit" },
	[IB_PKT_ERR_PAD] = { "PAD", "BTH.PadCnt is not allowed here" },
	[IB_PKT_ERR_PAYLOAD] = { "PAYLOAD", "payload on an opcode that carries none" },
	[IB_PKT_ERR_VL15] = { "VL15", "VL15 and QP0 go together: SMPs only" },
	[IB_PKT_ERR_ICRC] = { "ICRC", "ICRC mismatch" },
};

const char *ib_pkt_err_str(enum ib_pkt_err err)
{
	if ((unsigned)err >= IB_PKT_ERR_COUNT)
		return "unknown packet error";
	return pkt_errs[err].str;
}

const char *ib_pkt_err_name(enum ib_pkt_err err)
{
	if ((unsigned)err >= IB_PKT_ERR_COUNT)
		return "UNKNOWN";
	return pkt_errs[err].name;
}

static void eth_decode(struct ib_packet *pkt, enum ib_hdr hdr, const uint8_t *p)
{
	switch (hdr) {
	case IB_HDR_RDETH:
		ib_rdeth_decode(&pkt->rdeth, p);
		break;
	case IB_HDR_DETH:
		ib_deth_decode(&pkt->deth, p);
		break;
	case IB_HDR_XRCETH:
		ib_xrceth_decode(&pkt->xrceth, p);
		break;
	case IB_HDR_RETH:
		ib_reth_decode(&pkt->reth, p);
		break;
	case IB_HDR_ATOMICETH:
		ib_atomiceth_decode(&pkt->atomiceth, p);
		break;
	case IB_HDR_AETH:
		ib_aeth_decode(&pkt->aeth, p);
		break;
	case IB_HDR_ATOMICACKETH:
		ib_atomicacketh_decode(&pkt->atomicacketh, p);
		break;
	case IB_HDR_IMMDT:
		ib_immdt_decode(&pkt->immdt, p);
		break;
	case IB_HDR_IETH:
		ib_ieth_decode(&pkt->ieth, p);
		break;
	case IB_HDR_FETH:
		ib_feth_decode(&pkt->feth, p);
		break;
	default:
		break;
	}
}

static void eth_encode(const struct ib_packet *pkt, enum ib_hdr hdr, uint8_t *p)
{
	switch (hdr) {
	case IB_HDR_RDETH:
		ib_rdeth_encode(&pkt->rdeth, p);
		break;
	case IB_HDR_DETH:
		ib_deth_encode(&pkt->deth, p);
		break;
	case IB_HDR_XRCETH:
		ib_xrceth_encode(&pkt->xrceth, p);
		break;
	case IB_HDR_RETH:
		ib_reth_encode(&pkt->reth, p);
		break;
	case IB_HDR_ATOMICETH:
		ib_atomiceth_encode(&pkt->atomiceth, p);
		break;
	case IB_HDR_AETH:
		ib_aeth_encode(&pkt->aeth, p);
		break;
	case IB_HDR_ATOMICACKETH:
		ib_atomicacketh_encode(&pkt->atomicacketh, p);
		break;
	case IB_HDR_IMMDT:
		ib_immdt_encode(&pkt->immdt, p);
		break;
	case IB_HDR_IETH:
		ib_ieth_encode(&pkt->ieth, p);
		break;
	case IB_HDR_FETH:
		ib_feth_encode(&pkt->feth, p);
		break;
	default:
		break;
	}
}

/* Padding is only on the last packet of a message (IBA 9.2: PadCnt), so a
 * First or Middle packet, and any opcode without payload, carries none. */
static bool pad_allowed(uint32_t flags)
{
	if (!(flags & IB_OPF_PAYLOAD))
		return false;
	if (flags & IB_OPF_MIDDLE)
		return false;
	if ((flags & IB_OPF_FIRST) && !(flags & IB_OPF_LAST))
		return false;
	return true;
}

enum ib_pkt_err ib_packet_decode(const uint8_t *buf, size_t len, struct ib_packet *pkt)
{
	const struct ib_opcode_info *op;
	size_t off, rest;
	unsigned i;
	uint16_t vcrc;

	memset(pkt, 0, sizeof(*pkt));
	if (len < MIN_PACKET)
		return IB_PKT_ERR_TOO_SHORT;
	if (len > IB_MAX_PACKET)
		return IB_PKT_ERR_TOO_LONG;

	/*
	 * The link layer checks VCRC before looking at anything (IBA 7.8.2).
	 * ib_crcs() runs the VCRC over the ICRC it computed; that is the
	 * VCRC of the bytes received only when the carried ICRC is right, so
	 * otherwise (rare) run it again over what arrived.
	 */
	ib_crcs(buf, len, &pkt->icrc_calc, &vcrc);
	pkt->ICRC = ib_icrc_get(buf, len);
	pkt->VCRC = ib_vcrc_get(buf, len);
	if (pkt->ICRC != pkt->icrc_calc)
		vcrc = ib_vcrc(buf, len);
	pkt->vcrc_calc = vcrc;
	if (pkt->VCRC != pkt->vcrc_calc)
		return IB_PKT_ERR_VCRC;

	ib_lrh_decode(&pkt->lrh, buf);
	if (pkt->lrh.LVer != IB_LRH_LVER)
		return IB_PKT_ERR_LVER;
	if (pkt->lrh.LNH != IB_LNH_IBA_LOCAL && pkt->lrh.LNH != IB_LNH_IBA_GLOBAL)
		return IB_PKT_ERR_LNH;
	/* PktLen counts LRH through ICRC in 4-byte words (IBA 7.7.8). */
	if ((size_t)pkt->lrh.PktLen * 4 + IB_VCRC_BYTES != len)
		return IB_PKT_ERR_PKTLEN;
	off = IB_LRH_BYTES;

	if (pkt->lrh.LNH == IB_LNH_IBA_GLOBAL) {
		if (len < IB_LRH_BYTES + IB_GRH_BYTES + IB_BTH_BYTES + CRC_BYTES)
			return IB_PKT_ERR_GRH_TRUNC;
		pkt->has_grh = true;
		ib_grh_decode(&pkt->grh, buf + off);
		off += IB_GRH_BYTES;
		if (pkt->grh.IPVer != IB_GRH_IPVER)
			return IB_PKT_ERR_GRH_IPVER;
		if (pkt->grh.NxtHdr != IB_GRH_NXTHDR_IBA)
			return IB_PKT_ERR_GRH_NXTHDR;
		/* PayLen: everything after the GRH up to and including the ICRC. */
		if ((size_t)pkt->grh.PayLen + off + IB_VCRC_BYTES != len)
			return IB_PKT_ERR_GRH_PAYLEN;
	}

	ib_bth_decode(&pkt->bth, buf + off);
	if (pkt->bth.TVer != IB_BTH_TVER)
		return IB_PKT_ERR_TVER;
	op = ib_opcode_info(pkt->bth.OpCode);
	if (!op)
		return IB_PKT_ERR_OPCODE;
	pkt->op = op;
	off += IB_BTH_BYTES;

	if (off + ib_opcode_eth_bytes(op) + CRC_BYTES > len)
		return IB_PKT_ERR_HDR_TRUNC;
	pkt->headers = op->headers;
	for (i = 0; i < ib_eth_order_count; i++) {
		enum ib_hdr h = ib_eth_order[i];

		if (!(op->headers & IB_HDRBIT(h)))
			continue;
		eth_decode(pkt, h, buf + off);
		off += ib_header_desc(h)->bytes;
	}
	pkt->hdr_len = (uint32_t)off;
	pkt->payload = buf + off;

	rest = len - off - CRC_BYTES;
	if (pkt->bth.PadCnt > rest || (pkt->bth.PadCnt && !pad_allowed(op->flags)))
		return IB_PKT_ERR_PAD;
	pkt->payload_len = (uint32_t)(rest - pkt->bth.PadCnt);
	if (pkt->payload_len && !(op->flags & IB_OPF_PAYLOAD))
		return IB_PKT_ERR_PAYLOAD;

	/*
	 * VL15 carries subnet management only (IBA 7.6.4), and the SMA takes
	 * an SMP only if it arrived on VL15 for QP0 (IBA ch. 14, SMP receive
	 * checks).  So VL15 to another QP, or QP0 on a data VL, is dropped.
	 */
	if ((pkt->lrh.VL == IB_VL15) != (pkt->bth.DestQP == 0))
		return IB_PKT_ERR_VL15;

	if (pkt->ICRC != pkt->icrc_calc)
		return IB_PKT_ERR_ICRC;
	return IB_PKT_OK;
}

size_t ib_packet_encode_headers(struct ib_packet *pkt, uint32_t payload_len, uint8_t *buf,
				size_t cap)
{
	const struct ib_opcode_info *op = ib_opcode_info(pkt->bth.OpCode);
	bool grh = pkt->lrh.LNH == IB_LNH_IBA_GLOBAL;
	size_t hdr_len, total, off;
	unsigned i;

	/* We build IBA transport packets only; raw ones have no BTH. */
	if (!op || (!grh && pkt->lrh.LNH != IB_LNH_IBA_LOCAL))
		return 0;
	if (payload_len > IB_MAX_PACKET)
		return 0;
	hdr_len = IB_LRH_BYTES + (grh ? IB_GRH_BYTES : 0) + IB_BTH_BYTES + ib_opcode_eth_bytes(op);
	total = ib_packet_len(hdr_len, payload_len);
	if (total > cap || total > IB_MAX_PACKET)
		return 0;

	pkt->lrh.LVer = IB_LRH_LVER;
	pkt->lrh.PktLen = (uint16_t)((total - IB_VCRC_BYTES) / 4);
	pkt->bth.TVer = IB_BTH_TVER;
	pkt->bth.PadCnt = (uint8_t)(-payload_len & 3);
	pkt->has_grh = grh;
	pkt->op = op;
	pkt->headers = op->headers;
	pkt->hdr_len = (uint32_t)hdr_len;
	pkt->payload_len = payload_len;

	ib_lrh_encode(&pkt->lrh, buf);
	off = IB_LRH_BYTES;
	if (grh) {
		pkt->grh.IPVer = IB_GRH_IPVER;
		pkt->grh.NxtHdr = IB_GRH_NXTHDR_IBA;
		pkt->grh.PayLen = (uint16_t)(total - IB_LRH_BYTES - IB_GRH_BYTES - IB_VCRC_BYTES);
		ib_grh_encode(&pkt->grh, buf + off);
		off += IB_GRH_BYTES;
	}
	ib_bth_encode(&pkt->bth, buf + off);
	off += IB_BTH_BYTES;
	for (i = 0; i < ib_eth_order_count; i++) {
		enum ib_hdr h = ib_eth_order[i];

		if (!(op->headers & IB_HDRBIT(h)))
			continue;
		eth_encode(pkt, h, buf + off);
		off += ib_header_desc(h)->bytes;
	}
	return off;
}

size_t ib_packet_seal(uint8_t *buf, size_t hdr_len, uint32_t payload_len)
{
	size_t total = ib_packet_len(hdr_len, payload_len);
	uint32_t icrc;
	uint16_t vcrc;

	memset(buf + hdr_len + payload_len, 0, -payload_len & 3);
	/* One pass: ib_crcs() runs the VCRC over the ICRC about to be stored. */
	ib_crcs(buf, total, &icrc, &vcrc);
	ib_icrc_put(buf, total, icrc);
	ib_vcrc_put(buf, total, vcrc);
	return total;
}

size_t ib_packet_seal_split(uint8_t *buf, size_t hdr_len, const uint8_t *payload,
			    uint32_t payload_len)
{
	size_t pad = -payload_len & 3u, len = pad + IB_ICRC_BYTES + IB_VCRC_BYTES;
	uint8_t *trailer = buf + hdr_len;
	uint32_t icrc;
	uint16_t vcrc;

	ib_crcs_split(buf, hdr_len, payload, payload_len, pad, &icrc, &vcrc);
	memset(trailer, 0, pad);
	/* The trailer is the end of the packet: the CRCs go where they would. */
	ib_icrc_put(trailer, len, icrc);
	ib_vcrc_put(trailer, len, vcrc);
	return len;
}

size_t ib_packet_encode(struct ib_packet *pkt, const void *payload, uint32_t payload_len,
			uint8_t *buf, size_t cap)
{
	size_t hdr_len = ib_packet_encode_headers(pkt, payload_len, buf, cap);

	if (!hdr_len)
		return 0;
	if (payload_len)
		memmove(buf + hdr_len, payload, payload_len);
	return ib_packet_seal(buf, hdr_len, payload_len);
}

const void *ib_packet_header(const struct ib_packet *p, enum ib_hdr h)
{
	switch (h) {
	case IB_HDR_LRH:
		return &p->lrh;
	case IB_HDR_GRH:
		return &p->grh;
	case IB_HDR_BTH:
		return &p->bth;
	case IB_HDR_RDETH:
		return &p->rdeth;
	case IB_HDR_DETH:
		return &p->deth;
	case IB_HDR_XRCETH:
		return &p->xrceth;
	case IB_HDR_RETH:
		return &p->reth;
	case IB_HDR_ATOMICETH:
		return &p->atomiceth;
	case IB_HDR_AETH:
		return &p->aeth;
	case IB_HDR_ATOMICACKETH:
		return &p->atomicacketh;
	case IB_HDR_IMMDT:
		return &p->immdt;
	case IB_HDR_IETH:
		return &p->ieth;
	case IB_HDR_FETH:
		return &p->feth;
	default:
		return NULL;
	}
}

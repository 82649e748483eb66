/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib decode [-v] FILE: one line per packet of a capture file (the pcap
 * SOFTIB_CAPTURE writes, or any pcap of bare IB packets), with both CRCs
 * checked, and a summary line.  -v adds every field of every header.
 * --svg hands the file to ladder.c, which draws it with these lines.
 *
 * Exit: 0 every packet decodes, 1 some do not, 2 usage or file errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/decode.h"
#include "tools/softib.h"
#include "wire/cable.h"
#include "wire/capture.h"
#include "wire/mad.h"
#include "wire/crc.h"
#include "wire/packet.h"
#include "wire/smp.h"
#include "mgmt/mad_packet.h"
#include "mgmt/mcast_ports.h"

#define MAX_FILE_BYTES (1ull << 32) /* far beyond any capture we write */

struct tally {
	unsigned long packets, ok, bad, dropped;
};

static void decode_usage(FILE *out)
{
	fprintf(out, "usage: softib decode [-v | --svg] FILE\n"
		     "  Prints each InfiniBand packet of a pcap capture (ERF type 21 or\n"
		     "  link type 247), checks ICRC and VCRC, and ends with a summary line.\n"
		     "  -v     also print every header field by name, and the payload\n"
		     "  --svg  instead draw the capture as a ladder diagram (SVG, to stdout):\n"
		     "         a lifeline per port, an arrow per packet, ACKs, NAKs,\n"
		     "         retransmissions, drops and bad CRCs marked\n"
		     "exit status: 0 all packets ok, 1 some bad, 2 usage or file error\n"
		     "  (--svg: 0 drawn, 2 usage or file error)\n");
}

uint8_t *softib_read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL, *nbuf;
	size_t cap = 0, n = 0, got;

	if (!fp)
		return NULL;
	do {
		if (n == cap) {
			if (cap >= MAX_FILE_BYTES) {
				errno = EFBIG;
				goto fail;
			}
			cap = cap ? cap * 2 : 65536;
			nbuf = realloc(buf, cap);
			if (!nbuf)
				goto fail;
			buf = nbuf;
		}
		got = fread(buf + n, 1, cap - n, fp);
		n += got;
	} while (got);
	if (ferror(fp)) {
		errno = EIO;
		goto fail;
	}
	fclose(fp);
	*len = n;
	return buf;
fail:
	free(buf);
	fclose(fp);
	return NULL;
}

static const char *gid_str(const union ib_gid *gid, char out[INET6_ADDRSTRLEN])
{
	if (!inet_ntop(AF_INET6, gid->raw, out, INET6_ADDRSTRLEN))
		snprintf(out, INET6_ADDRSTRLEN, "?");
	return out;
}

/* ---------------------------------------------------------------- MADs */

/* "MAD SubnMgt(directed-route) Get(SMInfo)" for a datagram on QP0 or QP1. */
static void print_mad(FILE *o, const struct ib_packet *p)
{
	struct ib_mad_hdr h;

	if (!p->payload || p->payload_len < IB_MAD_HDR_BYTES)
		return;
	ib_mad_hdr_decode(&h, p->payload);
	fprintf(o, "  MAD %s %s(%s)", ib_mad_class_str(h.MgmtClass),
	       ib_mad_method_str(ib_mad_method(&h)), ib_mad_attr_str(h.MgmtClass, h.AttributeID));
}

/* ---------------------------------------------------------------- lines */

const char *softib_nak_name(uint8_t code)
{
	switch (code) {
	case IB_NAK_PSN_SEQ_ERR:
		return "PSN sequence error";
	case IB_NAK_INVALID_REQUEST:
		return "invalid request";
	case IB_NAK_REMOTE_ACCESS_ERR:
		return "remote access error";
	case IB_NAK_REMOTE_OP_ERR:
		return "remote operational error";
	case IB_NAK_INVALID_RD_REQUEST:
		return "invalid RD request";
	}
	return "reserved code";
}

static void print_aeth(FILE *o, const struct ib_aeth *a)
{
	uint8_t v = ib_aeth_value(a->Syndrome);

	switch (ib_aeth_kind(a->Syndrome)) {
	case IB_AETH_ACK:
		fprintf(o, "  ACK credit %u", v);
		break;
	case IB_AETH_RNR_NAK:
		fprintf(o, "  RNR NAK timer %u", v);
		break;
	case IB_AETH_NAK:
		fprintf(o, "  NAK %s (%u)", softib_nak_name(v), v);
		break;
	default:
		fprintf(o, "  AETH reserved syndrome 0x%02x", a->Syndrome);
		break;
	}
	fprintf(o, " MSN %u", a->MSN);
}

/* IBA 1.5 FETH: the selectivity level and placement type, by name. */
static void print_feth(FILE *o, const struct ib_feth *f)
{
	fprintf(o, "  SEL %u (%s) PLT 0x%x (", f->SEL,
		f->SEL == IB_FETH_SEL_RANGE	   ? "range"
		: f->SEL == IB_FETH_SEL_REGION ? "region"
					       : "reserved",
		f->PLT);
	if (!f->PLT)
		fprintf(o, "none");
	if (f->PLT & IB_FETH_PLT_GLOBAL)
		fprintf(o, "global%s", f->PLT & ~IB_FETH_PLT_GLOBAL ? "," : "");
	if (f->PLT & IB_FETH_PLT_PERSISTENT)
		fprintf(o, "persistent%s", f->PLT & ~3u ? "," : "");
	if (f->PLT & ~3u)
		fprintf(o, "reserved");
	fprintf(o, ")");
}

/* The extended transport headers' facts, in the order they are carried. */
static void print_eths(FILE *o, const struct ib_packet *p)
{
	bool mad = false;

	for (unsigned i = 0; i < ib_eth_order_count; i++) {
		enum ib_hdr h = ib_eth_order[i];

		if (!(p->headers & IB_HDRBIT(h)))
			continue;
		switch (h) {
		case IB_HDR_RDETH:
			fprintf(o, "  EECnxt 0x%06x", p->rdeth.EECnxt);
			break;
		case IB_HDR_DETH:
			fprintf(o, "  Q_Key 0x%08x SrcQP 0x%06x", p->deth.Q_Key, p->deth.SrcQP);
			mad |= p->deth.SrcQP <= 1;
			break;
		case IB_HDR_XRCETH:
			fprintf(o, "  XRCSRQ 0x%06x", p->xrceth.XRCSRQ);
			break;
		case IB_HDR_RETH:
			fprintf(o, "  VA 0x%016" PRIx64 " R_Key 0x%08x DMALen %u", p->reth.VA,
			       p->reth.R_Key, p->reth.DMALen);
			break;
		case IB_HDR_ATOMICETH:
			fprintf(o, "  VA 0x%016" PRIx64 " R_Key 0x%08x SwapDt 0x%" PRIx64
			       " CmpDt 0x%" PRIx64,
			       p->atomiceth.VA, p->atomiceth.R_Key, p->atomiceth.SwapDt,
			       p->atomiceth.CmpDt);
			break;
		case IB_HDR_AETH:
			print_aeth(o, &p->aeth);
			break;
		case IB_HDR_ATOMICACKETH:
			fprintf(o, "  OrigRemDt 0x%" PRIx64, p->atomicacketh.OrigRemDt);
			break;
		case IB_HDR_IMMDT:
			fprintf(o, "  ImmDt 0x%08x", p->immdt.ImmDt);
			break;
		case IB_HDR_IETH:
			fprintf(o, "  IETH R_Key 0x%08x", p->ieth.R_Key);
			break;
		case IB_HDR_FETH:
			print_feth(o, &p->feth);
			break;
		default:
			break;
		}
	}
	/* QP0 and QP1 carry MADs (IBA 13.5.1): either end may be one. */
	if (mad || p->bth.DestQP <= 1)
		print_mad(o, p);
}

static void print_fields(FILE *o, const struct ib_packet *p, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	fprintf(o, "  %-24s %5u -> %-5u SL%u VL%u", p->op ? p->op->name : "(unknown opcode)",
	       p->lrh.SLID, p->lrh.DLID, p->lrh.SL, p->lrh.VL);
	if (p->has_grh)
		fprintf(o, "  GRH %s -> %s", gid_str(&p->grh.SGID, s), gid_str(&p->grh.DGID, d));
	fprintf(o, "  QP 0x%06x PSN %u  len %zu payload %u", p->bth.DestQP, p->bth.PSN, len,
	       p->payload_len);
	print_eths(o, p);
}

/* The CRC verdicts, computed here from the bytes whatever the decoder said. */
static void print_crcs(FILE *o, const uint8_t *pkt, size_t len, bool *icrc_ok, bool *vcrc_ok)
{
	uint32_t icrc_have, icrc_want;
	uint16_t vcrc_have, vcrc_want;

	*icrc_ok = *vcrc_ok = false;
	if (len < IB_ICRC_BYTES + IB_VCRC_BYTES)
		return;
	icrc_have = ib_icrc_get(pkt, len);
	vcrc_have = ib_vcrc_get(pkt, len);
	/* Separately: the VCRC covers the ICRC as carried, right or wrong. */
	icrc_want = ib_icrc(pkt, len);
	vcrc_want = ib_vcrc(pkt, len);
	if (icrc_have == icrc_want)
		fprintf(o, "  icrc ok");
	else
		fprintf(o, "  ICRC BAD (carried 0x%08x computed 0x%08x)", icrc_have, icrc_want);
	if (vcrc_have == vcrc_want)
		fprintf(o, " vcrc ok");
	else
		fprintf(o, " VCRC BAD (carried 0x%04x computed 0x%04x)", vcrc_have, vcrc_want);
	*icrc_ok = icrc_have == icrc_want;
	*vcrc_ok = vcrc_have == vcrc_want;
}

/* ---------------------------------------------------------------- -v */

/* One line: desc's name, then each field of the decoded struct st. */
static void print_desc_fields(FILE *o, const struct ib_header_desc *desc, const void *st)
{
	char gid[INET6_ADDRSTRLEN];

	fprintf(o, "      %-12s", desc->name);
	for (unsigned i = 0; i < desc->nfields; i++) {
		const struct ib_field_desc *f = &desc->fields[i];

		if (f->bits == 128) {
			union ib_gid g;

			memcpy(g.raw, (const uint8_t *)st + f->offset, sizeof(g.raw));
			fprintf(o, " %s=%s", f->name, gid_str(&g, gid));
		} else if (f->bits > 64) {
			/* Bytes (private data, ARI): up to the last nonzero one. */
			const uint8_t *b = (const uint8_t *)st + f->offset;
			unsigned n = f->size;

			while (n && !b[n - 1])
				n--;
			fprintf(o, " %s=", f->name);
			if (!n)
				fprintf(o, "0");
			for (unsigned j = 0; j < n && j < 32; j++)
				fprintf(o, "%02x", b[j]);
			if (n > 32)
				fprintf(o, "...(%u bytes)", n);
		} else if (f->bits < 8) {
			fprintf(o, " %s=%" PRIu64, f->name, ib_field_get(st, f));
		} else {
			uint64_t v = ib_field_get(st, f);

			/* Hex as IBA draws it; lengths, LIDs and PSNs also in
			 * decimal, as tshark shows them. */
			fprintf(o, " %s=0x%0*" PRIx64, f->name, (f->bits + 3) / 4, v);
			if (f->bits > 8 && f->bits <= 32 && v >= 10)
				fprintf(o, "(%" PRIu64 ")", v);
		}
	}
	fprintf(o, "\n");
}

static void print_header_fields(FILE *o, const struct ib_packet *p, enum ib_hdr h)
{
	const struct ib_header_desc *desc = ib_header_desc(h);
	const uint8_t *st = ib_packet_header(p, h);

	if (desc && st)
		print_desc_fields(o, desc, st);
}

/* A MAD layout decoded from the wire bytes at w, when its struct fits. */
static void print_mad_layout(FILE *o, enum ib_mad_layout layout, const uint8_t *w, size_t avail)
{
	static _Alignas(16) uint8_t st[8192];
	const struct ib_header_desc *desc = ib_mad_layout_desc(layout);

	if (!desc || desc->bytes > avail)
		return;
	for (unsigned i = 0; i < desc->nfields; i++)
		if ((size_t)desc->fields[i].offset + desc->fields[i].size > sizeof(st))
			return;
	memset(st, 0, sizeof(st));
	ib_mad_layout_decode(layout, st, w);
	print_desc_fields(o, desc, st);
}

/* SMP attributes whose layout lives in mgmt/ (they carry endpoints, or
 * trap details): the vendor SoftibMulticastPorts and the Notice of traps
 * 257 and 258.  data: the 64 bytes of SMP Data. */
static void print_smp_extras(FILE *o, const struct ib_mad_hdr *h, const uint8_t *data)
{
	char e[SIB_ENDPOINT_STRLEN];

	if (h->AttributeID == SIB_SMP_ATTR_MULTICAST_PORTS) {
		struct sib_mcast_ports b;

		sib_mcast_ports_decode(&b, data);
		fprintf(o, "      %-12s MLID=0x%04x Block=%u Generation=%u NumPorts=%u Installed=%u",
		       "SoftibMulticastPorts", h->AttributeModifier & 0xffff,
		       h->AttributeModifier >> 16, b.Generation, b.NumPorts, b.Installed);
		for (int i = 0; i < SIB_MCAST_PORTS_PER_BLOCK; i++)
			if (b.ep[i].family)
				fprintf(o, " Port=%s", sib_endpoint_str(&b.ep[i], e));
		fprintf(o, "\n");
	} else if (h->AttributeID == IB_SMP_ATTR_NOTICE) {
		struct ib_notice n;

		ib_notice_decode(&n, data);
		fprintf(o, "      %-12s IsGeneric=%u Type=%u ProducerType=%u TrapNumber=%u IssuerLID=0x%04x "
		       "NoticeCount=%u\n",
		       "Notice", n.IsGeneric, n.Type, n.ProducerType, n.TrapNumber, n.IssuerLID,
		       n.NoticeCount);
		if (n.TrapNumber == IB_TRAP_BAD_P_KEY || n.TrapNumber == 258) {
			struct ib_notice_bad_key d;

			ib_notice_bad_key_decode(&d, n.DataDetails);
			fprintf(o, "      %-12s LID1=0x%04x LID2=0x%04x Key=0x%08x SL=%u QP1=0x%06x "
			       "QP2=0x%06x\n",
			       n.TrapNumber == IB_TRAP_BAD_P_KEY ? "BadP_Key" : "BadQ_Key", d.LID1,
			       d.LID2, d.Key, d.SL, d.QP1, d.QP2);
		}
	}
}

/* A directed-route SMP's route (IBA 14.2.2): direction, HopPointer and
 * HopCount, DrSLID and DrDLID, and the paths' hops 1..HopCount. */
static void print_dr_path(FILE *o, const uint8_t *mad)
{
	struct ib_dr_smp dr;
	unsigned hops;

	ib_dr_smp_decode(&dr, mad);
	hops = dr.HopCount <= IB_SMP_MAX_HOPS ? dr.HopCount : IB_SMP_MAX_HOPS;
	fprintf(o, "      %-12s D=%u HopPointer=%u HopCount=%u DrSLID=0x%04x DrDLID=0x%04x "
	       "InitialPath=",
	       "DirectedRoute", dr.D, dr.HopPointer, dr.HopCount, dr.DrSLID, dr.DrDLID);
	for (unsigned i = 1; i <= hops; i++)
		fprintf(o, "%s%u", i > 1 ? "," : "", dr.InitialPath[i]);
	fprintf(o, "%s ReturnPath=", hops ? "" : "-");
	for (unsigned i = 1; i <= hops; i++)
		fprintf(o, "%s%u", i > 1 ? "," : "", dr.ReturnPath[i]);
	fprintf(o, "%s\n", hops ? "" : "-");
}

/* The MAD header and, for an attribute wire/ knows (CM messages, SA
 * records, SMP attributes), its fields by name. */
static void print_mad_fields(FILE *o, const struct ib_packet *p)
{
	enum ib_mad_layout layout;
	struct ib_mad_hdr h;
	unsigned off;

	if (!p->payload || p->payload_len < IB_MAD_HDR_BYTES)
		return;
	print_mad_layout(o, IB_MAD_LAYOUT_HDR, p->payload, p->payload_len);
	ib_mad_hdr_decode(&h, p->payload);
	if (h.MgmtClass == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE && p->payload_len >= IB_MAD_BYTES)
		print_dr_path(o, p->payload);
	if (ib_mad_attr_layout(h.MgmtClass, h.AttributeID, &layout, &off) && off < p->payload_len)
		print_mad_layout(o, layout, p->payload + off, p->payload_len - off);
	else if (h.MgmtClass == IB_MGMT_CLASS_SUBN_LID_ROUTED && p->payload_len >= IB_MAD_BYTES)
		print_smp_extras(o, &h, p->payload + IB_SMP_DATA_OFFSET);
}

static void print_verbose(FILE *o, const struct ib_packet *p, const struct ib_pcap_record *rec)
{
	fprintf(o, "      %-12s time %" PRIu64 ".%09" PRIu64 " port %u captured %zu of %zu bytes\n",
	       "record", rec->ts_ns / 1000000000u, rec->ts_ns % 1000000000u, rec->port, rec->len,
	       rec->orig_len);
	print_header_fields(o, p, IB_HDR_LRH);
	if (p->has_grh)
		print_header_fields(o, p, IB_HDR_GRH);
	print_header_fields(o, p, IB_HDR_BTH);
	for (unsigned i = 0; i < ib_eth_order_count; i++)
		if (p->headers & IB_HDRBIT(ib_eth_order[i]))
			print_header_fields(o, p, ib_eth_order[i]);
	if (p->bth.DestQP <= 1 || ((p->headers & IB_HDRBIT(IB_HDR_DETH)) && p->deth.SrcQP <= 1))
		print_mad_fields(o, p);
	for (uint32_t off = 0; p->payload && off < p->payload_len; off += 16) {
		fprintf(o, "      %-12s %04x:", off ? "" : "payload", off);
		for (uint32_t i = off; i < off + 16 && i < p->payload_len; i++)
			fprintf(o, " %02x", p->payload[i]);
		fprintf(o, "\n");
	}
	fprintf(o, "      %-12s ICRC=0x%08x VCRC=0x%04x\n", "CRCs", p->ICRC, p->VCRC & 0xffff);
}

/* ---------------------------------------------------------------- packets */

/*
 * A packet whose only fault is a CRC still has readable fields: decode a
 * copy with the CRCs made right, so the line shows what the packet says.
 */
static enum ib_pkt_err decode_ignoring_crcs(const uint8_t *pkt, size_t len, uint8_t *copy,
					    struct ib_packet *p)
{
	uint32_t icrc;
	uint16_t vcrc;

	if (len > IB_MAX_PACKET || len < IB_ICRC_BYTES + IB_VCRC_BYTES)
		return IB_PKT_ERR_TOO_LONG;
	memcpy(copy, pkt, len);
	icrc = ib_icrc(copy, len);
	ib_icrc_put(copy, len, icrc);
	vcrc = ib_vcrc(copy, len);
	ib_vcrc_put(copy, len, vcrc);
	return ib_packet_decode(copy, len, p);
}

/* A raw packet of a softib-switch's cable (wire/cable.h): one line. */
static bool decode_cable(FILE *o, const struct ib_pcap_record *rec)
{
	struct sib_cable_msg m;

	if (sib_cable_decode(rec->pkt, rec->len, &m)) {
		fprintf(o, "  %-24s len %zu  BAD: a cable packet (raw, EtherType 0x%04x) that does not "
		       "decode", "cable", rec->len, SIB_CABLE_ETHERTYPE);
		return false;
	}
	fprintf(o, "  %-24s raw, EtherType 0x%04x", "cable", SIB_CABLE_ETHERTYPE);
	fprintf(o, "  %s", sib_cable_type_name(m.type));
	if (m.id[0])
		fprintf(o, " \"%s\"", m.id);
	if (m.type == SIB_CABLE_ATTACHED)
		fprintf(o, " GUID 0x%016llx port %u, on port %u of switch 0x%016llx, data %s",
		       (unsigned long long)m.node_guid, m.port, m.switch_port,
		       (unsigned long long)m.switch_guid, m.data_mode ? "switched" : "direct");
	if (m.type == SIB_CABLE_REFUSED)
		fprintf(o, ": %s", sib_cable_reason_str(m.reason));
	fprintf(o, "  vcrc ok");
	return true;
}

void softib_decode_record(FILE *o, const struct ib_pcap_record *rec, struct softib_decoded *d)
{
	static uint8_t copy[IB_MAX_PACKET];
	struct ib_packet p;

	memset(d, 0, sizeof(*d));
	d->dropped = rec->port == IB_PCAP_PORT_DROPPED;
	fprintf(o, "%5u", rec->frame);
	if (rec->skip) {
		fprintf(o, "  BAD: %s", rec->skip);
		d->kind = SIB_REC_SKIPPED;
		return;
	}
	if (sib_cable_is(rec->pkt, rec->len)) {
		d->kind = SIB_REC_CABLE;
		d->ok = decode_cable(o, rec);
		return;
	}
	d->kind = SIB_REC_IB;
	memset(&p, 0, sizeof(p));
	d->err = ib_packet_decode(rec->pkt, rec->len, &p);
	d->p = p;
	d->fields = d->err == IB_PKT_OK;
	if (d->err == IB_PKT_ERR_VCRC || d->err == IB_PKT_ERR_ICRC) {
		memset(&d->p, 0, sizeof(d->p));
		d->fields = decode_ignoring_crcs(rec->pkt, rec->len, copy, &d->p) == IB_PKT_OK;
	}
	if (d->fields) {
		d->has_lrh = true;
		d->lrh = d->p.lrh;
		print_fields(o, &d->p, rec->len);
	} else if (rec->len >= IB_LRH_BYTES) {
		d->has_lrh = true;
		ib_lrh_decode(&d->lrh, rec->pkt);
		fprintf(o, "  %-24s %5u -> %-5u SL%u VL%u LNH %u PktLen %u  len %zu", "?",
			d->lrh.SLID, d->lrh.DLID, d->lrh.SL, d->lrh.VL, d->lrh.LNH, d->lrh.PktLen,
			rec->len);
	} else {
		fprintf(o, "  len %zu", rec->len);
	}
	if (rec->len < rec->orig_len)
		fprintf(o, "  (captured %zu of %zu bytes)", rec->len, rec->orig_len);
	print_crcs(o, rec->pkt, rec->len, &d->icrc_ok, &d->vcrc_ok);
	d->ok = d->err == IB_PKT_OK;
	if (!d->ok)
		fprintf(o, "  BAD: %s", ib_pkt_err_str(d->err));
	/* What the faults layer dropped is a packet as good as any, never sent. */
	if (d->dropped)
		fprintf(o, "  DROPPED by SOFTIB_FAULTS (never sent)");
}

static void decode_one(FILE *o, const struct ib_pcap_record *rec, bool verbose, struct tally *t)
{
	struct softib_decoded d;

	t->packets++;
	softib_decode_record(o, rec, &d);
	fprintf(o, "\n");
	if (d.ok)
		t->ok++;
	else
		t->bad++;
	if (d.dropped)
		t->dropped++;
	if (verbose && d.fields)
		print_verbose(o, &d.p, rec);
}

int softib_cmd_decode(int argc, char **argv)
{
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	struct tally t = { 0 };
	const char *path = NULL;
	bool verbose = false, svg = false, opts = true;
	uint8_t *buf;
	size_t len;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (opts && !strcmp(argv[i], "-v")) {
			verbose = true;
		} else if (opts && !strcmp(argv[i], "--svg")) {
			svg = true;
		} else if (opts && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
			decode_usage(stdout);
			return SIB_EXIT_OK;
		} else if (opts && !strcmp(argv[i], "--")) {
			opts = false;
		} else if (opts && argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "softib decode: unknown option '%s'\n", argv[i]);
			decode_usage(stderr);
			return SIB_EXIT_USAGE;
		} else if (!path) {
			path = argv[i];
		} else {
			fprintf(stderr, "softib decode: one FILE only ('%s' is extra)\n", argv[i]);
			return SIB_EXIT_USAGE;
		}
	}
	if (!path) {
		decode_usage(stderr);
		return SIB_EXIT_USAGE;
	}
	if (svg && verbose) {
		fprintf(stderr, "softib decode: -v and --svg do not go together (the drawing's "
				"tooltips hold each packet's line)\n");
		return SIB_EXIT_USAGE;
	}

	buf = softib_read_file(path, &len);
	if (!buf) {
		fprintf(stderr, "softib decode: %s: %s\n", path, strerror(errno));
		return SIB_EXIT_USAGE;
	}
	if (ib_pcap_reader_init(&r, buf, len)) {
		fprintf(stderr, "softib decode: %s: %s\n", path, r.err);
		free(buf);
		return SIB_EXIT_USAGE;
	}
	if (svg) {
		rc = softib_ladder_svg(stdout, path, buf, len);
		free(buf);
		return rc;
	}
	while ((rc = ib_pcap_next(&r, &rec)) == 1)
		decode_one(stdout, &rec, verbose, &t);
	/* Dropped packets are counted ok or bad as any other; the count of
	 * them is added only when there are some, so older readers of the
	 * line keep working. */
	printf("packets: %lu ok: %lu bad: %lu", t.packets, t.ok, t.bad);
	if (t.dropped)
		printf(" dropped: %lu", t.dropped);
	printf("\n");
	free(buf);
	if (rc < 0) {
		fprintf(stderr, "softib decode: %s: record %u: %s\n", path, r.frame + 1, r.err);
		return SIB_EXIT_USAGE;
	}
	return t.bad ? SIB_EXIT_FAIL : SIB_EXIT_OK;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib decode --svg FILE: the capture as a ladder (sequence) diagram, a
 * standalone SVG on stdout.  One lifeline per port (per LID; a multicast
 * LID is a lifeline of its own), one arrow per packet from its sender's
 * lifeline down to its receiver's, rows evenly spaced in capture order
 * (time is in the left margin, not to scale: a few hundred packets stay
 * readable, the drawing just grows taller).
 *
 * Each arrow is a <g class="pkt ..."> with a <title> holding softib
 * decode's line for the packet, so a browser shows it on hover and a test
 * can find what was drawn by class: ack, nak, retransmit (a request whose
 * PSN its flow already sent), dropped (SOFTIB_FAULTS dropped it: ERF
 * port 2), corrupt (bad ICRC or VCRC), mad (QP0/QP1), undecodable,
 * response (an RDMA READ response), request.
 *
 * Two passes: the records become rows and lifelines, then the rows are
 * drawn once the lifelines' places and the labels' width are known.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/decode.h"
#include "tools/softib.h"
#include "wire/mad.h"

#define MAX_LIFELINES 32  /* more ports than this: garbage LIDs, not a capture */
#define MAX_ROWS 20000	  /* beyond that, counted but not drawn */
#define MAX_QPNS 4	  /* QPNs named in a lifeline's header */
#define ROW_H 26	  /* px between two packets' rows */
#define SLOPE 12	  /* px an arrow falls from sender to receiver */
#define LEFT 150	  /* margin for frame numbers and times */
#define TOP 170		  /* title, legend and lifeline headers */
#define CHAR_W 6.4	  /* average width of an 11 px sans-serif character */
#define LANE_MIN 260
#define LANE_MAX 560
#define GAP_NS 10000000u  /* a pause this long (10 ms) gets a line of its own */
#define HEADER_EVERY 40	  /* lifeline names again every so many rows */

enum mark {
	M_ACK = 1u << 0,
	M_NAK = 1u << 1,
	M_RETRANSMIT = 1u << 2,
	M_DROPPED = 1u << 3,
	M_CORRUPT = 1u << 4,
	M_MAD = 1u << 5,
	M_UNDECODABLE = 1u << 6,
	M_RESPONSE = 1u << 7,
	M_REQUEST = 1u << 8,
};

static const struct {
	unsigned bit;
	const char *cls;
} mark_classes[] = {
	{ M_ACK, "ack" },	  { M_NAK, "nak" },	{ M_RETRANSMIT, "retransmit" },
	{ M_DROPPED, "dropped" }, { M_CORRUPT, "corrupt" }, { M_MAD, "mad" },
	{ M_UNDECODABLE, "undecodable" }, { M_RESPONSE, "response" }, { M_REQUEST, "request" },
};

struct lifeline {
	uint16_t lid;
	bool local;	       /* the port that wrote the capture */
	bool has_gid;
	union ib_gid gid;
	unsigned nqpn, more_qpns;
	uint32_t qpn[MAX_QPNS];
};

/* A request flow: its sender, receiver, destination QP and the side of the
 * capture it was seen on, and the highest PSN it sent. */
struct flow {
	int from, to;
	uint32_t qp, max_psn;
	bool received;
};

struct row {
	uint32_t frame;
	uint64_t ts_ns;
	int from, to;
	unsigned marks;
	bool has_psn;
	uint32_t psn;
	char *label; /* opcode, PSN, length */
	char *tag;   /* the marks in words, drawn after the label */
	char *title; /* softib decode's line */
};

struct ladder {
	struct lifeline ll[MAX_LIFELINES];
	unsigned nll;
	struct flow *flows;
	size_t nflows, cap_flows;
	struct row *rows;
	size_t nrows, cap_rows;
	uint16_t local_lid; /* 0: unknown */
	bool directed;	    /* ERF: port 0 sent, 1 received, 2 dropped */
	unsigned long records, not_drawn, too_many, counts[sizeof(mark_classes) /
							   sizeof(mark_classes[0])];
	size_t label_chars; /* the longest label + tag */
};

/* ---------------------------------------------------------------- text */

/* Text for an XML attribute or element: markup escaped, and bytes outside
 * printable ASCII replaced (a packet's strings need not be UTF-8). */
static void xml_text(FILE *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&':
			fputs("&amp;", o);
			break;
		case '<':
			fputs("&lt;", o);
			break;
		case '>':
			fputs("&gt;", o);
			break;
		case '"':
			fputs("&quot;", o);
			break;
		case '\'':
			fputs("&apos;", o);
			break;
		default:
			fputc(c >= 0x20 && c < 0x7f ? c : '?', o);
		}
	}
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, "softib decode: out of memory\n");
		exit(SIB_EXIT_USAGE);
	}
	return d;
}

static void *xgrow(void *p, size_t *cap, size_t elem)
{
	size_t n = *cap ? *cap * 2 : 64;
	void *q = realloc(p, n * elem);

	if (!q) {
		fprintf(stderr, "softib decode: out of memory\n");
		exit(SIB_EXIT_USAGE);
	}
	*cap = n;
	return q;
}

/* Appends printf-style text to buf[0..cap) at *len, cutting at the end. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= cap - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < cap - 1 ? *len + (size_t)n : cap - 1;
}

/* ---------------------------------------------------------------- pass 1 */

static bool unicast(uint16_t lid)
{
	return lid > 0 && lid < 0xc000;
}

/* The lifeline of lid, made on first sight; -1 when there are too many. */
static int lifeline(struct ladder *L, uint16_t lid)
{
	for (unsigned i = 0; i < L->nll; i++)
		if (L->ll[i].lid == lid)
			return (int)i;
	if (L->nll == MAX_LIFELINES)
		return -1;
	L->ll[L->nll] = (struct lifeline){ .lid = lid, .local = L->local_lid && lid == L->local_lid };
	return (int)L->nll++;
}

static void add_qpn(struct lifeline *l, uint32_t qpn)
{
	if (qpn <= 1)
		return; /* every port has QP0 and QP1 */
	for (unsigned i = 0; i < l->nqpn; i++)
		if (l->qpn[i] == qpn)
			return;
	if (l->nqpn < MAX_QPNS)
		l->qpn[l->nqpn++] = qpn;
	else
		l->more_qpns++;
}

/*
 * The capturing port's LID: the commonest unicast SLID of what it sent.
 * Until the SM gives a port its LID, and in directed-route SMPs, its end
 * of a packet is LID 0 or the permissive LID; those are drawn on its
 * lifeline rather than on a lifeline of their own.
 */
static void find_local_lid(struct ladder *L, const uint8_t *buf, size_t len)
{
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	struct {
		uint16_t lid;
		unsigned long n;
	} seen[16] = { { 0, 0 } };
	unsigned best = 0;

	if (ib_pcap_reader_init(&r, buf, len) || r.linktype != IB_PCAP_LINKTYPE_ERF)
		return;
	L->directed = true;
	while (ib_pcap_next(&r, &rec) == 1) {
		struct ib_lrh lrh;
		unsigned i;

		if (rec.skip || rec.port == IB_PCAP_PORT_RECEIVED || rec.len < IB_LRH_BYTES)
			continue;
		ib_lrh_decode(&lrh, rec.pkt);
		if (!unicast(lrh.SLID) || (lrh.LNH != IB_LNH_IBA_LOCAL && lrh.LNH != IB_LNH_IBA_GLOBAL))
			continue;
		for (i = 0; i < 16 && seen[i].n && seen[i].lid != lrh.SLID; i++)
			;
		if (i == 16)
			continue;
		seen[i].lid = lrh.SLID;
		seen[i].n++;
		if (seen[i].n > seen[best].n)
			best = i;
	}
	L->local_lid = seen[best].lid;
}

/* A request PSN its flow already sent: a retransmission (or a duplicate). */
static bool psn_again(struct ladder *L, int from, int to, uint32_t qp, bool received,
		      uint32_t psn)
{
	struct flow *f = NULL;

	for (size_t i = 0; i < L->nflows; i++) {
		struct flow *g = &L->flows[i];

		if (g->from == from && g->to == to && g->qp == qp && g->received == received) {
			f = g;
			break;
		}
	}
	if (!f) {
		if (L->nflows == L->cap_flows)
			L->flows = xgrow(L->flows, &L->cap_flows, sizeof(*L->flows));
		L->flows[L->nflows++] =
			(struct flow){ .from = from, .to = to, .qp = qp, .max_psn = psn,
				       .received = received };
		return false;
	}
	/* 24-bit PSNs: at or behind the highest sent, within half the space. */
	if (((psn - f->max_psn) & 0xffffff) == 0 || ((psn - f->max_psn) & 0xffffff) >= 0x800000)
		return true;
	f->max_psn = psn;
	return false;
}

static bool is_mad(const struct ib_packet *p)
{
	return p->bth.DestQP <= 1 ||
	       ((p->headers & IB_HDRBIT(IB_HDR_DETH)) && p->deth.SrcQP <= 1);
}

/* The row's label, tag and marks from a decoded packet. */
static void describe(struct ladder *L, struct row *rw, const struct softib_decoded *d,
		     bool received)
{
	const struct ib_packet *p = &d->p;
	char label[160], tag[160];
	size_t ll = 0, tl = 0;

	label[0] = tag[0] = 0;
	if (!d->fields) {
		rw->marks |= M_UNDECODABLE;
		append(label, sizeof(label), &ll, "undecodable packet, %u bytes",
		       d->lrh.PktLen * 4u + IB_VCRC_BYTES);
		append(tag, sizeof(tag), &tl, "%s", ib_pkt_err_str(d->err));
	} else if (is_mad(p) && p->payload && p->payload_len >= IB_MAD_HDR_BYTES) {
		struct ib_mad_hdr h;

		ib_mad_hdr_decode(&h, p->payload);
		rw->marks |= M_MAD;
		append(label, sizeof(label), &ll, "MAD %s %s(%s) QP%u", ib_mad_class_str(h.MgmtClass),
		       ib_mad_method_str(ib_mad_method(&h)),
		       ib_mad_attr_str(h.MgmtClass, h.AttributeID), p->bth.DestQP);
	} else {
		const struct ib_opcode_info *op = p->op;

		rw->has_psn = true;
		rw->psn = p->bth.PSN;
		append(label, sizeof(label), &ll, "%s PSN %u len %u",
		       op ? op->name : "unknown opcode", p->bth.PSN, p->payload_len);
		if (p->headers & IB_HDRBIT(IB_HDR_AETH)) {
			uint8_t syn = p->aeth.Syndrome, v = ib_aeth_value(syn);

			switch (ib_aeth_kind(syn)) {
			case IB_AETH_ACK:
				if (op && (op->flags & IB_OPF_ACK))
					rw->marks |= M_ACK;
				append(label, sizeof(label), &ll, " ACK MSN %u", p->aeth.MSN);
				break;
			case IB_AETH_RNR_NAK:
				rw->marks |= M_NAK;
				append(tag, sizeof(tag), &tl, "RNR NAK timer %u", v);
				break;
			case IB_AETH_NAK:
				rw->marks |= M_NAK;
				append(tag, sizeof(tag), &tl, "NAK %s (%u)", softib_nak_name(v), v);
				break;
			default:
				append(tag, sizeof(tag), &tl, "AETH reserved syndrome 0x%02x", syn);
				break;
			}
		}
		if (op && (op->flags & IB_OPF_RESPONSE) && !(rw->marks & (M_ACK | M_NAK)))
			rw->marks |= M_RESPONSE;
		if (op && (op->flags & IB_OPF_REQUEST) && op->transport != IB_TRANSPORT_UD) {
			rw->marks |= M_REQUEST;
			if (psn_again(L, rw->from, rw->to, p->bth.DestQP, received, p->bth.PSN)) {
				rw->marks |= M_RETRANSMIT;
				append(tag, sizeof(tag), &tl, "%sretransmit", tl ? ", " : "");
			}
		}
	}
	if (!d->icrc_ok || !d->vcrc_ok) {
		rw->marks |= M_CORRUPT;
		append(tag, sizeof(tag), &tl, "%sbad %s", tl ? ", " : "",
		       !d->icrc_ok && !d->vcrc_ok ? "ICRC and VCRC" : !d->icrc_ok ? "ICRC" : "VCRC");
	}
	if (d->dropped) {
		rw->marks |= M_DROPPED;
		append(tag, sizeof(tag), &tl, "%sdropped by SOFTIB_FAULTS", tl ? ", " : "");
	}
	rw->label = xstrdup(label);
	rw->tag = xstrdup(tag);
	if (ll + tl + 2 > L->label_chars)
		L->label_chars = ll + tl + 2;
}

/* One record: a row, or a count of what is not drawn. */
static void take(struct ladder *L, const struct ib_pcap_record *rec)
{
	struct softib_decoded d;
	char line[2048];
	struct row rw = { .frame = rec->frame, .ts_ns = rec->ts_ns };
	uint16_t slid, dlid;
	bool sent, received;
	FILE *m;

	L->records++;
	m = fmemopen(line, sizeof(line), "w");
	if (!m) {
		fprintf(stderr, "softib decode: fmemopen: %s\n", strerror(errno));
		exit(SIB_EXIT_USAGE);
	}
	softib_decode_record(m, rec, &d);
	fputc(0, m);
	fclose(m);
	line[sizeof(line) - 1] = 0;
	if (d.kind != SIB_REC_IB || !d.has_lrh) {
		L->not_drawn++;
		return;
	}
	if (L->nrows == MAX_ROWS) {
		L->too_many++;
		return;
	}
	sent = L->directed && rec->port != IB_PCAP_PORT_RECEIVED;
	received = L->directed && rec->port == IB_PCAP_PORT_RECEIVED;
	slid = d.lrh.SLID;
	dlid = d.lrh.DLID;
	if (L->local_lid && sent && !unicast(slid))
		slid = L->local_lid;
	if (L->local_lid && received && (dlid == 0 || dlid == 0xffff))
		dlid = L->local_lid;
	rw.from = lifeline(L, slid);
	rw.to = lifeline(L, dlid);
	if (rw.from < 0 || rw.to < 0) {
		L->not_drawn++;
		return;
	}
	if (d.fields) {
		if (d.p.has_grh && !L->ll[rw.from].has_gid) {
			L->ll[rw.from].has_gid = true;
			L->ll[rw.from].gid = d.p.grh.SGID;
		}
		if (d.p.has_grh && !L->ll[rw.to].has_gid) {
			L->ll[rw.to].has_gid = true;
			L->ll[rw.to].gid = d.p.grh.DGID;
		}
		add_qpn(&L->ll[rw.to], d.p.bth.DestQP);
		if (d.p.headers & IB_HDRBIT(IB_HDR_DETH))
			add_qpn(&L->ll[rw.from], d.p.deth.SrcQP);
	}
	describe(L, &rw, &d, received);
	rw.title = xstrdup(line);
	for (unsigned i = 0; i < sizeof(mark_classes) / sizeof(mark_classes[0]); i++)
		if (rw.marks & mark_classes[i].bit)
			L->counts[i]++;
	if (L->nrows == L->cap_rows)
		L->rows = xgrow(L->rows, &L->cap_rows, sizeof(*L->rows));
	L->rows[L->nrows++] = rw;
}

/* ---------------------------------------------------------------- pass 2 */

/* Colour, dash pattern and width of an arrow, by its strongest mark. */
static void style(unsigned marks, const char **color, const char **dash, double *width)
{
	*dash = NULL;
	*width = 1.3;
	if (marks & M_DROPPED) {
		*color = "#7f7f7f", *dash = "6 3", *width = 1.6;
	} else if (marks & M_CORRUPT) {
		*color = "#9b30d9", *width = 1.8;
	} else if (marks & M_NAK) {
		*color = "#d62728", *width = 2.2;
	} else if (marks & M_RETRANSMIT) {
		*color = "#ff7f0e", *width = 2.2;
	} else if (marks & M_ACK) {
		*color = "#2ca02c", *dash = "5 3";
	} else if (marks & M_UNDECODABLE) {
		*color = "#000000", *dash = "2 2";
	} else if (marks & M_MAD) {
		*color = "#5f7f9f", *width = 1.0;
	} else if (marks & M_RESPONSE) {
		*color = "#17607f";
	} else {
		*color = "#1f4e99";
	}
}

static double lane_x(const struct ladder *L, double lane, unsigned i)
{
	(void)L;
	return LEFT + 40 + lane * i;
}

static void draw_cross(FILE *o, double x, double y, const char *color)
{
	fprintf(o, "<path d=\"M%.1f %.1fl10 10m0 -10l-10 10\" stroke=\"%s\" stroke-width=\"2.4\"/>",
		x - 5, y - 5, color);
}

/* Square root by Newton's method: the build links no libm for one call. */
static double root(double v)
{
	double x = v > 1 ? v : 1;

	for (int i = 0; i < 40; i++)
		x = (x + v / x) / 2;
	return x;
}

/* The arrowhead at (x2, y2), pointing along (x1, y1) -> (x2, y2). */
static void draw_head(FILE *o, double x1, double y1, double x2, double y2, const char *color)
{
	double dx = x2 - x1, dy = y2 - y1, n = root(dx * dx + dy * dy);

	if (n < 1)
		return;
	dx /= n, dy /= n;
	fprintf(o, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>", x2, y2,
		x2 - 9 * dx + 4 * dy, y2 - 9 * dy - 4 * dx, x2 - 9 * dx - 4 * dy,
		y2 - 9 * dy + 4 * dx, color);
}

static void draw_row(FILE *o, const struct ladder *L, const struct row *rw, double lane, double y)
{
	double x1 = lane_x(L, lane, (unsigned)rw->from), x2 = lane_x(L, lane, (unsigned)rw->to);
	double y2 = y + SLOPE, ex = x2, ey = y2, tx;
	const char *color, *dash, *anchor = "middle";
	double width;

	style(rw->marks, &color, &dash, &width);
	fprintf(o, "<g class=\"pkt");
	for (unsigned i = 0; i < sizeof(mark_classes) / sizeof(mark_classes[0]); i++)
		if (rw->marks & mark_classes[i].bit)
			fprintf(o, " %s", mark_classes[i].cls);
	fprintf(o, "\" data-frame=\"%u\"", rw->frame);
	if (rw->has_psn)
		fprintf(o, " data-psn=\"%u\"", rw->psn);
	fprintf(o, "><title>");
	xml_text(o, rw->title);
	fprintf(o, "</title>");
	/* A dropped packet stops halfway, where it was lost. */
	if (rw->marks & M_DROPPED) {
		ex = x1 + (x2 - x1) * 0.55;
		ey = y + (y2 - y) * 0.55;
	}
	if (rw->from == rw->to) {
		/* To itself (loopback): a loop to the right. */
		fprintf(o, "<path d=\"M%.1f %.1fh36v%dh-34\" fill=\"none\" stroke=\"%s\" "
			   "stroke-width=\"%.1f\"%s%s%s/>",
			x1, y, SLOPE, color, width, dash ? " stroke-dasharray=\"" : "",
			dash ? dash : "", dash ? "\"" : "");
		draw_head(o, x1 + 36, y2, x1 + 1, y2, color);
		tx = x1 + 44;
		anchor = "start";
	} else {
		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			   "stroke-width=\"%.1f\"%s%s%s/>",
			x1, y, ex, ey, color, width, dash ? " stroke-dasharray=\"" : "",
			dash ? dash : "", dash ? "\"" : "");
		if (rw->marks & M_DROPPED)
			draw_cross(o, ex, ey, "#d62728");
		else
			draw_head(o, x1, y, x2, y2, color);
		if (rw->marks & M_CORRUPT)
			draw_cross(o, x2 + (x2 > x1 ? -16 : 16), y2, color);
		tx = (x1 + x2) / 2;
	}
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", tx, y - 3, anchor);
	xml_text(o, rw->label);
	if (rw->tag[0]) {
		fprintf(o, "<tspan dx=\"8\" fill=\"%s\" font-weight=\"bold\">", color);
		xml_text(o, rw->tag);
		fprintf(o, "</tspan>");
	}
	fprintf(o, "</text></g>\n");
}

static void lifeline_name(const struct lifeline *l, char *buf, size_t cap)
{
	size_t n = 0;

	if (l->lid >= 0xc000 && l->lid != 0xffff)
		append(buf, cap, &n, "MLID 0x%04x", l->lid);
	else if (l->lid == 0xffff)
		append(buf, cap, &n, "permissive LID");
	else
		append(buf, cap, &n, "LID %u", l->lid);
}

static void draw_headers(FILE *o, const struct ladder *L, double lane, double y, bool full)
{
	for (unsigned i = 0; i < L->nll; i++) {
		const struct lifeline *l = &L->ll[i];
		double x = lane_x(L, lane, i);
		char name[64], line[160];
		size_t n = 0;

		lifeline_name(l, name, sizeof(name));
		if (!full) {
			fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
				   "class=\"again\">%s</text>\n", x, y, name);
			continue;
		}
		fprintf(o, "<g class=\"lifeline\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			   "height=\"54\" rx=\"5\" fill=\"%s\" stroke=\"#555\"/>",
			x - lane * 0.42, y - 16, lane * 0.84, l->local ? "#fff4d6" : "#eef2f8");
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">"
			   "%s%s</text>", x, y, name, l->local ? " (this capture's port)" : "");
		line[0] = 0;
		for (unsigned q = 0; q < l->nqpn; q++)
			append(line, sizeof(line), &n, "%s0x%06x", q ? ", " : "QPN ", l->qpn[q]);
		if (l->more_qpns)
			append(line, sizeof(line), &n, " and %u more", l->more_qpns);
		if (!n)
			append(line, sizeof(line), &n, "%s", l->lid == 0xffff ? "directed route"
										: "QP0/QP1 only");
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y + 15);
		xml_text(o, line);
		fprintf(o, "</text>");
		if (l->has_gid) {
			char gid[64];
			size_t g = 0;

			for (unsigned b = 0; b < 16; b += 2)
				append(gid, sizeof(gid), &g, "%s%02x%02x", b ? ":" : "GID ",
				       l->gid.raw[b], l->gid.raw[b + 1]);
			fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
				   "font-size=\"9\">%s</text>", x, y + 29, gid);
		}
		fprintf(o, "</g>\n");
	}
}

static void draw_legend(FILE *o, const struct ladder *L, const char *path, size_t rows_drawn,
			const char *damaged)
{
	static const struct {
		unsigned marks;
		const char *what;
	} keys[] = {
		{ M_REQUEST, "request" },
		{ M_ACK, "ACK" },
		{ M_NAK, "NAK (RNR or error)" },
		{ M_RETRANSMIT | M_REQUEST, "retransmission (PSN sent before)" },
		{ M_DROPPED, "dropped by SOFTIB_FAULTS" },
		{ M_CORRUPT, "bad ICRC / VCRC" },
		{ M_MAD, "MAD (QP0/QP1)" },
	};
	char s[512];
	size_t n = 0;

	fprintf(o, "<text x=\"12\" y=\"24\" font-size=\"15\" font-weight=\"bold\">softib decode "
		   "--svg ");
	xml_text(o, path);
	fprintf(o, "</text>\n");
	append(s, sizeof(s), &n, "%lu records, %zu drawn: ", L->records, rows_drawn);
	for (unsigned i = 0; i < sizeof(mark_classes) / sizeof(mark_classes[0]); i++)
		if (L->counts[i])
			append(s, sizeof(s), &n, "%lu %s, ", L->counts[i], mark_classes[i].cls);
	if (L->not_drawn)
		append(s, sizeof(s), &n, "%lu not drawn (not IB packets, or too short for an LRH), ",
		       L->not_drawn);
	if (L->too_many)
		append(s, sizeof(s), &n, "%lu not drawn (more than %u rows), ", L->too_many,
		       MAX_ROWS);
	if (n >= 2 && s[n - 2] == ',')
		s[n - 2] = 0;
	fprintf(o, "<text x=\"12\" y=\"44\" class=\"summary\">");
	xml_text(o, s);
	fprintf(o, "</text>\n");
	if (damaged) {
		fprintf(o, "<text x=\"12\" y=\"60\" fill=\"#d62728\" font-weight=\"bold\">"
			   "the file is damaged after the last record drawn: ");
		xml_text(o, damaged);
		fprintf(o, "</text>\n");
	}
	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double x = 12 + (i % 4) * 230, y = 80 + (i / 4) * 20;
		const char *color, *dash;
		double width;

		style(keys[i].marks, &color, &dash, &width);
		fprintf(o, "<g class=\"legend\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s/>",
			x, y, x + 40, y, color, width, dash ? " stroke-dasharray=\"" : "",
			dash ? dash : "", dash ? "\"" : "");
		if (keys[i].marks & M_DROPPED)
			draw_cross(o, x + 40, y, "#d62728");
		else
			draw_head(o, x, y, x + 40, y, color);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n", x + 50, y + 4, keys[i].what);
	}
	fprintf(o, "<text x=\"12\" y=\"%d\" class=\"note\">Rows are in capture order, evenly "
		   "spaced: time runs down the page, to the left as seconds since the first record "
		   "(not to scale). Hover an arrow for its full decode.</text>\n", 80 + 2 * 20);
}

static void draw(FILE *o, const struct ladder *L, const char *path, const char *damaged)
{
	double lane = L->label_chars * CHAR_W + 40;
	double width, height, bottom;
	uint64_t t0 = L->nrows ? L->rows[0].ts_ns : 0;
	unsigned nll = L->nll ? L->nll : 1;

	if (lane < LANE_MIN)
		lane = LANE_MIN;
	if (lane > LANE_MAX)
		lane = LANE_MAX;
	width = lane_x(L, lane, nll - 1) + lane * 0.5 + 80;
	if (width < 960)
		width = 960;
	bottom = TOP + 40 + (double)L->nrows * ROW_H;
	height = bottom + 30;

	fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Verdana, "
		   "Arial, sans-serif\" font-size=\"11\">\n",
		width, height, width, height);
	/* Labels keep a white halo, so they stay legible across lifelines. */
	fprintf(o, "<style>.pkt text{paint-order:stroke;stroke:#fff;stroke-width:3px;"
		   "stroke-linejoin:round} .pkt:hover text{font-weight:bold} "
		   ".again{fill:#999;font-size:9px} .time{fill:#666;font-size:10px} "
		   ".note,.summary{fill:#444}</style>\n");
	fprintf(o, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	draw_legend(o, L, path, L->nrows, damaged);
	for (unsigned i = 0; i < L->nll; i++) {
		double x = lane_x(L, lane, i);

		fprintf(o, "<line class=\"life\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" "
			   "stroke=\"#bbb\" stroke-width=\"1.5\"/>\n", x, TOP, x, bottom);
	}
	draw_headers(o, L, lane, TOP - 4, true);
	for (size_t r = 0; r < L->nrows; r++) {
		const struct row *rw = &L->rows[r];
		double y = TOP + 60 + (double)r * ROW_H;
		uint64_t dt = rw->ts_ns > t0 ? rw->ts_ns - t0 : 0;

		if (r && r % HEADER_EVERY == 0)
			draw_headers(o, L, lane, y - ROW_H / 2.0 - 2, false);
		/* A long pause (a retransmission timeout, say) is said so. */
		if (r && rw->ts_ns > L->rows[r - 1].ts_ns &&
		    rw->ts_ns - L->rows[r - 1].ts_ns >= GAP_NS) {
			double gap = (double)(rw->ts_ns - L->rows[r - 1].ts_ns) / 1e6;

			fprintf(o, "<g class=\"gap\"><line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
				   "stroke=\"#ccc\" stroke-dasharray=\"2 4\"/><text x=\"%.0f\" "
				   "y=\"%.1f\" text-anchor=\"end\" class=\"time\">%.1f ms later</text></g>\n",
				LEFT, y - 16, width - 10, y - 16, width - 10, y - 18, gap);
		}
		fprintf(o, "<text x=\"10\" y=\"%.1f\" class=\"time\">#%u</text>"
			   "<text x=\"%d\" y=\"%.1f\" class=\"time\" text-anchor=\"end\">"
			   "%" PRIu64 ".%06" PRIu64 " s</text>\n",
			y + 4, rw->frame, LEFT, y + 4, dt / 1000000000u, dt % 1000000000u / 1000u);
		draw_row(o, L, rw, lane, y);
	}
	fprintf(o, "</svg>\n");
}

/*
 * Left to right: the capturing port, then the ports it exchanged data with
 * (a QPN other than 0 and 1), then the rest (the SM, directed routes), each
 * group in order of first appearance: the data flows stay side by side.
 */
static void order_lifelines(struct ladder *L)
{
	struct lifeline sorted[MAX_LIFELINES];
	int where[MAX_LIFELINES];
	unsigned n = 0;

	for (int pass = 0; pass < 3; pass++)
		for (unsigned i = 0; i < L->nll; i++) {
			const struct lifeline *l = &L->ll[i];
			int group = l->local ? 0 : l->nqpn ? 1 : 2;

			if (group != pass)
				continue;
			where[i] = (int)n;
			sorted[n++] = *l;
		}
	memcpy(L->ll, sorted, n * sizeof(sorted[0]));
	for (size_t r = 0; r < L->nrows; r++) {
		L->rows[r].from = where[L->rows[r].from];
		L->rows[r].to = where[L->rows[r].to];
	}
}

int softib_ladder_svg(FILE *out, const char *path, const uint8_t *buf, size_t len)
{
	struct ladder *L = calloc(1, sizeof(*L));
	struct ib_pcap_reader r;
	struct ib_pcap_record rec;
	const char *damaged = NULL;
	int rc;

	if (!L || ib_pcap_reader_init(&r, buf, len)) {
		fprintf(stderr, "softib decode: %s: %s\n", path, L ? r.err : strerror(ENOMEM));
		free(L);
		return SIB_EXIT_USAGE;
	}
	find_local_lid(L, buf, len);
	if (L->local_lid)
		lifeline(L, L->local_lid); /* leftmost */
	while ((rc = ib_pcap_next(&r, &rec)) == 1)
		take(L, &rec);
	if (rc < 0)
		damaged = r.err;
	order_lifelines(L);
	draw(out, L, path, damaged);
	fflush(out);
	for (size_t i = 0; i < L->nrows; i++) {
		free(L->rows[i].label);
		free(L->rows[i].tag);
		free(L->rows[i].title);
	}
	free(L->rows);
	free(L->flows);
	free(L);
	if (rc < 0) {
		fprintf(stderr, "softib decode: %s: record %u: %s (drawn up to record %u)\n", path,
			r.frame + 1, r.err, r.frame);
		return SIB_EXIT_USAGE;
	}
	if (ferror(out)) {
		fprintf(stderr, "softib decode: writing the SVG failed\n");
		return SIB_EXIT_USAGE;
	}
	return SIB_EXIT_OK;
}

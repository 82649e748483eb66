/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The topology file reader (topology.h): ibsim's netfile, line by line.
 * Peers are named before they may be defined, so cables are collected as
 * written and joined once every node is known.
 */
#include "fabric/topology.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cable as one line wrote it: NODE[PORT] to PEER[PEER_PORT]. */
struct cable {
	int node;
	unsigned port;
	char peer[SIB_TOPO_ID_MAX + 1];
	unsigned peer_port;
	struct sib_topo_link attrs;
	const char *file;
};

struct parse {
	struct sib_topo *t;
	unsigned cap;
	struct cable *cables;
	unsigned ncables, cables_cap;
	char *err;
	size_t errlen;
	int cur; /* the node whose port lines follow, -1 */
	/* keywords waiting for the next node of their kind */
	uint64_t guid[4], sys_image_guid;
	uint32_t vendor_id;
	uint16_t device_id;
	bool have_sys, have_vendor, have_device;
	uint8_t width, speed, ext_speed; /* width=, speed=, extspeed= */
	unsigned count[4];		 /* nodes of each type so far */
	char *names[SIB_TOPO_MAX_FILES]; /* files read, freed at the end */
	unsigned nnames;
};

static int topo_err(struct parse *p, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->errlen, "%s:%u: ", file, line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* A "quoted" string at s: copied to out (at most SIB_TOPO_ID_MAX bytes),
 * returns what follows the closing quote, NULL when there is none. */
static const char *quoted(const char *s, char *out)
{
	const char *end;

	if (*s != '"')
		return NULL;
	end = strchr(s + 1, '"');
	if (!end || end - s - 1 > SIB_TOPO_ID_MAX)
		return NULL;
	memcpy(out, s + 1, (size_t)(end - s - 1));
	out[end - s - 1] = 0;
	return end + 1;
}

/* [N] at s, N in 1..max; returns what follows, NULL when malformed. */
static const char *port_num(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s != '[' || !isdigit((unsigned char)s[1]))
		return NULL;
	errno = 0;
	v = strtoul(s + 1, &end, 10);
	if (errno || *end != ']' || v == 0 || v > max)
		return NULL;
	*out = (unsigned)v;
	s = end + 1;
	if (*s == '(') { /* ibnetdiscover's (port GUID): informative */
		const char *c = strchr(s, ')');

		if (!c)
			return NULL;
		s = c + 1;
	}
	return s;
}

/* The comment of a line, outside quotes; NULL when none.  The line is cut
 * there. */
static char *cut_comment(char *line)
{
	bool in_q = false;

	for (char *c = line; *c; c++) {
		if (*c == '"')
			in_q = !in_q;
		else if (*c == '#' && !in_q) {
			*c = 0;
			return c + 1;
		}
	}
	return NULL;
}

/* "4xQDR" in ibnetdiscover's comment: width and speed bits. */
static void comment_rate(const char *comment, uint8_t *width, uint8_t *speed, uint8_t *ext)
{
	static const struct {
		const char *name;
		uint8_t speed, ext;
	} speeds[] = {
		{ "SDR", 1, 0 },   { "DDR", 2, 0 },	{ "QDR", 4, 0 },   { "FDR10", 4, 0 },
		{ "FDR", 4, 1 },   { "EDR", 4, 2 },	{ "HDR", 4, 4 },   { "NDR", 4, 8 },
	};
	const char *s = comment;

	while (s && *s) {
		char *end;
		unsigned long w;

		s = skip_ws(s);
		if (isdigit((unsigned char)*s)) {
			w = strtoul(s, &end, 10);
			if (*end == 'x') {
				for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++) {
					size_t n = strlen(speeds[i].name);

					if (strncmp(end + 1, speeds[i].name, n) ||
					    isalnum((unsigned char)end[1 + n]))
						continue;
					*width = w == 1 ? 1 : w == 4 ? 2 : w == 8 ? 4 : w == 12 ? 8 :
						 w == 2 ? 16 : 0;
					*speed = speeds[i].speed;
					*ext = speeds[i].ext;
					return;
				}
			}
		}
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
}

/* lat=: a number and a unit (n, u, m, s; none: ns). */
static bool parse_delay(const char *v, uint64_t *ns)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || d < 0)
		return false;
	if (*end == 'n' || *end == 0)
		;
	else if (*end == 'u')
		d *= 1e3;
	else if (*end == 'm')
		d *= 1e6;
	else if (*end == 's')
		d *= 1e9;
	else
		return false;
	if (*end && end[1] && strcmp(end + 1, "s"))
		return false;
	if (d > 60e9)
		return false;
	*ns = (uint64_t)(d + 0.5);
	return true;
}

/* One NAME=VALUE option of a port line. */
static int port_option(struct parse *p, const char *file, unsigned line, const char *opt,
		       struct sib_topo_link *l, bool *set_w, bool *set_s)
{
	const char *eq = strchr(opt, '=');
	char name[16];
	char *end;
	unsigned long v;
	double g;

	if (!eq || eq == opt || (size_t)(eq - opt) >= sizeof(name))
		return topo_err(p, file, line, "\"%s\" is not NAME=VALUE", opt);
	memcpy(name, opt, (size_t)(eq - opt));
	name[eq - opt] = 0;
	eq++;
	if (!strcmp(name, "w") || !strcmp(name, "s") || !strcmp(name, "e")) {
		errno = 0;
		v = strtoul(eq, &end, 0);
		if (errno || end == eq || *end)
			return topo_err(p, file, line, "%s= needs a number", name);
		if (name[0] == 'w') {
			if (v < 1 || v > 31)
				return topo_err(p, file, line, "w=%lu: LinkWidthEnabled is 1..31", v);
			l->width = (uint8_t)v;
			*set_w = true;
		} else if (name[0] == 's') {
			if (v > 15)
				return topo_err(p, file, line, "s=%lu: LinkSpeedEnabled is 0..15", v);
			l->speed = (uint8_t)(v ? v : 4); /* ibsim: 0 means QDR */
			*set_s = true;
		} else {
			if (v > 31)
				return topo_err(p, file, line, "e=%lu: LinkSpeedExtEnabled is 0..31", v);
			l->ext_speed = (uint8_t)v;
		}
		return 0;
	}
	if (!strcmp(name, "gbit")) {
		errno = 0;
		g = strtod(eq, &end);
		if (errno || end == eq || *end || g <= 0 || g > 10000)
			return topo_err(p, file, line, "gbit=%s: a rate in Gb/s, above 0, at most 10000",
				    eq);
		l->mbit = (uint32_t)(g * 1000 + 0.5);
		if (!l->mbit)
			l->mbit = 1;
		return 0;
	}
	if (!strcmp(name, "lat")) {
		if (!parse_delay(eq, &l->delay_ns))
			return topo_err(p, file, line,
				    "lat=%s: a delay such as 500n, 2u or 1m, at most 60 s", eq);
		return 0;
	}
	if (!strcmp(name, "buf")) {
		errno = 0;
		v = strtoul(eq, &end, 0);
		if (errno || end == eq || *end || v < 64 || v > (1ul << 24))
			return topo_err(p, file, line, "buf=%s: bytes per VL, 64..16777216", eq);
		l->buf = (uint32_t)v;
		return 0;
	}
	return topo_err(p, file, line,
		    "unknown port option %s= (w=, s=, e=, and softib's gbit=, lat=, buf=)", name);
}

static int add_cable(struct parse *p, const struct cable *c)
{
	if (p->ncables == p->cables_cap) {
		unsigned n = p->cables_cap ? p->cables_cap * 2 : 64;
		struct cable *a = realloc(p->cables, n * sizeof(*a));

		if (!a)
			return -1;
		p->cables = a;
		p->cables_cap = n;
	}
	p->cables[p->ncables++] = *c;
	return 0;
}

static int port_line(struct parse *p, const char *file, unsigned line, char *s, const char *comment)
{
	struct sib_topo_node *n = &p->t->node[p->cur];
	struct cable c;
	bool set_w = false, set_s = false;
	const char *q;

	memset(&c, 0, sizeof(c));
	c.node = p->cur;
	c.file = file;
	c.attrs.line = line;
	c.attrs.width = p->width;
	c.attrs.speed = p->speed;
	c.attrs.ext_speed = p->ext_speed;
	q = port_num(s, n->nports, &c.port);
	if (!q)
		return topo_err(p, file, line, "a port line starts with [PORT], 1..%u for \"%s\"",
			    n->nports, n->id);
	q = skip_ws(q);
	q = quoted(q, c.peer);
	if (!q)
		return topo_err(p, file, line, "[%u] needs \"PEER\"[PORT] after it", c.port);
	q = port_num(q, SIB_TOPO_MAX_PORTS, &c.peer_port);
	if (!q)
		return topo_err(p, file, line, "\"%s\" needs its [PORT] right after it", c.peer);
	while (*(q = skip_ws(q))) {
		char opt[64];
		size_t len = strcspn(q, " \t");

		if (len >= sizeof(opt))
			return topo_err(p, file, line, "an option too long");
		memcpy(opt, q, len);
		opt[len] = 0;
		if (port_option(p, file, line, opt, &c.attrs, &set_w, &set_s))
			return -1;
		q += len;
	}
	if (comment && !set_w && !set_s)
		comment_rate(comment, &c.attrs.width, &c.attrs.speed, &c.attrs.ext_speed);
	return add_cable(p, &c) ? topo_err(p, file, line, "out of memory") : 0;
}

static int header_line(struct parse *p, const char *file, unsigned line, const char *s,
		       const char *comment)
{
	static const struct {
		const char *word;
		enum sib_topo_type type;
	} types[] = { { "Switch", SIB_TOPO_SWITCH }, { "Hca", SIB_TOPO_CA },
		      { "Ca", SIB_TOPO_CA },	     { "Rt", SIB_TOPO_ROUTER } };
	struct sib_topo_node *n;
	enum sib_topo_type type = 0;
	unsigned long nports;
	char *end;
	const char *q;
	size_t len = strcspn(s, " \t");

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (len == strlen(types[i].word) && !strncmp(s, types[i].word, len))
			type = types[i].type;
	if (!type)
		return topo_err(p, file, line, "\"%.*s\": a record starts with Switch, Hca, Ca or Rt",
			    (int)(len > 20 ? 20 : len), s);
	s = skip_ws(s + len);
	errno = 0;
	nports = strtoul(s, &end, 10);
	if (errno || end == s || nports < 1 || nports > SIB_TOPO_MAX_PORTS)
		return topo_err(p, file, line, "a node has 1..%u ports", SIB_TOPO_MAX_PORTS);
	if (p->t->nnodes == SIB_TOPO_MAX_NODES)
		return topo_err(p, file, line, "more than %u nodes", SIB_TOPO_MAX_NODES);
	if (p->t->nnodes == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 32;
		struct sib_topo_node *a = realloc(p->t->node, cap * sizeof(*a));

		if (!a)
			return topo_err(p, file, line, "out of memory");
		p->t->node = a;
		p->cap = cap;
	}
	n = &p->t->node[p->t->nnodes];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->nports = (unsigned)nports;
	n->line = line;
	q = quoted(skip_ws(end), n->id);
	if (!q || !n->id[0])
		return topo_err(p, file, line, "a node needs a \"nodeid\" of 1..%u bytes",
			    SIB_TOPO_ID_MAX);
	if (*skip_ws(q))
		return topo_err(p, file, line, "unexpected \"%s\" after the nodeid", skip_ws(q));
	if (sib_topo_find(p->t, n->id) >= 0)
		return topo_err(p, file, line, "\"%s\" is defined twice", n->id);
	n->port = calloc(nports + 1, sizeof(*n->port));
	if (!n->port)
		return topo_err(p, file, line, "out of memory");
	for (unsigned i = 0; i <= nports; i++)
		n->port[i].peer = -1;
	strcpy(n->desc, n->id);
	if (comment) {
		const char *c = skip_ws(comment);

		if (*c == '"')
			quoted(c, n->desc);
		n->enhanced_port0 = strstr(comment, "enhanced port 0") != NULL;
	}
	/* GUIDs: the keyword's, else one per node of each kind, locally
	 * administered (U/L set), room for 255 ports below each. */
	n->node_guid = p->guid[type] ? p->guid[type]
				     : 0x0200000000000000ull | (uint64_t)type << 32 |
					       (uint64_t)(p->count[type] + 1) << 8;
	p->guid[type] = 0;
	n->sys_image_guid = p->have_sys ? p->sys_image_guid : n->node_guid;
	n->vendor_id = p->have_vendor ? p->vendor_id : 0;
	n->device_id = p->have_device ? p->device_id : 0;
	p->have_sys = p->have_vendor = p->have_device = false;
	p->count[type]++;
	p->cur = (int)p->t->nnodes++;
	return 0;
}

static int parse_text(struct parse *p, const char *text, const char *file, const char *dir,
		      unsigned depth);

static int include_file(struct parse *p, const char *file, unsigned line, const char *arg,
			const char *dir, unsigned depth)
{
	char path[PATH_MAX], sub[PATH_MAX];
	char *text, *slash;
	FILE *f;
	long size;
	int rc;

	if (depth >= SIB_TOPO_MAX_INCLUDE)
		return topo_err(p, file, line, "includes nest deeper than %u", SIB_TOPO_MAX_INCLUDE);
	if (p->nnames == SIB_TOPO_MAX_FILES)
		return topo_err(p, file, line, "more than %u files", SIB_TOPO_MAX_FILES);
	if (arg[0] == '/' || !dir)
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, arg);
	f = fopen(path, "r");
	if (!f)
		return topo_err(p, file, line, "include %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || size > (64l << 20) ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return topo_err(p, file, line, "include %s: unreadable or over 64 MiB", path);
	}
	text = malloc((size_t)size + 1);
	if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
		free(text);
		fclose(f);
		return topo_err(p, file, line, "include %s: cannot read it", path);
	}
	fclose(f);
	text[size] = 0;
	if (memchr(text, 0, (size_t)size)) {
		free(text);
		return topo_err(p, file, line, "include %s: not a text file", path);
	}
	p->names[p->nnames] = strdup(path);
	if (!p->names[p->nnames]) {
		free(text);
		return topo_err(p, file, line, "out of memory");
	}
	snprintf(sub, sizeof(sub), "%s", path);
	slash = strrchr(sub, '/');
	if (slash)
		*slash = 0;
	rc = parse_text(p, text, p->names[p->nnames++], slash ? sub : dir, depth + 1);
	free(text);
	return rc;
}

static int keyword_line(struct parse *p, const char *file, unsigned line, char *s,
			const char *dir, unsigned depth)
{
	static const char *const ignored[] = { "pdebug", "module" };
	char *eq = strchr(s, '='), *end;
	unsigned long long v;
	const char *val;
	size_t klen;

	if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
		char *arg = (char *)skip_ws(s + 7), *e = arg + strlen(arg);

		while (e > arg && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		return include_file(p, file, line, arg, dir, depth);
	}
	if (!strncmp(s, "do", 2) && (s[2] == ' ' || s[2] == '\t'))
		return topo_err(p, file, line,
			    "\"do\" runs an ibsim console command; softib-switch runs none: "
			    "use softib fabric once it is up");
	if (!eq)
		return topo_err(p, file, line, "\"%s\" is neither a record, a port line nor "
			    "KEYWORD=VALUE", s);
	klen = (size_t)(eq - s);
	while (klen && (s[klen - 1] == ' ' || s[klen - 1] == '\t'))
		klen--;
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (klen == strlen(ignored[i]) && !strncmp(s, ignored[i], klen))
			return 0;
	val = skip_ws(eq + 1);
	errno = 0;
	v = strtoull(val, &end, 0);
	if (errno || end == val || (*end && *end != '(' && !isspace((unsigned char)*end)))
		return topo_err(p, file, line, "%.*s= needs a number", (int)klen, s);
	if (v == 0 && klen >= 4 && !strncmp(s + klen - 4, "guid", 4))
		return topo_err(p, file, line, "%.*s=0: a GUID is never 0", (int)klen, s);
#define KEY(k) (klen == strlen(k) && !strncmp(s, (k), klen))
	if (KEY("switchguid"))
		p->guid[SIB_TOPO_SWITCH] = v;
	else if (KEY("caguid") || KEY("hcaguid") || KEY("hcaguids"))
		p->guid[SIB_TOPO_CA] = v;
	else if (KEY("rtguid"))
		p->guid[SIB_TOPO_ROUTER] = v;
	else if (KEY("sysimgguid")) {
		p->sys_image_guid = v;
		p->have_sys = true;
	} else if (KEY("vendid")) {
		if (v > 0xffffff)
			return topo_err(p, file, line, "vendid is 24 bits");
		p->vendor_id = (uint32_t)v;
		p->have_vendor = true;
	} else if (KEY("devid")) {
		if (v > 0xffff)
			return topo_err(p, file, line, "devid is 16 bits");
		p->device_id = (uint16_t)v;
		p->have_device = true;
	} else if (KEY("width")) {
		if (v < 1 || v > 31)
			return topo_err(p, file, line, "width=%llu: LinkWidthEnabled is 1..31", v);
		p->width = (uint8_t)v;
	} else if (KEY("speed")) {
		if (v > 15)
			return topo_err(p, file, line, "speed=%llu: LinkSpeedEnabled is 0..15", v);
		p->speed = (uint8_t)(v ? v : 4);
	} else if (KEY("extspeed")) {
		if (v > 31)
			return topo_err(p, file, line, "extspeed=%llu: LinkSpeedExtEnabled is 0..31", v);
		p->ext_speed = (uint8_t)v;
	} else {
		return topo_err(p, file, line, "unknown keyword %.*s", (int)klen, s);
	}
#undef KEY
	return 0;
}

static int parse_text(struct parse *p, const char *text, const char *file, const char *dir,
		      unsigned depth)
{
	unsigned line = 0;

	p->cur = -1;
	while (*text) {
		size_t len = strcspn(text, "\n");
		char buf[1024], *s, *comment, *e;

		line++;
		if (len >= sizeof(buf))
			return topo_err(p, file, line, "a line longer than %zu bytes", sizeof(buf) - 1);
		memcpy(buf, text, len);
		buf[len] = 0;
		text += len + (text[len] == '\n');
		comment = cut_comment(buf);
		e = buf + strlen(buf);
		while (e > buf && isspace((unsigned char)e[-1]))
			*--e = 0;
		s = (char *)skip_ws(buf);
		if (!*s) {
			/* a blank line ends a record; a comment line does not */
			if (!comment)
				p->cur = -1;
			continue;
		}
		if (*s == '[') {
			if (p->cur < 0)
				return topo_err(p, file, line, "a port line outside a record");
			if (port_line(p, file, line, s, comment))
				return -1;
			continue;
		}
		if (isupper((unsigned char)s[0]) && strchr(s, '"')) {
			if (header_line(p, file, line, s, comment))
				return -1;
			continue;
		}
		p->cur = -1;
		if (keyword_line(p, file, line, s, dir, depth))
			return -1;
	}
	p->cur = -1;
	return 0;
}

/* Join the cables written to the ports at both of their ends. */
static int join_cables(struct parse *p)
{
	struct sib_topo *t = p->t;

	for (unsigned i = 0; i < p->ncables; i++) {
		const struct cable *c = &p->cables[i];
		struct sib_topo_node *a = &t->node[c->node];
		int bi = sib_topo_find(t, c->peer);
		struct sib_topo_node *b;
		struct sib_topo_link *la = &a->port[c->port], *lb;
		unsigned line = c->attrs.line;

		if (bi < 0)
			return topo_err(p, c->file, line, "\"%s\"[%u] is cabled to \"%s\", which no "
				    "record defines", a->id, c->port, c->peer);
		b = &t->node[bi];
		if (c->peer_port > b->nports)
			return topo_err(p, c->file, line, "\"%s\" has %u ports, not %u", b->id,
				    b->nports, c->peer_port);
		if (bi == c->node && c->peer_port == c->port)
			return topo_err(p, c->file, line, "\"%s\"[%u] is cabled to itself", a->id,
				    c->port);
		lb = &b->port[c->peer_port];
		if (la->peer >= 0 && (la->peer != bi || la->peer_port != c->peer_port))
			return topo_err(p, c->file, line, "\"%s\"[%u] is cabled to \"%s\"[%u] and to "
				    "\"%s\"[%u] (line %u)", a->id, c->port, c->peer, c->peer_port,
				    t->node[la->peer].id, la->peer_port, la->line);
		if (lb->peer >= 0 && (lb->peer != c->node || lb->peer_port != c->port))
			return topo_err(p, c->file, line, "\"%s\"[%u] is cabled to \"%s\"[%u] and to "
				    "\"%s\"[%u] (line %u)", b->id, c->peer_port, a->id, c->port,
				    t->node[lb->peer].id, lb->peer_port, lb->line);
		if (la->peer >= 0) {
			/* written at both ends: the second says the same cable */
			if (la->mbit != c->attrs.mbit || la->delay_ns != c->attrs.delay_ns ||
			    la->buf != c->attrs.buf)
				return topo_err(p, c->file, line, "the cable \"%s\"[%u] - \"%s\"[%u] has "
					    "other gbit=, lat= or buf= at line %u", a->id, c->port,
					    b->id, c->peer_port, la->line);
			continue;
		}
		*la = c->attrs;
		la->peer = bi;
		la->peer_port = (uint8_t)c->peer_port;
		*lb = c->attrs;
		lb->peer = c->node;
		lb->peer_port = (uint8_t)c->port;
	}
	return 0;
}

static int check_guids(struct parse *p, const char *name)
{
	struct sib_topo *t = p->t;

	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned j = 0; j < i; j++) {
			uint64_t a = t->node[i].node_guid, b = t->node[j].node_guid;
			unsigned an = t->node[i].type == SIB_TOPO_CA ? t->node[i].nports : 0;
			unsigned bn = t->node[j].type == SIB_TOPO_CA ? t->node[j].nports : 0;

			/* a CA's port GUIDs follow its node GUID */
			if (a <= b + bn && b <= a + an)
				return topo_err(p, name, t->node[i].line, "\"%s\" and \"%s\" (line %u) "
					    "share GUIDs", t->node[i].id, t->node[j].id,
					    t->node[j].line);
		}
	return 0;
}

static void parse_init(struct parse *p, struct sib_topo *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	memset(p, 0, sizeof(*p));
	p->t = t;
	p->err = err;
	p->errlen = errlen;
	p->cur = -1;
	if (errlen)
		err[0] = 0;
}

/* After the text: cables joined, GUIDs checked, the parser's memory freed;
 * on error nothing is kept. */
static int parse_finish(struct parse *p, const char *name, int rc)
{
	if (!rc)
		rc = join_cables(p);
	if (!rc && !p->t->nnodes)
		rc = topo_err(p, name, 1, "no Switch, Hca or Rt record");
	if (!rc)
		rc = check_guids(p, name);
	free(p->cables);
	for (unsigned i = 0; i < p->nnames; i++)
		free(p->names[i]);
	if (rc)
		sib_topo_free(p->t);
	return rc;
}

int sib_topo_parse(struct sib_topo *t, const char *text, const char *name, const char *dir,
		   char *err, size_t errlen)
{
	struct parse p;

	parse_init(&p, t, err, errlen);
	return parse_finish(&p, name, parse_text(&p, text, name, dir, 0));
}

int sib_topo_load(struct sib_topo *t, const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX], *slash;
	struct parse p;

	parse_init(&p, t, err, errlen);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	/* the file itself is read as an include at depth 0 */
	return parse_finish(&p, path,
			    include_file(&p, path, 0, slash ? slash + 1 : path, slash ? dir : NULL,
					 0));
}

void sib_topo_free(struct sib_topo *t)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		free(t->node[i].port);
	free(t->node);
	memset(t, 0, sizeof(*t));
}

int sib_topo_find(const struct sib_topo *t, const char *id)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		if (!strcmp(t->node[i].id, id))
			return (int)i;
	return -1;
}

uint64_t sib_topo_port_guid(const struct sib_topo_node *n, unsigned port)
{
	return n->type == SIB_TOPO_CA ? n->node_guid + port : n->node_guid;
}

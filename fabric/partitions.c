/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * partitions.conf (partitions.h): the parser and a port's P_Key table.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fabric/partitions.h"

void sib_partitions_default(struct sib_partitions *out)
{
	memset(out, 0, sizeof(*out));
	out->n = 1;
	snprintf(out->p[0].name, sizeof(out->p[0].name), "Default");
	out->p[0].pkey = SIB_PKEY_DEFAULT_PARTITION;
	out->p[0].nmembers = 1;
	out->p[0].members[0] = (struct sib_partition_member){ .all = true, .m = SIB_MEMBER_FULL };
}

/* Trims white space at both ends, in place. */
static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static unsigned line_of(const char *text, const char *at)
{
	unsigned n = 1;

	for (const char *p = text; p < at; p++)
		n += *p == '\n';
	return n;
}

static bool membership(const char *s, enum sib_membership *m)
{
	if (!strcasecmp(s, "full"))
		*m = SIB_MEMBER_FULL;
	else if (!strcasecmp(s, "limited"))
		*m = SIB_MEMBER_LIMITED;
	else if (!strcasecmp(s, "both"))
		*m = SIB_MEMBER_BOTH;
	else
		return false;
	return true;
}

static bool number(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return *s && !*end && !errno && *v <= max;
}

static struct sib_partition *by_pkey(struct sib_partitions *ps, uint16_t pkey)
{
	for (unsigned i = 0; i < ps->n; i++)
		if (ps->p[i].pkey == pkey)
			return &ps->p[i];
	return NULL;
}

/* The header "Name[=PKey][,flag]..."; *defm gets defmember. */
static int parse_header(char *h, struct sib_partitions *ps, struct sib_partition **out,
			enum sib_membership *defm, char *err, size_t err_len, unsigned line)
{
	char *save = NULL, *tok = strtok_r(h, ",", &save);
	char *name = trim(tok ? tok : h), *eq = strchr(name, '=');
	unsigned long long v = 0;
	struct sib_partition *p;
	bool ipoib = false;

	*defm = SIB_MEMBER_LIMITED;
	if (eq) {
		*eq = 0;
		if (!number(trim(eq + 1), 0xffff, &v) || !(v & 0x7fff)) {
			snprintf(err, err_len, "line %u: P_Key '%s' is not 0x0001..0x7fff", line,
				 trim(eq + 1));
			return -EINVAL;
		}
		v &= 0x7fff; /* the membership bit is the port's, not the partition's */
	}
	name = trim(name);
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *f = trim(tok), *val = strchr(f, '=');

		if (val)
			*val++ = 0;
		f = trim(f);
		if (!strcasecmp(f, "ipoib")) {
			ipoib = true;
		} else if (!strcasecmp(f, "defmember")) {
			if (!val || !membership(trim(val), defm)) {
				snprintf(err, err_len, "line %u: defmember is full, limited or both",
					 line);
				return -EINVAL;
			}
		} else if (!strcasecmp(f, "mtu") || !strcasecmp(f, "rate") || !strcasecmp(f, "sl") ||
			   !strcasecmp(f, "scope") || !strcasecmp(f, "indx0")) {
			if (!val) {
				snprintf(err, err_len, "line %u: %s needs a value", line, f);
				return -EINVAL;
			}
		} else {
			snprintf(err, err_len, "line %u: unknown partition flag '%s'", line, f);
			return -EINVAL;
		}
	}
	if (!eq) {
		/* OpenSM generates a P_Key; a softib subnet wants them stated
		 * (two hosts' SMs must agree). */
		snprintf(err, err_len, "line %u: partition '%s' needs a P_Key (Name=0x....)", line,
			 name);
		return -EINVAL;
	}
	p = by_pkey(ps, (uint16_t)v);
	if (!p) {
		if (ps->n == SIB_PARTITIONS_MAX) {
			snprintf(err, err_len, "line %u: more than %d partitions", line,
				 SIB_PARTITIONS_MAX);
			return -EINVAL;
		}
		p = &ps->p[ps->n++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", name);
		p->pkey = (uint16_t)v;
	}
	p->ipoib |= ipoib;
	*out = p;
	return 0;
}

static int parse_members(char *list, struct sib_partition *p, enum sib_membership defm, char *err,
			 size_t err_len, unsigned line)
{
	char *save = NULL;

	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *m = trim(tok), *val = strchr(m, '=');
		struct sib_partition_member mem = { .m = defm };
		unsigned long long guid;

		if (val) {
			*val++ = 0;
			if (!membership(trim(val), &mem.m)) {
				snprintf(err, err_len,
					 "line %u: membership '%s' is full, limited or both", line,
					 trim(val));
				return -EINVAL;
			}
		}
		m = trim(m);
		if (!*m)
			continue;
		if (!strcasecmp(m, "ALL") || !strcasecmp(m, "ALL_CAS")) {
			mem.all = true;
		} else if (!strcasecmp(m, "SELF") || !strcasecmp(m, "ALL_SWITCHES") ||
			   !strcasecmp(m, "ALL_ROUTERS")) {
			continue; /* no such ports on a softib subnet */
		} else if (number(m, UINT64_MAX, &guid) && guid) {
			mem.guid = guid;
		} else {
			snprintf(err, err_len, "line %u: '%s' is not a port GUID, ALL or SELF", line,
				 m);
			return -EINVAL;
		}
		if (p->nmembers == SIB_PARTITION_MEMBERS_MAX) {
			snprintf(err, err_len, "line %u: more than %d members in partition 0x%04x",
				 line, SIB_PARTITION_MEMBERS_MAX, p->pkey);
			return -EINVAL;
		}
		p->members[p->nmembers++] = mem;
	}
	return 0;
}

int sib_partitions_parse(const char *text, struct sib_partitions *out, char *err, size_t err_len)
{
	char *buf = strdup(text), *w, *stmt;
	const char *at = text;
	int rc = 0;

	if (!buf) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	memset(out, 0, sizeof(*out));
	/* Comments go first: '#' to the end of the line. */
	for (w = buf; *w; w++) {
		if (*w != '#')
			continue;
		while (*w && *w != '\n')
			*w++ = ' ';
		if (!*w)
			break;
	}
	for (stmt = buf; !rc && *stmt;) {
		char *end, *colon;
		unsigned line;

		while (isspace((unsigned char)*stmt))
			stmt++; /* the line a definition starts on names it */
		if (!*stmt)
			break;
		end = strchr(stmt, ';');
		line = line_of(text, at + (stmt - buf));
		struct sib_partition *p;
		enum sib_membership defm;

		if (!end) {
			if (*trim(stmt))
				rc = -EINVAL, snprintf(err, err_len, "line %u: a definition without ';'",
						       line);
			break;
		}
		*end = 0;
		if (!*trim(stmt)) {
			stmt = end + 1;
			continue;
		}
		colon = strchr(stmt, ':');
		if (!colon) {
			snprintf(err, err_len, "line %u: a definition without ':'", line);
			rc = -EINVAL;
			break;
		}
		*colon = 0;
		rc = parse_header(stmt, out, &p, &defm, err, err_len, line);
		if (!rc)
			rc = parse_members(colon + 1, p, defm, err, err_len, line);
		stmt = end + 1;
	}
	free(buf);
	if (!rc && !out->n) {
		snprintf(err, err_len, "no partition defined");
		rc = -EINVAL;
	}
	return rc;
}

static enum sib_membership member_of(const struct sib_partition *p, uint64_t guid)
{
	unsigned m = 0;

	for (unsigned i = 0; i < p->nmembers; i++)
		if (p->members[i].all || p->members[i].guid == guid)
			m |= p->members[i].m; /* listed twice: both memberships */
	return (enum sib_membership)m;
}

static void add(uint16_t *pkeys, unsigned max, unsigned *n, uint16_t v)
{
	for (unsigned i = 0; i < *n && i < max; i++)
		if (pkeys[i] == v)
			return;
	if (*n < max)
		pkeys[*n] = v;
	(*n)++;
}

static void add_partition(const struct sib_partition *p, uint64_t guid, uint16_t *pkeys,
			  unsigned max, unsigned *n)
{
	enum sib_membership m = member_of(p, guid);

	if (m & SIB_MEMBER_FULL)
		add(pkeys, max, n, (uint16_t)(p->pkey | 0x8000));
	if (m & SIB_MEMBER_LIMITED)
		add(pkeys, max, n, p->pkey);
}

unsigned sib_partitions_table(const struct sib_partitions *ps, uint64_t guid, uint16_t *pkeys,
			      unsigned max)
{
	unsigned n = 0;

	memset(pkeys, 0, max * sizeof(*pkeys));
	for (unsigned i = 0; i < ps->n; i++)
		if (ps->p[i].pkey == SIB_PKEY_DEFAULT_PARTITION)
			add_partition(&ps->p[i], guid, pkeys, max, &n);
	for (unsigned i = 0; i < ps->n; i++)
		if (ps->p[i].pkey != SIB_PKEY_DEFAULT_PARTITION)
			add_partition(&ps->p[i], guid, pkeys, max, &n);
	return n;
}

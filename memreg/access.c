/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * memreg_check: the one place that decides whether an access through an
 * L_Key or R_Key is allowed (IBA 10.6 for regions and windows).  Checks run
 * key, window state, QP, PD, rights, bounds; the first refusal is reported.
 */
#include <inttypes.h>
#include <stdio.h>

#include "memreg/table.h"

static const char *const memreg_verdict_names[MEMREG_VERDICT_COUNT] = {
	[MEMREG_OK] = "allowed",
	[MEMREG_NO_KEY] = "key index not in use",
	[MEMREG_STALE_KEY] = "key portion does not match (stale key)",
	[MEMREG_WINDOW_AS_LKEY] = "memory window R_Key used as an L_Key",
	[MEMREG_WINDOW_UNBOUND] = "memory window is not bound",
	[MEMREG_WINDOW_OTHER_QP] = "type 2 memory window is bound to another QP",
	[MEMREG_WRONG_PD] = "region is in another PD than the QP",
	[MEMREG_OUT_OF_BOUNDS] = "access outside the region",
	[MEMREG_NO_RIGHT] = "region lacks the access right",
	[MEMREG_NOT_MAPPED] = "no page is mapped there (on-demand region)",
	[MEMREG_BIND_NOT_WINDOW] = "key to bind is not a memory window",
	[MEMREG_BIND_WRONG_VERB] = "type 2 windows are bound by a bind work request only",
	[MEMREG_BIND_TYPE2_BOUND] = "type 2 window is already bound (invalidate it first)",
	[MEMREG_BIND_TYPE2_EMPTY] = "a type 2 window is bound with a length (IBA o10-37.2.40); "
				    "it is invalidated with a local invalidate",
	[MEMREG_BIND_NO_MR] = "MR to bind to does not exist",
	[MEMREG_BIND_MR_NO_MW_BIND] = "MR was registered without IBV_ACCESS_MW_BIND",
	[MEMREG_BIND_OUTSIDE_MR] = "window does not lie within the MR",
	[MEMREG_BIND_NEEDS_LOCAL_WRITE] =
		"remote write or atomic on a window needs LOCAL_WRITE on the MR",
	[MEMREG_BIND_BAD_ACCESS] = "unknown window access flags",
	[MEMREG_BIND_WRONG_PD] = "window, MR and QP must be in one PD",
	[MEMREG_INV_NOT_TYPE2] = "only type 2 memory windows can be invalidated",
	[MEMREG_INV_WRONG_PD] = "window to invalidate is in another PD than the QP",
	[MEMREG_INV_OTHER_QP] = "window is bound to another QP than the invalidating one",
};

const char *memreg_verdict_str(enum memreg_verdict v)
{
	if ((unsigned)v >= MEMREG_VERDICT_COUNT || !memreg_verdict_names[v])
		return "unknown verdict";
	return memreg_verdict_names[v];
}

/* Is [va, va+len) inside [lo, lo+size)?  No sum can wrap. */
static bool memreg_in_bounds(uint64_t lo, uint64_t size, uint64_t va, uint64_t len)
{
	if (len == 0)
		return true; /* touches no byte: see memreg.h */
	if (va < lo)
		return false;
	return va - lo <= size && len <= size - (va - lo);
}

enum memreg_verdict memreg_check(struct memreg_table *t, const struct memreg_request *req,
				 struct memreg_grant *grant)
{
	enum memreg_verdict v;
	struct memreg_slot *s, *mr;
	uint64_t lo, size;
	uintptr_t base;

	grant->host = NULL;
	grant->on_demand = false;
	grant->lo = grant->hi = 0;
	grant->have = 0;
	grant->held[0] = grant->held[1] = NULL;

	pthread_mutex_lock(&t->lock);
	s = memreg_slot_lookup(t, req->key, &v);
	if (!s)
		goto out;
	if (s->kind == MEMREG_SLOT_MW) {
		if (!req->remote) {
			v = MEMREG_WINDOW_AS_LKEY;
			goto out;
		}
		if (!s->bound) {
			v = MEMREG_WINDOW_UNBOUND;
			goto out;
		}
		mr = s->mr;
		lo = (s->access & MEMREG_ACCESS_ZERO_BASED) ? 0 : s->mw_addr;
		size = s->mw_length;
		base = (uintptr_t)mr->host + (uintptr_t)(s->mw_addr - mr->iova);
	} else {
		mr = s;
		lo = s->iova;
		size = s->length;
		base = (uintptr_t)s->host; /* NULL for an implicit ODP region */
	}
	grant->lo = lo;
	grant->hi = lo + size;
	grant->have = s->access;
	grant->on_demand = (mr->access & MEMREG_ACCESS_ON_DEMAND) != 0;
	if (s->kind == MEMREG_SLOT_MW && s->mw_type == MEMREG_MW_TYPE_2 && s->qpn != req->qpn) {
		v = MEMREG_WINDOW_OTHER_QP;
		goto out;
	}
	if (s->pd != req->pd) {
		v = MEMREG_WRONG_PD;
		goto out;
	}
	if ((s->access & req->access) != req->access) {
		v = MEMREG_NO_RIGHT;
		goto out;
	}
	if (!memreg_in_bounds(lo, size, req->va, req->len)) {
		v = MEMREG_OUT_OF_BOUNDS;
		goto out;
	}
	/* A zero-length access outside the region gets a harmless address.
	 * Integer sums: an implicit region's base is NULL. */
	grant->host = (uint8_t *)(req->len ? base + (uintptr_t)(req->va - lo) : base);
	s->holds++;
	grant->held[0] = s;
	if (mr != s) {
		mr->holds++;
		grant->held[1] = mr;
	}
	v = MEMREG_OK;
out:
	pthread_mutex_unlock(&t->lock);
	return v;
}

void memreg_release(struct memreg_table *t, struct memreg_grant *grant)
{
	bool wake = false;

	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < 2; i++) {
		struct memreg_slot *s = grant->held[i];

		if (s && --s->holds == 0)
			wake = true;
		grant->held[i] = NULL;
	}
	/* Every packet's grant ends here: wake only a dereg that waits. */
	if (wake && t->waiting)
		pthread_cond_broadcast(&t->released);
	pthread_mutex_unlock(&t->lock);
	grant->host = NULL;
}

int memreg_explain(const struct memreg_request *req, enum memreg_verdict v,
		   const struct memreg_grant *grant, char *buf, size_t size)
{
	const char *kind = req->remote ? "rkey" : "lkey";

	switch (v) {
	case MEMREG_OUT_OF_BOUNDS:
		return snprintf(buf, size,
				"%s 0x%06" PRIx32 ": va 0x%" PRIx64 " len %" PRIu64
				" outside [0x%" PRIx64 ", 0x%" PRIx64 ")",
				kind, req->key, req->va, req->len, grant->lo, grant->hi);
	case MEMREG_NOT_MAPPED:
		return snprintf(buf, size,
				"%s 0x%06" PRIx32 ": va 0x%" PRIx64 " len %" PRIu64 ": %s", kind,
				req->key, req->va, req->len, memreg_verdict_str(v));
	case MEMREG_NO_RIGHT:
		return snprintf(buf, size,
				"%s 0x%06" PRIx32 ": needs access 0x%" PRIx32 ", region grants 0x%" PRIx32,
				kind, req->key, req->access, grant->have);
	default:
		return snprintf(buf, size, "%s 0x%06" PRIx32 ": %s", kind, req->key,
				memreg_verdict_str(v));
	}
}

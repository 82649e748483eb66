/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory windows (IBA 10.6.7): allocate, bind, invalidate, deallocate.
 * Type 1 windows are bound with the Bind Memory Window verb (ibv_bind_mw),
 * which may rebind a bound window and unbinds it at length 0; type 2 windows
 * are bound with a Bind work request, only while invalid, to the QP that
 * posted it, and become invalid again through Local Invalidate or Send with
 * Invalidate (IBA 10.6.7).
 */
#include <errno.h>

#include "memreg/table.h"

#define MEMREG_MW_KNOWN_ACCESS                                                                     \
	(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ |      \
	 MEMREG_ACCESS_REMOTE_ATOMIC | MEMREG_ACCESS_MW_BIND | MEMREG_ACCESS_ZERO_BASED)
/* What a window itself grants: local rights belong to the MR, not the window. */
#define MEMREG_MW_RIGHTS                                                                           \
	(MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ | MEMREG_ACCESS_REMOTE_ATOMIC |    \
	 MEMREG_ACCESS_ZERO_BASED)

int memreg_mw_alloc(struct memreg_table *t, uint32_t pd, unsigned type, uint32_t *rkey)
{
	struct memreg_slot *s;

	/* IBA defines types 1 and 2 only (ibv_alloc_mw(3): 1 or 2A/2B). */
	if (type != MEMREG_MW_TYPE_1 && type != MEMREG_MW_TYPE_2)
		return EINVAL;
	pthread_mutex_lock(&t->lock);
	s = memreg_slot_alloc(t, MEMREG_SLOT_MW);
	if (!s) {
		pthread_mutex_unlock(&t->lock);
		return ENOMEM;
	}
	s->mw_type = type;
	s->pd = pd;
	*rkey = memreg_slot_key(s);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/*
 * Make a bound window invalid.  No new access gets through it from now on;
 * one already granted keeps its hold on the MR beneath, so the MR cannot be
 * deregistered under it, and no wait is needed here.
 */
static void memreg_mw_unbind(struct memreg_slot *w)
{
	if (!w->bound)
		return;
	w->bound = false;
	w->mr->bound_windows--;
	w->mr = NULL;
	w->access = 0;
	w->mw_addr = 0;
	w->mw_length = 0;
	w->qpn = 0;
}

int memreg_mw_dealloc(struct memreg_table *t, uint32_t rkey)
{
	struct memreg_slot *w;

	pthread_mutex_lock(&t->lock);
	w = memreg_slot_lookup_index(t, rkey);
	if (!w || w->kind != MEMREG_SLOT_MW) {
		pthread_mutex_unlock(&t->lock);
		return EINVAL;
	}
	w->dying = true;
	memreg_mw_unbind(w);
	memreg_slot_wait_unheld(t, w);
	memreg_slot_free(t, w);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static enum memreg_verdict memreg_mw_bind_locked(struct memreg_table *t,
						 const struct memreg_bind *b)
{
	enum memreg_verdict why;
	struct memreg_slot *w, *mr;
	uint64_t off;

	/* The window is named by its handle (the index): a type 2 bind changes
	 * key8 without the verbs object necessarily learning of it. */
	w = memreg_slot_lookup_index(t, b->mw_rkey);
	if (!w)
		return MEMREG_NO_KEY;
	if (w->kind != MEMREG_SLOT_MW)
		return MEMREG_BIND_NOT_WINDOW;
	/* Type 2 windows are bound only by a Bind work request (IBA 10.6.7);
	 * a type 1 bind may also come as a work request, as on hardware,
	 * where ibv_bind_mw itself posts one. */
	if (w->mw_type == MEMREG_MW_TYPE_2 && !b->by_wr)
		return MEMREG_BIND_WRONG_VERB;
	/* IBA 10.6.7: the window must be in the PD of the QP binding it. */
	if (w->pd != b->pd)
		return MEMREG_BIND_WRONG_PD;
	if (w->mw_type == MEMREG_MW_TYPE_2 && w->bound)
		return MEMREG_BIND_TYPE2_BOUND;
	/* IBA o10-37.2.40: a type 2 bind names a region and a length; only a
	 * type 1 window is invalidated by binding nothing (rxe agrees). */
	if (w->mw_type == MEMREG_MW_TYPE_2 && (b->length == 0 || !b->mr_lkey))
		return MEMREG_BIND_TYPE2_EMPTY;
	if (w->mw_type == MEMREG_MW_TYPE_1 && b->length == 0) {
		/* A zero-length bind invalidates a type 1 window (ibv_alloc_mw(3)). */
		memreg_mw_unbind(w);
		w->key8 = (uint8_t)MEMREG_KEY_KEY8(b->new_rkey);
		return MEMREG_OK;
	}
	if (b->access & ~(uint32_t)MEMREG_MW_KNOWN_ACCESS)
		return MEMREG_BIND_BAD_ACCESS;
	mr = memreg_slot_lookup(t, b->mr_lkey, &why);
	if (!mr || mr->kind != MEMREG_SLOT_MR)
		return MEMREG_BIND_NO_MR;
	if (mr->pd != b->pd)
		return MEMREG_BIND_WRONG_PD;
	if (!(mr->access & MEMREG_ACCESS_MW_BIND))
		return MEMREG_BIND_MR_NO_MW_BIND;
	/* ibv_bind_mw(3): remote write/atomic through a window
	 * needs local write on the region beneath. */
	if ((b->access & (MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & MEMREG_ACCESS_LOCAL_WRITE))
		return MEMREG_BIND_NEEDS_LOCAL_WRITE;
	if (b->addr < mr->iova)
		return MEMREG_BIND_OUTSIDE_MR;
	off = b->addr - mr->iova;
	if (off > mr->length || b->length > mr->length - off)
		return MEMREG_BIND_OUTSIDE_MR;

	/* A type 1 window may be rebound: let go of the old region first. */
	memreg_mw_unbind(w);
	w->bound = true;
	w->mr = mr;
	mr->bound_windows++;
	w->mw_addr = b->addr;
	w->mw_length = b->length;
	w->access = b->access & MEMREG_MW_RIGHTS;
	w->qpn = b->qpn;
	/* Only the new R_Key's key byte is the consumer's; the index stays
	 * the window's.  mlx5 and rxe read only that byte, and programs
	 * written for them pass anything above it. */
	w->key8 = (uint8_t)MEMREG_KEY_KEY8(b->new_rkey);
	return MEMREG_OK;
}

enum memreg_verdict memreg_mw_bind(struct memreg_table *t, const struct memreg_bind *b)
{
	enum memreg_verdict v;

	pthread_mutex_lock(&t->lock);
	v = memreg_mw_bind_locked(t, b);
	pthread_mutex_unlock(&t->lock);
	return v;
}

enum memreg_verdict memreg_mw_invalidate(struct memreg_table *t, uint32_t rkey, bool remote,
					 uint32_t qpn, uint32_t pd)
{
	enum memreg_verdict v = MEMREG_OK;
	struct memreg_slot *w;

	pthread_mutex_lock(&t->lock);
	w = memreg_slot_lookup(t, rkey, &v);
	if (!w)
		goto out;
	if (w->kind != MEMREG_SLOT_MW || w->mw_type != MEMREG_MW_TYPE_2)
		v = MEMREG_INV_NOT_TYPE2;
	else if (!w->bound)
		v = MEMREG_WINDOW_UNBOUND;
	else if (remote && w->qpn != qpn)
		v = MEMREG_INV_OTHER_QP;
	else if (!remote && w->pd != pd)
		v = MEMREG_INV_WRONG_PD;
	else
		memreg_mw_unbind(w);
out:
	pthread_mutex_unlock(&t->lock);
	return v;
}

int memreg_mw_query(struct memreg_table *t, uint32_t rkey, unsigned *type, uint32_t *pd,
		    bool *bound)
{
	struct memreg_slot *w;
	int err = EINVAL;

	pthread_mutex_lock(&t->lock);
	w = memreg_slot_lookup_index(t, rkey);
	if (w && w->kind == MEMREG_SLOT_MW) {
		if (type)
			*type = w->mw_type;
		if (pd)
			*pd = w->pd;
		if (bound)
			*bound = w->bound;
		err = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return err;
}

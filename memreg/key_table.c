/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The L_Key/R_Key table (IBA 10.6): 24-bit index + 8-bit key.  Freed indices
 * are reused first-in first-out, so a stale key has the longest possible time
 * before its index comes back, and then it carries a different key8.
 */
#include <errno.h>
#include <stdlib.h>

#include "memreg/table.h"

#define MEMREG_FIRST_CAP 64u

struct memreg_table *memreg_table_create(uint32_t max_mr, uint32_t max_mw)
{
	struct memreg_table *t;
	uint64_t limit = (uint64_t)max_mr + max_mw;

	if (limit == 0) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->index_limit = limit > MEMREG_MAX_INDEX ? MEMREG_MAX_INDEX : (uint32_t)limit;
	t->max_mr = max_mr;
	t->max_mw = max_mw;
	t->nslots = 1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->released, NULL);
	return t;
}

void memreg_table_destroy(struct memreg_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 1; i < t->nslots; i++)
		free(t->slots[i]);
	free(t->slots);
	pthread_cond_destroy(&t->released);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

uint32_t memreg_mr_count(struct memreg_table *t)
{
	uint32_t n;

	pthread_mutex_lock(&t->lock);
	n = t->n_mr;
	pthread_mutex_unlock(&t->lock);
	return n;
}

uint32_t memreg_mw_count(struct memreg_table *t)
{
	uint32_t n;

	pthread_mutex_lock(&t->lock);
	n = t->n_mw;
	pthread_mutex_unlock(&t->lock);
	return n;
}

static struct memreg_slot *memreg_slot_new(struct memreg_table *t)
{
	struct memreg_slot *s;

	if (t->nslots > t->index_limit)
		return NULL;
	if (t->nslots >= t->cap) {
		uint64_t cap = t->cap ? (uint64_t)t->cap * 2 : MEMREG_FIRST_CAP;
		struct memreg_slot **grown;

		if (cap > (uint64_t)t->index_limit + 1)
			cap = (uint64_t)t->index_limit + 1;
		grown = realloc(t->slots, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		grown[0] = NULL;
		t->slots = grown;
		t->cap = (uint32_t)cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->index = t->nslots;
	/* Start key8 at a value derived from the index so that keys of a
	 * fresh table are not all (index << 8) | 1. */
	s->key8 = (uint8_t)(s->index * 37u);
	t->slots[t->nslots++] = s;
	return s;
}

struct memreg_slot *memreg_slot_alloc(struct memreg_table *t, enum memreg_slot_kind kind)
{
	struct memreg_slot *s;

	if ((kind == MEMREG_SLOT_MR && t->n_mr >= t->max_mr) ||
	    (kind == MEMREG_SLOT_MW && t->n_mw >= t->max_mw)) {
		errno = ENOMEM;
		return NULL;
	}
	if (t->free_head) {
		s = t->slots[t->free_head];
		t->free_head = s->next_free;
		if (!t->free_head)
			t->free_tail = 0;
	} else {
		s = memreg_slot_new(t);
		if (!s) {
			errno = ENOMEM;
			return NULL;
		}
	}
	/* IBA 10.6: the key portion changes on every reuse of the index. */
	s->key8++;
	s->kind = kind;
	s->dying = false;
	s->holds = 0;
	s->next_free = 0;
	s->pd = 0;
	s->access = 0;
	s->host = NULL;
	s->iova = 0;
	s->length = 0;
	s->bound_windows = 0;
	s->mw_type = 0;
	s->bound = false;
	s->mr = NULL;
	s->mw_addr = 0;
	s->mw_length = 0;
	s->qpn = 0;
	if (kind == MEMREG_SLOT_MR)
		t->n_mr++;
	else
		t->n_mw++;
	return s;
}

void memreg_slot_free(struct memreg_table *t, struct memreg_slot *s)
{
	if (s->kind == MEMREG_SLOT_MR)
		t->n_mr--;
	else if (s->kind == MEMREG_SLOT_MW)
		t->n_mw--;
	s->kind = MEMREG_SLOT_FREE;
	s->dying = false;
	s->next_free = 0;
	if (t->free_tail)
		t->slots[t->free_tail]->next_free = s->index;
	else
		t->free_head = s->index;
	t->free_tail = s->index;
}

struct memreg_slot *memreg_slot_lookup(struct memreg_table *t, uint32_t key,
				       enum memreg_verdict *why)
{
	uint32_t index = MEMREG_KEY_INDEX(key);
	struct memreg_slot *s;

	if (index == 0 || index >= t->nslots) {
		*why = MEMREG_NO_KEY;
		return NULL;
	}
	s = t->slots[index];
	if (s->kind == MEMREG_SLOT_FREE || s->dying) {
		*why = MEMREG_NO_KEY;
		return NULL;
	}
	if (s->key8 != MEMREG_KEY_KEY8(key)) {
		*why = MEMREG_STALE_KEY;
		return NULL;
	}
	*why = MEMREG_OK;
	return s;
}

struct memreg_slot *memreg_slot_lookup_index(struct memreg_table *t, uint32_t key)
{
	uint32_t index = MEMREG_KEY_INDEX(key);
	struct memreg_slot *s;

	if (index == 0 || index >= t->nslots)
		return NULL;
	s = t->slots[index];
	return s->kind == MEMREG_SLOT_FREE || s->dying ? NULL : s;
}

void memreg_slot_wait_unheld(struct memreg_table *t, struct memreg_slot *s)
{
	t->waiting++;
	while (s->holds)
		pthread_cond_wait(&t->released, &t->lock);
	t->waiting--;
}

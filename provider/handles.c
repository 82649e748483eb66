/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Object memory that outlives its object (handles.h): the set of live
 * objects, a header before each object, and per kind a FIFO of dead shells,
 * oldest first.
 */
#include "provider/handles.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* Before each object: where its pool finds it once it is dead. */
struct obj_hdr {
	_Alignas(16) uint32_t kind;
	size_t size;
	struct obj_hdr *next; /* in its kind's pool, while dead */
};

static struct pool {
	pthread_mutex_t lock;
	struct obj_hdr *head, *tail;
	unsigned n;
} pools[SIB_OBJ_KINDS] = {
	[0 ... SIB_OBJ_KINDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/*
 * The live objects, a set of addresses (open addressing, linear probing):
 * whether a pointer names a live object is answered without reading the
 * memory it points to, so a forged pointer or a copy of an object is
 * refused as surely as a destroyed one.
 */
enum { EMPTY = 0, TOMB = 1 };
static struct {
	pthread_mutex_t lock;
	uintptr_t *slot;
	size_t cap, used, tombs;
} live = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t slot_of(uintptr_t p, size_t cap)
{
	return (size_t)(((p >> 4) * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The slot holding p, or SIZE_MAX.  Under live.lock. */
static size_t live_find(uintptr_t p)
{
	if (!live.cap)
		return SIZE_MAX;
	for (size_t i = slot_of(p, live.cap);; i = (i + 1) & (live.cap - 1)) {
		if (live.slot[i] == p)
			return i;
		if (live.slot[i] == EMPTY)
			return SIZE_MAX;
	}
}

/* Adds p; false when the table cannot grow.  Under live.lock. */
static bool live_add(uintptr_t p)
{
	size_t i;

	if ((live.used + live.tombs + 1) * 2 > live.cap) {
		size_t cap = live.cap ? live.cap : 64;
		uintptr_t *old = live.slot;
		size_t old_cap = live.cap;

		while ((live.used + 1) * 2 > cap / 2)
			cap *= 2;
		live.slot = calloc(cap, sizeof(*live.slot));
		if (!live.slot) {
			live.slot = old;
			return false;
		}
		live.cap = cap;
		live.tombs = 0;
		for (size_t j = 0; j < old_cap; j++)
			if (old[j] > TOMB) {
				for (i = slot_of(old[j], cap); live.slot[i]; i = (i + 1) & (cap - 1))
					;
				live.slot[i] = old[j];
			}
		free(old);
	}
	for (i = slot_of(p, live.cap); live.slot[i] > TOMB; i = (i + 1) & (live.cap - 1))
		;
	if (live.slot[i] == TOMB)
		live.tombs--;
	live.slot[i] = p;
	live.used++;
	return true;
}

static struct obj_hdr *hdr_of(const void *obj)
{
	return (struct obj_hdr *)obj - 1;
}

void *sib_obj_new(enum sib_obj_kind kind, size_t size)
{
	struct pool *p = &pools[kind];
	struct obj_hdr *h = NULL;
	bool added;

	pthread_mutex_lock(&p->lock);
	if (p->n > SIB_OBJ_QUARANTINE && p->head->size >= size) {
		h = p->head;
		p->head = h->next;
		if (!p->head)
			p->tail = NULL;
		p->n--;
	}
	pthread_mutex_unlock(&p->lock);
	if (h) {
		memset(h + 1, 0, h->size);
	} else {
		h = calloc(1, sizeof(*h) + size);
		if (!h) {
			errno = ENOMEM;
			return NULL;
		}
		h->size = size;
		h->kind = kind;
	}
	h->next = NULL;
	pthread_mutex_lock(&live.lock);
	added = live_add((uintptr_t)(h + 1));
	pthread_mutex_unlock(&live.lock);
	if (!added) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h + 1;
}

/* Takes obj out of the live set: false when it was not in it. */
static bool live_remove(const void *obj)
{
	size_t i;

	pthread_mutex_lock(&live.lock);
	i = live_find((uintptr_t)obj);
	if (i != SIZE_MAX) {
		live.slot[i] = TOMB;
		live.used--;
		live.tombs++;
	}
	pthread_mutex_unlock(&live.lock);
	return i != SIZE_MAX;
}

int sib_obj_claim(void *obj, const char *verb)
{
	if (live_remove(obj))
		return 0;
	sib_warn("%s: %p is not a live object of this process (destroyed already, being "
		 "destroyed by another thread, or never made by this device)",
		 verb, obj);
	errno = ENOENT;
	return ENOENT;
}

void sib_obj_keep(void *obj)
{
	pthread_mutex_lock(&live.lock);
	/* It was in the table a moment ago; only a rehash that finds no
	 * memory can fail, and then the object stays, refused (ENOENT). */
	(void)live_add((uintptr_t)obj);
	pthread_mutex_unlock(&live.lock);
}

void sib_obj_destroyed(void *obj)
{
	struct obj_hdr *h = hdr_of(obj);
	struct pool *p = &pools[h->kind];

	pthread_mutex_lock(&p->lock);
	h->next = NULL;
	if (p->tail)
		p->tail->next = h;
	else
		p->head = h;
	p->tail = h;
	p->n++;
	pthread_mutex_unlock(&p->lock);
}

void sib_obj_discard(void *obj)
{
	live_remove(obj);
	free(hdr_of(obj));
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Private to memreg/: the key table's slots.  One slot per 24-bit key index;
 * a slot is allocated once and kept (its key8 survives a free, so that the
 * next owner of the index gets a different key) until the table is destroyed,
 * which also keeps a held slot's memory valid whatever happens to its key.
 */
#ifndef SIB_MEMREG_TABLE_H
#define SIB_MEMREG_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "memreg/memreg.h"

enum memreg_slot_kind {
	MEMREG_SLOT_FREE,
	MEMREG_SLOT_MR,
	MEMREG_SLOT_MW,
};

struct memreg_slot {
	uint32_t index;
	uint8_t key8;     /* key portion of the current (or last) key */
	enum memreg_slot_kind kind;
	bool dying;       /* being deregistered/changed: no new checks succeed */
	uint32_t holds;   /* grants outstanding (memreg_check .. memreg_release) */
	uint32_t next_free;
	uint32_t pd;
	uint32_t access;  /* MR: its rights; MW: the window's rights */

	/* MR */
	uint8_t *host;
	uint64_t iova;
	uint64_t length;
	uint32_t bound_windows;

	/* MW */
	unsigned mw_type;
	bool bound;
	struct memreg_slot *mr; /* the MR a bound window lies in */
	uint64_t mw_addr;       /* window start, in the MR's address space */
	uint64_t mw_length;
	uint32_t qpn;           /* type 2: the QP it is bound to */
};

struct memreg_table {
	pthread_mutex_t lock;
	pthread_cond_t released; /* a slot's holds dropped to 0 */
	uint32_t waiting;	 /* threads waiting on released */
	struct memreg_slot **slots; /* [0] unused: index 0 is never handed out */
	uint32_t nslots;            /* slots created, including [0] */
	uint32_t cap;               /* length of slots[] */
	uint32_t index_limit;       /* highest index that may ever exist */
	uint32_t free_head, free_tail; /* FIFO of freed indices, 0 = empty */
	uint32_t max_mr, max_mw, n_mr, n_mw;
};

/* All below: call with t->lock held. */

/* A free slot with a fresh key8, or NULL (ENOMEM: limit or allocation). */
struct memreg_slot *memreg_slot_alloc(struct memreg_table *t, enum memreg_slot_kind kind);
void memreg_slot_free(struct memreg_table *t, struct memreg_slot *s);
/* The live slot a key names, or NULL and *why = NO_KEY or STALE_KEY. */
struct memreg_slot *memreg_slot_lookup(struct memreg_table *t, uint32_t key,
				       enum memreg_verdict *why);
/* The live slot of key's index whatever its key8, or NULL. */
struct memreg_slot *memreg_slot_lookup_index(struct memreg_table *t, uint32_t key);
/* Sleep (dropping the lock) until s has no holds. */
void memreg_slot_wait_unheld(struct memreg_table *t, struct memreg_slot *s);

static inline uint32_t memreg_slot_key(const struct memreg_slot *s)
{
	return MEMREG_KEY(s->index, s->key8);
}

#endif

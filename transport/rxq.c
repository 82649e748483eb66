/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rxq.h"

struct sib_rxq_entry {
	struct sib_rxq_entry *next;
	bool has_from;
	struct sib_endpoint from;
	uint64_t since;	      /* when it began to wait for its source; 0: it has not */
	struct ib_packet pkt; /* its payload points at payload[] below */
	uint8_t payload[];
};

void sib_rxq_init(struct sib_rxq *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
}

static void free_list(struct sib_rxq_entry *e)
{
	while (e) {
		struct sib_rxq_entry *next = e->next;

		free(e);
		e = next;
	}
}

void sib_rxq_fini(struct sib_rxq *q)
{
	free_list(q->head);
	q->head = q->tail = NULL;
	q->n = 0;
	pthread_mutex_destroy(&q->lock);
}

bool sib_rxq_blocks(struct sib_rxq *q, uint16_t slid)
{
	bool found = false;

	if (!__atomic_load_n(&q->n, __ATOMIC_ACQUIRE))
		return false; /* the usual case: no lock */
	pthread_mutex_lock(&q->lock);
	for (struct sib_rxq_entry *e = q->head; e && !found; e = e->next)
		found = e->pkt.lrh.SLID == slid;
	pthread_mutex_unlock(&q->lock);
	return found;
}

static bool add(struct sib_rxq *q, const struct ib_packet *pkt, const struct sib_endpoint *from,
		uint64_t since)
{
	struct sib_rxq_entry *e;

	if (__atomic_load_n(&q->n, __ATOMIC_RELAXED) >= SIB_RXQ_MAX)
		return false;
	e = malloc(sizeof(*e) + pkt->payload_len);
	if (!e)
		return false;
	e->next = NULL;
	e->has_from = from != NULL;
	if (from)
		e->from = *from;
	e->since = since;
	e->pkt = *pkt;
	memcpy(e->payload, pkt->payload, pkt->payload_len);
	e->pkt.payload = e->payload;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	if (since && (!q->oldest || since < q->oldest))
		q->oldest = since;
	__atomic_store_n(&q->stalled, false, __ATOMIC_RELAXED);
	__atomic_store_n(&q->n, q->n + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&q->lock);
	/* Pairs with the fence of a holder letting the QP go (sib_qp_unlock):
	 * either it sees this entry, or this thread's trylock finds it gone. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return true;
}

bool sib_rxq_add(struct sib_rxq *q, const struct ib_packet *pkt, const struct sib_endpoint *from)
{
	return add(q, pkt, from, 0);
}

bool sib_rxq_add_waiting(struct sib_rxq *q, const struct ib_packet *pkt,
			 const struct sib_endpoint *from, uint64_t now)
{
	return add(q, pkt, from, now ? now : 1);
}

/* Whether an entry of list (the ones kept so far) comes from slid. */
static bool slid_kept(const struct sib_rxq_entry *list, uint16_t slid)
{
	for (; list; list = list->next)
		if (list->pkt.lrh.SLID == slid)
			return true;
	return false;
}

void sib_rxq_run(struct sib_rxq *q, uint64_t now, sib_rxq_apply_fn apply, void *arg)
{
	struct sib_rxq_entry *list, *keep = NULL, *keep_last = NULL;
	unsigned done = 0;
	uint64_t oldest = 0;
	bool arrived;

	pthread_mutex_lock(&q->lock);
	list = q->head;
	q->head = q->tail = NULL;
	pthread_mutex_unlock(&q->lock);
	while (list) {
		struct sib_rxq_entry *e = list;
		bool last = e->since && now - e->since >= SIB_RXQ_WAIT_NS;

		list = e->next;
		e->next = NULL;
		if (!slid_kept(keep, e->pkt.lrh.SLID) &&
		    apply(arg, &e->pkt, e->has_from ? &e->from : NULL, last) == SIB_RXQ_DONE) {
			free(e);
			done++;
			continue;
		}
		if (!e->since)
			e->since = now ? now : 1;
		if (!oldest || e->since < oldest)
			oldest = e->since;
		if (keep_last)
			keep_last->next = e;
		else
			keep = e;
		keep_last = e;
	}
	pthread_mutex_lock(&q->lock);
	arrived = q->head != NULL;
	for (struct sib_rxq_entry *e = q->head; e; e = e->next)
		if (e->since && (!oldest || e->since < oldest))
			oldest = e->since;
	/* What waits on goes back in front of what came meanwhile. */
	if (keep) {
		keep_last->next = q->head;
		if (!q->head)
			q->tail = keep_last;
		q->head = keep;
	}
	q->oldest = oldest;
	__atomic_store_n(&q->n, q->n - done, __ATOMIC_RELEASE);
	/* Stalled: only what waits for its source is left, and nothing came
	 * meanwhile (an arrival clears it again). */
	__atomic_store_n(&q->stalled, keep && !arrived, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&q->lock);
}

void sib_rxq_wake(struct sib_rxq *q)
{
	__atomic_store_n(&q->stalled, false, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

uint64_t sib_rxq_deadline(struct sib_rxq *q)
{
	uint64_t d;

	if (!__atomic_load_n(&q->n, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&q->lock);
	d = q->oldest ? q->oldest + SIB_RXQ_WAIT_NS : 0;
	pthread_mutex_unlock(&q->lock);
	return d;
}

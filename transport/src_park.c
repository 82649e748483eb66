/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stdlib.h>
#include <string.h>

#include "transport/src_park.h"

struct sib_parked {
	struct sib_parked *next;
	struct sib_endpoint from;
	uint64_t since;
	struct ib_packet pkt; /* its payload points at payload[] below */
	uint8_t payload[];
};

void sib_park_init(struct sib_park *pk)
{
	memset(pk, 0, sizeof(*pk));
	pthread_mutex_init(&pk->lock, NULL);
	pthread_mutex_init(&pk->run, NULL);
}

void sib_park_fini(struct sib_park *pk)
{
	struct sib_parked *p = pk->head;

	while (p) {
		struct sib_parked *next = p->next;

		free(p);
		p = next;
	}
	pk->head = pk->tail = NULL;
	pthread_mutex_destroy(&pk->lock);
	pthread_mutex_destroy(&pk->run);
}

static bool park_add(struct sib_park *pk, const struct ib_packet *pkt,
		     const struct sib_endpoint *from, uint64_t now, bool behind)
{
	struct sib_parked *p;

	pthread_mutex_lock(&pk->lock);
	if (pk->n >= SIB_PARK_MAX || (behind && !pk->n)) {
		pthread_mutex_unlock(&pk->lock);
		return false;
	}
	__atomic_add_fetch(&pk->n, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pk->lock);
	p = malloc(sizeof(*p) + pkt->payload_len);
	if (!p) {
		pthread_mutex_lock(&pk->lock);
		__atomic_sub_fetch(&pk->n, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&pk->lock);
		return false;
	}
	p->next = NULL;
	p->from = *from;
	p->since = now;
	p->pkt = *pkt;
	memcpy(p->payload, pkt->payload, pkt->payload_len);
	p->pkt.payload = p->payload;
	pthread_mutex_lock(&pk->lock);
	if (pk->tail)
		pk->tail->next = p;
	else
		pk->head = p;
	pk->tail = p;
	pthread_mutex_unlock(&pk->lock);
	return true;
}

bool sib_park_add(struct sib_park *pk, const struct ib_packet *pkt, const struct sib_endpoint *from,
		  uint64_t now)
{
	return park_add(pk, pkt, from, now, false);
}

bool sib_park_add_behind(struct sib_park *pk, const struct ib_packet *pkt,
			 const struct sib_endpoint *from, uint64_t now)
{
	return park_add(pk, pkt, from, now, true);
}

/* Whether an entry of list waits for the same SLID. */
static bool slid_waits(const struct sib_parked *list, uint16_t slid)
{
	for (; list; list = list->next)
		if (list->pkt.lrh.SLID == slid)
			return true;
	return false;
}

void sib_park_run(struct sib_park *pk, struct sib_engine *eng, uint64_t now,
		  sib_park_deliver_fn deliver)
{
	struct sib_parked *list, *keep = NULL, **keep_tail = &keep;

	if (pthread_mutex_trylock(&pk->run))
		return;
	pthread_mutex_lock(&pk->lock);
	list = pk->head;
	pk->head = pk->tail = NULL;
	pthread_mutex_unlock(&pk->lock);
	while (list) {
		struct sib_parked *p = list;
		bool last = now - p->since >= SIB_PARK_MAX_NS;

		list = p->next;
		/* Never ahead of an earlier one from its source. */
		if ((!last && slid_waits(keep, p->pkt.lrh.SLID)) ||
		    !deliver(eng, &p->pkt, &p->from, last)) {
			p->next = NULL;
			*keep_tail = p;
			keep_tail = &p->next;
			continue;
		}
		pthread_mutex_lock(&pk->lock);
		__atomic_sub_fetch(&pk->n, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&pk->lock);
		free(p);
	}
	if (!keep) {
		pthread_mutex_unlock(&pk->run);
		return;
	}
	/* What still waits goes back in front of what came meanwhile. */
	pthread_mutex_lock(&pk->lock);
	*keep_tail = pk->head;
	pk->head = keep;
	if (!pk->tail) {
		struct sib_parked *t = keep;

		while (t->next)
			t = t->next;
		pk->tail = t;
	}
	pthread_mutex_unlock(&pk->lock);
	pthread_mutex_unlock(&pk->run);
}

uint64_t sib_park_deadline(struct sib_park *pk, uint64_t now)
{
	uint64_t d;

	pthread_mutex_lock(&pk->lock);
	d = pk->head ? now + SIB_PARK_RECHECK_NS : 0;
	pthread_mutex_unlock(&pk->lock);
	return d;
}

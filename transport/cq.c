/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/caps.h"
#include "transport/cq.h"
#include "base/log.h"

struct sib_cq {
	pthread_mutex_t lock;
	uint32_t cqe;      /* granted capacity */
	struct sib_cqe *ring;
	uint32_t ring_cap; /* allocated slots, <= cqe, grows by doubling */
	uint32_t head;     /* oldest entry */
	uint32_t count;
	bool error;
	bool timestamps;
	enum sib_cq_arm arm;
	unsigned users;
	struct sib_event_sink *sink;
	void *user;
	sib_cq_comp_hook hook;
};

/* One HCA per process (docs/architecture.md section 3): CQs in existence, against max_cq. */
static unsigned cq_count;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sib_cq_create(const struct sib_cq_init *init, struct sib_cq **out)
{
	struct sib_cq *cq;

	if (!init->cqe || init->cqe > SIB_MAX_CQE)
		return EINVAL;
	if (__atomic_add_fetch(&cq_count, 1, __ATOMIC_RELAXED) > SIB_MAX_CQ) {
		__atomic_sub_fetch(&cq_count, 1, __ATOMIC_RELAXED);
		return ENOMEM;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		__atomic_sub_fetch(&cq_count, 1, __ATOMIC_RELAXED);
		return ENOMEM;
	}
	pthread_mutex_init(&cq->lock, NULL);
	cq->cqe = init->cqe;
	cq->timestamps = init->timestamps;
	cq->sink = init->sink;
	cq->user = init->user;
	cq->hook = init->hook;
	*out = cq;
	return 0;
}

int sib_cq_destroy(struct sib_cq *cq)
{
	pthread_mutex_lock(&cq->lock);
	if (cq->users) {
		pthread_mutex_unlock(&cq->lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&cq->lock);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	__atomic_sub_fetch(&cq_count, 1, __ATOMIC_RELAXED);
	return 0;
}

uint32_t sib_cq_size(struct sib_cq *cq)
{
	return cq->cqe;
}

/* Re-lay the ring into new storage of cap slots, oldest first.  Lock held. */
static int relayout(struct sib_cq *cq, uint32_t cap)
{
	struct sib_cqe *n = malloc((size_t)cap * sizeof(*n));

	if (!n)
		return ENOMEM;
	for (uint32_t i = 0; i < cq->count; i++)
		n[i] = cq->ring[(cq->head + i) % cq->ring_cap];
	free(cq->ring);
	cq->ring = n;
	cq->ring_cap = cap;
	cq->head = 0;
	return 0;
}

int sib_cq_resize(struct sib_cq *cq, uint32_t cqe)
{
	int rc = 0;

	if (!cqe || cqe > SIB_MAX_CQE)
		return EINVAL;
	pthread_mutex_lock(&cq->lock);
	if (cqe < cq->count) {
		rc = EINVAL;
	} else {
		if (cq->ring_cap > cqe)
			rc = relayout(cq, cqe);
		if (!rc)
			cq->cqe = cqe;
	}
	pthread_mutex_unlock(&cq->lock);
	return rc;
}

void sib_cq_get(struct sib_cq *cq)
{
	pthread_mutex_lock(&cq->lock);
	cq->users++;
	pthread_mutex_unlock(&cq->lock);
}

void sib_cq_put(struct sib_cq *cq)
{
	pthread_mutex_lock(&cq->lock);
	cq->users--;
	pthread_mutex_unlock(&cq->lock);
}

int sib_cq_push(struct sib_cq *cq, const struct sib_cqe *cqe, bool solicited)
{
	bool fire = false, overflow = false;
	int rc = 0;

	pthread_mutex_lock(&cq->lock);
	if (cq->error) {
		rc = EOVERFLOW;
		goto out;
	}
	if (cq->count == cq->cqe) {
		/* IBA 11.4.2.1: a CQ overrun is a CQ error, reported asynchronously. */
		cq->error = true;
		overflow = true;
		rc = EOVERFLOW;
		goto out;
	}
	if (cq->count == cq->ring_cap) {
		uint32_t cap = cq->ring_cap ? cq->ring_cap * 2 : 16;

		if (cap > cq->cqe)
			cap = cq->cqe;
		if (relayout(cq, cap)) {
			cq->error = true;
			overflow = true;
			rc = EOVERFLOW;
			goto out;
		}
	}
	struct sib_cqe *slot = &cq->ring[(cq->head + cq->count) % cq->ring_cap];

	*slot = *cqe;
	if (cq->timestamps) {
		slot->timestamp = clock_ns(CLOCK_MONOTONIC);
		slot->timestamp_wall = clock_ns(CLOCK_REALTIME);
	}
	/* Release: a poller that sees the count sees the entry (sib_cq_poll). */
	__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELEASE);
	if (cq->arm == SIB_CQ_ARM_NEXT ||
	    (cq->arm == SIB_CQ_ARM_SOLICITED && (solicited || cqe->status != SIB_WC_SUCCESS))) {
		__atomic_store_n(&cq->arm, SIB_CQ_DISARMED, __ATOMIC_RELAXED);
		fire = true;
	}
out:
	pthread_mutex_unlock(&cq->lock);
	if (overflow) {
		sib_err("CQ %p overrun: %u entries, completion for QP 0x%06x lost", (void *)cq,
			cq->cqe, cqe->qp_num);
		sib_event_raise(cq->sink, SIB_EV_CQ_ERR, cq->user, 0);
	}
	if (fire && cq->hook)
		cq->hook(cq, cq->user);
	return rc;
}

int sib_cq_poll(struct sib_cq *cq, struct sib_cqe *out, int n)
{
	int got = 0;

	/* An empty CQ is the common answer of a spinning poller: no lock. */
	if (!__atomic_load_n(&cq->count, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&cq->lock);
	while (got < n && cq->count) {
		out[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->ring_cap;
		__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&cq->lock);
	return got;
}

uint32_t sib_cq_count(struct sib_cq *cq)
{
	uint32_t n;

	pthread_mutex_lock(&cq->lock);
	n = cq->count;
	pthread_mutex_unlock(&cq->lock);
	return n;
}

void sib_cq_arm(struct sib_cq *cq, bool solicited_only)
{
	pthread_mutex_lock(&cq->lock);
	/* A pending "next" arm is not narrowed by a later solicited-only one. */
	if (!solicited_only || cq->arm != SIB_CQ_ARM_NEXT)
		__atomic_store_n(&cq->arm, solicited_only ? SIB_CQ_ARM_SOLICITED : SIB_CQ_ARM_NEXT,
				 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cq->lock);
}

bool sib_cq_armed(struct sib_cq *cq)
{
	return __atomic_load_n(&cq->arm, __ATOMIC_RELAXED) != SIB_CQ_DISARMED;
}

void sib_cq_clean(struct sib_cq *cq, uint32_t qpn)
{
	uint32_t kept = 0;

	pthread_mutex_lock(&cq->lock);
	for (uint32_t i = 0; i < cq->count; i++) {
		struct sib_cqe *e = &cq->ring[(cq->head + i) % cq->ring_cap];

		if (e->qp_num != qpn)
			cq->ring[(cq->head + kept++) % cq->ring_cap] = *e;
	}
	__atomic_store_n(&cq->count, kept, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cq->lock);
}

bool sib_cq_in_error(struct sib_cq *cq)
{
	bool e;

	pthread_mutex_lock(&cq->lock);
	e = cq->error;
	pthread_mutex_unlock(&cq->lock);
	return e;
}

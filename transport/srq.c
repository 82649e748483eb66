/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "transport/caps.h"
#include "transport/cq.h"
#include "transport/engine.h"
#include "transport/numtab.h"
#include "transport/srq.h"
#include "transport/xrcd.h"

struct sib_srq {
	pthread_mutex_t lock;
	struct sib_wq rq;
	uint32_t limit;
	uint32_t pd;
	uint32_t srq_num;
	unsigned users;
	struct sib_xrcd *xrcd;
	struct sib_cq *cq;
	struct sib_numtab *srqns;
	struct sib_engine *eng;
	struct sib_event_sink *sink;
	void *user;
};

/* One HCA per process (docs/architecture.md section 3): SRQs in existence, against max_srq. */
static unsigned srq_count;

int sib_srq_create(struct sib_srq_init *init, struct sib_srq **out, char *why, size_t why_len)
{
	struct sib_srq *srq;

	/* Above the device's limit (not 0): a capability probe (beyond_device). */
	if (!init->max_wr || init->max_wr > SIB_MAX_SRQ_WR) {
		snprintf(why, why_len, "max_wr %u is out of range 1..%u", init->max_wr,
			 SIB_MAX_SRQ_WR);
		init->beyond_device = init->max_wr != 0;
		return EINVAL;
	}
	if (!init->max_sge || init->max_sge > SIB_MAX_SRQ_SGE) {
		snprintf(why, why_len, "max_sge %u is out of range 1..%u", init->max_sge,
			 SIB_MAX_SRQ_SGE);
		init->beyond_device = init->max_sge != 0;
		return EINVAL;
	}
	init->beyond_device = false;
	if (init->srq_limit > init->max_wr) {
		snprintf(why, why_len, "srq_limit %u exceeds max_wr %u", init->srq_limit,
			 init->max_wr);
		return EINVAL;
	}
	if (__atomic_add_fetch(&srq_count, 1, __ATOMIC_RELAXED) > SIB_MAX_SRQ) {
		__atomic_sub_fetch(&srq_count, 1, __ATOMIC_RELAXED);
		snprintf(why, why_len, "max_srq (%u) SRQs exist", SIB_MAX_SRQ);
		return ENOMEM;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq || sib_wq_init(&srq->rq, init->max_wr, init->max_sge, 0, false)) {
		snprintf(why, why_len, "out of memory for %u WQEs", init->max_wr);
		free(srq);
		__atomic_sub_fetch(&srq_count, 1, __ATOMIC_RELAXED);
		return ENOMEM;
	}
	pthread_mutex_init(&srq->lock, NULL);
	srq->limit = init->srq_limit;
	srq->pd = init->pd;
	srq->sink = init->sink;
	srq->user = init->user;
	if (init->xrcd) {
		if (!init->srqns || !init->cq ||
		    sib_numtab_alloc(init->srqns, srq, &srq->srq_num)) {
			snprintf(why, why_len, "no XRC SRQ number left");
			sib_wq_fini(&srq->rq);
			free(srq);
			__atomic_sub_fetch(&srq_count, 1, __ATOMIC_RELAXED);
			return ENOMEM;
		}
		srq->srqns = init->srqns;
		srq->eng = init->engine;
		srq->xrcd = init->xrcd;
		srq->cq = init->cq;
		sib_xrcd_get(srq->xrcd);
		sib_cq_get(srq->cq);
	}
	*out = srq;
	return 0;
}

int sib_srq_destroy(struct sib_srq *srq)
{
	pthread_mutex_lock(&srq->lock);
	if (srq->users) {
		pthread_mutex_unlock(&srq->lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&srq->lock);
	if (srq->xrcd) {
		/* Out of the table first, then wait for a packet that found it. */
		sib_numtab_free(srq->srqns, srq->srq_num);
		if (srq->eng)
			sib_engine_quiesce(srq->eng);
		sib_xrcd_put(srq->xrcd);
		sib_cq_put(srq->cq);
	}
	sib_wq_fini(&srq->rq);
	pthread_mutex_destroy(&srq->lock);
	free(srq);
	__atomic_sub_fetch(&srq_count, 1, __ATOMIC_RELAXED);
	return 0;
}

int sib_srq_modify(struct sib_srq *srq, uint32_t max_wr, uint32_t srq_limit, unsigned mask,
		   char *why, size_t why_len)
{
	int rc = 0;

	if (mask & ~(unsigned)(SIB_SRQ_MAX_WR | SIB_SRQ_LIMIT)) {
		snprintf(why, why_len, "unknown attribute mask bits 0x%x",
			 mask & ~(unsigned)(SIB_SRQ_MAX_WR | SIB_SRQ_LIMIT));
		return EINVAL;
	}
	pthread_mutex_lock(&srq->lock);
	uint32_t new_max = (mask & SIB_SRQ_MAX_WR) ? max_wr : srq->rq.max_wr;

	if (mask & SIB_SRQ_MAX_WR) {
		if (!max_wr || max_wr > SIB_MAX_SRQ_WR) {
			snprintf(why, why_len, "max_wr %u is out of range 1..%u", max_wr,
				 SIB_MAX_SRQ_WR);
			rc = EINVAL;
			goto out;
		}
		if (max_wr < srq->rq.count) {
			snprintf(why, why_len, "max_wr %u is below the %u WQEs posted", max_wr,
				 srq->rq.count);
			rc = EINVAL;
			goto out;
		}
	}
	if ((mask & SIB_SRQ_LIMIT) && srq_limit > new_max) {
		snprintf(why, why_len, "srq_limit %u exceeds max_wr %u", srq_limit, new_max);
		rc = EINVAL;
		goto out;
	}
	if ((mask & SIB_SRQ_MAX_WR) && max_wr != srq->rq.max_wr) {
		rc = sib_wq_resize(&srq->rq, max_wr, false);
		if (rc)
			goto out;
	}
	if (mask & SIB_SRQ_LIMIT)
		srq->limit = srq_limit;
out:
	pthread_mutex_unlock(&srq->lock);
	return rc;
}

void sib_srq_query(struct sib_srq *srq, uint32_t *max_wr, uint32_t *max_sge, uint32_t *srq_limit)
{
	pthread_mutex_lock(&srq->lock);
	*max_wr = srq->rq.max_wr;
	*max_sge = srq->rq.max_sge;
	*srq_limit = srq->limit;
	pthread_mutex_unlock(&srq->lock);
}

uint32_t sib_srq_num(const struct sib_srq *srq)
{
	return srq->srq_num;
}

bool sib_srq_is_xrc(const struct sib_srq *srq)
{
	return srq->xrcd != NULL;
}

uint32_t sib_srq_pd(const struct sib_srq *srq)
{
	return srq->pd;
}

struct sib_cq *sib_srq_cq(const struct sib_srq *srq)
{
	return srq->cq;
}

struct sib_xrcd *sib_srq_xrcd(const struct sib_srq *srq)
{
	return srq->xrcd;
}

int sib_srq_post(struct sib_srq *srq, uint64_t wr_id, const struct sib_sge *sge, uint32_t num_sge,
		 char *why, size_t why_len)
{
	int rc = 0;

	pthread_mutex_lock(&srq->lock);
	if (num_sge > srq->rq.max_sge) {
		snprintf(why, why_len, "num_sge %u exceeds max_sge %u", num_sge, srq->rq.max_sge);
		rc = EINVAL;
	} else if (sib_wq_full(&srq->rq)) {
		snprintf(why, why_len, "SRQ is full (%u WQEs)", srq->rq.max_wr);
		rc = ENOMEM;
	} else {
		sib_wq_put_recv(&srq->rq, wr_id, sge, num_sge);
	}
	pthread_mutex_unlock(&srq->lock);
	return rc;
}

bool sib_srq_take(struct sib_srq *srq, struct sib_recv_wqe *out, struct sib_sge *sge)
{
	bool limit_hit = false;

	pthread_mutex_lock(&srq->lock);
	if (!srq->rq.count) {
		pthread_mutex_unlock(&srq->lock);
		return false;
	}
	const struct sib_recv_wqe *w = sib_wq_at(&srq->rq, 0);

	*out = *w;
	for (uint32_t i = 0; i < w->num_sge; i++)
		sge[i] = w->sge[i];
	out->sge = sge;
	sib_wq_pop(&srq->rq);
	/* IBA 10.2.9.3: fires once when the count drops below the armed limit. */
	if (srq->limit && srq->rq.count < srq->limit) {
		srq->limit = 0;
		limit_hit = true;
	}
	pthread_mutex_unlock(&srq->lock);
	if (limit_hit)
		sib_event_raise(srq->sink, SIB_EV_SRQ_LIMIT_REACHED, srq->user, 0);
	return true;
}

uint32_t sib_srq_count(struct sib_srq *srq)
{
	uint32_t n;

	pthread_mutex_lock(&srq->lock);
	n = srq->rq.count;
	pthread_mutex_unlock(&srq->lock);
	return n;
}

void sib_srq_get(struct sib_srq *srq)
{
	pthread_mutex_lock(&srq->lock);
	srq->users++;
	pthread_mutex_unlock(&srq->lock);
}

void sib_srq_put(struct sib_srq *srq)
{
	pthread_mutex_lock(&srq->lock);
	srq->users--;
	pthread_mutex_unlock(&srq->lock);
}

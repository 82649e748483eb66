/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared receive queues (IBA Vol 1 10.2.9), basic and XRC (9.8.4).  The
 * limit (10.2.9.3) is armed by a modify; when the number of WQEs falls below
 * it, SIB_EV_SRQ_LIMIT_REACHED is raised once and the limit disarms.
 */
#ifndef SIB_TRANSPORT_SRQ_H
#define SIB_TRANSPORT_SRQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/events.h"
#include "transport/wqe.h"

struct sib_cq;
struct sib_engine;
struct sib_xrcd;
struct sib_numtab;
struct sib_srq;

struct sib_srq_init {
	uint32_t max_wr;  /* in: requested; out: granted */
	uint32_t max_sge; /* in: requested; out: granted */
	uint32_t srq_limit;
	uint32_t pd;
	/* XRC SRQ: its domain, its CQ and the table its number comes from */
	struct sib_xrcd *xrcd;
	struct sib_cq *cq;
	struct sib_numtab *srqns;
	struct sib_engine *engine; /* whose data path finds it by number (may be NULL) */
	struct sib_event_sink *sink;
	void *user;
	bool beyond_device; /* out: refused only for a size above the device's limit */
};

/* Modify mask: the IBV_SRQ_* values. */
enum { SIB_SRQ_MAX_WR = 1 << 0, SIB_SRQ_LIMIT = 1 << 1 };

/* 0, EINVAL (caps; why says which), ENOMEM. */
int sib_srq_create(struct sib_srq_init *init, struct sib_srq **out, char *why, size_t why_len);
/* 0 or EBUSY while QPs use it. */
int sib_srq_destroy(struct sib_srq *srq);
int sib_srq_modify(struct sib_srq *srq, uint32_t max_wr, uint32_t srq_limit, unsigned mask,
		   char *why, size_t why_len);
void sib_srq_query(struct sib_srq *srq, uint32_t *max_wr, uint32_t *max_sge, uint32_t *srq_limit);
/* The XRC SRQ number (0 for a basic SRQ). */
uint32_t sib_srq_num(const struct sib_srq *srq);
bool sib_srq_is_xrc(const struct sib_srq *srq);
uint32_t sib_srq_pd(const struct sib_srq *srq);
struct sib_cq *sib_srq_cq(const struct sib_srq *srq);
struct sib_xrcd *sib_srq_xrcd(const struct sib_srq *srq);

/* 0, EINVAL (too many SGEs), ENOMEM (full).  why names the rule. */
int sib_srq_post(struct sib_srq *srq, uint64_t wr_id, const struct sib_sge *sge, uint32_t num_sge,
		 char *why, size_t why_len);
/*
 * The responder takes the oldest WQE: copies it to *out with its SGEs in
 * sge (room for max_sge).  false when empty.  May raise the limit event.
 */
bool sib_srq_take(struct sib_srq *srq, struct sib_recv_wqe *out, struct sib_sge *sge);
uint32_t sib_srq_count(struct sib_srq *srq);

void sib_srq_get(struct sib_srq *srq);
void sib_srq_put(struct sib_srq *srq);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The provider's CQ, QP, SRQ and XRCD objects: the libibverbs struct the
 * application sees, wrapped around the transport object that does the work.
 * Shared by cq.c, qp.c, srq.c, xrcd.c, post.c and wr.c.
 */
#ifndef SIB_PROVIDER_QUEUES_H
#define SIB_PROVIDER_QUEUES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "provider/softib.h"
#include "transport/cq.h"
#include "transport/qp.h"
#include "transport/srq.h"
#include "transport/xrcd.h"

struct softib_cq {
	struct verbs_cq vcq;
	struct sib_cq *cq;
	uint64_t wc_flags;  /* ibv_cq_ex: the fields the application may read */
	struct sib_cqe cur; /* ibv_cq_ex: the entry start_poll/next_poll took */
	struct ibv_pd *parent_domain; /* create_cq_ex's, referenced; or NULL */
};

/* One work request being built between wr_start and wr_complete. */
struct softib_wr_pending {
	struct sib_send_wqe wqe;
	struct sib_sge sge[SIB_MAX_SGE];
	uint8_t inline_buf[SIB_MAX_INLINE_DATA];
};

struct softib_qp {
	struct verbs_qp vqp;
	struct sib_qp *qp;
	uint64_t send_ops_flags; /* ibv_qp_ex: the wr_* builders installed */
	bool sq_sig_all;
	/* ibv_qp_ex: wr_start .. wr_complete / wr_abort */
	pthread_mutex_t wr_lock;
	struct softib_wr_pending *pending;
	uint32_t npending, pending_cap;
	int wr_err; /* deferred error, returned by wr_complete */
};

struct softib_srq {
	struct verbs_srq vsrq;
	struct sib_srq *srq;
};

struct softib_xrcd {
	struct verbs_xrcd vxrcd;
	struct sib_xrcd *x;
};

static inline struct softib_cq *to_scq(struct ibv_cq *cq)
{
	return softib_container_of(cq, struct softib_cq, vcq.cq);
}

static inline struct softib_cq *to_scq_ex(struct ibv_cq_ex *cq)
{
	return softib_container_of(cq, struct softib_cq, vcq.cq_ex);
}

static inline struct softib_qp *to_sqp(struct ibv_qp *qp)
{
	return softib_container_of(qp, struct softib_qp, vqp.qp);
}

static inline struct softib_qp *to_sqp_ex(struct ibv_qp_ex *qp)
{
	return softib_container_of(qp, struct softib_qp, vqp.qp_ex);
}

static inline struct softib_srq *to_ssrq(struct ibv_srq *srq)
{
	return softib_container_of(srq, struct softib_srq, vsrq.srq);
}

static inline struct softib_xrcd *to_sxrcd(struct ibv_xrcd *x)
{
	return softib_container_of(x, struct softib_xrcd, vxrcd.xrcd);
}

/* Install the wr_* builders a QP's send_ops_flags asked for (wr.c). */
void softib_qp_ex_init(struct softib_qp *sqp);
void softib_qp_ex_fini(struct softib_qp *sqp);

/* Convert and queue one ibv_send_wr (post.c); why gets the reason on error. */
int softib_post_one_send(struct softib_qp *sqp, const struct ibv_send_wr *wr, char *why,
			 size_t why_len);

/* The executor for Bind MW / Local Invalidate (post.c), given to every QP. */
enum sib_wc_status softib_local_exec(void *user, const struct sib_send_wqe *w);

/* ibv_ah_attr -> transport address vector. */
void softib_av_from_ibv(struct sib_av *av, const struct ibv_ah_attr *ah);
void softib_av_to_ibv(struct ibv_ah_attr *ah, const struct sib_av *av);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Queue pairs (IBA Vol 1 chapter 10.2 and 11.2.5): the QP context, its send
 * and receive queues, the state machine applied (qp_state.h decides what is
 * legal; this file does it), flushing on entering ERR, SQD, posting rules,
 * and the local work requests (Bind MW, Local Invalidate), executed at once
 * by the owner's executor (which calls memreg).  The requester / responder of the next issue drive the
 * queues through the functions at the end.
 *
 * Every function takes the QP's lock; lock order is QP, then SRQ, then CQ.
 * Functions that reject something return an errno and write the reason to
 * why (never NULL: pass a buffer) for the caller's log line.
 */
#ifndef SIB_TRANSPORT_QP_H
#define SIB_TRANSPORT_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/cq.h"
#include "transport/events.h"
#include "transport/qp_state.h"
#include "transport/wqe.h"

struct sib_srq;
struct sib_xrcd;
struct sib_numtab;
struct sib_qp;
struct sib_engine;

/*
 * Runs a local work request (Bind MW, Local Invalidate) when it reaches the
 * send queue: the owner calls memreg and returns the completion status
 * (SUCCESS, MW_BIND_ERR, LOC_PROT_ERR).  user is the QP's user pointer.
 */
typedef enum sib_wc_status (*sib_qp_local_exec)(void *user, const struct sib_send_wqe *w);

struct sib_qp_init {
	enum sib_qp_type type;
	struct sib_qp_cap cap; /* in: requested; out: granted */
	bool sq_sig_all;
	bool block_self_mcast_lb; /* UD: IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (mcast.h) */
	struct sib_cq *send_cq; /* not for XRC_RECV */
	struct sib_cq *recv_cq; /* not for XRC_SEND / XRC_RECV */
	struct sib_srq *srq;    /* optional; receives come from it */
	struct sib_xrcd *xrcd;  /* XRC_RECV only */
	uint32_t pd;            /* PD identity (memreg compares it) */
	sib_qp_local_exec local_exec; /* may be NULL: local WRs then fail */
	struct sib_numtab *qpns;   /* where the QP number comes from */
	struct sib_event_sink *sink;
	void *user;
	struct sib_engine *engine; /* the data path; NULL: queues only (tests) */
	bool beyond_device; /* out: refused only for a cap above the device's limit */
};

/* 0, EINVAL (caps or objects: why says which), ENOMEM (no memory or no QPN). */
int sib_qp_create(struct sib_qp_init *init, struct sib_qp **out, char *why, size_t why_len);
/* Releases the QP number, the CQ/SRQ/XRCD holds and the QP's waiting CQEs. */
void sib_qp_destroy(struct sib_qp *qp);

uint32_t sib_qp_num(const struct sib_qp *qp);
enum sib_qp_type sib_qp_type(const struct sib_qp *qp);
enum sib_qp_state sib_qp_state(struct sib_qp *qp);
/* The granted caps (fixed at create). */
const struct sib_qp_cap *sib_qp_caps(const struct sib_qp *qp);

/*
 * Modify QP: the mask check, the value check, then apply.  Entering ERR
 * flushes; RESET empties the queues; RTS->SQD with en_sqd_async_notify
 * raises SQ_DRAINED once nothing is in flight.  0, EINVAL, or EPERM for a
 * controlled Q_Key (IBA 10.2.5).
 */
int sib_qp_modify(struct sib_qp *qp, const struct sib_qp_attr *attr, uint32_t mask,
		  const struct sib_qp_limits *lim, char *why, size_t why_len);
/* Exactly what was set (state current, caps granted). */
void sib_qp_query(struct sib_qp *qp, struct sib_qp_attr *attr);

/*
 * Post one send WR.  sge has wqe->num_sge entries (inline data is gathered
 * from their addresses).  0, EINVAL (state, opcode for the type, SGE count,
 * inline size), ENOMEM (queue full).  Local operations complete at once.
 */
int sib_qp_post_send(struct sib_qp *qp, const struct sib_send_wqe *wqe, const struct sib_sge *sge,
		     char *why, size_t why_len);
/* Post one receive WR: 0, EINVAL (state RESET, SRQ QP, SGE count), ENOMEM (full). */
int sib_qp_post_recv(struct sib_qp *qp, uint64_t wr_id, const struct sib_sge *sge,
		     uint32_t num_sge, char *why, size_t why_len);

/* Outstanding send / receive WQEs (for destroy checks and tests). */
uint32_t sib_qp_sq_count(struct sib_qp *qp);
uint32_t sib_qp_rq_count(struct sib_qp *qp);

/* The data path reports a fatal error on the QP: it enters ERR and flushes. */
void sib_qp_set_error(struct sib_qp *qp);

#endif

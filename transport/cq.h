/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Completion queues (IBA Vol 1 11.4.2): a ring of transport CQEs holding
 * exactly as many entries as were granted.  Storage grows on demand, so a
 * CQ of max_cqe costs nothing until it fills.  Overflow puts the CQ in error
 * and raises SIB_EV_CQ_ERR (IBA 11.6.3.3).  Arming (Request Completion
 * Notification, 11.4.2.4) fires the owner's hook once, for the next
 * completion or the next solicited one.
 *
 * Status, opcode and flag values equal IBV_WC_* so the provider passes
 * them through.  Every function may be called from any thread.
 */
#ifndef SIB_TRANSPORT_CQ_H
#define SIB_TRANSPORT_CQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "transport/events.h"

enum sib_wc_status {
	SIB_WC_SUCCESS,
	SIB_WC_LOC_LEN_ERR,
	SIB_WC_LOC_QP_OP_ERR,
	SIB_WC_LOC_EEC_OP_ERR,
	SIB_WC_LOC_PROT_ERR,
	SIB_WC_WR_FLUSH_ERR,
	SIB_WC_MW_BIND_ERR,
	SIB_WC_BAD_RESP_ERR,
	SIB_WC_LOC_ACCESS_ERR,
	SIB_WC_REM_INV_REQ_ERR,
	SIB_WC_REM_ACCESS_ERR,
	SIB_WC_REM_OP_ERR,
	SIB_WC_RETRY_EXC_ERR,
	SIB_WC_RNR_RETRY_EXC_ERR,
	SIB_WC_LOC_RDD_VIOL_ERR,
	SIB_WC_REM_INV_RD_REQ_ERR,
	SIB_WC_REM_ABORT_ERR,
	SIB_WC_INV_EECN_ERR,
	SIB_WC_INV_EEC_STATE_ERR,
	SIB_WC_FATAL_ERR,
	SIB_WC_RESP_TIMEOUT_ERR,
	SIB_WC_GENERAL_ERR,
};

enum sib_wc_opcode {
	SIB_WC_SEND,
	SIB_WC_RDMA_WRITE,
	SIB_WC_RDMA_READ,
	SIB_WC_COMP_SWAP,
	SIB_WC_FETCH_ADD,
	SIB_WC_BIND_MW,
	SIB_WC_LOCAL_INV,
	SIB_WC_FLUSH = 8,	 /* IBA 1.5 */
	SIB_WC_ATOMIC_WRITE = 9, /* IBA 1.5 */
	SIB_WC_RECV = 1 << 7,
	SIB_WC_RECV_RDMA_WITH_IMM,
};

enum sib_wc_flags {
	SIB_WC_GRH = 1 << 0,
	SIB_WC_WITH_IMM = 1 << 1,
	SIB_WC_WITH_INV = 1 << 3,
};

struct sib_cqe {
	uint64_t wr_id;
	enum sib_wc_status status;
	enum sib_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* immediate (network order, as ibv_wc) or the invalidated R_Key */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint64_t timestamp;      /* CLOCK_MONOTONIC ns when the CQE was written */
	uint64_t timestamp_wall; /* CLOCK_REALTIME ns, when the CQ asked for it */
};

enum sib_cq_arm { SIB_CQ_DISARMED, SIB_CQ_ARM_NEXT, SIB_CQ_ARM_SOLICITED };

struct sib_cq;

/* Called (without the CQ's lock) when an armed CQ gets its event. */
typedef void (*sib_cq_comp_hook)(struct sib_cq *cq, void *user);

struct sib_cq_init {
	uint32_t cqe;             /* requested entries, 1..SIB_MAX_CQE */
	bool timestamps;          /* fill timestamp / timestamp_wall */
	struct sib_event_sink *sink;
	void *user;               /* given back with events and to the hook */
	sib_cq_comp_hook hook;
};

/* 0 and *out, or EINVAL (cqe 0 or above SIB_MAX_CQE), ENOMEM (memory, or max_cq CQs exist). */
int sib_cq_create(const struct sib_cq_init *init, struct sib_cq **out);
/* 0, or EBUSY while a QP or SRQ still uses the CQ. */
int sib_cq_destroy(struct sib_cq *cq);
/* Granted entries (exactly what was asked). */
uint32_t sib_cq_size(struct sib_cq *cq);
/* 0 (size granted), EINVAL (0, above max, or fewer than the CQEs waiting), ENOMEM. */
int sib_cq_resize(struct sib_cq *cq, uint32_t cqe);

/* Users (QPs, SRQs) keep a CQ from being destroyed. */
void sib_cq_get(struct sib_cq *cq);
void sib_cq_put(struct sib_cq *cq);

/*
 * Write a completion.  solicited: the completion is for a message with the
 * Solicited Event bit (fires a solicited-only arm; so does any error).
 * 0, or EOVERFLOW when the CQ is full or already in error (CQ error raised).
 */
int sib_cq_push(struct sib_cq *cq, const struct sib_cqe *cqe, bool solicited);

/* Up to n completions, oldest first.  Returns how many. */
int sib_cq_poll(struct sib_cq *cq, struct sib_cqe *out, int n);
/* CQEs waiting. */
uint32_t sib_cq_count(struct sib_cq *cq);
/* Arm for the next completion, or the next solicited/error one. */
void sib_cq_arm(struct sib_cq *cq, bool solicited_only);
/* Armed for an event and not yet fired (read without the lock). */
bool sib_cq_armed(struct sib_cq *cq);
/* Remove every waiting CQE of QP qpn (the QP is being destroyed or reset). */
void sib_cq_clean(struct sib_cq *cq, uint32_t qpn);
bool sib_cq_in_error(struct sib_cq *cq);

#endif

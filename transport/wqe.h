/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Work queue elements (IBA Vol 1 10.8) and the rings that hold them.  A
 * posted work request is copied into its own slot: the scatter/gather list
 * always, inline data too (IBA 10.8.2.1: inline data is read at post time,
 * so the buffer may be reused at once).  The rings belong to a QP or SRQ and
 * are guarded by its lock.
 *
 * Opcode and flag values equal IBV_WR_* / IBV_SEND_*.
 */
#ifndef SIB_TRANSPORT_WQE_H
#define SIB_TRANSPORT_WQE_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h" /* struct sib_endpoint */
#include "transport/qp_state.h"

enum sib_wr_opcode {
	SIB_WR_RDMA_WRITE,
	SIB_WR_RDMA_WRITE_WITH_IMM,
	SIB_WR_SEND,
	SIB_WR_SEND_WITH_IMM,
	SIB_WR_RDMA_READ,
	SIB_WR_ATOMIC_CMP_AND_SWP,
	SIB_WR_ATOMIC_FETCH_AND_ADD,
	SIB_WR_LOCAL_INV,
	SIB_WR_BIND_MW,
	SIB_WR_SEND_WITH_INV,
	SIB_WR_FLUSH = 14,	  /* IBA 1.5 */
	SIB_WR_ATOMIC_WRITE = 15, /* IBA 1.5 */
	SIB_WR_NUM
};

enum sib_send_flags {
	SIB_SEND_FENCE = 1 << 0,
	SIB_SEND_SIGNALED = 1 << 1,
	SIB_SEND_SOLICITED = 1 << 2,
	SIB_SEND_INLINE = 1 << 3,
	SIB_SEND_IP_CSUM = 1 << 4,
};

struct sib_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct sib_send_wqe {
	uint64_t wr_id;
	enum sib_wr_opcode opcode;
	unsigned send_flags;
	uint32_t imm_data;        /* network order, as posted */
	uint32_t invalidate_rkey; /* SEND_WITH_INV and LOCAL_INV */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint32_t flush_len;	/* FLUSH: bytes from remote_addr (RETH DMALen) */
			uint8_t flush_type;	/* FLUSH: FETH placement type (IBV_FLUSH_GLOBAL ...) */
			uint8_t flush_level;	/* FLUSH: FETH selectivity level */
			uint64_t atomic_write;	/* ATOMIC WRITE: the 8 bytes, as the caller laid them */
		} rdma; /* RDMA WRITE / READ, FLUSH, ATOMIC WRITE: RETH-addressed */
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			uint32_t mw_rkey;  /* the window's current R_Key */
			uint32_t new_rkey; /* after the bind */
			uint32_t mr_lkey;
			uint64_t addr;
			uint64_t length;
			unsigned access;
			void *mw; /* the owner's window and MR objects */
			void *mr;
		} bind;
	};
	struct {
		struct sib_av av; /* copied from the AH at post */
		struct sib_endpoint dest; /* where av.DLID lives (family 0: unknown) */
		uint32_t remote_qpn;
		uint32_t remote_qkey;
	} ud;
	uint32_t xrc_remote_srqn;
	uint32_t num_sge;
	uint32_t inline_len;    /* bytes in inline_data when SIB_SEND_INLINE */
	uint64_t length;        /* message length in bytes */
	struct sib_sge *sge;    /* num_sge entries inside the slot */
	uint8_t *inline_data;   /* inline_len bytes inside the slot */
};

struct sib_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint64_t length; /* sum of the SGE lengths */
	struct sib_sge *sge;
};

/* A ring of fixed-size slots, each a WQE header followed by its data. */
struct sib_wq {
	uint8_t *slots;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t slot_size;
	uint32_t head; /* oldest outstanding */
	uint32_t count;
};

/* 0 or ENOMEM.  A queue of max_wr 0 is valid and always full. */
int sib_wq_init(struct sib_wq *wq, uint32_t max_wr, uint32_t max_sge, uint32_t max_inline,
		bool send);
void sib_wq_fini(struct sib_wq *wq);
/* 0 or ENOMEM: the ring keeps its entries, oldest first, in new storage. */
int sib_wq_resize(struct sib_wq *wq, uint32_t max_wr, bool send);
static inline bool sib_wq_full(const struct sib_wq *wq)
{
	return wq->count >= wq->max_wr;
}
/* The i-th outstanding entry (0 = oldest); i < count. */
void *sib_wq_at(struct sib_wq *wq, uint32_t i);
/* The slot the next post fills (not yet counted); the queue must not be full. */
void *sib_wq_tail(struct sib_wq *wq);
static inline void sib_wq_commit(struct sib_wq *wq)
{
	wq->count++;
}
static inline void sib_wq_pop(struct sib_wq *wq)
{
	wq->head = (wq->head + 1) % wq->max_wr;
	wq->count--;
}

/*
 * Fill the next send slot from wqe and its SGE list, gathering inline data
 * from the SGE addresses when SIB_SEND_INLINE.  The caller has checked the
 * counts and the inline length.
 */
void sib_wq_put_send(struct sib_wq *wq, const struct sib_send_wqe *wqe, const struct sib_sge *sge);
void sib_wq_put_recv(struct sib_wq *wq, uint64_t wr_id, const struct sib_sge *sge,
		     uint32_t num_sge);

#endif

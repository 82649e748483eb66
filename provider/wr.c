/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The ibv_qp_ex work-request builders (ibv_wr_post(3)): wr_start opens a
 * batch, each wr_<op> adds a work request and wr_set_* fill in its data,
 * wr_complete posts the batch or returns the first error met while building
 * (nothing is posted then), wr_abort discards it.  The batch holds the QP's
 * wr_lock from wr_start to wr_complete / wr_abort.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/queues.h"
#include "transport/engine.h"
#include "transport/caps.h"
#include "base/log.h"

static struct softib_wr_pending *add(struct ibv_qp_ex *qpx, enum sib_wr_opcode op)
{
	struct softib_qp *sqp = to_sqp_ex(qpx);
	struct softib_wr_pending *p;

	if (sqp->wr_err)
		return NULL;
	if (sqp->npending == sqp->pending_cap) {
		uint32_t cap = sqp->pending_cap ? sqp->pending_cap * 2 : 4;
		void *n;

		if (cap > SIB_MAX_QP_WR + 1u || !(n = realloc(sqp->pending, cap * sizeof(*p)))) {
			sqp->wr_err = ENOMEM;
			return NULL;
		}
		sqp->pending = n;
		sqp->pending_cap = cap;
	}
	p = &sqp->pending[sqp->npending++];
	memset(&p->wqe, 0, sizeof(p->wqe));
	p->wqe.wr_id = qpx->wr_id;
	p->wqe.send_flags = qpx->wr_flags;
	p->wqe.opcode = op;
	return p;
}

/* The request wr_set_* apply to: the last one added. */
static struct softib_wr_pending *last(struct ibv_qp_ex *qpx)
{
	struct softib_qp *sqp = to_sqp_ex(qpx);

	if (sqp->wr_err)
		return NULL;
	if (!sqp->npending) {
		sib_warn("wr_set_* on QP 0x%06x: no work request to set", qpx->qp_base.qp_num);
		sqp->wr_err = EINVAL;
		return NULL;
	}
	return &sqp->pending[sqp->npending - 1];
}

static void fail(struct ibv_qp_ex *qpx, int err, const char *what)
{
	struct softib_qp *sqp = to_sqp_ex(qpx);

	if (!sqp->wr_err) {
		sib_warn("%s on QP 0x%06x: rejected", what, qpx->qp_base.qp_num);
		sqp->wr_err = err;
	}
}

static void wr_rdma(struct ibv_qp_ex *qpx, enum sib_wr_opcode op, uint32_t rkey, uint64_t addr,
		    __be32 imm)
{
	struct softib_wr_pending *p = add(qpx, op);

	if (!p)
		return;
	p->wqe.rdma.rkey = rkey;
	p->wqe.rdma.remote_addr = addr;
	p->wqe.imm_data = imm;
}

static void softib_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, SIB_WR_RDMA_WRITE, rkey, addr, 0);
}

static void softib_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				     __be32 imm)
{
	wr_rdma(qpx, SIB_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void softib_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, SIB_WR_RDMA_READ, rkey, addr, 0);
}

static void softib_wr_send(struct ibv_qp_ex *qpx)
{
	add(qpx, SIB_WR_SEND);
}

static void softib_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct softib_wr_pending *p = add(qpx, SIB_WR_SEND_WITH_IMM);

	if (p)
		p->wqe.imm_data = imm;
}

static void softib_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct softib_wr_pending *p = add(qpx, SIB_WR_SEND_WITH_INV);

	if (p)
		p->wqe.invalidate_rkey = rkey;
}

static void softib_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct softib_wr_pending *p = add(qpx, SIB_WR_LOCAL_INV);

	if (p)
		p->wqe.invalidate_rkey = rkey;
}

static void softib_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				     uint64_t compare, uint64_t swap)
{
	struct softib_wr_pending *p = add(qpx, SIB_WR_ATOMIC_CMP_AND_SWP);

	if (!p)
		return;
	p->wqe.atomic.rkey = rkey;
	p->wqe.atomic.remote_addr = addr;
	p->wqe.atomic.compare_add = compare;
	p->wqe.atomic.swap = swap;
}

static void softib_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				       uint64_t value)
{
	struct softib_wr_pending *p = add(qpx, SIB_WR_ATOMIC_FETCH_AND_ADD);

	if (!p)
		return;
	p->wqe.atomic.rkey = rkey;
	p->wqe.atomic.remote_addr = addr;
	p->wqe.atomic.compare_add = value;
}

#if SIB_ABI_LAYOUT >= 44
/* IBA 1.5 ATOMIC WRITE: the 8 bytes are read now, like inline data
 * (ibv_wr_post(3)); they reach the target as one store. */
static void softib_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				   const void *atomic_wr)
{
	struct softib_wr_pending *p;

	if (!atomic_wr) {
		fail(qpx, EINVAL, "wr_atomic_write: atomic_wr is NULL, the 8 bytes to write");
		return;
	}
	p = add(qpx, SIB_WR_ATOMIC_WRITE);
	if (!p)
		return;
	p->wqe.rdma.rkey = rkey;
	p->wqe.rdma.remote_addr = addr;
	memcpy(&p->wqe.rdma.atomic_write, atomic_wr, 8);
}
#endif

#if SIB_ABI_LAYOUT >= 45
/* IBA 1.5 FLUSH: the FETH carries type (placement) and level
 * (selectivity), the RETH's 32-bit DMALen the length. */
static void softib_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, size_t len,
			    uint8_t type, uint8_t level)
{
	struct softib_wr_pending *p;

	if (len > UINT32_MAX) {
		fail(qpx, EINVAL, "wr_flush: len is more than a RETH's 32-bit DMALen");
		return;
	}
	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR)) {
		fail(qpx, EINVAL, "wr_flush: type must be IBV_FLUSH_GLOBAL and/or "
				  "IBV_FLUSH_PERSISTENT, level IBV_FLUSH_RANGE or IBV_FLUSH_MR");
		return;
	}
	p = add(qpx, SIB_WR_FLUSH);
	if (!p)
		return;
	p->wqe.rdma.rkey = rkey;
	p->wqe.rdma.remote_addr = addr;
	p->wqe.rdma.flush_len = (uint32_t)len;
	p->wqe.rdma.flush_type = type;
	p->wqe.rdma.flush_level = level;
}
#endif

static void softib_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
			      const struct ibv_mw_bind_info *info)
{
	struct softib_wr_pending *p;

	if (!mw || mw->context != qpx->qp_base.context || !info) {
		fail(qpx, EINVAL, "wr_bind_mw");
		return;
	}
	p = add(qpx, SIB_WR_BIND_MW);
	if (!p)
		return;
	p->wqe.bind.mw = mw;
	p->wqe.bind.mw_rkey = mw->handle;
	p->wqe.bind.new_rkey = rkey;
	p->wqe.bind.mr = info->mr;
	p->wqe.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	p->wqe.bind.addr = info->addr;
	p->wqe.bind.length = info->length;
	p->wqe.bind.access = info->mw_access_flags;
}

static void softib_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct softib_wr_pending *p = last(qpx);

	if (!p)
		return;
	p->wqe.send_flags &= ~(unsigned)SIB_SEND_INLINE;
	p->wqe.num_sge = 1;
	p->sge[0] = (struct sib_sge){ .addr = addr, .length = length, .lkey = lkey };
}

static void softib_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				   const struct ibv_sge *sg_list)
{
	struct softib_wr_pending *p = last(qpx);

	if (!p)
		return;
	if (num_sge > SIB_MAX_SGE || (num_sge && !sg_list)) {
		fail(qpx, EINVAL, "wr_set_sge_list");
		return;
	}
	p->wqe.send_flags &= ~(unsigned)SIB_SEND_INLINE;
	p->wqe.num_sge = (uint32_t)num_sge;
	for (size_t i = 0; i < num_sge; i++)
		p->sge[i] = (struct sib_sge){ .addr = sg_list[i].addr,
					      .length = sg_list[i].length,
					      .lkey = sg_list[i].lkey };
}

/* Inline data is copied now (ibv_wr_post(3): the buffer may be reused at once). */
static void softib_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					   const struct ibv_data_buf *buf_list)
{
	struct softib_wr_pending *p = last(qpx);
	size_t total = 0;

	if (!p)
		return;
	for (size_t i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	if (total > SIB_MAX_INLINE_DATA) {
		sib_warn("wr_set_inline_data on QP 0x%06x: %zu bytes exceed %u",
			 qpx->qp_base.qp_num, total, SIB_MAX_INLINE_DATA);
		to_sqp_ex(qpx)->wr_err = EINVAL;
		return;
	}
	total = 0;
	for (size_t i = 0; i < num_buf; i++) {
		memcpy(p->inline_buf + total, buf_list[i].addr, buf_list[i].length);
		total += buf_list[i].length;
	}
	p->wqe.send_flags |= SIB_SEND_INLINE;
	p->wqe.inline_len = (uint32_t)total;
	p->wqe.num_sge = 0;
}

static void softib_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	softib_wr_set_inline_data_list(qpx, 1, &b);
}

static void softib_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
				  uint32_t remote_qkey)
{
	struct softib_wr_pending *p = last(qpx);

	if (!p)
		return;
	if (!ah || ah->context != qpx->qp_base.context) {
		fail(qpx, EINVAL, "wr_set_ud_addr");
		return;
	}
	softib_av_from_ibv(&p->wqe.ud.av, &to_sah(ah)->attr);
	p->wqe.ud.dest = softib_ah_dest(to_sah(ah));
	p->wqe.ud.remote_qpn = remote_qpn;
	p->wqe.ud.remote_qkey = remote_qkey;
}

static void softib_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct softib_wr_pending *p = last(qpx);

	if (p)
		p->wqe.xrc_remote_srqn = remote_srqn;
}

static void softib_wr_start(struct ibv_qp_ex *qpx)
{
	struct softib_qp *sqp = to_sqp_ex(qpx);

	pthread_mutex_lock(&sqp->wr_lock);
	sqp->npending = 0;
	sqp->wr_err = 0;
}

static void softib_wr_abort(struct ibv_qp_ex *qpx)
{
	struct softib_qp *sqp = to_sqp_ex(qpx);

	sqp->npending = 0;
	sqp->wr_err = 0;
	pthread_mutex_unlock(&sqp->wr_lock);
}

static int softib_wr_complete(struct ibv_qp_ex *qpx)
{
	struct softib_qp *sqp = to_sqp_ex(qpx);
	enum sib_qp_state s = sib_qp_state(sqp->qp);
	int err = sqp->wr_err;
	char why[160];

	/* Reject the whole batch for the state before posting any of it. */
	if (!err && sqp->npending &&
	    (s == SIB_QPS_RESET || s == SIB_QPS_INIT || s == SIB_QPS_RTR)) {
		sib_warn("wr_complete on QP 0x%06x: QP is in %s, must be RTS", qpx->qp_base.qp_num,
			 sib_qp_state_name(s));
		err = EINVAL;
	}
	for (uint32_t i = 0; !err && i < sqp->npending; i++) {
		struct softib_wr_pending *p = &sqp->pending[i];
		struct sib_sge inl;
		const struct sib_sge *sge = p->sge;

		if (p->wqe.send_flags & SIB_SEND_INLINE) {
			inl = (struct sib_sge){ .addr = (uintptr_t)p->inline_buf,
						.length = p->wqe.inline_len };
			p->wqe.num_sge = 1;
			sge = &inl;
		}
		err = sib_qp_post_send(sqp->qp, &p->wqe, sge, why, sizeof(why));
		if (err)
			sib_warn("wr_complete on QP 0x%06x: %s", qpx->qp_base.qp_num, why);
	}
	sqp->npending = 0;
	sqp->wr_err = 0;
	pthread_mutex_unlock(&sqp->wr_lock);
	/* transmit on the caller's thread (docs/architecture.md section 6) */
	sib_progress_post(to_sctx(qpx->qp_base.context)->hca, sqp->qp);
	return err;
}

void softib_qp_ex_init(struct softib_qp *sqp)
{
	struct ibv_qp_ex *qpx = &sqp->vqp.qp_ex;
	uint64_t f = sqp->send_ops_flags;

	qpx->comp_mask = 0;
	if (f & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = softib_wr_rdma_write;
	if (f & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = softib_wr_rdma_write_imm;
	if (f & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = softib_wr_send;
	if (f & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = softib_wr_send_imm;
	if (f & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = softib_wr_rdma_read;
	if (f & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = softib_wr_atomic_cmp_swp;
	if (f & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = softib_wr_atomic_fetch_add;
	if (f & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = softib_wr_local_inv;
	if (f & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = softib_wr_bind_mw;
	if (f & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = softib_wr_send_inv;
#if SIB_ABI_LAYOUT >= 44
	if (f & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = softib_wr_atomic_write;
#endif
#if SIB_ABI_LAYOUT >= 45
	if (f & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = softib_wr_flush;
#endif
	qpx->wr_set_sge = softib_wr_set_sge;
	qpx->wr_set_sge_list = softib_wr_set_sge_list;
	qpx->wr_set_inline_data = softib_wr_set_inline_data;
	qpx->wr_set_inline_data_list = softib_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = softib_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = softib_wr_set_xrc_srqn;
	qpx->wr_start = softib_wr_start;
	qpx->wr_complete = softib_wr_complete;
	qpx->wr_abort = softib_wr_abort;
}

void softib_qp_ex_fini(struct softib_qp *sqp)
{
	free(sqp->pending);
	sqp->pending = NULL;
	sqp->npending = sqp->pending_cap = 0;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Completion queues: create_cq, create_cq_ex (ibv_create_cq_ex(3) and its
 * start_poll / next_poll / end_poll / read_* callbacks), poll_cq,
 * req_notify_cq, resize_cq, destroy_cq.  The ring lives in transport/cq.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/handles.h"
#include "provider/queues.h"
#include "transport/caps.h"
#include "base/log.h"

_Static_assert((int)SIB_WC_WR_FLUSH_ERR == (int)IBV_WC_WR_FLUSH_ERR, "wc status");
_Static_assert((int)SIB_WC_GENERAL_ERR == (int)IBV_WC_GENERAL_ERR, "wc status");
_Static_assert((int)SIB_WC_LOCAL_INV == (int)IBV_WC_LOCAL_INV, "wc opcode");
_Static_assert((int)SIB_WC_RECV_RDMA_WITH_IMM == (int)IBV_WC_RECV_RDMA_WITH_IMM, "wc opcode");
#if SIB_ABI_LAYOUT >= 44
_Static_assert((int)SIB_WC_ATOMIC_WRITE == (int)IBV_WC_ATOMIC_WRITE, "wc opcode");
#endif
#if SIB_ABI_LAYOUT >= 45
_Static_assert((int)SIB_WC_FLUSH == (int)IBV_WC_FLUSH, "wc opcode");
#endif
_Static_assert((int)SIB_WC_WITH_INV == (int)IBV_WC_WITH_INV, "wc flags");
_Static_assert((int)SIB_WC_GRH == (int)IBV_WC_GRH, "wc flags");

/* The wc_flags create_cq_ex honours (CVLAN, flow tag and tag matching are Ethernet/TM). */
#define SIB_WC_FLAGS                                                                            \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |                    \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |                         \
	 IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |                     \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* A CQ armed with req_notify_cq got its event: tell its completion channel. */
static void cq_comp_hook(struct sib_cq *cq, void *user)
{
	struct ibv_cq *ibcq = user;

	(void)cq;
	if (ibcq->channel)
		softib_comp_channel_notify(ibcq->channel, ibcq);
}

static int check_create(struct ibv_context *ctx, unsigned cqe, struct ibv_comp_channel *channel,
			int comp_vector, const char *verb)
{
	if (cqe < 1 || cqe > SIB_MAX_CQE) {
		softib_refused(cqe > SIB_MAX_CQE, "%s: cqe %u is out of range 1..%u (max_cqe)", verb,
			       cqe, SIB_MAX_CQE);
		return EINVAL;
	}
	if (comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) {
		sib_warn("%s: comp_vector %d is out of range 0..%d", verb, comp_vector,
			 ctx->num_comp_vectors - 1);
		return EINVAL;
	}
	if (channel && channel->context != ctx) {
		sib_warn("%s: the completion channel belongs to another context", verb);
		return EINVAL;
	}
	return 0;
}

static struct softib_cq *cq_alloc(struct ibv_context *ctx, unsigned cqe, bool timestamps)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct softib_cq *scq = sib_obj_new(SIB_OBJ_CQ, sizeof(*scq));
	int err;

	if (!scq) {
		errno = ENOMEM;
		return NULL;
	}
	struct sib_cq_init ci = {
		.cqe = cqe,
		.timestamps = timestamps,
		.sink = &sctx->sink,
		.user = &scq->vcq.cq,
		.hook = cq_comp_hook,
	};

	err = sib_cq_create(&ci, &scq->cq);
	if (err) {
		if (err == ENOMEM)
			sib_warn("create_cq: out of memory, or max_cq (%u) CQs exist", SIB_MAX_CQ);
		sib_obj_discard(scq);
		errno = err;
		return NULL;
	}
	/* The library's verbs_init_cq fills context, channel and the rest. */
	scq->vcq.cq.cqe = (int)sib_cq_size(scq->cq);
	return scq;
}

static struct ibv_cq *softib_create_cq(struct ibv_context *ctx, int cqe,
				       struct ibv_comp_channel *channel, int comp_vector)
{
	struct softib_cq *scq;
	int err = check_create(ctx, cqe < 0 ? 0 : (unsigned)cqe, channel, comp_vector, "create_cq");

	if (err) {
		errno = err;
		return NULL;
	}
	scq = cq_alloc(ctx, (unsigned)cqe, false);
	return scq ? &scq->vcq.cq : NULL;
}

static void wc_from_cqe(struct ibv_wc *wc, const struct sib_cqe *c)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = c->wr_id;
	wc->status = (enum ibv_wc_status)c->status;
	wc->opcode = (enum ibv_wc_opcode)c->opcode;
	wc->vendor_err = c->vendor_err;
	wc->byte_len = c->byte_len;
	wc->imm_data = c->imm_data;
	wc->qp_num = c->qp_num;
	wc->src_qp = c->src_qp;
	wc->wc_flags = c->wc_flags;
	wc->pkey_index = c->pkey_index;
	wc->slid = c->slid;
	wc->sl = c->sl;
	wc->dlid_path_bits = c->dlid_path_bits;
}

static int poll_some(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct sib_cqe c[16];
	int done = 0;

	while (done < num_entries) {
		int want = num_entries - done > 16 ? 16 : num_entries - done;
		int got = sib_cq_poll(to_scq(cq)->cq, c, want);

		for (int i = 0; i < got; i++)
			wc_from_cqe(&wc[done + i], &c[i]);
		done += got;
		if (got < want)
			break;
	}
	return done;
}

/*
 * The waiting rule (docs/architecture.md): every poll says that this
 * thread polls (it holds the links for a lease) and sends what it queued;
 * one that found nothing also reads the links itself rather than wait for
 * the progress thread.  A thread that armed the CQ is about to sleep
 * (ibv_get_cq_event): its polls hold no lease, or the progress thread
 * would leave the event it waits for to the lease's end.  True when the
 * caller should look at the CQ again: it found nothing, and what arrived
 * meanwhile is reported now, whoever read it.  A poll that missed it would
 * let the program act on a later event first: libfabric's ofi_rxm closed
 * a connection on the peer's DISCONNECTED over an unread completion of
 * fi_pingpong's final message.
 */
static bool after_poll(struct ibv_context *ctx, struct sib_cq *cq, bool found)
{
	sib_progress_polled(to_sctx(ctx)->hca, !found, !sib_cq_armed(cq));
	return !found;
}

static int softib_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	int done;

	if (num_entries < 0)
		return -EINVAL;
	done = poll_some(cq, num_entries, wc);
	if (num_entries && after_poll(cq->context, to_scq(cq)->cq, done > 0))
		done = poll_some(cq, num_entries, wc);
	return done;
}

static int softib_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	/* The application is about to sleep: the progress thread serves it. */
	sib_progress_armed(to_sctx(cq->context)->hca);
	sib_cq_arm(to_scq(cq)->cq, solicited_only != 0);
	return 0;
}

static void softib_cq_event(struct ibv_cq *cq)
{
	(void)cq; /* nothing to re-arm: arming is one-shot in the transport */
}

static int softib_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct softib_cq *scq = to_scq(cq);
	int err;

	if (cqe < 1 || (unsigned)cqe > SIB_MAX_CQE) {
		sib_warn("resize_cq: cqe %d is out of range 1..%u (max_cqe)", cqe, SIB_MAX_CQE);
		return EINVAL;
	}
	err = sib_cq_resize(scq->cq, (uint32_t)cqe);
	if (err == EINVAL)
		sib_warn("resize_cq: %d entries is fewer than the %u completions waiting", cqe,
			 sib_cq_count(scq->cq));
	if (!err)
		cq->cqe = (int)sib_cq_size(scq->cq);
	return err;
}

static int softib_destroy_cq(struct ibv_cq *cq)
{
	struct softib_cq *scq = to_scq(cq);
	int err = sib_obj_claim(scq, "destroy_cq");

	if (err)
		return err;
	err = sib_cq_destroy(scq->cq);
	if (err) {
		sib_warn("destroy_cq: the CQ is still used by a QP or SRQ");
		sib_obj_keep(scq);
		return err;
	}
	if (scq->parent_domain)
		softib_pd_put(scq->parent_domain);
	sib_obj_destroyed(scq);
	return 0;
}

/* ---------------------------------------------------------------- cq_ex */

static int take_one(struct ibv_cq_ex *cqx)
{
	struct softib_cq *scq = to_scq_ex(cqx);

	if (sib_cq_poll(scq->cq, &scq->cur, 1) != 1)
		return ENOENT;
	cqx->wr_id = scq->cur.wr_id;
	cqx->status = (enum ibv_wc_status)scq->cur.status;
	return 0;
}

static int cqx_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	int err;

	if (attr && attr->comp_mask) {
		sib_warn("start_poll: unknown comp_mask 0x%x", attr->comp_mask);
		return EINVAL;
	}
	err = take_one(cqx);
	if (after_poll(cqx->context, to_scq(ibv_cq_ex_to_cq(cqx))->cq, err != ENOENT))
		err = take_one(cqx);
	return err;
}

static int cqx_next_poll(struct ibv_cq_ex *cqx)
{
	return take_one(cqx);
}

static void cqx_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
}

#define CUR(cqx) (&to_scq_ex(cqx)->cur)

static enum ibv_wc_opcode cqx_read_opcode(struct ibv_cq_ex *cqx)
{
	return (enum ibv_wc_opcode)CUR(cqx)->opcode;
}

static uint32_t cqx_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->vendor_err;
}

static uint32_t cqx_read_byte_len(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->byte_len;
}

static __be32 cqx_read_imm_data(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->imm_data;
}

static uint32_t cqx_read_qp_num(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->qp_num;
}

static uint32_t cqx_read_src_qp(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->src_qp;
}

static unsigned int cqx_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->wc_flags;
}

static uint32_t cqx_read_slid(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->slid;
}

static uint8_t cqx_read_sl(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->sl;
}

static uint8_t cqx_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->dlid_path_bits;
}

/* hca_core_clock is 1 GHz (SIB_HCA_CORE_CLOCK_KHZ), so cycles are nanoseconds. */
static uint64_t cqx_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->timestamp;
}

static uint64_t cqx_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return CUR(cqx)->timestamp_wall;
}

static struct ibv_cq_ex *softib_create_cq_ex(struct ibv_context *ctx,
					     struct ibv_cq_init_attr_ex *attr)
{
	struct softib_cq *scq;
	struct ibv_cq_ex *cqx;
	int err;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		sib_warn("create_cq_ex: unknown comp_mask bits 0x%x", attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ctx ||
	     !to_spd(attr->parent_domain)->protection_domain)) {
		sib_warn("create_cq_ex: parent_domain must be a parent domain of this context");
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		softib_probe_refused("create_cq_ex: flags 0x%x are not supported (only "
				     "SINGLE_THREADED)",
				     attr->flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)SIB_WC_FLAGS) {
		softib_probe_refused("create_cq_ex: wc_flags 0x%llx are not supported",
				     (unsigned long long)(attr->wc_flags & ~(uint64_t)SIB_WC_FLAGS));
		errno = EOPNOTSUPP;
		return NULL;
	}
	err = check_create(ctx, attr->cqe, attr->channel, (int)attr->comp_vector, "create_cq_ex");
	if (err) {
		errno = err;
		return NULL;
	}
	scq = cq_alloc(ctx, attr->cqe,
		       attr->wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK));
	if (!scq)
		return NULL;
	scq->wc_flags = attr->wc_flags;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		scq->parent_domain = attr->parent_domain;
		softib_pd_get(scq->parent_domain);
	}
	cqx = &scq->vcq.cq_ex;
	cqx->start_poll = cqx_start_poll;
	cqx->next_poll = cqx_next_poll;
	cqx->end_poll = cqx_end_poll;
	cqx->read_opcode = cqx_read_opcode;
	cqx->read_vendor_err = cqx_read_vendor_err;
	cqx->read_wc_flags = cqx_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = cqx_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = cqx_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = cqx_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = cqx_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = cqx_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = cqx_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = cqx_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = cqx_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns = cqx_read_completion_wallclock_ns;
	return cqx;
}

const struct verbs_context_ops softib_cq_ops = {
	.create_cq = softib_create_cq,
	.create_cq_ex = softib_create_cq_ex,
	.poll_cq = softib_poll_cq,
	.req_notify_cq = softib_req_notify_cq,
	.cq_event = softib_cq_event,
	.resize_cq = softib_resize_cq,
	.destroy_cq = softib_destroy_cq,
};

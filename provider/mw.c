/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory windows: alloc_mw, dealloc_mw, bind_mw (type 1), and the bind and
 * local-invalidate steps the send queue's executor may run (provider/mw.h).
 * The rules live in memreg/ (memreg_mw_bind, memreg_mw_invalidate).
 */
#include <errno.h>
#include <stdlib.h>

#include "provider/handles.h"
#include "provider/mw.h"
#include "provider/softib.h"
#include "base/log.h"

_Static_assert((int)MEMREG_MW_TYPE_1 == (int)IBV_MW_TYPE_1, "MW types");
_Static_assert((int)MEMREG_MW_TYPE_2 == (int)IBV_MW_TYPE_2, "MW types");

static struct memreg_table *softib_memreg(struct ibv_context *ctx)
{
	return to_sctx(ctx)->hca->memreg;
}

static struct ibv_mw *softib_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw;
	uint32_t rkey;
	int err;

	/* IBA knows types 1 and 2 (2A/2B) only. */
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		sib_warn("alloc_mw on PD 0x%06x: type %d is not a memory window type (1 or 2)",
			 to_spd(pd)->pdn, (int)type);
		errno = EINVAL;
		return NULL;
	}
	mw = sib_obj_new(SIB_OBJ_MW, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = memreg_mw_alloc(softib_memreg(pd->context), to_spd(pd)->pdn, type, &rkey);
	if (err) {
		sib_warn("alloc_mw on PD 0x%06x: no room for another memory window (max_mw %u)",
			 to_spd(pd)->pdn, (unsigned)SIB_MAX_MW);
		sib_obj_discard(mw);
		errno = err;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = rkey;
	mw->handle = rkey;
	mw->type = type;
	softib_pd_get(pd);
	return mw;
}

static int softib_dealloc_mw(struct ibv_mw *mw)
{
	int err = sib_obj_claim(mw, "dealloc_mw");

	if (err)
		return err;
	/* The handle keeps the index; a type 2 bind may have changed key8. */
	if (memreg_mw_dealloc(softib_memreg(mw->context), mw->handle)) {
		/* As the kernel answers a handle it does not know. */
		sib_warn("dealloc_mw on MW 0x%06x: not an allocated memory window", mw->rkey);
		sib_obj_keep(mw);
		errno = ENOENT;
		return ENOENT;
	}
	softib_pd_put(mw->pd);
	sib_obj_destroyed(mw);
	return 0;
}

/*
 * ibv_bind_mw (type 1): a bind work request on qp's send queue, like any
 * other; its completion carries IBV_WC_BIND_MW.  On a successful post the
 * window's R_Key is the new one (ibv_bind_mw(3)).
 */
static int softib_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	uint32_t new_rkey;
	int err;

	if (!qp || !mw || !mw_bind) {
		sib_warn("bind_mw: qp, mw and mw_bind are required");
		return EINVAL;
	}
	if (mw->context != qp->context) {
		sib_warn("bind_mw on QP 0x%06x: MW 0x%06x belongs to another context", qp->qp_num,
			 mw->rkey);
		return EINVAL;
	}
	if (mw->type != IBV_MW_TYPE_1) {
		sib_warn("bind_mw on QP 0x%06x: MW 0x%06x is type %d; ibv_bind_mw binds type 1, "
			 "type 2 is bound with IBV_WR_BIND_MW",
			 qp->qp_num, mw->rkey, (int)mw->type);
		return EINVAL;
	}
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC &&
	    qp->qp_type != IBV_QPT_XRC_SEND) {
		sib_warn("bind_mw on QP 0x%06x: binds need an RC, UC or XRC_SEND QP", qp->qp_num);
		return EINVAL;
	}
	if (mw_bind->bind_info.length && !mw_bind->bind_info.mr) {
		sib_warn("bind_mw on QP 0x%06x: bind_info.mr is NULL", qp->qp_num);
		return EINVAL;
	}
	if (mw_bind->bind_info.mr && mw_bind->bind_info.mr->context != qp->context) {
		sib_warn("bind_mw on QP 0x%06x: the MR belongs to another context", qp->qp_num);
		return EINVAL;
	}
	new_rkey = ibv_inc_rkey(mw->rkey);
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = new_rkey;
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = qp->context->ops.post_send(qp, &wr, &bad);
	if (err)
		return err;
	mw->rkey = new_rkey;
	return 0;
}

enum memreg_verdict softib_mw_exec_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t new_rkey,
					const struct ibv_mw_bind_info *info)
{
	struct memreg_bind b = {
		.mw_rkey = mw->handle,
		.new_rkey = new_rkey,
		.mr_lkey = info->mr ? info->mr->lkey : 0,
		.addr = info->addr,
		.length = info->length,
		.access = info->mw_access_flags,
		.qpn = qp->qp_num,
		.pd = to_spd(qp->pd)->pdn,
		.by_wr = true,
	};
	enum memreg_verdict v = memreg_mw_bind(softib_memreg(qp->context), &b);

	if (v != MEMREG_OK)
		sib_warn("bind MW 0x%06x on QP 0x%06x to MR 0x%06x [0x%llx, +%llu): %s",
			 mw->rkey, qp->qp_num, b.mr_lkey, (unsigned long long)info->addr,
			 (unsigned long long)info->length, memreg_verdict_str(v));
	return v;
}

enum memreg_verdict softib_mw_exec_local_inv(struct ibv_qp *qp, uint32_t rkey)
{
	enum memreg_verdict v = memreg_mw_invalidate(softib_memreg(qp->context), rkey, false,
						     qp->qp_num, to_spd(qp->pd)->pdn);

	if (v != MEMREG_OK)
		sib_warn("local invalidate of R_Key 0x%06x on QP 0x%06x: %s", rkey, qp->qp_num,
			 memreg_verdict_str(v));
	return v;
}

const struct verbs_context_ops softib_mw_ops = {
	.alloc_mw = softib_alloc_mw,
	.dealloc_mw = softib_dealloc_mw,
	.bind_mw = softib_bind_mw,
};

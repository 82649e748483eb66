/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared receive queues: create_srq, create_srq_ex (basic and XRC),
 * modify_srq (resize and limit arming), query_srq, get_srq_num,
 * post_srq_recv, destroy_srq.  The queue lives in transport/srq.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/handles.h"
#include "provider/queues.h"
#include "transport/caps.h"
#include "hca/hca.h"
#include "base/log.h"

_Static_assert((int)SIB_SRQ_MAX_WR == (int)IBV_SRQ_MAX_WR, "srq attr mask");
_Static_assert((int)SIB_SRQ_LIMIT == (int)IBV_SRQ_LIMIT, "srq attr mask");

static struct ibv_srq *create_common(struct ibv_context *ctx, struct ibv_pd *pd,
				     struct ibv_srq_init_attr_ex *a, enum ibv_srq_type type)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct softib_srq *ssrq;
	char why[160];
	int err;

	if (!pd || pd->context != ctx) {
		sib_warn("create_srq: a PD of this context is required");
		errno = EINVAL;
		return NULL;
	}
	if (type == IBV_SRQT_XRC) {
		if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !a->xrcd ||
		    a->xrcd->context != ctx || !(a->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !a->cq ||
		    a->cq->context != ctx) {
			sib_warn("create_srq_ex: an XRC SRQ needs an XRCD and a CQ of this context");
			errno = EINVAL;
			return NULL;
		}
	}
	ssrq = sib_obj_new(SIB_OBJ_SRQ, sizeof(*ssrq));
	if (!ssrq) {
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_srq *srq = &ssrq->vsrq.srq;
	struct sib_srq_init in = {
		.max_wr = a->attr.max_wr,
		.max_sge = a->attr.max_sge,
		.srq_limit = a->attr.srq_limit,
		.pd = to_spd(pd)->pdn,
		.xrcd = type == IBV_SRQT_XRC ? to_sxrcd(a->xrcd)->x : NULL,
		.cq = type == IBV_SRQT_XRC ? to_scq(a->cq)->cq : NULL,
		.srqns = sctx->hca->srqns,
		.engine = sctx->hca->engine,
		.sink = &sctx->sink,
		.user = srq,
	};

	err = sib_srq_create(&in, &ssrq->srq, why, sizeof(why));
	if (err) {
		softib_refused(in.beyond_device, "create_srq: %s", why);
		sib_obj_discard(ssrq);
		errno = err;
		return NULL;
	}
	a->attr.max_wr = in.max_wr;
	a->attr.max_sge = in.max_sge;
	srq->context = ctx;
	srq->srq_context = a->srq_context;
	srq->pd = pd;
	srq->handle = 0;
	srq->events_completed = 0;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	ssrq->vsrq.srq_type = type;
	if (type == IBV_SRQT_XRC) {
		ssrq->vsrq.xrcd = &to_sxrcd(a->xrcd)->vxrcd;
		ssrq->vsrq.cq = a->cq;
		ssrq->vsrq.srq_num = sib_srq_num(ssrq->srq);
	}
	softib_pd_get(pd);
	return srq;
}

static struct ibv_srq *softib_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax;
	struct ibv_srq *srq;

	memset(&ax, 0, sizeof(ax));
	ax.srq_context = attr->srq_context;
	ax.attr = attr->attr;
	srq = create_common(pd->context, pd, &ax, IBV_SRQT_BASIC);
	if (srq)
		attr->attr = ax.attr;
	return srq;
}

static struct ibv_srq *softib_create_srq_ex(struct ibv_context *ctx,
					    struct ibv_srq_init_attr_ex *a)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |
			       IBV_SRQ_INIT_ATTR_TM;
	enum ibv_srq_type type = IBV_SRQT_BASIC;

	if (a->comp_mask & ~known) {
		sib_warn("create_srq_ex: unknown comp_mask bits 0x%x", a->comp_mask & ~known);
		errno = EINVAL;
		return NULL;
	}
	if (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = a->srq_type;
	if (type == IBV_SRQT_TM || (a->comp_mask & IBV_SRQ_INIT_ATTR_TM)) {
		softib_probe_refused("create_srq_ex: tag matching SRQs are not supported");
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) {
		sib_warn("create_srq_ex: unknown SRQ type %d", (int)type);
		errno = EINVAL;
		return NULL;
	}
	return create_common(ctx, (a->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? a->pd : NULL, a, type);
}

static int softib_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	char why[160];
	int err;

	err = sib_srq_modify(to_ssrq(srq)->srq, attr->max_wr, attr->srq_limit, (unsigned)mask, why,
			     sizeof(why));
	if (err)
		sib_warn("modify_srq: %s", why);
	return err;
}

static int softib_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	sib_srq_query(to_ssrq(srq)->srq, &attr->max_wr, &attr->max_sge, &attr->srq_limit);
	return 0;
}

static int softib_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	struct softib_srq *ssrq = to_ssrq(srq);

	if (!sib_srq_is_xrc(ssrq->srq)) {
		sib_warn("get_srq_num: only XRC SRQs have a number");
		return EINVAL;
	}
	*srq_num = sib_srq_num(ssrq->srq);
	return 0;
}

static int softib_destroy_srq(struct ibv_srq *srq)
{
	struct softib_srq *ssrq = to_ssrq(srq);
	int err = sib_obj_claim(ssrq, "destroy_srq");

	if (err)
		return err;
	err = sib_srq_destroy(ssrq->srq);
	if (err) {
		sib_warn("destroy_srq: QPs still receive from this SRQ");
		sib_obj_keep(ssrq);
		return err;
	}
	softib_pd_put(srq->pd);
	sib_obj_destroyed(ssrq);
	return 0;
}

static int softib_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	struct sib_sge sge[SIB_MAX_SRQ_SGE];
	uint32_t max_wr, max_sge, limit;
	char why[160];
	int err = 0;

	sib_srq_query(to_ssrq(srq)->srq, &max_wr, &max_sge, &limit);
	for (; wr; wr = wr->next) {
		/* Checked before the list is read: never read past what the SRQ allows. */
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			snprintf(why, sizeof(why), "num_sge %d exceeds max_sge %u", wr->num_sge,
				 max_sge);
			err = EINVAL;
		} else if (wr->num_sge && !wr->sg_list) {
			snprintf(why, sizeof(why), "sg_list is NULL with num_sge %d", wr->num_sge);
			err = EINVAL;
		} else {
			for (int i = 0; i < wr->num_sge; i++) {
				sge[i].addr = wr->sg_list[i].addr;
				sge[i].length = wr->sg_list[i].length;
				sge[i].lkey = wr->sg_list[i].lkey;
			}
			err = sib_srq_post(to_ssrq(srq)->srq, wr->wr_id, sge,
					   (uint32_t)wr->num_sge, why, sizeof(why));
		}
		if (err) {
			/* ENOMEM: the SRQ is full, back-pressure (post.c) */
			sib_log(err == ENOMEM ? SIB_LOG_DEBUG : SIB_LOG_WARN, "post_srq_recv: %s", why);
			if (bad_wr)
				*bad_wr = wr;
			return err;
		}
	}
	return 0;
}

const struct verbs_context_ops softib_srq_ops = {
	.create_srq = softib_create_srq,
	.create_srq_ex = softib_create_srq_ex,
	.modify_srq = softib_modify_srq,
	.query_srq = softib_query_srq,
	.get_srq_num = softib_get_srq_num,
	.destroy_srq = softib_destroy_srq,
	.post_srq_recv = softib_post_srq_recv,
};

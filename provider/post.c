/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * post_send and post_recv: each work request is checked and copied into the
 * transport's queue (transport/qp.c decides what the state allows).  Remote
 * operations wait there for the data path; Bind MW and Local Invalidate run
 * at once through memreg (provider/mw.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "provider/mw.h"
#include "provider/queues.h"
#include "transport/engine.h"
#include "transport/caps.h"
#include "base/log.h"

_Static_assert((int)SIB_WR_BIND_MW == (int)IBV_WR_BIND_MW, "wr opcode");
_Static_assert((int)SIB_WR_SEND_WITH_INV == (int)IBV_WR_SEND_WITH_INV, "wr opcode");
#if SIB_ABI_LAYOUT >= 44
_Static_assert((int)SIB_WR_ATOMIC_WRITE == (int)IBV_WR_ATOMIC_WRITE, "wr opcode");
#endif
#if SIB_ABI_LAYOUT >= 45
_Static_assert((int)SIB_WR_FLUSH == (int)IBV_WR_FLUSH, "wr opcode");
#endif
_Static_assert((int)SIB_SEND_INLINE == (int)IBV_SEND_INLINE, "send flags");
_Static_assert((int)SIB_SEND_SOLICITED == (int)IBV_SEND_SOLICITED, "send flags");

enum sib_wc_status softib_local_exec(void *user, const struct sib_send_wqe *w)
{
	struct ibv_qp *qp = user;

	if (w->opcode == SIB_WR_BIND_MW) {
		struct ibv_mw_bind_info info = {
			.mr = w->bind.mr,
			.addr = w->bind.addr,
			.length = w->bind.length,
			.mw_access_flags = w->bind.access,
		};

		return softib_mw_exec_bind(qp, w->bind.mw, w->bind.new_rkey, &info) == MEMREG_OK
			       ? SIB_WC_SUCCESS
			       : SIB_WC_MW_BIND_ERR;
	}
	return softib_mw_exec_local_inv(qp, w->invalidate_rkey) == MEMREG_OK ? SIB_WC_SUCCESS
									     : SIB_WC_LOC_PROT_ERR;
}

int softib_post_one_send(struct softib_qp *sqp, const struct ibv_send_wr *wr, char *why,
			 size_t why_len)
{
	struct ibv_qp *qp = &sqp->vqp.qp;
	struct sib_sge sge[SIB_MAX_SGE];
	struct sib_send_wqe w;

	uint32_t max_sge = sib_qp_caps(sqp->qp)->max_send_sge;

	/* Checked before the list is read: never read past what the QP allows. */
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
		snprintf(why, why_len, "num_sge %d exceeds max_send_sge %u", wr->num_sge, max_sge);
		return EINVAL;
	}
	if (wr->num_sge && !wr->sg_list) {
		snprintf(why, why_len, "sg_list is NULL with num_sge %d", wr->num_sge);
		return EINVAL;
	}
	/* ibv_send_wr has no field for their data: rdma-core posts them with
	 * ibv_wr_atomic_write / ibv_wr_flush only (ibv_wr_post(3)). */
	if (wr->opcode == (enum ibv_wr_opcode)SIB_WR_ATOMIC_WRITE ||
	    wr->opcode == (enum ibv_wr_opcode)SIB_WR_FLUSH) {
		snprintf(why, why_len, "opcode %d (ATOMIC_WRITE or FLUSH) is posted with "
			 "ibv_wr_atomic_write / ibv_wr_flush, not ibv_post_send", (int)wr->opcode);
		return EINVAL;
	}
	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.opcode = (enum sib_wr_opcode)wr->opcode;
	w.send_flags = wr->send_flags;
	w.num_sge = (uint32_t)wr->num_sge;
	for (int i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w.imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		w.invalidate_rkey = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w.atomic.compare_add = wr->wr.atomic.compare_add;
		w.atomic.swap = wr->wr.atomic.swap;
		w.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW:
		if (!wr->bind_mw.mw || wr->bind_mw.mw->context != qp->context) {
			snprintf(why, why_len, "bind_mw.mw is not a memory window of this context");
			return EINVAL;
		}
		w.bind.mw = wr->bind_mw.mw;
		w.bind.mw_rkey = wr->bind_mw.mw->handle;
		w.bind.new_rkey = wr->bind_mw.rkey;
		w.bind.mr = wr->bind_mw.bind_info.mr;
		w.bind.mr_lkey = wr->bind_mw.bind_info.mr ? wr->bind_mw.bind_info.mr->lkey : 0;
		w.bind.addr = wr->bind_mw.bind_info.addr;
		w.bind.length = wr->bind_mw.bind_info.length;
		w.bind.access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	default:
		break;
	}
	if (qp->qp_type == IBV_QPT_UD) {
		struct ibv_ah *ah = wr->wr.ud.ah;

		if (!ah || ah->context != qp->context) {
			snprintf(why, why_len, "a UD send needs an AH of this context");
			return EINVAL;
		}
		softib_av_from_ibv(&w.ud.av, &to_sah(ah)->attr);
		w.ud.dest = softib_ah_dest(to_sah(ah));
		w.ud.remote_qpn = wr->wr.ud.remote_qpn;
		w.ud.remote_qkey = wr->wr.ud.remote_qkey;
	}
	if (qp->qp_type == IBV_QPT_XRC_SEND)
		w.xrc_remote_srqn = wr->qp_type.xrc.remote_srqn;
	return sib_qp_post_send(sqp->qp, &w, sge, why, why_len);
}

static int softib_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	char why[160];
	int err = 0;

	for (; wr; wr = wr->next) {
		err = softib_post_one_send(to_sqp(qp), wr, why, sizeof(why));
		if (err) {
			/* A full queue (ENOMEM) is back-pressure programs use
			 * (libfabric's ofi_rxm): debug, as a probe; the rest warn. */
			sib_log(err == ENOMEM ? SIB_LOG_DEBUG : SIB_LOG_WARN, "post_send on QP 0x%06x: %s",
				qp->qp_num, why);
			if (bad_wr)
				*bad_wr = wr;
			break;
		}
	}
	/* Transmit what was queued, on the caller's thread (docs/architecture.md section 6). */
	sib_progress_post(to_sctx(qp->context)->hca, to_sqp(qp)->qp);
	return err;
}

static int softib_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sib_sge sge[SIB_MAX_SGE];
	char why[160];
	int err;

	for (; wr; wr = wr->next) {
		uint32_t max_sge = sib_qp_caps(to_sqp(qp)->qp)->max_recv_sge;

		if (wr->num_sge < 0 || (!qp->srq && (uint32_t)wr->num_sge > max_sge)) {
			snprintf(why, sizeof(why), "num_sge %d exceeds max_recv_sge %u", wr->num_sge,
				 max_sge);
			err = EINVAL;
		} else if (wr->num_sge && !wr->sg_list) {
			snprintf(why, sizeof(why), "sg_list is NULL with num_sge %d", wr->num_sge);
			err = EINVAL;
		} else if (qp->srq) {
			snprintf(why, sizeof(why), "QP receives from an SRQ: use ibv_post_srq_recv");
			err = EINVAL;
		} else {
			for (int i = 0; i < wr->num_sge; i++) {
				sge[i].addr = wr->sg_list[i].addr;
				sge[i].length = wr->sg_list[i].length;
				sge[i].lkey = wr->sg_list[i].lkey;
			}
			err = sib_qp_post_recv(to_sqp(qp)->qp, wr->wr_id, sge, (uint32_t)wr->num_sge,
					       why, sizeof(why));
		}
		if (err) {
			sib_log(err == ENOMEM ? SIB_LOG_DEBUG : SIB_LOG_WARN, "post_recv on QP 0x%06x: %s",
				qp->qp_num, why); /* ENOMEM: full, as post_send */
			if (bad_wr)
				*bad_wr = wr;
			return err;
		}
	}
	return 0;
}

const struct verbs_context_ops softib_post_ops = {
	.post_send = softib_post_send,
	.post_recv = softib_post_recv,
};

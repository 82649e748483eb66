/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Queue pairs: create_qp, create_qp_ex (RC, UC, UD, XRC_SEND, XRC_RECV),
 * query_qp, modify_qp through the state-machine table, destroy_qp.  The QP
 * context and its queues live in transport/qp.c.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "provider/handles.h"
#include "provider/queues.h"
#include "transport/caps.h"
#include "transport/mcast.h"
#include "hca/hca.h"
#include "base/log.h"

_Static_assert((int)SIB_QPS_ERR == (int)IBV_QPS_ERR, "QP states");
_Static_assert((int)SIB_QPS_SQE == (int)IBV_QPS_SQE, "QP states");
_Static_assert((int)SIB_QP_STATE == (int)IBV_QP_STATE, "attr mask");
_Static_assert((int)SIB_QP_CAP == (int)IBV_QP_CAP, "attr mask");
_Static_assert((int)SIB_QP_DEST_QPN == (int)IBV_QP_DEST_QPN, "attr mask");
_Static_assert((int)SIB_QP_RATE_LIMIT == (int)IBV_QP_RATE_LIMIT, "attr mask");
_Static_assert((int)SIB_MTU_4096 == (int)IBV_MTU_4096, "MTU");
_Static_assert((int)SIB_MIG_ARMED == (int)IBV_MIG_ARMED, "migration states");

/* The send operations the wr_* API offers (TSO: not supported).  IBA 1.5's
 * ATOMIC WRITE came with rdma-core 44 and FLUSH with 45 (verbs_abi.h). */
#if SIB_ABI_LAYOUT >= 44
#define SIB_SEND_OPS_ATOMIC_WRITE IBV_QP_EX_WITH_ATOMIC_WRITE
#else
#define SIB_SEND_OPS_ATOMIC_WRITE 0
#endif
#if SIB_ABI_LAYOUT >= 45
#define SIB_SEND_OPS_FLUSH IBV_QP_EX_WITH_FLUSH
#else
#define SIB_SEND_OPS_FLUSH 0
#endif
#define SIB_SEND_OPS                                                                            \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |    \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |                                 \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |                 \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV |        \
	 SIB_SEND_OPS_ATOMIC_WRITE | SIB_SEND_OPS_FLUSH)

void softib_av_from_ibv(struct sib_av *av, const struct ibv_ah_attr *ah)
{
	memset(av, 0, sizeof(*av));
	memcpy(av->DGID, ah->grh.dgid.raw, 16);
	av->flow_label = ah->grh.flow_label;
	av->sgid_index = ah->grh.sgid_index;
	av->hop_limit = ah->grh.hop_limit;
	av->traffic_class = ah->grh.traffic_class;
	av->DLID = ah->dlid;
	av->SL = ah->sl;
	av->src_path_bits = ah->src_path_bits;
	av->static_rate = ah->static_rate;
	av->is_global = ah->is_global;
	av->port_num = ah->port_num;
}

void softib_av_to_ibv(struct ibv_ah_attr *ah, const struct sib_av *av)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->grh.dgid.raw, av->DGID, 16);
	ah->grh.flow_label = av->flow_label;
	ah->grh.sgid_index = av->sgid_index;
	ah->grh.hop_limit = av->hop_limit;
	ah->grh.traffic_class = av->traffic_class;
	ah->dlid = av->DLID;
	ah->sl = av->SL;
	ah->src_path_bits = av->src_path_bits;
	ah->static_rate = av->static_rate;
	ah->is_global = av->is_global;
	ah->port_num = av->port_num;
}

static bool ours(struct ibv_context *ctx, const void *obj_ctx_owner)
{
	return obj_ctx_owner == ctx;
}

static enum sib_qp_type qp_type_of(enum ibv_qp_type t, bool *known)
{
	*known = true;
	switch (t) {
	case IBV_QPT_RC:
		return SIB_QPT_RC;
	case IBV_QPT_UC:
		return SIB_QPT_UC;
	case IBV_QPT_UD:
		return SIB_QPT_UD;
	case IBV_QPT_XRC_SEND:
		return SIB_QPT_XRC_SEND;
	case IBV_QPT_XRC_RECV:
		return SIB_QPT_XRC_RECV;
	default:
		*known = false;
		return SIB_QPT_NUM;
	}
}

static struct ibv_qp *create_common(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct softib_qp *sqp;
	bool known;
	char why[160];
	int err;
	enum sib_qp_type t = qp_type_of(a->qp_type, &known);

	if (!known) {
		/* RAW_PACKET and driver types need Ethernet or a vendor: not ours. */
		err = a->qp_type == IBV_QPT_RAW_PACKET || a->qp_type == IBV_QPT_DRIVER ? EOPNOTSUPP
										       : EINVAL;
		softib_refused(err == EOPNOTSUPP, "create_qp: QP type %d is not supported",
			       (int)a->qp_type);
		errno = err;
		return NULL;
	}
	struct ibv_pd *pd = (a->comp_mask & IBV_QP_INIT_ATTR_PD) ? a->pd : NULL;
	struct ibv_xrcd *xrcd = (a->comp_mask & IBV_QP_INIT_ATTR_XRCD) ? a->xrcd : NULL;
	/* ibv_qp.pd is what the caller gave, used or not, as libibverbs'
	 * set_qp reports it: librdmacm takes an XRC_RECV id's PD from it. */
	struct ibv_pd *shown_pd = pd;

	if (t == SIB_QPT_XRC_RECV) {
		if (!xrcd || !ours(ctx, xrcd->context)) {
			sib_warn("create_qp: an XRC_RECV QP needs an XRC domain of this context");
			errno = EINVAL;
			return NULL;
		}
		pd = NULL;
	} else if (!pd || !ours(ctx, pd->context)) {
		sib_warn("create_qp: a %s QP needs a PD of this context", sib_qp_type_name(t));
		errno = EINVAL;
		return NULL;
	}
	if (a->send_cq && !ours(ctx, a->send_cq->context)) {
		sib_warn("create_qp: send_cq belongs to another context");
		errno = EINVAL;
		return NULL;
	}
	if (a->recv_cq && !ours(ctx, a->recv_cq->context)) {
		sib_warn("create_qp: recv_cq belongs to another context");
		errno = EINVAL;
		return NULL;
	}
	if (a->srq && !ours(ctx, a->srq->context)) {
		sib_warn("create_qp: srq belongs to another context");
		errno = EINVAL;
		return NULL;
	}
	sqp = sib_obj_new(SIB_OBJ_QP, sizeof(*sqp));
	if (!sqp) {
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_qp *qp = &sqp->vqp.qp;
	struct sib_qp_init in = {
		.type = t,
		.cap = {
			.max_send_wr = a->cap.max_send_wr,
			.max_recv_wr = a->cap.max_recv_wr,
			.max_send_sge = a->cap.max_send_sge,
			.max_recv_sge = a->cap.max_recv_sge,
			.max_inline_data = a->cap.max_inline_data,
		},
		.sq_sig_all = a->sq_sig_all != 0,
		.block_self_mcast_lb = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
				       (a->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB),
		.send_cq = t != SIB_QPT_XRC_RECV && a->send_cq ? to_scq(a->send_cq)->cq : NULL,
		.recv_cq = (t == SIB_QPT_RC || t == SIB_QPT_UC || t == SIB_QPT_UD) && a->recv_cq
				   ? to_scq(a->recv_cq)->cq
				   : NULL,
		.srq = (t == SIB_QPT_RC || t == SIB_QPT_UC || t == SIB_QPT_UD) && a->srq
			       ? to_ssrq(a->srq)->srq
			       : NULL,
		.xrcd = t == SIB_QPT_XRC_RECV ? to_sxrcd(xrcd)->x : NULL,
		.pd = pd ? to_spd(pd)->pdn : 0,
		.local_exec = softib_local_exec,
		.qpns = sctx->hca->qpns,
		.engine = sctx->hca->engine,
		.sink = &sctx->sink,
		.user = qp,
	};

	err = sib_qp_create(&in, &sqp->qp, why, sizeof(why));
	if (err) {
		softib_refused(in.beyond_device, "create_qp: %s", why);
		sib_obj_discard(sqp);
		errno = err;
		return NULL;
	}
	a->cap.max_send_wr = in.cap.max_send_wr;
	a->cap.max_recv_wr = in.cap.max_recv_wr;
	a->cap.max_send_sge = in.cap.max_send_sge;
	a->cap.max_recv_sge = in.cap.max_recv_sge;
	a->cap.max_inline_data = in.cap.max_inline_data;

	qp->context = ctx;
	qp->qp_context = a->qp_context;
	qp->pd = shown_pd;
	qp->send_cq = in.send_cq ? a->send_cq : NULL;
	qp->recv_cq = in.recv_cq ? a->recv_cq : NULL;
	qp->srq = in.srq ? a->srq : NULL;
	qp->qp_num = sib_qp_num(sqp->qp);
	qp->qp_type = a->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->events_completed = 0;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	pthread_mutex_init(&sqp->wr_lock, NULL);
	sqp->sq_sig_all = a->sq_sig_all != 0;
	if (xrcd) {
		sqp->vqp.comp_mask |= VERBS_QP_XRCD;
		sqp->vqp.xrcd = &to_sxrcd(xrcd)->vxrcd;
	}
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		sqp->send_ops_flags = a->send_ops_flags;
		sqp->vqp.comp_mask |= VERBS_QP_EX;
		softib_qp_ex_init(sqp);
	}
	if (pd)
		softib_pd_get(pd);
	return qp;
}

static struct ibv_qp *softib_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *qp;

	memset(&ax, 0, sizeof(ax));
	ax.qp_context = attr->qp_context;
	ax.send_cq = attr->send_cq;
	ax.recv_cq = attr->recv_cq;
	ax.srq = attr->srq;
	ax.cap = attr->cap;
	ax.qp_type = attr->qp_type;
	ax.sq_sig_all = attr->sq_sig_all;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		sib_warn("create_qp: an XRC_RECV QP is created with ibv_create_qp_ex and an XRCD");
		errno = EINVAL;
		return NULL;
	}
	qp = create_common(pd->context, &ax);
	if (qp)
		attr->cap = ax.cap;
	return qp;
}

static struct ibv_qp *softib_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
			       IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

	if (a->comp_mask & ~known) {
		sib_warn("create_qp_ex: unknown comp_mask bits 0x%x", a->comp_mask & ~known);
		errno = EINVAL;
		return NULL;
	}
	if (a->comp_mask & (IBV_QP_INIT_ATTR_MAX_TSO_HEADER | IBV_QP_INIT_ATTR_IND_TABLE |
			    IBV_QP_INIT_ATTR_RX_HASH)) {
		softib_probe_refused("create_qp_ex: TSO, RSS and indirection tables are Ethernet "
				     "features");
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (a->create_flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)) {
		softib_probe_refused("create_qp_ex: create_flags 0x%x are not supported",
				     a->create_flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* Only a UD QP joins multicast groups (transport/mcast.h). */
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (a->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) && a->qp_type != IBV_QPT_UD) {
		sib_warn("create_qp_ex: IBV_QP_CREATE_BLOCK_SELF_MCAST_LB is for UD QPs only");
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~(uint64_t)SIB_SEND_OPS)) {
		/* Unknown bits too: a newer header's ops would run past our ibv_qp_ex. */
		softib_probe_refused("create_qp_ex: send_ops_flags 0x%llx are not supported",
				     (unsigned long long)(a->send_ops_flags & ~(uint64_t)SIB_SEND_OPS));
		errno = EOPNOTSUPP;
		return NULL;
	}
	return create_common(ctx, a);
}

static void attr_to_sib(struct sib_qp_attr *s, const struct ibv_qp_attr *a)
{
	memset(s, 0, sizeof(*s));
	s->qp_state = (enum sib_qp_state)a->qp_state;
	s->cur_qp_state = (enum sib_qp_state)a->cur_qp_state;
	s->path_mtu = (enum sib_mtu)a->path_mtu;
	s->path_mig_state = (enum sib_mig_state)a->path_mig_state;
	s->qkey = a->qkey;
	s->rq_psn = a->rq_psn;
	s->sq_psn = a->sq_psn;
	s->dest_qp_num = a->dest_qp_num;
	s->qp_access_flags = a->qp_access_flags;
	softib_av_from_ibv(&s->ah_attr, &a->ah_attr);
	softib_av_from_ibv(&s->alt_ah_attr, &a->alt_ah_attr);
	s->pkey_index = a->pkey_index;
	s->alt_pkey_index = a->alt_pkey_index;
	s->en_sqd_async_notify = a->en_sqd_async_notify;
	s->max_rd_atomic = a->max_rd_atomic;
	s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	s->min_rnr_timer = a->min_rnr_timer;
	s->port_num = a->port_num;
	s->timeout = a->timeout;
	s->retry_cnt = a->retry_cnt;
	s->rnr_retry = a->rnr_retry;
	s->alt_port_num = a->alt_port_num;
	s->alt_timeout = a->alt_timeout;
	s->rate_limit = a->rate_limit;
}

/* The kernel refuses a GRH whose source GID slot is empty; an index beyond
 * the table is the state machine's to refuse. */
static bool sgid_empty(struct ibv_qp *qp, struct sib_port *port, const struct ibv_ah_attr *ah,
		       int given, const char *name)
{
	if (!given || !port || !ah->is_global || ah->grh.sgid_index >= SIB_GID_TBL_LEN ||
	    sib_port_gid_valid(port, ah->grh.sgid_index))
		return false;
	sib_warn("modify_qp on QP 0x%06x: %s.grh.sgid_index %u names an empty GID table entry",
		 qp->qp_num, name, ah->grh.sgid_index);
	return true;
}

/* Linux lets a process with CAP_NET_RAW give its QPs a controlled Q_Key
 * (uverbs modify_qp); so does softib. */
static bool may_use_controlled_qkeys(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_NET_RAW / 32].effective & (1u << (CAP_NET_RAW % 32));
}

static int softib_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct softib_context *sctx = to_sctx(qp->context);
	struct sib_port *port = sib_hca_port(sctx->hca, 1);
	struct sib_qp_limits lim = {
		.active_mtu = port ? port->active_mtu : SIB_MTU_4096,
		.pkey_tbl_len = SIB_MAX_PKEYS,
		.gid_tbl_len = SIB_GID_TBL_LEN,
		.phys_port_cnt = SIB_NUM_PORTS,
		.privileged = attr && (attr_mask & IBV_QP_QKEY) && (attr->qkey & 0x80000000u) &&
			      may_use_controlled_qkeys(),
	};
	struct sib_qp_attr s;
	char why[160];
	int err;

	if (attr && (sgid_empty(qp, port, &attr->ah_attr, attr_mask & IBV_QP_AV, "ah_attr") ||
		     sgid_empty(qp, port, &attr->alt_ah_attr, attr_mask & IBV_QP_ALT_PATH,
				"alt_ah_attr")))
		return EINVAL;
	if (!attr) {
		sib_warn("modify_qp on QP 0x%06x: attr is NULL", qp->qp_num);
		return EINVAL;
	}
	/* The kernel's uverbs drops the attributes an XRC QP has no use for
	 * before its checks (modify_qp_mask): an initiator has no responder
	 * side, a target no requester side.  perftest -c XRC relies on it. */
	if (qp->qp_type == IBV_QPT_XRC_SEND)
		attr_mask &= ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	else if (qp->qp_type == IBV_QPT_XRC_RECV)
		attr_mask &= ~(IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY);
	attr_to_sib(&s, attr);
	err = sib_qp_modify(to_sqp(qp)->qp, &s, (uint32_t)attr_mask, &lim, why, sizeof(why));
	if (err) {
		sib_warn("modify_qp on QP 0x%06x: %s", qp->qp_num, why);
		return err;
	}
	qp->state = (enum ibv_qp_state)sib_qp_state(to_sqp(qp)->qp);
	return 0;
}

static int softib_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			   struct ibv_qp_init_attr *init_attr)
{
	struct softib_qp *sqp = to_sqp(qp);
	struct sib_qp_attr s;

	(void)attr_mask; /* like hardware, report everything */
	if (!attr || !init_attr)
		return EINVAL;
	sib_qp_query(sqp->qp, &s);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)s.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)s.qp_state;
	attr->path_mtu = (enum ibv_mtu)s.path_mtu;
	attr->path_mig_state = (enum ibv_mig_state)s.path_mig_state;
	attr->qkey = s.qkey;
	attr->rq_psn = s.rq_psn;
	attr->sq_psn = s.sq_psn;
	attr->dest_qp_num = s.dest_qp_num;
	attr->qp_access_flags = s.qp_access_flags;
	attr->cap.max_send_wr = s.cap.max_send_wr;
	attr->cap.max_recv_wr = s.cap.max_recv_wr;
	attr->cap.max_send_sge = s.cap.max_send_sge;
	attr->cap.max_recv_sge = s.cap.max_recv_sge;
	attr->cap.max_inline_data = s.cap.max_inline_data;
	softib_av_to_ibv(&attr->ah_attr, &s.ah_attr);
	softib_av_to_ibv(&attr->alt_ah_attr, &s.alt_ah_attr);
	attr->pkey_index = s.pkey_index;
	attr->alt_pkey_index = s.alt_pkey_index;
	attr->en_sqd_async_notify = s.en_sqd_async_notify;
	attr->sq_draining = s.sq_draining;
	attr->max_rd_atomic = s.max_rd_atomic;
	attr->max_dest_rd_atomic = s.max_dest_rd_atomic;
	attr->min_rnr_timer = s.min_rnr_timer;
	attr->port_num = s.port_num;
	attr->timeout = s.timeout;
	attr->retry_cnt = s.retry_cnt;
	attr->rnr_retry = s.rnr_retry;
	attr->alt_port_num = s.alt_port_num;
	attr->alt_timeout = s.alt_timeout;
	attr->rate_limit = s.rate_limit;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = attr->cap;
	init_attr->qp_type = qp->qp_type;
	init_attr->sq_sig_all = sqp->sq_sig_all;
	qp->state = attr->qp_state;
	return 0;
}

static int softib_destroy_qp(struct ibv_qp *qp)
{
	struct softib_qp *sqp = to_sqp(qp);
	unsigned groups;
	int err = sib_obj_claim(sqp, "destroy_qp");

	if (err)
		return err;
	/* As the kernel's uverbs: a QP leaves its groups before it goes. */
	groups = sib_qp_mcast_groups(sqp->qp);
	if (groups) {
		sib_warn("destroy_qp on QP 0x%06x: still attached to %u multicast group(s), "
			 "ibv_detach_mcast first",
			 qp->qp_num, groups);
		sib_obj_keep(sqp);
		return EBUSY;
	}
	if (sqp->send_ops_flags)
		softib_qp_ex_fini(sqp);
	sib_qp_destroy(sqp->qp);
	if (qp->pd && qp->qp_type != IBV_QPT_XRC_RECV) /* an XRC_RECV QP only shows it */
		softib_pd_put(qp->pd);
	pthread_mutex_destroy(&sqp->wr_lock);
	sib_obj_destroyed(sqp);
	return 0;
}

static int softib_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0; /* data may be placed out of order until the completion (conservative) */
}

const struct verbs_context_ops softib_qp_ops = {
	.create_qp = softib_create_qp,
	.create_qp_ex = softib_create_qp_ex,
	.modify_qp = softib_modify_qp,
	.query_qp = softib_query_qp,
	.destroy_qp = softib_destroy_qp,
	.query_qp_data_in_order = softib_query_qp_data_in_order,
};

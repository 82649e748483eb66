/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib0 itself: the verbs_device the interposer lists, opening and
 * closing contexts, and the device and port queries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "provider/softib.h"
#include "transport/caps.h"
#include "base/log.h"

static struct verbs_context *softib_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						  void *private_data);
static void softib_uninit_device(struct verbs_device *vdev);

static const struct verbs_device_ops softib_dev_ops = {
	.name = "softib",
	.alloc_context = softib_alloc_context,
	.uninit_device = softib_uninit_device,
};

/*
 * Static, so it outlives every list and context; the library only ever
 * drops references handed out by the interposer, which adds them first,
 * so the refcount never reaches 0 and uninit_device is never needed.
 */
struct softib_device softib_dev = {
	.vdev = {
		.device = {
			.node_type = IBV_NODE_CA,
			.transport_type = IBV_TRANSPORT_IB,
			.name = SIB_DEV_NAME,
			.dev_name = SIB_DEV_NAME,
			/* No sysfs presence: reads under these paths fail
			 * cleanly, which libibverbs and ibv_devinfo tolerate. */
			.dev_path = "/sys/class/infiniband_verbs/" SIB_DEV_NAME,
			.ibdev_path = "/sys/class/infiniband/" SIB_DEV_NAME,
		},
		.ops = &softib_dev_ops,
		.refcount = 1,
		.sysfs = NULL,
	},
};

static void softib_uninit_device(struct verbs_device *vdev)
{
	(void)vdev;
}

struct sib_port *softib_port(struct softib_context *sctx, unsigned port_num, const char *verb)
{
	struct sib_port *port = sib_hca_port(sctx->hca, port_num);

	if (!port)
		sib_warn("%s on %s: port %u does not exist (ports are 1..%d)", verb,
			 SIB_DEV_NAME, port_num, SIB_NUM_PORTS);
	return port;
}

static void fill_device_attr(struct softib_context *sctx, struct ibv_device_attr *a)
{
	struct sib_hca *hca = sctx->hca;

	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", SIB_FW_VER);
	a->node_guid = htobe64(hca->node.node_guid);
	a->sys_image_guid = htobe64(hca->node.sys_image_guid);
	a->max_mr_size = SIB_MAX_MR_SIZE;
	a->page_size_cap = ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1); /* any multiple of a page */
	a->vendor_id = SIB_VENDOR_ID;
	a->vendor_part_id = SIB_VENDOR_PART_ID;
	a->hw_ver = SIB_HW_VER;
	a->max_qp = SIB_MAX_QP;
	a->max_qp_wr = SIB_MAX_QP_WR;
	/* Only what the engine really does: IBA 10.2 (RNR NAK generation), the
	 * port and GUID events, AV port enforcement (create_ah checks the
	 * port), SRQ resizing (modify_srq max_wr), memory windows type 1 and
	 * 2B, XRC, and the memory management extensions that user space can
	 * use (LOCAL_INV, SEND_WITH_INV). */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_UD_AV_PORT_ENFORCE |
			      IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC |
			      IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a->max_sge = SIB_MAX_SGE;
	a->max_sge_rd = SIB_MAX_SGE_RD;
	a->max_cq = SIB_MAX_CQ;
	a->max_cqe = SIB_MAX_CQE;
	a->max_mr = SIB_MAX_MR;
	a->max_pd = SIB_MAX_PD;
	a->max_qp_rd_atom = SIB_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = SIB_MAX_QP_RD_ATOM * SIB_MAX_QP;
	a->max_qp_init_rd_atom = SIB_MAX_QP_INIT_RD_ATOM;
	/* IBA 11.2.1.2's levels nest: HCA promises atomicity among the atomics
	 * this HCA executes, GLOB also with the CPU and other devices.  softib
	 * keeps both (the responder runs atomics as CPU atomics on host memory:
	 * rc_errors.c atomic_glob, stress_rc.c) and reports the weaker HCA,
	 * which is true too and what programs test for: UCX 1.13 uses device
	 * atomics only at HCA (ib_md.c) and pyverbs registers REMOTE_ATOMIC
	 * MRs only when atomic_cap & HCA; rxe and mlx5 report HCA. */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = SIB_MAX_MW;
	a->max_ah = SIB_MAX_AH;
	a->max_srq = SIB_MAX_SRQ;
	a->max_srq_wr = SIB_MAX_SRQ_WR;
	a->max_srq_sge = SIB_MAX_SRQ_SGE;
	a->max_pkeys = SIB_MAX_PKEYS;
	a->max_mcast_grp = SIB_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SIB_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = SIB_MAX_TOTAL_MCAST_QP_ATTACH;
	a->local_ca_ack_delay = SIB_LOCAL_CA_ACK_DELAY;
	a->phys_port_cnt = SIB_NUM_PORTS;
}

/*
 * On-demand paging: every access through an ODP MR is fault-safe
 * (memreg/odp.c), whatever the operation, so each transport offers ODP
 * for all it does: RC everything, UC no READ or atomics, UD SEND and
 * RECV, XRC all but a QP's own RQ (it receives through SRQs only).
 */
static void fill_odp_caps(struct ibv_device_attr_ex *a)
{
	const uint32_t srq = IBV_ODP_SUPPORT_SRQ_RECV;
	const uint32_t uc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | srq;
	const uint32_t rdma = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC;

	a->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps = uc | rdma;
	a->odp_caps.per_transport_caps.uc_odp_caps = uc;
	a->odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | srq;
	a->xrc_odp_caps = IBV_ODP_SUPPORT_SEND | rdma | srq;
}

static int softib_query_device_ex(struct ibv_context *ctx,
				  const struct ibv_query_device_ex_input *input,
				  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct ibv_device_attr_ex a;

	if (input && input->comp_mask) {
		sib_warn("query_device_ex on %s: unknown input comp_mask 0x%x", SIB_DEV_NAME,
			 input->comp_mask);
		return EINVAL;
	}
	if (!attr || attr_size < sizeof(attr->orig_attr)) {
		sib_warn("query_device_ex on %s: attr_size %zu is smaller than ibv_device_attr",
			 SIB_DEV_NAME, attr_size);
		return EINVAL;
	}
	memset(&a, 0, sizeof(a));
	fill_device_attr(sctx, &a.orig_attr);
	/* No TSO, RSS, tag matching, packet pacing or CQ moderation: all
	 * zero.  Device memory: dm.c.  Completion timestamps count nanoseconds. */
	fill_odp_caps(&a);
	a.max_dm_size = SIB_MAX_DM_SIZE;
	a.completion_timestamp_mask = UINT64_MAX;
	a.hca_core_clock = SIB_HCA_CORE_CLOCK_KHZ;
	/* IBA 1.5: the kernel's uverbs bits (ib_user_ioctl_verbs.h), which
	 * rdma-core passes through and does not name: FLUSH to global
	 * visibility and ATOMIC WRITE.  Not FLUSH_PERSISTENT: no memory here
	 * is persistent (reg_mr refuses IBV_ACCESS_FLUSH_PERSISTENT). */
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags | SIB_DEVICE_FLUSH_GLOBAL |
				SIB_DEVICE_ATOMIC_WRITE;
	a.phys_port_cnt_ex = SIB_NUM_PORTS;

	/* Never write past what the caller's build of verbs.h knows. */
	memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

void softib_port_attr(struct sib_hca *hca, const struct sib_port *port,
		      struct ibv_port_attr *attr)
{
	struct sib_engine_counters ec;

	/* The violation counters PortInfo reports (IBA 14.2.5.6: 16 bits,
	 * stopping at 0xffff). */
	memset(&ec, 0, sizeof(ec));
	if (port->port_num == 1 && hca->engine)
		sib_engine_counters_get(hca->engine, &ec);
	pthread_mutex_lock(&hca->node.lock);
	attr->state = (enum ibv_port_state)port->state;
	attr->max_mtu = (enum ibv_mtu)port->max_mtu;
	attr->active_mtu = (enum ibv_mtu)port->active_mtu;
	attr->gid_tbl_len = SIB_GID_TBL_LEN;
	attr->port_cap_flags = IBV_PORT_SYS_IMAGE_GUID_SUP |
			       (hca->node.is_sm ? IBV_PORT_SM : 0); /* issm held: umad.h */
	attr->max_msg_sz = SIB_MAX_MSG_SZ;
	attr->bad_pkey_cntr = ec.P_KeyViolations > 0xffff ? 0xffff : (uint32_t)ec.P_KeyViolations;
	attr->qkey_viol_cntr = ec.Q_KeyViolations > 0xffff ? 0xffff : (uint32_t)ec.Q_KeyViolations;
	attr->pkey_tbl_len = SIB_MAX_PKEYS;
	attr->lid = port->LID;
	attr->sm_lid = port->SMLID;
	attr->lmc = port->LMC;
	attr->max_vl_num = 1; /* PortInfo:VLCap 1 = VL0 only */
	attr->sm_sl = port->SMSL;
	attr->subnet_timeout = 18; /* 4.096 us * 2^18 ~ 1 s */
	attr->init_type_reply = 0;
	attr->active_width = 2;  /* 4X */
	attr->active_speed = 4;  /* QDR: 4X QDR = 40 Gb/s, a plausible figure */
	attr->phys_state = port->state == SIB_PORT_ACTIVE ? 5 /* LinkUp */ : 3 /* Disabled */;
	attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
	attr->flags = 0;
	attr->port_cap_flags2 = 0;
	pthread_mutex_unlock(&hca->node.lock);
}

static int softib_query_port(struct ibv_context *ctx, uint8_t port_num,
			     struct ibv_port_attr *attr)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct sib_port *port = softib_port(sctx, port_num, "query_port");

	if (!port)
		return EINVAL;
	softib_port_attr(sctx->hca, port, attr);
	return 0;
}

static void softib_free_context(struct ibv_context *ctx)
{
	struct softib_context *sctx = to_sctx(ctx);

	sib_hca_unlisten(sctx->hca, &sctx->listener);
	sib_hca_put(sctx->hca);
	if (sctx->async_wr >= 0)
		close(sctx->async_wr);
	softib_abi_check()->uninit_context(&sctx->vctx); /* closes async_fd */
	free(sctx);
}

static void softib_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	/* Nothing to acknowledge to hardware; ibv_ack_async_event does the
	 * counting on the objects themselves. */
	(void)ctx;
	(void)event;
}

/* The clock completion timestamps count (hca_core_clock 1 GHz: CLOCK_MONOTONIC
 * ns, transport/cq.c), in cycles in tv_nsec with tv_sec 0 as hardware
 * providers report it, so it compares with ibv_wc_read_completion_ts. */
static int softib_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	struct timespec ts;

	(void)ctx;
	if (!values)
		return EINVAL;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK) {
		sib_warn("query_rt_values_ex on %s: unknown comp_mask bits 0x%x", SIB_DEV_NAME,
			 values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK);
		return EINVAL;
	}
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)((uint64_t)ts.tv_sec * 1000000000u +
						   (uint64_t)ts.tv_nsec);
	}
	return 0;
}

#if SIB_ABI_LAYOUT >= 62
/* ibv_query_port_speed (rdma-core 62 on): the port's effective bandwidth in
 * units of 100 Mb/s.  query_port reports 4X QDR: four lanes of 10 Gb/s
 * signalling, 8 Gb/s of data each after 8b/10b coding (IBA Vol 2, 5.2),
 * so 32 Gb/s. */
static int softib_query_port_speed(struct ibv_context *ctx, uint32_t port_num, uint64_t *speed)
{
	if (port_num > 255 || !softib_port(to_sctx(ctx), port_num, "query_port_speed"))
		return EINVAL;
	if (!speed) {
		sib_warn("query_port_speed on %s: port_speed is NULL", SIB_DEV_NAME);
		return EINVAL;
	}
	*speed = 320;
	return 0;
}
#endif

const struct verbs_context_ops softib_device_ops = {
	.async_event = softib_async_event,
	.free_context = softib_free_context,
	.query_device_ex = softib_query_device_ex,
	.query_port = softib_query_port,
#if SIB_ABI_LAYOUT >= 62
	.query_port_speed = softib_query_port_speed,
#endif
	.query_rt_values = softib_query_rt_values,
};

#define SIB_OPS_ENTRY(area) &softib_##area##_ops,
static const struct verbs_context_ops *const softib_op_tables[] = {
	SIB_OPS_AREAS(SIB_OPS_ENTRY)
};
#undef SIB_OPS_ENTRY

static struct verbs_context *softib_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						  void *private_data)
{
	const struct softib_abi *abi = softib_abi_check();
	struct softib_context *sctx;
	int fds[2], err;

	(void)private_data;
	if (!abi) { /* not listed, but a program may hold an old pointer */
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* libibverbs passes -1 (no sysfs, no uverbs device), but programs
	 * dup() ctx->cmd_fd to share a context (pyverbs test_shared_pd), so
	 * give it a descriptor that dup()s yet refuses every command: an
	 * O_PATH fd fails write() and ioctl() with EBADF exactly as -1 does,
	 * and is no character device, so ibv_import_device refuses it with
	 * EOPNOTSUPP (interpose.c).  verbs_uninit_context closes it. */
	if (cmd_fd < 0)
		cmd_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	sctx = abi->init_and_alloc_context(ibdev, cmd_fd, sizeof(*sctx),
					   (struct verbs_context *)offsetof(struct softib_context,
									    vctx),
					   VERBS_DRIVER_ID_UNKNOWN);
	if (!sctx)
		return NULL;
	sctx->async_wr = -1;
	sctx->hca = NULL;
	/* The library records the size of its verbs_context: ours, or the
	 * checks of softib_abi_check have missed a layout. */
	if (sctx->vctx.sz != sizeof(struct verbs_context)) {
		sib_err("open %s: libibverbs' verbs_context is %zu bytes, this build's %zu; "
			"rebuild softib against the rdma-core you run",
			SIB_DEV_NAME, sctx->vctx.sz, sizeof(struct verbs_context));
		errno = EOPNOTSUPP;
		goto err_ctx;
	}
	sctx->hca = sib_hca_get();
	if (!sctx->hca)
		goto err_ctx;
	if (pipe2(fds, O_CLOEXEC))
		goto err_hca;
	/* The writer never blocks (a full pipe drops the event with a log
	 * line); the reader blocks like the kernel's async event file. */
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK)) {
		close(fds[0]);
		close(fds[1]);
		goto err_hca;
	}
	sctx->vctx.context.async_fd = fds[0];
	sctx->async_wr = fds[1];
	sctx->vctx.context.num_comp_vectors = SIB_NUM_COMP_VECTORS;
	sctx->sink.deliver = softib_event_deliver;

	for (size_t i = 0; i < sizeof(softib_op_tables) / sizeof(softib_op_tables[0]); i++)
		if (softib_op_tables[i]) /* weak: NULL while an area does not exist */
			abi->set_ops(&sctx->vctx, softib_op_tables[i]);

	sib_hca_listen(sctx->hca, &sctx->listener, &sctx->sink);
	return &sctx->vctx;

err_hca:
	sib_warn("open %s: cannot create the async event pipe: %s", SIB_DEV_NAME,
		 strerror(errno));
	sib_hca_put(sctx->hca);
err_ctx:
	err = errno ? errno : ENOMEM;
	abi->uninit_context(&sctx->vctx);
	free(sctx);
	errno = err;
	return NULL;
}

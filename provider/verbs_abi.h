/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Our own declarations of rdma-core's private provider ABI.  rdma-core does
 * not install its driver.h, so an out-of-tree provider must describe the
 * same layouts itself; the public types come from the installed
 * <infiniband/verbs.h>.
 *
 * The ABI moved over the releases softib serves (libibverbs/driver.h and
 * libverbs.map.in at the rdma-core tags v39.0 to v65.0):
 *
 *   SIB_ABI_LAYOUT  node                 verbs_context_ops  rdma-core
 *   39, 44, 45      IBVERBS_PRIVATE_34   76 ops             39-43, 44, 45-56
 *   57              IBVERBS_PRIVATE_57   76 ops             57-58
 *   59              IBVERBS_PRIVATE_59   79 (+dmah, reg_mr_ex)  59-61
 *   62              IBVERBS_PRIVATE_59   81 (+dm_export_dmabuf_fd,
 *                                           query_port_speed)   62-63
 *   64              IBVERBS_PRIVATE_64   83 (+alloc_buf, free_buf)  64
 *   65              IBVERBS_PRIVATE_65   93 (+10 comp_cntr ops)     65
 *
 * Within node 34 only the public struct ibv_qp_ex grew (wr_atomic_write at
 * v44, wr_flush at v45), which moves verbs_qp.comp_mask; struct
 * verbs_context grew at v59, v62 and v64.  tools/abi-check.sh picks the
 * layout from the installed library and headers and writes
 * verbs_abi_layout.h before anything compiles; at run time
 * provider/verbs_abi.c checks that the libibverbs we were loaded into has
 * the same one, and resolves the private functions (softib_abi below).
 *
 * Every size and offset the library relies on is asserted at the end.  If
 * one fails, the installed headers are not the ABI this file describes: do
 * not "fix" the assert, port the declarations.
 */
#ifndef SIB_PROVIDER_VERBS_ABI_H
#define SIB_PROVIDER_VERBS_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "verbs_abi_layout.h" /* generated: $(B)/abi, tools/abi-check.sh */

/* Types that only later layouts' ops name (we never implement those ops). */
struct ibv_buf;
struct ibv_comp_cntr;
struct ibv_comp_cntr_caps;
struct ibv_comp_cntr_init_attr;
struct ibv_qp_attach_comp_cntr_attr;
struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_mr_init_attr;

/* A doubly linked list hook, layout of rdma-core's ccan list_node. */
struct verbs_abi_list_node {
	struct verbs_abi_list_node *next;
	struct verbs_abi_list_node *prev;
};

/* How an MR was made; ibv_dereg_mr and ibv_rereg_mr read it. */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE = 1 << 0,
	VERBS_XRCD_RESERVED = 1 << 1,
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/* ibv_qp_to_qp_ex() reads comp_mask for every QP, legacy ones included. */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* Only registered (sysfs-matched) providers use these; we declare them for
 * layout completeness of verbs_device_ops. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev; /* opaque: softib0 has no sysfs presence */
struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device; /* first: the library uses container_of */
	const struct verbs_device_ops *ops;
	atomic_int refcount; /* ibv_free_device_list drops one per list entry */
	struct verbs_abi_list_node entry;
	struct verbs_sysfs_dev *sysfs; /* NULL: the library then skips the cdev */
	uint64_t core_support;
};

/*
 * Every op a provider can supply, in the library's (alphabetical) order;
 * later layouts insert theirs in that order, so the #if blocks sit where
 * each release put its ops.  Fill only with designated initialisers;
 * verbs_set_ops copies the non-NULL entries over the library's dummy ops.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			 struct ibv_sge *sg_list, uint32_t num_sges);
#if SIB_ABI_LAYOUT >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
#if SIB_ABI_LAYOUT >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context, struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context, struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context, struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
#if SIB_ABI_LAYOUT >= 65
	struct ibv_comp_cntr *(*create_comp_cntr)(struct ibv_context *context,
						  struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context, struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if SIB_ABI_LAYOUT >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if SIB_ABI_LAYOUT >= 65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
#if SIB_ABI_LAYOUT >= 62
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
#endif
#if SIB_ABI_LAYOUT >= 64
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context, uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
#if SIB_ABI_LAYOUT >= 65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context, struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
#if SIB_ABI_LAYOUT >= 65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp, struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context, struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if SIB_ABI_LAYOUT >= 62
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num, uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
#if SIB_ABI_LAYOUT >= 65
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
#if SIB_ABI_LAYOUT >= 65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				    size_t length, unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length,
					uint64_t iova, int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				 int access);
#if SIB_ABI_LAYOUT >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd, struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if SIB_ABI_LAYOUT >= 65
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if SIB_ABI_LAYOUT >= 65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((char *)dev - offsetof(struct verbs_device, device));
}

static inline struct verbs_mr *verbs_get_mr(struct ibv_mr *mr)
{
	return (struct verbs_mr *)((char *)mr - offsetof(struct verbs_mr, ibv_mr));
}

/*
 * The functions libibverbs exports at its private node.  We never link
 * them: a library that needs a version node the loaded libibverbs lacks
 * makes ld.so end the program before any of our code runs ("version
 * `IBVERBS_PRIVATE_34' not found"), under LD_PRELOAD too.  softib_abi_check
 * (verbs_abi.c) looks them up with dlvsym at SIB_ABI_PRIVATE_NODE instead,
 * so that a libsoftib.so in the wrong libibverbs can refuse with one line.
 *
 * init_and_alloc_context: rdma-core's _verbs_init_and_alloc_context:
 * calloc(alloc_size) and initialise the verbs_context found at the address
 * `context_offset` would have if the allocation started at 0 (the library's
 * offsetof idiom).  cmd_fd is closed on failure; softib passes -1.
 */
struct softib_abi {
	void *(*init_and_alloc_context)(struct ibv_device *device, int cmd_fd, size_t alloc_size,
					struct verbs_context *context_offset, uint32_t driver_id);
	void (*uninit_context)(struct verbs_context *context);
	void (*set_ops)(struct verbs_context *vctx, const struct verbs_context_ops *ops);
};

/* GID types as ibv_query_gid_type (private too) reports them; ibv_devinfo
 * prints a GID only when its type is IB_ROCE_V1 (0). */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type);

/* Checks, once, that the running libibverbs has the provider ABI this
 * build declares (node, newest public node, verbs_qp layout) and resolves
 * the private functions.  NULL, after one log line naming what it found
 * and what we were built for, when it does not: softib0 is then not
 * listed. */
const struct softib_abi *softib_abi_check(void);

#define VERBS_DRIVER_ID_UNKNOWN 0 /* enum rdma_driver_id: RDMA_DRIVER_UNKNOWN */

/* What each layout is made of, as tools/abi-check.sh measured it: the bytes
 * in front of the ibv_context that ends struct verbs_context, the bytes
 * struct ibv_qp_ex adds to struct ibv_qp, and the number of ops.  Pointers
 * and integers only, so these hold on every LP64 ABI. */
#if SIB_ABI_LAYOUT == 39
#define SIB_ABI_VCTX_FRONT 320
#define SIB_ABI_QP_EX_OPS 184
#define SIB_ABI_NUM_OPS 76
#elif SIB_ABI_LAYOUT == 44
#define SIB_ABI_VCTX_FRONT 320
#define SIB_ABI_QP_EX_OPS 192
#define SIB_ABI_NUM_OPS 76
#elif SIB_ABI_LAYOUT == 45 || SIB_ABI_LAYOUT == 57
#define SIB_ABI_VCTX_FRONT 320
#define SIB_ABI_QP_EX_OPS 200
#define SIB_ABI_NUM_OPS 76
#elif SIB_ABI_LAYOUT == 59
#define SIB_ABI_VCTX_FRONT 344
#define SIB_ABI_QP_EX_OPS 200
#define SIB_ABI_NUM_OPS 79
#elif SIB_ABI_LAYOUT == 62
#define SIB_ABI_VCTX_FRONT 352
#define SIB_ABI_QP_EX_OPS 200
#define SIB_ABI_NUM_OPS 81
#elif SIB_ABI_LAYOUT == 64
#define SIB_ABI_VCTX_FRONT 368
#define SIB_ABI_QP_EX_OPS 200
#define SIB_ABI_NUM_OPS 83
#elif SIB_ABI_LAYOUT == 65
#define SIB_ABI_VCTX_FRONT 368
#define SIB_ABI_QP_EX_OPS 200
#define SIB_ABI_NUM_OPS 93
#else
#error "SIB_ABI_LAYOUT names no layout this file declares (tools/abi-check.sh)"
#endif

#if defined(__LP64__)
_Static_assert(offsetof(struct verbs_context, context) == SIB_ABI_VCTX_FRONT,
	       "verbs_context: the headers are not this layout");
_Static_assert(sizeof(struct ibv_qp_ex) - sizeof(struct ibv_qp) == SIB_ABI_QP_EX_OPS,
	       "ibv_qp_ex: the headers are not this layout");
#endif
_Static_assert(sizeof(struct verbs_context_ops) == SIB_ABI_NUM_OPS * sizeof(void *),
	       "verbs_context_ops: one pointer per op of this layout");
_Static_assert(offsetof(struct verbs_context, context) + sizeof(struct ibv_context) ==
	       sizeof(struct verbs_context), "verbs_context ends with ibv_context");
/* verbs_qp: the union, then comp_mask where ibv_qp_to_qp_ex reads it. */
_Static_assert(offsetof(struct verbs_qp, comp_mask) == sizeof(struct ibv_qp_ex),
	       "verbs_qp.comp_mask follows ibv_qp_ex");
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex begins with ibv_qp");
_Static_assert(offsetof(struct verbs_device, device) == 0, "verbs_device begins with ibv_device");

/* Layouts the library depends on that no release changed (x86_64). */
#if defined(__x86_64__)
_Static_assert(sizeof(struct ibv_device) == 664, "ibv_device layout");
_Static_assert(sizeof(struct ibv_context) == 328, "ibv_context layout");
_Static_assert(offsetof(struct ibv_context, cmd_fd) == 264, "ibv_context.cmd_fd");
_Static_assert(offsetof(struct ibv_context, async_fd) == 268, "ibv_context.async_fd");
_Static_assert(offsetof(struct ibv_context, num_comp_vectors) == 272,
	       "ibv_context.num_comp_vectors");
_Static_assert(offsetof(struct ibv_context, abi_compat) == 320, "ibv_context.abi_compat");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device layout");
_Static_assert(offsetof(struct verbs_device, ops) == 664, "verbs_device.ops");
_Static_assert(offsetof(struct verbs_device, refcount) == 672, "verbs_device.refcount");
_Static_assert(offsetof(struct verbs_device, entry) == 680, "verbs_device.entry");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696, "verbs_device.sysfs");
_Static_assert(offsetof(struct verbs_device, core_support) == 704, "verbs_device.core_support");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops layout");
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent layout");
_Static_assert(offsetof(struct verbs_context, priv) == SIB_ABI_VCTX_FRONT - 112,
	       "verbs_context.priv");
_Static_assert(offsetof(struct verbs_context, sz) == SIB_ABI_VCTX_FRONT - 8, "verbs_context.sz");
_Static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr layout");
_Static_assert(sizeof(struct verbs_qp) == 160 + SIB_ABI_QP_EX_OPS + 16, "verbs_qp layout");
_Static_assert(sizeof(struct verbs_cq) == 288, "verbs_cq layout");
_Static_assert(sizeof(struct ibv_comp_channel) == 16, "ibv_comp_channel layout");
#endif

#endif

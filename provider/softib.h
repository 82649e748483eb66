/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * provider/: libsoftib.so, the libibverbs glue -- provider ops, the
 * interposer that makes softib0 visible, our declarations of rdma-core's
 * provider ABI (verbs_abi.h).  provider/ may use every folder below it
 * in the layer table (README.md, Layout) up to hca/.
 *
 * The provider's view of softib0: the device, the context, and the rules
 * every provider/ source file follows.
 *
 * Op tables: each provider/<area>.c defines exactly one
 *	const struct verbs_context_ops softib_<area>_ops = { .op = fn, ... };
 * with designated initialisers.  device.c's alloc_context layers all of
 * them with verbs_set_ops (which copies only non-NULL entries).  The tables
 * are referenced weakly, so an area that does not exist yet is skipped.
 *
 * Errors: a verb that rejects its arguments returns the errno libibverbs
 * documents and logs one line naming the rule (docs/architecture.md section 8), through
 * softib_refused below: at warn, or at info for a capability probe.
 */
#ifndef SIB_PROVIDER_H
#define SIB_PROVIDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "provider/verbs_abi.h"
#include "transport/events.h"
#include "hca/hca.h"
#include "base/log.h"

#define SIB_DEV_NAME "softib0"

/*
 * Which refusals warn.  The rule: a refusal to create (or import) an object
 * because the request asks for more than softib0 offers -- a size above a
 * limit ibv_query_device reports, or a feature softib0 does not offer
 * (EOPNOTSUPP) -- is a capability probe and is logged at info; every other
 * refusal warns.  Programs learn what a device offers by creating objects:
 * libfabric's vrb_find_max_inline binary-searches max_inline_data with
 * create_qp, pyverbs and UCX try optional features and skip on EOPNOTSUPP;
 * real providers refuse those silently.  A malformed argument, another
 * context's object, a full table, a broken state rule, and any refusal to
 * modify or use an existing object are misuse, and warn.
 */
#define softib_refused(probe, ...) sib_log((probe) ? SIB_LOG_INFO : SIB_LOG_WARN, __VA_ARGS__)
#define softib_probe_refused(...) sib_info(__VA_ARGS__)

#define softib_container_of(ptr, type, member)                                                     \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* The one softib device of this process, listed after the real devices. */
struct softib_device {
	struct verbs_device vdev;
};

extern struct softib_device softib_dev;

struct softib_context {
	struct verbs_context vctx;        /* the library's part; ibv_context inside */
	struct sib_hca *hca;              /* shared by every context of the process */
	int async_wr;                     /* write end; the read end is context.async_fd */
	struct sib_event_sink sink;       /* transport events for objects of this context */
	struct sib_hca_listener listener; /* port events */
};

static inline struct softib_context *to_sctx(struct ibv_context *ctx)
{
	return softib_container_of(softib_container_of(ctx, struct verbs_context, context),
				   struct softib_context, vctx);
}

static inline bool softib_device_is_ours(const struct ibv_device *dev)
{
	return dev == &softib_dev.vdev.device;
}

/* True for a context opened on softib0 (objects: check obj->context). */
static inline bool softib_context_is_ours(const struct ibv_context *ctx)
{
	return ctx && softib_device_is_ours(ctx->device);
}

/* One op table per provider source file (see the comment at the top). */
#define SIB_OPS_AREAS(X) X(device) X(pd) X(ah) X(mr) X(dm) X(mw) X(cq) X(qp) X(srq) X(xrcd) X(post) X(mcast)
#define SIB_DECLARE_OPS(area)                                                                   \
	extern const struct verbs_context_ops softib_##area##_ops __attribute__((weak));
SIB_OPS_AREAS(SIB_DECLARE_OPS)
#undef SIB_DECLARE_OPS

/*
 * Completion channels (ibv_create_comp_channel, interposed): a pipe whose
 * read end is channel->fd.  A CQ armed with req_notify_cq calls
 * softib_comp_channel_notify when its event fires: it writes the 8-byte
 * record that ibv_get_cq_event reads (the struct ibv_cq pointer).  0 or an
 * errno (EINVAL for a channel that is not softib0's).  create_cq should
 * reject (EINVAL) a channel for which softib_comp_channel_is_ours is false
 * or whose context differs from the CQ's.
 */
int softib_comp_channel_notify(struct ibv_comp_channel *ch, struct ibv_cq *cq);
bool softib_comp_channel_is_ours(const struct ibv_comp_channel *ch);
int softib_comp_channel_write_fd(const struct ibv_comp_channel *ch); /* -1 if not ours */
/* The event a thread waiting in ibv_get_cq_event on ch made itself (its
 * drain, hca/progress.h's wake-up rule), handed over without the pipe;
 * NULL when none. */
struct ibv_cq *softib_comp_channel_take_own(struct ibv_comp_channel *ch);

/*
 * Async events: writes the 16-byte record ibv_get_async_event reads
 * (element = the object pointer, or the port number for port events).
 * Never blocks; a full pipe drops the event with a warning.
 */
void softib_post_async_event(struct softib_context *sctx, uint64_t element,
			     enum ibv_event_type type);

/*
 * Transport events for objects created on a context arrive at sctx->sink;
 * create the transport object with sink = &sctx->sink and user = the
 * ibv_cq / ibv_qp / ibv_srq pointer, and they become IBV_EVENT_* records.
 * (softib_event_deliver is the sink's deliver function, set by device.c.)
 */
void softib_event_deliver(struct sib_event_sink *sink, enum sib_event ev, void *obj,
			  unsigned port);

/* Protection domains.  Every object that names a PD (MR, MW, QP, SRQ, AH)
 * takes a reference at create and drops it at destroy: dealloc_pd fails
 * with EBUSY while any remain (as hardware does). */
struct softib_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;     /* unique in the HCA, never 0; also ibv_pd.handle */
	atomic_int users; /* objects using this PD */
	/* A parent domain (ibv_alloc_parent_domain) carries the pdn of the
	 * protection domain it holds a reference on, so every check by PD
	 * number treats the two alike; NULL for a protection domain. */
	struct ibv_pd *protection_domain;
};

static inline struct softib_pd *to_spd(struct ibv_pd *pd)
{
	return softib_container_of(pd, struct softib_pd, ibv_pd);
}

void softib_pd_get(struct ibv_pd *pd);
void softib_pd_put(struct ibv_pd *pd);

/* Memory regions (mr.c): every MR is a struct softib_mr; dm is the device
 * memory an MR of reg_dm_mr lies in (dm.c), NULL for the others. */
struct softib_dm;
struct softib_mr {
	struct verbs_mr vmr;
	struct softib_dm *dm;
};

/* Registers [addr, addr + length) for pd as reg_mr does, logging a refusal
 * as "verb_name on PD ...": the MR, or NULL with errno. */
struct ibv_mr *softib_mr_register(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				  int access, const char *verb_name, enum ibv_mr_type type);
/* An MR registered on dm was deregistered (dm.c). */
void softib_dm_put(struct softib_dm *dm);

/* Address handles: the validated address vector, kept for the data path. */
struct softib_ah {
	struct ibv_ah ibv_ah;
	struct ibv_ah_attr attr;
	/* Where attr's DLID/DGID lives, resolved at create_ah (or at the first
	 * send when the subnet did not know it yet); under dest_lock. */
	pthread_mutex_t dest_lock;
	struct sib_endpoint dest;
	bool dest_valid;
};

/* The AH's endpoint, resolving it now if create_ah could not (family 0:
 * still unknown; the datagram is then lost, as on a fabric without a route). */
struct sib_endpoint softib_ah_dest(struct softib_ah *sah);

static inline struct softib_ah *to_sah(struct ibv_ah *ah)
{
	return softib_container_of(ah, struct softib_ah, ibv_ah);
}

/* Port lookup with the one log line every verb needs: NULL for a bad port. */
struct sib_port *softib_port(struct softib_context *sctx, unsigned port_num, const char *verb);

/* What query_port says of a port now; the sysfs view prints the same. */
void softib_port_attr(struct sib_hca *hca, const struct sib_port *port,
		      struct ibv_port_attr *attr);

#endif

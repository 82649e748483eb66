/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Protection domains (IBA 10.2.3).  A PD is a name objects are checked
 * against; the access decisions live in memreg/.  Here: its lifetime, which
 * ends only when nothing uses it (dealloc_pd on a busy PD fails with EBUSY,
 * as on hardware).
 */
#include <errno.h>
#include <stdlib.h>

#include "provider/handles.h"
#include "provider/softib.h"
#include "base/log.h"

void softib_pd_get(struct ibv_pd *pd)
{
	atomic_fetch_add(&to_spd(pd)->users, 1);
}

void softib_pd_put(struct ibv_pd *pd)
{
	int before = atomic_fetch_sub(&to_spd(pd)->users, 1);

	if (before <= 0)
		sib_err("PD 0x%06x: reference count underflow", to_spd(pd)->pdn);
}

/* PDs that exist, for max_pd (the device is the process's: one HCA per
 * process). */
static atomic_uint live_pds;

static struct ibv_pd *softib_alloc_pd(struct ibv_context *ctx)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct softib_pd *spd;

	if (atomic_fetch_add(&live_pds, 1) >= SIB_MAX_PD) {
		atomic_fetch_sub(&live_pds, 1);
		sib_warn("alloc_pd on %s: %u PDs exist already (max_pd)", SIB_DEV_NAME,
			 (unsigned)SIB_MAX_PD);
		errno = ENOMEM;
		return NULL;
	}
	spd = sib_obj_new(SIB_OBJ_PD, sizeof(*spd));
	if (!spd) {
		atomic_fetch_sub(&live_pds, 1);
		errno = ENOMEM;
		return NULL;
	}
	spd->pdn = sib_hca_alloc_pdn(sctx->hca);
	spd->ibv_pd.context = ctx;
	spd->ibv_pd.handle = spd->pdn;
	atomic_init(&spd->users, 0);
	return &spd->ibv_pd;
}

/*
 * A parent domain: a PD that MRs, MWs, QPs, SRQs, AHs and CQs (create_cq_ex
 * with IBV_CQ_INIT_ATTR_MASK_PD) accept wherever a PD goes, protecting as
 * its protection domain does.  softib keeps its queues in its own memory,
 * which no device reads by DMA, so the allocators are accepted and never
 * called (they are the provider's to use or not, ibv_alloc_parent_domain(3)).
 * softib has no thread domains (alloc_td is not provided), so td is NULL.
 */
static struct ibv_pd *softib_alloc_parent_domain(struct ibv_context *ctx,
						 struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct softib_pd *spd;

	if (!attr || !attr->pd || attr->pd->context != ctx ||
	    to_spd(attr->pd)->protection_domain) {
		sib_warn("alloc_parent_domain: pd must be a protection domain of this context");
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~known) {
		sib_warn("alloc_parent_domain: unknown comp_mask bits 0x%x", attr->comp_mask & ~known);
		errno = EINVAL;
		return NULL;
	}
	if (attr->td) {
		sib_warn("alloc_parent_domain: softib has no thread domains; td must be NULL");
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		sib_warn("alloc_parent_domain: ALLOCATORS needs both alloc and free");
		errno = EINVAL;
		return NULL;
	}
	spd = sib_obj_new(SIB_OBJ_PD, sizeof(*spd));
	if (!spd) {
		errno = ENOMEM;
		return NULL;
	}
	spd->pdn = to_spd(attr->pd)->pdn;
	spd->ibv_pd.context = ctx;
	spd->ibv_pd.handle = spd->pdn;
	atomic_init(&spd->users, 0);
	spd->protection_domain = attr->pd;
	softib_pd_get(attr->pd);
	return &spd->ibv_pd;
}

static int softib_dealloc_pd(struct ibv_pd *pd)
{
	struct softib_pd *spd = to_spd(pd);
	int users, err = sib_obj_claim(spd, "dealloc_pd");

	if (err)
		return err;
	users = atomic_load(&spd->users);
	if (users) {
		sib_warn("dealloc_pd on %sPD 0x%06x: %d object(s) (MR, MW, QP, SRQ, AH%s) still use it",
			 spd->protection_domain ? "the parent domain of " : "", spd->pdn, users,
			 spd->protection_domain ? ", CQ" : ", parent domain");
		/* The return value is the error (ibv_dealloc_pd(3)); hardware
		 * providers leave errno set too, and programs read either. */
		sib_obj_keep(spd);
		errno = EBUSY;
		return EBUSY;
	}
	if (spd->protection_domain)
		softib_pd_put(spd->protection_domain);
	else
		atomic_fetch_sub(&live_pds, 1);
	sib_obj_destroyed(spd);
	return 0;
}

const struct verbs_context_ops softib_pd_ops = {
	.alloc_pd = softib_alloc_pd,
	.alloc_parent_domain = softib_alloc_parent_domain,
	.dealloc_pd = softib_dealloc_pd,
};

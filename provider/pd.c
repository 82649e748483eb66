/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Protection domains (IBA 10.2.3).  A PD is a name objects are checked
 * against; the access decisions live in memreg/.  Here: its lifetime, which
 * ends only when nothing uses it (dealloc_pd on a busy PD fails with EBUSY,
 * as on hardware).
 */
#include <errno.h>
#include <stdlib.h>

#include "provider/softib.h"
#include "transport/log.h"

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

static struct ibv_pd *softib_alloc_pd(struct ibv_context *ctx)
{
	struct softib_context *sctx = to_sctx(ctx);
	struct softib_pd *spd = calloc(1, sizeof(*spd));

	if (!spd) {
		errno = ENOMEM;
		return NULL;
	}
	spd->pdn = sib_hca_alloc_pdn(sctx->hca);
	spd->ibv_pd.context = ctx;
	spd->ibv_pd.handle = spd->pdn;
	atomic_init(&spd->users, 0);
	return &spd->ibv_pd;
}

static int softib_dealloc_pd(struct ibv_pd *pd)
{
	struct softib_pd *spd = to_spd(pd);
	int users = atomic_load(&spd->users);

	if (users) {
		sib_warn("dealloc_pd on PD 0x%06x: %d object(s) (MR, MW, QP, SRQ, AH) still use it",
			 spd->pdn, users);
		return EBUSY;
	}
	free(spd);
	return 0;
}

const struct verbs_context_ops softib_pd_ops = {
	.alloc_pd = softib_alloc_pd,
	.dealloc_pd = softib_dealloc_pd,
};

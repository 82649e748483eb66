/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Address handles: a validated address vector (IBA 10.2.2, 11.2.2) that
 * UD sends use.  The data path reads softib_ah.attr; nothing is resolved
 * here (the SM resolves LIDs next issue).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/engine.h"

#include "provider/handles.h"
#include "provider/queues.h"
#include "provider/softib.h"
#include "transport/caps.h"
#include "base/log.h"

#define AH_MAX_STATIC_RATE IBV_RATE_1200_GBPS
#define FLOW_LABEL_MAX 0xfffffu /* 20 bits (IBA 8.3, GRH) */

/* 0 when the address vector is usable; else logs the rule and returns it. */
static int check_av(struct softib_context *sctx, const struct ibv_ah_attr *attr)
{
	if (!attr) {
		sib_warn("create_ah on %s: attr is NULL", SIB_DEV_NAME);
		return EINVAL;
	}
	if (!softib_port(sctx, attr->port_num, "create_ah"))
		return EINVAL;
	/* IBA 4.1.3: LID 0 is reserved and 0xFFFF (permissive) is never a
	 * destination for data; 0xC000..0xFFFE are multicast. */
	if (attr->dlid == 0 || attr->dlid == 0xffff) {
		sib_warn("create_ah on %s: DLID 0x%04x is not a destination LID", SIB_DEV_NAME,
			 attr->dlid);
		return EINVAL;
	}
	if (attr->sl > 15) {
		sib_warn("create_ah on %s: SL %u is out of range 0..15", SIB_DEV_NAME, attr->sl);
		return EINVAL;
	}
	if (attr->static_rate > AH_MAX_STATIC_RATE) {
		sib_warn("create_ah on %s: static_rate %u is not an enum ibv_rate value",
			 SIB_DEV_NAME, attr->static_rate);
		return EINVAL;
	}
	if (attr->is_global) {
		if (attr->grh.sgid_index >= SIB_GID_TBL_LEN) {
			sib_warn("create_ah on %s: sgid_index %u is outside the GID table (%d entries)",
				 SIB_DEV_NAME, attr->grh.sgid_index, SIB_GID_TBL_LEN);
			return EINVAL;
		}
		/* The kernel refuses a GRH whose source GID slot is empty. */
		if (!sib_port_gid_valid(sib_hca_port(sctx->hca, attr->port_num),
					attr->grh.sgid_index)) {
			sib_warn("create_ah on %s: sgid_index %u names an empty GID table entry",
				 SIB_DEV_NAME, attr->grh.sgid_index);
			return EINVAL;
		}
		if (attr->grh.flow_label > FLOW_LABEL_MAX) {
			sib_warn("create_ah on %s: flow_label 0x%x does not fit 20 bits",
				 SIB_DEV_NAME, attr->grh.flow_label);
			return EINVAL;
		}
	}
	return 0;
}

static int ah_resolve(struct softib_ah *sah, struct sib_endpoint *out);

/* AHs that exist, for max_ah (one HCA per process: the device's). */
static atomic_uint live_ahs;

static struct ibv_ah *softib_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct softib_context *sctx = to_sctx(pd->context);
	struct softib_ah *sah;
	int err = check_av(sctx, attr);

	if (err) {
		errno = err;
		return NULL;
	}
	if (atomic_fetch_add(&live_ahs, 1) >= SIB_MAX_AH) {
		atomic_fetch_sub(&live_ahs, 1);
		sib_warn("create_ah on %s: %u AHs exist already (max_ah)", SIB_DEV_NAME,
			 (unsigned)SIB_MAX_AH);
		errno = ENOMEM;
		return NULL;
	}
	sah = sib_obj_new(SIB_OBJ_AH, sizeof(*sah));
	if (!sah) {
		atomic_fetch_sub(&live_ahs, 1);
		errno = ENOMEM;
		return NULL;
	}
	sah->attr = *attr;
	pthread_mutex_init(&sah->dest_lock, NULL);
	/* With LMC 0 a port has one LID: no path bits to choose (IBA 7.11.1). */
	sah->attr.src_path_bits = 0;
	sah->ibv_ah.context = pd->context;
	sah->ibv_ah.pd = pd;
	softib_pd_get(pd);
	/* Asks the SA now, so that the answer is there by the first send; a
	 * verb never waits for it (transport/engine.h): a send before it
	 * waits on its QP.  A LID no port has is allowed, as on hardware. */
	err = ah_resolve(sah, NULL);
	if (err && err != -EAGAIN)
		sib_warn("create_ah on %s: DLID 0x%04x is unknown to the subnet (%s); datagrams "
			 "to it are lost",
			 SIB_DEV_NAME, sah->attr.dlid, strerror(-err));
	return &sah->ibv_ah;
}

/* What the SA client knows of the AH's destination, never waiting; kept in
 * the AH once known. */
static int ah_resolve(struct softib_ah *sah, struct sib_endpoint *out)
{
	struct softib_context *sctx = to_sctx(sah->ibv_ah.context);
	struct sib_endpoint ep = { 0 };
	struct sib_av av;
	int err;

	pthread_mutex_lock(&sah->dest_lock);
	if (sah->dest_valid) {
		if (out)
			*out = sah->dest;
		pthread_mutex_unlock(&sah->dest_lock);
		return 0;
	}
	pthread_mutex_unlock(&sah->dest_lock);
	if (!sctx->hca->engine)
		return -ENETDOWN;
	softib_av_from_ibv(&av, &sah->attr);
	err = sib_engine_resolve_nowait(sctx->hca->engine, &av, &ep);
	if (err)
		return err;
	pthread_mutex_lock(&sah->dest_lock);
	sah->dest = ep;
	sah->dest_valid = true;
	pthread_mutex_unlock(&sah->dest_lock);
	if (out)
		*out = ep;
	return 0;
}

struct sib_endpoint softib_ah_dest(struct softib_ah *sah)
{
	struct sib_endpoint ep = { 0 };

	/* Unknown yet: the transport looks again when it sends (ud.c). */
	if (ah_resolve(sah, &ep))
		memset(&ep, 0, sizeof(ep));
	return ep;
}

static int softib_destroy_ah(struct ibv_ah *ah)
{
	struct softib_ah *sah = to_sah(ah);
	int err = sib_obj_claim(sah, "destroy_ah");

	if (err)
		return err;
	pthread_mutex_destroy(&sah->dest_lock);
	softib_pd_put(sah->ibv_ah.pd);
	sib_obj_destroyed(sah);
	atomic_fetch_sub(&live_ahs, 1);
	return 0;
}

const struct verbs_context_ops softib_ah_ops = {
	.create_ah = softib_create_ah,
	.destroy_ah = softib_destroy_ah,
};

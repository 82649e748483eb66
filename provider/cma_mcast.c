/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rdma_join_multicast / rdma_leave_multicast (JOIN_MCAST, JOIN_IP_MCAST,
 * LEAVE_MCAST on the rdma_cm command channel), as the kernel's rdma_cm
 * does them on an InfiniBand port (drivers/infiniband/core/cma.c):
 *   - the MGID: an AF_IB address is the MGID itself; an IPv4 or IPv6
 *     address maps as IPoIB maps it (RFC 4391: ff12:401b:<P_Key>::<low 28
 *     bits of the IPv4 address>, ff12:601b:<P_Key>:<IPv6 bytes 6..15>),
 *     with the RDMA CM signature 0x01 in byte 3 for RDMA_PS_UDP ids, so
 *     that they never collide with IPoIB's groups; the zero address asks
 *     the SA for a new group (MGID 0);
 *   - the join: SubnAdmSet(MCMemberRecord) with MGID, PortGID, P_Key
 *     0xFFFF, Q_Key RDMA_UDP_QKEY (0x01234567), SL, FlowLabel, TClass and
 *     JoinState FullMember (the components a creator gives);
 *   - the event: MULTICAST_JOIN with the group's MLID as DLID, a GRH to
 *     the MGID, QP 0xFFFFFF and the group's Q_Key (librdmacm then attaches
 *     the id's QP with ibv_attach_mcast), or MULTICAST_ERROR;
 *   - the leave: SubnAdmDelete, and the events of that join not yet taken
 *     are dropped; destroying the id leaves its groups;
 *   - CLIENT_REREGISTER (the SA lost the port's memberships, IBA 14.4.11):
 *     every joined id gets MULTICAST_ERROR with status -ENETRESET, as the
 *     kernel's ib_multicast reports it; the id is no member any more, and
 *     the application leaves and joins again.
 * RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER needs the SendOnlyFullMember
 * JoinState (IBA 1.3) that softib-sm does not offer: EOPNOTSUPP, as the
 * kernel answers when the SA does not advertise it.
 * Without a subnet manager (SOFTIB_SM=none) a port is a subnet of one:
 * the join succeeds at once with an MLID taken from the MGID, and packets
 * reach the port's own QPs only.
 */
#include <netinet/in.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "base/log.h"
#include "mgmt/sa_mcmember.h"
#include "provider/rdma_cm.h"
#include "transport/mcast.h"

struct cma_mc {
	uint32_t id;
	uint64_t uid;
	struct ucma_ctx *ctx;
	uint8_t mgid[16];
	uint16_t mlid;
	bool joined; /* at the SA: leave it */
	unsigned reported;
	struct cma_mc *next;
};

static struct cma_mc *mcs;
static uint32_t next_id;

static struct cma_mc *mc_find(uint32_t id)
{
	for (struct cma_mc *m = mcs; m; m = m->next)
		if (m->id == id)
			return m;
	return NULL;
}

static void mc_unlink(struct cma_mc *mc)
{
	for (struct cma_mc **pp = &mcs; *pp; pp = &(*pp)->next)
		if (*pp == mc) {
			*pp = mc->next;
			return;
		}
}

/* The MGID an address names (the comment at the top). */
static int mgid_of(const struct ucma_ctx *ctx, const struct sockaddr *sa, uint8_t mgid[16])
{
	uint8_t sig = ctx->ps == RDMA_PS_UDP ? 0x01 : 0x1b;

	memset(mgid, 0, 16);
	if (sa->sa_family == SIB_AF_IB) {
		memcpy(mgid, ((const struct sib_sockaddr_ib *)sa)->sib_addr, 16);
		return mgid[0] == 0xff || cma_ip16_any(mgid) ? 0 : -EINVAL;
	}
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);

		if (!a)
			return 0; /* the SA chooses */
		if ((a >> 28) != 0xe)
			return -EINVAL; /* not an IPv4 multicast address */
		mgid[0] = 0xff;
		mgid[1] = 0x12;
		mgid[2] = 0x40;
		mgid[3] = sig;
		mgid[4] = mgid[5] = 0xff; /* P_Key */
		mgid[12] = (uint8_t)((a >> 24) & 0x0f);
		mgid[13] = (uint8_t)(a >> 16);
		mgid[14] = (uint8_t)(a >> 8);
		mgid[15] = (uint8_t)a;
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *ip = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		if (cma_ip16_any(ip))
			return 0;
		if (ip[0] != 0xff)
			return -EINVAL;
		mgid[0] = 0xff;
		mgid[1] = 0x12;
		mgid[2] = 0x60;
		mgid[3] = sig;
		mgid[4] = mgid[5] = 0xff;
		memcpy(mgid + 6, ip + 6, 10);
		return 0;
	}
	return -EAFNOSUPPORT;
}

bool cma_ip16_multicast(const uint8_t ip[16])
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(ip, v4mapped, 12))
		return (ip[12] >> 4) == 0xe;
	return ip[0] == 0xff;
}

/* A subnet of one: an MLID from the MGID, the same for every id. */
static uint16_t local_mlid(const uint8_t mgid[16])
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 16; i++)
		h = (h ^ mgid[i]) * 16777619u;
	return (uint16_t)(SIB_MLID_MIN + h % (SIB_MLID_MAX - SIB_MLID_MIN + 1));
}

static void join_event(struct ucma_ctx *ctx, struct cma_mc *mc,
		       const struct ib_mcmember_record *g, int status)
{
	struct rdma_ucm_ud_param ud;

	memset(&ud, 0, sizeof(ud));
	if (!status) {
		ud.qp_num = SIB_MCAST_QPN;
		ud.qkey = g->Q_Key;
		ud.ah_attr.dlid = g->MLID;
		ud.ah_attr.sl = g->SL;
		ud.ah_attr.port_num = 1;
		ud.ah_attr.is_global = 1;
		memcpy(ud.ah_attr.grh.dgid, g->MGID.raw, 16);
		ud.ah_attr.grh.flow_label = g->FlowLabel;
		ud.ah_attr.grh.hop_limit = g->HopLimit;
		ud.ah_attr.grh.traffic_class = g->TClass;
		ud.ah_attr.grh.sgid_index = 0;
	}
	ucma_queue_mc_event(ctx, mc->uid, mc->id,
			    status ? UCMA_EV_MULTICAST_ERROR : UCMA_EV_MULTICAST_JOIN, status, &ud,
			    &mc->reported);
}

int cma_mcast_join(struct ucma_ctx **ctxp, uint64_t uid, const struct sockaddr *addr,
		   uint16_t join_flags, uint32_t *id_out)
{
	const uint64_t comp = IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID | IB_MCR_COMP_P_KEY |
			      IB_MCR_COMP_JOIN_STATE | IB_MCR_COMP_Q_KEY | IB_MCR_COMP_SL |
			      IB_MCR_COMP_FLOW_LABEL | IB_MCR_COMP_TCLASS;
	struct ucma_ctx *ctx = *ctxp;
	uint32_t handle = ctx->handle;
	uint64_t gen = ctx->generation;
	struct ib_mcmember_record q, g;
	uint16_t sa_status = 0;
	struct cma_mc *mc;
	uint32_t id;
	int rc;

	if (join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) {
		sib_warn("rdma_join_multicast: send-only full membership is not offered by "
			 "softib-sm (IBA 1.3 SendOnlyFullMember): EOPNOTSUPP");
		return -EOPNOTSUPP;
	}
	if (join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER)
		return -EINVAL;
	/* The kernel joins from a bound or resolved id only. */
	if (ctx->state != CMA_ADDR_BOUND && ctx->state != CMA_ADDR_RESOLVED &&
	    ctx->state != CMA_ROUTE_RESOLVED) {
		sib_dbg("rdma_cm: join_multicast on id %u refused: it is %s; it needs ADDR_BOUND, "
			"ADDR_RESOLVED or ROUTE_RESOLVED",
			ctx->handle, cma_state_name(ctx->state));
		return -EINVAL;
	}
	if (ctx->qp_type != IBV_QPT_UD) {
		sib_warn("rdma_join_multicast: id %u is not a UD id (RDMA_PS_UDP or RDMA_PS_IPOIB)",
			 ctx->handle);
		return -EINVAL;
	}
	memset(&q, 0, sizeof(q));
	rc = mgid_of(ctx, addr, q.MGID.raw);
	if (rc)
		return rc;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	mc->id = id = next_id++;
	mc->uid = uid;
	mc->ctx = ctx;
	memcpy(mc->mgid, q.MGID.raw, 16);
	mc->next = mcs;
	mcs = mc;
	*id_out = id;

	q.P_Key = 0xffff;
	q.Q_Key = SIB_UDP_QKEY;
	q.JoinState = IB_MCR_JOIN_FULL_MEMBER;
	if (sib_ucma.hca->node.mgmt[0].sm_none) {
		/* A subnet of one (the comment at the top). */
		g = q;
		if (cma_ip16_any(g.MGID.raw))
			memset(g.MGID.raw, 0xff, 2), g.MGID.raw[15] = (uint8_t)(id + 1);
		g.MLID = local_mlid(g.MGID.raw);
		memcpy(mc->mgid, g.MGID.raw, 16);
		mc->mlid = g.MLID;
		join_event(ctx, mc, &g, 0);
		return 0;
	}
	sib_cm_unlock(sib_ucma.cm);
	rc = sib_sa_mcast_join(&sib_ucma.hca->node, 1, &q, comp, &g, &sa_status);
	sib_cm_lock(sib_ucma.cm);
	ctx = *ctxp = ucma_ctx_find(handle, gen);
	mc = mc_find(id);
	if (!ctx || !mc) {
		/* Left or destroyed while the SA answered: leave again. */
		if (!rc)
			sib_sa_mcast_leave(&sib_ucma.hca->node, 1, g.MGID.raw,
					   IB_MCR_JOIN_FULL_MEMBER, false);
		return 0;
	}
	if (rc) {
		sib_dbg("rdma_cm: join of id %u: %s (SA status 0x%04x)", handle, strerror(-rc),
			sa_status);
		join_event(ctx, mc, NULL, rc == -EINVAL ? -EINVAL : rc);
		return 0;
	}
	memcpy(mc->mgid, g.MGID.raw, 16);
	mc->mlid = g.MLID;
	mc->joined = true;
	join_event(ctx, mc, &g, 0);
	return 0;
}

int cma_mcast_leave(struct ucma_file *file, uint32_t id, uint32_t *events_reported)
{
	struct cma_mc *mc = mc_find(id);
	uint8_t mgid[16];
	bool joined;

	if (!mc || !mc->ctx || mc->ctx->file != file)
		return -ENOENT;
	mc_unlink(mc);
	ucma_drop_mc_events(mc->ctx->file, &mc->reported);
	*events_reported = mc->reported;
	memcpy(mgid, mc->mgid, 16);
	joined = mc->joined;
	free(mc);
	if (joined) {
		sib_cm_unlock(sib_ucma.cm);
		sib_sa_mcast_leave(&sib_ucma.hca->node, 1, mgid, IB_MCR_JOIN_FULL_MEMBER, true);
		sib_cm_lock(sib_ucma.cm);
	}
	return 0;
}

void cma_mcast_ctx_gone(struct ucma_ctx *ctx)
{
	for (struct cma_mc **pp = &mcs; *pp;) {
		struct cma_mc *mc = *pp;

		if (mc->ctx != ctx) {
			pp = &mc->next;
			continue;
		}
		*pp = mc->next;
		if (ctx->file)
			ucma_drop_mc_events(ctx->file, &mc->reported);
		if (mc->joined && sib_ucma.hca)
			sib_sa_mcast_leave(&sib_ucma.hca->node, 1, mc->mgid,
					   IB_MCR_JOIN_FULL_MEMBER, false);
		free(mc);
	}
}

void cma_mcast_reset(void)
{
	for (struct cma_mc *mc = mcs; mc; mc = mc->next) {
		if (!mc->joined || !mc->ctx)
			continue;
		mc->joined = false; /* nothing to leave at the SA */
		join_event(mc->ctx, mc, NULL, -ENETRESET);
	}
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The engine's multicast tables (mcast.h): the groups this port's QPs are
 * attached to, and the member ports of each MLID.  One mutex guards both;
 * it nests inside a QP's lock (a send reads the member ports) and never
 * around one (a receive copies the attached QP numbers out first).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "transport/mcast.h"
#include "transport/qp_impl.h"

struct mc_group {
	uint8_t MGID[16];
	uint16_t MLID;
	unsigned nqp;
	uint32_t qpn[SIB_MAX_MCAST_QP_ATTACH];
};

struct mc_ports {
	uint16_t MLID;
	unsigned n;
	struct sib_endpoint *ep;
};

struct sib_mcast {
	pthread_mutex_t lock;
	struct mc_group *groups; /* ngroups used, SIB_MAX_MCAST_GRP at most */
	unsigned ngroups, groups_cap;
	unsigned attached; /* attachments in all */
	struct mc_ports *ports;
	unsigned nports, ports_cap;
	bool via_cable; /* a fabric: every MLID goes to the switch (mcast.h) */
	struct sib_endpoint cable;
};

struct sib_mcast *sib_mcast_new(void)
{
	struct sib_mcast *mc = calloc(1, sizeof(*mc));

	if (mc)
		pthread_mutex_init(&mc->lock, NULL);
	return mc;
}

void sib_mcast_free(struct sib_mcast *mc)
{
	if (!mc)
		return;
	for (unsigned i = 0; i < mc->nports; i++)
		free(mc->ports[i].ep);
	free(mc->ports);
	free(mc->groups);
	pthread_mutex_destroy(&mc->lock);
	free(mc);
}

static struct mc_group *group_find(struct sib_mcast *mc, const uint8_t mgid[16])
{
	for (unsigned i = 0; i < mc->ngroups; i++)
		if (!memcmp(mc->groups[i].MGID, mgid, 16))
			return &mc->groups[i];
	return NULL;
}

static struct mc_ports *ports_find(struct sib_mcast *mc, uint16_t mlid)
{
	for (unsigned i = 0; i < mc->nports; i++)
		if (mc->ports[i].MLID == mlid)
			return &mc->ports[i];
	return NULL;
}

static void gid_str(const uint8_t g[16], char *buf, size_t len)
{
	snprintf(buf, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0],
		 g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13],
		 g[14], g[15]);
}

static int args_ok(struct sib_qp *qp, const uint8_t mgid[16], uint16_t mlid, char *why,
		   size_t why_len)
{
	char g[48];

	if (qp->type != SIB_QPT_UD) {
		snprintf(why, why_len, "only UD QPs join multicast groups, this one is %s",
			 sib_qp_type_name(qp->type));
		return EINVAL;
	}
	if (!qp->eng) {
		snprintf(why, why_len, "the QP has no data path");
		return EINVAL;
	}
	if (!sib_gid_is_multicast(mgid)) {
		gid_str(mgid, g, sizeof(g));
		snprintf(why, why_len, "%s is not a multicast GID (IBA 4.1.1: it starts with 0xFF)",
			 g);
		return EINVAL;
	}
	if (!sib_lid_is_multicast(mlid)) {
		snprintf(why, why_len,
			 "LID 0x%04x is not a multicast LID (IBA 4.1.3: 0xC000..0xFFFE)", mlid);
		return EINVAL;
	}
	return 0;
}

int sib_qp_mcast_attach(struct sib_qp *qp, const uint8_t mgid[16], uint16_t mlid, char *why,
			size_t why_len)
{
	int err = args_ok(qp, mgid, mlid, why, why_len);
	struct sib_mcast *mc;
	struct mc_group *g;

	if (err)
		return err;
	mc = sib_engine_mcast(qp->eng);
	pthread_mutex_lock(&mc->lock);
	g = group_find(mc, mgid);
	if (g && g->MLID != mlid) {
		snprintf(why, why_len, "the group is attached with MLID 0x%04x here, not 0x%04x",
			 g->MLID, mlid);
		err = EINVAL;
		goto out;
	}
	if (g) {
		for (unsigned i = 0; i < g->nqp; i++)
			if (g->qpn[i] == qp->qp_num)
				goto out; /* attached already: still one copy */
		if (g->nqp == SIB_MAX_MCAST_QP_ATTACH) {
			snprintf(why, why_len, "the group has %d QPs attached (max_mcast_qp_attach)",
				 SIB_MAX_MCAST_QP_ATTACH);
			err = ENOMEM;
			goto out;
		}
	}
	if (mc->attached == SIB_MAX_TOTAL_MCAST_QP_ATTACH) {
		snprintf(why, why_len, "%d attachments in all (max_total_mcast_qp_attach)",
			 SIB_MAX_TOTAL_MCAST_QP_ATTACH);
		err = ENOMEM;
		goto out;
	}
	if (!g) {
		if (mc->ngroups == SIB_MAX_MCAST_GRP) {
			snprintf(why, why_len, "%d groups attached already (max_mcast_grp)",
				 SIB_MAX_MCAST_GRP);
			err = ENOMEM;
			goto out;
		}
		if (mc->ngroups == mc->groups_cap) {
			unsigned cap = mc->groups_cap ? mc->groups_cap * 2 : 4;
			struct mc_group *n = realloc(mc->groups, cap * sizeof(*n));

			if (!n) {
				snprintf(why, why_len, "out of memory");
				err = ENOMEM;
				goto out;
			}
			mc->groups = n;
			mc->groups_cap = cap;
		}
		g = &mc->groups[mc->ngroups++];
		memset(g, 0, sizeof(*g));
		memcpy(g->MGID, mgid, 16);
		g->MLID = mlid;
	}
	g->qpn[g->nqp++] = qp->qp_num;
	mc->attached++;
out:
	pthread_mutex_unlock(&mc->lock);
	return err;
}

/* Removes qpn from group index gi; the group goes with its last QP. */
static bool group_remove(struct sib_mcast *mc, unsigned gi, uint32_t qpn)
{
	struct mc_group *g = &mc->groups[gi];

	for (unsigned i = 0; i < g->nqp; i++) {
		if (g->qpn[i] != qpn)
			continue;
		g->qpn[i] = g->qpn[--g->nqp];
		mc->attached--;
		if (!g->nqp)
			mc->groups[gi] = mc->groups[--mc->ngroups];
		return true;
	}
	return false;
}

int sib_qp_mcast_detach(struct sib_qp *qp, const uint8_t mgid[16], uint16_t mlid, char *why,
			size_t why_len)
{
	int err = args_ok(qp, mgid, mlid, why, why_len);
	struct sib_mcast *mc;
	struct mc_group *g;

	if (err)
		return err;
	mc = sib_engine_mcast(qp->eng);
	pthread_mutex_lock(&mc->lock);
	g = group_find(mc, mgid);
	if (!g || g->MLID != mlid || !group_remove(mc, (unsigned)(g - mc->groups), qp->qp_num)) {
		snprintf(why, why_len, "the QP is not attached to that group and MLID");
		err = EINVAL;
	}
	pthread_mutex_unlock(&mc->lock);
	return err;
}

unsigned sib_qp_mcast_groups(struct sib_qp *qp)
{
	struct sib_mcast *mc;
	unsigned n = 0;

	if (!qp->eng || qp->type != SIB_QPT_UD)
		return 0;
	mc = sib_engine_mcast(qp->eng);
	pthread_mutex_lock(&mc->lock);
	for (unsigned i = 0; i < mc->ngroups; i++)
		for (unsigned j = 0; j < mc->groups[i].nqp; j++)
			n += mc->groups[i].qpn[j] == qp->qp_num;
	pthread_mutex_unlock(&mc->lock);
	return n;
}

void sib_mcast_detach_all(struct sib_mcast *mc, uint32_t qpn)
{
	pthread_mutex_lock(&mc->lock);
	for (unsigned i = mc->ngroups; i-- > 0;)
		group_remove(mc, i, qpn);
	pthread_mutex_unlock(&mc->lock);
}

void sib_engine_mcast_via_cable(struct sib_engine *eng, const struct sib_endpoint *sw)
{
	struct sib_mcast *mc = sib_engine_mcast(eng);

	pthread_mutex_lock(&mc->lock);
	mc->cable = *sw;
	mc->via_cable = true;
	pthread_mutex_unlock(&mc->lock);
}

int sib_engine_mcast_set_ports(struct sib_engine *eng, uint16_t mlid,
			       const struct sib_endpoint *eps, unsigned n)
{
	struct sib_mcast *mc = sib_engine_mcast(eng);
	struct sib_endpoint *copy = NULL;
	struct mc_ports *p;
	int err = 0;

	if (!sib_lid_is_multicast(mlid))
		return EINVAL;
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return ENOMEM;
		memcpy(copy, eps, n * sizeof(*copy));
	}
	pthread_mutex_lock(&mc->lock);
	p = ports_find(mc, mlid);
	if (!p && n) {
		if (mc->nports == mc->ports_cap) {
			unsigned cap = mc->ports_cap ? mc->ports_cap * 2 : 4;
			struct mc_ports *np = realloc(mc->ports, cap * sizeof(*np));

			if (!np) {
				err = ENOMEM;
				goto out;
			}
			mc->ports = np;
			mc->ports_cap = cap;
		}
		p = &mc->ports[mc->nports++];
		p->MLID = mlid;
		p->ep = NULL;
	}
	if (p) {
		free(p->ep);
		p->ep = copy;
		p->n = n;
		copy = NULL;
		if (!n)
			*p = mc->ports[--mc->nports];
	}
out:
	pthread_mutex_unlock(&mc->lock);
	free(copy);
	return err;
}

unsigned sib_engine_mcast_groups(struct sib_engine *eng, struct sib_mcast_group_info *out,
				 unsigned max)
{
	struct sib_mcast *mc = sib_engine_mcast(eng);
	unsigned n;

	pthread_mutex_lock(&mc->lock);
	n = mc->ngroups;
	for (unsigned i = 0; i < n && i < max; i++) {
		struct mc_ports *p = ports_find(mc, mc->groups[i].MLID);

		memcpy(out[i].MGID, mc->groups[i].MGID, 16);
		out[i].MLID = mc->groups[i].MLID;
		out[i].nqp = mc->groups[i].nqp;
		out[i].ports = p ? p->n : 0;
	}
	pthread_mutex_unlock(&mc->lock);
	return n;
}

static bool mlid_attached_locked(struct sib_mcast *mc, uint16_t mlid)
{
	for (unsigned i = 0; i < mc->ngroups; i++)
		if (mc->groups[i].MLID == mlid)
			return true;
	return false;
}

unsigned sib_mcast_for_each_dest(struct sib_engine *eng, uint16_t mlid, sib_mcast_dest_fn fn,
				 void *arg)
{
	struct sib_mcast *mc = sib_engine_mcast(eng);
	const struct sib_endpoint *self = &sib_engine_link(eng)->local;
	bool self_done = false;
	unsigned sent = 0;
	struct mc_ports *p;

	pthread_mutex_lock(&mc->lock);
	if (mc->via_cable) { /* the switches fan it out (their MFTs) */
		fn(arg, &mc->cable);
		sent++;
	}
	p = mc->via_cable ? NULL : ports_find(mc, mlid);
	for (unsigned i = 0; p && i < p->n; i++) {
		/* The SM lists this port too when it joined: one copy. */
		if (sib_endpoint_equal(&p->ep[i], self)) {
			if (self_done)
				continue;
			self_done = true;
		}
		fn(arg, &p->ep[i]);
		sent++;
	}
	/* Loopback (mcast.h): this port's attached QPs get the packet whether
	 * or not the SM has listed the port yet. */
	if (!self_done && mlid_attached_locked(mc, mlid)) {
		fn(arg, self);
		sent++;
	}
	pthread_mutex_unlock(&mc->lock);
	return sent;
}

unsigned sib_mcast_qpns(struct sib_engine *eng, const uint8_t *mgid, uint16_t mlid, uint32_t *out,
			unsigned max)
{
	struct sib_mcast *mc = sib_engine_mcast(eng);
	unsigned n = 0;

	pthread_mutex_lock(&mc->lock);
	for (unsigned i = 0; i < mc->ngroups; i++) {
		struct mc_group *g = &mc->groups[i];

		/* The GRH's MGID names the group, as HCAs steer multicast by
		 * MGID; a packet without one goes by its DLID. */
		if (mgid ? memcmp(g->MGID, mgid, 16) != 0 : g->MLID != mlid)
			continue;
		for (unsigned j = 0; j < g->nqp; j++) {
			bool dup = false;

			/* Without a GRH two groups may share the MLID: one copy per QP. */
			for (unsigned k = 0; k < n; k++)
				dup |= out[k] == g->qpn[j];
			if (!dup && n < max)
				out[n++] = g->qpn[j];
		}
	}
	pthread_mutex_unlock(&mc->lock);
	return n;
}

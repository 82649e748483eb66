/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "mgmt/cable_port.h"
#include "mgmt/mad_packet.h"
#include "mgmt/mad_send.h"
#include "mgmt/node.h"
#include "mgmt/port_up.h"
#include "mgmt/sa_client.h"
#include "mgmt/sma.h"
#include "wire/smp.h"

extern char **environ;

int sib_port_sm_config(struct sib_port_mgmt *pm, const char *sm)
{
	char buf[512], *save = NULL;
	unsigned n = 0;
	int rc = 0;

	pm->sm_none = false;
	pm->n_sm_addr = 0;
	if (!sm || !*sm)
		sm = SIB_SM_DEFAULT;
	if (!strcmp(sm, "none")) {
		pm->sm_none = true;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", sm);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct sib_endpoint ep;

		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (n == SIB_SM_MAX_ADDRS || sib_endpoint_parse(tok, SIB_SM_PORT_DEFAULT, &ep)) {
			rc = -EINVAL;
			continue;
		}
		pm->sm_addr[n++] = ep;
	}
	if (!n) {
		sib_endpoint_parse(SIB_SM_DEFAULT, SIB_SM_PORT_DEFAULT, &pm->sm_addr[0]);
		n = 1;
		rc = -EINVAL;
	}
	pm->n_sm_addr = n;
	return rc;
}

int sib_port_sm_addr_index(const struct sib_port_mgmt *pm, const struct sib_endpoint *from)
{
	for (unsigned i = 0; from && i < pm->n_sm_addr; i++)
		if (sib_endpoint_equal(&pm->sm_addr[i], from))
			return (int)i;
	return -1;
}

/* Where the port's traps and SMInfo queries go: its verified SM, or
 * (all) every configured address: before one verified itself, and while
 * ours is silent (a standby that took over must hear of us).  Under the
 * lock. */
static unsigned sm_targets(const struct sib_port_mgmt *pm, bool all, struct sib_endpoint *out)
{
	if (pm->sm_heard && !all) {
		out[0] = pm->sm_ep;
		return 1;
	}
	for (unsigned i = 0; i < pm->n_sm_addr; i++)
		out[i] = pm->sm_addr[i];
	return pm->n_sm_addr;
}

/*
 * Port bring-up's sends on QP0 (mad_send.h): traps and SMInfo queries.  It
 * serves no requests: the SMA, registered first for the class, hears the
 * responses none of these sends took.
 */
static const struct sib_mad_agent bringup_agent = {
	.name = "port bring-up",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED,
	.class_version = IB_SMP_CLASS_VERSION,
};

int sib_port_up_register(struct sib_node *node)
{
	return sib_mad_agent_register(node, &bringup_agent);
}

/* How long a trap waits for its TrapRepress; the trap timer sends the
 * next one meanwhile, so a late repress still counts. */
#define TRAP_WAIT_NS (2000ull * 1000000ull)
/* SubnGet(SMInfo): asked again every 100 ms until SMINFO_FAST_NS after
 * bring-up started, then every 2 s. */
#define SMINFO_WAIT_NS (100ull * 1000000ull)
#define SMINFO_SLOW_WAIT_NS (2000ull * 1000000ull)
#define SMINFO_FAST_NS (3000ull * 1000000ull)

/* A LID-routed SMP from the port to an SM's QP0: traps go to the master
 * SM's LID; before any SM has told us its LID the permissive LID stands in
 * (the SM is found by endpoint). */
static void to_sm(struct sib_node *node, unsigned port_num, struct sib_mad_send_req *req)
{
	struct sib_port *port = &node->ports[port_num - 1];
	uint16_t lid, sm_lid;

	pthread_mutex_lock(&node->lock);
	lid = port->LID;
	sm_lid = port->SMLID;
	pthread_mutex_unlock(&node->lock);
	memset(req, 0, sizeof(*req));
	req->port_num = port_num;
	sib_mad_addr_init(&req->addr, SIB_QP0, sm_lid ? sm_lid : SIB_LID_PERMISSIVE,
			  lid ? lid : SIB_LID_PERMISSIVE);
}

/* The SM represses a trap of ours (IBA 14.2.5.1): the SMA's M_Key check
 * first, as for every TrapRepress; only our verified SM's says it heard
 * us. */
static enum sib_mad_verdict trap_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_node *node = owner;
	struct sib_port_mgmt *pm = &node->mgmt[wc->port_num - 1];

	if (wc->status != SIB_MAD_RESPONSE || !sib_sma_repress_admitted(node, wc->resp))
		return SIB_MAD_DONE;
	pthread_mutex_lock(&node->lock);
	if (pm->sm_heard && sib_endpoint_equal(wc->resp->from, &pm->sm_ep)) {
		pm->last_smp_ns = sib_link_now_ns();
		pm->sm_silent = false;
		pthread_cond_broadcast(&node->port_cond);
	}
	pthread_mutex_unlock(&node->lock);
	return SIB_MAD_DONE;
}

/* SubnTrap(Notice) with the port's next NoticeCount, one send per SM
 * address (each answered by its own TrapRepress). */
static void send_notice(struct sib_node *node, unsigned port_num, struct ib_notice *n,
			const struct sib_endpoint *dst, unsigned ndst)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_mad_send_req req;
	uint8_t mad[IB_MAD_BYTES];
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	pthread_mutex_lock(&node->lock);
	pm->notice_count = (uint16_t)((pm->notice_count + 1) & 0x7fff);
	n->NoticeCount = pm->notice_count;
	n->IssuerLID = node->ports[port_num - 1].LID;
	pthread_mutex_unlock(&node->lock);
	sib_mad_request_hdr(&smp.hdr, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_SMP_CLASS_VERSION,
			    IB_MAD_METHOD_TRAP, IB_SMP_ATTR_NOTICE, 0);
	n->IsGeneric = 1;
	n->ProducerType = IB_NOTICE_PRODUCER_CA;
	ib_notice_encode(n, smp.SMPData);
	ib_smp_encode(&smp, mad);
	to_sm(node, port_num, &req);
	req.mad = mad;
	req.timeout_ns = TRAP_WAIT_NS;
	req.fn = trap_event;
	for (unsigned i = 0; i < ndst; i++) {
		req.dst = dst[i];
		if (sib_mad_post(&node->mads, &bringup_agent, &req, NULL))
			sib_dbg("port %u: trap to the SM not sent", port_num);
	}
}

static void send_trap(struct sib_node *node, unsigned port_num, bool all)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_endpoint dst[SIB_SM_MAX_ADDRS];
	struct ib_notice n;
	unsigned ndst;
	uint16_t lid;

	memset(&n, 0, sizeof(n));
	pthread_mutex_lock(&node->lock);
	ndst = sm_targets(pm, all, dst);
	lid = node->ports[port_num - 1].LID;
	pthread_mutex_unlock(&node->lock);
	n.Type = IB_NOTICE_TYPE_URGENT;
	n.TrapNumber = IB_TRAP_LINK_STATE_CHANGE;
	/* DataDetails of trap 128: LIDADDR, the issuer's LID (the LID a
	 * restarted SM gives back: IssuerLID and PortInfo say it too). */
	n.DataDetails[0] = (uint8_t)(lid >> 8);
	n.DataDetails[1] = (uint8_t)lid;
	send_notice(node, port_num, &n, dst, ndst);
}

void sib_port_trap_bad_m_key(struct sib_node *node, unsigned port_num,
			     const struct ib_notice_bad_m_key *d)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_endpoint dst;
	struct ib_notice n;
	bool send;

	pthread_mutex_lock(&node->lock);
	dst = pm->sm_ep;
	send = pm->sm_heard;
	pthread_mutex_unlock(&node->lock);
	if (!send)
		return; /* nobody to tell: no SM has verified itself */
	memset(&n, 0, sizeof(n));
	n.Type = IB_NOTICE_TYPE_SECURITY;
	n.TrapNumber = IB_TRAP_BAD_M_KEY;
	ib_notice_bad_m_key_encode(d, n.DataDetails);
	send_notice(node, port_num, &n, &dst, 1);
}

void sib_port_trap_bad_p_key(struct sib_node *node, unsigned port_num,
			     const struct ib_notice_bad_key *d)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	uint64_t now = sib_link_now_ns();
	struct sib_endpoint dst;
	struct ib_notice n;
	bool send;

	pthread_mutex_lock(&node->lock);
	dst = pm->sm_ep;
	send = pm->sm_heard && (!pm->pkey_trap_ns || now - pm->pkey_trap_ns >= 1000000000ull);
	if (send)
		pm->pkey_trap_ns = now;
	pthread_mutex_unlock(&node->lock);
	if (!send)
		return; /* nobody to tell, or told within the second */
	memset(&n, 0, sizeof(n));
	n.Type = IB_NOTICE_TYPE_SECURITY;
	n.TrapNumber = IB_TRAP_BAD_P_KEY;
	ib_notice_bad_key_encode(d, n.DataDetails);
	send_notice(node, port_num, &n, &dst, 1);
}

/* The queries still out to the other SM addresses end: ours is found. */
static void sminfo_cancel_others(struct sib_node *node, struct sib_port_mgmt *pm, int keep)
{
	uint64_t tid[SIB_SM_MAX_ADDRS] = { 0 };

	pthread_mutex_lock(&node->lock);
	for (unsigned i = 0; i < pm->n_sm_addr; i++)
		if ((int)i != keep) {
			tid[i] = pm->sminfo_tid[i];
			pm->sminfo_tid[i] = 0;
		}
	pthread_mutex_unlock(&node->lock);
	for (unsigned i = 0; i < SIB_SM_MAX_ADDRS; i++)
		if (tid[i])
			sib_mad_cancel(&node->mads, tid[i], pm);
}

/*
 * An SMInfo answer from the SM address its query went to: the rule of
 * port_up.h.  True when that SM is the port's SM now (the query is over);
 * false keeps asking it (not MASTER, not keyed, or ours still speaks).
 */
static bool sminfo_answered(struct sib_node *node, unsigned port_num, const uint8_t *mad,
			    const struct sib_endpoint *from)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	char e[SIB_ENDPOINT_STRLEN];
	struct ib_sm_info si;
	struct ib_smp smp;
	bool ours, changed = false;
	int i;

	ib_smp_decode(&smp, mad);
	if (smp.hdr.AttributeID != IB_SMP_ATTR_SM_INFO || smp.hdr.Status)
		return false;
	ib_sm_info_decode(&si, smp.SMPData);
	pthread_mutex_lock(&node->lock);
	i = sib_port_sm_addr_index(pm, from);
	if (i < 0 || si.SMState != IB_SM_STATE_MASTER) {
		pthread_mutex_unlock(&node->lock);
		return false; /* an address no longer configured, or no master */
	}
	/* The rule: a configured address answering as MASTER, which has shown
	 * our M_Key if we hold one; a second master is taken only when ours
	 * went silent. */
	if (pm->M_Key && !pm->sm_keyed[i]) {
		pthread_mutex_unlock(&node->lock);
		sib_dbg("port %u: the SM at %s says MASTER but has not shown this port's M_Key",
			port_num, sib_endpoint_str(from, e));
		return false;
	}
	if (!pm->sm_heard || ((unsigned)i != pm->sm_index && pm->sm_silent)) {
		pm->sm_ep = pm->sm_addr[i];
		pm->sm_index = (unsigned)i;
		pm->sm_heard = true;
		pm->sm_silent = false;
		pm->last_smp_ns = sib_link_now_ns();
		changed = true;
		pthread_cond_broadcast(&node->port_cond);
	}
	ours = (unsigned)i == pm->sm_index;
	pthread_mutex_unlock(&node->lock);
	if (changed) {
		sib_info("port %u: the subnet manager is %s (SMInfo: MASTER, GUID 0x%016llx)",
			 port_num, sib_endpoint_str(from, e), (unsigned long long)si.GUID);
		sib_sa_flush_cache(node); /* answers of another SM */
		sminfo_cancel_others(node, pm, i);
	}
	return ours;
}

static enum sib_mad_verdict sminfo_event(void *owner, const struct sib_mad_send_wc *wc)
{
	struct sib_node *node = owner;
	struct sib_port_mgmt *pm = wc->context;

	if (wc->status == SIB_MAD_RESENT)
		return SIB_MAD_DONE;
	if (wc->status == SIB_MAD_RESPONSE &&
	    !sminfo_answered(node, wc->port_num, wc->resp->mad, wc->resp->from))
		return SIB_MAD_MORE;
	pthread_mutex_lock(&node->lock);
	for (unsigned i = 0; i < SIB_SM_MAX_ADDRS; i++)
		if (pm->sminfo_tid[i] == wc->tid)
			pm->sminfo_tid[i] = 0;
	pthread_mutex_unlock(&node->lock);
	return SIB_MAD_DONE;
}

void sib_port_sm_probe(struct sib_node *node, unsigned port_num)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_mad_send_req req;
	uint8_t mad[IB_MAD_BYTES];
	uint64_t now = sib_link_now_ns(), fast_end;
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	sib_mad_request_hdr(&smp.hdr, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_SMP_CLASS_VERSION,
			    IB_MAD_METHOD_GET, IB_SMP_ATTR_SM_INFO, 0);
	/* M_Key 0: a port holds no SM_Key, and its own M_Key is for the SM to
	 * show, never for the port to hand out. */
	ib_smp_encode(&smp, mad);
	to_sm(node, port_num, &req);
	req.mad = mad;
	req.fn = sminfo_event;
	req.context = pm;
	pthread_mutex_lock(&node->lock);
	fast_end = pm->up_since_ns + SMINFO_FAST_NS;
	pthread_mutex_unlock(&node->lock);
	/* One query per address with one TID for all its tries: on a busy
	 * machine the answer to an earlier try may come after the next one
	 * left (IBA 13.4.6.4). */
	req.timeout_ns = now < fast_end ? SMINFO_WAIT_NS : SMINFO_SLOW_WAIT_NS;
	req.retries = now < fast_end ? (unsigned)((fast_end - now) / SMINFO_WAIT_NS) : 0;
	for (unsigned i = 0; i < SIB_SM_MAX_ADDRS; i++) {
		bool ask;

		pthread_mutex_lock(&node->lock);
		ask = i < pm->n_sm_addr && !pm->sminfo_tid[i];
		if (ask) {
			req.dst = pm->sm_addr[i];
			req.tid = pm->sminfo_tid[i] = sib_mad_tid(&node->mads, &bringup_agent);
		}
		pthread_mutex_unlock(&node->lock);
		if (ask && sib_mad_post(&node->mads, &bringup_agent, &req, NULL)) {
			pthread_mutex_lock(&node->lock);
			pm->sminfo_tid[i] = 0;
			pthread_mutex_unlock(&node->lock);
			sib_dbg("port %u: SubnGet(SMInfo) not sent", port_num);
		}
	}
}

void sib_port_sm_smp_seen(struct sib_node *node, unsigned port_num,
			  const struct sib_endpoint *from, bool keyed)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	int i;

	pthread_mutex_lock(&node->lock);
	i = sib_port_sm_addr_index(pm, from);
	if (i >= 0) {
		if (keyed)
			pm->sm_keyed[i] = true;
		/* Only our SM's word counts against silence (a stranger's Gets
		 * must not hide that the SM is gone). */
		if (pm->sm_heard && (unsigned)i == pm->sm_index && (keyed || !pm->M_Key)) {
			pm->last_smp_ns = sib_link_now_ns();
			pm->sm_silent = false;
		}
	}
	pthread_mutex_unlock(&node->lock);
}

/* A port cabled to a softib-switch sends neither traps nor probes: the
 * switch reports its link and the SM sweeps (IBA 14.4).  Its timer keeps
 * the cable up instead. */
static void keepalive_tick(void *arg)
{
	struct sib_port_mgmt *pm = arg;

	sib_cable_say(pm->link, &pm->cable, SIB_CABLE_KEEPALIVE);
	sib_timer_arm(pm->node->timers, &pm->trap_timer, SIB_CABLE_KEEPALIVE_MS * 1000000ull,
		      keepalive_tick, pm);
}

static void trap_tick(void *arg)
{
	struct sib_port_mgmt *pm = arg;
	struct sib_node *node = pm->node;
	unsigned port_num = pm->port_num;
	uint64_t now = sib_link_now_ns(), next;
	bool active, heard, fast, silent, newly_silent = false;

	pthread_mutex_lock(&node->lock);
	active = node->ports[port_num - 1].state == SIB_PORT_ACTIVE;
	heard = pm->sm_heard;
	fast = now - pm->up_since_ns < SMINFO_FAST_NS;
	silent = active && now - pm->last_smp_ns > SIB_PORT_SM_SILENCE_NS;
	if (silent && !pm->sm_silent)
		newly_silent = pm->sm_silent = true;
	pthread_mutex_unlock(&node->lock);

	/* The SM stopped sweeping us: it may have restarted, or a standby
	 * took over.  Every 2 s until one answers, every configured SM hears
	 * a trap and says who is master now. */
	if (newly_silent)
		sib_info("port %u: no word from the SM for %llu s; trapping again", port_num,
			 (unsigned long long)(SIB_PORT_SM_SILENCE_NS / 1000000000ull));
	if (!active || silent)
		send_trap(node, port_num, !heard || silent);
	if (!heard || silent)
		sib_port_sm_probe(node, port_num);
	/* Until an SM verifies itself (an ACTIVE port asks too: it needs its
	 * SM for SA queries) every 100 ms in the first 3 s. */
	next = fast && !heard ? 100000000ull : 2000000000ull;
	if (!active && heard && fast)
		next = 500000000ull; /* the SM is configuring us: nudge only gently */
	sib_timer_arm(node->timers, &pm->trap_timer, next, trap_tick, pm);
}

void sib_port_up_start(struct sib_node *node, unsigned port_num)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];

	pthread_mutex_lock(&node->lock);
	pm->up_since_ns = sib_link_now_ns();
	pm->last_smp_ns = pm->up_since_ns;
	if (pm->fabric) {
		pthread_mutex_unlock(&node->lock);
		keepalive_tick(pm);
		return;
	}
	pm->sm_heard = false;
	pthread_mutex_unlock(&node->lock);
	send_trap(node, port_num, true);
	sib_port_sm_probe(node, port_num);
	sib_timer_arm(node->timers, &pm->trap_timer, 100000000ull, trap_tick, pm);
}

void sib_port_up_stop(struct sib_node *node, unsigned port_num)
{
	sib_timer_cancel(node->timers, &node->mgmt[port_num - 1].trap_timer);
}

int sib_port_up_wait(struct sib_node *node, unsigned port_num, uint64_t timeout_ns,
		     bool want_active)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_port *port = &node->ports[port_num - 1];
	uint64_t deadline = sib_link_now_ns() + timeout_ns;
	int rc = 0;

	pthread_mutex_lock(&node->lock);
	while (want_active ? port->state != SIB_PORT_ACTIVE : !pm->sm_heard) {
		uint64_t now = sib_link_now_ns(), until = deadline;
		struct timespec ts;

		if (now >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		if (!node->ops->threaded(node)) {
			pthread_mutex_unlock(&node->lock);
			node->ops->poll(node);
			pthread_mutex_lock(&node->lock);
			until = now + 1000000ull < deadline ? now + 1000000ull : deadline;
		}
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&node->port_cond, &node->lock, &ts);
	}
	pthread_mutex_unlock(&node->lock);
	return rc;
}

int sib_port_bringup(struct sib_node *node, unsigned port_num, bool may_spawn)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	char sm[SIB_ENDPOINT_STRLEN];
	uint64_t start = sib_link_now_ns(), first = start, spent, wait, now, last;
	bool spawned = false, tried = false, heard;

	sib_endpoint_str(&pm->sm_addr[0], sm);
	if (pm->fabric) /* the SM is somewhere behind the switch: nothing to start */
		may_spawn = false;
	if (sib_port_up_wait(node, port_num, SIB_PORT_SM_PROBE_NS, false) && may_spawn) {
		sib_info("port %u: no SM answers at %s; starting softib-sm", port_num, sm);
		tried = true;
		spawned = sib_sm_spawn(sm) == 0;
		/* The daemon returns once an SM listens: the budget counts from
		 * there, so a slow start on a loaded machine does not eat it. */
		if (spawned)
			start = sib_link_now_ns();
	}
	spent = sib_link_now_ns() - start;
	if (tried && !spawned && !pm->sm_heard)
		spent = SIB_PORT_BRINGUP_NS; /* nobody will answer: do not make the caller wait */
	wait = spent < SIB_PORT_BRINGUP_NS ? SIB_PORT_BRINGUP_NS - spent : 0;
	/* Then until SIB_PORT_BRINGUP_NS pass without a word from an SM: one
	 * that answers is configuring us, however slowly a loaded machine runs
	 * it (at most SIB_PORT_BRINGUP_MAX_NS in all). */
	for (;;) {
		if (!sib_port_up_wait(node, port_num, wait, true))
			return 0;
		pthread_mutex_lock(&node->lock);
		heard = pm->sm_heard;
		last = pm->last_smp_ns;
		pthread_mutex_unlock(&node->lock);
		now = sib_link_now_ns();
		if (!heard || now - last >= SIB_PORT_BRINGUP_NS ||
		    now - first >= SIB_PORT_BRINGUP_MAX_NS)
			break;
		wait = last + SIB_PORT_BRINGUP_NS - now;
	}
	if (pm->fabric) {
		sib_warn("port %u is not ACTIVE: no subnet manager on the fabric at %s configured it "
			 "(%llu ms without a word from one); start softib-sm there with "
			 "SOFTIB_FABRIC (softib-sm(8), ON A FABRIC); the port stays INIT with LID 0 "
			 "until one does",
			 port_num, sm, (unsigned long long)(SIB_PORT_BRINGUP_NS / 1000000ull));
		return -ETIMEDOUT;
	}
	sib_warn("port %u is not ACTIVE: no subnet manager configured it (%llu ms without a word "
		 "from one; SM at %s%s); check that softib-sm runs there and SOFTIB_SM points to "
		 "it (softib-sm(8)); the port stays %s with LID 0 until an SM answers",
		 port_num, (unsigned long long)(SIB_PORT_BRINGUP_NS / 1000000ull), sm,
		 heard ? ", which answered but stopped"
		       : spawned ? ", started here but silent" : (tried ? ", could not start one" : ""),
		 node->ports[port_num - 1].state == SIB_PORT_INIT ? "INIT" : "DOWN");
	return -ETIMEDOUT;
}

/* softib-sm beside the code we are in, or next to PREFIX/bin. */
static bool find_sm_program(char *path, size_t size)
{
	static const char *const rel[] = { "softib-sm", "../softib-sm", "../bin/softib-sm",
					   "../../bin/softib-sm" };
	const char *env = getenv("SOFTIB_SM_BIN");
	char self[PATH_MAX], *slash;
	Dl_info di;

	if (env && *env) {
		snprintf(path, size, "%s", env);
		return true;
	}
	if (!dladdr((void *)find_sm_program, &di) || !di.dli_fname ||
	    !realpath(di.dli_fname, self))
		return false;
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(path, size, "%s/%s", self, rel[i]) < size &&
		    access(path, X_OK) == 0)
			return true;
	}
	return false;
}

int sib_sm_spawn(const char *listen)
{
	char prog[PATH_MAX];
	const char *sm_log = getenv("SOFTIB_SM_LOG");
	char *argv[] = { prog, "--daemon", "--listen", (char *)listen, NULL, NULL, NULL };
	char **envp;
	size_t n = 0, j = 0;
	pid_t pid;
	int rc, status;
	bool found = find_sm_program(prog, sizeof(prog));

	if (!found)
		snprintf(prog, sizeof(prog), "softib-sm");
	if (sm_log && *sm_log) {
		argv[4] = "--log";
		argv[5] = (char *)sm_log;
	}
	for (char **e = environ; e && *e; e++)
		n++;
	envp = calloc(n + 1, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	/* The SM must not load the provider into itself (softib run sets
	 * LD_PRELOAD), nor write into the caller's capture or log file: it
	 * outlives the caller and logs where SOFTIB_SM_LOG says, else nowhere. */
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "SOFTIB_CAPTURE=", 15) &&
		    strncmp(*e, "SOFTIB_FAULTS=", 14) && strncmp(*e, "SOFTIB_LOG_FILE=", 16))
			envp[j++] = *e;
	rc = found ? posix_spawn(&pid, prog, NULL, NULL, argv, envp)
		   : posix_spawnp(&pid, prog, NULL, NULL, argv, envp);
	free(envp);
	if (rc) {
		sib_warn("cannot start %s: %s; install softib-sm or set SOFTIB_SM_BIN", prog,
			 strerror(rc));
		return -rc;
	}
	/* The daemon's first process exits once it has forked away. */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sib_dbg("started %s --daemon --listen %s", prog, listen);
	return 0;
}

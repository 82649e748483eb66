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

#include "mgmt/node.h"
#include "base/log.h"
#include "mgmt/mad_packet.h"
#include "mgmt/port_up.h"
#include "wire/smp.h"

extern char **environ;

static void send_trap(struct sib_node *node, unsigned port_num)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct sib_port *port = &node->ports[port_num - 1];
	struct ib_notice n;
	struct ib_smp smp;
	struct sib_mad_addr a;
	struct sib_endpoint dst;
	uint8_t mad[IB_MAD_BYTES];
	uint16_t lid, sm_lid;

	memset(&smp, 0, sizeof(smp));
	memset(&n, 0, sizeof(n));
	pthread_mutex_lock(&node->lock);
	lid = port->LID;
	sm_lid = port->SMLID;
	dst = pm->sm_ep;
	pm->trap_tid = sib_mad_new_tid();
	pm->notice_count = (uint16_t)((pm->notice_count + 1) & 0x7fff);
	smp.hdr.TransactionID = pm->trap_tid;
	n.NoticeCount = pm->notice_count;
	pthread_mutex_unlock(&node->lock);

	smp.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	smp.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp.hdr.ClassVersion = IB_SMP_CLASS_VERSION;
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP);
	smp.hdr.AttributeID = IB_SMP_ATTR_NOTICE;
	n.IsGeneric = 1;
	n.Type = IB_NOTICE_TYPE_URGENT;
	n.ProducerType = IB_NOTICE_PRODUCER_CA;
	n.TrapNumber = IB_TRAP_LINK_STATE_CHANGE;
	n.IssuerLID = lid;
	/* DataDetails of trap 128: LIDADDR, the issuer's LID. */
	n.DataDetails[0] = (uint8_t)(lid >> 8);
	n.DataDetails[1] = (uint8_t)lid;
	ib_notice_encode(&n, smp.SMPData);
	ib_smp_encode(&smp, mad);
	/* Traps go to the master SM's LID; before any SM has told us its LID
	 * the permissive LID stands in (the SM is found by endpoint). */
	sib_mad_addr_init(&a, SIB_QP0, sm_lid ? sm_lid : SIB_LID_PERMISSIVE,
			  lid ? lid : SIB_LID_PERMISSIVE);
	if (sib_mgmt_send(pm->link, &a, mad, &dst))
		sib_dbg("port %u: trap to the SM not sent", port_num);
}

static void trap_tick(void *arg)
{
	struct sib_port_mgmt *pm = arg;
	struct sib_node *node = pm->node;
	unsigned port_num = pm->port_num;
	uint64_t now = sib_link_now_ns(), next;
	bool active, heard, fast, silent;

	pthread_mutex_lock(&node->lock);
	active = node->ports[port_num - 1].state == SIB_PORT_ACTIVE;
	heard = pm->sm_heard;
	fast = now - pm->up_since_ns < 3000000000ull;
	silent = now - pm->last_smp_ns > SIB_PORT_SM_SILENCE_NS;
	pthread_mutex_unlock(&node->lock);

	if (!active || silent) {
		if (active) /* the SM stopped sweeping us: it may have restarted */
			sib_info("port %u: no word from the SM for %llu s; trapping again",
				 port_num, (unsigned long long)(SIB_PORT_SM_SILENCE_NS / 1000000000ull));
		send_trap(node, port_num);
		if (active) {
			pthread_mutex_lock(&node->lock);
			pm->last_smp_ns = now; /* one retrap per silence period */
			pthread_mutex_unlock(&node->lock);
		}
	}
	next = !active && fast && !heard ? 100000000ull : 2000000000ull;
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
	pm->sm_heard = false;
	pthread_mutex_unlock(&node->lock);
	send_trap(node, port_num);
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

	sib_endpoint_str(&pm->sm_ep, sm);
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

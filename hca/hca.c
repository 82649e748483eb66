/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "hca/hca.h"
#include "mgmt/cable_port.h"
#include "mgmt/cm.h"
#include "mgmt/mad_packet.h"
#include "mgmt/perf_agent.h"
#include "mgmt/port_up.h"
#include "mgmt/sa_client.h"
#include "mgmt/sma.h"
#include "transport/engine.h"
#include "transport/mcast.h"
#include "transport/numtab.h"

static pthread_mutex_t hca_global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sib_hca *hca_current;

uint64_t sib_guid_from_random(uint64_t rnd)
{
	/* First octet is the top byte: set U/L (0x02), clear I/G (0x01). */
	rnd |= 0x0200000000000000ull;
	rnd &= ~0x0100000000000000ull;
	rnd &= ~0xfull; /* node GUID + port number = port GUID */
	if ((rnd & 0x00fffffffffffff0ull) == 0)
		rnd |= 0x10; /* never all-zero below the first octet */
	return rnd;
}

void sib_guid_format(uint64_t guid, char *buf)
{
	snprintf(buf, 20, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

void sib_gid_format(const uint8_t gid[16], char *buf)
{
	char *p = buf;

	for (int i = 0; i < 16; i += 2) {
		snprintf(p, 6, "%02x%02x%s", gid[i], gid[i + 1], i < 14 ? ":" : "");
		p += i < 14 ? 5 : 4;
	}
}

static uint64_t random_u64(void)
{
	uint64_t v = 0;
	ssize_t n = getrandom(&v, sizeof(v), GRND_NONBLOCK);

	if (n != (ssize_t)sizeof(v)) {
		/* No entropy yet (early boot): time and pid still differ per process. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
	}
	return v;
}

/* Not pthread_once: a fork()ed child must make a GUID of its own. */
static pthread_mutex_t node_guid_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t node_guid;

uint64_t sib_node_guid(void)
{
	uint64_t g;

	pthread_mutex_lock(&node_guid_lock);
	if (!node_guid)
		node_guid = sib_guid_from_random(random_u64());
	g = node_guid;
	pthread_mutex_unlock(&node_guid_lock);
	return g;
}

/*
 * fork(): the child has no progress thread and shares the parent's sockets,
 * so it must not use the parent's HCA.  It forgets it (the memory is left
 * alone: the parent's threads may have held its locks) and its next
 * sib_hca_get() builds a new node with a new GUID.
 */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&hca_global_lock);
	pthread_mutex_lock(&node_guid_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&node_guid_lock);
	pthread_mutex_unlock(&hca_global_lock);
}

static void atfork_child(void)
{
	hca_current = NULL;
	node_guid = 0;
	pthread_mutex_unlock(&node_guid_lock);
	pthread_mutex_unlock(&hca_global_lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void node_desc_make(char *buf, unsigned port_num)
{
	char host[64] = "";

	gethostname(host, sizeof(host) - 1);
	memset(buf, 0, 64);
	/* NodeDescription: NUL-padded, need not be NUL-terminated (IBA 14.2.5.2). */
	snprintf(buf, 64, "softib0 port %u pid %d %s", port_num, (int)getpid(), host);
}

/* SOFTIB_SM: where the SM is (a master and its standbys), or "none". */
static void sm_config(struct sib_port_mgmt *pm, const char *sm)
{
	if (sib_port_sm_config(pm, sm))
		sib_warn("SOFTIB_SM=%s: want none, or up to %u ADDR[:PORT] separated by commas "
			 "(e.g. 127.0.0.1:%u); ignoring what is not",
			 sm, SIB_SM_MAX_ADDRS, SIB_SM_PORT_DEFAULT);
}

static enum sib_mtu mtu_code(unsigned bytes)
{
	enum sib_mtu m = SIB_MTU_256;

	while (m < SIB_MTU_4096 && sib_mtu_bytes(m + 1) <= bytes)
		m++;
	return m;
}

static struct sib_hca *hca_of(struct sib_node *node)
{
	return (struct sib_hca *)((char *)node - offsetof(struct sib_hca, node));
}

/* The node's lock is held: it guards the listeners too. */
static void node_port_event(struct sib_node *node, unsigned port_num, enum sib_event ev)
{
	for (struct sib_hca_listener *l = hca_of(node)->listeners; l; l = l->next)
		sib_event_raise(l->sink, ev, NULL, port_num);
}

static bool node_threaded(struct sib_node *node)
{
	return hca_of(node)->progress.running;
}

static int node_poll(struct sib_node *node)
{
	return sib_progress_poll(hca_of(node));
}

/* Where a wait for a MAD would deadlock: the progress thread, or any
 * thread that is reading the links (docs/architecture.md, the receive
 * rule). */
static bool node_on_thread(struct sib_node *node)
{
	return sib_progress_on_thread(hca_of(node)) || sib_progress_reading();
}

/* What PortInfo's violation counters and the PerfMgt agent report. */
static void node_counters(struct sib_node *node, unsigned port_num, struct sib_node_counters *out)
{
	struct sib_port_stats st;

	memset(out, 0, sizeof(*out));
	if (sib_hca_port_stats(hca_of(node), port_num, &st))
		return;
	out->xmit_bytes = st.link.tx_bytes;
	out->rcv_bytes = st.link.rx_bytes;
	out->xmit_pkts = st.link.tx_packets;
	out->rcv_pkts = st.link.rx_packets;
	out->mcast_xmit_pkts = st.engine.tx_mcast;
	out->mcast_rcv_pkts = st.engine.rx_mcast;
	for (int i = 1; i < IB_PKT_ERR_COUNT; i++)
		out->rcv_errors += st.link.pkt_err[i];
	out->rcv_errors += st.link.drop[SIB_LINK_DROP_RX_TRUNCATED] +
			   st.link.drop[SIB_LINK_DROP_RX_MALFORMED] + st.rx_mad_malformed;
	out->xmit_discards = st.link.drop[SIB_LINK_DROP_TX_ERROR] +
			     st.link.drop[SIB_LINK_DROP_TX_NO_ROUTE] +
			     st.link.drop[SIB_LINK_DROP_TX_TOO_LONG] +
			     st.link.drop[SIB_LINK_DROP_TX_NO_BUFFER];
	out->P_KeyViolations = st.engine.P_KeyViolations;
	out->Q_KeyViolations = st.engine.Q_KeyViolations;
	out->vl15_dropped = st.smp_refused + st.rx_smp_unclaimed;
}

/* The SM programmed an MLID's receiving ports: the data path fans out to them. */
static int node_mcast_ports(struct sib_node *node, unsigned port_num, uint16_t mlid,
			    const struct sib_endpoint *eps, unsigned n)
{
	struct sib_hca *hca = hca_of(node);

	if (port_num != 1 || !hca->engine)
		return EAGAIN; /* not installed: the SM sends it again */
	return sib_engine_mcast_set_ports(hca->engine, mlid, eps, n);
}

/* The SA client cached where a LID lives (or that nothing does): the data
 * path's datagrams that wait for that source go on (transport/rxq.h). */
static void node_lid_resolved(struct sib_node *node, unsigned port_num, uint16_t lid)
{
	struct sib_hca *hca = hca_of(node);

	if (port_num == 1 && hca->engine)
		sib_engine_source_known(hca->engine, lid);
}

static const struct sib_node_ops hca_node_ops = {
	.port_event = node_port_event,
	.threaded = node_threaded,
	.poll = node_poll,
	.on_thread = node_on_thread,
	.counters = node_counters,
	.mcast_ports = node_mcast_ports,
	.lid_resolved = node_lid_resolved,
};

/*
 * A process that exits with its HCA alive (one the sysfs view holds until
 * exit, or exit() with verbs open) unplugs its cables on the way out, so
 * that the switch frees its CA at once, not SIB_CABLE_DEAD_MS later, and
 * the next program can be that CA.  The last of softib's destructors
 * (priority 101 runs after the default ones): the rdma_cm's goodbyes and
 * the flush of what is queued still go through the cable.  A try-lock:
 * exit() may come from a thread that holds the lock.
 */
__attribute__((destructor(101))) static void cables_unplug_at_exit(void)
{
	struct sib_hca *hca;

	if (pthread_mutex_trylock(&hca_global_lock))
		return;
	hca = hca_current;
	for (unsigned i = 0; hca && i < SIB_NUM_PORTS; i++)
		if (hca->node.mgmt[i].link && hca->node.mgmt[i].fabric)
			sib_cable_say(hca->node.mgmt[i].link, &hca->node.mgmt[i].cable,
				      SIB_CABLE_DETACH);
	pthread_mutex_unlock(&hca_global_lock);
}

/*
 * SOFTIB_FABRIC: port 1 is cabled to a softib-switch.  Its link opens now
 * and attaches as CA SOFTIB_NODE (or any free one), whose GUIDs the node
 * takes.  A user who asked for a fabric gets no HCA without one: ENODEV.
 */
static int fabric_attach(const char *fabric, struct sib_link **link, struct sib_cable_msg *att,
			 struct sib_endpoint *sw)
{
	const char *node = getenv("SOFTIB_NODE");
	int rc;

	if (sib_link_open_env(link))
		return -ENODEV;
	rc = sib_cable_attach(*link, fabric, node, 5000, att, sw);
	if (!rc) {
		sib_info("port 1: cabled to port %u of switch 0x%016llx at %s as CA \"%s\" (data %s)",
			 att->switch_port, (unsigned long long)att->switch_guid, fabric, att->id,
			 att->data_mode == SIB_DATA_SWITCHED ? "switched" : "direct");
		if (att->data_mode != SIB_DATA_SWITCHED)
			sib_info("port 1: direct data through a fabric is not there yet: every "
				 "packet crosses the switches");
		return 0;
	}
	if (rc == -ECONNREFUSED)
		sib_warn("SOFTIB_FABRIC=%s: the switch refused CA \"%s\": %s", fabric,
			 node ? node : "", sib_cable_reason_str(att->reason));
	else
		sib_warn("SOFTIB_FABRIC=%s: %s", fabric,
			 rc == -EINVAL ? "want ADDR[:PORT]"
				       : "no softib-switch answers there (softib-switch(8))");
	sib_link_close(*link);
	*link = NULL;
	return -ENODEV;
}

struct sib_hca *sib_hca_new(const struct sib_hca_opts *opts)
{
	static const struct sib_hca_opts none;
	struct sib_hca *hca = calloc(1, sizeof(*hca));
	const char *sm, *fabric = getenv("SOFTIB_FABRIC");
	struct sib_link *fabric_link = NULL;
	struct sib_cable_msg att;
	struct sib_endpoint sw;
	uint64_t guid;
	int err;

	if (!opts)
		opts = &none;
	if (!hca)
		return NULL;
	guid = opts->node_guid ? opts->node_guid : 0;
	if (fabric && *fabric && !opts->link) {
		if (fabric_attach(fabric, &fabric_link, &att, &sw)) {
			free(hca);
			errno = ENODEV;
			return NULL;
		}
		guid = att.node_guid;
	}
	err = sib_progress_init(hca);
	if (err) {
		if (fabric_link)
			sib_link_close(fabric_link);
		free(hca);
		errno = -err;
		return NULL;
	}
	sib_node_init(&hca->node, guid ? guid : sib_node_guid(), &hca->progress.timers,
		      &hca_node_ops);
	if (fabric_link && att.sys_image_guid)
		hca->node.sys_image_guid = att.sys_image_guid;
	hca->memreg = memreg_table_create(SIB_MAX_MR, SIB_MAX_MW);
	hca->next_pdn = 1;
	hca->qpns = sib_numtab_create(2, SIB_MAX_QP);
	hca->srqns = sib_numtab_create(1, SIB_MAX_SRQ);
	if (!hca->memreg || !hca->qpns || !hca->srqns || sib_sma_register(&hca->node) ||
	    sib_sa_client_register(&hca->node) || sib_perf_agent_register(&hca->node) ||
	    sib_cm_register(&hca->node)) {
		sib_cm_free(&hca->node);
		sib_numtab_destroy(hca->qpns);
		sib_numtab_destroy(hca->srqns);
		memreg_table_destroy(hca->memreg);
		sib_node_fini(&hca->node);
		sib_progress_fini(hca);
		free(hca);
		errno = ENOMEM;
		return NULL;
	}

	sm = opts->sm ? opts->sm : getenv("SOFTIB_SM");
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		struct sib_port_mgmt *pm = &hca->node.mgmt[i];
		struct sib_port *port = &hca->node.ports[i];

		node_desc_make(pm->node_desc, i + 1);
		if (i == 0 && fabric_link) {
			/* The SM is behind the cable: every SMP and SA answer comes
			 * through it (port_up.h, fabric). */
			pm->link = fabric_link;
			pm->fabric = true;
			pm->cable = sw;
			pm->sm_addr[0] = sw;
			pm->n_sm_addr = 1;
			pm->sm_ep = sw;
			pm->sm_index = 0;
			pm->sm_heard = true;
		} else {
			sm_config(pm, sm);
			if (i == 0 && opts->link)
				pm->link = opts->link;
			else if (sib_link_open_env(&pm->link))
				pm->link = NULL; /* the link said why; the port stays DOWN */
		}
		if (!pm->link)
			continue;
		/* The link is up: INIT until an SM configures the port (IBA 7.2). */
		port->state = SIB_PORT_INIT;
		port->max_mtu = mtu_code(pm->link->mtu);
		port->active_mtu = port->max_mtu;
		if (pm->sm_none) {
			/* No SM by request: a subnet of one, ACTIVE at once. */
			uint16_t lid = sib_port_local_lid(getpid());

			sib_node_port_set_lid(&hca->node, i + 1, lid, lid);
		}
	}
	if (hca->node.mgmt[0].link && sib_hca_engine_init(hca)) {
		sib_hca_free(hca);
		errno = ENOMEM;
		return NULL;
	}
	if (hca->engine && hca->node.mgmt[0].fabric)
		sib_engine_mcast_via_cable(hca->engine, &hca->node.mgmt[0].cable);
	if (!opts->no_thread && sib_progress_start(hca)) {
		sib_hca_free(hca);
		errno = EAGAIN;
		return NULL;
	}
	hca->stats.fd = -1;
	if (!opts->no_thread)
		sib_stats_channel_start(hca);
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		if (!hca->node.mgmt[i].link || hca->node.mgmt[i].sm_none)
			continue;
		sib_port_up_start(&hca->node, i + 1);
		if (!opts->no_bringup_wait)
			sib_port_bringup(&hca->node, i + 1, !opts->no_spawn);
	}
	sib_dbg("HCA created: node GUID 0x%016llx", (unsigned long long)hca->node.node_guid);
	return hca;
}

void sib_hca_free(struct sib_hca *hca)
{
	if (!hca)
		return;
	if (hca->listeners)
		sib_warn("HCA destroyed with port-event listeners still attached");
	sib_stats_channel_stop(hca);
	sib_progress_stop(hca);
	sib_cm_free(&hca->node);
	sib_hca_engine_fini(hca);
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		sib_port_up_stop(&hca->node, i + 1);
		if (hca->node.mgmt[i].link && hca->node.mgmt[i].fabric) /* the cable unplugged */
			sib_cable_say(hca->node.mgmt[i].link, &hca->node.mgmt[i].cable,
				      SIB_CABLE_DETACH);
		if (hca->node.mgmt[i].link)
			sib_link_close(hca->node.mgmt[i].link);
		hca->node.mgmt[i].link = NULL;
	}
	sib_node_fini(&hca->node);
	sib_progress_fini(hca);
	sib_numtab_destroy(hca->qpns);
	sib_numtab_destroy(hca->srqns);
	memreg_table_destroy(hca->memreg);
	free(hca);
}

struct sib_hca *sib_hca_get(void)
{
	struct sib_hca *hca;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&hca_global_lock);
	if (!hca_current)
		hca_current = sib_hca_new(NULL);
	hca = hca_current;
	if (hca)
		hca->refcnt++;
	else if (!errno)
		errno = ENOMEM;
	pthread_mutex_unlock(&hca_global_lock);
	return hca;
}

/* A process that exits without closing its device still sends what a
 * polling thread left queued (the transmit rule), as a real HCA would
 * have sent it already. */
__attribute__((destructor)) static void hca_flush_at_exit(void)
{
	pthread_mutex_lock(&hca_global_lock);
	if (hca_current)
		sib_progress_flush_wait(hca_current);
	pthread_mutex_unlock(&hca_global_lock);
}

void sib_hca_put(struct sib_hca *hca)
{
	bool last;

	if (!hca)
		return;
	pthread_mutex_lock(&hca_global_lock);
	last = --hca->refcnt == 0;
	if (last && hca_current == hca)
		hca_current = NULL;
	pthread_mutex_unlock(&hca_global_lock);
	if (last)
		sib_hca_free(hca);
}

struct sib_port *sib_hca_port(struct sib_hca *hca, unsigned port_num)
{
	return hca ? sib_node_port(&hca->node, port_num) : NULL;
}

void sib_hca_listen(struct sib_hca *hca, struct sib_hca_listener *l, struct sib_event_sink *sink)
{
	pthread_mutex_lock(&hca->node.lock);
	l->sink = sink;
	l->next = hca->listeners;
	hca->listeners = l;
	pthread_mutex_unlock(&hca->node.lock);
}

void sib_hca_unlisten(struct sib_hca *hca, struct sib_hca_listener *l)
{
	pthread_mutex_lock(&hca->node.lock);
	for (struct sib_hca_listener **pp = &hca->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	l->next = NULL;
	pthread_mutex_unlock(&hca->node.lock);
}

uint32_t sib_hca_alloc_pdn(struct sib_hca *hca)
{
	uint32_t pdn;

	pthread_mutex_lock(&hca->node.lock);
	pdn = hca->next_pdn++;
	if (hca->next_pdn == 0)
		hca->next_pdn = 1;
	pthread_mutex_unlock(&hca->node.lock);
	return pdn;
}

int sib_hca_port_stats(struct sib_hca *hca, unsigned port_num, struct sib_port_stats *out)
{
	struct sib_link *link;

	memset(out, 0, sizeof(*out));
	if (!sib_hca_port(hca, port_num) || !(link = hca->node.mgmt[port_num - 1].link))
		return -1;
	sib_link_counters_get(link, &out->link);
	out->rx_data_unclaimed = __atomic_load_n(&hca->progress.rx_data_unclaimed, __ATOMIC_RELAXED);
	out->rx_mad_malformed = __atomic_load_n(&hca->progress.rx_mad_malformed, __ATOMIC_RELAXED);
	out->rx_gsi_unclaimed = __atomic_load_n(&hca->progress.rx_gsi_unclaimed, __ATOMIC_RELAXED);
	out->rx_smp_unclaimed = __atomic_load_n(&hca->progress.rx_smp_unclaimed, __ATOMIC_RELAXED);
	out->watches = __atomic_load_n(&hca->progress.watches, __ATOMIC_RELAXED);
	out->wakes_thread = __atomic_load_n(&hca->progress.wakes_thread, __ATOMIC_RELAXED);
	out->wakes_waiter = __atomic_load_n(&hca->progress.wakes_waiter, __ATOMIC_RELAXED);
	out->wakes_event = __atomic_load_n(&hca->progress.wakes_event, __ATOMIC_RELAXED);
	out->rx_requests = __atomic_load_n(&hca->progress.rx_requests, __ATOMIC_RELAXED);
	if (hca->node.cm) {
		sib_cm_lock(hca->node.cm);
		out->cm = hca->node.cm->counters;
		sib_cm_unlock(hca->node.cm);
	}
	pthread_mutex_lock(&hca->node.sa.lock);
	out->sa_sent = __atomic_load_n(&hca->node.sa.sent, __ATOMIC_RELAXED);
	out->sa_hits = hca->node.sa.hits;
	out->sa_timeouts = hca->node.sa.timeouts;
	out->sa_foreign = __atomic_load_n(&hca->node.sa.foreign, __ATOMIC_RELAXED);
	out->sa_async_full = __atomic_load_n(&hca->node.sa.async_full, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&hca->node.sa.lock);
	pthread_mutex_lock(&hca->node.lock);
	out->smp_refused = hca->node.mgmt[port_num - 1].smp_refused;
	out->M_KeyViolations = hca->node.mgmt[port_num - 1].M_KeyViolations;
	pthread_mutex_unlock(&hca->node.lock);
	if (port_num == 1 && hca->engine)
		sib_engine_counters_get(hca->engine, &out->engine);
	return 0;
}

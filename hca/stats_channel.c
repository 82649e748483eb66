/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/counters_socket.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/rundir.h"
#include "hca/hca.h"
#include "transport/mcast.h"
#include "hca/stats_channel.h"

int sib_stats_socket_path(int pid, char *buf, size_t len)
{
	char dir[SIB_RUN_DIR_MAX];
	int rc = sib_run_dir(dir, sizeof(dir));

	if (rc)
		return rc;
	if ((size_t)snprintf(buf, len, "%s/pid-%d.sock", dir, pid) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static const char *state_name(enum sib_port_state s)
{
	switch (s) {
	case SIB_PORT_DOWN:
		return "DOWN";
	case SIB_PORT_INIT:
		return "INIT";
	case SIB_PORT_ARMED:
		return "ARMED";
	case SIB_PORT_ACTIVE:
		return "ACTIVE";
	}
	return "NOP";
}

#define ENGINE_COUNTERS(X)                                                                         \
	X(rx_no_qp) X(rx_bad_transport) X(rx_bad_state) X(P_KeyViolations) X(Q_KeyViolations)    \
	X(rx_bad_source) X(rx_wrong_endpoint) X(rx_unknown_source) X(rx_waited) X(rx_queued)      \
	X(rx_queue_full) X(rx_ud_no_wqe)                                                           \
	X(rx_bad_mcast) X(tx_mcast) X(rx_mcast) X(rx_uc_dropped) X(tx_ud_no_path) X(rx_duplicates) X(tx_seq_naks) X(tx_rnr_naks) X(retransmits) X(timeouts)

size_t sib_hca_stats_text(struct sib_hca *hca, char *buf, size_t len)
{
	struct sib_text t = { buf, len, 0 };
	char e[SIB_ENDPOINT_STRLEN], g[20];

	if (!len)
		return 0;
	buf[0] = 0;
	sib_guid_format(hca->node.node_guid, g);
	sib_text_put(&t, "pid %d\nnode_guid %s\n", (int)getpid(), g);
	for (unsigned p = 1; p <= SIB_NUM_PORTS; p++) {
		struct sib_port_mgmt *pm = &hca->node.mgmt[p - 1];
		struct sib_port *port = &hca->node.ports[p - 1];
		struct sib_port_stats st;
		bool heard;

		pthread_mutex_lock(&hca->node.lock);
		sib_text_put(&t, "port%u.state %s\nport%u.lid %u\nport%u.sm_lid %u\n", p, state_name(port->state),
		    p, port->LID, p, port->SMLID);
		heard = pm->sm_heard;
		if (heard)
			sib_endpoint_str(&pm->sm_ep, e);
		sib_text_put(&t, "port%u.m_key_protect_bits %u\n", p, pm->M_KeyProtectBits);
		sib_text_put(&t, "port%u.port_guid 0x%016llx\n", p, (unsigned long long)port->port_guid);
		/* The P_Key table as the SM set it: index:value, non-empty only. */
		sib_text_put(&t, "port%u.pkeys", p);
		for (unsigned i = 0; i < SIB_MAX_PKEYS; i++)
			if (port->P_Key[i])
				sib_text_put(&t, " %u:0x%04x", i, port->P_Key[i]);
		sib_text_put(&t, "\n");
		pthread_mutex_unlock(&hca->node.lock);
		sib_text_put(&t, "port%u.sm %s\n", p, heard ? e : "none");
		if (p == 1 && hca->engine) {
			/* The multicast groups this port's QPs are attached to. */
			struct sib_mcast_group_info gi[32];
			unsigned n = sib_engine_mcast_groups(hca->engine, gi, 32);

			sib_text_put(&t, "port%u.mcast_groups %u\n", p, n);
			for (unsigned i = 0; i < n && i < 32; i++) {
				const uint8_t *m = gi[i].MGID;

				sib_text_put(&t, "port%u.mcast ", p);
				for (int k = 0; k < 16; k += 2)
					sib_text_put(&t, "%s%02x%02x", k ? ":" : "", m[k], m[k + 1]);
				sib_text_put(&t, " 0x%04x %u %u\n", gi[i].MLID, gi[i].nqp, gi[i].ports);
			}
		}
		if (pm->link)
			sib_text_put(&t, "port%u.endpoint %s\n", p, sib_endpoint_str(&pm->link->local, e));
		if (sib_hca_port_stats(hca, p, &st))
			continue;
		sib_text_put(&t, "port%u.tx_packets %llu\nport%u.tx_bytes %llu\n", p,
		    (unsigned long long)st.link.tx_packets, p, (unsigned long long)st.link.tx_bytes);
		sib_text_put(&t, "port%u.rx_packets %llu\nport%u.rx_bytes %llu\n", p,
		    (unsigned long long)st.link.rx_packets, p, (unsigned long long)st.link.rx_bytes);
		for (int i = 0; i < SIB_LINK_DROP_COUNT; i++)
			sib_text_put(&t, "port%u.drop.%s %llu\n", p, sib_link_drop_name(i),
			    (unsigned long long)st.link.drop[i]);
		for (int i = 1; i < IB_PKT_ERR_COUNT; i++)
			sib_text_put(&t, "port%u.drop.%s %llu\n", p, ib_pkt_err_name(i),
			    (unsigned long long)st.link.pkt_err[i]);
		for (int i = 0; i < SIB_FAULT_COUNT; i++)
			sib_text_put(&t, "port%u.fault.%s %llu\n", p, sib_fault_name(i),
			    (unsigned long long)st.link.fault[i]);
#define ENGINE_LINE(name) sib_text_put(&t, "port%u." #name " %llu\n", p, (unsigned long long)st.engine.name);
		ENGINE_COUNTERS(ENGINE_LINE)
#undef ENGINE_LINE
		sib_text_put(&t, "port%u.rx_data_unclaimed %llu\nport%u.rx_mad_malformed %llu\n", p,
		    (unsigned long long)st.rx_data_unclaimed, p,
		    (unsigned long long)st.rx_mad_malformed);
		sib_text_put(&t, "port%u.rx_gsi_unclaimed %llu\nport%u.rx_smp_unclaimed %llu\n", p,
		    (unsigned long long)st.rx_gsi_unclaimed, p,
		    (unsigned long long)st.rx_smp_unclaimed);
		sib_text_put(&t, "port%u.smp_refused %llu\nport%u.M_KeyViolations %llu\n", p,
		    (unsigned long long)st.smp_refused, p, (unsigned long long)st.M_KeyViolations);
		sib_text_put(&t, "port%u.sa_sent %llu\nport%u.sa_hits %llu\nport%u.sa_timeouts %llu\n", p,
		    (unsigned long long)st.sa_sent, p, (unsigned long long)st.sa_hits, p,
		    (unsigned long long)st.sa_timeouts);
		sib_text_put(&t, "port%u.sa_foreign %llu\n", p, (unsigned long long)st.sa_foreign);
		sib_text_put(&t, "port%u.sa_async_full %llu\n", p,
			     (unsigned long long)st.sa_async_full);
		sib_text_put(&t, "port%u.watches %llu\n", p, (unsigned long long)st.watches);
		sib_text_put(&t, "port%u.wakes_thread %llu\nport%u.wakes_waiter %llu\n", p,
		    (unsigned long long)st.wakes_thread, p, (unsigned long long)st.wakes_waiter);
		sib_text_put(&t, "port%u.wakes_event %llu\nport%u.rx_requests %llu\n", p,
		    (unsigned long long)st.wakes_event, p, (unsigned long long)st.rx_requests);
#define CM_LINE(name) sib_text_put(&t, "port%u.cm_" #name " %llu\n", p, (unsigned long long)st.cm.name);
		CM_LINE(rx) CM_LINE(tx) CM_LINE(retransmits) CM_LINE(timeouts)
		CM_LINE(duplicates) CM_LINE(stale) CM_LINE(rx_malformed) CM_LINE(rx_unmatched)
		CM_LINE(rx_wrong_source) CM_LINE(rx_unknown_source) CM_LINE(rx_held) CM_LINE(rx_pending_full)
#undef CM_LINE
	}
	return t.used;
}

static size_t hca_text(void *arg, char *buf, size_t len)
{
	return sib_hca_stats_text(arg, buf, len);
}

static void *channel_main(void *arg)
{
	static char text[16384];
	struct sib_hca *hca = arg;

	for (;;) {
		int rc = sib_counters_serve_one(hca->stats.fd, hca_text, hca, text, sizeof(text));

		if (rc && rc != -EINTR && rc != -ECONNABORTED)
			break; /* shut down (sib_stats_channel_stop) */
	}
	return NULL;
}

void sib_stats_channel_start(struct sib_hca *hca)
{
	struct sib_stats_channel *ch = &hca->stats;
	int fd;

	ch->fd = -1;
	if (sib_stats_socket_path((int)getpid(), ch->path, sizeof(ch->path))) {
		sib_dbg("no counters socket: softib's directory is not usable");
		ch->path[0] = 0;
		return;
	}
	fd = sib_counters_listen(ch->path);
	if (fd < 0) {
		sib_dbg("no counters socket at %s: %s", ch->path, strerror(-fd));
		ch->path[0] = 0;
		return;
	}
	ch->fd = fd;
	if (sib_thread_create(&ch->thread, channel_main, hca)) {
		close(fd);
		unlink(ch->path);
		ch->fd = -1;
		ch->path[0] = 0;
		return;
	}
	pthread_setname_np(ch->thread, "softib-counters");
	ch->running = true;
}

void sib_stats_channel_stop(struct sib_hca *hca)
{
	struct sib_stats_channel *ch = &hca->stats;

	if (!ch->running)
		return;
	shutdown(ch->fd, SHUT_RDWR); /* accept() returns */
	pthread_join(ch->thread, NULL);
	close(ch->fd);
	unlink(ch->path);
	ch->fd = -1;
	ch->running = false;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib info: what softib0 looks like from a process: device, GUIDs, and
 * per port state, LID, SM LID, GID[0], P_Key[0], MTU and every counter.
 * Each process is its own node (docs/architecture.md section 3): without options this
 * is this process's view (it re-executes itself under `softib run` and
 * asks through ordinary verbs); --pid and --lid read another process's
 * counters through its counters socket (hca/stats_channel.h), which only
 * the same user can open.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "base/counters_socket.h"
#include "base/rundir.h"
#include "fabric/sm_admit.h"
#include "hca/hca.h"
#include "hca/stats_channel.h"
#include "mgmt/mad_packet.h"
#include "tools/run.h"
#include "tools/softib.h"
#include "wire/smp.h"

#define REEXEC_MARK "SOFTIB_INFO_PRELOADED"

static int provider_is_loaded(void)
{
	void *fn = dlvsym(RTLD_DEFAULT, "ibv_get_device_list", "IBVERBS_1.1");
	Dl_info di;

	return fn && dladdr(fn, &di) && di.dli_fname && strstr(di.dli_fname, "libsoftib");
}

static void print_guid(const char *label, uint64_t guid)
{
	printf("  %-15s %04x:%04x:%04x:%04x\n", label, (unsigned)(guid >> 48) & 0xffff,
	       (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
	       (unsigned)guid & 0xffff);
}

static const char *state_name(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_DOWN:
		return "DOWN";
	case IBV_PORT_INIT:
		return "INIT";
	case IBV_PORT_ARMED:
		return "ARMED";
	case IBV_PORT_ACTIVE:
		return "ACTIVE";
	default:
		return "NOP";
	}
}

/* ---------------------------------------------------------------- counters text */

/* The value of "name value" in the counters text (hca/stats_channel.h);
 * 0 when absent. */
static unsigned long long kv_num(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 0);
	return 0;
}

/* The same, as a string into out. */
static const char *kv_str(const char *text, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	out[0] = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, name, n) && l[n] == ' ') {
			const char *v = l + n + 1, *end = strchr(v, '\n');
			size_t vl = end ? (size_t)(end - v) : strlen(v);

			snprintf(out, len, "%.*s", (int)(vl < len ? vl : len - 1), v);
			break;
		}
	}
	return out;
}

/* The P_Key table ("port1.pkeys 0:0xffff 1:0x8011") and the multicast
 * groups ("port1.mcast MGID MLID QPs ports"), one line each. */
static void print_tables(const char *text, const char *pre)
{
	char key[64], v[256];

	snprintf(key, sizeof(key), "%spkeys", pre);
	kv_str(text, key, v, sizeof(v));
	printf("  %-15s %s\n", "P_Key table", *v ? v : "(empty)");
	snprintf(key, sizeof(key), "%smcast_groups", pre);
	printf("  %-15s %llu\n", "mcast groups", kv_num(text, key));
	snprintf(key, sizeof(key), "%smcast ", pre);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char mgid[48];
		unsigned mlid, nqp, ports;

		if (strncmp(l, key, strlen(key)) ||
		    sscanf(l + strlen(key), "%47s %x %u %u", mgid, &mlid, &nqp, &ports) != 4)
			continue;
		printf("  %-15s %s MLID 0x%04x, %u QPs attached, %u member ports\n", "  group",
		       mgid, mlid, nqp, ports);
	}
}

/* Counters that are drops, and the name `dropped` shows them by. */
static const struct {
	const char *key, *label;
} drop_counters[] = {
	{ "rx_no_qp", "no_qp" },
	{ "rx_bad_transport", "bad_transport" },
	{ "rx_bad_state", "bad_state" },
	{ "P_KeyViolations", "P_Key" },
	{ "Q_KeyViolations", "Q_Key" },
	{ "rx_bad_source", "bad_source" },
	{ "rx_wrong_endpoint", "wrong_endpoint" },
	{ "rx_unknown_source", "unknown_source" },
	{ "rx_queue_full", "queue_full" },
	{ "rx_ud_no_wqe", "ud_no_wqe" },
	{ "rx_bad_mcast", "bad_mcast" },
	{ "rx_uc_dropped", "uc_dropped" },
	{ "tx_ud_no_path", "ud_no_path" },
	{ "rx_data_unclaimed", "no_receiver" },
	{ "rx_mad_malformed", "bad_mad" },
	{ "rx_gsi_unclaimed", "gsi_unclaimed" },
	{ "rx_smp_unclaimed", "smp_unclaimed" },
	{ "smp_refused", "smp_refused" },
	{ "sa_foreign", "sa_foreign" },
};

/* The counters of port p from the text: traffic, every drop by reason,
 * faults injected, the transport's events, the SA client, the M_Key. */
static void print_counters(const char *text, unsigned p)
{
	char key[96], pre[16];
	bool any = false;

	snprintf(pre, sizeof(pre), "port%u.", p);
#define K(name) (snprintf(key, sizeof(key), "%s%s", pre, (name)), kv_num(text, key))
	printf("  %-15s %llu packets, %llu bytes\n", "sent", K("tx_packets"), K("tx_bytes"));
	printf("  %-15s %llu packets, %llu bytes\n", "received", K("rx_packets"), K("rx_bytes"));
	printf("  %-15s", "dropped");
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long v;
		char name[64];

		if (strncmp(l, pre, strlen(pre)) || strncmp(l + strlen(pre), "drop.", 5) ||
		    sscanf(l + strlen(pre) + 5, "%63s %llu", name, &v) != 2 || !v)
			continue;
		printf(" %s=%llu", name, v);
		any = true;
	}
	for (size_t i = 0; i < sizeof(drop_counters) / sizeof(drop_counters[0]); i++) {
		unsigned long long v = K(drop_counters[i].key);

		if (v) {
			printf(" %s=%llu", drop_counters[i].label, v);
			any = true;
		}
	}
	printf("%s\n", any ? "" : " none");
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long v;
		char name[64];

		if (!strncmp(l, pre, strlen(pre)) && !strncmp(l + strlen(pre), "fault.", 6) &&
		    sscanf(l + strlen(pre) + 6, "%63s %llu", name, &v) == 2 && v)
			printf("  %-15s %s=%llu\n", "injected", name, v);
	}
	if (K("retransmits") || K("timeouts") || K("tx_seq_naks") || K("tx_rnr_naks") ||
	    K("rx_duplicates"))
		printf("  %-15s %llu retransmits, %llu ACK timeouts, %llu sequence NAKs, %llu RNR "
		       "NAKs, %llu duplicates answered\n",
		       "transport", K("retransmits"), K("timeouts"), K("tx_seq_naks"),
		       K("tx_rnr_naks"), K("rx_duplicates"));
	{
		unsigned long long msgs = K("rx_requests"), th = K("wakes_thread"),
				   wa = K("wakes_waiter"), ev = K("wakes_event");

		printf("  %-15s %llu messages in, %llu thread wake-ups (progress thread %llu, "
		       "application waiting for events %llu, events handed to it %llu)\n",
		       "wake-ups", msgs, th + wa + ev, th, wa, ev);
	}
	if (K("rx_queued") || K("rx_waited") || K("watches"))
		printf("  %-15s %llu datagrams waited for their QP, %llu for the SA to place their "
		       "source; the progress thread watched a polling application's links %llu "
		       "times\n",
		       "receive", K("rx_queued"), K("rx_waited"), K("watches"));
	printf("  %-15s %llu queries, %llu cache hits, %llu timeouts, %llu foreign answers, "
	       "%llu lookups not asked (%u were out)\n",
	       "SA client", K("sa_sent"), K("sa_hits"), K("sa_timeouts"), K("sa_foreign"),
	       K("sa_async_full"), SIB_SA_ASYNC_MAX);
	printf("  %-15s %llu MADs in, %llu out, %llu retransmitted, %llu timed out, "
	       "%llu duplicates, %llu stale, dropped %llu malformed and %llu unmatched\n",
	       "CM", K("cm_rx"), K("cm_tx"), K("cm_retransmits"), K("cm_timeouts"),
	       K("cm_duplicates"), K("cm_stale"), K("cm_rx_malformed"), K("cm_rx_unmatched"));
	printf("  %-15s %llu requests waited for the SA to place their source; dropped %llu "
	       "from the wrong endpoint and %llu from a source nobody could place; refused "
	       "%llu REQs beyond %u waiting for their consumer\n",
	       "CM sources", K("cm_rx_held"), K("cm_rx_wrong_source"), K("cm_rx_unknown_source"),
	       K("cm_rx_pending_full"), SIB_CM_PENDING_MAX);
	printf("  %-15s protection level %llu, %llu violations\n", "M_Key",
	       K("m_key_protect_bits"), K("M_KeyViolations"));
	print_tables(text, pre);
#undef K
}

typedef size_t (*stats_text_fn)(struct ibv_context *, char *, size_t);

/* This process's counters, through libsoftib.so's softib_stats_text (the
 * HCA lives in the library, not in this program's own copy of the core). */
static void print_stats(struct ibv_context *ctx, uint8_t port_num)
{
	stats_text_fn fn = (stats_text_fn)dlvsym(RTLD_DEFAULT, "softib_stats_text",
						 "SOFTIB_PRIVATE_1");
	static char text[16384];

	if (!fn || !fn(ctx, text, sizeof(text)))
		return;
	print_counters(text, port_num);
}

static int print_port(struct ibv_context *ctx, uint8_t port_num)
{
	struct ibv_port_attr pa;
	union ibv_gid gid;
	__be16 pkey;
	uint64_t port_guid = 0;

	if (ibv_query_port(ctx, port_num, &pa)) {
		fprintf(stderr, "softib info: query_port %u failed\n", port_num);
		return -1;
	}
	printf("port %u\n", port_num);
	printf("  %-15s %s\n", "state", state_name(pa.state));
	printf("  %-15s %u (0x%04x)\n", "LID", pa.lid, pa.lid);
	printf("  %-15s %u (0x%04x)\n", "SM LID", pa.sm_lid, pa.sm_lid);
	printf("  %-15s %u\n", "LMC", pa.lmc);
	if (!ibv_query_gid(ctx, port_num, 0, &gid)) {
		for (int i = 8; i < 16; i++)
			port_guid = port_guid << 8 | gid.raw[i];
		print_guid("port GUID", port_guid);
		printf("  %-15s", "GID[0]");
		for (int i = 0; i < 16; i += 2)
			printf("%s%02x%02x", i ? ":" : " ", gid.raw[i], gid.raw[i + 1]);
		printf("\n");
	}
	if (!ibv_query_pkey(ctx, port_num, 0, &pkey))
		printf("  %-15s 0x%04x\n", "P_Key[0]", be16toh(pkey));
	printf("  %-15s %d\n", "active MTU", 128 << pa.active_mtu);
	printf("  %-15s %d\n", "max MTU", 128 << pa.max_mtu);
	print_stats(ctx, port_num);
	return 0;
}

static int show(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device_attr attr;
	struct ibv_context *ctx = NULL;
	int rc = 1;

	if (!list) {
		perror("softib info: ibv_get_device_list");
		return 1;
	}
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "softib info: softib0 is not listed or cannot be opened\n");
		goto out;
	}
	if (ibv_query_device(ctx, &attr)) {
		fprintf(stderr, "softib info: query_device failed\n");
		goto out;
	}
	printf("device softib0 (process %d's view: every process is its own node)\n", (int)getpid());
	print_guid("node GUID", be64toh(attr.node_guid));
	print_guid("sys image GUID", be64toh(attr.sys_image_guid));
	printf("  %-15s %s\n", "firmware", attr.fw_ver);
	printf("  %-15s %u\n", "ports", attr.phys_port_cnt);
	rc = 0;
	for (uint8_t p = 1; p <= attr.phys_port_cnt; p++)
		if (print_port(ctx, p))
			rc = 1;
out:
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc;
}

/* ---------------------------------------------------------------- another process */

/* The counters text of process pid, through its socket; 0, or -1 after
 * saying why. */
static int read_remote(int pid, char *text, size_t len, bool quiet)
{
	char path[SIB_RUN_DIR_MAX + 32];
	long used;

	if (sib_stats_socket_path(pid, path, sizeof(path)))
		return -1;
	used = sib_counters_read(path, text, len);
	if (used < 0) {
		if (!quiet)
			fprintf(stderr,
				"softib info: process %d has no softib counters socket (%s: %s); is "
				"it a softib process of this user, with softib0 open?\n",
				pid, path, strerror((int)-used));
		/* A socket whose process died leaves nothing to read. */
		if (used == -ECONNREFUSED && kill(pid, 0) && errno == ESRCH)
			unlink(path);
		return -1;
	}
	if (!used && !quiet)
		fprintf(stderr, "softib info: process %d sent no counters (another user's?)\n", pid);
	return used ? 0 : -1;
}

static void print_remote(const char *text)
{
	char v[80], w[80];

	printf("process %llu (its own node, read through its counters socket)\n",
	       kv_num(text, "pid"));
	printf("  %-15s %s\n", "node GUID", kv_str(text, "node_guid", v, sizeof(v)));
	for (unsigned p = 1; p <= SIB_NUM_PORTS; p++) {
		char key[32];
		unsigned long long lid, sm_lid;

		snprintf(key, sizeof(key), "port%u.lid", p);
		lid = kv_num(text, key);
		snprintf(key, sizeof(key), "port%u.sm_lid", p);
		sm_lid = kv_num(text, key);
		printf("port %u\n", p);
		snprintf(key, sizeof(key), "port%u.state", p);
		printf("  %-15s %s\n", "state", kv_str(text, key, v, sizeof(v)));
		printf("  %-15s %llu (0x%04llx)\n", "LID", lid, lid);
		printf("  %-15s %llu (0x%04llx)\n", "SM LID", sm_lid, sm_lid);
		snprintf(key, sizeof(key), "port%u.port_guid", p);
		print_guid("port GUID", kv_num(text, key));
		snprintf(key, sizeof(key), "port%u.endpoint", p);
		printf("  %-15s %s\n", "endpoint", kv_str(text, key, v, sizeof(v)));
		snprintf(key, sizeof(key), "port%u.sm", p);
		printf("  %-15s %s\n", "subnet manager", kv_str(text, key, w, sizeof(w)));
		print_counters(text, p);
	}
}

/* Every softib process of this user whose port has LID lid. */
static int show_lid(unsigned long lid)
{
	static char text[16384];
	char dir[SIB_RUN_DIR_MAX];
	struct dirent *de;
	int found = 0;
	DIR *d;

	if (sib_run_dir(dir, sizeof(dir)) || !(d = opendir(dir))) {
		fprintf(stderr, "softib info: cannot read softib's directory\n");
		return SIB_EXIT_FAIL;
	}
	while ((de = readdir(d))) {
		int pid;
		char tail[8];

		if (sscanf(de->d_name, "pid-%d.%7s", &pid, tail) != 2 || strcmp(tail, "sock") ||
		    read_remote(pid, text, sizeof(text), true))
			continue;
		for (unsigned p = 1; p <= SIB_NUM_PORTS; p++) {
			char key[32];

			snprintf(key, sizeof(key), "port%u.lid", p);
			if (kv_num(text, key) == lid) {
				if (found++)
					printf("\n");
				print_remote(text);
			}
		}
	}
	closedir(d);
	if (!found) {
		fprintf(stderr, "softib info: no softib process of this user has LID %lu\n", lid);
		return SIB_EXIT_FAIL;
	}
	return SIB_EXIT_OK;
}

/* ---------------------------------------------------------------- the SM */

/* softib-sm's counters (fabric/sm_stats.h), through its socket: the SM at
 * addr, else the first of SOFTIB_SM, else the default. */
static int show_sm(const char *addr)
{
	static char text[4096];
	char ep_str[SIB_ENDPOINT_STRLEN], path[SIB_RUN_DIR_MAX + 64], first[256];
	const char *env = getenv("SOFTIB_SM");
	struct sib_endpoint ep;
	long n;

	if (!addr) {
		addr = env && *env && strcmp(env, "none") ? env : SIB_SM_DEFAULT;
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(addr, ","), addr);
		addr = first;
	}
	if (sib_endpoint_parse(addr, SIB_SM_PORT_DEFAULT, &ep)) {
		fprintf(stderr, "softib info: --sm %s: not ADDR:PORT\n", addr);
		return SIB_EXIT_USAGE;
	}
	sib_endpoint_str(&ep, ep_str);
	if (sib_run_sm_file(ep_str, "sock", path, sizeof(path)))
		return SIB_EXIT_FAIL;
	n = sib_counters_read(path, text, sizeof(text));
	if (n <= 0) {
		fprintf(stderr,
			"softib info: no counters from softib-sm at %s (%s: %s); does an SM of "
			"this user listen there?\n",
			ep_str, path, n < 0 ? strerror((int)-n) : "nothing sent");
		return SIB_EXIT_FAIL;
	}
#define K(name) kv_num(text, "sm." name)
	printf("softib-sm at %s (read through its counters socket), LID %llu, %s\n", ep_str,
	       K("lid"), K("state") == IB_SM_STATE_MASTER ? "MASTER" : "not master");
	printf("  %-15s %llu known, %llu active; %llu joined, %llu left\n", "ports",
	       K("ports_known"), K("ports_active"), K("joins"), K("leaves"));
	printf("  %-15s %llu requests; dropped %llu not from where their SLID lives\n", "SA",
	       K("sa_queries"), K("sa_wrong_source"));
	printf("  %-15s %llu MADs dropped from endpoints over %u a second; %llu sources "
	       "forgotten in debt\n",
	       "flood", K("rx_over_rate"), SIB_SM_SOURCE_RATE, K("sources_evicted"));
	printf("  %-15s %llu held (%llu Sets, %llu Deletes); %llu claims of another host's "
	       "address refused; %llu Sets refused at the limits\n",
	       "ServiceRecords", K("services"), K("service_sets"), K("service_deletes"),
	       K("address_claims_refused"), K("services_refused"));
	printf("  %-15s %llu answers on their way (%llu bytes); %llu refused at the limits\n",
	       "GetTable", K("transfers"), K("transfer_bytes"), K("transfers_refused"));
	printf("  %-15s %llu groups, %llu joins; %llu requests refused, %llu of them for "
	       "no room\n",
	       "multicast", K("mcast_groups"), K("mcast_joins"), K("mcast_refused"),
	       K("mcast_no_room"));
	printf("  %-15s %llu MADs dropped, %llu responses to nothing asked, %llu GUID claims "
	       "refused, %llu bad M_Key and %llu bad P_Key traps\n",
	       "refused", K("dropped"), K("resp_misrouted"), K("claims_refused"),
	       K("bad_m_key_traps"), K("bad_p_key_traps"));
#undef K
	return SIB_EXIT_OK;
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: softib info [--pid PID | --lid LID | --sm [ADDR:PORT] | --switch [ADDR:PORT]]\n"
		   "Shows softib0 as this process sees it: GUIDs, and per port state, LID, SM "
		   "LID, GID[0],\nP_Key[0], MTU, and the port's counters.  --pid and --lid show "
		   "another softib\nprocess of this user instead, by its process id or its port's "
		   "LID; --sm the counters\nof this user's softib-sm at ADDR:PORT (default: the "
		   "first of SOFTIB_SM); --switch\nthe switches of this user's softib-switch at "
		   "ADDR:PORT (default SOFTIB_FABRIC).\n");
	return rc;
}

int softib_cmd_info(int argc, char **argv)
{
	static char text[16384];
	unsigned long v;
	char *end;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout, 0);
	if (argc == 3 && (!strcmp(argv[1], "--pid") || !strcmp(argv[1], "--lid"))) {
		errno = 0;
		v = strtoul(argv[2], &end, 0);
		if (errno || *end || !*argv[2] || argv[2][0] == '-' ||
		    v > (argv[1][2] == 'p' ? 0x7fffffffUL : 0xbfffUL) || !v) {
			fprintf(stderr, "softib info: %s %s: not a %s\n", argv[1], argv[2],
				argv[1][2] == 'p' ? "process id" : "unicast LID (1..0xbfff)");
			return SIB_EXIT_USAGE;
		}
		if (argv[1][2] == 'l')
			return show_lid(v);
		if (read_remote((int)v, text, sizeof(text), false))
			return SIB_EXIT_FAIL;
		print_remote(text);
		return SIB_EXIT_OK;
	}
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "--sm"))
		return show_sm(argc == 3 ? argv[2] : NULL);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "--switch"))
		return softib_fabric_ask(argc == 3 ? argv[2] : NULL, "show");
	if (argc > 1)
		return usage(stderr, SIB_EXIT_USAGE);
	if (!provider_is_loaded()) {
		char *args[] = { "/proc/self/exe", "info", NULL };

		if (getenv(REEXEC_MARK)) {
			fprintf(stderr, "softib info: libsoftib.so did not load under LD_PRELOAD\n");
			return 1;
		}
		setenv(REEXEC_MARK, "1", 1);
		return softib_exec_with_provider(args);
	}
	unsetenv(REEXEC_MARK);
	return show();
}

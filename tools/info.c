/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib info: what softib0 looks like from a process: device, GUIDs, and
 * per port state, LID, SM LID, GID[0], P_Key[0], MTU.  Each process is its
 * own node (DESIGN.md section 3), so this is this process's view; it
 * re-executes itself under `softib run` and asks through ordinary verbs.
 */
#include <dlfcn.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "hca/hca.h"
#include "tools/run.h"
#include "tools/softib.h"

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

typedef int (*port_stats_fn)(struct ibv_context *, uint8_t, struct sib_port_stats *);

/* The link's counters, through libsoftib.so's softib_query_port_stats (the
 * HCA lives in the library, not in this program's own copy of the core). */
static void print_stats(struct ibv_context *ctx, uint8_t port_num)
{
	port_stats_fn fn = (port_stats_fn)dlvsym(RTLD_DEFAULT, "softib_query_port_stats",
						 "SOFTIB_PRIVATE_1");
	struct sib_port_stats st;
	bool any = false;

	if (!fn || fn(ctx, port_num, &st))
		return;
	printf("  %-15s %llu packets, %llu bytes\n", "sent", (unsigned long long)st.link.tx_packets,
	       (unsigned long long)st.link.tx_bytes);
	printf("  %-15s %llu packets, %llu bytes\n", "received",
	       (unsigned long long)st.link.rx_packets, (unsigned long long)st.link.rx_bytes);
	printf("  %-15s", "dropped");
	for (int i = 0; i < SIB_LINK_DROP_COUNT; i++)
		if (st.link.drop[i]) {
			printf(" %s=%llu", sib_link_drop_name(i), (unsigned long long)st.link.drop[i]);
			any = true;
		}
	for (int i = 1; i < IB_PKT_ERR_COUNT; i++)
		if (st.link.pkt_err[i]) {
			printf(" %s=%llu", ib_pkt_err_name(i), (unsigned long long)st.link.pkt_err[i]);
			any = true;
		}
	if (st.rx_mad_malformed) {
		printf(" bad_mad=%llu", (unsigned long long)st.rx_mad_malformed);
		any = true;
	}
	if (st.rx_data_unclaimed) {
		printf(" no_receiver=%llu", (unsigned long long)st.rx_data_unclaimed);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
	for (int i = 0; i < SIB_FAULT_COUNT; i++)
		if (st.link.fault[i])
			printf("  %-15s %s=%llu\n", "injected", sib_fault_name(i),
			       (unsigned long long)st.link.fault[i]);
	printf("  %-15s %llu queries, %llu cache hits, %llu timeouts\n", "SA client",
	       (unsigned long long)st.sa_sent, (unsigned long long)st.sa_hits,
	       (unsigned long long)st.sa_timeouts);
	printf("  %-15s %llu MADs in, %llu out, %llu retransmitted, %llu timed out, "
	       "%llu duplicates, %llu stale, dropped %llu malformed and %llu unmatched\n",
	       "CM", (unsigned long long)st.cm.rx, (unsigned long long)st.cm.tx,
	       (unsigned long long)st.cm.retransmits, (unsigned long long)st.cm.timeouts,
	       (unsigned long long)st.cm.duplicates, (unsigned long long)st.cm.stale,
	       (unsigned long long)st.cm.rx_malformed, (unsigned long long)st.cm.rx_unmatched);
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

int softib_cmd_info(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: softib info\nShows softib0 as this process sees it: GUIDs, and per "
		       "port state, LID, SM LID, GID[0], P_Key[0], MTU, and the port's packet counters.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: softib info\n");
		return SIB_EXIT_USAGE;
	}
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

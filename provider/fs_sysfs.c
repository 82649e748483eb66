/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What softib0's sysfs files say (provider/fs_view.h), in the formats of
 * the kernel's drivers/infiniband/core/sysfs.c, which ibstat (libibumad's
 * sysfs.c: strtoul with base 0, GUIDs as four hex groups), ibstatus (cat),
 * UCX (local_cpus as comma-separated 32-bit hex words, numa_node) and
 * pyverbs (device/net/<ifname>) parse.  Values are read at open, from the
 * same state query_device and query_port report: a LID the SM assigns
 * later shows up on the next open.
 *
 * Also the uverbs node /dev/infiniband/<dev_name>: a character device that
 * stat and access find (UCX's uct_ib_device_is_accessible checks exactly
 * that), but that opens to ENXIO -- softib0 has no kernel uverbs interface
 * behind it; programs reach it through libibverbs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/fs_view.h"
#include "provider/umad.h"
#include "provider/softib.h"
#include "transport/caps.h"
#include "base/log.h"

/* ---------------------------------------------------------------- names */

enum node_attr { NA_NODE_TYPE, NA_NODE_GUID, NA_SYS_IMAGE_GUID, NA_NODE_DESC, NA_FW_VER,
		 NA_HCA_TYPE, NA_HW_REV, NA_BOARD_ID, NA_COUNT };
const char *const sib_fs_node_attrs[] = {
	[NA_NODE_TYPE] = "node_type", [NA_NODE_GUID] = "node_guid",
	[NA_SYS_IMAGE_GUID] = "sys_image_guid", [NA_NODE_DESC] = "node_desc",
	[NA_FW_VER] = "fw_ver", [NA_HCA_TYPE] = "hca_type",
	[NA_HW_REV] = "hw_rev", [NA_BOARD_ID] = "board_id",
};
const unsigned sib_fs_node_attr_count = NA_COUNT;

enum port_attr { PA_LID, PA_SM_LID, PA_SM_SL, PA_LMC, PA_STATE, PA_PHYS_STATE, PA_RATE,
		 PA_CAP_MASK, PA_LINK_LAYER, PA_COUNT };
const char *const sib_fs_port_attrs[] = {
	[PA_LID] = "lid", [PA_SM_LID] = "sm_lid", [PA_SM_SL] = "sm_sl",
	[PA_LMC] = "lid_mask_count", [PA_STATE] = "state", [PA_PHYS_STATE] = "phys_state",
	[PA_RATE] = "rate", [PA_CAP_MASK] = "cap_mask", [PA_LINK_LAYER] = "link_layer",
};
const unsigned sib_fs_port_attr_count = PA_COUNT;

enum device_attr { DA_NUMA_NODE, DA_LOCAL_CPUS, DA_COUNT };
const char *const sib_fs_device_attrs[] = {
	[DA_NUMA_NODE] = "numa_node", [DA_LOCAL_CPUS] = "local_cpus",
};
const unsigned sib_fs_device_attr_count = DA_COUNT;

enum umad_attr { UA_IBDEV, UA_PORT, UA_DEV, UA_COUNT };
const char *const sib_fs_umad_attrs[] = {
	[UA_IBDEV] = "ibdev", [UA_PORT] = "port", [UA_DEV] = "dev",
};
const unsigned sib_fs_umad_attr_count = UA_COUNT;

const char *sib_fs_umad_dir(unsigned i)
{
	return i ? SIB_ISSM_NAME : SIB_UMAD_NAME;
}

/* ---------------------------------------------------------------- the HCA */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sib_hca *held;   /* this process's HCA, once a port file was read */
static pid_t held_pid;	       /* a fork()ed child must make its own (hca.c) */
static struct sib_hca *test_hca;

/* A fork()ed child makes its own HCA (hca.c forgets the parent's); the
 * lock may have been held by a parent's thread that the child does not
 * have.  (No prepare handler: taking hold_lock there would order it after
 * hca.c's lock, which view_hca takes inside it.) */
static void hold_atfork_child(void)
{
	pthread_mutex_init(&hold_lock, NULL);
	held = NULL;
}

__attribute__((constructor)) static void hold_atfork(void)
{
	pthread_atfork(NULL, NULL, hold_atfork_child);
}

void sib_fs_use_hca(struct sib_hca *hca)
{
	__atomic_store_n(&test_hca, hca, __ATOMIC_RELEASE);
}

/* The HCA whose port the files describe; bring_up: create it if this
 * process has none yet (as ibv_open_device would).  NULL: none. */
static struct sib_hca *view_hca(bool bring_up)
{
	struct sib_hca *hca = __atomic_load_n(&test_hca, __ATOMIC_ACQUIRE);

	if (hca)
		return hca;
	pthread_mutex_lock(&hold_lock);
	if (held && held_pid != getpid())
		held = NULL; /* the parent's (a vfork child's parent's), left alone */
	if (!held && bring_up) {
		held = sib_hca_get(); /* kept until the process exits */
		held_pid = getpid();
		if (!held)
			sib_warn("sysfs view of %s: cannot bring the port up: %s", SIB_DEV_NAME,
				 strerror(errno));
	}
	hca = held;
	pthread_mutex_unlock(&hold_lock);
	return hca;
}

/* ---------------------------------------------------------------- formats */

static int out(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int out(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 ? -EIO : n >= (int)size ? (int)size - 1 : n;
}

/* sysfs.c show_node_guid: four big-endian 16-bit groups. */
static int out_guid(char *buf, size_t size, uint64_t guid)
{
	char g[20];

	sib_guid_format(guid, g);
	return out(buf, size, "%s\n", g);
}

/* sysfs.c state_show. */
static const char *state_name(unsigned s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					     "ACTIVE_DEFER" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

/* sysfs.c phys_state_show (IBA 14.2.5.6 PortPhysicalState). */
static const char *phys_state_name(unsigned s)
{
	static const char *const names[] = { NULL, "Sleep", "Polling", "Disabled",
					     "PortConfigurationTraining", "LinkUp",
					     "LinkErrorRecovery", "Phy Test" };

	return s >= 1 && s < sizeof(names) / sizeof(names[0]) ? names[s] : "<unknown>";
}

/* sysfs.c rate_show: width x lane speed, in Gb/s, with the speed's name. */
static int out_rate(char *buf, size_t size, unsigned width, unsigned speed)
{
	const char *name = "";
	int rate, w; /* rate in tenths of Gb/s per lane */

	switch (speed) {
	case 2: name = " DDR"; rate = 50; break;
	case 4: name = " QDR"; rate = 100; break;
	case 8: name = " FDR10"; rate = 100; break;
	case 16: name = " FDR"; rate = 140; break;
	case 32: name = " EDR"; rate = 250; break;
	case 64: name = " HDR"; rate = 500; break;
	case 128: name = " NDR"; rate = 1000; break;
	default: rate = 25; break; /* SDR, and the kernel's default */
	}
	switch (width) {
	case 1: w = 1; break;
	case 2: w = 4; break;
	case 4: w = 8; break;
	case 8: w = 12; break;
	case 16: w = 2; break;
	default: return -EINVAL; /* the kernel fails the read too */
	}
	rate *= w;
	return out(buf, size, "%d%s Gb/sec (%dX%s)\n", rate / 10, rate % 10 ? ".5" : "", w, name);
}

/* The kernel's "%*pb" of a cpumask: 32-bit words in hex, most significant
 * first, separated by commas, the first one only as wide as needed. */
static int out_cpumask(char *buf, size_t size, long ncpus)
{
	size_t at = 0;

	if (ncpus < 1)
		ncpus = 1;
	for (long top = (ncpus - 1) / 32; top >= 0; top--) {
		long bits = ncpus - top * 32 > 32 ? 32 : ncpus - top * 32;
		uint32_t word = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
		int n = top == (ncpus - 1) / 32
				? snprintf(buf + at, size - at, "%x", word)
				: snprintf(buf + at, size - at, ",%08x", word);

		if (n < 0 || (size_t)n >= size - at)
			return -EIO;
		at += (size_t)n;
	}
	return out(buf + at, size - at, "\n") < 0 ? -EIO : (int)at + 1;
}

/* On a fabric (SOFTIB_FABRIC) the GUIDs are the topology's CA's, known once
 * port 1 has attached; elsewhere the process's own GUID is the node's. */
static struct sib_hca *guid_hca(void)
{
	const char *fabric = getenv("SOFTIB_FABRIC");

	return view_hca(fabric && *fabric);
}

uint64_t sib_fs_node_guid(void)
{
	struct sib_hca *hca = guid_hca();

	return hca ? hca->node.node_guid : sib_node_guid();
}

static int read_node_attr(unsigned attr, char *buf, size_t size)
{
	struct sib_hca *hca;
	char desc[65];

	switch (attr) {
	case NA_NODE_TYPE:
		return out(buf, size, "1: CA\n"); /* RDMA_NODE_IB_CA */
	case NA_NODE_GUID:
		return out_guid(buf, size, sib_fs_node_guid());
	case NA_SYS_IMAGE_GUID:
		hca = guid_hca();
		return out_guid(buf, size, hca ? hca->node.sys_image_guid : sib_node_guid());
	case NA_NODE_DESC:
		hca = view_hca(true);
		if (!hca)
			return -EIO;
		pthread_mutex_lock(&hca->node.lock);
		memcpy(desc, hca->node.mgmt[0].node_desc, 64);
		pthread_mutex_unlock(&hca->node.lock);
		desc[64] = 0; /* NUL-padded, not always terminated (IBA 14.2.5.2) */
		return out(buf, size, "%s\n", desc);
	case NA_FW_VER:
		return out(buf, size, "%s\n", SIB_FW_VER);
	case NA_HCA_TYPE:
		return out(buf, size, "softib\n");
	case NA_HW_REV:
		return out(buf, size, "%x\n", SIB_HW_VER); /* as mlx4/mlx5 print it */
	case NA_BOARD_ID:
		return out(buf, size, "softib\n");
	default:
		return -ENOENT;
	}
}

static int read_port_file(const struct sib_fs_node *n, char *buf, size_t size)
{
	struct sib_hca *hca = view_hca(true);
	struct sib_port *port = hca ? sib_hca_port(hca, n->port) : NULL;
	struct ibv_port_attr a;
	uint8_t gid[16];
	uint16_t pkey = 0;
	char g[40];

	if (!port)
		return -EIO;
	if (n->id == SIB_FS_GID) {
		pthread_mutex_lock(&hca->node.lock);
		sib_port_gid(port, n->index, gid);
		pthread_mutex_unlock(&hca->node.lock);
		sib_gid_format(gid, g); /* the kernel's %pI6: eight groups, no "::" */
		return out(buf, size, "%s\n", g);
	}
	if (n->id == SIB_FS_PKEY) {
		pthread_mutex_lock(&hca->node.lock);
		sib_port_pkey(port, n->index, &pkey);
		pthread_mutex_unlock(&hca->node.lock);
		return out(buf, size, "0x%04x\n", pkey);
	}
	memset(&a, 0, sizeof(a));
	softib_port_attr(hca, port, &a);
	switch (n->index) {
	case PA_LID:
		return out(buf, size, "0x%x\n", a.lid);
	case PA_SM_LID:
		return out(buf, size, "0x%x\n", a.sm_lid);
	case PA_SM_SL:
		return out(buf, size, "%u\n", a.sm_sl);
	case PA_LMC:
		return out(buf, size, "%u\n", a.lmc);
	case PA_STATE:
		return out(buf, size, "%u: %s\n", a.state, state_name(a.state));
	case PA_PHYS_STATE:
		return out(buf, size, "%u: %s\n", a.phys_state, phys_state_name(a.phys_state));
	case PA_RATE:
		return out_rate(buf, size, a.active_width, a.active_speed);
	case PA_CAP_MASK:
		return out(buf, size, "0x%08x\n", a.port_cap_flags);
	case PA_LINK_LAYER:
		return out(buf, size, "%s\n",
			   a.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
	default:
		return -ENOENT;
	}
}

int sib_fs_read_file(const struct sib_fs_node *n, char *buf, size_t size)
{
	if (!size)
		return -EINVAL;
	buf[0] = 0;
	switch (n->id) {
	case SIB_FS_NODE_ATTR:
		return read_node_attr(n->index, buf, size);
	case SIB_FS_PORT_ATTR:
	case SIB_FS_GID:
	case SIB_FS_PKEY:
		return read_port_file(n, buf, size);
	case SIB_FS_DEV_ATTR:
		if (n->index == DA_NUMA_NODE)
			return out(buf, size, "-1\n"); /* no NUMA affinity, as for a device without */
		return out_cpumask(buf, size, sysconf(_SC_NPROCESSORS_CONF)); /* every CPU is near */
	case SIB_FS_VERBS_ABI:
		return out(buf, size, "6\n"); /* IB_USER_VERBS_ABI_VERSION */
	case SIB_FS_RDMA_CM_ABI:
		return out(buf, size, "4\n"); /* RDMA_USER_CM_ABI_VERSION */
	case SIB_FS_MAD_ABI:
		return out(buf, size, "5\n"); /* IB_USER_MAD_ABI_VERSION */
	case SIB_FS_UMAD_ATTR:
		switch (n->index) {
		case UA_IBDEV:
			return out(buf, size, "%s\n", SIB_DEV_NAME);
		case UA_PORT:
			return out(buf, size, "%u\n", SIB_UMAD_PORT);
		default:
			return out(buf, size, "%u:%u\n", SIB_UMAD_MAJOR,
				   n->port ? SIB_ISSM_MINOR : SIB_UMAD_MINOR);
		}
	default:
		return -EISDIR;
	}
}

/* ---------------------------------------------------------------- net */

bool sib_fs_netdev(char name[16])
{
	struct sib_hca *hca = view_hca(false);
	struct sib_endpoint ep;
	const char *addr = getenv("SOFTIB_ADDR"), *netdev = getenv("SOFTIB_NETDEV");
	bool found = false;

	if (hca) {
		pthread_mutex_lock(&hca->node.lock);
		if (hca->node.mgmt[0].link) {
			ep = hca->node.mgmt[0].link->local;
			found = true;
		}
		pthread_mutex_unlock(&hca->node.lock);
		return found && sib_endpoint_ifname(&ep, name);
	}
	/* No port yet: where sib_link_socket_open would bind it. */
	if (addr && *addr)
		return !sib_endpoint_parse(addr, 0, &ep) && sib_endpoint_ifname(&ep, name);
	if (netdev && *netdev) {
		if (strlen(netdev) >= 16)
			return false;
		snprintf(name, 16, "%s", netdev);
		return true;
	}
	sib_endpoint_parse("127.0.0.1", 0, &ep);
	return sib_endpoint_ifname(&ep, name);
}

/* ---------------------------------------------------------------- uverbs */

static int uverbs_open(int flags)
{
	(void)flags;
	sib_info("open /dev/infiniband/%s: %s has no kernel uverbs interface; programs "
		 "reach it through libibverbs",
		 softib_dev.vdev.device.dev_name, SIB_DEV_NAME);
	errno = ENXIO; /* what a node whose driver is not there answers */
	return -1;
}

/* The kernel numbers uverbs nodes 231:192 and up; the last of the static
 * range keeps clear of the real devices a host lists first. */
static const struct softib_cdev_ops uverbs_cdev = {
	.name = softib_dev.vdev.device.dev_name,
	.major = 231,
	.minor = 192 + 31,
	.open = uverbs_open,
};

__attribute__((constructor)) static void uverbs_register(void)
{
	int ret = softib_fs_add_cdev(&uverbs_cdev);

	if (ret)
		sib_warn("/dev/infiniband/%s: cannot register the node: %s", uverbs_cdev.name,
			 strerror(-ret));
}

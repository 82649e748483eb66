/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The view's tree: which paths describe softib0, how a path resolves to one
 * of them, and what stat, access and a directory listing say about them
 * (provider/fs_view.h).  The shape follows the kernel's (drivers/infiniband/
 * core/sysfs.c: a device directory with node attributes, ports/<N> with
 * port attributes, gids/<i> and pkeys/<i>; device/ for the bus device).
 *
 *   /sys/class/infiniband/softib0/{node_type, node_guid, sys_image_guid,
 *       node_desc, fw_ver, hca_type, hw_rev, board_id}
 *   /sys/class/infiniband/softib0/ports/1/{lid, sm_lid, sm_sl,
 *       lid_mask_count, state, phys_state, rate, cap_mask, link_layer,
 *       gids/<0..7>, pkeys/<0>}
 *   /sys/class/infiniband/softib0/device/{numa_node, local_cpus, net/<if>}
 *   /sys/class/infiniband_verbs/abi_version
 *   /sys/class/misc/rdma_cm/abi_version
 *   /dev/infiniband/<each registered character device>
 *
 * softib0 has no uverbs kernel device, so /sys/class/infiniband_verbs lists
 * no uverbs<N> for it: libibverbs' sysfs discovery would otherwise find a
 * device with no kernel driver and load every provider looking for one.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "provider/fs_view.h"
#include "provider/softib.h"
#include "transport/caps.h"

#define SIB_FS_MAX_CDEVS 32
#define SIB_FS_MAX_DEPTH 16 /* the deepest node is 8 components down */

/* ---------------------------------------------------------------- devices */

static const struct softib_cdev_ops *cdevs[SIB_FS_MAX_CDEVS];
static unsigned cdev_count; /* published with release, read with acquire */
static pthread_mutex_t cdev_lock = PTHREAD_MUTEX_INITIALIZER;

static bool name_is_component(const char *name)
{
	size_t len = name ? strnlen(name, NAME_MAX + 1) : 0;

	return len > 0 && len <= NAME_MAX && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

int softib_fs_add_cdev(const struct softib_cdev_ops *ops)
{
	int ret = 0;

	if (!ops || !ops->open || !name_is_component(ops->name))
		return -EINVAL;
	pthread_mutex_lock(&cdev_lock);
	for (unsigned i = 0; i < cdev_count; i++)
		if (!strcmp(cdevs[i]->name, ops->name))
			ret = -EEXIST;
	if (!ret && cdev_count == SIB_FS_MAX_CDEVS)
		ret = -ENOMEM;
	if (!ret) {
		cdevs[cdev_count] = ops;
		__atomic_store_n(&cdev_count, cdev_count + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cdev_lock);
	return ret;
}

const struct softib_cdev_ops *sib_fs_cdev(const struct sib_fs_node *n)
{
	if (n->id != SIB_FS_CDEV || n->index >= __atomic_load_n(&cdev_count, __ATOMIC_ACQUIRE))
		return NULL;
	return cdevs[n->index];
}

/* ---------------------------------------------------------------- shape */

static const char *ibdev_name(void)
{
	return softib_dev.vdev.device.name;
}

enum sib_fs_type sib_fs_type(const struct sib_fs_node *n)
{
	switch (n->id) {
	case SIB_FS_NODE_ATTR:
	case SIB_FS_PORT_ATTR:
	case SIB_FS_GID:
	case SIB_FS_PKEY:
	case SIB_FS_DEV_ATTR:
	case SIB_FS_VERBS_ABI:
	case SIB_FS_RDMA_CM_ABI:
	case SIB_FS_MAD_ABI:
	case SIB_FS_UMAD_ATTR:
		return SIB_FS_T_FILE;
	case SIB_FS_CDEV:
		return SIB_FS_T_CDEV;
	default:
		return SIB_FS_T_DIR;
	}
}

bool sib_fs_real_backed(const struct sib_fs_node *n)
{
	switch (n->id) {
	case SIB_FS_SYS:
	case SIB_FS_CLASS:
	case SIB_FS_IB:
	case SIB_FS_VERBS:
	case SIB_FS_MISC:
	case SIB_FS_RDMA_CM:
	case SIB_FS_MAD:
	case SIB_FS_DEV:
	case SIB_FS_DEVIB:
		return true;
	default:
		return false;
	}
}

unsigned char sib_fs_dtype(const struct sib_fs_node *n)
{
	switch (sib_fs_type(n)) {
	case SIB_FS_T_FILE:
		return DT_REG;
	case SIB_FS_T_CDEV:
		return DT_CHR;
	default:
		return DT_DIR;
	}
}

static struct sib_fs_node mk(enum sib_fs_id id, unsigned port, unsigned index)
{
	return (struct sib_fs_node){ .id = (uint16_t)id, .port = (uint16_t)port, .index = index };
}

/* "0".."limit-1" in decimal without sign or leading zeros, as sysfs names them. */
static bool parse_index(const char *s, unsigned limit, unsigned *out)
{
	unsigned v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v >= limit)
			return false;
		v = v * 10 + (unsigned)(*s - '0');
	}
	if (v >= limit)
		return false;
	*out = v;
	return true;
}

static bool find_name(const char *const *names, unsigned count, const char *name, unsigned *i)
{
	for (*i = 0; *i < count; (*i)++)
		if (!strcmp(names[*i], name))
			return true;
	return false;
}

/* The child called name of dir (dir NULL: the root). */
static bool child_of(const struct sib_fs_node *dir, const char *name, struct sib_fs_node *out)
{
	unsigned i, p = dir ? dir->port : 0;
	char ifname[16];

	if (!dir) {
		if (!strcmp(name, "sys"))
			return *out = mk(SIB_FS_SYS, 0, 0), true;
		if (!strcmp(name, "dev"))
			return *out = mk(SIB_FS_DEV, 0, 0), true;
		return false;
	}
	switch (dir->id) {
	case SIB_FS_SYS:
		if (!strcmp(name, "class"))
			return *out = mk(SIB_FS_CLASS, 0, 0), true;
		return false;
	case SIB_FS_CLASS:
		if (!strcmp(name, "infiniband"))
			return *out = mk(SIB_FS_IB, 0, 0), true;
		if (!strcmp(name, "infiniband_verbs"))
			return *out = mk(SIB_FS_VERBS, 0, 0), true;
		if (!strcmp(name, "misc"))
			return *out = mk(SIB_FS_MISC, 0, 0), true;
		if (!strcmp(name, "infiniband_mad"))
			return *out = mk(SIB_FS_MAD, 0, 0), true;
		return false;
	case SIB_FS_IB:
		if (!strcmp(name, ibdev_name()))
			return *out = mk(SIB_FS_IBDEV, 0, 0), true;
		return false;
	case SIB_FS_IBDEV:
		if (find_name(sib_fs_node_attrs, sib_fs_node_attr_count, name, &i))
			return *out = mk(SIB_FS_NODE_ATTR, 0, i), true;
		if (!strcmp(name, "ports"))
			return *out = mk(SIB_FS_PORTS, 0, 0), true;
		if (!strcmp(name, "device"))
			return *out = mk(SIB_FS_DEVICE, 0, 0), true;
		return false;
	case SIB_FS_PORTS:
		if (parse_index(name, SIB_NUM_PORTS + 1, &i) && i >= 1)
			return *out = mk(SIB_FS_PORT, i, 0), true;
		return false;
	case SIB_FS_PORT:
		if (find_name(sib_fs_port_attrs, sib_fs_port_attr_count, name, &i))
			return *out = mk(SIB_FS_PORT_ATTR, p, i), true;
		if (!strcmp(name, "gids"))
			return *out = mk(SIB_FS_GIDS, p, 0), true;
		if (!strcmp(name, "pkeys"))
			return *out = mk(SIB_FS_PKEYS, p, 0), true;
		return false;
	case SIB_FS_GIDS:
		if (parse_index(name, SIB_GID_TBL_LEN, &i))
			return *out = mk(SIB_FS_GID, p, i), true;
		return false;
	case SIB_FS_PKEYS:
		if (parse_index(name, SIB_MAX_PKEYS, &i))
			return *out = mk(SIB_FS_PKEY, p, i), true;
		return false;
	case SIB_FS_DEVICE:
		if (find_name(sib_fs_device_attrs, sib_fs_device_attr_count, name, &i))
			return *out = mk(SIB_FS_DEV_ATTR, 0, i), true;
		if (!strcmp(name, "net"))
			return *out = mk(SIB_FS_NET, 0, 0), true;
		return false;
	case SIB_FS_NET:
		if (sib_fs_netdev(ifname) && !strcmp(name, ifname))
			return *out = mk(SIB_FS_NETIF, 0, 0), true;
		return false;
	case SIB_FS_VERBS:
		if (!strcmp(name, "abi_version"))
			return *out = mk(SIB_FS_VERBS_ABI, 0, 0), true;
		return false;
	case SIB_FS_MISC:
		if (!strcmp(name, "rdma_cm"))
			return *out = mk(SIB_FS_RDMA_CM, 0, 0), true;
		return false;
	case SIB_FS_RDMA_CM:
		if (!strcmp(name, "abi_version"))
			return *out = mk(SIB_FS_RDMA_CM_ABI, 0, 0), true;
		return false;
	case SIB_FS_MAD:
		if (!strcmp(name, "abi_version"))
			return *out = mk(SIB_FS_MAD_ABI, 0, 0), true;
		for (i = 0; i < 2; i++)
			if (!strcmp(name, sib_fs_umad_dir(i)))
				return *out = mk(SIB_FS_UMAD, 0, i), true;
		return false;
	case SIB_FS_UMAD:
		if (find_name(sib_fs_umad_attrs, sib_fs_umad_attr_count, name, &i))
			return *out = mk(SIB_FS_UMAD_ATTR, (uint16_t)dir->index, i), true;
		return false;
	case SIB_FS_DEV:
		if (!strcmp(name, "infiniband"))
			return *out = mk(SIB_FS_DEVIB, 0, 0), true;
		return false;
	case SIB_FS_DEVIB: {
		unsigned n = __atomic_load_n(&cdev_count, __ATOMIC_ACQUIRE);

		for (i = 0; i < n; i++)
			if (!strcmp(cdevs[i]->name, name))
				return *out = mk(SIB_FS_CDEV, 0, i), true;
		return false;
	}
	default:
		return false;
	}
}

void sib_fs_list(const struct sib_fs_node *dir,
		 int (*fn)(void *arg, const char *name, const struct sib_fs_node *child),
		 void *arg)
{
	unsigned p = dir->port, i;
	char name[24];

#define EMIT(nm, node)                                                                             \
	do {                                                                                       \
		struct sib_fs_node c_ = (node);                                                     \
		if (fn(arg, (nm), &c_))                                                             \
			return;                                                                     \
	} while (0)

	switch (dir->id) {
	case SIB_FS_SYS:
		EMIT("class", mk(SIB_FS_CLASS, 0, 0));
		break;
	case SIB_FS_CLASS:
		EMIT("infiniband", mk(SIB_FS_IB, 0, 0));
		EMIT("infiniband_verbs", mk(SIB_FS_VERBS, 0, 0));
		EMIT("misc", mk(SIB_FS_MISC, 0, 0));
		EMIT("infiniband_mad", mk(SIB_FS_MAD, 0, 0));
		break;
	case SIB_FS_IB:
		EMIT(ibdev_name(), mk(SIB_FS_IBDEV, 0, 0));
		break;
	case SIB_FS_IBDEV:
		for (i = 0; i < sib_fs_node_attr_count; i++)
			EMIT(sib_fs_node_attrs[i], mk(SIB_FS_NODE_ATTR, 0, i));
		EMIT("ports", mk(SIB_FS_PORTS, 0, 0));
		EMIT("device", mk(SIB_FS_DEVICE, 0, 0));
		break;
	case SIB_FS_PORTS:
		for (i = 1; i <= SIB_NUM_PORTS; i++) {
			snprintf(name, sizeof(name), "%u", i);
			EMIT(name, mk(SIB_FS_PORT, i, 0));
		}
		break;
	case SIB_FS_PORT:
		for (i = 0; i < sib_fs_port_attr_count; i++)
			EMIT(sib_fs_port_attrs[i], mk(SIB_FS_PORT_ATTR, p, i));
		EMIT("gids", mk(SIB_FS_GIDS, p, 0));
		EMIT("pkeys", mk(SIB_FS_PKEYS, p, 0));
		break;
	case SIB_FS_GIDS:
		for (i = 0; i < SIB_GID_TBL_LEN; i++) {
			snprintf(name, sizeof(name), "%u", i);
			EMIT(name, mk(SIB_FS_GID, p, i));
		}
		break;
	case SIB_FS_PKEYS:
		for (i = 0; i < SIB_MAX_PKEYS; i++) {
			snprintf(name, sizeof(name), "%u", i);
			EMIT(name, mk(SIB_FS_PKEY, p, i));
		}
		break;
	case SIB_FS_DEVICE:
		for (i = 0; i < sib_fs_device_attr_count; i++)
			EMIT(sib_fs_device_attrs[i], mk(SIB_FS_DEV_ATTR, 0, i));
		EMIT("net", mk(SIB_FS_NET, 0, 0));
		break;
	case SIB_FS_NET:
		if (sib_fs_netdev(name))
			EMIT(name, mk(SIB_FS_NETIF, 0, 0));
		break;
	case SIB_FS_VERBS:
		EMIT("abi_version", mk(SIB_FS_VERBS_ABI, 0, 0));
		break;
	case SIB_FS_MISC:
		EMIT("rdma_cm", mk(SIB_FS_RDMA_CM, 0, 0));
		break;
	case SIB_FS_RDMA_CM:
		EMIT("abi_version", mk(SIB_FS_RDMA_CM_ABI, 0, 0));
		break;
	case SIB_FS_MAD:
		EMIT("abi_version", mk(SIB_FS_MAD_ABI, 0, 0));
		for (i = 0; i < 2; i++)
			EMIT(sib_fs_umad_dir(i), mk(SIB_FS_UMAD, 0, i));
		break;
	case SIB_FS_UMAD:
		for (i = 0; i < sib_fs_umad_attr_count; i++)
			EMIT(sib_fs_umad_attrs[i], mk(SIB_FS_UMAD_ATTR, (uint16_t)dir->index, i));
		break;
	case SIB_FS_DEV:
		EMIT("infiniband", mk(SIB_FS_DEVIB, 0, 0));
		break;
	case SIB_FS_DEVIB: {
		unsigned n = __atomic_load_n(&cdev_count, __ATOMIC_ACQUIRE);

		for (i = 0; i < n; i++)
			EMIT(cdevs[i]->name, mk(SIB_FS_CDEV, 0, i));
		break;
	}
	default:
		break;
	}
#undef EMIT
}

bool sib_fs_path(const struct sib_fs_node *n, char *buf, size_t size)
{
	const char *ib = "/sys/class/infiniband";
	const char *dev = ibdev_name();
	const struct softib_cdev_ops *cd;
	char ifname[16];
	int len;

	switch (n->id) {
	case SIB_FS_SYS:
		len = snprintf(buf, size, "/sys");
		break;
	case SIB_FS_CLASS:
		len = snprintf(buf, size, "/sys/class");
		break;
	case SIB_FS_IB:
		len = snprintf(buf, size, "%s", ib);
		break;
	case SIB_FS_IBDEV:
		len = snprintf(buf, size, "%s/%s", ib, dev);
		break;
	case SIB_FS_NODE_ATTR:
		len = snprintf(buf, size, "%s/%s/%s", ib, dev, sib_fs_node_attrs[n->index]);
		break;
	case SIB_FS_PORTS:
		len = snprintf(buf, size, "%s/%s/ports", ib, dev);
		break;
	case SIB_FS_PORT:
		len = snprintf(buf, size, "%s/%s/ports/%u", ib, dev, n->port);
		break;
	case SIB_FS_PORT_ATTR:
		len = snprintf(buf, size, "%s/%s/ports/%u/%s", ib, dev, n->port,
			       sib_fs_port_attrs[n->index]);
		break;
	case SIB_FS_GIDS:
		len = snprintf(buf, size, "%s/%s/ports/%u/gids", ib, dev, n->port);
		break;
	case SIB_FS_GID:
		len = snprintf(buf, size, "%s/%s/ports/%u/gids/%u", ib, dev, n->port, n->index);
		break;
	case SIB_FS_PKEYS:
		len = snprintf(buf, size, "%s/%s/ports/%u/pkeys", ib, dev, n->port);
		break;
	case SIB_FS_PKEY:
		len = snprintf(buf, size, "%s/%s/ports/%u/pkeys/%u", ib, dev, n->port, n->index);
		break;
	case SIB_FS_DEVICE:
		len = snprintf(buf, size, "%s/%s/device", ib, dev);
		break;
	case SIB_FS_DEV_ATTR:
		len = snprintf(buf, size, "%s/%s/device/%s", ib, dev,
			       sib_fs_device_attrs[n->index]);
		break;
	case SIB_FS_NET:
		len = snprintf(buf, size, "%s/%s/device/net", ib, dev);
		break;
	case SIB_FS_NETIF:
		if (!sib_fs_netdev(ifname))
			return false;
		len = snprintf(buf, size, "%s/%s/device/net/%s", ib, dev, ifname);
		break;
	case SIB_FS_VERBS:
		len = snprintf(buf, size, "/sys/class/infiniband_verbs");
		break;
	case SIB_FS_VERBS_ABI:
		len = snprintf(buf, size, "/sys/class/infiniband_verbs/abi_version");
		break;
	case SIB_FS_MISC:
		len = snprintf(buf, size, "/sys/class/misc");
		break;
	case SIB_FS_RDMA_CM:
		len = snprintf(buf, size, "/sys/class/misc/rdma_cm");
		break;
	case SIB_FS_RDMA_CM_ABI:
		len = snprintf(buf, size, "/sys/class/misc/rdma_cm/abi_version");
		break;
	case SIB_FS_MAD:
		len = snprintf(buf, size, "/sys/class/infiniband_mad");
		break;
	case SIB_FS_MAD_ABI:
		len = snprintf(buf, size, "/sys/class/infiniband_mad/abi_version");
		break;
	case SIB_FS_UMAD:
		len = snprintf(buf, size, "/sys/class/infiniband_mad/%s", sib_fs_umad_dir(n->index));
		break;
	case SIB_FS_UMAD_ATTR:
		len = snprintf(buf, size, "/sys/class/infiniband_mad/%s/%s", sib_fs_umad_dir(n->port),
			       sib_fs_umad_attrs[n->index]);
		break;
	case SIB_FS_DEV:
		len = snprintf(buf, size, "/dev");
		break;
	case SIB_FS_DEVIB:
		len = snprintf(buf, size, "/dev/infiniband");
		break;
	case SIB_FS_CDEV:
		cd = sib_fs_cdev(n);
		if (!cd)
			return false;
		len = snprintf(buf, size, "/dev/infiniband/%s", cd->name);
		break;
	default:
		return false;
	}
	return len > 0 && (size_t)len < size;
}

/* ---------------------------------------------------------------- resolution */

/* The component at *p (after any slashes) is name: advance past it. */
static bool comp_is(const char **p, const char *name)
{
	const char *c = *p;
	size_t len = strlen(name);

	while (*c == '/')
		c++;
	if (strncmp(c, name, len) || (c[len] && c[len] != '/'))
		return false;
	*p = c + len;
	return true;
}

/* Nothing but slashes left, or a component starting with '.' next (".",
 * "..", a hidden name): the walk decides. */
static bool comp_end_or_dot(const char *p)
{
	while (*p == '/')
		p++;
	return !*p || *p == '.';
}

bool sib_fs_maybe_ours(const char *p)
{
	if (!p || p[0] != '/')
		return false;
	/* Most paths (/usr, /etc, /proc, /tmp, /home) end here. */
	if (p[1] != 's' && p[1] != 'd' && p[1] != '/' && p[1] != '.' && p[1])
		return false;
	if (comp_end_or_dot(p))
		return true; /* "/", "/./sys", "/../dev" */
	if (comp_is(&p, "dev"))
		return comp_end_or_dot(p) || comp_is(&p, "infiniband");
	if (!comp_is(&p, "sys"))
		return false;
	if (comp_end_or_dot(p))
		return true;
	if (!comp_is(&p, "class"))
		return false; /* /sys/devices, /sys/kernel, ...: never the view's */
	return comp_end_or_dot(p) || comp_is(&p, "infiniband") ||
	       comp_is(&p, "infiniband_verbs") || comp_is(&p, "misc") ||
	       comp_is(&p, "infiniband_mad");
}

/* Appends s[0..len) to buf at *at (a path being built); false on overflow. */
static bool put(char *buf, size_t size, size_t *at, const char *s, size_t len)
{
	if (*at + len >= size)
		return false;
	memcpy(buf + *at, s, len);
	*at += len;
	buf[*at] = 0;
	return true;
}

/* PASS, handing libc the view's part resolved and the rest as given. */
static enum sib_fs_found pass_from(struct sib_fs_lookup *lk, bool base_virtual, size_t at,
				   const char *rest)
{
	lk->rewritten = base_virtual;
	if (base_virtual) {
		if (*rest && !put(lk->path, sizeof(lk->path), &at, "/", 1))
			return SIB_FS_PASS;
		if (!put(lk->path, sizeof(lk->path), &at, rest, strlen(rest)))
			lk->rewritten = false; /* too long: the kernel says ENAMETOOLONG */
		if (!at)
			put(lk->path, sizeof(lk->path), &at, "/", 1);
	}
	return SIB_FS_PASS;
}

/* device/net/<ifname> is the interface's own directory, as in the kernel
 * (the bus device's net/ holds the netdev itself): libc gets the real one. */
static enum sib_fs_found pass_netif(struct sib_fs_lookup *lk, const char *rest)
{
	char ifname[16], link[64], real[PATH_MAX];
	size_t at = 0;

	lk->rewritten = false;
	if (!sib_fs_netdev(ifname))
		return SIB_FS_PASS;
	snprintf(link, sizeof(link), "/sys/class/net/%s", ifname);
	if (!realpath(link, real))
		snprintf(real, sizeof(real), "%s", link);
	if (!put(lk->path, sizeof(lk->path), &at, real, strlen(real)) ||
	    (*rest && (!put(lk->path, sizeof(lk->path), &at, "/", 1) ||
		       !put(lk->path, sizeof(lk->path), &at, rest, strlen(rest)))))
		return SIB_FS_PASS;
	lk->rewritten = true;
	return SIB_FS_PASS;
}

enum sib_fs_found sib_fs_resolve(const char *base, bool base_virtual, const char *path,
				 struct sib_fs_lookup *lk)
{
	struct sib_fs_node stack[SIB_FS_MAX_DEPTH];
	size_t plen[SIB_FS_MAX_DEPTH + 1]; /* lk->path's length at each depth */
	unsigned depth = 0;		    /* 0: the root */
	const char *segs[2], *s;
	size_t at = 0;
	bool trailing_slash = false;

	memset(&lk->node, 0, sizeof(lk->node));
	lk->path[0] = 0;
	lk->rewritten = false;
	lk->missing_in_dir = false;
	lk->err = 0;
	if (!path)
		return SIB_FS_PASS;
	if (path[0] != '/' && !base)
		return SIB_FS_PASS;
	if (path[0] == '/')
		base_virtual = false; /* an absolute path means the same to the kernel */
	/* The base's components, then the path's. */
	segs[0] = path[0] == '/' ? "" : base;
	segs[1] = path;
	plen[0] = 0;
	for (int si = 0; si < 2; si++) {
		s = segs[si];
		while (*s) {
			const char *c, *end;
			size_t len;
			struct sib_fs_node child;
			const struct sib_fs_node *dir = depth ? &stack[depth - 1] : NULL;

			while (*s == '/')
				s++;
			if (!*s) {
				trailing_slash = si == 1 && s > path;
				break;
			}
			c = s;
			end = strchr(c, '/');
			if (!end)
				end = c + strlen(c);
			len = (size_t)(end - c);
			s = end;
			trailing_slash = false;
			if (len == 1 && c[0] == '.')
				continue;
			if (len == 2 && c[0] == '.' && c[1] == '.') {
				/* Only the view's own directories are climbed
				 * lexically; the root's ".." is the root. */
				if (depth)
					depth--;
				at = plen[depth];
				lk->path[at] = 0;
				continue;
			}
			if (dir && sib_fs_type(dir) != SIB_FS_T_DIR) {
				lk->err = ENOTDIR;
				return SIB_FS_ERR;
			}
			if (len > NAME_MAX) {
				if (!dir || sib_fs_real_backed(dir))
					return pass_from(lk, base_virtual && si == 1, at, c);
				lk->err = ENAMETOOLONG;
				return SIB_FS_ERR;
			}
			{
				char name[NAME_MAX + 1];

				memcpy(name, c, len);
				name[len] = 0;
				if (!child_of(dir, name, &child)) {
					if (!dir || sib_fs_real_backed(dir))
						return pass_from(lk, base_virtual && si == 1, at,
								 c);
					lk->err = ENOENT;
					while (*s == '/')
						s++;
					lk->missing_in_dir = !*s && si == 1;
					return SIB_FS_ERR;
				}
				if (child.id == SIB_FS_NETIF) {
					while (*s == '/')
						s++;
					if (si == 0) /* a working directory inside it: rare */
						return SIB_FS_PASS;
					return pass_netif(lk, s);
				}
				if (depth == SIB_FS_MAX_DEPTH ||
				    !put(lk->path, sizeof(lk->path), &at, "/", 1) ||
				    !put(lk->path, sizeof(lk->path), &at, name, len))
					return SIB_FS_PASS;
				stack[depth++] = child;
				plen[depth] = at;
			}
		}
	}
	if (!depth) {
		/* The root itself is the kernel's. */
		lk->rewritten = base_virtual;
		if (base_virtual)
			snprintf(lk->path, sizeof(lk->path), "/");
		return SIB_FS_PASS;
	}
	lk->node = stack[depth - 1];
	if (trailing_slash && sib_fs_type(&lk->node) != SIB_FS_T_DIR) {
		lk->err = ENOTDIR;
		return SIB_FS_ERR;
	}
	return SIB_FS_HIT;
}

/* ---------------------------------------------------------------- stat */

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h | 1ull << 62; /* never 0, far from small real inode numbers */
}

struct fs_times {
	pthread_once_t once;
	struct timespec t;
	dev_t sys_dev, dev_dev;
};
static struct fs_times fs_times = { .once = PTHREAD_ONCE_INIT };

static void fs_times_init(void)
{
	struct stat st;

	clock_gettime(CLOCK_REALTIME, &fs_times.t);
	/* The view's nodes live on the file systems they would be on. */
	fs_times.sys_dev = stat("/sys", &st) ? makedev(0, 0x5e1b) : st.st_dev;
	fs_times.dev_dev = stat("/dev", &st) ? makedev(0, 0x5e1c) : st.st_dev;
}

static mode_t node_mode(const struct sib_fs_node *n)
{
	switch (sib_fs_type(n)) {
	case SIB_FS_T_FILE:
		return S_IFREG | 0444;
	case SIB_FS_T_CDEV:
		return S_IFCHR | 0666; /* udev's mode for uverbs and rdma_cm */
	default:
		return S_IFDIR | 0755;
	}
}

void sib_fs_stat(const struct sib_fs_node *n, struct stat *st)
{
	const struct softib_cdev_ops *cd = sib_fs_cdev(n);
	char path[PATH_MAX];

	pthread_once(&fs_times.once, fs_times_init);
	memset(st, 0, sizeof(*st));
	if (!sib_fs_path(n, path, sizeof(path)))
		snprintf(path, sizeof(path), "?%u.%u.%u", n->id, n->port, n->index);
	st->st_ino = (ino_t)path_hash(path);
	st->st_dev = !strncmp(path, "/dev", 4) ? fs_times.dev_dev : fs_times.sys_dev;
	st->st_mode = node_mode(n);
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	st->st_blksize = 4096;
	/* sysfs reports a page for every attribute, whatever it holds. */
	st->st_size = S_ISREG(st->st_mode) ? 4096 : 0;
	if (cd)
		st->st_rdev = makedev(cd->major, cd->minor);
	st->st_atim = st->st_mtim = st->st_ctim = fs_times.t;
}

int sib_fs_access(const struct sib_fs_node *n, int amode, bool effective_ids)
{
	mode_t mode = node_mode(n);
	uid_t uid = effective_ids ? geteuid() : getuid();
	gid_t gid = effective_ids ? getegid() : getgid();
	unsigned want = 0, have;

	if (amode == F_OK)
		return 0;
	if (amode & R_OK)
		want |= 4;
	if (amode & W_OK)
		want |= 2;
	if (amode & X_OK)
		want |= 1;
	if (uid == 0) {
		/* Root may read and write anything; execute needs some x bit. */
		if ((want & 1) && !S_ISDIR(mode) && !(mode & 0111))
			return EACCES;
		return 0;
	}
	/* Every node belongs to root:root. */
	have = gid == 0 ? (mode >> 3) & 7 : mode & 7;
	return (want & ~have) ? EACCES : 0;
}

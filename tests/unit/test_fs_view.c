/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* provider/fs_tree and provider/fs_sysfs: which paths are softib0's and how
 * they resolve, what each directory lists, stat and access, the character
 * device registry, and the text of every file in the kernel's formats --
 * live: a LID the SM sets later shows up on the next read.  (The libc calls
 * themselves, fs_view.c, are tested through a real process:
 * tests/helpers/fs_view_calls.c, tests/integration/test_fs_view.sh.) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hca/hca.h"
#include "link/link.h"
#include "provider/fs_view.h"
#include "provider/softib.h"

#include "skip.h"

static struct sib_fs_lookup lk;

static enum sib_fs_found resolve(const char *path)
{
	return sib_fs_resolve(NULL, false, path, &lk);
}

static void absolute_paths_of_softib0_resolve_to_their_nodes(void **state)
{
	(void)state;
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/1/lid"), SIB_FS_HIT);
	assert_int_equal(lk.node.id, SIB_FS_PORT_ATTR);
	assert_int_equal(lk.node.port, 1);
	assert_string_equal(sib_fs_port_attrs[lk.node.index], "lid");
	assert_string_equal(lk.path, "/sys/class/infiniband/softib0/ports/1/lid");

	/* Lexically: repeated slashes, ".", and ".." over the view's own names. */
	assert_int_equal(resolve("//sys/./class//infiniband/softib0/ports/1/../1/gids/7"),
			 SIB_FS_HIT);
	assert_int_equal(lk.node.id, SIB_FS_GID);
	assert_int_equal(lk.node.index, 7);
	assert_string_equal(lk.path, "/sys/class/infiniband/softib0/ports/1/gids/7");
	assert_int_equal(resolve("/../sys/class/infiniband/softib0/"), SIB_FS_HIT);
	assert_int_equal(lk.node.id, SIB_FS_IBDEV);

	assert_int_equal(resolve("/dev/infiniband/" SIB_DEV_NAME), SIB_FS_HIT);
	assert_int_equal(lk.node.id, SIB_FS_CDEV);
	assert_int_equal(resolve("/sys/class/infiniband_verbs/abi_version"), SIB_FS_HIT);
	assert_int_equal(resolve("/sys/class/misc/rdma_cm/abi_version"), SIB_FS_HIT);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/pkeys"), SIB_FS_ERR);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/1/pkeys/0"), SIB_FS_HIT);
}

static void paths_that_are_not_softib0s_go_to_libc_unchanged(void **state)
{
	static const char *const others[] = {
		"/sys/class/infiniband/mlx5_0",	     /* a real device */
		"/sys/class/infiniband/mlx5_0/../softib0", /* through a real name: the kernel's */
		"/dev/infiniband/uverbs7",	     /* not registered here */
		"/dev/null",
		"/sys/class/net/lo",
		"/sys/devices/system/cpu/online",
		"/",
	};

	(void)state;
	assert_false(sib_fs_maybe_ours("/etc/hostname"));
	assert_false(sib_fs_maybe_ours("/system/x"));
	assert_false(sib_fs_maybe_ours("/device"));
	assert_false(sib_fs_maybe_ours("relative/sys"));
	assert_false(sib_fs_maybe_ours(NULL));
	assert_true(sib_fs_maybe_ours("/sys"));
	assert_true(sib_fs_maybe_ours("/sys/"));
	assert_true(sib_fs_maybe_ours("/sys/class"));
	assert_true(sib_fs_maybe_ours("//sys//class//infiniband/x"));
	assert_true(sib_fs_maybe_ours("/sys/class/misc/rdma_cm/abi_version"));
	assert_true(sib_fs_maybe_ours("/sys/./class"));
	assert_true(sib_fs_maybe_ours("/dev/infiniband/softib0"));
	assert_true(sib_fs_maybe_ours("/dev/../dev/null"));
	assert_true(sib_fs_maybe_ours("/./x"));
	assert_true(sib_fs_maybe_ours("/"));
	/* The cheap test already turns away the busy parts of /dev and /sys. */
	assert_false(sib_fs_maybe_ours("/dev/null"));
	assert_false(sib_fs_maybe_ours("/dev/shm/x"));
	assert_false(sib_fs_maybe_ours("/dev/infinibandx"));
	assert_false(sib_fs_maybe_ours("/sys/devices/system/cpu/online"));
	assert_false(sib_fs_maybe_ours("/sys/class/net/lo"));
	assert_false(sib_fs_maybe_ours("/sysfs"));
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		assert_int_equal(resolve(others[i]), SIB_FS_PASS);
		assert_false(lk.rewritten);
	}
	assert_int_equal(resolve(NULL), SIB_FS_PASS);
	assert_int_equal(sib_fs_resolve(NULL, false, "relative", &lk), SIB_FS_PASS);
}

static void bad_paths_get_the_errors_sysfs_gives(void **state)
{
	char longname[NAME_MAX + 40];

	(void)state;
	assert_int_equal(resolve("/sys/class/infiniband/softib0/nosuch"), SIB_FS_ERR);
	assert_int_equal(lk.err, ENOENT);
	assert_true(lk.missing_in_dir);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/nosuch/deeper"), SIB_FS_ERR);
	assert_int_equal(lk.err, ENOENT);
	assert_false(lk.missing_in_dir);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/node_guid/x"), SIB_FS_ERR);
	assert_int_equal(lk.err, ENOTDIR);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/node_guid/"), SIB_FS_ERR);
	assert_int_equal(lk.err, ENOTDIR);
	/* Ports, GID and P_Key indices are sysfs names: no sign, no leading 0. */
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/0"), SIB_FS_ERR);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/01"), SIB_FS_ERR);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/1/gids/8"), SIB_FS_ERR);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/1/gids/-1"), SIB_FS_ERR);
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports/1/pkeys/16"), SIB_FS_ERR);
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "/sys/class/infiniband/softib0/", 30);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(resolve(longname), SIB_FS_ERR);
	assert_int_equal(lk.err, ENAMETOOLONG);
}

static void relative_paths_resolve_against_a_virtual_base(void **state)
{
	(void)state;
	assert_int_equal(sib_fs_resolve("/sys/class/infiniband", true, "softib0/ports/1/state", &lk),
			 SIB_FS_HIT);
	assert_int_equal(lk.node.id, SIB_FS_PORT_ATTR);
	assert_int_equal(sib_fs_resolve("/sys/class/infiniband/softib0", true, "..", &lk),
			 SIB_FS_HIT);
	assert_int_equal(lk.node.id, SIB_FS_IB);
	/* Leaving the view from a virtual base: libc gets an absolute path. */
	assert_int_equal(sib_fs_resolve("/sys/class/infiniband/softib0", true, "../../net/lo", &lk),
			 SIB_FS_PASS);
	assert_true(lk.rewritten);
	assert_string_equal(lk.path, "/sys/class/net/lo");
	assert_int_equal(sib_fs_resolve("/sys/class/infiniband", true, "../../..", &lk),
			 SIB_FS_PASS);
	assert_true(lk.rewritten);
	assert_string_equal(lk.path, "/");
	/* From a real base, libc resolves the caller's path itself. */
	assert_int_equal(sib_fs_resolve("/sys/class", false, "net/lo", &lk), SIB_FS_PASS);
	assert_false(lk.rewritten);
	assert_int_equal(sib_fs_resolve("/sys/class", false, "infiniband/softib0", &lk),
			 SIB_FS_HIT);
	assert_int_equal(sib_fs_resolve("/home/user", false, "../../sys/class/infiniband", &lk),
			 SIB_FS_PASS);
}

struct names {
	char all[1024];
	unsigned n;
};

static int add_name(void *arg, const char *name, const struct sib_fs_node *child)
{
	struct names *nm = arg;

	(void)child;
	strcat(nm->all, nm->n++ ? " " : "");
	strcat(nm->all, name);
	return 0;
}

static const char *list(const char *path)
{
	static struct names nm;

	memset(&nm, 0, sizeof(nm));
	assert_int_equal(resolve(path), SIB_FS_HIT);
	assert_int_equal(sib_fs_type(&lk.node), SIB_FS_T_DIR);
	sib_fs_list(&lk.node, add_name, &nm);
	return nm.all;
}

static void directories_list_what_the_kernel_lists(void **state)
{
	(void)state;
	assert_string_equal(list("/sys/class/infiniband"), SIB_DEV_NAME);
	assert_string_equal(list("/sys/class/infiniband/softib0"),
			    "node_type node_guid sys_image_guid node_desc fw_ver hca_type hw_rev "
			    "board_id ports device");
	assert_string_equal(list("/sys/class/infiniband/softib0/ports"), "1");
	assert_string_equal(list("/sys/class/infiniband/softib0/ports/1"),
			    "lid sm_lid sm_sl lid_mask_count state phys_state rate cap_mask "
			    "link_layer gids pkeys");
	assert_string_equal(list("/sys/class/infiniband/softib0/ports/1/gids"), "0 1 2 3 4 5 6 7");
	assert_string_equal(list("/sys/class/infiniband/softib0/ports/1/pkeys"),
			    "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15");
	assert_string_equal(list("/sys/class/infiniband/softib0/device"),
			    "numa_node local_cpus net");
	assert_string_equal(list("/sys/class/infiniband_verbs"), "abi_version");
	assert_string_equal(list("/sys/class/misc"), "rdma_cm");
	assert_string_equal(list("/sys/class"), "infiniband infiniband_verbs misc infiniband_mad");
	assert_string_equal(list("/sys/class/infiniband_mad"), "abi_version umad31 issm31");
	assert_string_equal(list("/sys/class/infiniband_mad/umad31"), "ibdev port dev");
	assert_string_equal(list("/dev"), "infiniband");
	assert_true(strstr(list("/dev/infiniband"), SIB_DEV_NAME) != NULL);
	/* The directories a host with RDMA hardware has for real are merged. */
	assert_int_equal(resolve("/sys/class/infiniband"), SIB_FS_HIT);
	assert_true(sib_fs_real_backed(&lk.node));
	assert_int_equal(resolve("/sys/class/infiniband/softib0"), SIB_FS_HIT);
	assert_false(sib_fs_real_backed(&lk.node));
}

static void stat_and_access_match_sysfs_and_dev(void **state)
{
	struct stat st, st2;

	(void)state;
	assert_int_equal(resolve("/sys/class/infiniband/softib0/node_guid"), SIB_FS_HIT);
	sib_fs_stat(&lk.node, &st);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0444);
	assert_int_equal(st.st_size, 4096);
	assert_int_equal(st.st_uid, 0);
	assert_int_not_equal(st.st_ino, 0);
	assert_int_equal(sib_fs_access(&lk.node, R_OK, false), 0);
	assert_int_equal(sib_fs_access(&lk.node, X_OK, false), EACCES);
	if (getuid() != 0)
		assert_int_equal(sib_fs_access(&lk.node, W_OK, false), EACCES);

	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports"), SIB_FS_HIT);
	sib_fs_stat(&lk.node, &st2);
	assert_true(S_ISDIR(st2.st_mode));
	assert_int_equal(st2.st_mode & 07777, 0755);
	assert_int_not_equal(st2.st_ino, st.st_ino);
	assert_int_equal(sib_fs_access(&lk.node, R_OK | X_OK, false), 0);

	assert_int_equal(resolve("/dev/infiniband/" SIB_DEV_NAME), SIB_FS_HIT);
	sib_fs_stat(&lk.node, &st);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0666);
	assert_int_equal(major(st.st_rdev), 231);
	assert_int_equal(sib_fs_access(&lk.node, R_OK | W_OK, false), 0);
	assert_int_equal(sib_fs_access(&lk.node, R_OK | W_OK, true), 0);
}

static int cdev_open(int flags)
{
	(void)flags;
	return dup(0);
}

static void cdevs_register_once_by_valid_name(void **state)
{
	static const struct softib_cdev_ops a = { .name = "unit_a", .major = 10, .minor = 99,
						  .open = cdev_open };
	static const struct softib_cdev_ops again = { .name = "unit_a", .open = cdev_open };
	static const struct softib_cdev_ops noopen = { .name = "unit_b" };
	static const struct softib_cdev_ops slash = { .name = "a/b", .open = cdev_open };
	static const struct softib_cdev_ops dot = { .name = "..", .open = cdev_open };
	static const struct softib_cdev_ops empty = { .name = "", .open = cdev_open };
	static struct softib_cdev_ops many[40];
	static char names[40][16];
	struct stat st;
	int ret = 0;

	(void)state;
	assert_int_equal(softib_fs_add_cdev(&a), 0);
	assert_int_equal(softib_fs_add_cdev(&again), -EEXIST);
	assert_int_equal(softib_fs_add_cdev(&noopen), -EINVAL);
	assert_int_equal(softib_fs_add_cdev(&slash), -EINVAL);
	assert_int_equal(softib_fs_add_cdev(&dot), -EINVAL);
	assert_int_equal(softib_fs_add_cdev(&empty), -EINVAL);
	assert_int_equal(softib_fs_add_cdev(NULL), -EINVAL);

	assert_int_equal(resolve("/dev/infiniband/unit_a"), SIB_FS_HIT);
	assert_ptr_equal(sib_fs_cdev(&lk.node), &a);
	sib_fs_stat(&lk.node, &st);
	assert_int_equal(st.st_rdev, makedev(10, 99));
	assert_non_null(strstr(list("/dev/infiniband"), "unit_a"));

	/* The table is small and fixed: a full one says ENOMEM. */
	for (int i = 0; i < 40 && !ret; i++) {
		snprintf(names[i], sizeof(names[i]), "many%d", i);
		many[i] = (struct softib_cdev_ops){ .name = names[i], .open = cdev_open };
		ret = softib_fs_add_cdev(&many[i]);
	}
	assert_int_equal(ret, -ENOMEM);
}

/* ---- contents, from an HCA of the test's own ---- */

struct world {
	struct sib_mem_hub *hub;
	struct sib_hca *hca;
};

static int hca_setup(void **state)
{
	static struct world w;
	struct sib_hca_opts o = { 0 };
	struct sib_link *link;

	w.hub = sib_mem_hub_new();
	assert_int_equal(sib_link_mem_open(w.hub, 4096, &link), 0);
	o.link = link;
	o.sm = "none"; /* a subnet of one: ACTIVE at once with a LID of its own */
	o.no_thread = true;
	o.node_guid = 0x0211223344556670ull;
	w.hca = sib_hca_new(&o);
	assert_non_null(w.hca);
	sib_fs_use_hca(w.hca);
	*state = &w;
	return 0;
}

static int hca_teardown(void **state)
{
	struct world *w = *state;

	sib_fs_use_hca(NULL);
	sib_hca_free(w->hca);
	sib_mem_hub_free(w->hub);
	return 0;
}

static const char *text(const char *path)
{
	static char buf[4096];
	int n;

	assert_int_equal(resolve(path), SIB_FS_HIT);
	n = sib_fs_read_file(&lk.node, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	return buf;
}

static void files_use_the_kernels_formats(void **state)
{
	struct world *w = *state;
	char want[64];
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);

	assert_string_equal(text("/sys/class/infiniband/softib0/node_type"), "1: CA\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/node_guid"), "0211:2233:4455:6670\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/sys_image_guid"),
			    "0211:2233:4455:6670\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/fw_ver"), SIB_FW_VER "\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/hca_type"), "softib\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/hw_rev"), "1\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/board_id"), "softib\n");
	assert_non_null(strstr(text("/sys/class/infiniband/softib0/node_desc"), "softib0 port 1"));

	snprintf(want, sizeof(want), "0x%x\n", w->hca->node.ports[0].LID);
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/lid"), want);
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/state"), "4: ACTIVE\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/phys_state"), "5: LinkUp\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/rate"),
			    "40 Gb/sec (4X QDR)\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/cap_mask"), "0x00000800\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/link_layer"),
			    "InfiniBand\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/lid_mask_count"), "0\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/sm_sl"), "0\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/gids/0"),
			    "fe80:0000:0000:0000:0211:2233:4455:6671\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/gids/5"),
			    "0000:0000:0000:0000:0000:0000:0000:0000\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/pkeys/0"), "0xffff\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/device/numa_node"), "-1\n");
	assert_string_equal(text("/sys/class/infiniband_verbs/abi_version"), "6\n");
	assert_string_equal(text("/sys/class/misc/rdma_cm/abi_version"), "4\n");
	/* libibumad: abi_version >= 5, then umadN/ibdev and port for N < 64 */
	assert_string_equal(text("/sys/class/infiniband_mad/abi_version"), "5\n");
	assert_string_equal(text("/sys/class/infiniband_mad/umad31/ibdev"), SIB_DEV_NAME "\n");
	assert_string_equal(text("/sys/class/infiniband_mad/umad31/port"), "1\n");
	assert_string_equal(text("/sys/class/infiniband_mad/umad31/dev"), "231:31\n");
	assert_string_equal(text("/sys/class/infiniband_mad/issm31/dev"), "231:95\n");

	/* local_cpus: one bit per CPU, 32-bit hex words, first one trimmed. */
	if (ncpus <= 32)
		snprintf(want, sizeof(want), "%x\n",
			 ncpus == 32 ? 0xffffffffu : (1u << ncpus) - 1);
	else
		want[0] = 0;
	if (want[0])
		assert_string_equal(text("/sys/class/infiniband/softib0/device/local_cpus"), want);
	else
		assert_non_null(strchr(text("/sys/class/infiniband/softib0/device/local_cpus"), ','));
}

static void values_are_live(void **state)
{
	struct world *w = *state;

	/* The SM gives the port another LID and SM LID later on. */
	sib_node_port_set_lid(&w->hca->node, 1, 0x1234, 0x42);
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/lid"), "0x1234\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/sm_lid"), "0x42\n");
	sib_node_port_set_lid(&w->hca->node, 1, 7, 1);
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/lid"), "0x7\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/sm_lid"), "0x1\n");

	/* A port that goes down says so. */
	pthread_mutex_lock(&w->hca->node.lock);
	w->hca->node.ports[0].state = SIB_PORT_DOWN;
	pthread_mutex_unlock(&w->hca->node.lock);
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/state"), "1: DOWN\n");
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/phys_state"),
			    "3: Disabled\n");
	sib_node_port_set_lid(&w->hca->node, 1, 7, 1);
	assert_string_equal(text("/sys/class/infiniband/softib0/ports/1/state"), "4: ACTIVE\n");
}

static void directories_have_no_text(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(resolve("/sys/class/infiniband/softib0/ports"), SIB_FS_HIT);
	assert_int_equal(sib_fs_read_file(&lk.node, buf, sizeof(buf)), -EISDIR);
}

/* The port's interface: where the UDP socket is bound (here, without an
 * HCA of the view's own, where it would be bound: SOFTIB_ADDR). */
static void device_net_names_the_ports_interface(void **state)
{
	char name[16];
	char *old = getenv("SOFTIB_ADDR") ? strdup(getenv("SOFTIB_ADDR")) : NULL;
	bool have_lo;

	(void)state;
	setenv("SOFTIB_ADDR", "127.0.0.1", 1);
	have_lo = sib_fs_netdev(name);
	if (have_lo) {
		assert_string_equal(list("/sys/class/infiniband/softib0/device/net"), name);
		/* device/net/<if> is the interface's own sysfs directory. */
		char path[128], tail[40];

		snprintf(path, sizeof(path), "/sys/class/infiniband/softib0/device/net/%s/mtu", name);
		snprintf(tail, sizeof(tail), "/net/%s/mtu", name);
		assert_int_equal(resolve(path), SIB_FS_PASS);
		assert_true(lk.rewritten);
		assert_non_null(strstr(lk.path, tail));
		assert_int_equal(access(lk.path, R_OK), 0);
	}
	setenv("SOFTIB_ADDR", "203.0.113.9", 1); /* no interface has it */
	assert_false(sib_fs_netdev(name));
	assert_string_equal(list("/sys/class/infiniband/softib0/device/net"), "");
	if (old)
		setenv("SOFTIB_ADDR", old, 1);
	else
		unsetenv("SOFTIB_ADDR");
	free(old);
	if (!have_lo)
		sib_skip("no interface holds 127.0.0.1 here: device/net naming the port's "
			 "interface is unchecked (the case of no interface passed)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(absolute_paths_of_softib0_resolve_to_their_nodes),
		cmocka_unit_test(paths_that_are_not_softib0s_go_to_libc_unchanged),
		cmocka_unit_test(bad_paths_get_the_errors_sysfs_gives),
		cmocka_unit_test(relative_paths_resolve_against_a_virtual_base),
		cmocka_unit_test(directories_list_what_the_kernel_lists),
		cmocka_unit_test(stat_and_access_match_sysfs_and_dev),
		cmocka_unit_test(cdevs_register_once_by_valid_name),
		cmocka_unit_test(device_net_names_the_ports_interface),
		cmocka_unit_test(directories_have_no_text),
		cmocka_unit_test_setup_teardown(files_use_the_kernels_formats, hca_setup,
						hca_teardown),
		cmocka_unit_test_setup_teardown(values_are_live, hca_setup, hca_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

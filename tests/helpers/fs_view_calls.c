/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Run under `softib run` (tests/integration/test_fs_view.sh).  The file-
 * system view through the C library, as programs call it: every file of
 * softib0's sysfs tree readable in the kernel's format and equal to what
 * verbs say in this same process; directories listing what they should;
 * bad calls getting sysfs's errors; paths and descriptors that are not
 * softib0's behaving exactly as the kernel has them (checked against raw
 * system calls, which bypass the view); the character-device hook
 * (softib_fs_add_cdev) through open/fstat/write/poll/epoll/read/dup/close;
 * and the descriptor table surviving close_range, fclose and a vfork child.
 * Prints "ok NAME" per check group and exits 0 when every check passed.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "provider/fs_view.h"

static int failures;
static const char *volatile null_path; /* NULL the compiler cannot see */
/* open through a pointer: a direct call with NULL is what UBSan's nonnull
 * check stops in this program; the point is what the library answers. */
static int (*volatile open_any)(const char *, int, ...) = open;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static int group_failures;
static void group(const char *name)
{
	if (failures == group_failures)
		printf("ok %s\n", name);
	group_failures = failures;
}

#define IB "/sys/class/infiniband/softib0"

/* The whole text of a file, through open/read/close. */
static bool slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, total = 0;

	buf[0] = 0;
	if (fd < 0)
		return false;
	while ((n = read(fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total > 0 ? total : 0] = 0;
	return n == 0;
}

static unsigned long num(const char *path)
{
	char buf[64];

	CHECK(slurp(path, buf, sizeof(buf)), "read %s: %s", path, strerror(errno));
	return strtoul(buf, NULL, 0);
}

/* ---------------------------------------------------------------- against verbs */

static void files_agree_with_verbs(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	char buf[256], want[256];
	int n = 0;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0")) {
			n++;
			ctx = ibv_open_device(list[i]);
		}
	CHECK(n == 1, "ibv_get_device_list lists softib0 %d times, want once", n);
	CHECK(ctx, "cannot open softib0");
	if (!ctx)
		return;
	CHECK(!ibv_query_device(ctx, &da), "query_device");
	CHECK(!ibv_query_port(ctx, 1, &pa), "query_port");
	CHECK(pa.state == IBV_PORT_ACTIVE, "port not ACTIVE (%d)", pa.state);

	uint64_t g = be64toh(da.node_guid);
	snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48),
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
	CHECK(slurp(IB "/node_guid", buf, sizeof(buf)) && !strcmp(buf, want),
	      "node_guid '%s' want '%s'", buf, want);
	g = be64toh(da.sys_image_guid);
	snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48),
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
	CHECK(slurp(IB "/sys_image_guid", buf, sizeof(buf)) && !strcmp(buf, want),
	      "sys_image_guid '%s' want '%s'", buf, want);
	snprintf(want, sizeof(want), "%s\n", da.fw_ver);
	CHECK(slurp(IB "/fw_ver", buf, sizeof(buf)) && !strcmp(buf, want), "fw_ver '%s'", buf);
	CHECK(slurp(IB "/node_type", buf, sizeof(buf)) && !strcmp(buf, "1: CA\n"), "node_type '%s'",
	      buf);
	CHECK(slurp(IB "/hw_rev", buf, sizeof(buf)) && strtoul(buf, NULL, 16) == da.hw_ver,
	      "hw_rev '%s' want %x", buf, da.hw_ver);

	CHECK(num(IB "/ports/1/lid") == pa.lid, "lid %lu want %u", num(IB "/ports/1/lid"), pa.lid);
	CHECK(num(IB "/ports/1/sm_lid") == pa.sm_lid, "sm_lid");
	CHECK(num(IB "/ports/1/sm_sl") == pa.sm_sl, "sm_sl");
	CHECK(num(IB "/ports/1/lid_mask_count") == pa.lmc, "lid_mask_count");
	CHECK(num(IB "/ports/1/cap_mask") == pa.port_cap_flags, "cap_mask");
	CHECK(num(IB "/ports/1/state") == pa.state, "state");
	CHECK(slurp(IB "/ports/1/state", buf, sizeof(buf)) && !strcmp(buf, "4: ACTIVE\n"),
	      "state text '%s'", buf);
	CHECK(num(IB "/ports/1/phys_state") == pa.phys_state, "phys_state");
	CHECK(slurp(IB "/ports/1/link_layer", buf, sizeof(buf)) && !strcmp(buf, "InfiniBand\n"),
	      "link_layer '%s'", buf);
	/* active_width 2 = 4X, active_speed 4 = QDR (10 Gb/s a lane) */
	CHECK(pa.active_width == 2 && pa.active_speed == 4, "width %u speed %u", pa.active_width,
	      pa.active_speed);
	CHECK(slurp(IB "/ports/1/rate", buf, sizeof(buf)) && !strcmp(buf, "40 Gb/sec (4X QDR)\n"),
	      "rate '%s'", buf);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid gid;
		char path[128];
		char *p = want;

		snprintf(path, sizeof(path), IB "/ports/1/gids/%d", i);
		CHECK(!ibv_query_gid(ctx, 1, i, &gid), "query_gid %d", i);
		for (int b = 0; b < 16; b += 2)
			p += sprintf(p, "%02x%02x%s", gid.raw[b], gid.raw[b + 1], b < 14 ? ":" : "\n");
		CHECK(slurp(path, buf, sizeof(buf)) && !strcmp(buf, want), "%s '%s' want '%s'",
		      path, buf, want);
	}
	for (int i = 0; i < 1; i++) {
		__be16 pkey;

		CHECK(!ibv_query_pkey(ctx, 1, i, &pkey), "query_pkey");
		CHECK(num(IB "/ports/1/pkeys/0") == be16toh(pkey), "pkeys/0");
	}
	CHECK(slurp(IB "/board_id", buf, sizeof(buf)) && buf[0] && strchr(buf, '\n'), "board_id");
	CHECK(slurp(IB "/device/numa_node", buf, sizeof(buf)) && !strcmp(buf, "-1\n"), "numa_node");
	CHECK(slurp(IB "/device/local_cpus", buf, sizeof(buf)) && strtoul(buf, NULL, 16) & 1,
	      "local_cpus '%s'", buf);
	CHECK(slurp("/sys/class/infiniband_verbs/abi_version", buf, sizeof(buf)) &&
		      !strcmp(buf, "6\n"),
	      "infiniband_verbs/abi_version");
	CHECK(slurp("/sys/class/misc/rdma_cm/abi_version", buf, sizeof(buf)) && !strcmp(buf, "4\n"),
	      "rdma_cm/abi_version");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	group("files_agree_with_verbs");
}

/* ---------------------------------------------------------------- files */

static void file_descriptors_behave_like_sysfs(void)
{
	struct stat st;
	char buf[64];
	int fd = open(IB "/ports/1/state", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "open state: %s", strerror(errno));
	CHECK(!fstat(fd, &st) && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0444 &&
		      st.st_size == 4096,
	      "fstat of a sysfs file: mode %o size %ld", st.st_mode, (long)st.st_size);
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "O_CLOEXEC not kept");
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "not read-only");
	CHECK(read(fd, buf, 3) == 3 && !strncmp(buf, "4: ", 3), "partial read");
	CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek");
	CHECK(read(fd, buf, sizeof(buf)) == 10, "read after lseek");
	errno = 0;
	CHECK(write(fd, "1", 1) == -1 && errno == EBADF, "write to sysfs: %s", strerror(errno));
	CHECK(!close(fd), "close");

	FILE *f = fopen(IB "/ports/1/link_layer", "re");
	CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "InfiniBand\n"), "fopen/fgets");
	if (f)
		fclose(f);
	errno = 0;
	CHECK(!fopen(IB "/ports/1/lid", "w") && errno == EACCES, "fopen w: %s", strerror(errno));
	errno = 0;
	CHECK(!fopen(IB "/nosuch", "r") && errno == ENOENT, "fopen missing");

	fd = open(IB "/node_guid", O_PATH);
	CHECK(fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode), "O_PATH open and fstat");
	errno = 0;
	CHECK(read(fd, buf, 1) == -1 && errno == EBADF, "read of O_PATH");
	close(fd);
	group("file_descriptors_behave_like_sysfs");
}

static void bad_calls_get_sysfs_errors(void)
{
	char longpath[PATH_MAX + 100];
	int fd;

#define EXPECT_OPEN_FAILS(err, ...)                                                                \
	do {                                                                                       \
		errno = 0;                                                                         \
		fd = open(__VA_ARGS__);                                                            \
		CHECK(fd == -1 && errno == (err), "open(%s): %d %s, want %s", #__VA_ARGS__, fd,    \
		      strerror(errno), strerror(err));                                             \
		if (fd >= 0)                                                                       \
			close(fd);                                                                 \
	} while (0)

	EXPECT_OPEN_FAILS(EACCES, IB "/ports/1/lid", O_WRONLY);
	EXPECT_OPEN_FAILS(EACCES, IB "/ports/1/lid", O_RDWR);
	EXPECT_OPEN_FAILS(EACCES, IB "/ports/1/lid", O_RDONLY | O_TRUNC);
	EXPECT_OPEN_FAILS(EEXIST, IB "/ports/1/lid", O_WRONLY | O_CREAT | O_EXCL, 0600);
	EXPECT_OPEN_FAILS(EACCES, IB "/ports/1/newfile", O_WRONLY | O_CREAT, 0600);
	EXPECT_OPEN_FAILS(ENOENT, IB "/ports/1/newfile", O_RDONLY);
	EXPECT_OPEN_FAILS(ENOTDIR, IB "/ports/1/lid", O_RDONLY | O_DIRECTORY);
	EXPECT_OPEN_FAILS(ENOTDIR, IB "/ports/1/lid/x", O_RDONLY);
	EXPECT_OPEN_FAILS(EISDIR, IB "/ports", O_WRONLY);
	EXPECT_OPEN_FAILS(EISDIR, IB "/ports", O_RDWR);
	EXPECT_OPEN_FAILS(ENOENT, IB "/ports/2", O_RDONLY);
	EXPECT_OPEN_FAILS(ENXIO, "/dev/infiniband/softib0", O_RDWR | O_CLOEXEC);
	errno = 0;
	fd = open_any(null_path, O_RDONLY);
	CHECK(fd == -1 && errno == EFAULT, "open(NULL): %d %s", fd, strerror(errno));
	memset(longpath, 'x', sizeof(longpath));
	memcpy(longpath, IB "/", strlen(IB "/"));
	longpath[sizeof(longpath) - 1] = 0;
	EXPECT_OPEN_FAILS(ENAMETOOLONG, longpath, O_RDONLY);
	longpath[strlen(IB "/") + NAME_MAX + 5] = 0;
	EXPECT_OPEN_FAILS(ENAMETOOLONG, longpath, O_RDONLY);

	errno = 0;
	CHECK(access(IB "/ports/1/lid", X_OK) == -1 && errno == EACCES, "access X_OK on a file");
	errno = 0;
	CHECK(access(IB "/nosuch", F_OK) == -1 && errno == ENOENT, "access missing");
	errno = 0;
	CHECK(access(IB "/ports/1/lid", 0x40) == -1 && errno == EINVAL, "access bad mode");
	errno = 0;
	CHECK(opendir(IB "/node_guid") == NULL && errno == ENOTDIR, "opendir of a file");
	errno = 0;
	CHECK(chdir(IB "/node_guid") == -1 && errno == ENOTDIR, "chdir to a file");
	char buf[8];
	errno = 0;
	CHECK(readlink(IB, buf, sizeof(buf)) == -1 && errno == EINVAL, "readlink: not a link");
	group("bad_calls_get_sysfs_errors");
}

/* ---------------------------------------------------------------- directories */

static bool names_are(const char *dir, const char *want)
{
	struct dirent **names;
	char got[512] = "";
	int n = scandir(dir, &names, NULL, alphasort);

	if (n < 0)
		return false;
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			strcat(got, got[0] ? " " : "");
			strcat(got, names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	if (strcmp(got, want))
		printf("     %s lists '%s', want '%s'\n", dir, got, want);
	return !strcmp(got, want);
}

static void directories_list_what_they_hold(void)
{
	DIR *d;
	struct dirent *e;
	int n = 0, dots = 0, dirs = 0, regs = 0;
	struct stat st;

	CHECK(names_are(IB, "board_id device fw_ver hca_type hw_rev node_desc node_guid node_type "
			    "ports sys_image_guid"),
	      "softib0");
	CHECK(names_are(IB "/ports/1", "cap_mask gids lid lid_mask_count link_layer phys_state "
					"pkeys rate sm_lid sm_sl state"),
	      "ports/1");
	/* One entry per P_Key table slot (pkey_tbl_len 16), as the kernel lists them. */
	CHECK(names_are(IB "/ports/1/pkeys", "0 1 10 11 12 13 14 15 2 3 4 5 6 7 8 9"), "pkeys");
	CHECK(names_are(IB "/device/net", "lo"), "device/net (SOFTIB_ADDR is 127.0.0.1 here)");
	CHECK(names_are("/sys/class/infiniband_verbs", "abi_version"), "infiniband_verbs");

	d = opendir(IB);
	CHECK(d, "opendir");
	while (d && (e = readdir(d))) {
		n++;
		dots += !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		dirs += e->d_type == DT_DIR;
		regs += e->d_type == DT_REG;
	}
	CHECK(n == 12 && dots == 2 && dirs == 4 && regs == 8, "readdir: %d entries, %d dots", n,
	      dots);
	if (d) {
		long pos;

		rewinddir(d);
		CHECK(readdir(d) != NULL, "readdir after rewinddir");
		pos = telldir(d);
		e = readdir(d);
		char name[256];
		snprintf(name, sizeof(name), "%s", e ? e->d_name : "");
		seekdir(d, pos);
		e = readdir(d);
		CHECK(e && !strcmp(e->d_name, name), "seekdir/telldir");
		/* readdir_r: deprecated, and what libucs uses. */
		struct dirent ent, *res;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		CHECK(!readdir_r(d, &ent, &res) && res == &ent, "readdir_r");
#pragma GCC diagnostic pop
		CHECK(dirfd(d) >= 0 && !fstat(dirfd(d), &st) && S_ISDIR(st.st_mode), "dirfd/fstat");
		CHECK(!closedir(d), "closedir");
	}

	/* fdopendir and openat on a descriptor of the view's (python's
	 * os.listdir(fd), libibverbs' sysfs walk). */
	int dfd = open(IB "/ports", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0, "open a directory");
	int lfd = openat(dfd, "1/lid", O_RDONLY);
	CHECK(lfd >= 0, "openat relative to a directory of the view");
	if (lfd >= 0)
		close(lfd);
	CHECK(!fstatat(dfd, "1/gids", &st, 0) && S_ISDIR(st.st_mode), "fstatat relative");
	errno = 0;
	CHECK(read(dfd, &st, 1) == -1 && errno == EISDIR, "read of a directory: %s",
	      strerror(errno));
	d = fdopendir(dfd);
	CHECK(d && (e = readdir(d)) != NULL, "fdopendir");
	if (d)
		closedir(d);
	else if (dfd >= 0)
		close(dfd);

	/* A real directory keeps its entries, with the view's added. */
	CHECK(!stat("/sys/class", &st) && S_ISDIR(st.st_mode), "stat /sys/class");
	int has_ib = 0, has_net = 0;
	d = opendir("/sys/class");
	while (d && (e = readdir(d))) {
		has_ib += !strcmp(e->d_name, "infiniband");
		has_net += !strcmp(e->d_name, "net");
	}
	if (d)
		closedir(d);
	CHECK(has_ib == 1 && has_net == 1, "/sys/class lists infiniband %d, net %d", has_ib,
	      has_net);
	group("directories_list_what_they_hold");
}

static void working_directory_can_be_the_views(void)
{
	char old[PATH_MAX], cwd[PATH_MAX], buf[64];
	struct stat st;

	CHECK(getcwd(old, sizeof(old)) != NULL, "getcwd");
	CHECK(!chdir(IB "/ports"), "chdir into the view: %s", strerror(errno));
	CHECK(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, IB "/ports"), "getcwd says '%s'", cwd);
	CHECK(slurp("1/state", buf, sizeof(buf)) && !strcmp(buf, "4: ACTIVE\n"),
	      "relative open in the view: '%s'", buf);
	CHECK(!stat("1", &st) && S_ISDIR(st.st_mode), "relative stat");
	CHECK(!access("1/lid", R_OK), "relative access");
	CHECK(!chdir("1/gids"), "relative chdir");
	CHECK(slurp("../state", buf, sizeof(buf)) && !strcmp(buf, "4: ACTIVE\n"), "../state");
	CHECK(!chdir("../../../../../../class"), "chdir .. out of the view");
	CHECK(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, "/sys/class"), "back at '%s'", cwd);
	CHECK(!stat("net", &st) && S_ISDIR(st.st_mode), "/sys/class/net from /sys/class");
	CHECK(!chdir(old), "chdir back");
	group("working_directory_can_be_the_views");
}

/* ---------------------------------------------------------------- not ours */

static long raw_stat_ino(const char *path, int *err)
{
	struct stat st;
	long r = syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0);

	*err = r ? errno : 0;
	return r ? -1 : (long)st.st_ino;
}

static void other_paths_are_the_kernels(void)
{
	static const char *const paths[] = {
		"/etc/hostname",    "/dev/null",	 "/sys/class/net/lo",
		"/sys/class/infiniband/mlx5_0", "/dev/infiniband/uverbs7", "/sys/class/nosuch",
		"/proc/self/status", "/",
	};
	char a[256], b[256];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct stat st;
		int raw_err, err;
		long ino = raw_stat_ino(paths[i], &raw_err);

		errno = 0;
		err = stat(paths[i], &st) ? errno : 0;
		CHECK(err == raw_err && (err || (long)st.st_ino == ino),
		      "stat %s: %s / ino %ld, the kernel says %s / ino %ld", paths[i],
		      strerror(err), err ? 0L : (long)st.st_ino, strerror(raw_err), ino);
		errno = 0;
		err = access(paths[i], R_OK) ? errno : 0;
		raw_err = syscall(SYS_faccessat, AT_FDCWD, paths[i], R_OK) ? errno : 0;
		CHECK(err == raw_err, "access %s: %s, the kernel says %s", paths[i], strerror(err),
		      strerror(raw_err));
	}
	/* Reading a real file gives the kernel's bytes. */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/etc/hostname", O_RDONLY);
	ssize_t n = fd >= 0 ? syscall(SYS_read, fd, a, sizeof(a)) : -1;
	if (fd >= 0)
		syscall(SYS_close, fd);
	CHECK(n >= 0 && slurp("/etc/hostname", b, sizeof(b)) && (size_t)n == strlen(b) &&
		      !memcmp(a, b, (size_t)n),
	      "/etc/hostname reads differently");
	group("other_paths_are_the_kernels");
}

/* ---------------------------------------------------------------- the cdev hook */

static struct {
	int peer[64];	    /* the far end of each open's socketpair, by fd */
	char last[64];	    /* the last command written */
	int last_fd;	    /* which fd write saw */
	int closed[8];
	int nclosed;
	int flags_seen;
} cd;

static int test_cdev_open(int flags)
{
	int sv[2];

	cd.flags_seen = flags;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | ((flags & O_CLOEXEC) ? SOCK_CLOEXEC : 0), 0, sv))
		return -1;
	if (sv[0] >= 64) {
		close(sv[0]);
		close(sv[1]);
		errno = EMFILE;
		return -1;
	}
	cd.peer[sv[0]] = sv[1];
	return sv[0];
}

/* A command in; its answer becomes readable on the descriptor, as an event
 * on the rdma_cm channel does. */
static ssize_t test_cdev_write(int fd, const void *buf, size_t len)
{
	char reply[80];

	if (fd < 0 || fd >= 64 || !cd.peer[fd]) {
		errno = EBADF;
		return -1;
	}
	cd.last_fd = fd;
	snprintf(cd.last, sizeof(cd.last), "%.*s", (int)len, (const char *)buf);
	snprintf(reply, sizeof(reply), "done:%s", cd.last);
	if (send(cd.peer[fd], reply, strlen(reply), 0) < 0)
		return -1;
	return (ssize_t)len;
}

static void test_cdev_close(int fd)
{
	if (cd.nclosed < 8)
		cd.closed[cd.nclosed++] = fd;
	if (fd >= 0 && fd < 64 && cd.peer[fd]) {
		close(cd.peer[fd]);
		cd.peer[fd] = 0;
	}
}

static const struct softib_cdev_ops test_cdev = {
	.name = "fsview_test",
	.major = 10,
	.minor = 200,
	.open = test_cdev_open,
	.write = test_cdev_write,
	.close = test_cdev_close,
};

static void cdev_hook_works_through_libc(void)
{
	int (*add)(const struct softib_cdev_ops *) =
		(int (*)(const struct softib_cdev_ops *))dlvsym(RTLD_DEFAULT, "softib_fs_add_cdev",
								 "SOFTIB_PRIVATE_1");
	struct stat st;
	char buf[80];
	int fd, fd2, copy;

	CHECK(add, "libsoftib.so exports no softib_fs_add_cdev@SOFTIB_PRIVATE_1");
	if (!add)
		return;
	errno = 0;
	CHECK(stat("/dev/infiniband/fsview_test", &st) == -1 && errno == ENOENT,
	      "the node exists before it is registered");
	CHECK(add(&test_cdev) == 0, "register");
	CHECK(add(&test_cdev) == -EEXIST, "register twice");

	CHECK(!stat("/dev/infiniband/fsview_test", &st) && S_ISCHR(st.st_mode) &&
		      st.st_rdev == makedev(10, 200),
	      "stat of the node");
	CHECK(!access("/dev/infiniband/fsview_test", R_OK | W_OK), "access R|W");
	/* rdma_cm, umad31, issm31: the RDMA CM channel and the user-MAD
	 * devices, registered by libsoftib.so itself. */
	CHECK(names_are("/dev/infiniband", "fsview_test issm31 rdma_cm softib0 umad31"),
	      "/dev/infiniband lists it");

	fd = open("/dev/infiniband/fsview_test", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	if (fd < 0)
		return;
	CHECK(cd.flags_seen == (O_RDWR | O_CLOEXEC), "open got flags 0x%x", cd.flags_seen);
	CHECK(!fstat(fd, &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(10, 200),
	      "fstat says S_ISCHR 10:200 (mode %o)", st.st_mode);
	CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0, "O_NONBLOCK");

	struct pollfd p = { .fd = fd, .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0, "readable before any command");
	errno = 0;
	CHECK(read(fd, buf, sizeof(buf)) == -1 && errno == EAGAIN, "nonblocking read: %s",
	      strerror(errno));
	CHECK(write(fd, "CREATE_ID", 9) == 9 && cd.last_fd == fd && !strcmp(cd.last, "CREATE_ID"),
	      "write reaches ops->write with the fd");
	CHECK(poll(&p, 1, 1000) == 1 && (p.revents & POLLIN), "poll: readable after a command");
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	CHECK(ep >= 0 && !epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) && epoll_wait(ep, &out, 1, 1000) == 1,
	      "epoll");
	close(ep);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	CHECK(n == 14 && !memcmp(buf, "done:CREATE_ID", 14), "read the answer (%zd)", n);

	/* A copy writes as the original; closing it tells the device nothing. */
	copy = dup(fd);
	CHECK(copy >= 0 && write(copy, "QUERY", 5) == 5 && cd.last_fd == fd, "write on a dup");
	CHECK(!fstat(copy, &st) && S_ISCHR(st.st_mode), "fstat of a dup");
	close(copy);
	CHECK(cd.nclosed == 0, "closing a copy closed the device");

	/* A second open is a second descriptor of its own. */
	fd2 = open("/dev/infiniband/fsview_test", O_RDWR);
	CHECK(fd2 >= 0 && fd2 != fd && write(fd2, "X", 1) == 1 && cd.last_fd == fd2, "second open");

	/* dup2 over a device descriptor closes it: the device hears of it. */
	int devnull = open("/dev/null", O_RDONLY);
	CHECK(dup2(devnull, fd2) == fd2 && cd.nclosed == 1 && cd.closed[0] == fd2,
	      "dup2 over a device descriptor");
	CHECK(!fstat(fd2, &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3),
	      "after dup2 the descriptor is /dev/null");
	close(fd2);
	close(devnull);

	CHECK(!close(fd) && cd.nclosed == 2 && cd.closed[1] == fd, "close reaches ops->close");
	errno = 0;
	CHECK(write(fd, "Y", 1) == -1 && errno == EBADF, "a closed descriptor is closed");
	errno = 0;
	CHECK(open("/dev/infiniband/fsview_test", O_RDWR | O_DIRECTORY) == -1 && errno == ENOTDIR,
	      "O_DIRECTORY on a device");
	group("cdev_hook_works_through_libc");
}

/* ---------------------------------------------------------------- the table stays true */

static void descriptor_table_stays_true(void)
{
	struct stat st;
	int fd, fd2;
	pid_t pid;
	FILE *f;

	/* close_range closes a view descriptor; the number is then a real
	 * file's (F_DUPFD puts /dev/null exactly there, as the kernel's next
	 * open would). */
	int devnull = open("/dev/null", O_RDONLY);
	fd = open(IB "/fw_ver", O_RDONLY);
	CHECK(fd >= 0, "open");
	CHECK(!close_range((unsigned)fd, (unsigned)fd, 0), "close_range");
	fd2 = fcntl(devnull, F_DUPFD, fd);
	CHECK(fd2 == fd && !fstat(fd2, &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3),
	      "fd %d reused after close_range is /dev/null", fd2);
	close(fd2);

	/* The same through fclose, which closes inside libc. */
	f = fopen(IB "/fw_ver", "r");
	fd = f ? fileno(f) : -1;
	CHECK(f && !fclose(f), "fopen/fclose");
	fd2 = fcntl(devnull, F_DUPFD, fd);
	CHECK(fd2 == fd && !fstat(fd2, &st) && st.st_rdev == makedev(1, 3),
	      "fd reused after fclose is /dev/null");
	close(fd2);
	close(devnull);

	/* A vfork child shares our memory, not our descriptors: its close
	 * must not make the parent forget its own. */
	fd = open(IB "/fw_ver", O_RDONLY);
	pid = vfork();
	if (pid == 0) {
		close(fd);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	CHECK(!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size == 4096,
	      "after a vfork child closed it, fstat is the view's");
	close(fd);

	/* A fork child has its own table. */
	fd = open(IB "/fw_ver", O_RDONLY);
	pid = fork();
	if (pid == 0) {
		struct stat cst;

		int dn = open("/dev/null", O_RDONLY);

		close(fd);
		int n = fcntl(dn, F_DUPFD, fd);
		_exit(n == fd && !fstat(n, &cst) && cst.st_rdev == makedev(1, 3) ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork child's table");
	CHECK(!fstat(fd, &st) && st.st_size == 4096, "parent's table after fork");
	close(fd);
	group("descriptor_table_stays_true");
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	setvbuf(stdout, NULL, _IOLBF, 0);
	files_agree_with_verbs();
	file_descriptors_behave_like_sysfs();
	bad_calls_get_sysfs_errors();
	directories_list_what_they_hold();
	working_directory_can_be_the_views();
	other_paths_are_the_kernels();
	cdev_hook_works_through_libc();
	descriptor_table_stays_true();
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

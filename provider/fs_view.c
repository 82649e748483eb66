/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The C library's path calls, answered for the view's paths (fs_view.h)
 * and handed to libc for everything else; the descriptors they hand out
 * are fs_fds.c's, directory streams fs_dirs.c's (fs_libc.h).
 *
 * Which calls (objdump -T of the programs that look for devices): ibstat
 * and libibumad use open/read/close, stat, opendir/readdir and scandir;
 * ibstatus is a dash script (chdir, faccessat, opendir/readdir64, stat64)
 * running cat (open, fstat, read); UCX's libuct_ib stat and access
 * /dev/infiniband/<dev_name> and __realpath_chk the device's sysfs path,
 * libucs reads sysfs with open/read and readdir_r; libibverbs and librdmacm
 * use open, openat, fopen, fstat, opendir/readdir/dirfd; Open MPI stat,
 * fopen, access, opendir; python (pyverbs) open64, stat64, fstatat64,
 * access, opendir/fdopendir/readdir64, and runs ls (statx, lgetxattr,
 * opendir) and ip.  glibc's fopen, scandir and realpath call open/readdir/
 * lstat inside the library, past any interposer, so they are answered here
 * too, as are the older __xstat family and the _FORTIFY_SOURCE entry
 * points.
 *
 * The working directory can be a directory only the view has (ibstatus
 * does `cd /sys/class/infiniband`): chdir then records it, getcwd reports
 * it and relative paths resolve against it; the kernel's working directory
 * moves to the nearest real ancestor.
 */
#undef _FORTIFY_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "provider/fs_libc.h"

/* ---------------------------------------------------------------- libc's own */

DEFINE_REAL(int, open, "GLIBC_2.2.5", (const char *, int, ...))
DEFINE_REAL(int, open64, "GLIBC_2.2.5", (const char *, int, ...))
DEFINE_REAL(int, openat64, "GLIBC_2.4", (int, const char *, int, ...))
DEFINE_REAL(int, __open_2, "GLIBC_2.7", (const char *, int))
DEFINE_REAL(int, __open64_2, "GLIBC_2.7", (const char *, int))
DEFINE_REAL(int, __openat_2, "GLIBC_2.7", (int, const char *, int))
DEFINE_REAL(int, __openat64_2, "GLIBC_2.7", (int, const char *, int))
DEFINE_REAL(FILE *, fopen, "GLIBC_2.2.5", (const char *, const char *))
DEFINE_REAL(FILE *, fopen64, "GLIBC_2.2.5", (const char *, const char *))
DEFINE_REAL(int, stat, "GLIBC_2.33", (const char *, struct stat *))
DEFINE_REAL(int, stat64, "GLIBC_2.33", (const char *, struct stat64 *))
DEFINE_REAL(int, lstat, "GLIBC_2.33", (const char *, struct stat *))
DEFINE_REAL(int, lstat64, "GLIBC_2.33", (const char *, struct stat64 *))
DEFINE_REAL(int, fstatat, "GLIBC_2.33", (int, const char *, struct stat *, int))
DEFINE_REAL(int, fstatat64, "GLIBC_2.33", (int, const char *, struct stat64 *, int))
DEFINE_REAL(int, __xstat, "GLIBC_2.2.5", (int, const char *, struct stat *))
DEFINE_REAL(int, __xstat64, "GLIBC_2.2.5", (int, const char *, struct stat64 *))
DEFINE_REAL(int, __lxstat, "GLIBC_2.2.5", (int, const char *, struct stat *))
DEFINE_REAL(int, __lxstat64, "GLIBC_2.2.5", (int, const char *, struct stat64 *))
DEFINE_REAL(int, __fxstatat, "GLIBC_2.4", (int, int, const char *, struct stat *, int))
DEFINE_REAL(int, __fxstatat64, "GLIBC_2.4", (int, int, const char *, struct stat64 *, int))
DEFINE_REAL(int, statx, "GLIBC_2.28", (int, const char *, int, unsigned, struct statx *))
DEFINE_REAL(int, access, "GLIBC_2.2.5", (const char *, int))
DEFINE_REAL(int, faccessat, "GLIBC_2.4", (int, const char *, int, int))
DEFINE_REAL(int, euidaccess, "GLIBC_2.2.5", (const char *, int))
DEFINE_REAL(int, eaccess, "GLIBC_2.4", (const char *, int))
DEFINE_REAL(ssize_t, readlink, "GLIBC_2.2.5", (const char *, char *, size_t))
DEFINE_REAL(ssize_t, readlinkat, "GLIBC_2.4", (int, const char *, char *, size_t))
DEFINE_REAL(char *, realpath, "GLIBC_2.3", (const char *, char *))
DEFINE_REAL(char *, __realpath_chk, "GLIBC_2.4", (const char *, char *, size_t))
DEFINE_REAL(char *, canonicalize_file_name, "GLIBC_2.2.5", (const char *))
DEFINE_REAL(int, chdir, "GLIBC_2.2.5", (const char *))
DEFINE_REAL(int, fchdir, "GLIBC_2.2.5", (int))
DEFINE_REAL(char *, getcwd, "GLIBC_2.2.5", (char *, size_t))
DEFINE_REAL(char *, __getcwd_chk, "GLIBC_2.4", (char *, size_t, size_t))
DEFINE_REAL(char *, get_current_dir_name, "GLIBC_2.2.5", (void))
DEFINE_REAL(ssize_t, getxattr, "GLIBC_2.3", (const char *, const char *, void *, size_t))
DEFINE_REAL(ssize_t, lgetxattr, "GLIBC_2.3", (const char *, const char *, void *, size_t))
DEFINE_REAL(ssize_t, listxattr, "GLIBC_2.3", (const char *, char *, size_t))
DEFINE_REAL(ssize_t, llistxattr, "GLIBC_2.3", (const char *, char *, size_t))

/* Declared by no header of glibc 2.36, still exported. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);
char *__getcwd_chk(char *buf, size_t size, size_t buflen);

/* ---------------------------------------------------------------- working directory */

static int cwd_state;		  /* atomic */
static pthread_mutex_t cwd_lock = PTHREAD_MUTEX_INITIALIZER;
static char cwd_path[PATH_MAX];	  /* the real one (NEAR) or the view's (VIRTUAL) */

/* A relative path can reach the view from "/", /sys and /dev. */
static bool path_near_view(const char *p)
{
	return !strcmp(p, "/") || sib_fs_maybe_ours(p);
}

/* After the kernel's working directory changed (or at first use). */
static void cwd_refresh(void)
{
	char buf[PATH_MAX];
	bool ok;

	if (!sib_fsv_may_change())
		return;
	ok = REAL(getcwd, NULL, buf, sizeof(buf)) != NULL;
	pthread_mutex_lock(&cwd_lock);
	if (ok && path_near_view(buf)) {
		memcpy(cwd_path, buf, strlen(buf) + 1);
		__atomic_store_n(&cwd_state, CWD_NEAR, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&cwd_state, CWD_ELSEWHERE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cwd_lock);
}

int sib_fsv_cwd_state(void)
{
	int st = __atomic_load_n(&cwd_state, __ATOMIC_ACQUIRE);

	if (st == CWD_UNKNOWN) {
		cwd_refresh();
		st = __atomic_load_n(&cwd_state, __ATOMIC_ACQUIRE);
	}
	return st;
}

static void cwd_set_virtual(const char *path)
{
	pthread_mutex_lock(&cwd_lock);
	snprintf(cwd_path, sizeof(cwd_path), "%s", path);
	__atomic_store_n(&cwd_state, CWD_VIRTUAL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cwd_lock);
}

/* chdir into a directory only the view has: the kernel's working
 * directory moves to its nearest real ancestor, and the view keeps the
 * rest.  A program without softib started from here starts there. */
static void cwd_enter_virtual(const char *vpath)
{
	char p[PATH_MAX];
	char *slash;

	snprintf(p, sizeof(p), "%s", vpath);
	while ((slash = strrchr(p, '/'))) {
		if (slash == p) {
			REAL(chdir, -1, "/");
			break;
		}
		*slash = 0;
		if (REAL(chdir, -1, p) == 0)
			break;
	}
	cwd_set_virtual(vpath);
}

/* A process whose $PWD names a directory only the view has, below its
 * real working directory, starts in it: a shell that did cd there exported
 * PWD, and its children (cat, ls) inherit the real part only. */
__attribute__((constructor)) static void cwd_from_pwd(void)
{
	const char *pwd = getenv("PWD");
	struct sib_fs_lookup *lk;
	char real[PATH_MAX];
	size_t len;

	if (!pwd || !sib_fs_maybe_ours(pwd))
		return;
	lk = malloc(sizeof(*lk));
	if (!lk)
		return;
	if (sib_fs_resolve(NULL, false, pwd, lk) == SIB_FS_HIT &&
	    sib_fs_type(&lk->node) == SIB_FS_T_DIR &&
	    (!sib_fs_real_backed(&lk->node) || REAL(access, -1, lk->path, F_OK) != 0) &&
	    REAL(getcwd, NULL, real, sizeof(real))) {
		len = strlen(real);
		if (!strcmp(real, "/") ||
		    (!strncmp(lk->path, real, len) && lk->path[len] == '/'))
			cwd_set_virtual(lk->path);
	}
	free(lk);
}

/* ---------------------------------------------------------------- paths */

/* Where path (for dirfd) is: the view's node, an error the view answers,
 * or libc's (with lk->path instead of path when lk->rewritten). */
enum sib_fs_found sib_fsv_classify(int dirfd, const char *path, struct sib_fs_lookup *lk)
{
	char base[PATH_MAX];
	bool virt = false;
	unsigned k;

	lk->rewritten = false;
	path = launder(path);
	if (!path || !path[0])
		return SIB_FS_PASS;
	if (path[0] == '/')
		return sib_fs_resolve(NULL, false, path, lk);
	if (dirfd == AT_FDCWD) {
		int st = sib_fsv_cwd_state();

		if (st < CWD_NEAR)
			return SIB_FS_PASS;
		pthread_mutex_lock(&cwd_lock);
		st = cwd_state;
		memcpy(base, cwd_path, strlen(cwd_path) + 1);
		pthread_mutex_unlock(&cwd_lock);
		if (st < CWD_NEAR)
			return SIB_FS_PASS;
		virt = st == CWD_VIRTUAL;
	} else {
		k = kind_of(dirfd);
		if (k != FD_VDIR && k != FD_RDIR)
			return SIB_FS_PASS;
		if (!sib_fs_path(&sib_fsv_ents[dirfd].node, base, sizeof(base)))
			return SIB_FS_PASS;
		virt = k == FD_VDIR;
	}
	return sib_fs_resolve(base, virt, path, lk);
}

/* ---------------------------------------------------------------- open */

/* The descriptor for a file of the view: its text now, read-only. */
static int open_file(const struct sib_fs_node *n, int flags)
{
	char text[4096], proc[40];
	int len = sib_fs_read_file(n, text, sizeof(text));
	int mfd, fd;

	if (len < 0) {
		errno = -len;
		return -1;
	}
	mfd = (int)syscall(SYS_memfd_create, "softib-sysfs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -1;
	if (REAL(write, -1, mfd, text, (size_t)len) != len) {
		REAL(close, -1, mfd);
		errno = EIO;
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", mfd);
	fd = REAL(openat, -1, AT_FDCWD, proc,
		  (flags & O_PATH ? O_PATH : O_RDONLY) | (flags & (O_CLOEXEC | O_NONBLOCK)));
	if (fd >= 0) {
		REAL(close, -1, mfd);
		return fd;
	}
	/* No /proc: the memfd itself, sealed so that nothing changes it. */
	lseek(mfd, 0, SEEK_SET);
	REAL(fcntl, -1, mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	if (!(flags & O_CLOEXEC))
		REAL(fcntl, -1, mfd, F_SETFD, 0);
	if (flags & O_NONBLOCK)
		REAL(fcntl, -1, mfd, F_SETFL, O_NONBLOCK);
	return mfd;
}

/* open(2) of a node of the view, with the errors the kernel gives for
 * sysfs and device nodes. */
static int open_node(const struct sib_fs_lookup *lk, int flags, mode_t mode)
{
	const struct sib_fs_node *n = &lk->node;
	struct fd_entry e = { .node = *n, .key = -1 };
	int acc = flags & O_ACCMODE, fd;

	if ((flags & O_CREAT) && (flags & O_EXCL)) {
		errno = EEXIST;
		return -1;
	}
	switch (sib_fs_type(n)) {
	case SIB_FS_T_DIR:
		if (sib_fs_real_backed(n)) {
			fd = REAL(openat, -1, AT_FDCWD, lk->path, flags, mode);
			if (fd >= 0 || errno != ENOENT)
				return sib_fsv_finish(fd, FD_RDIR, &e);
		}
		if ((flags & __O_TMPFILE) == __O_TMPFILE) {
			errno = EOPNOTSUPP; /* sysfs makes no files */
			return -1;
		}
		if (acc != O_RDONLY || (flags & O_CREAT)) {
			errno = EISDIR;
			return -1;
		}
		return sib_fsv_finish(sib_fsv_memfd("softib-dir", flags), FD_VDIR, &e);
	case SIB_FS_T_FILE:
		if (flags & O_DIRECTORY) {
			errno = ENOTDIR;
			return -1;
		}
		if (!(flags & O_PATH) && (acc != O_RDONLY || (flags & O_TRUNC))) {
			errno = EACCES; /* kernfs: an attribute without a store method */
			return -1;
		}
		return sib_fsv_finish(open_file(n, flags), flags & O_PATH ? FD_OPATH : FD_FILE, &e);
	case SIB_FS_T_CDEV:
		if (flags & O_DIRECTORY) {
			errno = ENOTDIR;
			return -1;
		}
		if (flags & O_PATH)
			return sib_fsv_finish(sib_fsv_memfd("softib-dev", flags), FD_OPATH, &e);
		e.ops = sib_fs_cdev(n);
		if (!e.ops) {
			errno = ENODEV;
			return -1;
		}
		fd = e.ops->open(flags);
		if (fd < 0)
			return -1;
		if (fd >= FS_FD_MAX || !sib_fsv_may_change()) {
			/* The device knows this number: do not move it. */
			if (e.ops->close)
				e.ops->close(fd);
			REAL(close, -1, fd);
			errno = EMFILE;
			return -1;
		}
		e.key = fd;
		return sib_fsv_finish(fd, FD_CDEV, &e);
	}
	errno = ENOENT;
	return -1;
}

/* The slow path of every open: the path may be the view's. */
__attribute__((noinline)) static int view_openat(int dirfd, const char *path, int flags,
						 mode_t mode)
{
	struct sib_fs_lookup lk;

	switch (sib_fsv_classify(dirfd, path, &lk)) {
	case SIB_FS_PASS:
		path = pass_path(&dirfd, path, &lk);
		return REAL(openat, -1, dirfd, path, flags, mode);
	case SIB_FS_ERR:
		/* A name a sysfs directory does not have cannot be created. */
		errno = lk.err == ENOENT && lk.missing_in_dir && (flags & O_CREAT) ? EACCES : lk.err;
		return -1;
	default:
		return open_node(&lk, flags, mode);
	}
}

/* open's mode argument is there only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)                                                                     \
	do {                                                                                       \
		if (((flags) & O_CREAT) || ((flags) & __O_TMPFILE) == __O_TMPFILE) {               \
			va_list ap;                                                                \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, mode_t);                                                 \
			va_end(ap);                                                                \
		}                                                                                  \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(open, -1, path, flags, mode);
	return view_openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(open64, -1, path, flags, mode);
	return view_openat(AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!maybe_ours(dirfd, path))
		return REAL(openat, -1, dirfd, path, flags, mode);
	return view_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!maybe_ours(dirfd, path))
		return REAL(openat64, -1, dirfd, path, flags, mode);
	return view_openat(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE's open without a mode argument. */
int __open_2(const char *path, int flags)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(__open_2, -1, path, flags);
	return view_openat(AT_FDCWD, path, flags, 0);
}

int __open64_2(const char *path, int flags)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(__open64_2, -1, path, flags);
	return view_openat(AT_FDCWD, path, flags, 0);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	if (!maybe_ours(dirfd, path))
		return REAL(__openat_2, -1, dirfd, path, flags);
	return view_openat(dirfd, path, flags, 0);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	if (!maybe_ours(dirfd, path))
		return REAL(__openat64_2, -1, dirfd, path, flags);
	return view_openat(dirfd, path, flags, 0);
}

/* fopen's mode string as open flags (glibc's rules); -1 if invalid. */
static int fopen_flags(const char *mode)
{
	int flags;

	if (!mode)
		return -1;
	switch (mode[0]) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	for (const char *m = mode + 1; *m && m < mode + 7; m++) {
		if (*m == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'x')
			flags |= O_EXCL;
		else if (*m == 'e')
			flags |= O_CLOEXEC;
		else if (*m == ',')
			break;
	}
	return flags;
}

/* glibc's fopen opens inside the library, past open(). */
__attribute__((noinline)) static FILE *view_fopen(const char *path, const char *mode,
						  fopen_fn real)
{
	struct sib_fs_lookup lk;
	int flags, fd, dirfd = AT_FDCWD;
	FILE *f;

	switch (sib_fsv_classify(AT_FDCWD, path, &lk)) {
	case SIB_FS_PASS:
		path = pass_path(&dirfd, path, &lk);
		if (!real) {
			errno = ENOSYS;
			return NULL;
		}
		return real(path, mode);
	case SIB_FS_ERR:
		flags = fopen_flags(mode);
		errno = lk.err == ENOENT && lk.missing_in_dir && flags >= 0 && (flags & O_CREAT)
				? EACCES
				: lk.err;
		return NULL;
	default:
		break;
	}
	flags = fopen_flags(mode);
	if (flags < 0) {
		errno = EINVAL;
		return NULL;
	}
	fd = open_node(&lk, flags, 0666);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(fopen, NULL, path, mode);
	return view_fopen(path, mode, real_fopen());
}

FILE *fopen64(const char *path, const char *mode)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(fopen64, NULL, path, mode);
	return view_fopen(path, mode, real_fopen64());
}

/* ---------------------------------------------------------------- stat */

/* fstatat of a path that may be the view's: 0/-1 answered, -2 libc's. */
__attribute__((noinline)) static int view_fstatat(int *dirfd, const char **path,
						  struct stat *st, int flags)
{
	struct sib_fs_lookup lk;
	int ret;

	if (launder(*path) && !(*path)[0] && (flags & AT_EMPTY_PATH))
		return *dirfd == AT_FDCWD ? -2 : sib_fsv_fstat(*dirfd, st);
	switch (sib_fsv_classify(*dirfd, *path, &lk)) {
	case SIB_FS_PASS:
		if (lk.rewritten)
			return REAL(fstatat, -1, AT_FDCWD, lk.path, st, flags);
		return -2;
	case SIB_FS_ERR:
		errno = lk.err;
		return -1;
	default:
		break;
	}
	if (sib_fs_real_backed(&lk.node)) {
		ret = REAL(fstatat, -1, AT_FDCWD, lk.path, st, flags);
		if (ret == 0 || errno != ENOENT)
			return ret;
	}
	if (!launder(st)) {
		errno = EFAULT;
		return -1;
	}
	sib_fs_stat(&lk.node, st);
	return 0;
}

#define STAT_BODY(realcall, dirfd, path, st, flags)                                                \
	do {                                                                                       \
		int d_ = (dirfd), r_;                                                              \
		const char *p_ = (path);                                                           \
		if (!maybe_ours(d_, p_) &&                                                         \
		    !(launder(p_) && !p_[0] && ((flags) & AT_EMPTY_PATH) && kind_of(d_)))          \
			return realcall;                                                           \
		r_ = view_fstatat(&d_, &p_, (struct stat *)(st), (flags));                         \
		if (r_ != -2)                                                                      \
			return r_;                                                                 \
		return realcall;                                                                   \
	} while (0)

int stat(const char *path, struct stat *st)
{
	STAT_BODY(REAL(stat, -1, path, st), AT_FDCWD, path, st, 0);
}

int stat64(const char *path, struct stat64 *st)
{
	STAT_BODY(REAL(stat64, -1, path, st), AT_FDCWD, path, st, 0);
}

int lstat(const char *path, struct stat *st)
{
	STAT_BODY(REAL(lstat, -1, path, st), AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int lstat64(const char *path, struct stat64 *st)
{
	STAT_BODY(REAL(lstat64, -1, path, st), AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	STAT_BODY(REAL(fstatat, -1, dirfd, path, st, flags), dirfd, path, st, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	STAT_BODY(REAL(fstatat64, -1, dirfd, path, st, flags), dirfd, path, st, flags);
}

int __xstat(int ver, const char *path, struct stat *st)
{
	STAT_BODY(REAL(__xstat, -1, ver, path, st), AT_FDCWD, path, st, 0);
}

int __xstat64(int ver, const char *path, struct stat64 *st)
{
	STAT_BODY(REAL(__xstat64, -1, ver, path, st), AT_FDCWD, path, st, 0);
}

int __lxstat(int ver, const char *path, struct stat *st)
{
	STAT_BODY(REAL(__lxstat, -1, ver, path, st), AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	STAT_BODY(REAL(__lxstat64, -1, ver, path, st), AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	STAT_BODY(REAL(__fxstatat, -1, ver, dirfd, path, st, flags), dirfd, path, st, flags);
}

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	STAT_BODY(REAL(__fxstatat64, -1, ver, dirfd, path, st, flags), dirfd, path, st, flags);
}

static void stat_to_statx(const struct stat *st, unsigned mask, struct statx *sx)
{
	(void)mask; /* the basic fields are all there, whatever was asked */
	memset(sx, 0, sizeof(*sx));
	sx->stx_mask = STATX_BASIC_STATS;
	sx->stx_blksize = (uint32_t)st->st_blksize;
	sx->stx_nlink = (uint32_t)st->st_nlink;
	sx->stx_uid = st->st_uid;
	sx->stx_gid = st->st_gid;
	sx->stx_mode = (uint16_t)st->st_mode;
	sx->stx_ino = st->st_ino;
	sx->stx_size = (uint64_t)st->st_size;
	sx->stx_blocks = (uint64_t)st->st_blocks;
	sx->stx_atime.tv_sec = st->st_atim.tv_sec;
	sx->stx_atime.tv_nsec = (uint32_t)st->st_atim.tv_nsec;
	sx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
	sx->stx_mtime.tv_nsec = (uint32_t)st->st_mtim.tv_nsec;
	sx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
	sx->stx_ctime.tv_nsec = (uint32_t)st->st_ctim.tv_nsec;
	sx->stx_rdev_major = major(st->st_rdev);
	sx->stx_rdev_minor = minor(st->st_rdev);
	sx->stx_dev_major = major(st->st_dev);
	sx->stx_dev_minor = minor(st->st_dev);
}

int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	struct stat st;
	int d = dirfd, r;
	const char *p = path;

	if (!maybe_ours(dirfd, path) &&
	    !(launder(path) && !path[0] && (flags & AT_EMPTY_PATH) && kind_of(dirfd) != FD_NONE))
		return REAL(statx, -1, dirfd, path, flags, mask, sx);
	r = view_fstatat(&d, &p, &st, flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
	if (r == -2)
		return REAL(statx, -1, dirfd, path, flags, mask, sx);
	if (r == 0) {
		if (!launder(sx)) {
			errno = EFAULT;
			return -1;
		}
		stat_to_statx(&st, mask, sx);
	}
	return r;
}

/* ---------------------------------------------------------------- access */

__attribute__((noinline)) static int view_faccessat(int dirfd, const char *path, int amode,
						    int flags)
{
	struct sib_fs_lookup lk;
	int ret;

	if (amode & ~(R_OK | W_OK | X_OK)) {
		errno = EINVAL;
		return -1;
	}
	switch (sib_fsv_classify(dirfd, path, &lk)) {
	case SIB_FS_PASS:
		path = pass_path(&dirfd, path, &lk);
		return REAL(faccessat, -1, dirfd, path, amode, flags);
	case SIB_FS_ERR:
		errno = lk.err;
		return -1;
	default:
		break;
	}
	if (sib_fs_real_backed(&lk.node)) {
		ret = REAL(faccessat, -1, AT_FDCWD, lk.path, amode, flags);
		if (ret == 0 || errno != ENOENT)
			return ret;
	}
	ret = sib_fs_access(&lk.node, amode, flags & AT_EACCESS);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

int access(const char *path, int amode)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(access, -1, path, amode);
	return view_faccessat(AT_FDCWD, path, amode, 0);
}

int faccessat(int dirfd, const char *path, int amode, int flags)
{
	if (!maybe_ours(dirfd, path))
		return REAL(faccessat, -1, dirfd, path, amode, flags);
	return view_faccessat(dirfd, path, amode, flags);
}

int euidaccess(const char *path, int amode)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(euidaccess, -1, path, amode);
	return view_faccessat(AT_FDCWD, path, amode, AT_EACCESS);
}

int eaccess(const char *path, int amode)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(eaccess, -1, path, amode);
	return view_faccessat(AT_FDCWD, path, amode, AT_EACCESS);
}

/* ---------------------------------------------------------------- links and names */

__attribute__((noinline)) static ssize_t view_readlinkat(int dirfd, const char *path, char *buf,
							 size_t size)
{
	struct sib_fs_lookup lk;
	ssize_t ret;

	switch (sib_fsv_classify(dirfd, path, &lk)) {
	case SIB_FS_PASS:
		path = pass_path(&dirfd, path, &lk);
		return REAL(readlinkat, -1, dirfd, path, buf, size);
	case SIB_FS_ERR:
		errno = lk.err;
		return -1;
	default:
		break;
	}
	if (sib_fs_real_backed(&lk.node)) {
		ret = REAL(readlinkat, -1, AT_FDCWD, lk.path, buf, size);
		if (ret >= 0 || errno != ENOENT)
			return ret;
	}
	errno = EINVAL; /* the view has no symbolic links */
	return -1;
}

ssize_t readlink(const char *path, char *buf, size_t size)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(readlink, -1, path, buf, size);
	return view_readlinkat(AT_FDCWD, path, buf, size);
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	if (!maybe_ours(dirfd, path))
		return REAL(readlinkat, -1, dirfd, path, buf, size);
	return view_readlinkat(dirfd, path, buf, size);
}

/* realpath for a path that may be the view's; glibc's walks the path with
 * its own lstat and readlink, past ours. */
__attribute__((noinline)) static char *view_realpath(const char *path, char *resolved)
{
	struct sib_fs_lookup lk;
	int dirfd = AT_FDCWD;
	char *r;

	switch (sib_fsv_classify(AT_FDCWD, path, &lk)) {
	case SIB_FS_PASS:
		return REAL(realpath, NULL, pass_path(&dirfd, path, &lk), resolved);
	case SIB_FS_ERR:
		errno = lk.err;
		return NULL;
	default:
		break;
	}
	if (sib_fs_real_backed(&lk.node)) {
		r = REAL(realpath, NULL, lk.path, resolved);
		if (r || errno != ENOENT)
			return r;
	}
	if (!resolved)
		return strdup(lk.path);
	memcpy(resolved, lk.path, strlen(lk.path) + 1); /* < PATH_MAX, as realpath needs */
	return resolved;
}

char *realpath(const char *path, char *resolved)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(realpath, NULL, path, resolved);
	return view_realpath(path, resolved);
}

char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(__realpath_chk, NULL, path, resolved, resolvedlen);
	if (resolved && resolvedlen < PATH_MAX)
		abort(); /* glibc's __chk_fail: the buffer is too small */
	return view_realpath(path, resolved);
}

char *canonicalize_file_name(const char *path)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(canonicalize_file_name, NULL, path);
	return view_realpath(path, NULL);
}

/* ---------------------------------------------------------------- working directory calls */

int chdir(const char *path)
{
	struct sib_fs_lookup lk;
	int dirfd = AT_FDCWD, ret;

	if (!maybe_ours(AT_FDCWD, path)) {
		ret = REAL(chdir, -1, path);
		if (!ret)
			cwd_refresh();
		return ret;
	}
	switch (sib_fsv_classify(AT_FDCWD, path, &lk)) {
	case SIB_FS_PASS:
		path = pass_path(&dirfd, path, &lk);
		ret = REAL(chdir, -1, path);
		if (!ret)
			cwd_refresh();
		return ret;
	case SIB_FS_ERR:
		errno = lk.err;
		return -1;
	default:
		break;
	}
	if (sib_fs_type(&lk.node) != SIB_FS_T_DIR) {
		errno = ENOTDIR;
		return -1;
	}
	if (sib_fs_real_backed(&lk.node)) {
		ret = REAL(chdir, -1, lk.path);
		if (!ret)
			cwd_refresh();
		if (!ret || errno != ENOENT)
			return ret;
	}
	if (!sib_fsv_may_change()) {
		errno = ENOENT; /* a vfork child changes the kernel's directory only */
		return -1;
	}
	cwd_enter_virtual(lk.path);
	return 0;
}

int fchdir(int fd)
{
	char path[PATH_MAX];
	int ret;

	if (kind_of(fd) == FD_VDIR && sib_fs_path(&sib_fsv_ents[fd].node, path, sizeof(path)) &&
	    sib_fsv_may_change()) {
		cwd_enter_virtual(path);
		return 0;
	}
	ret = REAL(fchdir, -1, fd);
	if (!ret)
		cwd_refresh();
	return ret;
}

/* The virtual working directory into buf (glibc's getcwd rules); NULL
 * when the working directory is the kernel's (*real = true). */
static char *virtual_cwd(char *buf, size_t size, bool *real)
{
	char path[PATH_MAX];
	size_t len;

	*real = true;
	if (__atomic_load_n(&cwd_state, __ATOMIC_ACQUIRE) != CWD_VIRTUAL)
		return NULL;
	pthread_mutex_lock(&cwd_lock);
	*real = cwd_state != CWD_VIRTUAL;
	memcpy(path, cwd_path, strlen(cwd_path) + 1);
	pthread_mutex_unlock(&cwd_lock);
	if (*real)
		return NULL;
	len = strlen(path) + 1;
	if (!buf && !size)
		size = len; /* glibc: as large as needed */
	if (buf && !size) {
		errno = EINVAL;
		return NULL;
	}
	if (size < len) {
		errno = ERANGE;
		return NULL;
	}
	if (!buf && !(buf = malloc(size))) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(buf, path, len);
	return buf;
}

char *getcwd(char *buf, size_t size)
{
	bool real;
	char *r = virtual_cwd(buf, size, &real);

	return real ? REAL(getcwd, NULL, buf, size) : r;
}

char *__getcwd_chk(char *buf, size_t size, size_t buflen)
{
	bool real;
	char *r;

	if (size > buflen)
		abort(); /* glibc's __chk_fail */
	r = virtual_cwd(buf, size, &real);
	return real ? REAL(__getcwd_chk, NULL, buf, size, buflen) : r;
}

char *get_current_dir_name(void)
{
	bool real;
	char *r = virtual_cwd(NULL, 0, &real);

	return real ? REAL(get_current_dir_name, NULL) : r;
}

/* ---------------------------------------------------------------- extended attributes */

/*
 * ls -l asks for each name's SELinux label and ACL (lgetxattr, getxattr):
 * the view's nodes have none, which sysfs answers with ENODATA and an
 * empty list.  -2: libc's (path possibly rewritten).
 */
__attribute__((noinline)) static ssize_t view_xattr(const char **path, struct sib_fs_lookup *lk,
						    bool list)
{
	int dirfd = AT_FDCWD;

	switch (sib_fsv_classify(AT_FDCWD, *path, lk)) {
	case SIB_FS_PASS:
		*path = pass_path(&dirfd, *path, lk);
		return -2;
	case SIB_FS_ERR:
		errno = lk->err;
		return -1;
	default:
		break;
	}
	if (sib_fs_real_backed(&lk->node) && REAL(access, -1, lk->path, F_OK) == 0) {
		*path = lk->path;
		return -2;
	}
	if (list)
		return 0;
	errno = ENODATA;
	return -1;
}

#define XATTR_BODY(realcall, list)                                                                 \
	do {                                                                                       \
		struct sib_fs_lookup lk_;                                                          \
		ssize_t r_;                                                                        \
		if (!maybe_ours(AT_FDCWD, path))                                                   \
			return realcall;                                                           \
		r_ = view_xattr(&path, &lk_, list);                                                \
		return r_ != -2 ? r_ : realcall;                                                   \
	} while (0)

ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	XATTR_BODY(REAL(getxattr, -1, path, name, value, size), false);
}

ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	XATTR_BODY(REAL(lgetxattr, -1, path, name, value, size), false);
}

ssize_t listxattr(const char *path, char *list, size_t size)
{
	XATTR_BODY(REAL(listxattr, -1, path, list, size), true);
}

ssize_t llistxattr(const char *path, char *list, size_t size)
{
	XATTR_BODY(REAL(llistxattr, -1, path, list, size), true);
}


/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The C library's file calls, answered for the view's paths (fs_view.h)
 * and handed to libc for everything else.  libsoftib.so exports each at the
 * version glibc 2.36 exports it (softib.map), so LD_PRELOAD puts them in
 * front of libc's for every program and library; our own calls reach libc
 * through dlvsym(RTLD_NEXT).
 *
 * Which calls (objdump -T of the programs that look for devices): ibstat
 * and libibumad use open/read/close, stat, opendir/readdir and scandir;
 * ibstatus is a dash script (chdir, faccessat, opendir/readdir64, stat64)
 * running cat (open, fstat, read); UCX's libuct_ib stat and access
 * /dev/infiniband/<dev_name> and __realpath_chk the device's sysfs path,
 * libucs reads sysfs with open/read and readdir_r; libibverbs and librdmacm
 * use open, openat, fopen, fstat, opendir/readdir/dirfd; Open MPI stat,
 * fopen, access, opendir; python (pyverbs) open64, stat64, fstatat64,
 * access, opendir/fdopendir/readdir64, and runs ls (statx, opendir) and ip.
 * glibc's fopen, scandir and realpath call open/readdir/lstat inside the
 * library, past any interposer, so they are answered here too; so are the
 * older __xstat family, the _FORTIFY_SOURCE entry points, and the calls
 * that close or copy descriptors (close, close_range, closefrom, fclose,
 * dup, dup2, dup3, fcntl F_DUPFD), which keep the descriptor table true.
 *
 * Descriptors: a file of the view is a memfd holding its text, reopened
 * read-only through /proc/self/fd (read, lseek, poll, mmap and close are
 * then the kernel's own; write fails with EBADF as on a read-only sysfs
 * descriptor); a directory only the view has is an empty memfd; a
 * character device is whatever its open returned.  Each is marked in a
 * table indexed by descriptor: a byte per descriptor, read with one load
 * and no lock, so read, write, close, fstat and fcntl on every other
 * descriptor cost one predictable branch more than libc's own.
 *
 * Directory streams of the view are our own DIR; like glibc's, theirs
 * begins with the descriptor, so readdir tells the two apart by looking
 * the descriptor up in the table.
 *
 * The working directory can be a directory only the view has (ibstatus
 * does `cd /sys/class/infiniband`): chdir then records it, getcwd reports
 * it and relative paths resolve against it; the kernel's working directory
 * stays where it was, so a program started from there starts in it.
 *
 * vfork: a child that shares our memory must not change our tables (Python
 * closes and dup2s descriptors in such a child before exec).  The pid the
 * tables belong to is kept, and a process whose pid differs without having
 * passed our fork handler leaves them alone.
 */
#undef _FORTIFY_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "provider/fs_view.h"
#include "base/log.h"

/* ---------------------------------------------------------------- libc's own */

static void *real_lookup(const char *name, const char *ver, void **slot)
{
	void *f = dlvsym(RTLD_NEXT, name, ver);

	if (!f)
		f = dlsym(RTLD_NEXT, name);
	__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	return f;
}

#define DEFINE_REAL(ret, name, ver, params)                                                        \
	typedef ret(*name##_fn) params;                                                            \
	static name##_fn real_##name##_p;                                                          \
	static inline name##_fn real_##name(void)                                                  \
	{                                                                                          \
		name##_fn f = __atomic_load_n(&real_##name##_p, __ATOMIC_RELAXED);                 \
		if (__builtin_expect(!f, 0))                                                       \
			f = (name##_fn)real_lookup(#name, ver, (void **)&real_##name##_p);         \
		return f;                                                                          \
	}

/* Calls libc's name(...); ENOSYS and fail if this libc has none. */
#define REAL(name, fail, ...)                                                                      \
	({                                                                                         \
		name##_fn f_ = real_##name();                                                      \
		f_ ? f_(__VA_ARGS__) : (errno = ENOSYS, (fail));                                   \
	})

DEFINE_REAL(int, open, "GLIBC_2.2.5", (const char *, int, ...))
DEFINE_REAL(int, open64, "GLIBC_2.2.5", (const char *, int, ...))
DEFINE_REAL(int, openat, "GLIBC_2.4", (int, const char *, int, ...))
DEFINE_REAL(int, openat64, "GLIBC_2.4", (int, const char *, int, ...))
DEFINE_REAL(int, __open_2, "GLIBC_2.7", (const char *, int))
DEFINE_REAL(int, __open64_2, "GLIBC_2.7", (const char *, int))
DEFINE_REAL(int, __openat_2, "GLIBC_2.7", (int, const char *, int))
DEFINE_REAL(int, __openat64_2, "GLIBC_2.7", (int, const char *, int))
DEFINE_REAL(FILE *, fopen, "GLIBC_2.2.5", (const char *, const char *))
DEFINE_REAL(FILE *, fopen64, "GLIBC_2.2.5", (const char *, const char *))
DEFINE_REAL(int, fclose, "GLIBC_2.2.5", (FILE *))
DEFINE_REAL(int, stat, "GLIBC_2.33", (const char *, struct stat *))
DEFINE_REAL(int, stat64, "GLIBC_2.33", (const char *, struct stat64 *))
DEFINE_REAL(int, lstat, "GLIBC_2.33", (const char *, struct stat *))
DEFINE_REAL(int, lstat64, "GLIBC_2.33", (const char *, struct stat64 *))
DEFINE_REAL(int, fstat, "GLIBC_2.33", (int, struct stat *))
DEFINE_REAL(int, fstat64, "GLIBC_2.33", (int, struct stat64 *))
DEFINE_REAL(int, fstatat, "GLIBC_2.33", (int, const char *, struct stat *, int))
DEFINE_REAL(int, fstatat64, "GLIBC_2.33", (int, const char *, struct stat64 *, int))
DEFINE_REAL(int, __xstat, "GLIBC_2.2.5", (int, const char *, struct stat *))
DEFINE_REAL(int, __xstat64, "GLIBC_2.2.5", (int, const char *, struct stat64 *))
DEFINE_REAL(int, __lxstat, "GLIBC_2.2.5", (int, const char *, struct stat *))
DEFINE_REAL(int, __lxstat64, "GLIBC_2.2.5", (int, const char *, struct stat64 *))
DEFINE_REAL(int, __fxstat, "GLIBC_2.2.5", (int, int, struct stat *))
DEFINE_REAL(int, __fxstat64, "GLIBC_2.2.5", (int, int, struct stat64 *))
DEFINE_REAL(int, __fxstatat, "GLIBC_2.4", (int, int, const char *, struct stat *, int))
DEFINE_REAL(int, __fxstatat64, "GLIBC_2.4", (int, int, const char *, struct stat64 *, int))
DEFINE_REAL(int, statx, "GLIBC_2.28", (int, const char *, int, unsigned, struct statx *))
DEFINE_REAL(int, access, "GLIBC_2.2.5", (const char *, int))
DEFINE_REAL(int, faccessat, "GLIBC_2.4", (int, const char *, int, int))
DEFINE_REAL(int, euidaccess, "GLIBC_2.2.5", (const char *, int))
DEFINE_REAL(int, eaccess, "GLIBC_2.4", (const char *, int))
DEFINE_REAL(DIR *, opendir, "GLIBC_2.2.5", (const char *))
DEFINE_REAL(DIR *, fdopendir, "GLIBC_2.4", (int))
DEFINE_REAL(int, closedir, "GLIBC_2.2.5", (DIR *))
DEFINE_REAL(struct dirent *, readdir, "GLIBC_2.2.5", (DIR *))
DEFINE_REAL(struct dirent64 *, readdir64, "GLIBC_2.2.5", (DIR *))
DEFINE_REAL(int, readdir_r, "GLIBC_2.2.5", (DIR *, struct dirent *, struct dirent **))
DEFINE_REAL(int, readdir64_r, "GLIBC_2.2.5", (DIR *, struct dirent64 *, struct dirent64 **))
DEFINE_REAL(void, rewinddir, "GLIBC_2.2.5", (DIR *))
DEFINE_REAL(void, seekdir, "GLIBC_2.2.5", (DIR *, long))
DEFINE_REAL(long, telldir, "GLIBC_2.2.5", (DIR *))
DEFINE_REAL(int, scandir, "GLIBC_2.2.5",
	    (const char *, struct dirent ***, int (*)(const struct dirent *),
	     int (*)(const struct dirent **, const struct dirent **)))
DEFINE_REAL(int, scandir64, "GLIBC_2.2.5",
	    (const char *, struct dirent64 ***, int (*)(const struct dirent64 *),
	     int (*)(const struct dirent64 **, const struct dirent64 **)))
DEFINE_REAL(int, scandirat, "GLIBC_2.15",
	    (int, const char *, struct dirent ***, int (*)(const struct dirent *),
	     int (*)(const struct dirent **, const struct dirent **)))
DEFINE_REAL(int, scandirat64, "GLIBC_2.15",
	    (int, const char *, struct dirent64 ***, int (*)(const struct dirent64 *),
	     int (*)(const struct dirent64 **, const struct dirent64 **)))
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
DEFINE_REAL(ssize_t, read, "GLIBC_2.2.5", (int, void *, size_t))
DEFINE_REAL(ssize_t, __read_chk, "GLIBC_2.4", (int, void *, size_t, size_t))
DEFINE_REAL(ssize_t, write, "GLIBC_2.2.5", (int, const void *, size_t))
DEFINE_REAL(int, close, "GLIBC_2.2.5", (int))
DEFINE_REAL(int, close_range, "GLIBC_2.34", (unsigned, unsigned, int))
DEFINE_REAL(void, closefrom, "GLIBC_2.34", (int))
DEFINE_REAL(int, dup, "GLIBC_2.2.5", (int))
DEFINE_REAL(int, dup2, "GLIBC_2.2.5", (int, int))
DEFINE_REAL(int, dup3, "GLIBC_2.9", (int, int, int))
DEFINE_REAL(int, fcntl, "GLIBC_2.2.5", (int, int, ...))
DEFINE_REAL(int, fcntl64, "GLIBC_2.28", (int, int, ...))
DEFINE_REAL(ssize_t, getxattr, "GLIBC_2.3", (const char *, const char *, void *, size_t))
DEFINE_REAL(ssize_t, lgetxattr, "GLIBC_2.3", (const char *, const char *, void *, size_t))
DEFINE_REAL(ssize_t, fgetxattr, "GLIBC_2.3", (int, const char *, void *, size_t))
DEFINE_REAL(ssize_t, listxattr, "GLIBC_2.3", (const char *, char *, size_t))
DEFINE_REAL(ssize_t, llistxattr, "GLIBC_2.3", (const char *, char *, size_t))
DEFINE_REAL(ssize_t, flistxattr, "GLIBC_2.3", (int, char *, size_t))

/* Declared by no header of glibc 2.36, still exported. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);
char *__getcwd_chk(char *buf, size_t size, size_t buflen);
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat and stat64 differ here");
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent and dirent64 differ");

/* ---------------------------------------------------------------- descriptors */

#define FS_FD_MAX 65536

enum fd_kind {
	FD_NONE = 0,
	FD_FILE,  /* a file of the view: memfd with its text */
	FD_VDIR,  /* a directory only the view has: an empty memfd */
	FD_RDIR,  /* a directory of the view that exists for real: the real one */
	FD_CDEV,  /* a character device: what its open returned */
	FD_OPATH, /* O_PATH of a file or device of the view */
};

struct fd_entry {
	struct sib_fs_node node;
	const struct softib_cdev_ops *ops; /* FD_CDEV */
	int key;			   /* FD_CDEV: the descriptor ops->open returned */
	unsigned copies;		   /* FD_CDEV key: dup()s of it still tracked */
	struct vdir *dir;		   /* the stream reading this descriptor */
};

static uint8_t fd_kinds[FS_FD_MAX];
static struct fd_entry fd_ents[FS_FD_MAX];
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */

static inline unsigned kind_of(int fd)
{
	return (unsigned)fd < FS_FD_MAX ? __atomic_load_n(&fd_kinds[fd], __ATOMIC_ACQUIRE) : FD_NONE;
}

/* The process the tables belong to (see vfork at the top). */
static pid_t owner_pid;
static pthread_once_t owner_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t cwd_lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork()ed child gets the tables, unlocked, and owns them. */
static void owner_atfork_prepare(void)
{
	pthread_mutex_lock(&fd_lock);
	pthread_mutex_lock(&cwd_lock);
}

static void owner_atfork_parent(void)
{
	pthread_mutex_unlock(&cwd_lock);
	pthread_mutex_unlock(&fd_lock);
}

static void owner_atfork_child(void)
{
	owner_pid = getpid();
	pthread_mutex_unlock(&cwd_lock);
	pthread_mutex_unlock(&fd_lock);
}

static void owner_init(void)
{
	owner_pid = getpid();
	pthread_atfork(owner_atfork_prepare, owner_atfork_parent, owner_atfork_child);
}

__attribute__((constructor)) static void owner_init_early(void)
{
	pthread_once(&owner_once, owner_init);
}

/* False in a vfork child: it shares our memory but not our descriptors. */
static bool may_change_tables(void)
{
	pthread_once(&owner_once, owner_init);
	return getpid() == owner_pid;
}

/* Marks fd as the view's.  False when it cannot be (out of the table, or a
 * vfork child): the caller then refuses the descriptor. */
static bool track(int fd, enum fd_kind kind, const struct fd_entry *e)
{
	if ((unsigned)fd >= FS_FD_MAX || !may_change_tables())
		return false;
	pthread_mutex_lock(&fd_lock);
	fd_ents[fd] = *e;
	__atomic_store_n(&fd_kinds[fd], (uint8_t)kind, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fd_lock);
	return true;
}

/* fd is being closed (close, dup2 onto it, close_range, fclose): forget
 * it, telling its character device first.  Copies of a device descriptor
 * stop being the device's when the original closes. */
static void untrack(int fd)
{
	const struct softib_cdev_ops *ops = NULL;
	unsigned kind = kind_of(fd), copies = 0;
	int key = -1;

	if (!kind || !may_change_tables())
		return;
	pthread_mutex_lock(&fd_lock);
	kind = fd_kinds[fd];
	if (kind == FD_CDEV) {
		key = fd_ents[fd].key;
		if (key == fd) {
			ops = fd_ents[fd].ops;
			copies = fd_ents[fd].copies;
		} else if (kind_of(key) == FD_CDEV && fd_ents[key].copies) {
			fd_ents[key].copies--;
		}
	}
	__atomic_store_n(&fd_kinds[fd], FD_NONE, __ATOMIC_RELEASE);
	for (int i = 0; copies && i < FS_FD_MAX; i++)
		if (fd_kinds[i] == FD_CDEV && fd_ents[i].key == fd) {
			__atomic_store_n(&fd_kinds[i], FD_NONE, __ATOMIC_RELEASE);
			copies--;
		}
	pthread_mutex_unlock(&fd_lock);
	if (ops && ops->close)
		ops->close(fd);
}

/* newfd is a copy of oldfd (dup, dup2, dup3, F_DUPFD). */
static void track_copy(int oldfd, int newfd)
{
	struct fd_entry e;
	unsigned kind;

	if ((unsigned)newfd >= FS_FD_MAX || !may_change_tables())
		return;
	pthread_mutex_lock(&fd_lock);
	kind = fd_kinds[oldfd];
	e = fd_ents[oldfd];
	e.dir = NULL;
	e.copies = 0;
	if (kind == FD_CDEV)
		fd_ents[e.key].copies++;
	if (kind) {
		fd_ents[newfd] = e;
		__atomic_store_n(&fd_kinds[newfd], (uint8_t)kind, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&fd_lock);
}

/* A descriptor below FS_FD_MAX for fd (ours to move); -1 + EMFILE if none. */
static int low_fd(int fd)
{
	int nfd;

	if (fd < FS_FD_MAX)
		return fd;
	nfd = REAL(fcntl, -1, fd, F_DUPFD_CLOEXEC, 0);
	if (nfd >= 0 && !(REAL(fcntl, -1, fd, F_GETFD) & FD_CLOEXEC))
		REAL(fcntl, -1, nfd, F_SETFD, 0);
	REAL(close, -1, fd);
	if (nfd >= FS_FD_MAX) {
		REAL(close, -1, nfd);
		nfd = -1;
	}
	if (nfd < 0)
		errno = EMFILE;
	return nfd;
}

/* ---------------------------------------------------------------- working directory */

enum { CWD_UNKNOWN, CWD_ELSEWHERE, CWD_NEAR, CWD_VIRTUAL };

static int cwd_state;		  /* atomic */
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

	if (!may_change_tables())
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

static int cwd_get_state(void)
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

/* libc declares most path and buffer arguments nonnull, so the compiler
 * would drop our NULL checks; a program passing NULL gets libc's answer
 * (EFAULT from the kernel), never a crash of ours. */
static inline const void *launder(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/* The cheap test every path call makes: false means libc's, for sure. */
static inline bool maybe_ours(int dirfd, const char *path)
{
	unsigned k;

	path = launder(path);
	if (!path || !path[0])
		return false;
	if (path[0] == '/')
		return sib_fs_maybe_ours(path);
	if (dirfd == AT_FDCWD)
		return cwd_get_state() >= CWD_NEAR;
	k = kind_of(dirfd);
	return k == FD_VDIR || k == FD_RDIR;
}

/* Where path (for dirfd) is: the view's node, an error the view answers,
 * or libc's (with lk->path instead of path when lk->rewritten). */
static enum sib_fs_found classify(int dirfd, const char *path, struct sib_fs_lookup *lk)
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
		int st = cwd_get_state();

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
		if (!sib_fs_path(&fd_ents[dirfd].node, base, sizeof(base)))
			return SIB_FS_PASS;
		virt = k == FD_VDIR;
	}
	return sib_fs_resolve(base, virt, path, lk);
}

/* The (dirfd, path) libc should see for a PASS. */
static const char *pass_path(int *dirfd, const char *path, const struct sib_fs_lookup *lk)
{
	if (!lk->rewritten)
		return path;
	*dirfd = AT_FDCWD;
	return lk->path;
}

/* ---------------------------------------------------------------- open */

static int memfd(const char *name, int flags)
{
	return (int)syscall(SYS_memfd_create, name, (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
}

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

static int finish(int fd, enum fd_kind kind, const struct fd_entry *e)
{
	if (fd < 0)
		return -1;
	fd = low_fd(fd);
	if (fd < 0)
		return -1;
	if (!track(fd, kind, e)) {
		REAL(close, -1, fd);
		errno = (unsigned)fd >= FS_FD_MAX ? EMFILE : EAGAIN;
		return -1;
	}
	return fd;
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
				return finish(fd, FD_RDIR, &e);
		}
		if ((flags & __O_TMPFILE) == __O_TMPFILE) {
			errno = EOPNOTSUPP; /* sysfs makes no files */
			return -1;
		}
		if (acc != O_RDONLY || (flags & O_CREAT)) {
			errno = EISDIR;
			return -1;
		}
		return finish(memfd("softib-dir", flags), FD_VDIR, &e);
	case SIB_FS_T_FILE:
		if (flags & O_DIRECTORY) {
			errno = ENOTDIR;
			return -1;
		}
		if (!(flags & O_PATH) && (acc != O_RDONLY || (flags & O_TRUNC))) {
			errno = EACCES; /* kernfs: an attribute without a store method */
			return -1;
		}
		return finish(open_file(n, flags), flags & O_PATH ? FD_OPATH : FD_FILE, &e);
	case SIB_FS_T_CDEV:
		if (flags & O_DIRECTORY) {
			errno = ENOTDIR;
			return -1;
		}
		if (flags & O_PATH)
			return finish(memfd("softib-dev", flags), FD_OPATH, &e);
		e.ops = sib_fs_cdev(n);
		if (!e.ops) {
			errno = ENODEV;
			return -1;
		}
		fd = e.ops->open(flags);
		if (fd < 0)
			return -1;
		if (fd >= FS_FD_MAX || !may_change_tables()) {
			/* The device knows this number: do not move it. */
			if (e.ops->close)
				e.ops->close(fd);
			REAL(close, -1, fd);
			errno = EMFILE;
			return -1;
		}
		e.key = fd;
		return finish(fd, FD_CDEV, &e);
	}
	errno = ENOENT;
	return -1;
}

/* The slow path of every open: the path may be the view's. */
__attribute__((noinline)) static int view_openat(int dirfd, const char *path, int flags,
						 mode_t mode)
{
	struct sib_fs_lookup lk;

	switch (classify(dirfd, path, &lk)) {
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

	switch (classify(AT_FDCWD, path, &lk)) {
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

/* ---------------------------------------------------------------- close and copies */

int close(int fd)
{
	if (__builtin_expect(kind_of(fd) != FD_NONE, 0))
		untrack(fd);
	return REAL(close, -1, fd);
}

int fclose(FILE *f)
{
	/* glibc's fclose closes inside the library, past close(). */
	if (f && kind_of(f->_fileno) != FD_NONE)
		untrack(f->_fileno);
	return REAL(fclose, EOF, f);
}

static void untrack_range(unsigned first, unsigned last)
{
	if (first >= FS_FD_MAX)
		return;
	if (last >= FS_FD_MAX)
		last = FS_FD_MAX - 1;
	for (unsigned fd = first; fd <= last; fd++)
		if (kind_of((int)fd))
			untrack((int)fd);
}

int close_range(unsigned first, unsigned last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last && may_change_tables())
		untrack_range(first, last);
	return REAL(close_range, -1, first, last, flags);
}

void closefrom(int lowfd)
{
	closefrom_fn f = real_closefrom();

	if (lowfd >= 0 && may_change_tables())
		untrack_range((unsigned)lowfd, ~0u);
	if (f)
		f(lowfd);
}

int dup(int fd)
{
	int nfd = REAL(dup, -1, fd);

	if (nfd >= 0 && kind_of(fd))
		track_copy(fd, nfd);
	return nfd;
}

/* dup2/dup3 close newfd first when oldfd is valid: the device hears of it. */
static void before_replace(int oldfd, int newfd)
{
	if (oldfd != newfd && kind_of(newfd) && REAL(fcntl, -1, oldfd, F_GETFD) >= 0)
		untrack(newfd);
}

int dup2(int oldfd, int newfd)
{
	int ret;

	before_replace(oldfd, newfd);
	ret = REAL(dup2, -1, oldfd, newfd);
	if (ret >= 0 && oldfd != newfd && kind_of(oldfd))
		track_copy(oldfd, newfd);
	return ret;
}

int dup3(int oldfd, int newfd, int flags)
{
	int ret;

	before_replace(oldfd, newfd);
	ret = REAL(dup3, -1, oldfd, newfd, flags);
	if (ret >= 0 && kind_of(oldfd))
		track_copy(oldfd, newfd);
	return ret;
}

static int view_fcntl(fcntl_fn real, int fd, int cmd, void *arg)
{
	int ret;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (__builtin_expect(kind_of(fd) == FD_NONE, 1) ||
	    (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC))
		return real(fd, cmd, arg);
	ret = real(fd, cmd, (int)(intptr_t)arg);
	if (ret >= 0)
		track_copy(fd, ret);
	return ret;
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *); /* as glibc's own fcntl reads it */
	va_end(ap);
	return view_fcntl(real_fcntl(), fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return view_fcntl((fcntl_fn)real_fcntl64(), fd, cmd, arg);
}

/* ---------------------------------------------------------------- read and write */

__attribute__((noinline)) static ssize_t view_read(int fd, void *buf, size_t len, unsigned kind)
{
	const struct softib_cdev_ops *ops;

	switch (kind) {
	case FD_CDEV:
		ops = fd_ents[fd].ops;
		if (ops && ops->read)
			return ops->read(fd_ents[fd].key, buf, len);
		break;
	case FD_VDIR:
		errno = EISDIR;
		return -1;
	case FD_OPATH:
		errno = EBADF;
		return -1;
	default:
		break;
	}
	return REAL(read, -1, fd, buf, len);
}

ssize_t read(int fd, void *buf, size_t len)
{
	unsigned kind = kind_of(fd);

	if (__builtin_expect(kind == FD_NONE, 1))
		return REAL(read, -1, fd, buf, len);
	return view_read(fd, buf, len, kind);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	unsigned kind = kind_of(fd);

	if (__builtin_expect(kind == FD_NONE, 1))
		return REAL(__read_chk, -1, fd, buf, len, buflen);
	if (len > buflen)
		abort(); /* what glibc's __chk_fail does: a buffer overflow */
	return view_read(fd, buf, len, kind);
}

__attribute__((noinline)) static ssize_t view_write(int fd, const void *buf, size_t len,
						   unsigned kind)
{
	const struct softib_cdev_ops *ops;

	switch (kind) {
	case FD_CDEV:
		ops = fd_ents[fd].ops;
		if (ops && ops->write)
			return ops->write(fd_ents[fd].key, buf, len);
		break;
	case FD_VDIR:
	case FD_OPATH:
		errno = EBADF; /* not open for writing */
		return -1;
	default:
		break;
	}
	return REAL(write, -1, fd, buf, len);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	unsigned kind = kind_of(fd);

	if (__builtin_expect(kind == FD_NONE, 1))
		return REAL(write, -1, fd, buf, len);
	return view_write(fd, buf, len, kind);
}

/* ---------------------------------------------------------------- stat */

/* fstat of a descriptor of the view; -2: libc's. */
static int view_fstat(int fd, struct stat *st)
{
	unsigned kind = kind_of(fd);

	if (kind == FD_NONE || kind == FD_RDIR)
		return -2;
	if (!launder(st)) {
		errno = EFAULT;
		return -1;
	}
	sib_fs_stat(&fd_ents[fd].node, st);
	return 0;
}

/* fstatat of a path that may be the view's: 0/-1 answered, -2 libc's. */
__attribute__((noinline)) static int view_fstatat(int *dirfd, const char **path,
						  struct stat *st, int flags)
{
	struct sib_fs_lookup lk;
	int ret;

	if (launder(*path) && !(*path)[0] && (flags & AT_EMPTY_PATH))
		return *dirfd == AT_FDCWD ? -2 : view_fstat(*dirfd, st);
	switch (classify(*dirfd, *path, &lk)) {
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

int fstat(int fd, struct stat *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(fstat, -1, fd, st);
	r = view_fstat(fd, st);
	return r != -2 ? r : REAL(fstat, -1, fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(fstat64, -1, fd, st);
	r = view_fstat(fd, (struct stat *)st);
	return r != -2 ? r : REAL(fstat64, -1, fd, st);
}

int __fxstat(int ver, int fd, struct stat *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(__fxstat, -1, ver, fd, st);
	r = view_fstat(fd, st);
	return r != -2 ? r : REAL(__fxstat, -1, ver, fd, st);
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(__fxstat64, -1, ver, fd, st);
	r = view_fstat(fd, (struct stat *)st);
	return r != -2 ? r : REAL(__fxstat64, -1, ver, fd, st);
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
	switch (classify(dirfd, path, &lk)) {
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

/* ---------------------------------------------------------------- directories */

struct vdir_ent {
	char name[NAME_MAX + 1];
	unsigned char type;
	ino_t ino;
};

struct vdir {
	int fd;		/* first, where glibc's DIR keeps its descriptor */
	DIR *real;	/* the real directory's stream, when it exists */
	struct sib_fs_node node;
	pthread_mutex_t lock;
	struct vdir_ent *ents; /* ".", "..", then the view's names */
	unsigned count;
	unsigned pos;	       /* next of ents (after the real ones) */
	bool real_done;
	long loc;	       /* entries returned: telldir */
	struct dirent64 out;
};

static bool dir_is_ours(DIR *d)
{
	int fd;
	unsigned k;

	if (!d)
		return false;
	fd = *(int *)(void *)d; /* glibc's DIR starts with its descriptor too */
	k = kind_of(fd);
	return (k == FD_VDIR || k == FD_RDIR) && fd_ents[fd].dir == (struct vdir *)(void *)d;
}

struct collect {
	struct vdir *v;
	unsigned cap;
};

static int collect_one(void *arg, const char *name, const struct sib_fs_node *child)
{
	struct collect *c = arg;
	struct vdir_ent *e;
	struct stat st;

	if (c->v->count == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 16;
		struct vdir_ent *n = realloc(c->v->ents, cap * sizeof(*n));

		if (!n)
			return 1;
		c->v->ents = n;
		c->cap = cap;
	}
	e = &c->v->ents[c->v->count++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->type = sib_fs_dtype(child);
	sib_fs_stat(child, &st);
	e->ino = st.st_ino;
	return 0;
}

/* A stream over directory node n: fd is its descriptor (ours to close),
 * real the real directory's stream over fd, or NULL. */
static DIR *vdir_new(const struct sib_fs_node *n, int fd, DIR *real)
{
	struct vdir *v = calloc(1, sizeof(*v));
	struct collect c = { .v = v };

	if (!v)
		return NULL;
	v->fd = fd;
	v->real = real;
	v->node = *n;
	pthread_mutex_init(&v->lock, NULL);
	if (!real) {
		/* The kernel lists "." and ".." in every directory. */
		collect_one(&c, ".", n);
		collect_one(&c, "..", n);
	}
	sib_fs_list(n, collect_one, &c);
	if ((unsigned)fd < FS_FD_MAX) {
		pthread_mutex_lock(&fd_lock);
		fd_ents[fd].dir = v;
		pthread_mutex_unlock(&fd_lock);
	}
	return (DIR *)(void *)v;
}

static bool listed_by_view(const struct vdir *v, const char *name)
{
	for (unsigned i = 0; i < v->count; i++)
		if (!strcmp(v->ents[i].name, name))
			return true;
	return false;
}

/* The next entry: the real directory's first (less the names the view
 * lists itself), then the view's. */
static struct dirent64 *vdir_next(struct vdir *v)
{
	struct dirent64 *out = &v->out;

	while (v->real && !v->real_done) {
		struct dirent64 *r = REAL(readdir64, NULL, v->real);

		if (!r) {
			v->real_done = true;
			break;
		}
		if (listed_by_view(v, r->d_name))
			continue;
		/* glibc's entry is d_reclen bytes long, perhaps at its buffer's end. */
		memset(out, 0, sizeof(*out));
		memcpy(out, r, r->d_reclen < sizeof(*out) ? r->d_reclen : sizeof(*out));
		v->loc++;
		return out;
	}
	if (v->pos >= v->count)
		return NULL;
	memset(out, 0, offsetof(struct dirent64, d_name));
	out->d_ino = v->ents[v->pos].ino;
	out->d_type = v->ents[v->pos].type;
	snprintf(out->d_name, sizeof(out->d_name), "%s", v->ents[v->pos].name);
	out->d_reclen = (unsigned short)(offsetof(struct dirent64, d_name) + strlen(out->d_name) + 1);
	v->pos++;
	v->loc++;
	out->d_off = v->loc;
	return out;
}

static void vdir_rewind(struct vdir *v)
{
	if (v->real)
		REAL(rewinddir, (void)0, v->real);
	v->real_done = false;
	v->pos = 0;
	v->loc = 0;
}

static void vdir_free(struct vdir *v)
{
	int fd = v->fd;

	if ((unsigned)fd < FS_FD_MAX)
		untrack(fd);
	if (v->real)
		REAL(closedir, -1, v->real);
	else
		REAL(close, -1, fd);
	pthread_mutex_destroy(&v->lock);
	free(v->ents);
	free(v);
}

/* opendir of a node of the view (lk: a HIT). */
static DIR *opendir_node(const struct sib_fs_lookup *lk)
{
	struct fd_entry e = { .node = lk->node, .key = -1 };
	DIR *real = NULL, *d;
	int fd;

	if (sib_fs_type(&lk->node) != SIB_FS_T_DIR) {
		errno = ENOTDIR;
		return NULL;
	}
	if (sib_fs_real_backed(&lk->node)) {
		real = REAL(opendir, NULL, lk->path);
		if (!real && errno != ENOENT)
			return NULL;
	}
	if (real) {
		fd = dirfd(real);
		if (fd < 0 || !track(fd, FD_RDIR, &e)) {
			/* Cannot be ours: the real directory as it is. */
			return real;
		}
	} else {
		fd = finish(memfd("softib-dir", O_CLOEXEC), FD_VDIR, &e);
		if (fd < 0)
			return NULL;
	}
	d = vdir_new(&lk->node, fd, real);
	if (!d) {
		untrack(fd);
		if (real)
			REAL(closedir, -1, real);
		else
			REAL(close, -1, fd);
		errno = ENOMEM;
	}
	return d;
}

__attribute__((noinline)) static DIR *view_opendir(const char *path)
{
	struct sib_fs_lookup lk;
	int dirfd = AT_FDCWD;

	switch (classify(AT_FDCWD, path, &lk)) {
	case SIB_FS_PASS:
		return REAL(opendir, NULL, pass_path(&dirfd, path, &lk));
	case SIB_FS_ERR:
		errno = lk.err;
		return NULL;
	default:
		return opendir_node(&lk);
	}
}

DIR *opendir(const char *path)
{
	if (!maybe_ours(AT_FDCWD, path))
		return REAL(opendir, NULL, path);
	return view_opendir(path);
}

DIR *fdopendir(int fd)
{
	unsigned k = kind_of(fd);
	DIR *real = NULL, *d;

	if (k != FD_VDIR && k != FD_RDIR) {
		if (k != FD_NONE) {
			errno = ENOTDIR;
			return NULL;
		}
		return REAL(fdopendir, NULL, fd);
	}
	if (fd_ents[fd].dir) {
		errno = EINVAL; /* a stream already reads it */
		return NULL;
	}
	if (k == FD_RDIR) {
		real = REAL(fdopendir, NULL, fd);
		if (!real)
			return NULL;
	}
	d = vdir_new(&fd_ents[fd].node, fd, real);
	if (!d)
		errno = ENOMEM;
	return d;
}

int closedir(DIR *d)
{
	if (!dir_is_ours(d))
		return REAL(closedir, -1, d);
	vdir_free((struct vdir *)(void *)d);
	return 0;
}

struct dirent *readdir(DIR *d)
{
	struct vdir *v = (struct vdir *)(void *)d;
	struct dirent64 *e;

	if (!dir_is_ours(d))
		return REAL(readdir, NULL, d);
	pthread_mutex_lock(&v->lock);
	e = vdir_next(v);
	pthread_mutex_unlock(&v->lock);
	return (struct dirent *)(void *)e;
}

struct dirent64 *readdir64(DIR *d)
{
	struct vdir *v = (struct vdir *)(void *)d;
	struct dirent64 *e;

	if (!dir_is_ours(d))
		return REAL(readdir64, NULL, d);
	pthread_mutex_lock(&v->lock);
	e = vdir_next(v);
	pthread_mutex_unlock(&v->lock);
	return e;
}

static int vdir_next_r(struct vdir *v, struct dirent64 *entry, struct dirent64 **result)
{
	struct dirent64 *e;

	pthread_mutex_lock(&v->lock);
	e = vdir_next(v);
	if (e)
		memcpy(entry, e, sizeof(*entry));
	pthread_mutex_unlock(&v->lock);
	*result = e ? entry : NULL;
	return 0;
}

int readdir_r(DIR *d, struct dirent *entry, struct dirent **result)
{
	if (!dir_is_ours(d))
		return REAL(readdir_r, EBADF, d, entry, result);
	return vdir_next_r((struct vdir *)(void *)d, (struct dirent64 *)(void *)entry,
			   (struct dirent64 **)(void *)result);
}

int readdir64_r(DIR *d, struct dirent64 *entry, struct dirent64 **result)
{
	if (!dir_is_ours(d))
		return REAL(readdir64_r, EBADF, d, entry, result);
	return vdir_next_r((struct vdir *)(void *)d, entry, result);
}

void rewinddir(DIR *d)
{
	struct vdir *v = (struct vdir *)(void *)d;

	if (!dir_is_ours(d)) {
		REAL(rewinddir, (void)0, d);
		return;
	}
	pthread_mutex_lock(&v->lock);
	vdir_rewind(v);
	pthread_mutex_unlock(&v->lock);
}

long telldir(DIR *d)
{
	struct vdir *v = (struct vdir *)(void *)d;
	long loc;

	if (!dir_is_ours(d))
		return REAL(telldir, -1, d);
	pthread_mutex_lock(&v->lock);
	loc = v->loc;
	pthread_mutex_unlock(&v->lock);
	return loc;
}

void seekdir(DIR *d, long loc)
{
	struct vdir *v = (struct vdir *)(void *)d;

	if (!dir_is_ours(d)) {
		REAL(seekdir, (void)0, d, loc);
		return;
	}
	/* Positions are entry counts: start over and skip that many. */
	pthread_mutex_lock(&v->lock);
	vdir_rewind(v);
	while (v->loc < loc && vdir_next(v))
		;
	pthread_mutex_unlock(&v->lock);
}

/* scandir over a stream of the view, with glibc's semantics: the entries
 * the filter keeps, malloc'd one by one, sorted by cmp. */
static int scan_stream(DIR *d, struct dirent64 ***list, int (*filter)(const struct dirent64 *),
		       int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	struct dirent64 **v = NULL, *e;
	size_t n = 0, cap = 0;
	int err = 0;

	while ((e = readdir64(d))) {
		struct dirent64 *copy, **nv;

		if (filter && !filter(e))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = ENOMEM;
				break;
			}
			v = nv;
		}
		copy = malloc(e->d_reclen > sizeof(*e) ? e->d_reclen : sizeof(*e));
		if (!copy) {
			err = ENOMEM;
			break;
		}
		memcpy(copy, e, sizeof(*e));
		v[n++] = copy;
	}
	closedir(d);
	if (err) {
		while (n)
			free(v[--n]);
		free(v);
		errno = err;
		return -1;
	}
	if (cmp && n > 1)
		qsort(v, n, sizeof(*v), (int (*)(const void *, const void *))cmp);
	*list = v;
	return (int)n;
}

/* -2: libc's (dirfd and path rewritten if needed); else scandir's result. */
__attribute__((noinline)) static int view_scandirat(int *dirfd, const char **path,
						    struct dirent64 ***list,
						    int (*filter)(const struct dirent64 *),
						    int (*cmp)(const struct dirent64 **,
							       const struct dirent64 **),
						    struct sib_fs_lookup *lk)
{
	DIR *d;

	switch (classify(*dirfd, *path, lk)) {
	case SIB_FS_PASS:
		*path = pass_path(dirfd, *path, lk);
		return -2;
	case SIB_FS_ERR:
		errno = lk->err;
		return -1;
	default:
		break;
	}
	d = opendir_node(lk);
	if (!d)
		return -1;
	if (!dir_is_ours(d)) {
		/* A real directory the table could not take: libc reads it. */
		REAL(closedir, -1, d);
		return -2;
	}
	return scan_stream(d, list, filter, cmp);
}

typedef int (*scan_filter64)(const struct dirent64 *);
typedef int (*scan_cmp64)(const struct dirent64 **, const struct dirent64 **);

int scandir(const char *path, struct dirent ***list, int (*filter)(const struct dirent *),
	    int (*cmp)(const struct dirent **, const struct dirent **))
{
	struct sib_fs_lookup lk;
	int d = AT_FDCWD, r;

	if (!maybe_ours(AT_FDCWD, path))
		return REAL(scandir, -1, path, list, filter, cmp);
	r = view_scandirat(&d, &path, (struct dirent64 ***)list, (scan_filter64)filter,
			   (scan_cmp64)cmp, &lk);
	return r != -2 ? r : REAL(scandir, -1, path, list, filter, cmp);
}

int scandir64(const char *path, struct dirent64 ***list, int (*filter)(const struct dirent64 *),
	      int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	struct sib_fs_lookup lk;
	int d = AT_FDCWD, r;

	if (!maybe_ours(AT_FDCWD, path))
		return REAL(scandir64, -1, path, list, filter, cmp);
	r = view_scandirat(&d, &path, list, filter, cmp, &lk);
	return r != -2 ? r : REAL(scandir64, -1, path, list, filter, cmp);
}

int scandirat(int dirfd, const char *path, struct dirent ***list,
	      int (*filter)(const struct dirent *),
	      int (*cmp)(const struct dirent **, const struct dirent **))
{
	struct sib_fs_lookup lk;
	int r;

	if (!maybe_ours(dirfd, path))
		return REAL(scandirat, -1, dirfd, path, list, filter, cmp);
	r = view_scandirat(&dirfd, &path, (struct dirent64 ***)list, (scan_filter64)filter,
			   (scan_cmp64)cmp, &lk);
	return r != -2 ? r : REAL(scandirat, -1, dirfd, path, list, filter, cmp);
}

int scandirat64(int dirfd, const char *path, struct dirent64 ***list,
		int (*filter)(const struct dirent64 *),
		int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	struct sib_fs_lookup lk;
	int r;

	if (!maybe_ours(dirfd, path))
		return REAL(scandirat64, -1, dirfd, path, list, filter, cmp);
	r = view_scandirat(&dirfd, &path, list, filter, cmp, &lk);
	return r != -2 ? r : REAL(scandirat64, -1, dirfd, path, list, filter, cmp);
}

/* ---------------------------------------------------------------- links and names */

__attribute__((noinline)) static ssize_t view_readlinkat(int dirfd, const char *path, char *buf,
							 size_t size)
{
	struct sib_fs_lookup lk;
	ssize_t ret;

	switch (classify(dirfd, path, &lk)) {
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

	switch (classify(AT_FDCWD, path, &lk)) {
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
	switch (classify(AT_FDCWD, path, &lk)) {
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
	if (!may_change_tables()) {
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

	if (kind_of(fd) == FD_VDIR && sib_fs_path(&fd_ents[fd].node, path, sizeof(path)) &&
	    may_change_tables()) {
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

	switch (classify(AT_FDCWD, *path, lk)) {
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

ssize_t fgetxattr(int fd, const char *name, void *value, size_t size)
{
	unsigned k = kind_of(fd);

	if (__builtin_expect(k == FD_NONE || k == FD_RDIR, 1))
		return REAL(fgetxattr, -1, fd, name, value, size);
	errno = ENODATA;
	return -1;
}

ssize_t flistxattr(int fd, char *list, size_t size)
{
	unsigned k = kind_of(fd);

	if (__builtin_expect(k == FD_NONE || k == FD_RDIR, 1))
		return REAL(flistxattr, -1, fd, list, size);
	return 0;
}

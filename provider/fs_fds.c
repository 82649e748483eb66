/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The view's descriptors (provider/fs_libc.h): a file of the view is a
 * memfd holding its text, reopened read-only through /proc/self/fd (read,
 * lseek, poll, mmap and close are then the kernel's own; write fails with
 * EBADF as on a read-only sysfs descriptor); a directory only the view has
 * is an empty memfd; a character device is whatever its open returned.
 * Each is marked in a table indexed by descriptor, a byte per descriptor
 * read with one load and no lock, so read, write, close, fstat and fcntl on
 * every other descriptor cost one predictable branch more than libc's own.
 * The calls that close or copy descriptors (close, close_range, closefrom,
 * fclose -- glibc closes inside the library --, dup, dup2, dup3, fcntl
 * F_DUPFD) keep the table true.
 *
 * vfork: a child that shares our memory must not change the table (Python
 * closes and dup2s descriptors in such a child before exec).  The pid the
 * table belongs to is kept, and a process whose pid differs without having
 * passed our fork handler leaves it alone.
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "provider/fs_libc.h"

/* ---------------------------------------------------------------- libc's own */

void *sib_fsv_real_lookup(const char *name, const char *ver, void **slot)
{
	void *f = dlvsym(RTLD_NEXT, name, ver);

	if (!f)
		f = dlsym(RTLD_NEXT, name);
	__atomic_store_n(slot, f, __ATOMIC_RELAXED);
	return f;
}

DEFINE_REAL(ssize_t, read, "GLIBC_2.2.5", (int, void *, size_t))
DEFINE_REAL(ssize_t, __read_chk, "GLIBC_2.4", (int, void *, size_t, size_t))
DEFINE_REAL(int, close_range, "GLIBC_2.34", (unsigned, unsigned, int))
DEFINE_REAL(void, closefrom, "GLIBC_2.34", (int))
DEFINE_REAL(int, dup, "GLIBC_2.2.5", (int))
DEFINE_REAL(int, dup2, "GLIBC_2.2.5", (int, int))
DEFINE_REAL(int, dup3, "GLIBC_2.9", (int, int, int))
DEFINE_REAL(int, fcntl64, "GLIBC_2.28", (int, int, ...))
DEFINE_REAL(int, fclose, "GLIBC_2.2.5", (FILE *))
DEFINE_REAL(int, fstat, "GLIBC_2.33", (int, struct stat *))
DEFINE_REAL(int, fstat64, "GLIBC_2.33", (int, struct stat64 *))
DEFINE_REAL(int, __fxstat, "GLIBC_2.2.5", (int, int, struct stat *))
DEFINE_REAL(int, __fxstat64, "GLIBC_2.2.5", (int, int, struct stat64 *))
DEFINE_REAL(ssize_t, fgetxattr, "GLIBC_2.3", (int, const char *, void *, size_t))
DEFINE_REAL(ssize_t, flistxattr, "GLIBC_2.3", (int, char *, size_t))

/* Declared by no header of glibc 2.36, still exported. */
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat and stat64 differ here");
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent and dirent64 differ");

/* ---------------------------------------------------------------- descriptors */

uint8_t sib_fsv_kinds[FS_FD_MAX];
struct fd_entry sib_fsv_ents[FS_FD_MAX];
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */

/* The process the table belongs to (see vfork at the top). */
static pid_t owner_pid;
static pthread_once_t owner_once = PTHREAD_ONCE_INIT;

/* A fork()ed child gets the table, unlocked, and owns it. */
static void owner_atfork_prepare(void)
{
	pthread_mutex_lock(&fd_lock);
}

static void owner_atfork_parent(void)
{
	pthread_mutex_unlock(&fd_lock);
}

static void owner_atfork_child(void)
{
	owner_pid = getpid();
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
bool sib_fsv_may_change(void)
{
	pthread_once(&owner_once, owner_init);
	return getpid() == owner_pid;
}

/* Marks fd as the view's.  False when it cannot be (out of the table, or a
 * vfork child): the caller then refuses the descriptor. */
bool sib_fsv_track(int fd, enum fd_kind kind, const struct fd_entry *e)
{
	if ((unsigned)fd >= FS_FD_MAX || !sib_fsv_may_change())
		return false;
	pthread_mutex_lock(&fd_lock);
	sib_fsv_ents[fd] = *e;
	__atomic_store_n(&sib_fsv_kinds[fd], (uint8_t)kind, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fd_lock);
	return true;
}

/* fd is being closed (close, dup2 onto it, close_range, fclose): forget
 * it, telling its character device first.  Copies of a device descriptor
 * stop being the device's when the original closes. */
void sib_fsv_untrack(int fd)
{
	const struct softib_cdev_ops *ops = NULL;
	unsigned kind = kind_of(fd), copies = 0;
	int key = -1;

	if (!kind || !sib_fsv_may_change())
		return;
	pthread_mutex_lock(&fd_lock);
	kind = sib_fsv_kinds[fd];
	if (kind == FD_CDEV) {
		key = sib_fsv_ents[fd].key;
		if (key == fd) {
			ops = sib_fsv_ents[fd].ops;
			copies = sib_fsv_ents[fd].copies;
		} else if (kind_of(key) == FD_CDEV && sib_fsv_ents[key].copies) {
			sib_fsv_ents[key].copies--;
		}
	}
	__atomic_store_n(&sib_fsv_kinds[fd], FD_NONE, __ATOMIC_RELEASE);
	for (int i = 0; copies && i < FS_FD_MAX; i++)
		if (sib_fsv_kinds[i] == FD_CDEV && sib_fsv_ents[i].key == fd) {
			__atomic_store_n(&sib_fsv_kinds[i], FD_NONE, __ATOMIC_RELEASE);
			copies--;
		}
	pthread_mutex_unlock(&fd_lock);
	if (ops && ops->close)
		ops->close(fd);
}

void sib_fsv_set_dir(int fd, struct vdir *dir)
{
	if ((unsigned)fd >= FS_FD_MAX)
		return;
	pthread_mutex_lock(&fd_lock);
	sib_fsv_ents[fd].dir = dir;
	pthread_mutex_unlock(&fd_lock);
}

/* newfd is a copy of oldfd (dup, dup2, dup3, F_DUPFD). */
static void track_copy(int oldfd, int newfd)
{
	struct fd_entry e;
	unsigned kind;

	if ((unsigned)newfd >= FS_FD_MAX || !sib_fsv_may_change())
		return;
	pthread_mutex_lock(&fd_lock);
	kind = sib_fsv_kinds[oldfd];
	e = sib_fsv_ents[oldfd];
	e.dir = NULL;
	e.copies = 0;
	if (kind == FD_CDEV)
		sib_fsv_ents[e.key].copies++;
	if (kind) {
		sib_fsv_ents[newfd] = e;
		__atomic_store_n(&sib_fsv_kinds[newfd], (uint8_t)kind, __ATOMIC_RELEASE);
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

int sib_fsv_memfd(const char *name, int flags)
{
	return (int)syscall(SYS_memfd_create, name, (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
}

int sib_fsv_finish(int fd, enum fd_kind kind, const struct fd_entry *e)
{
	if (fd < 0)
		return -1;
	fd = low_fd(fd);
	if (fd < 0)
		return -1;
	if (!sib_fsv_track(fd, kind, e)) {
		REAL(close, -1, fd);
		errno = (unsigned)fd >= FS_FD_MAX ? EMFILE : EAGAIN;
		return -1;
	}
	return fd;
}

/* ---------------------------------------------------------------- close and copies */

int close(int fd)
{
	if (__builtin_expect(kind_of(fd) != FD_NONE, 0))
		sib_fsv_untrack(fd);
	return REAL(close, -1, fd);
}

int fclose(FILE *f)
{
	/* glibc's fclose closes inside the library, past close().  f is
	 * never NULL: glibc declares it nonnull (2.39 on) and faults on it. */
	if (kind_of(f->_fileno) != FD_NONE)
		sib_fsv_untrack(f->_fileno);
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
			sib_fsv_untrack((int)fd);
}

int close_range(unsigned first, unsigned last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last && sib_fsv_may_change())
		untrack_range(first, last);
	return REAL(close_range, -1, first, last, flags);
}

void closefrom(int lowfd)
{
	closefrom_fn f = real_closefrom();

	if (lowfd >= 0 && sib_fsv_may_change())
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
		sib_fsv_untrack(newfd);
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
		ops = sib_fsv_ents[fd].ops;
		if (ops && ops->read)
			return ops->read(sib_fsv_ents[fd].key, buf, len);
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
		ops = sib_fsv_ents[fd].ops;
		if (ops && ops->write)
			return ops->write(sib_fsv_ents[fd].key, buf, len);
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

/* ---------------------------------------------------------------- ioctl */

DEFINE_REAL(int, ioctl, "GLIBC_2.2.5", (int, unsigned long, ...))

__attribute__((noinline)) static int view_ioctl(int fd, unsigned long request, void *arg,
						unsigned kind)
{
	const struct softib_cdev_ops *ops;

	ops = kind == FD_CDEV ? sib_fsv_ents[fd].ops : NULL;
	if (ops && ops->ioctl) {
		int rc = ops->ioctl(sib_fsv_ents[fd].key, request, arg);

		if (rc != -1 || errno != ENOTTY)
			return rc;
	}
	/* Not the device's own: the descriptor's (FIONBIO, FIOCLEX and the
	 * like work on every file, the eventfd behind a device too). */
	return REAL(ioctl, -1, fd, request, arg);
}

int ioctl(int fd, unsigned long request, ...)
{
	unsigned kind = kind_of(fd);
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (__builtin_expect(kind == FD_NONE, 1))
		return REAL(ioctl, -1, fd, request, arg);
	return view_ioctl(fd, request, arg, kind);
}

/* ---------------------------------------------------------------- fstat */

/* fstat of a descriptor of the view; -2: libc's. */
int sib_fsv_fstat(int fd, struct stat *st)
{
	unsigned kind = kind_of(fd);

	if (kind == FD_NONE || kind == FD_RDIR)
		return -2;
	if (!launder(st)) {
		errno = EFAULT;
		return -1;
	}
	sib_fs_stat(&sib_fsv_ents[fd].node, st);
	return 0;
}

int fstat(int fd, struct stat *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(fstat, -1, fd, st);
	r = sib_fsv_fstat(fd, st);
	return r != -2 ? r : REAL(fstat, -1, fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(fstat64, -1, fd, st);
	r = sib_fsv_fstat(fd, (struct stat *)st);
	return r != -2 ? r : REAL(fstat64, -1, fd, st);
}

int __fxstat(int ver, int fd, struct stat *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(__fxstat, -1, ver, fd, st);
	r = sib_fsv_fstat(fd, st);
	return r != -2 ? r : REAL(__fxstat, -1, ver, fd, st);
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	int r;

	if (__builtin_expect(kind_of(fd) == FD_NONE, 1))
		return REAL(__fxstat64, -1, ver, fd, st);
	r = sib_fsv_fstat(fd, (struct stat *)st);
	return r != -2 ? r : REAL(__fxstat64, -1, ver, fd, st);
}

/* ---------------------------------------------------------------- extended attributes */

/* The view's nodes have none (fs_view.c: getxattr). */
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


/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the three files that stand in for the C library's file calls share
 * (provider/fs_view.h has the view itself):
 *   fs_view.c   path calls: open, fopen, stat, access, readlink, realpath,
 *               chdir/getcwd, extended attributes; the working directory
 *   fs_fds.c    descriptor calls and the table of the view's descriptors:
 *               read, write, close, close_range, fclose, dup, fcntl, fstat
 *   fs_dirs.c   directory streams: opendir ... closedir, scandir
 * libsoftib.so exports their functions at the versions glibc 2.36 exports
 * them (softib.map); they reach libc's own through dlvsym(RTLD_NEXT).
 * None of them is linked into the unit tests' archive (Makefile): they
 * would stand in for libc there too.
 */
#ifndef SIB_PROVIDER_FS_LIBC_H
#define SIB_PROVIDER_FS_LIBC_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "provider/fs_view.h"

/* ---- libc's own functions ---- */

void *sib_fsv_real_lookup(const char *name, const char *ver, void **slot);

/* real_NAME(): libc's NAME at version ver, looked up once per file. */
#define DEFINE_REAL(ret, name, ver, params)                                                        \
	typedef ret(*name##_fn) params;                                                            \
	static name##_fn real_##name##_p;                                                          \
	static inline name##_fn real_##name(void)                                                  \
	{                                                                                          \
		name##_fn f = __atomic_load_n(&real_##name##_p, __ATOMIC_RELAXED);                 \
		if (__builtin_expect(!f, 0))                                                       \
			f = (name##_fn)sib_fsv_real_lookup(#name, ver, (void **)&real_##name##_p); \
		return f;                                                                          \
	}

/* Calls libc's name(...); ENOSYS and fail if this libc has none. */
#define REAL(name, fail, ...)                                                                      \
	({                                                                                         \
		name##_fn f_ = real_##name();                                                      \
		f_ ? f_(__VA_ARGS__) : (errno = ENOSYS, (fail));                                   \
	})

/* Those more than one file calls. */
DEFINE_REAL(int, openat, "GLIBC_2.4", (int, const char *, int, ...))
DEFINE_REAL(int, close, "GLIBC_2.2.5", (int))
DEFINE_REAL(int, fcntl, "GLIBC_2.2.5", (int, int, ...))
DEFINE_REAL(ssize_t, write, "GLIBC_2.2.5", (int, const void *, size_t))

/* libc declares most path and buffer arguments nonnull, so the compiler
 * would drop our NULL checks; a program passing NULL gets libc's answer
 * (EFAULT from the kernel), never a crash of ours. */
static inline const void *launder(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/* ---- the view's descriptors (fs_fds.c) ---- */

#define FS_FD_MAX 65536

enum fd_kind {
	FD_NONE = 0,
	FD_FILE,  /* a file of the view: memfd with its text */
	FD_VDIR,  /* a directory only the view has: an empty memfd */
	FD_RDIR,  /* a directory of the view that exists for real: the real one */
	FD_CDEV,  /* a character device: what its open returned */
	FD_OPATH, /* O_PATH of a file or device of the view */
};

struct vdir;

struct fd_entry {
	struct sib_fs_node node;
	const struct softib_cdev_ops *ops; /* FD_CDEV */
	int key;			   /* FD_CDEV: the descriptor ops->open returned */
	unsigned copies;		   /* FD_CDEV key: dup()s of it still tracked */
	struct vdir *dir;		   /* the stream reading this descriptor */
};

/* Indexed by descriptor; kinds are read with one load and no lock, and
 * written (with the entries) under a lock. */
extern uint8_t sib_fsv_kinds[FS_FD_MAX];
extern struct fd_entry sib_fsv_ents[FS_FD_MAX];

static inline unsigned kind_of(int fd)
{
	return (unsigned)fd < FS_FD_MAX ? __atomic_load_n(&sib_fsv_kinds[fd], __ATOMIC_ACQUIRE)
					: FD_NONE;
}

/* False in a vfork child: it shares our memory, not our descriptors. */
bool sib_fsv_may_change(void);
/* fd becomes the view's (false: it cannot be; the caller refuses it). */
bool sib_fsv_track(int fd, enum fd_kind kind, const struct fd_entry *e);
/* fd is being closed: forget it, telling its character device first. */
void sib_fsv_untrack(int fd);
/* Tracks a descriptor the view just opened; on failure closes it: -1. */
int sib_fsv_finish(int fd, enum fd_kind kind, const struct fd_entry *e);
/* An empty memfd standing for a node (O_CLOEXEC from flags). */
int sib_fsv_memfd(const char *name, int flags);
/* fstat of a descriptor of the view; -2: libc's. */
int sib_fsv_fstat(int fd, struct stat *st);
/* The directory stream reading fd (a descriptor of the view). */
void sib_fsv_set_dir(int fd, struct vdir *dir);

/* ---- paths (fs_view.c) ---- */

enum { CWD_UNKNOWN, CWD_ELSEWHERE, CWD_NEAR, CWD_VIRTUAL };
/* Where the working directory is: CWD_NEAR and CWD_VIRTUAL can reach the
 * view with a relative path. */
int sib_fsv_cwd_state(void);

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
		return sib_fsv_cwd_state() >= CWD_NEAR;
	k = kind_of(dirfd);
	return k == FD_VDIR || k == FD_RDIR;
}

/* Where path (for dirfd) is: the view's node, an error the view answers,
 * or libc's (with lk->path instead of path when lk->rewritten). */
enum sib_fs_found sib_fsv_classify(int dirfd, const char *path, struct sib_fs_lookup *lk);

/* The (dirfd, path) libc should see for a PASS. */
static inline const char *pass_path(int *dirfd, const char *path, const struct sib_fs_lookup *lk)
{
	if (!lk->rewritten)
		return path;
	*dirfd = AT_FDCWD;
	return lk->path;
}

#endif

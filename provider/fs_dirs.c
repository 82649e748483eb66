/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Directory streams of the view (provider/fs_libc.h): our own DIR, which
 * like glibc's begins with its descriptor, so readdir tells the two apart
 * by looking the descriptor up in the view's table.  A directory of the
 * view that exists for real (/sys/class, /dev, /sys/class/infiniband on a
 * host with RDMA hardware) lists the real entries, then the view's.
 * scandir is answered here because glibc's reads inside the library.
 */
#undef _FORTIFY_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/fs_libc.h"

/* ---------------------------------------------------------------- libc's own */

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
	return (k == FD_VDIR || k == FD_RDIR) && sib_fsv_ents[fd].dir == (struct vdir *)(void *)d;
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
	sib_fsv_set_dir(fd, v);
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
		sib_fsv_untrack(fd);
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
		if (fd < 0 || !sib_fsv_track(fd, FD_RDIR, &e)) {
			/* Cannot be ours: the real directory as it is. */
			return real;
		}
	} else {
		fd = sib_fsv_finish(sib_fsv_memfd("softib-dir", O_CLOEXEC), FD_VDIR, &e);
		if (fd < 0)
			return NULL;
	}
	d = vdir_new(&lk->node, fd, real);
	if (!d) {
		sib_fsv_untrack(fd);
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

	switch (sib_fsv_classify(AT_FDCWD, path, &lk)) {
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
	if (sib_fsv_ents[fd].dir) {
		errno = EINVAL; /* a stream already reads it */
		return NULL;
	}
	if (k == FD_RDIR) {
		real = REAL(fdopendir, NULL, fd);
		if (!real)
			return NULL;
	}
	d = vdir_new(&sib_fsv_ents[fd].node, fd, real);
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

	switch (sib_fsv_classify(*dirfd, *path, lk)) {
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


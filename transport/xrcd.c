/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

#include "transport/caps.h"
#include "transport/xrcd.h"

struct sib_xrcd {
	struct sib_xrcd *next;
	bool has_file;
	dev_t dev;
	ino_t ino;
	unsigned opens;
	unsigned users;
	uint32_t num;
};

/* One HCA per process (docs/architecture.md section 3): the registry of file-backed domains. */
static pthread_mutex_t xrcd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sib_xrcd *xrcd_list;
static uint32_t xrcd_count, xrcd_next_num = 1;

int sib_xrcd_open(bool has_file, dev_t dev, ino_t ino, int oflags, struct sib_xrcd **out)
{
	struct sib_xrcd *x = NULL;
	int rc = 0;

	if (oflags & ~(O_CREAT | O_EXCL))
		return EINVAL;
	if (!has_file && !(oflags & O_CREAT))
		return EINVAL;
	pthread_mutex_lock(&xrcd_lock);
	if (has_file) {
		for (x = xrcd_list; x; x = x->next)
			if (x->has_file && x->dev == dev && x->ino == ino)
				break;
		if (x && (oflags & O_EXCL) && (oflags & O_CREAT)) {
			rc = EINVAL;
			goto out;
		}
		if (!x && !(oflags & O_CREAT)) {
			rc = EAGAIN;
			goto out;
		}
	}
	if (x) {
		x->opens++;
		*out = x;
		goto out;
	}
	if (xrcd_count >= SIB_MAX_XRCD) {
		rc = ENOMEM;
		goto out;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		rc = ENOMEM;
		goto out;
	}
	x->has_file = has_file;
	x->dev = dev;
	x->ino = ino;
	x->opens = 1;
	x->num = xrcd_next_num++;
	x->next = xrcd_list;
	xrcd_list = x;
	xrcd_count++;
	*out = x;
out:
	pthread_mutex_unlock(&xrcd_lock);
	return rc;
}

int sib_xrcd_close(struct sib_xrcd *x)
{
	int rc = 0;

	pthread_mutex_lock(&xrcd_lock);
	if (x->opens == 1 && x->users) {
		rc = EBUSY;
	} else if (--x->opens == 0) {
		for (struct sib_xrcd **p = &xrcd_list; *p; p = &(*p)->next) {
			if (*p == x) {
				*p = x->next;
				break;
			}
		}
		xrcd_count--;
		free(x);
	}
	pthread_mutex_unlock(&xrcd_lock);
	return rc;
}

void sib_xrcd_get(struct sib_xrcd *x)
{
	pthread_mutex_lock(&xrcd_lock);
	x->users++;
	pthread_mutex_unlock(&xrcd_lock);
}

void sib_xrcd_put(struct sib_xrcd *x)
{
	pthread_mutex_lock(&xrcd_lock);
	x->users--;
	pthread_mutex_unlock(&xrcd_lock);
}

uint32_t sib_xrcd_num(const struct sib_xrcd *x)
{
	return x->num;
}

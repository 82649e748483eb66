/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Memory regions: register, reregister, deregister (IBA 10.6.3, 11.2.8). */
#include <errno.h>

#include "memreg/table.h"

#define MEMREG_MR_KNOWN_ACCESS                                                                     \
	(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ |      \
	 MEMREG_ACCESS_REMOTE_ATOMIC | MEMREG_ACCESS_MW_BIND | MEMREG_ACCESS_ZERO_BASED |          \
	 MEMREG_ACCESS_ON_DEMAND | MEMREG_ACCESS_HUGETLB | MEMREG_ACCESS_FLUSH_GLOBAL |         \
	 MEMREG_ACCESS_FLUSH_PERSISTENT)

int memreg_mr_access_valid(uint32_t access, const char **rule)
{
	const char *dummy;

	if (!rule)
		rule = &dummy;
	if (access & ~(uint32_t)MEMREG_MR_KNOWN_ACCESS) {
		*rule = "unknown access flags";
		return EINVAL;
	}
	/* ibv_reg_mr(3): remote write or atomic access needs local write. */
	if ((access & (MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & MEMREG_ACCESS_LOCAL_WRITE)) {
		*rule = "REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE";
		return EINVAL;
	}
	/* A FLUSH to persistence needs persistent memory, which softib has
	 * none of: refused at registration, as rxe refuses non-pmem pages. */
	if (access & MEMREG_ACCESS_FLUSH_PERSISTENT) {
		*rule = "FLUSH_PERSISTENT needs persistent memory (softib has none)";
		return EINVAL;
	}
	*rule = NULL;
	return 0;
}

static int memreg_mr_translation_valid(const struct memreg_mr_attr *a)
{
	if (memreg_mr_implicit(a))
		return a->iova ? EINVAL : 0; /* as mlx5: the address is the iova */
	if (a->length && !a->host)
		return EINVAL;
	if (a->length && a->iova + (a->length - 1) < a->iova)
		return EINVAL; /* the region's address range would wrap */
	if (a->length && (uintptr_t)a->host + (a->length - 1) < (uintptr_t)a->host)
		return EINVAL;
	return 0;
}

int memreg_mr_register(struct memreg_table *t, const struct memreg_mr_attr *a, uint32_t *key)
{
	struct memreg_slot *s;
	int err;

	err = memreg_mr_access_valid(a->access, NULL);
	if (err)
		return err;
	err = memreg_mr_translation_valid(a);
	if (err)
		return err;
	pthread_mutex_lock(&t->lock);
	s = memreg_slot_alloc(t, MEMREG_SLOT_MR);
	if (!s) {
		pthread_mutex_unlock(&t->lock);
		return ENOMEM;
	}
	s->host = a->host;
	s->iova = a->iova;
	s->length = a->length;
	s->access = a->access;
	s->pd = a->pd;
	*key = memreg_slot_key(s);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static struct memreg_slot *memreg_mr_lookup(struct memreg_table *t, uint32_t key)
{
	enum memreg_verdict why;
	struct memreg_slot *s = memreg_slot_lookup(t, key, &why);

	return s && s->kind == MEMREG_SLOT_MR ? s : NULL;
}

int memreg_mr_rereg(struct memreg_table *t, uint32_t key, unsigned flags,
		    const struct memreg_mr_attr *a)
{
	const unsigned known = MEMREG_REREG_TRANSLATION | MEMREG_REREG_PD | MEMREG_REREG_ACCESS;
	struct memreg_slot *s;
	int err;

	if (!flags || (flags & ~known))
		return EINVAL;
	if (flags & MEMREG_REREG_ACCESS) {
		err = memreg_mr_access_valid(a->access, NULL);
		if (err)
			return err;
	}
	if (flags & MEMREG_REREG_TRANSLATION) {
		err = memreg_mr_translation_valid(a);
		if (err)
			return err;
	}
	pthread_mutex_lock(&t->lock);
	s = memreg_mr_lookup(t, key);
	if (!s) {
		pthread_mutex_unlock(&t->lock);
		return EINVAL;
	}
	if (s->bound_windows) {
		pthread_mutex_unlock(&t->lock);
		return EBUSY;
	}
	/* An access change alone may not leave the whole address space
	 * registered without ON_DEMAND (an implicit MR losing it). */
	if ((flags & MEMREG_REREG_ACCESS) && !(flags & MEMREG_REREG_TRANSLATION)) {
		struct memreg_mr_attr kept = { .host = s->host, .iova = s->iova,
					       .length = s->length, .access = a->access };

		if (memreg_mr_translation_valid(&kept)) {
			pthread_mutex_unlock(&t->lock);
			return EINVAL;
		}
	}
	/* No new access may start; finish the ones in flight on the old
	 * attributes before changing them. */
	s->dying = true;
	memreg_slot_wait_unheld(t, s);
	if (flags & MEMREG_REREG_TRANSLATION) {
		s->host = a->host;
		s->iova = a->iova;
		s->length = a->length;
	}
	if (flags & MEMREG_REREG_PD)
		s->pd = a->pd;
	if (flags & MEMREG_REREG_ACCESS)
		s->access = a->access;
	s->dying = false;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

int memreg_mr_deregister(struct memreg_table *t, uint32_t key)
{
	struct memreg_slot *s;

	pthread_mutex_lock(&t->lock);
	s = memreg_mr_lookup(t, key);
	if (!s) {
		pthread_mutex_unlock(&t->lock);
		return EINVAL;
	}
	if (s->bound_windows) {
		pthread_mutex_unlock(&t->lock);
		return EBUSY;
	}
	s->dying = true;
	memreg_slot_wait_unheld(t, s);
	memreg_slot_free(t, s);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

int memreg_mr_query(struct memreg_table *t, uint32_t key, struct memreg_mr_attr *out)
{
	struct memreg_slot *s;

	pthread_mutex_lock(&t->lock);
	s = memreg_mr_lookup(t, key);
	if (s) {
		out->host = s->host;
		out->iova = s->iova;
		out->length = s->length;
		out->access = s->access;
		out->pd = s->pd;
	}
	pthread_mutex_unlock(&t->lock);
	return s ? 0 : EINVAL;
}

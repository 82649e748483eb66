/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "transport/numtab.h"

#define NUM_LIMIT (1u << 24)
#define NBUCKETS 4096u

struct entry {
	struct entry *next;
	uint32_t num;
	void *obj;
};

struct sib_numtab {
	pthread_mutex_t lock;
	uint32_t first, max, count;
	uint32_t next_num; /* where the next search starts: numbers are not reused at once */
	struct entry *bucket[NBUCKETS];
};

struct sib_numtab *sib_numtab_create(uint32_t first, uint32_t max)
{
	struct sib_numtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->first = first;
	t->max = max;
	t->next_num = first;
	return t;
}

void sib_numtab_destroy(struct sib_numtab *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < NBUCKETS; i++) {
		struct entry *e = t->bucket[i], *n;

		for (; e; e = n) {
			n = e->next;
			free(e);
		}
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static struct entry *find(struct sib_numtab *t, uint32_t num)
{
	for (struct entry *e = t->bucket[num % NBUCKETS]; e; e = e->next)
		if (e->num == num)
			return e;
	return NULL;
}

static int add(struct sib_numtab *t, uint32_t num, void *obj)
{
	struct entry *e = malloc(sizeof(*e));

	if (!e)
		return ENOMEM;
	e->num = num;
	e->obj = obj;
	e->next = t->bucket[num % NBUCKETS];
	t->bucket[num % NBUCKETS] = e;
	t->count++;
	return 0;
}

int sib_numtab_alloc(struct sib_numtab *t, void *obj, uint32_t *num)
{
	int rc = ENOMEM;

	pthread_mutex_lock(&t->lock);
	if (t->count < t->max && t->count < NUM_LIMIT - t->first) {
		uint32_t n = t->next_num;

		while (find(t, n))
			n = n + 1 >= NUM_LIMIT ? t->first : n + 1;
		rc = add(t, n, obj);
		if (!rc) {
			*num = n;
			t->next_num = n + 1 >= NUM_LIMIT ? t->first : n + 1;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int sib_numtab_insert(struct sib_numtab *t, uint32_t num, void *obj)
{
	int rc;

	if (num >= NUM_LIMIT)
		return EINVAL;
	pthread_mutex_lock(&t->lock);
	rc = find(t, num) ? EEXIST : add(t, num, obj);
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void sib_numtab_free(struct sib_numtab *t, uint32_t num)
{
	pthread_mutex_lock(&t->lock);
	for (struct entry **p = &t->bucket[num % NBUCKETS]; *p; p = &(*p)->next) {
		if ((*p)->num == num) {
			struct entry *e = *p;

			*p = e->next;
			free(e);
			t->count--;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void *sib_numtab_lookup(struct sib_numtab *t, uint32_t num)
{
	struct entry *e;
	void *obj;

	pthread_mutex_lock(&t->lock);
	e = find(t, num);
	obj = e ? e->obj : NULL;
	pthread_mutex_unlock(&t->lock);
	return obj;
}

uint32_t sib_numtab_count(struct sib_numtab *t)
{
	uint32_t n;

	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}

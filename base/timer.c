/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/timer.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sib_timers_init(struct sib_timers *q)
{
	memset(q, 0, sizeof(*q));
	q->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (q->fd < 0)
		return -errno;
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

void sib_timers_fini(struct sib_timers *q)
{
	if (q->fd < 0)
		return;
	close(q->fd);
	q->fd = -1;
	pthread_mutex_destroy(&q->lock);
}

static void fd_arm_locked(struct sib_timers *q)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (q->head) {
		uint64_t d = q->head->deadline_ns;

		its.it_value.tv_sec = (time_t)(d / 1000000000ull);
		its.it_value.tv_nsec = (long)(d % 1000000000ull);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1; /* 0 would disarm */
	}
	timerfd_settime(q->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void unlink_locked(struct sib_timers *q, struct sib_timer *t)
{
	for (struct sib_timer **pp = &q->head; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	t->next = NULL;
	t->armed = false;
}

void sib_timer_arm(struct sib_timers *q, struct sib_timer *t, uint64_t ns, sib_timer_fn fn,
		   void *arg)
{
	struct sib_timer **pp, *old_head;
	bool head_changed;

	pthread_mutex_lock(&q->lock);
	old_head = q->head;
	if (t->armed)
		unlink_locked(q, t);
	t->deadline_ns = now_ns() + ns;
	t->fn = fn;
	t->arg = arg;
	for (pp = &q->head; *pp && (*pp)->deadline_ns <= t->deadline_ns; pp = &(*pp)->next)
		;
	t->next = *pp;
	*pp = t;
	t->armed = true;
	head_changed = q->head == t || q->head != old_head;
	/* The timerfd follows the first deadline (sib_timers_run relies on
	 * it); it wakes a sleeping loop without a separate kick. */
	if (head_changed)
		fd_arm_locked(q);
	pthread_mutex_unlock(&q->lock);
}

bool sib_timer_cancel(struct sib_timers *q, struct sib_timer *t)
{
	bool was;

	pthread_mutex_lock(&q->lock);
	was = t->armed;
	if (was) {
		bool head = q->head == t;

		unlink_locked(q, t);
		if (head)
			fd_arm_locked(q);
	}
	pthread_mutex_unlock(&q->lock);
	return was;
}

int sib_timers_run(struct sib_timers *q)
{
	uint64_t now = now_ns();
	int n = 0;

	for (;;) {
		struct sib_timer *t;
		sib_timer_fn fn;
		void *arg;

		pthread_mutex_lock(&q->lock);
		t = q->head;
		if (!t || t->deadline_ns > now) {
			/* The timerfd follows the head; only running timers
			 * moved it (arm and cancel keep it up to date). */
			if (n)
				fd_arm_locked(q);
			pthread_mutex_unlock(&q->lock);
			return n;
		}
		q->head = t->next;
		t->next = NULL;
		t->armed = false;
		fn = t->fn;
		arg = t->arg;
		pthread_mutex_unlock(&q->lock);
		fn(arg);
		n++;
	}
}

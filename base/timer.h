/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Timers that run on a progress loop: a list sorted by deadline and a
 * timerfd that is readable once the first deadline has passed.  The loop
 * that owns the queue (hca/progress.c) sleeps on sib_timers_fd and calls
 * sib_timers_run; anyone may arm and cancel, from any thread.  Callbacks
 * run on the thread that calls sib_timers_run, with no lock of the queue
 * held, so they may arm timers themselves.  Deadlines are CLOCK_MONOTONIC.
 */
#ifndef SIB_BASE_TIMER_H
#define SIB_BASE_TIMER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef void (*sib_timer_fn)(void *arg);

struct sib_timer {
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	sib_timer_fn fn;
	void *arg;
	struct sib_timer *next;
	bool armed;
};

struct sib_timers {
	pthread_mutex_t lock;
	struct sib_timer *head; /* sorted by deadline */
	int fd;			/* timerfd: armed for the head's deadline */
};

/* 0, or a negative errno when the timerfd cannot be made (nothing to undo). */
int sib_timers_init(struct sib_timers *q);
void sib_timers_fini(struct sib_timers *q);
/* Readable once the first deadline has passed; read it (8 bytes) to clear. */
static inline int sib_timers_fd(const struct sib_timers *q)
{
	return q->fd;
}

/* Arms t to run fn(arg) ns nanoseconds from now; re-arming an armed timer
 * moves it. */
void sib_timer_arm(struct sib_timers *q, struct sib_timer *t, uint64_t ns, sib_timer_fn fn,
		   void *arg);
/* Disarms t; false when it was not armed (already ran or running now). */
bool sib_timer_cancel(struct sib_timers *q, struct sib_timer *t);
/* Runs every timer that is due; returns how many ran. */
int sib_timers_run(struct sib_timers *q);

#endif

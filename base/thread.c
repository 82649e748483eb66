/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <signal.h>

#include "base/thread.h"

int sib_thread_create(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	/* A new thread inherits its creator's mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

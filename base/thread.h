/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib's own threads (the progress thread, the counters socket, the
 * RDMA CM's goodbye helper) never take a signal: a process-directed
 * signal goes to one of the program's threads, as it would without
 * softib.  Otherwise a program that blocks SIGTERM in its threads and
 * reads it with sigwait or signalfd would be killed by it through ours,
 * and a handler could interrupt softib in the middle of holding its locks.
 */
#ifndef SIB_BASE_THREAD_H
#define SIB_BASE_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread (the
 * caller's mask is left as it was).  0 or an error number. */
int sib_thread_create(pthread_t *th, void *(*fn)(void *), void *arg);

#endif

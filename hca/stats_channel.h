/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A process's counters, readable from outside it by the same user
 * (`softib info --pid N` or `--lid N`, softib(1)).
 *
 * Each HCA with a progress thread listens on a Unix stream socket
 * pid-<pid>.sock in softib's per-user directory (base/rundir.h, mode
 * 0700), served by a thread that sleeps in accept().  A client connects
 * and reads the counters as text, one "name value" per line, and the
 * server closes.  Only the same user gets anything: the directory's
 * permissions keep others from connecting at all, and the server checks
 * the peer's uid (SO_PEERCRED) anyway.  Why this channel: the kernel
 * enforces who may read, a process is found by listing the directory
 * (no port numbers to hand out), and nothing is exposed on a network.
 * (An abstract Unix socket has no permissions; a TCP port reaches any
 * user; shared memory would have to be polled for consistency.)
 */
#ifndef SIB_HCA_STATS_CHANNEL_H
#define SIB_HCA_STATS_CHANNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct sib_hca;

struct sib_stats_channel {
	int fd; /* listening; -1: none */
	pthread_t thread;
	bool running;
	char path[4200];
};

/* Starts listening (a log line at debug and no channel when the
 * directory is not usable: counters are a convenience, never a reason
 * for the device not to open).  stop: closes, joins, unlinks. */
void sib_stats_channel_start(struct sib_hca *hca);
void sib_stats_channel_stop(struct sib_hca *hca);

/* The counters of the HCA as text, "name value" lines; the length
 * written (truncated at len - 1, NUL-terminated). */
size_t sib_hca_stats_text(struct sib_hca *hca, char *buf, size_t len);

/* The socket of process pid in softib's directory; 0 or -ENAMETOOLONG
 * (or the directory's error). */
int sib_stats_socket_path(int pid, char *buf, size_t len);

#endif

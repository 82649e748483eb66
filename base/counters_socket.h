/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A counters socket: a Unix stream socket in softib's per-user directory
 * (rundir.h) that hands a text to its user and to nobody else -- the
 * channel of a process's counters (hca/stats_channel.h) and of
 * softib-sm's (fabric/sm_stats.h), read by `softib info`.  The directory's
 * mode keeps other users from connecting at all; the server checks the
 * peer's uid (SO_PEERCRED) anyway.
 */
#ifndef SIB_BASE_COUNTERS_SOCKET_H
#define SIB_BASE_COUNTERS_SOCKET_H

#include <stddef.h>

/* The text a counters socket hands out, written into a fixed buffer. */
struct sib_text {
	char *buf;
	size_t len, used; /* used stays below len: the text is NUL-terminated */
};

/* Appends to t what fits. */
__attribute__((format(printf, 2, 3))) void sib_text_put(struct sib_text *t, const char *fmt, ...);

/* Listens at path (what was there goes first: a process that had the name
 * before).  The listening descriptor, or a negative errno. */
int sib_counters_listen(const char *path);

/* What a client gets: the text, written into buf (len bytes), made when
 * the client comes; its length. */
typedef size_t (*sib_counters_text_fn)(void *arg, char *buf, size_t len);

/* Takes one client off listening descriptor fd and, when it is this
 * user's, sends it text(arg, buf, len) (at most 1 s of waiting for a
 * client that does not read), then closes it.  0; -EAGAIN when nobody was
 * waiting (a non-blocking fd); another negative errno when accept failed. */
int sib_counters_serve_one(int fd, sib_counters_text_fn text, void *arg, char *buf, size_t len);

/* Connects to path and reads the text into buf (NUL-terminated).  Its
 * length, or a negative errno. */
long sib_counters_read(const char *path, char *buf, size_t len);

/*
 * The same with a command: the client writes one line (at most
 * SIB_COUNTERS_CMD_MAX bytes) and ends its sending side; the server reads
 * it (1 s at most) and answers with cmd(arg, line, buf, len).  A control
 * channel for its user only, as the counters are.
 */
enum { SIB_COUNTERS_CMD_MAX = 256 };
typedef size_t (*sib_counters_cmd_fn)(void *arg, const char *line, char *buf, size_t len);
int sib_counters_serve_cmd(int fd, sib_counters_cmd_fn cmd, void *arg, char *buf, size_t len);
long sib_counters_ask(const char *path, const char *line, char *buf, size_t len);

#endif

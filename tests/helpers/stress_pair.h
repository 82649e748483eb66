/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the stress helpers (stress_rc.c, stress_ud.c) share: two processes
 * made by one fork before any verb, so each is its own HCA (its own node,
 * link, progress thread and SOFTIB_FAULTS stream) as two programs on two
 * hosts would be; a socketpair between them carries the out-of-band
 * exchange (QP numbers, keys, final results) as TCP would for perftest.
 * Also: deterministic data patterns keyed by (key, offset), the completion
 * channel wait, and the port counters that prove faults really happened.
 */
#ifndef SOFTIB_TESTS_STRESS_PAIR_H
#define SOFTIB_TESTS_STRESS_PAIR_H

#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "hca/hca.h"
#include "verbs_open.h"

static int pair_side = -1; /* 0: the parent, 1: the child */
static int pair_sock = -1;
static pid_t pair_child;
static const char *pair_prog = "stress";

static void pair_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pair_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s[%d]: ", pair_prog, pair_side);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}

#define pair_die(...)                                                                             \
	do {                                                                                       \
		pair_say(__VA_ARGS__);                                                             \
		exit(1);                                                                           \
	} while (0)

static uint64_t pair_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Forks; returns this process's side.  A watchdog ends a stuck side. */
static int pair_start(const char *prog, unsigned watchdog_s)
{
	int sv[2];

	pair_prog = prog;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		pair_die("socketpair: %s", strerror(errno));
	fflush(NULL);
	pair_child = fork();
	if (pair_child < 0)
		pair_die("fork: %s", strerror(errno));
	pair_side = pair_child == 0 ? 1 : 0;
	pair_sock = sv[pair_side];
	/* Each side its own capture file: SOFTIB_CAPTURE=x.pcap -> x.pcap.0, .1 */
	if (getenv("SOFTIB_CAPTURE") && *getenv("SOFTIB_CAPTURE")) {
		char path[4096];

		snprintf(path, sizeof(path), "%s.%d", getenv("SOFTIB_CAPTURE"), pair_side);
		setenv("SOFTIB_CAPTURE", path, 1);
	}
	close(sv[1 - pair_side]);
	alarm(watchdog_s); /* SIGALRM kills: the harness sees a failure, not a hang */
	return pair_side;
}

static void pair_write(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = write(pair_sock, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			pair_die("write to peer: %s", r ? strerror(errno) : "closed");
		b += r;
		n -= (size_t)r;
	}
}

static void pair_read(void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(pair_sock, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			pair_die("read from peer: %s", r ? strerror(errno) : "peer exited");
		b += r;
		n -= (size_t)r;
	}
}

/* Both sides send theirs, then read the peer's (the socket buffers both). */
static void pair_xchg(const void *mine, void *peer, size_t n)
{
	pair_write(mine, n);
	pair_read(peer, n);
}

/* Each side's own verdict; the parent's exit status is the pair's. */
static int pair_finish(int my_rc)
{
	int st = 0;

	close(pair_sock);
	if (pair_side == 1)
		return my_rc;
	if (waitpid(pair_child, &st, 0) < 0)
		return 1;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		pair_say("the other side failed (%s %d)",
			 WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return 1;
	}
	return my_rc;
}

/* The port is ACTIVE once the SM gave it a LID. */
static uint16_t pair_wait_lid(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	for (int i = 0; i < 300; i++) {
		if (ibv_query_port(ctx, 1, &pa))
			pair_die("query_port failed");
		if (pa.state == IBV_PORT_ACTIVE && pa.lid)
			return pa.lid;
		usleep(20000);
	}
	pair_die("port 1 never became ACTIVE");
}

/* ------------------------------------------------------------ patterns */

static inline uint64_t pat_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Byte at absolute offset off of the stream named key. */
static inline uint8_t pat_byte(uint64_t key, uint64_t off)
{
	return (uint8_t)(pat_mix(key ^ (off >> 3) * 0xd6e8feb86659fd93ull) >> (8 * (off & 7)));
}

static inline void pat_fill(uint8_t *p, uint64_t len, uint64_t key, uint64_t start)
{
	uint64_t i = 0;

	for (; i < len && ((start + i) & 7); i++)
		p[i] = pat_byte(key, start + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t v = pat_mix(key ^ ((start + i) >> 3) * 0xd6e8feb86659fd93ull);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = pat_byte(key, start + i);
}

/* -1 when p holds the pattern, else the offset of the first wrong byte. */
static inline int64_t pat_check(const uint8_t *p, uint64_t len, uint64_t key, uint64_t start)
{
	uint64_t i = 0;

	for (; i < len && ((start + i) & 7); i++)
		if (p[i] != pat_byte(key, start + i))
			return (int64_t)i;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = pat_mix(key ^ ((start + i) >> 3) * 0xd6e8feb86659fd93ull), got;

		memcpy(&got, p + i, 8);
		if (got != v)
			break;
	}
	for (; i < len; i++)
		if (p[i] != pat_byte(key, start + i))
			return (int64_t)i;
	return -1;
}

/* ------------------------------------------------------------ waiting */

/* Sleeps on the channel (its CQs armed) until an event or ms pass. */
static inline void pair_wait_cq(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, ms) > 0 && !ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		ibv_ack_cq_events(ev_cq, 1);
}

/* ------------------------------------------------------------ counters */

typedef int (*pair_stats_fn)(struct ibv_context *, uint8_t, struct sib_port_stats *);

/* The port's link counters through libsoftib.so (as `softib info` reads them). */
static inline bool pair_port_stats(struct ibv_context *ctx, struct sib_port_stats *st)
{
	pair_stats_fn fn = (pair_stats_fn)dlvsym(RTLD_DEFAULT, "softib_query_port_stats",
						 "SOFTIB_PRIVATE_1");

	memset(st, 0, sizeof(*st));
	return fn && !fn(ctx, 1, st);
}

#endif

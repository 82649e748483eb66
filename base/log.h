/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * base/: what every folder may use, at the bottom of the layer table
 * (README.md, Layout): logging (this header), the timer queue a progress
 * loop runs (timer.h) and softib's per-user directory (rundir.h).  It uses
 * nothing of softib's own.
 *
 * What softib tells a user when something is wrong (docs/architecture.md section 8).
 * SOFTIB_LOG picks the level (error, warn, info, debug, trace; default warn),
 * SOFTIB_LOG_FILE the destination (default stderr).  Every line starts with
 * "softib: " and says what was wrong in the programmer's terms, e.g.
 *   softib: post_send on QP 0x000012: QP is in INIT, must be RTS
 */
#ifndef SIB_BASE_LOG_H
#define SIB_BASE_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum sib_log_level {
	SIB_LOG_ERROR = 0,
	SIB_LOG_WARN = 1,
	SIB_LOG_INFO = 2,
	SIB_LOG_DEBUG = 3,
	SIB_LOG_TRACE = 4,
};

extern int sib_log_level_cur; /* read once from SOFTIB_LOG at first use */

void sib_log_init(void);
void sib_log_write(enum sib_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline bool sib_log_on(enum sib_log_level level)
{
	if (sib_log_level_cur < 0)
		sib_log_init();
	return (int)level <= sib_log_level_cur;
}

#define sib_log(level, ...)                                                                        \
	do {                                                                                       \
		if (sib_log_on(level))                                                             \
			sib_log_write(level, __VA_ARGS__);                                         \
	} while (0)

/* The level for the n-th (from 1) occurrence of something an attacker can
 * repeat at will: the 1st, 2nd, 4th, 8th ... at the default level, the rest
 * at debug, so that a flood is seen and cannot flood the log. */
static inline enum sib_log_level sib_log_nth(uint64_t n)
{
	return (n & (n - 1)) ? SIB_LOG_DEBUG : SIB_LOG_WARN;
}

#define sib_err(...) sib_log(SIB_LOG_ERROR, __VA_ARGS__)
#define sib_warn(...) sib_log(SIB_LOG_WARN, __VA_ARGS__)
#define sib_info(...) sib_log(SIB_LOG_INFO, __VA_ARGS__)
#define sib_dbg(...) sib_log(SIB_LOG_DEBUG, __VA_ARGS__)
#define sib_trace(...) sib_log(SIB_LOG_TRACE, __VA_ARGS__)

/* Tests: capture the last line written (NULL to stop). */
void sib_log_capture(char *buf, unsigned size);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"

int sib_log_level_cur = -1;
static FILE *log_out;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char *capture_buf;
static unsigned capture_size;

static const char *const level_names[] = { "error", "warn", "info", "debug", "trace" };

void sib_log_init(void)
{
	pthread_mutex_lock(&log_lock);
	if (sib_log_level_cur < 0) {
		int level = SIB_LOG_WARN;
		const char *env = getenv("SOFTIB_LOG");
		const char *file = getenv("SOFTIB_LOG_FILE");

		if (env && *env) {
			for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
				if (!strcasecmp(env, level_names[i]))
					level = (int)i;
		}
		log_out = stderr;
		if (file && *file) {
			FILE *f = fopen(file, "ae");
			if (f) {
				setvbuf(f, NULL, _IOLBF, 0);
				log_out = f;
			}
		}
		__atomic_store_n(&sib_log_level_cur, level, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&log_lock);
}

void sib_log_write(enum sib_log_level level, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	(void)level;
	n = snprintf(line, sizeof(line), "softib: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&log_lock);
	if (capture_buf)
		snprintf(capture_buf, capture_size, "%s", line);
	fprintf(log_out ? log_out : stderr, "%s\n", line);
	pthread_mutex_unlock(&log_lock);
}

void sib_log_capture(char *buf, unsigned size)
{
	pthread_mutex_lock(&log_lock);
	capture_buf = buf;
	capture_size = size;
	if (buf && size)
		buf[0] = 0;
	pthread_mutex_unlock(&log_lock);
}

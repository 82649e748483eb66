/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Skipping a cmocka test and saying why: one line "skipped: <why>" just
 * before cmocka's own "[  SKIPPED ] <test>".  tests/run-unit.sh pairs the
 * two and lists every skipped test with its reason in its summary, so a
 * check that did not run is never mistaken for one that passed.
 * Include after <cmocka.h>.
 */
#ifndef SIB_TESTS_SKIP_H
#define SIB_TESTS_SKIP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Ends the running test as skipped; the arguments (printf's) say why. */
#define sib_skip(...)                                                                              \
	do {                                                                                       \
		print_message("skipped: ");                                                        \
		print_message(__VA_ARGS__);                                                        \
		print_message("\n");                                                               \
		skip();                                                                            \
	} while (0)

/* The capture of real IB hardware in ../shared, which a user's fresh
 * clone has not: tests that compare with it skip without it. */
#define SIB_HW_CAPTURE "data/ib-hw-capture.pcap"

/*
 * The hardware capture ($SOFTIB_SHARED_DIR/data/ib-hw-capture.pcap) open
 * for reading; NULL, and why (for sib_skip) in why, when it is not there.
 */
static inline FILE *sib_hw_capture_open(char *why, size_t size)
{
	const char *dir = getenv("SOFTIB_SHARED_DIR");
	char path[4096];
	struct stat st;
	FILE *f;

	if (!dir || !*dir) {
		snprintf(why, size, "SOFTIB_SHARED_DIR is unset (no ../shared), the hardware "
				    "capture is not there");
		return NULL;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, size, "../shared is absent (SOFTIB_SHARED_DIR=%s), the hardware "
				    "capture is not there", dir);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/" SIB_HW_CAPTURE, dir);
	f = fopen(path, "rb");
	if (!f)
		snprintf(why, size, "%s: %s, the hardware capture is not there", path,
			 strerror(errno));
	return f;
}

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * For helpers run under `softib run`: softib0 opened as any verbs program
 * opens a device, and the ok/FAIL lines the integration tests read.
 */
#ifndef SOFTIB_TESTS_VERBS_OPEN_H
#define SOFTIB_TESTS_VERBS_OPEN_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

/* softib0 from the device list, opened; NULL when it is not listed. */
static inline struct ibv_context *verbs_open_softib0(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* "ok NAME" or "FAIL NAME (line, errno)", counted in the helper's
 * `failures`. */
#define CHECK(name, cond)                                                                          \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok %s\n", name);                                                   \
		} else {                                                                           \
			printf("FAIL %s (line %d, errno %d)\n", name, __LINE__, errno);            \
			failures++;                                                                \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

#endif

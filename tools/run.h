/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * `softib run`: start a program with libsoftib.so preloaded, so that
 * softib0 is visible to it through the system libibverbs.
 */
#ifndef SIB_TOOLS_RUN_H
#define SIB_TOOLS_RUN_H

#include <stddef.h>

/* The libsoftib.so that belongs to this softib executable: beside its real
 * path (the build tree) or ../lib/softib/ (installed).  0 or -1. */
int softib_find_provider(char *path, size_t size);

/* Put libsoftib.so (and the sanitizer runtime it needs first, when built
 * with ASan) at the front of LD_PRELOAD and exec argv.  Returns only on
 * failure, with the exit status to use (126/127 like a shell). */
int softib_exec_with_provider(char **argv);

#endif

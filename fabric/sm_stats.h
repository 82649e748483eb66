/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's counters for `softib info --sm` (softib(1)): what the SM and
 * its SA refused and why, as "name value" lines on a counters socket
 * (base/counters_socket.h) beside the SM's key file, sm-ADDR_PORT.sock.
 * The SM's loop serves it (sm_main.c): no thread of its own.
 */
#ifndef SIB_FABRIC_SM_STATS_H
#define SIB_FABRIC_SM_STATS_H

#include <stddef.h>

struct sib_sm;

/* The counters as text; its length (at most len - 1). */
size_t sib_sm_stats_text(const struct sib_sm *sm, char *buf, size_t len);

#endif

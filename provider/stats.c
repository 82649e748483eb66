/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Port counters for `softib info` (tools/info.c), which verbs has no query
 * for.  Exported from libsoftib.so at version SOFTIB_PRIVATE_1
 * (provider/softib.map); the tool finds it with dlsym.  Not an API for
 * programs: the struct and the text are softib's own and may change with
 * it.
 */
#include <errno.h>

#include "provider/softib.h"

int softib_query_port_stats(struct ibv_context *ctx, uint8_t port_num, struct sib_port_stats *out);

int softib_query_port_stats(struct ibv_context *ctx, uint8_t port_num, struct sib_port_stats *out)
{
	if (!softib_context_is_ours(ctx) || !out)
		return EINVAL;
	return sib_hca_port_stats(to_sctx(ctx)->hca, port_num, out) ? EINVAL : 0;
}

/* The process's counters as text, as another process reads them through
 * the counters socket (hca/stats_channel.h). */
size_t softib_stats_text(struct ibv_context *ctx, char *buf, size_t len);

size_t softib_stats_text(struct ibv_context *ctx, char *buf, size_t len)
{
	if (!softib_context_is_ours(ctx) || !buf)
		return 0;
	return sib_hca_stats_text(to_sctx(ctx)->hca, buf, len);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Run under `softib run` (tests/integration/test_sm.sh): opens softib0,
 * prints "lid N state S", keeps the device open until its standard input
 * closes (or SECONDS pass), then exits.  A long-lived port for SM tests.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	for (int i = 0; list && list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "verbs_hold: cannot open softib0 port 1\n");
		return 1;
	}
	printf("lid %u state %d sm_lid %u\n", pa.lid, pa.state, pa.sm_lid);
	fflush(stdout);
	poll(&pfd, 1, seconds * 1000);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

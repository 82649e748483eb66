/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Holds one rdma_cm id on a port, through librdmacm, for the port space
 * tests (tests/integration/test_rdma_cm_ports.sh):
 *   cm_port tcp|udp|ib ADDR PORT [listen] [reuse]
 * prints "bound PORT" (the port rdma_get_src_port reports) and, with
 * listen, "listening", then "ready" and holds the id until it is killed;
 * or "rdma_bind_addr: ERROR" / "rdma_listen: ERROR" and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static int usage(void)
{
	fprintf(stderr, "usage: cm_port tcp|udp|ib ADDR PORT [listen] [reuse]\n");
	return 2;
}

int main(int argc, char **argv)
{
	enum rdma_port_space ps;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai;
	bool listen = false, reuse = false;

	if (argc < 4)
		return usage();
	if (!strcmp(argv[1], "tcp"))
		ps = RDMA_PS_TCP;
	else if (!strcmp(argv[1], "udp"))
		ps = RDMA_PS_UDP;
	else if (!strcmp(argv[1], "ib"))
		ps = RDMA_PS_IB;
	else
		return usage();
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "listen"))
			listen = true;
		else if (!strcmp(argv[i], "reuse"))
			reuse = true;
		else
			return usage();
	}
	if (getaddrinfo(argv[2], argv[3], &hints, &ai))
		return usage();
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, ps)) {
		printf("rdma_create_id: %s\n", strerror(errno));
		return 1;
	}
	if (reuse) {
		int one = 1;

		if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one))) {
			printf("rdma_set_option: %s\n", strerror(errno));
			return 1;
		}
	}
	if (rdma_bind_addr(id, ai->ai_addr)) {
		printf("rdma_bind_addr: %s\n", strerror(errno));
		return 1;
	}
	printf("bound %u\n", ntohs(rdma_get_src_port(id)));
	if (listen) {
		if (rdma_listen(id, 4)) {
			printf("rdma_listen: %s\n", strerror(errno));
			return 1;
		}
		printf("listening\n");
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

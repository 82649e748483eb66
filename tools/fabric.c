/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib fabric: speak to a softib-switch of this user through its control
 * socket (fabric/switch_host.h): show its switches, cut and restore
 * cables.  `softib info --switch` is `softib fabric show`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/counters_socket.h"
#include "base/rundir.h"
#include "link/link.h"
#include "mgmt/cable_port.h"
#include "tools/softib.h"

#define FABRIC_DEFAULT "127.0.0.1:18755"

/* Sends line to the switch at addr (NULL: SOFTIB_FABRIC, else the
 * default) and prints its answer. */
int softib_fabric_ask(const char *addr, const char *line)
{
	static char text[65536];
	char ep_str[SIB_ENDPOINT_STRLEN], path[SIB_RUN_DIR_MAX + 64];
	struct sib_endpoint ep;
	long n;

	if (!addr)
		addr = getenv("SOFTIB_FABRIC") && *getenv("SOFTIB_FABRIC") ? getenv("SOFTIB_FABRIC")
									 : FABRIC_DEFAULT;
	if (sib_endpoint_parse(addr, SIB_FABRIC_PORT_DEFAULT, &ep)) {
		fprintf(stderr, "softib fabric: %s: not ADDR:PORT\n", addr);
		return SIB_EXIT_USAGE;
	}
	sib_endpoint_str(&ep, ep_str);
	if (sib_run_file("switch", ep_str, "sock", path, sizeof(path)))
		return SIB_EXIT_FAIL;
	n = sib_counters_ask(path, line, text, sizeof(text));
	if (n <= 0) {
		fprintf(stderr,
			"softib fabric: no answer from softib-switch at %s (%s: %s); does a switch "
			"of this user listen there?\n",
			ep_str, path, n < 0 ? strerror((int)-n) : "nothing sent");
		return SIB_EXIT_FAIL;
	}
	printf("softib-switch at %s: %s", ep_str, text);
	return strncmp(text, "error:", 6) ? SIB_EXIT_OK : SIB_EXIT_FAIL;
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: softib fabric [--at ADDR:PORT] show\n"
		   "       softib fabric [--at ADDR:PORT] unlink|relink SWITCH PORT\n"
		   "Speaks to this user's softib-switch at ADDR:PORT (default $SOFTIB_FABRIC, "
		   "else %s):\nshow prints its switches' ports, forwarding tables and drops; "
		   "unlink cuts the cable\nat SWITCH's PORT (both ends go DOWN, as a pulled "
		   "cable), relink puts it back.\n",
		   FABRIC_DEFAULT);
	return rc;
}

int softib_cmd_fabric(int argc, char **argv)
{
	const char *at = NULL;
	char line[SIB_COUNTERS_CMD_MAX];
	int i = 1;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout, SIB_EXIT_OK);
	if (argc > 2 && !strcmp(argv[1], "--at")) {
		at = argv[2];
		i = 3;
	}
	if (argc - i == 1 && !strcmp(argv[i], "show"))
		return softib_fabric_ask(at, "show");
	if (argc - i == 3 && (!strcmp(argv[i], "unlink") || !strcmp(argv[i], "relink"))) {
		char *end;
		unsigned long port = strtoul(argv[i + 2], &end, 10);

		if (*end || !*argv[i + 2] || port < 1 || port > 254) {
			fprintf(stderr, "softib fabric: %s: a port is 1..254\n", argv[i + 2]);
			return SIB_EXIT_USAGE;
		}
		snprintf(line, sizeof(line), "%s %.64s %lu", argv[i], argv[i + 1], port);
		return softib_fabric_ask(at, line);
	}
	return usage(stderr, SIB_EXIT_USAGE);
}

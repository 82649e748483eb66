/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib: the command a user types.  Dispatches to one subcommand per
 * file in tools/, through the table below.
 */
#include <stdio.h>
#include <string.h>

#include "tools/softib.h"

struct softib_cmd {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *help; /* one line */
};

static int cmd_help(int argc, char **argv);

static const struct softib_cmd cmds[] = {
	{ "run", softib_cmd_run, "run a verbs program with softib0 visible" },
	{ "info", softib_cmd_info, "show softib0's ports, LIDs, GIDs and counters (--pid, --lid: another process's)" },
	{ "decode", softib_cmd_decode, "print the IB packets of a capture file, checking both CRCs" },
	{ "fabric", softib_cmd_fabric, "show a softib-switch's switches, cut and restore its cables" },
	{ "help", cmd_help, "list the subcommands" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: softib COMMAND [ARGS]\n"
		     "       softib --version\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(out, "\n'softib COMMAND --help' shows a command's options.\n");
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return SIB_EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return SIB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("softib %s\n", SIB_VERSION);
		return SIB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].main(argc - 1, argv + 1);
	fprintf(stderr, "softib: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return SIB_EXIT_USAGE;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * tools/: the command a user types, at the top of the layer table: it may
 * use every folder below it.
 *
 * The softib command: one binary, one subcommand per file in tools/.
 * A subcommand is `int softib_cmd_NAME(int argc, char **argv)`, called with
 * argv[0] == "NAME"; it returns the exit status.  To add one: declare it
 * here and add one line to the table in tools/softib.c.
 */
#ifndef SIB_TOOLS_H
#define SIB_TOOLS_H

#ifndef SIB_VERSION
#define SIB_VERSION "0.1.0"
#endif

/* Exit statuses every subcommand uses. */
enum { SIB_EXIT_OK = 0, SIB_EXIT_FAIL = 1, SIB_EXIT_USAGE = 2 };

int softib_cmd_decode(int argc, char **argv); /* tools/decode.c */
int softib_cmd_run(int argc, char **argv);    /* tools/run.c */
int softib_cmd_info(int argc, char **argv);   /* tools/info.c */
int softib_cmd_fabric(int argc, char **argv); /* tools/fabric.c */
/* Sends a command to a softib-switch's control socket and prints the
 * answer (tools/fabric.c); addr NULL: SOFTIB_FABRIC or the default. */
int softib_fabric_ask(const char *addr, const char *line);

#endif

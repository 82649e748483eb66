/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A program's signals under softib run once it opened /dev/infiniband/rdma_cm
 * (softib then hooks the signals left at their default action, to say
 * goodbye to its peers).  Each mode prints what the program sees:
 *   default: "ready", then waits in poll; a signal must end it by its
 *     default action (never "EINTR": no system call sees it);
 *   own: its own SIGTERM handler installed before the open; raises SIGTERM
 *     and prints "own handler ran" (exit 0);
 *   late: the same with the handler installed after the open;
 *   chain: a handler installed after the open that calls the handler it
 *     replaced, as chaining programs do; prints "still running" (exit 0);
 *   sigwait: SIGTERM blocked, "ready", then sigwait: "sigwait got 15"
 *     (softib's own threads never take the signal).
 * Under tests/integration/test_ucma_signals.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static struct sigaction replaced;

static void own(int sig)
{
	got = sig;
}

static void chaining(int sig)
{
	got = sig;
	if (replaced.sa_handler != SIG_DFL && replaced.sa_handler != SIG_IGN)
		replaced.sa_handler(sig);
}

static int open_cm(void)
{
	int fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("open /dev/infiniband/rdma_cm: %s\n", strerror(errno));
		exit(2);
	}
	return fd;
}

static void install(void (*fn)(int), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigaction(SIGTERM, &sa, old);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "default";
	sigset_t set;
	int sig = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "default")) {
		open_cm();
		printf("ready\n");
		for (;;)
			if (poll(NULL, 0, -1) < 0 && errno == EINTR) {
				printf("EINTR\n");
				return 3;
			}
	}
	if (!strcmp(mode, "own") || !strcmp(mode, "late") || !strcmp(mode, "chain")) {
		if (!strcmp(mode, "own"))
			install(own, NULL);
		open_cm();
		if (!strcmp(mode, "late"))
			install(own, NULL);
		if (!strcmp(mode, "chain"))
			install(chaining, &replaced);
		raise(SIGTERM);
		if (got != SIGTERM) {
			printf("the program's handler did not run\n");
			return 1;
		}
		printf(!strcmp(mode, "chain") ? "still running\n" : "own handler ran\n");
		return 0;
	}
	if (!strcmp(mode, "sigwait")) {
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		open_cm();
		printf("ready\n");
		if (sigwait(&set, &sig))
			return 1;
		printf("sigwait got %d\n", sig);
		return 0;
	}
	fprintf(stderr, "usage: ucma_signals default|own|late|chain|sigwait\n");
	return 2;
}

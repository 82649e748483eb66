/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm: the program (options, daemon mode, the main loop).  The
 * engine is fabric/sm.c and fabric/sa.c; softib-sm(8) documents it all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric/sm.h"
#include "base/log.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: softib-sm [--listen ADDR:PORT] [--daemon] [--idle-exit SECONDS]\n"
		"                 [--sweep SECONDS] [--log FILE]\n"
		"  --listen ADDR:PORT  where ports reach the SM (default $SOFTIB_SM, else %s)\n"
		"  --daemon            detach (own session, standard streams to /dev/null or\n"
		"                      the log file); exit after --idle-exit with no ports\n"
		"  --idle-exit SECONDS exit after this long without ports (daemon default 30,\n"
		"                      foreground default 0 = never)\n"
		"  --sweep SECONDS     seconds between sweeps (default 2)\n"
		"  --log FILE          log and join/leave lines to FILE (default $SOFTIB_LOG_FILE)\n"
		"See softib-sm(8).\n",
		SIB_SM_DEFAULT);
}

/* Is the UDP address free?  A quick, quiet check so that the loser of two
 * SMs started at once exits without a word (the link's own bind would log
 * an error first). */
static int address_in_use(const struct sib_endpoint *ep)
{
	struct sockaddr_storage ss;
	socklen_t len = sib_endpoint_to_sockaddr(ep, ep->family == SIB_AF_INET ? AF_INET : AF_INET6,
						 &ss);
	int fd, rc = 0;

	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (bind(fd, (struct sockaddr *)&ss, len) && errno == EADDRINUSE)
		rc = 1;
	close(fd);
	return rc;
}

/*
 * Detaches (fork, new session, fork again), but the first process, the one
 * the starter waits for, returns only once the last one has bound the
 * address or found it taken: when `softib-sm --daemon` returns, exactly one
 * SM listens there, however slow the machine.  The last process reports a
 * bind by writing a byte into *ready (a pipe); a process that ends without
 * writing closes the pipe, and the first process then asks the address.
 */
static void daemonize(const struct sib_endpoint *ep, const char *log_file, int *ready)
{
	int fds[2], fd;
	char c;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC)) {
		perror("softib-sm: pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("softib-sm: fork");
		exit(1);
	}
	if (pid > 0) {
		close(fds[1]);
		while ((n = read(fds[0], &c, 1)) < 0 && errno == EINTR)
			;
		_exit(n == 1 || address_in_use(ep) ? 0 : 1);
	}
	close(fds[0]);
	*ready = fds[1];
	setsid();
	pid = fork(); /* not a session leader: can never regain a terminal */
	if (pid < 0)
		_exit(1);
	if (pid > 0)
		_exit(0);
	if (chdir("/"))
		_exit(1);
	umask(022);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (log_file && *log_file) {
		fd = open(log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "sweep", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen = getenv("SOFTIB_SM");
	const char *log_file = getenv("SOFTIB_LOG_FILE");
	double idle_exit = -1, sweep_s = 2;
	bool daemon_mode = false;
	struct sib_endpoint ep;
	struct sib_link *link;
	char eps[SIB_ENDPOINT_STRLEN];
	struct sib_sm sm;
	uint64_t guid = 0, idle_since;
	int c, rc, ready = -1;

	while ((c = getopt_long(argc, argv, "l:di:s:L:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'd':
			daemon_mode = true;
			break;
		case 'i':
			idle_exit = atof(optarg);
			break;
		case 's':
			sweep_s = atof(optarg);
			break;
		case 'L':
			log_file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || sweep_s <= 0) {
		usage(stderr);
		return 2;
	}
	if (!listen || !*listen || !strcmp(listen, "none"))
		listen = SIB_SM_DEFAULT;
	if (sib_endpoint_parse(listen, SIB_SM_PORT_DEFAULT, &ep)) {
		fprintf(stderr, "softib-sm: --listen %s is not ADDR[:PORT]\n", listen);
		return 2;
	}
	if (idle_exit < 0)
		idle_exit = daemon_mode ? 30 : 0;
	sib_endpoint_str(&ep, eps);

	if (daemon_mode) {
		/* Never hold the starter's pipes (or anything else it left
		 * open without close-on-exec). */
		close_range(3, ~0u, 0);
		if (address_in_use(&ep))
			return 0;
		daemonize(&ep, log_file, &ready);
		if (log_file && *log_file)
			setenv("SOFTIB_LOG_FILE", log_file, 1);
	} else if (address_in_use(&ep)) {
		fprintf(stderr, "softib-sm: an SM already listens on %s\n", eps);
		return 0;
	}
	rc = sib_link_udp_open(eps, NULL, &link);
	if (rc)
		return rc == -EADDRINUSE ? 0 : 1; /* lost a race: the other SM serves */
	if (ready >= 0) { /* bound: the starter may return */
		if (write(ready, "1", 1) != 1)
			perror("softib-sm: telling the starter");
		close(ready);
	}

	if (getrandom(&guid, sizeof(guid), 0) != (ssize_t)sizeof(guid))
		guid = (uint64_t)getpid() << 20;
	guid = (guid | 0x0200000000000000ull) & ~0x0100000000000000ull & ~0xfull;
	if (sib_sm_init(&sm, link, guid, sib_link_now_ns())) {
		fprintf(stderr, "softib-sm: out of memory\n");
		sib_link_close(link);
		return 1;
	}
	sm.sweep_ns = (uint64_t)(sweep_s * 1e9);
	sm.next_sweep_ns = sib_link_now_ns() + sm.sweep_ns;
	sm.out = stdout;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("softib-sm: listening on %s, LID %u, GUID 0x%016llx%s\n", eps, sm.lid,
	       (unsigned long long)guid, daemon_mode ? " (daemon)" : "");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	idle_since = sib_link_now_ns();
	while (!stop_signal) {
		uint64_t now = sib_link_now_ns(), next;
		struct pollfd pfd;
		int timeout;

		sib_sm_step(&sm, now);
		if (sib_sm_known_ports(&sm))
			idle_since = now;
		else if (idle_exit > 0 && now - idle_since >= (uint64_t)(idle_exit * 1e9)) {
			printf("softib-sm: no ports for %g s; exiting\n", idle_exit);
			break;
		}
		if (sib_link_wait_arm(link) > 0)
			continue;
		next = sib_sm_next_deadline(&sm);
		if (idle_exit > 0 && !sib_sm_known_ports(&sm)) {
			uint64_t idle_end = idle_since + (uint64_t)(idle_exit * 1e9);

			if (idle_end < next)
				next = idle_end;
		}
		now = sib_link_now_ns();
		timeout = next <= now ? 0 : (int)((next - now) / 1000000 + 1);
		pfd.fd = sib_link_wait_fd(link);
		pfd.events = POLLIN;
		poll(&pfd, 1, timeout);
	}
	sib_sm_fini(&sm);
	sib_link_close(link);
	return 0;
}

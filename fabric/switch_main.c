/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-switch: the program (options, the loop).  The work is
 * fabric/switch_host.c; softib-switch(8) documents it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/counters_socket.h"
#include "base/log.h"
#include "base/rundir.h"
#include "fabric/switch_host.h"
#include "fabric/topology.h"
#include "link/link.h"

#define SIB_FABRIC_DEFAULT "127.0.0.1:18755"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: softib-switch --topology FILE [--listen ADDR:PORT] [--data direct|switched]\n"
		"                     [--switches NAME,...]\n"
		"  --topology FILE     the fabric, in ibsim's netfile format (softib-switch(8))\n"
		"  --listen ADDR:PORT  where ports attach (default $SOFTIB_FABRIC, else %s)\n"
		"  --data MODE         direct (default): data goes port to port once routed;\n"
		"                      switched: every packet crosses the switches\n"
		"  --switches LIST     host only these switches of the file\n",
		SIB_FABRIC_DEFAULT);
}

static void summary(const struct sib_switch_host *h)
{
	uint64_t drops[SIB_DROP_COUNT] = { 0 };

	for (unsigned s = 0; s < h->nsw; s++)
		for (unsigned d = 0; d < SIB_DROP_COUNT; d++)
			drops[d] += h->sw[s].drops[d];
	fprintf(stderr,
		"softib-switch: %llu attached, %llu detached (%llu silent), %llu refused; "
		"%llu packets forwarded; dropped %llu from no port, %llu late from ports that "
		"detached, %llu malformed, %llu bad cable packets",
		(unsigned long long)h->c.attached, (unsigned long long)h->c.detached,
		(unsigned long long)h->c.dead, (unsigned long long)h->c.refused,
		(unsigned long long)h->c.forwarded, (unsigned long long)h->c.rx_unattached,
		(unsigned long long)h->c.rx_late, (unsigned long long)h->c.rx_malformed,
		(unsigned long long)h->c.rx_cable_bad);
	for (unsigned d = 0; d < SIB_DROP_COUNT; d++)
		if (drops[d])
			fprintf(stderr, ", %s=%llu", sib_switch_drop_name((enum sib_switch_drop)d),
				(unsigned long long)drops[d]);
	fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "listen", required_argument, NULL, 'l' },
		{ "data", required_argument, NULL, 'd' },
		{ "switches", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *topo_file = NULL, *listen = getenv("SOFTIB_FABRIC"), *only = NULL;
	enum sib_data_mode mode = SIB_DATA_DIRECT;
	struct sib_switch_host h;
	struct sib_topo topo;
	struct sib_link *link;
	static char ctl_text[65536];
	char err[300], ctl_path[SIB_RUN_DIR_MAX + 64];
	int c, rc, ctl = -1;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			topo_file = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'd':
			if (!strcmp(optarg, "direct")) {
				mode = SIB_DATA_DIRECT;
			} else if (!strcmp(optarg, "switched")) {
				mode = SIB_DATA_SWITCHED;
			} else {
				fprintf(stderr, "softib-switch: --data is direct or switched, not %s\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			only = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!topo_file || optind != argc) {
		fprintf(stderr, "softib-switch: %s\n",
			topo_file ? "unexpected arguments" : "--topology FILE is required");
		usage(stderr);
		return 2;
	}
	if (!listen || !*listen)
		listen = SIB_FABRIC_DEFAULT;
	if (sib_topo_load(&topo, topo_file, err, sizeof(err))) {
		fprintf(stderr, "softib-switch: %s\n", err);
		return 1;
	}
	rc = sib_link_udp_open(listen, NULL, &link);
	if (rc) {
		fprintf(stderr, "softib-switch: cannot listen on %s: %s\n", listen, strerror(-rc));
		sib_topo_free(&topo);
		return 1;
	}
	/* SOFTIB_CAPTURE: every packet in and out of the switch process (its
	 * CAs' cables; hops between hosted switches stay inside). */
	if (getenv("SOFTIB_CAPTURE") && *getenv("SOFTIB_CAPTURE")) {
		struct sib_link *cap;

		if (sib_link_capture_wrap(link, getenv("SOFTIB_CAPTURE"), &cap)) {
			sib_link_close(link);
			sib_topo_free(&topo);
			return 1;
		}
		link = cap;
	}
	if (sib_switch_host_init(&h, &topo, only, mode, link, err, sizeof(err))) {
		fprintf(stderr, "softib-switch: %s\n", err);
		sib_link_close(link);
		return 1;
	}
	/* The control channel: softib fabric, softib info --switch. */
	{
		char eps[SIB_ENDPOINT_STRLEN];

		sib_endpoint_str(&link->local, eps);
		if (!sib_run_file("switch", eps, "sock", ctl_path, sizeof(ctl_path)))
			ctl = sib_counters_listen(ctl_path);
		if (ctl >= 0)
			fcntl(ctl, F_SETFL, O_NONBLOCK);
		else
			fprintf(stderr, "softib-switch: no control socket (%s): softib fabric and "
				"softib info --switch cannot reach this switch\n", ctl_path);
	}
	fprintf(stderr, "softib-switch: %u switches of %s on %s, %u CA slots, data %s\n", h.nsw,
		topo_file, listen, h.nslots, mode == SIB_DATA_SWITCHED ? "switched" : "direct");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	while (!stop_signal) {
		struct pollfd pfd[2] = { { .fd = sib_link_wait_fd(link), .events = POLLIN },
					 { .fd = ctl, .events = POLLIN } };
		int n;

		if (sib_link_wait_arm(link) == 0 && poll(pfd, ctl >= 0 ? 2 : 1, 1000) < 0 &&
		    errno != EINTR)
			break;
		while (ctl >= 0 && sib_counters_serve_cmd(ctl, sib_switch_host_command, &h, ctl_text,
							  sizeof(ctl_text)) == 0)
			;
		do {
			n = sib_link_poll(link, 64, sib_switch_host_rx, &h);
			sib_link_flush(link);
		} while (n >= 64 && !stop_signal);
		sib_switch_host_tick(&h, sib_switch_host_now());
	}
	summary(&h);
	if (ctl >= 0) {
		close(ctl);
		unlink(ctl_path);
	}
	sib_switch_host_free(&h);
	sib_link_close(link);
	return 0;
}

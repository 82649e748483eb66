/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The emulated link's own limit (issue 6 item 1): what raw UDP does over
 * loopback on this machine, measured in the same run as softib so that
 * softib's figures can be given as ratios.
 *
 * Goodput: one process sends UDP datagrams of exactly PAYLOAD (4096) bytes
 * to another process for a fixed time, three ways: one send() per datagram,
 * sendmmsg() batches of 32, and UDP GSO (one sendmsg carrying 15 datagrams
 * with a UDP_SEGMENT control message).  On the IP wire each datagram is
 * 4096 + 8 (UDP) + 20 (IPv4) bytes; a softib packet carrying 4096 bytes of
 * payload is 4096 + 26..110 bytes of IB headers, so 4096-byte datagrams are
 * the same size class.  Goodput counts payload bytes the receiver got, over
 * the time from its first to its last datagram.  best_goodput is the best
 * of those three, the reference issue 6 names.  A fourth mode sends GSO to
 * a receiver with UDP_GRO on, which takes each burst as one message;
 * softib's link receives that way too, so gro_goodput is reported beside
 * it: the bar softib would have to reach on equal terms.
 *
 * Latency: 64-byte UDP ping-pong between two processes, half the round
 * trip, median and 99th percentile, measured two ways: blocking recv()
 * (each hop pays a scheduler wake-up) and busy-polling recv(MSG_DONTWAIT)
 * in a loop on both sides (each process spins on its own core; bounded by
 * the iteration count and BUSY_SECONDS).  Busy polling is what perftest
 * does on its CQ, so the lower of the two medians is the link's limit:
 * the best the kernel offers.
 *
 * A third, busy-polled ping-pong has the shape of an RC ping-pong that
 * keeps to IBA, as softib's does: each hop is a request and the ACK of the
 * peer's last request, two datagrams (34 and 30 bytes: an 8-byte SEND and
 * an ACK) sent as one UDP GSO message into a UDP_GRO receiver.  Its half
 * round trip is what the kernel alone costs such a hop (half_rtt_pair_us);
 * it is reported, not used as the link's limit.  The same pair ping-pong
 * with both ends in a blocking recv() is the reference of programs that
 * block on a completion channel (issue 21): one wake-up per hop, the
 * least a process that sleeps between messages can pay
 * (half_rtt_pair_blocking_us).
 *
 *	udp_limit [-L] [-t SECONDS_PER_MODE] [-n PINGPONG_ITERATIONS]
 *
 * -L: the ping-pongs only, no goodput.
 *
 * The last line is for scripts; half_rtt_median_us and half_rtt_p99_us are
 * those of the variant with the lower median, named by half_rtt_variant:
 *	udp_limit: best_goodput_MBps=... gro_goodput_MBps=... half_rtt_median_us=...
 *		   half_rtt_p99_us=...
 *		   half_rtt_variant=busy-poll|blocking half_rtt_blocking_us=...
 *		   half_rtt_busy_us=... half_rtt_pair_us=...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define PAYLOAD 4096
#define MMSG_BATCH 32
#define GSO_SEGS 15 /* 15 x 4096 = 61440: under the 64 KiB datagram limit */
#define RX_BATCH 64
#define PING_BYTES 64
#define SOCK_BUF (4 << 20)
#define BUSY_SECONDS 5 /* the busy-poll ping-pong stops after this long */
#define REPLY_TIMEOUT_NS 1000000000u

enum mode { MODE_SEND, MODE_SENDMMSG, MODE_GSO, MODE_GSO_GRO, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {
	"send (1 datagram per call)",
	"sendmmsg (32 per call)",
	"UDP GSO (15 per call)",
	"UDP GSO, receiver UDP_GRO",
};

struct rx_result {
	uint64_t bytes, datagrams, ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "udp_limit: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A UDP socket on 127.0.0.1, ephemeral port; its port in *port. */
static int loopback_socket(uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int size = SOCK_BUF;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		die("bind");
	*port = ntohs(sa.sin_port);
	return fd;
}

static void connect_to(int fd, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(port) };

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
}

/* ---------------------------------------------------------------- goodput */

/* The UDP_GRO segment size of a received message, or its length. */
static unsigned gro_segment(struct msghdr *mh, unsigned len)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		int v;

		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			return v > 0 ? (unsigned)v : len;
		}
	}
	return len;
}

/* Receiver process: counts PAYLOAD-byte datagrams until a 1-byte marker;
 * with UDP_GRO on the socket a message carries several. */
static void receiver(int fd, int result_pipe)
{
	static uint8_t bufs[RX_BATCH][64 << 10];
	static char ctrl[RX_BATCH][CMSG_SPACE(sizeof(int))];
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct rx_result r = { 0 };
	uint64_t first = 0, last = 0;

	for (int i = 0; i < RX_BATCH; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		int n;

		for (int i = 0; i < RX_BATCH; i++) {
			msgs[i].msg_hdr.msg_control = ctrl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
		}
		n = recvmmsg(fd, msgs, RX_BATCH, MSG_WAITFORONE, NULL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvmmsg");
		}
		for (int i = 0; i < n; i++) {
			unsigned len = msgs[i].msg_len;
			unsigned seg = gro_segment(&msgs[i].msg_hdr, len);

			if (len == 1)
				goto done;
			if (seg != PAYLOAD)
				continue;
			if (!first)
				first = now_ns();
			r.bytes += len / PAYLOAD * PAYLOAD;
			r.datagrams += len / PAYLOAD;
		}
		last = now_ns();
	}
done:
	r.ns = last > first ? last - first : 1;
	if (write(result_pipe, &r, sizeof(r)) != sizeof(r))
		die("write");
	_exit(0);
}

static uint64_t send_for(int fd, enum mode mode, double seconds)
{
	static uint8_t payload[GSO_SEGS * PAYLOAD];
	struct mmsghdr mm[MMSG_BATCH];
	struct iovec iov = { payload, PAYLOAD };
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9), sent = 0;
	char ctrl[CMSG_SPACE(sizeof(uint16_t))];
	struct msghdr gso = { .msg_iov = &(struct iovec){ payload, sizeof(payload) },
			      .msg_iovlen = 1,
			      .msg_control = ctrl,
			      .msg_controllen = sizeof(ctrl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&gso);

	memset(payload, 0x5a, sizeof(payload));
	memset(ctrl, 0, sizeof(ctrl));
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	*(uint16_t *)CMSG_DATA(cm) = PAYLOAD;
	for (int i = 0; i < MMSG_BATCH; i++) {
		memset(&mm[i], 0, sizeof(mm[i]));
		mm[i].msg_hdr.msg_iov = &iov;
		mm[i].msg_hdr.msg_iovlen = 1;
	}

	while (now_ns() < end) {
		for (int k = 0; k < 16; k++) {
			ssize_t ret;

			switch (mode) {
			case MODE_SEND:
				ret = send(fd, payload, PAYLOAD, 0);
				sent += ret == PAYLOAD;
				break;
			case MODE_SENDMMSG:
				ret = sendmmsg(fd, mm, MMSG_BATCH, 0);
				sent += ret > 0 ? (uint64_t)ret : 0;
				break;
			default:
				ret = sendmsg(fd, &gso, 0);
				sent += ret > 0 ? (uint64_t)ret / PAYLOAD : 0;
				if (ret < 0 && errno == EIO) /* no GSO here */
					return 0;
				break;
			}
			if (ret < 0 && errno != ENOBUFS && errno != EINTR && errno != ECONNREFUSED)
				die("send");
		}
	}
	return sent;
}

static int goodput(enum mode mode, double seconds, double *mbps)
{
	struct rx_result r;
	uint16_t rport, sport;
	int rfd = loopback_socket(&rport), sfd = loopback_socket(&sport);
	int p[2];
	uint64_t sent;
	pid_t pid;

	if (pipe(p))
		die("pipe");
	if (mode == MODE_GSO_GRO) {
		int one = 1;

		if (setsockopt(rfd, SOL_UDP, UDP_GRO, &one, sizeof(one))) {
			close(rfd);
			close(sfd);
			return -1; /* no UDP_GRO here */
		}
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[0]);
		close(sfd);
		receiver(rfd, p[1]);
	}
	close(p[1]);
	close(rfd);
	connect_to(sfd, rport);
	sent = send_for(sfd, mode, seconds);
	/* The end marker, repeated in case the receiver's queue dropped one. */
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 10000000 };

		send(sfd, "", 1, 0);
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		nanosleep(&ts, NULL);
	}
	if (read(p[0], &r, sizeof(r)) != sizeof(r)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fprintf(stderr, "udp_limit: the receiver did not report\n");
		return -1;
	}
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(sfd);
	if (!sent || !r.datagrams)
		return -1;
	*mbps = (double)r.bytes / ((double)r.ns / 1e9) / 1e6;
	printf("%-28s %10.1f %12.0f %7.2f%%\n", mode_names[mode], *mbps,
	       (double)r.datagrams / ((double)r.ns / 1e9),
	       100.0 * (double)(sent - (r.datagrams < sent ? r.datagrams : sent)) / (double)sent);
	return 0;
}

/* ---------------------------------------------------------------- latency */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One ping-pong reply.  Blocking: recv() bounded by SO_RCVTIMEO.  Busy:
 * recv(MSG_DONTWAIT) in a loop until a datagram or the deadline.
 */
static ssize_t recv_reply(int fd, void *buf, size_t len, bool busy, uint64_t deadline)
{
	if (!busy)
		return recv(fd, buf, len, 0);
	for (;;) {
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return n;
		if (now_ns() > deadline)
			return -1;
	}
}

/* The pair variant's datagrams: an 8-byte RC SEND and an ACK, as softib
 * builds them (LRH 8 + BTH 12 [+ AETH 4] + payload + ICRC 4 + VCRC 2). */
#define PAIR_REQ 34
#define PAIR_ACK 30

/* send(), or for the pair variant both datagrams as one GSO message. */
static ssize_t ping_send(int fd, const void *buf, size_t len, bool pair)
{
	uint16_t seg = PAIR_REQ;
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (!pair || len != PAIR_REQ + PAIR_ACK)
		return send(fd, buf, len, 0);
	mh.msg_control = ctrl.buf;
	mh.msg_controllen = sizeof(ctrl.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
	return sendmsg(fd, &mh, 0);
}

/* The echo process: echoes until a 1-byte datagram (or, busy, its deadline). */
static void echo(int fd, bool busy, bool pair, uint64_t deadline)
{
	uint8_t buf[PING_BYTES];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), busy ? MSG_DONTWAIT : 0);

		if (n == 1)
			_exit(0);
		if (n > 0)
			ping_send(fd, buf, (size_t)n, pair);
		else if (busy && now_ns() > deadline)
			_exit(1);
	}
}

/* pair: the request+ACK variant (both sockets with UDP_GRO, so each hop's
 * two datagrams arrive as one message). */
static int pingpong(unsigned iters, bool busy, bool pair, double *median_us, double *p99_us)
{
	const char *name = pair ? (busy ? "busy-poll, request+ACK pair" :
				   "blocking, request+ACK pair") :
			   busy ? "busy-poll recv(MSG_DONTWAIT)" :
				  "blocking recv()";
	size_t len = pair ? PAIR_REQ + PAIR_ACK : PING_BYTES;
	uint8_t buf[PING_BYTES] = { 0 }, reply[PING_BYTES];
	uint16_t eport, cport;
	int efd = loopback_socket(&eport), cfd = loopback_socket(&cport);
	unsigned warmup = iters / 10 + 100, done = 0, lost = 0, i;
	int one = 1;
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	uint64_t end = now_ns() + (uint64_t)BUSY_SECONDS * 1000000000u;
	struct timeval tv = { 1, 0 };
	pid_t pid;

	if (!rtt)
		die("calloc");
	if (pair && (setsockopt(efd, SOL_UDP, UDP_GRO, &one, sizeof(one)) ||
		     setsockopt(cfd, SOL_UDP, UDP_GRO, &one, sizeof(one)))) {
		printf("ping-pong request+ACK pair: unavailable here (no UDP_GRO)\n");
		close(efd);
		close(cfd);
		free(rtt);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(cfd);
		connect_to(efd, cport);
		echo(efd, busy, pair, end + 2 * REPLY_TIMEOUT_NS);
	}
	close(efd);
	connect_to(cfd, eport);
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0; i < warmup + iters; i++) {
		uint64_t t0 = now_ns();
		bool ok = false;

		if (busy && t0 > end)
			break;
		/* A sequence number, so a late reply is not taken for this one. */
		memcpy(buf, &i, sizeof(i));
		if (ping_send(cfd, buf, len, pair) != (ssize_t)len) {
			lost++;
			continue;
		}
		while (!ok) {
			ssize_t n = recv_reply(cfd, reply, sizeof(reply), busy,
					       t0 + REPLY_TIMEOUT_NS);

			/* the pair arrives whole (UDP_GRO) or not at all here */
			if (n != (ssize_t)len)
				break;
			ok = !memcmp(reply, &i, sizeof(i));
		}
		if (!ok) {
			lost++;
			continue;
		}
		if (i >= warmup)
			rtt[done++] = now_ns() - t0;
	}
	send(cfd, "", 1, 0);
	waitpid(pid, NULL, 0);
	close(cfd);
	if (!done) {
		free(rtt);
		return -1;
	}
	qsort(rtt, done, sizeof(*rtt), cmp_u64);
	*median_us = (double)rtt[done / 2] / 2 / 1e3;
	*p99_us = (double)rtt[(size_t)done * 99 / 100] / 2 / 1e3;
	printf("ping-pong %2zu B, %-28s half round trip: median %7.2f us, p99 %7.2f us "
	       "(%u iterations, %u lost%s)\n",
	       len, name, *median_us, *p99_us, done, lost,
	       i < warmup + iters ? ", time limit" : "");
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 1.0, best = 0, gro = 0, median = 0, p99 = 0;
	double block_median = 0, block_p99 = 0, busy_median = 0, busy_p99 = 0;
	double pair_median = 0, pair_p99 = 0, pblock_median = 0, pblock_p99 = 0;
	const char *variant;
	unsigned iters = 20000;
	bool lat_only = false;
	int opt;

	while ((opt = getopt(argc, argv, "Lt:n:")) != -1) {
		if (opt == 'L')
			lat_only = true;
		else if (opt == 't')
			seconds = atof(optarg);
		else if (opt == 'n')
			iters = (unsigned)atoi(optarg);
		else {
			fprintf(stderr, "usage: udp_limit [-L] [-t SECONDS_PER_MODE] [-n ITERATIONS]\n");
			return 2;
		}
	}
	if (!(seconds > 0) || !iters) {
		fprintf(stderr, "udp_limit: -t and -n must be positive\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("UDP over 127.0.0.1: datagrams of %d payload bytes (%d on the IPv4 wire), %.1f s "
	       "per mode\n",
	       PAYLOAD, PAYLOAD + 8 + 20, seconds);
	printf("%-28s %10s %12s %8s\n", "mode", "MB/s", "datagrams/s", "loss");
	for (enum mode m = 0; m < MODE_COUNT && !lat_only; m++) {
		double mbps = 0;

		if (goodput(m, seconds, &mbps))
			printf("%-28s unavailable here\n", mode_names[m]);
		else if (m == MODE_GSO_GRO)
			gro = mbps;
		else if (mbps > best)
			best = mbps;
	}
	if (pingpong(iters, false, false, &block_median, &block_p99))
		fprintf(stderr, "udp_limit: blocking ping-pong failed\n");
	if (pingpong(iters, true, false, &busy_median, &busy_p99))
		fprintf(stderr, "udp_limit: busy-poll ping-pong failed\n");
	if (pingpong(iters, true, true, &pair_median, &pair_p99))
		fprintf(stderr, "udp_limit: request+ACK ping-pong failed\n");
	if (pingpong(iters, false, true, &pblock_median, &pblock_p99))
		fprintf(stderr, "udp_limit: blocking request+ACK ping-pong failed\n");
	/* The link's limit: the lower median of the two that worked. */
	if (busy_median > 0 && (!(block_median > 0) || busy_median < block_median)) {
		median = busy_median;
		p99 = busy_p99;
		variant = "busy-poll";
	} else {
		median = block_median;
		p99 = block_p99;
		variant = "blocking";
	}
	printf("udp_limit: best_goodput_MBps=%.1f gro_goodput_MBps=%.1f half_rtt_median_us=%.2f "
	       "half_rtt_p99_us=%.2f half_rtt_variant=%s half_rtt_blocking_us=%.2f "
	       "half_rtt_busy_us=%.2f half_rtt_pair_us=%.2f half_rtt_pair_blocking_us=%.2f\n",
	       best, gro, median, p99, variant, block_median, busy_median, pair_median,
	       pblock_median);
	return (best > 0 || lat_only) && median > 0 ? 0 : 1;
}

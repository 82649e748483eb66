/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What one io_uring request costs against the system call it replaces,
 * as the link uses them (issue 21 item 3; link/uring.c): the CPU time of
 *   - an empty poll: recvmmsg(MSG_DONTWAIT) of a UDP socket with nothing
 *     waiting, against one RECVMSG request (MSG_DONTWAIT, the socket a
 *     fixed file, IORING_SETUP_COOP_TASKRUN) submitted and reaped;
 *   - a 64-byte datagram to the socket itself and back out of it:
 *     sendmmsg + recvmmsg, against a SENDMSG and a RECVMSG request.
 * A thread spinning on an empty CQ (perftest) makes empty polls until the
 * peer's datagram arrives, then one receive and one send: these are the
 * costs that set the io_uring link's ib_send_lat against the socket
 * link's.  CPU time of the thread (CLOCK_THREAD_CPUTIME_ID), so that time
 * off the CPU on a loaded machine does not count; the median of ROUNDS.
 *
 *	uring_cost [-n CALLS_PER_ROUND]
 *
 * Last line, for scripts:
 *	uring_cost: empty_poll_syscall_ns=... empty_poll_uring_ns=...
 *		    echo_syscall_ns=... echo_uring_ns=...
 * or "uring_cost: io_uring unavailable (...)" and exit status 77.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The kernel's value where liburing's header predates it (2.1, Ubuntu 22.04). */
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN (1U << 8)
#endif

#define ROUNDS 5

static int fd;
static struct io_uring ring;
static struct sockaddr_in self;
static char out_buf[64], in_buf[4352], ctrl[64];
static struct sockaddr_storage from;
static struct iovec out_iov = { out_buf, sizeof(out_buf) }, in_iov = { in_buf, sizeof(in_buf) };
static struct mmsghdr out_msg, in_msg;

static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void reset_in(void)
{
	in_msg.msg_hdr.msg_namelen = sizeof(from);
	in_msg.msg_hdr.msg_controllen = sizeof(ctrl);
	in_msg.msg_hdr.msg_flags = 0;
}

static int sys_recv(void)
{
	reset_in();
	return (int)syscall(SYS_recvmmsg, fd, &in_msg, 1, MSG_DONTWAIT, NULL);
}

static int sys_send(void)
{
	return sendmmsg(fd, &out_msg, 1, 0);
}

/* One request, submitted and reaped; its result. */
static int uring_one(bool send)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int res;

	if (send) {
		io_uring_prep_sendmsg(sqe, 0, &out_msg.msg_hdr, MSG_DONTWAIT);
	} else {
		reset_in();
		io_uring_prep_recvmsg(sqe, 0, &in_msg.msg_hdr, MSG_DONTWAIT);
	}
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_submit_and_wait(&ring, 1);
	if (io_uring_wait_cqe(&ring, &cqe))
		return -1;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

static int uring_recv(void)
{
	return uring_one(false);
}

static int uring_send(void)
{
	return uring_one(true);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median over ROUNDS of the CPU ns per iteration of n (send?) + recv. */
static double measure(int (*send)(void), int (*recv)(void), long n)
{
	uint64_t per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = cpu_ns();

		for (long i = 0; i < n; i++) {
			if (send && send() < 0) {
				perror("uring_cost: send");
				exit(1);
			}
			int got = recv();

			if (send ? got < 0 : got >= 0) {
				fprintf(stderr, "uring_cost: unexpected receive result %d\n", got);
				exit(1);
			}
		}
		per[r] = cpu_ns() - t0;
	}
	qsort(per, ROUNDS, sizeof(per[0]), cmp_u64);
	return (double)per[ROUNDS / 2] / (double)n;
}

int main(int argc, char **argv)
{
	struct io_uring_params p;
	socklen_t len = sizeof(self);
	long n = 100000;
	int opt, ret;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: uring_cost [-n CALLS_PER_ROUND]\n");
			return 2;
		}
		n = atol(optarg) > 0 ? atol(optarg) : n;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	self.sin_family = AF_INET;
	self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&self, sizeof(self)) ||
	    getsockname(fd, (struct sockaddr *)&self, &len)) {
		perror("uring_cost: socket");
		return 1;
	}
	out_msg.msg_hdr = (struct msghdr){ .msg_name = &self, .msg_namelen = sizeof(self),
					   .msg_iov = &out_iov, .msg_iovlen = 1 };
	in_msg.msg_hdr = (struct msghdr){ .msg_name = &from, .msg_iov = &in_iov, .msg_iovlen = 1,
					  .msg_control = ctrl };
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_COOP_TASKRUN;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (!ret)
		ret = io_uring_register_files(&ring, &fd, 1);
	if (ret < 0) {
		printf("uring_cost: io_uring unavailable (%s)\n", strerror(-ret));
		return 77;
	}
	double e_sys = measure(NULL, sys_recv, n), e_ur = measure(NULL, uring_recv, n);
	double x_sys = measure(sys_send, sys_recv, n / 2), x_ur = measure(uring_send, uring_recv, n / 2);

	printf("  empty poll:        recvmmsg %7.0f ns   io_uring RECVMSG %7.0f ns   x%.2f\n", e_sys,
	       e_ur, e_ur / e_sys);
	printf("  64 B out and in:   sendmmsg+recvmmsg %7.0f ns   io_uring %7.0f ns   x%.2f\n",
	       x_sys, x_ur, x_ur / x_sys);
	printf("uring_cost: empty_poll_syscall_ns=%.0f empty_poll_uring_ns=%.0f echo_syscall_ns=%.0f "
	       "echo_uring_ns=%.0f\n",
	       e_sys, e_ur, x_sys, x_ur);
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

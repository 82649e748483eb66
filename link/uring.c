/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP link with its system calls through io_uring (docs/architecture.md section
 * 4; SOFTIB_LINK=uring, the default where io_uring_setup is allowed).
 * The link itself is udp.c's: its queue, UDP GSO on send, UDP_GRO on
 * receive, its receive context and its sender's scratch (link.h's
 * locking).  Each of those two gets a ring of its own, used only under
 * its lock, and udp.c's sendmmsg and recvmmsg become one io_uring_enter
 * each (struct sib_udp_io, socket.h):
 *   - send: a chain of SENDMSG requests (IOSQE_IO_LINK), one per GSO
 *     message, submitted and waited for in one io_uring_enter;
 *   - receive: a chain of RECVMSG requests, as long as the last poll
 *     found datagrams (one for an empty poll), in one io_uring_enter;
 *     the chain stops at the first that finds the socket empty
 *     (ur_recvmmsg).
 * Every request carries MSG_DONTWAIT, so the kernel issues it inline on
 * the calling thread and fails it with -EAGAIN instead of arming a poll
 * (REQ_F_NOWAIT): no request is ever left pending in a ring, so no
 * completion waits for task work on another thread.  That is the rule
 * that makes this link as fast as the socket one: the first version armed
 * one multishot RECVMSG, whose completions ran as task work on the thread
 * that armed it, so a thread spinning on an empty CQ (perftest, docs/architecture.md
 * section 6) waited for that thread to be woken (make bench then: 645 MB/s
 * and 25.8 us against 3785 MB/s and 4.5 us).  A failed link in a chain
 * cancels the rest (-ECANCELED), which gives sendmmsg's and recvmmsg's
 * contract exactly: the first k messages went, the rest did not.
 *
 * io_uring features used, and why:
 *   - IORING_REGISTER_FILES: the socket as fixed file 0, so a request
 *     skips the file-table lookup and its reference count (atomic in a
 *     threaded process);
 *   - IORING_SETUP_COOP_TASKRUN: the continuation of a chain runs as task
 *     work on the submitting thread while it waits in io_uring_enter; no
 *     interrupt is needed to run it (kernels before 5.19: without);
 *   - IOSQE_IO_LINK with MSG_DONTWAIT: above.
 * Not used, and why:
 *   - multishot RECVMSG with a provided-buffer ring, and receive bundles:
 *     completions as task work on the arming thread (above).  Even where
 *     the spinning thread armed it itself, a 64-byte UDP ping-pong on
 *     this 2-core VM measured a half round trip of 8.4 us spinning on the
 *     CQ (the task work comes by IPI), 3.7 us with COOP_TASKRUN and an
 *     io_uring_enter per spin, against 3.1 to 3.4 us spinning on recv;
 *   - IORING_SETUP_DEFER_TASKRUN and SINGLE_ISSUER: any thread may poll
 *     or send (an application thread draining the link, the progress
 *     thread); a ring per thread would defeat the batching;
 *   - zero-copy send (SEND_ZC, SENDMSG_ZC): over loopback the kernel
 *     copies anyway and adds a notification per send; udp.c already
 *     sends a large payload from the application's memory (split
 *     commits), one copy in all;
 *   - registered buffers: only the fixed-buffer SEND/RECV (not SENDMSG
 *     or RECVMSG with control messages, which GSO and GRO need) use them;
 *   - a registered ring fd (IORING_REGISTER_RING_FDS): it registers the
 *     ring in the calling thread's table only, and any thread uses these;
 *   - SQPOLL: a kernel thread spinning on the submission queue takes a
 *     core, of the two here.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "link/socket.h"
#include "base/log.h"

/*
 * liburing 2.1 (Ubuntu 22.04) is enough: requests carry their index in
 * user_data directly (io_uring_sqe_set_data64 and io_uring_cqe_get_data64
 * are 2.2's), cancels take a pointer-sized key, and COOP_TASKRUN is the
 * kernel's value when the header predates it (the kernel refuses what it
 * does not know, and ur_open retries without).
 */
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN (1U << 8)
#endif

/* Requests per chain: udp.c's largest sendmmsg (SIB_LINK_TX_BUFS) */
#define RING_ENTRIES SIB_LINK_TX_BUFS

struct ring {
	struct io_uring ring;
	unsigned hint; /* receive: the next chain's length, at least 1 */
};

/*
 * Runs the n requests queued on r (a chain) and waits for all of them;
 * res[i] is request i's result.  Returns 0 or a negative errno when the
 * ring itself failed.
 */
static int chain_run(struct ring *r, unsigned n, int *res)
{
	unsigned got = 0;
	int ret;

	/* EAGAIN: the kernel is short of memory for a moment; the requests
	 * must go now or never (they point at the caller's messages). */
	do
		ret = io_uring_submit_and_wait(&r->ring, n);
	while (ret == -EINTR || ret == -EAGAIN);
	if (ret < 0)
		return ret;
	while (got < n) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;

		io_uring_for_each_cqe(&r->ring, head, cqe)
		{
			uint64_t i = cqe->user_data;

			if (i < n)
				res[i] = cqe->res;
			seen++;
		}
		io_uring_cq_advance(&r->ring, seen);
		got += seen;
		if (got < n) {
			ret = io_uring_wait_cqe(&r->ring, &cqe);
			if (ret < 0 && ret != -EINTR)
				return ret;
		}
	}
	return 0;
}

/* Queues n linked requests of op on fixed file 0, one per message. */
static void chain_prep(struct ring *r, bool send, struct mmsghdr *m, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		/* never NULL: the SQ is empty and holds RING_ENTRIES */
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

		if (send)
			io_uring_prep_sendmsg(sqe, 0, &m[i].msg_hdr, MSG_DONTWAIT);
		else
			io_uring_prep_recvmsg(sqe, 0, &m[i].msg_hdr, MSG_DONTWAIT);
		sqe->flags |= IOSQE_FIXED_FILE | (i + 1 < n ? IOSQE_IO_LINK : 0);
		sqe->user_data = i;
	}
}

/* One chain of n messages; sendmmsg's and recvmmsg's return. */
static int chain(struct ring *r, bool send, struct mmsghdr *m, unsigned n)
{
	int res[RING_ENTRIES];
	unsigned k;
	int ret;

	chain_prep(r, send, m, n);
	ret = chain_run(r, n, res);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	for (k = 0; k < n && res[k] >= 0; k++)
		m[k].msg_len = (unsigned)res[k];
	if (!k) {
		errno = -res[0];
		return -1;
	}
	return (int)k;
}

static int ur_sendmmsg(void *ctx, int fd, struct mmsghdr *m, unsigned n)
{
	(void)fd;
	return chain(ctx, true, m, n < RING_ENTRIES ? n : RING_ENTRIES);
}

/*
 * One chain as long as the last call found datagrams (a burst grows it
 * fourfold, an empty socket shrinks it to one): the usual poll, empty or
 * not, is one io_uring_enter of one request.  A chain that finds all it
 * asked for returns without asking whether more wait (UDP does not say,
 * IORING_CQE_F_SOCK_NONEMPTY; a longer chain whose end fails costs more
 * than a second poll: each cancelled link is a completion of its own):
 * the socket, the wait fd, stays readable while more wait (socket.h).
 */
static int ur_recvmmsg(void *ctx, int fd, struct mmsghdr *m, unsigned n)
{
	struct ring *r = ctx;
	unsigned k = r->hint < n ? r->hint : n;
	int got;

	(void)fd;
	if (k > RING_ENTRIES)
		k = RING_ENTRIES;
	got = chain(r, false, m, k);
	if (got < 0)
		r->hint = 1;
	else
		r->hint = (unsigned)got == k ? 4 * k : got ? (unsigned)got : 1;
	return got;
}

/* io_uring is missing here: notes which step failed in why and returns
 * -EOPNOTSUPP.  EPERM: sysctl kernel.io_uring_disabled, or a seccomp
 * profile (Docker's default) blocks io_uring_setup; ENOSYS: no io_uring in
 * the kernel; EINVAL: a kernel too old for a feature used here. */
static int unavailable(char *why, size_t len, const char *what, int ret)
{
	if (why && len)
		snprintf(why, len, "%s: %s", what, strerror(-ret));
	sib_dbg("io_uring unavailable: %s: %s", what, strerror(-ret));
	return -EOPNOTSUPP;
}

/*
 * Everything here rests on a MSG_DONTWAIT request completing while it is
 * submitted, with -EAGAIN when the socket is empty (REQ_F_NOWAIT): a
 * kernel that armed a poll for it instead would leave chain_run waiting
 * for a datagram.  Asks once on the new socket; a datagram taken by the
 * question is lost, as on a wire before the port is up.  0, or -EINVAL
 * after cancelling the armed request.
 */
static int nowait_check(struct ring *r)
{
	uint8_t byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	struct io_uring_cqe *cqe;
	int res[2];

	io_uring_prep_recvmsg(sqe, 0, &mh, MSG_DONTWAIT);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 0;
	io_uring_submit(&r->ring);
	if (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
		io_uring_cqe_seen(&r->ring, cqe);
		return 0;
	}
	sqe = io_uring_get_sqe(&r->ring);
	io_uring_prep_cancel(sqe, NULL, 0);
	sqe->user_data = 1;
	chain_run(r, 2, res); /* the receive's end and the cancel's: iov stays valid */
	return -EINVAL;
}

static int ur_open(void **ctx, int fd, char *why, size_t why_len)
{
	struct io_uring_params p;
	struct io_uring_probe *probe;
	struct ring *r;
	bool ops;
	int ret;

	*ctx = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->hint = 1;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_COOP_TASKRUN;
	ret = io_uring_queue_init_params(RING_ENTRIES, &r->ring, &p);
	if (ret == -EINVAL) { /* before 5.19 */
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(RING_ENTRIES, &r->ring, &p);
	}
	if (ret < 0) {
		free(r);
		return unavailable(why, why_len, "io_uring_setup", ret);
	}
	probe = io_uring_get_probe_ring(&r->ring);
	ops = probe && io_uring_opcode_supported(probe, IORING_OP_SENDMSG) &&
	      io_uring_opcode_supported(probe, IORING_OP_RECVMSG);
	io_uring_free_probe(probe);
	ret = ops ? io_uring_register_files(&r->ring, &fd, 1) : -EINVAL;
	if (ret >= 0)
		ret = nowait_check(r);
	if (ret < 0) {
		io_uring_queue_exit(&r->ring);
		free(r);
		return unavailable(why, why_len,
				   "SENDMSG, RECVMSG, fixed files and MSG_DONTWAIT requests "
				   "that do not wait (an older kernel)",
				   ret);
	}
	*ctx = r;
	return 0;
}

static void ur_close(void *ctx)
{
	struct ring *r = ctx;

	io_uring_queue_exit(&r->ring);
	free(r);
}

static const struct sib_udp_io uring_io = {
	.what = "io_uring",
	.open = ur_open,
	.close = ur_close,
	.sendmmsg = ur_sendmmsg,
	.recvmmsg = ur_recvmmsg,
};

int sib_link_uring_open_why(const char *addr, const char *netdev, struct sib_link **out,
			    char *why, size_t why_len)
{
	return sib_link_udp_open_io(addr, netdev, &uring_io, out, why, why_len);
}

int sib_link_uring_open(const char *addr, const char *netdev, struct sib_link **out)
{
	char why[128];
	int ret = sib_link_uring_open_why(addr, netdev, out, why, sizeof(why));

	if (ret == -EOPNOTSUPP)
		sib_err("io_uring is unavailable here (%s): check sysctl "
			"kernel.io_uring_disabled, and that a container's seccomp profile allows "
			"io_uring_setup; or use SOFTIB_LINK=socket",
			why);
	return ret;
}

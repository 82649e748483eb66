/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP link through io_uring (DESIGN.md section 4; SOFTIB_LINK=uring).
 * The socket is socket.c's.  Two rings, so that senders and the
 * receiver never share a lock:
 *   - the send ring: SENDMSG requests from a fixed set of preallocated
 *     buffers, submitted SIB_LINK_TX_BATCH at a time or at flush;
 *   - the receive ring: one multishot RECVMSG into a provided-buffer ring,
 *     with an eventfd registered on it as the wait fd: the kernel signals it
 *     with every completion it posts, so it is readable while datagrams (or
 *     the end of the receive, which needs a re-arm) wait to be polled.
 * liburing 2.3 (Debian 12) lacks io_uring_setup_buf_ring, so the buffer
 * ring is mapped and registered by hand (research/io-uring-here.md).
 *
 * Any thread may poll (the progress thread, or an application thread that
 * polls an empty CQ, DESIGN.md section 6).  Locking:
 *   - rx_lock is held for a whole poll: reaping receive completions,
 *     returning buffers to the buffer ring and re-arming the receive happen
 *     only under it, so two threads never both reap or both re-arm;
 *     rx_armed is written only under it (read without it by wait_arm);
 *     a poll that finds it taken (its poller lost the CPU mid-poll)
 *     reads datagrams straight from the socket beside the ring instead
 *     of waiting (link.h);
 *   - tx_lock covers the send ring, the free list and the counts of queued
 *     and in-flight requests;
 *   - the eventfd needs no lock: wait_arm reads it (clearing it) and then
 *     looks at the completion queue; a completion posted afterwards signals
 *     it again.
 * io_uring runs a receive's completion work on the thread that armed it
 * (interrupting it if it sleeps): the thread that opened the link, later
 * whichever thread polled after the receive ended.  If that thread exits,
 * the kernel cancels the receive; the cancellation signals the eventfd,
 * wait_arm reports it (rx_armed is false) and the next poll re-arms.  That
 * completion work on another thread is why the socket backend
 * (udp.c), where the polling thread does all the work, is the default.
 *
 * Sends are one SENDMSG per datagram (no UDP GSO here).
 */
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "link/socket.h"
#include "base/log.h"

#define RX_BUFS 256 /* power of two: the buffer ring's size */
/* Room for the source address, rounded up so that the control messages
 * after it, and the payload after those, are 8-byte aligned. */
#define RX_NAME_LEN (((unsigned)sizeof(struct sockaddr_in6) + 7u) & ~7u)
#define RX_CTRL_LEN ((unsigned)CMSG_SPACE(sizeof(uint32_t))) /* SO_RXQ_OVFL */
/* recvmsg_out header, source address, control, then at most
 * SIB_LINK_MAX_DGRAM of payload: anything longer comes back with MSG_TRUNC. */
#define RX_BUF_SIZE                                                                                \
	((unsigned)sizeof(struct io_uring_recvmsg_out) + RX_NAME_LEN + RX_CTRL_LEN +               \
	 SIB_LINK_MAX_DGRAM)
_Static_assert(RX_BUF_SIZE % 8 == 0, "receive buffers stay 8-byte aligned");
#define RX_BGID 0
#define RECV_TAG UINT64_MAX /* user_data of the multishot receive */

struct tx_slot {
	struct msghdr msg;
	struct iovec iov;
	struct sockaddr_storage dst;
};

struct uring_link {
	struct sib_link link;
	int fd;
	int af;
	int efd;

	pthread_mutex_t tx_lock; /* the send ring, free list, queued */
	struct io_uring tx_ring;
	uint8_t *tx_mem;
	struct tx_slot slots[SIB_LINK_TX_BUFS];
	uint16_t free_slots[SIB_LINK_TX_BUFS];
	unsigned nfree;
	unsigned queued;   /* prepared SQEs not yet submitted */
	unsigned inflight; /* prepared SQEs not yet completed */
	bool tx_err_logged;

	pthread_mutex_t rx_lock; /* the receive ring and buffer ring */
	struct io_uring rx_ring;
	struct io_uring_buf_ring *br;
	uint8_t *rx_mem;
	struct msghdr rx_msg;
	bool rx_armed;
	bool rx_err_logged;

	bool tx_ring_up, rx_ring_up, br_registered;
};

static struct uring_link *to_uring(struct sib_link *l)
{
	return (struct uring_link *)l;
}

/* ---------------------------------------------------------------- send */

static void tx_reap(struct uring_link *u)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&u->tx_ring, head, cqe)
	{
		uint64_t idx = io_uring_cqe_get_data64(cqe);

		n++;
		if (cqe->res >= 0) {
			sib_link_count(&u->link.counters.tx_packets, 1);
			sib_link_count(&u->link.counters.tx_bytes, (uint64_t)cqe->res);
		} else {
			sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_TX_ERROR], 1);
			if (!u->tx_err_logged) {
				u->tx_err_logged = true;
				sib_warn("UDP send failed: %s (counted as tx_error; further failures "
					 "are logged at debug level)",
					 strerror(-cqe->res));
			} else {
				sib_dbg("UDP send failed: %s", strerror(-cqe->res));
			}
		}
		if (idx < SIB_LINK_TX_BUFS) {
			u->free_slots[u->nfree++] = (uint16_t)idx;
			u->inflight--;
		}
	}
	io_uring_cq_advance(&u->tx_ring, n);
}

static void tx_submit(struct uring_link *u)
{
	if (u->queued) {
		io_uring_submit(&u->tx_ring);
		u->queued = 0;
	}
}

static uint8_t *uring_tx_alloc(struct sib_link *l, size_t *cap)
{
	struct uring_link *u = to_uring(l);
	uint8_t *buf = NULL;

	pthread_mutex_lock(&u->tx_lock);
	if (!u->nfree)
		tx_reap(u);
	if (!u->nfree && u->inflight) {
		/* Every buffer is in flight: wait for the kernel to finish one.
		 * (None in flight: the callers hold them all; waiting would hang.) */
		u->queued = 0;
		io_uring_submit_and_wait(&u->tx_ring, 1);
		tx_reap(u);
	}
	if (u->nfree)
		buf = u->tx_mem + (size_t)u->free_slots[--u->nfree] * SIB_LINK_MAX_DGRAM;
	pthread_mutex_unlock(&u->tx_lock);
	if (!buf)
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_NO_BUFFER], 1);
	*cap = SIB_LINK_MAX_DGRAM;
	return buf;
}

static unsigned slot_of(struct uring_link *u, const uint8_t *buf)
{
	return sib_link_tx_slot(u->tx_mem, buf);
}

static void uring_tx_abort(struct sib_link *l, uint8_t *buf)
{
	struct uring_link *u = to_uring(l);
	unsigned idx = slot_of(u, buf);

	pthread_mutex_lock(&u->tx_lock);
	u->free_slots[u->nfree++] = (uint16_t)idx;
	pthread_mutex_unlock(&u->tx_lock);
}

static void uring_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			    const struct sib_endpoint *dst)
{
	struct uring_link *u = to_uring(l);
	unsigned idx = slot_of(u, buf);
	struct tx_slot *s = &u->slots[idx];
	struct io_uring_sqe *sqe;
	socklen_t alen;

	if (len > SIB_LINK_MAX_DGRAM) {
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_TOO_LONG], 1);
		uring_tx_abort(l, buf);
		return;
	}
	alen = sib_endpoint_to_sockaddr(dst, u->af, &s->dst);
	if (!alen) {
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_NO_ROUTE], 1);
		uring_tx_abort(l, buf);
		return;
	}
	s->iov.iov_base = buf;
	s->iov.iov_len = len;
	s->msg.msg_name = &s->dst;
	s->msg.msg_namelen = alen;
	s->msg.msg_iov = &s->iov;
	s->msg.msg_iovlen = 1;

	pthread_mutex_lock(&u->tx_lock);
	sqe = io_uring_get_sqe(&u->tx_ring);
	if (!sqe) { /* cannot happen: the SQ has a slot for every buffer */
		tx_submit(u);
		sqe = io_uring_get_sqe(&u->tx_ring);
	}
	if (!sqe) {
		u->free_slots[u->nfree++] = (uint16_t)idx;
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_ERROR], 1);
	} else {
		/* SENDMSG requests are issued in submission order; one that
		 * finds the socket buffer full waits and may then complete
		 * after later ones: a reorder the transport tolerates. */
		io_uring_prep_sendmsg(sqe, u->fd, &s->msg, 0);
		io_uring_sqe_set_data64(sqe, idx);
		u->inflight++;
		if (++u->queued >= SIB_LINK_TX_BATCH)
			tx_submit(u);
	}
	pthread_mutex_unlock(&u->tx_lock);
}

static int uring_flush(struct sib_link *l)
{
	struct uring_link *u = to_uring(l);

	pthread_mutex_lock(&u->tx_lock);
	tx_submit(u);
	tx_reap(u);
	pthread_mutex_unlock(&u->tx_lock);
	return 0;
}

/* ---------------------------------------------------------------- receive */

static int rx_arm(struct uring_link *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->rx_ring);
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_recvmsg_multishot(sqe, u->fd, &u->rx_msg, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = RX_BGID;
	io_uring_sqe_set_data64(sqe, RECV_TAG);
	ret = io_uring_submit(&u->rx_ring);
	if (ret < 0)
		return ret;
	__atomic_store_n(&u->rx_armed, true, __ATOMIC_RELAXED);
	return 0;
}

/* SO_RXQ_OVFL: how many datagrams the socket has dropped since it was
 * opened because its receive buffer was full.  The kernel stamps it on each
 * datagram it queues, so drops show up with the next datagram received. */
static void rx_overflow(struct uring_link *u, struct io_uring_recvmsg_out *o)
{
	struct cmsghdr *cm;

	if (o->controllen > RX_CTRL_LEN)
		return;
	for (cm = io_uring_recvmsg_cmsg_firsthdr(o, &u->rx_msg); cm;
	     cm = io_uring_recvmsg_cmsg_nexthdr(o, &u->rx_msg, cm)) {
		uint32_t drops;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SO_RXQ_OVFL ||
		    cm->cmsg_len < CMSG_LEN(sizeof(drops)))
			continue;
		memcpy(&drops, CMSG_DATA(cm), sizeof(drops));
		/* Only the receive side writes this counter, under rx_lock. */
		if (drops > u->link.counters.drop[SIB_LINK_DROP_RX_QUEUE_FULL])
			__atomic_store_n(&u->link.counters.drop[SIB_LINK_DROP_RX_QUEUE_FULL],
					 (uint64_t)drops, __ATOMIC_RELAXED);
	}
}

/* One receive completion; returns true when a datagram was taken. */
static bool rx_complete(struct uring_link *u, const struct io_uring_cqe *cqe, sib_link_rx_fn rx,
			void *arg)
{
	struct io_uring_recvmsg_out *o;
	struct sib_endpoint from;
	uint8_t *buf;
	unsigned bid;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		__atomic_store_n(&u->rx_armed, false, __ATOMIC_RELAXED);
	if (cqe->res < 0) {
		/* ENOBUFS: every buffer was with us; the datagram waits in the
		 * socket until we re-arm.  Anything else is worth a line. */
		if (cqe->res != -ENOBUFS && !u->rx_err_logged) {
			u->rx_err_logged = true;
			sib_warn("UDP receive failed: %s (re-arming)", strerror(-cqe->res));
		}
		return false;
	}
	if (!(cqe->flags & IORING_CQE_F_BUFFER))
		return false;
	bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
	if (bid >= RX_BUFS)
		return false;
	buf = u->rx_mem + (size_t)bid * RX_BUF_SIZE;
	o = io_uring_recvmsg_validate(buf, cqe->res, &u->rx_msg);
	if (!o || (unsigned)cqe->res > RX_BUF_SIZE ||
	    sib_endpoint_from_sockaddr(io_uring_recvmsg_name(o),
				       o->namelen < RX_NAME_LEN ? o->namelen : RX_NAME_LEN, &from)) {
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_MALFORMED], 1);
	} else if (o->flags & MSG_TRUNC) {
		rx_overflow(u, o);
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_TRUNCATED], 1);
	} else {
		rx_overflow(u, o);
		unsigned len = io_uring_recvmsg_payload_length(o, cqe->res, &u->rx_msg);

		sib_link_count(&u->link.counters.rx_packets, 1);
		sib_link_count(&u->link.counters.rx_bytes, len);
		rx(arg, io_uring_recvmsg_payload(o, &u->rx_msg), len, &from);
	}
	/* The callback is done with the buffer: give it back to the kernel. */
	io_uring_buf_ring_add(u->br, buf, RX_BUF_SIZE, (unsigned short)bid,
			      io_uring_buf_ring_mask(RX_BUFS), 0);
	io_uring_buf_ring_advance(u->br, 1);
	return true;
}

/* Another poller has the receive ring: datagrams straight from the
 * socket, one recvmsg each (a rare path: that poller lost the CPU). */
static int poll_beside(struct uring_link *u, unsigned max, sib_link_rx_fn rx, void *arg)
{
	uint8_t buf[SIB_LINK_MAX_DGRAM];
	int n = 0;

	while ((unsigned)n < max) {
		struct sockaddr_storage ss;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_name = &ss, .msg_namelen = sizeof(ss), .msg_iov = &iov,
				     .msg_iovlen = 1 };
		ssize_t len = recvmsg(u->fd, &mh, MSG_DONTWAIT);
		struct sib_endpoint from;

		if (len < 0)
			break;
		if (mh.msg_flags & MSG_TRUNC) {
			sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_TRUNCATED], 1);
		} else if (sib_endpoint_from_sockaddr((struct sockaddr *)&ss, mh.msg_namelen, &from)) {
			sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_MALFORMED], 1);
		} else {
			sib_link_count(&u->link.counters.rx_packets, 1);
			sib_link_count(&u->link.counters.rx_bytes, (uint64_t)len);
			rx(arg, buf, (size_t)len, &from);
		}
		n++;
	}
	return n;
}

static int uring_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct uring_link *u = to_uring(l);
	struct io_uring_cqe *cqe;
	int n = 0;

	if (pthread_mutex_trylock(&u->rx_lock))
		return poll_beside(u, max, rx, arg);
	while ((unsigned)n < max && io_uring_peek_cqe(&u->rx_ring, &cqe) == 0) {
		struct io_uring_cqe c = *cqe;

		/* Consume the CQE before the callback, so that a callback that
		 * sends cannot see it twice. */
		io_uring_cqe_seen(&u->rx_ring, cqe);
		if (io_uring_cqe_get_data64(&c) != RECV_TAG)
			continue;
		if (rx_complete(u, &c, rx, arg))
			n++;
	}
	if (!u->rx_armed) {
		int ret = rx_arm(u);

		if (ret < 0) {
			pthread_mutex_unlock(&u->rx_lock);
			sib_err("cannot re-arm the UDP receive: %s", strerror(-ret));
			return ret;
		}
	}
	pthread_mutex_unlock(&u->rx_lock);
	return n;
}

static int uring_wait_fd(struct sib_link *l)
{
	return to_uring(l)->efd;
}

static int uring_wait_arm(struct sib_link *l)
{
	struct uring_link *u = to_uring(l);
	eventfd_t v;

	eventfd_read(u->efd, &v); /* non-blocking: EAGAIN when already clear */
	return io_uring_cq_ready(&u->rx_ring) > 0 ||
	       !__atomic_load_n(&u->rx_armed, __ATOMIC_RELAXED);
}

static void uring_close(struct sib_link *l)
{
	struct uring_link *u = to_uring(l);

	if (u->tx_ring_up)
		io_uring_queue_exit(&u->tx_ring);
	if (u->rx_ring_up)
		io_uring_queue_exit(&u->rx_ring); /* cancels the receive */
	if (u->br)
		munmap(u->br, RX_BUFS * sizeof(struct io_uring_buf));
	if (u->fd >= 0)
		close(u->fd);
	if (u->efd >= 0)
		close(u->efd);
	free(u->tx_mem);
	free(u->rx_mem);
	pthread_mutex_destroy(&u->tx_lock);
	pthread_mutex_destroy(&u->rx_lock);
	free(u);
}

static const struct sib_link_ops uring_ops = {
	.kind = "udp-uring",
	.tx_alloc = uring_tx_alloc,
	.tx_commit = uring_tx_commit,
	.tx_abort = uring_tx_abort,
	.flush = uring_flush,
	.poll = uring_poll,
	.wait_fd = uring_wait_fd,
	.wait_arm = uring_wait_arm,
	.close = uring_close,
};

/* ---------------------------------------------------------------- opening */

/*
 * io_uring is missing here: notes which step failed in why and returns
 * -EOPNOTSUPP.  EPERM: sysctl kernel.io_uring_disabled, or a seccomp
 * profile (Docker's default) blocks io_uring_setup; ENOSYS: no io_uring in
 * the kernel; EINVAL: a kernel too old for a feature used here.
 */
static int unavailable(char *why, size_t len, const char *what, int ret)
{
	snprintf(why, len, "%s: %s", what, strerror(-ret));
	sib_dbg("io_uring unavailable: %s", why);
	return -EOPNOTSUPP;
}

static int setup_rings(struct uring_link *u, char *why, size_t len)
{
	struct io_uring_params p;
	struct io_uring_buf_reg reg;
	int ret;

	ret = io_uring_queue_init(SIB_LINK_TX_BUFS, &u->tx_ring, 0);
	if (ret < 0)
		return unavailable(why, len, "io_uring_setup", ret);
	u->tx_ring_up = true;

	/* Room in the CQ for a completion per receive buffer, so the CQ never
	 * overflows before the buffers run out. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * RX_BUFS;
	ret = io_uring_queue_init_params(8, &u->rx_ring, &p);
	if (ret < 0)
		return unavailable(why, len, "io_uring_setup (receive ring)", ret);
	u->rx_ring_up = true;

	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0) {
		ret = -errno;
		sib_err("cannot create an eventfd: %s", strerror(-ret));
		return ret;
	}
	ret = io_uring_register_eventfd(&u->rx_ring, u->efd);
	if (ret < 0)
		return unavailable(why, len, "io_uring_register_eventfd", ret);

	u->br = mmap(NULL, RX_BUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->br == MAP_FAILED) {
		u->br = NULL;
		ret = -errno;
		sib_err("cannot map the io_uring buffer ring: %s", strerror(-ret));
		return ret;
	}
	io_uring_buf_ring_init(u->br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)(uintptr_t)u->br;
	reg.ring_entries = RX_BUFS;
	reg.bgid = RX_BGID;
	ret = io_uring_register_buf_ring(&u->rx_ring, &reg, 0);
	if (ret < 0)
		return unavailable(why, len, "buffer ring registration (kernel 5.19 or later)",
				   ret);
	for (unsigned i = 0; i < RX_BUFS; i++)
		io_uring_buf_ring_add(u->br, u->rx_mem + (size_t)i * RX_BUF_SIZE, RX_BUF_SIZE,
				      (unsigned short)i, io_uring_buf_ring_mask(RX_BUFS), (int)i);
	io_uring_buf_ring_advance(u->br, RX_BUFS);

	u->rx_msg.msg_namelen = RX_NAME_LEN;
	u->rx_msg.msg_controllen = RX_CTRL_LEN;
	return 0;
}

/* A kernel without multishot RECVMSG fails the request at once: an error
 * completion is already there.  Returns that error, or 0. */
static int rx_arm_check(struct uring_link *u)
{
	struct io_uring_cqe *cqe;
	int ret = 0;

	if (io_uring_peek_cqe(&u->rx_ring, &cqe) == 0 && cqe->res < 0 &&
	    !(cqe->flags & IORING_CQE_F_MORE)) {
		ret = cqe->res;
		io_uring_cqe_seen(&u->rx_ring, cqe);
	}
	return ret;
}

int sib_link_uring_open_why(const char *addr, const char *netdev, struct sib_link **out,
			    char *why, size_t why_len)
{
	struct uring_link *u;
	char s[SIB_ENDPOINT_STRLEN];
	int ret;

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->link.ops = &uring_ops;
	u->fd = u->efd = -1;
	pthread_mutex_init(&u->tx_lock, NULL);
	pthread_mutex_init(&u->rx_lock, NULL);
	u->tx_mem = aligned_alloc(4096, (size_t)SIB_LINK_TX_BUFS * SIB_LINK_MAX_DGRAM);
	u->rx_mem = aligned_alloc(4096, (size_t)RX_BUFS * RX_BUF_SIZE + 4096 -
						((size_t)RX_BUFS * RX_BUF_SIZE) % 4096);
	if (!u->tx_mem || !u->rx_mem) {
		uring_close(&u->link);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < SIB_LINK_TX_BUFS; i++)
		u->free_slots[i] = (uint16_t)(SIB_LINK_TX_BUFS - 1 - i);
	u->nfree = SIB_LINK_TX_BUFS;

	/* The rings first: when io_uring is missing, say so before any
	 * socket error, so that the caller can fall back to sockets. */
	ret = setup_rings(u, why, why_len);
	if (!ret) {
		ret = sib_link_socket_open(addr, netdev, &u->link.local, &u->af);
		if (ret >= 0) {
			u->fd = ret;
			ret = rx_arm(u);
			if (!ret)
				ret = rx_arm_check(u);
			if (ret < 0)
				ret = unavailable(why, why_len, "multishot RECVMSG (kernel 6.0 or later)",
						  ret);
		}
	}
	if (ret < 0) {
		uring_close(&u->link);
		return ret;
	}
	u->link.mtu = sib_link_port_mtu(&u->link.local, netdev);
	sib_info("link: UDP %s (io_uring), active MTU %u", sib_endpoint_str(&u->link.local, s),
		 u->link.mtu);
	*out = &u->link;
	return 0;
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

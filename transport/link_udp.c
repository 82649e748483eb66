/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP link: one socket per port, I/O through io_uring (DESIGN.md
 * section 4).  Two rings, so that senders and the receiver never share a
 * lock:
 *   - the send ring: SENDMSG requests from a fixed set of preallocated
 *     buffers, submitted SIB_LINK_TX_BATCH at a time or at flush;
 *   - the receive ring: one multishot RECVMSG into a provided-buffer ring,
 *     an eventfd registered on it as the wait fd.
 * liburing 2.3 (Debian 12) lacks io_uring_setup_buf_ring, so the buffer
 * ring is mapped and registered by hand (research/io-uring-here.md).
 *
 * io_uring runs a receive's completion work on the thread that submitted
 * it, interrupting that thread if it sleeps.  The receive is armed at open
 * and re-armed by whichever thread polls after it ended; if that thread
 * exits, the kernel cancels the receive, the cancellation wakes the wait fd
 * and the next poll re-arms it.  Best: open and poll from the progress
 * thread.
 *
 * Later, for bursts to one destination: UDP GSO (a UDP_SEGMENT control
 * message) sends up to 64 KiB of equal-sized datagrams per request, about
 * 3x the goodput of one SENDMSG per datagram (tests/bench/udp_limit.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <liburing.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "transport/link.h"
#include "transport/log.h"

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
#define SOCK_BUF_BYTES (4 << 20)

struct tx_slot {
	struct msghdr msg;
	struct iovec iov;
	struct sockaddr_storage dst;
};

struct udp_link {
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

static struct udp_link *to_udp(struct sib_link *l)
{
	return (struct udp_link *)l;
}

/* ---------------------------------------------------------------- send */

static void tx_reap(struct udp_link *u)
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

static void tx_submit(struct udp_link *u)
{
	if (u->queued) {
		io_uring_submit(&u->tx_ring);
		u->queued = 0;
	}
}

static uint8_t *udp_tx_alloc(struct sib_link *l, size_t *cap)
{
	struct udp_link *u = to_udp(l);
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

static unsigned slot_of(struct udp_link *u, const uint8_t *buf)
{
	size_t off = (size_t)(buf - u->tx_mem);

	/* A buffer tx_alloc did not hand out is a bug in the caller. */
	if (buf < u->tx_mem || off % SIB_LINK_MAX_DGRAM ||
	    off / SIB_LINK_MAX_DGRAM >= SIB_LINK_TX_BUFS)
		abort();
	return (unsigned)(off / SIB_LINK_MAX_DGRAM);
}

static void udp_tx_abort(struct sib_link *l, uint8_t *buf)
{
	struct udp_link *u = to_udp(l);
	unsigned idx = slot_of(u, buf);

	pthread_mutex_lock(&u->tx_lock);
	u->free_slots[u->nfree++] = (uint16_t)idx;
	pthread_mutex_unlock(&u->tx_lock);
}

static void udp_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			  const struct sib_endpoint *dst)
{
	struct udp_link *u = to_udp(l);
	unsigned idx = slot_of(u, buf);
	struct tx_slot *s = &u->slots[idx];
	struct io_uring_sqe *sqe;
	socklen_t alen;

	if (len > SIB_LINK_MAX_DGRAM) {
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_TOO_LONG], 1);
		udp_tx_abort(l, buf);
		return;
	}
	alen = sib_endpoint_to_sockaddr(dst, u->af, &s->dst);
	if (!alen) {
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_NO_ROUTE], 1);
		udp_tx_abort(l, buf);
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

static int udp_flush(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);

	pthread_mutex_lock(&u->tx_lock);
	tx_submit(u);
	tx_reap(u);
	pthread_mutex_unlock(&u->tx_lock);
	return 0;
}

/* ---------------------------------------------------------------- receive */

static int rx_arm(struct udp_link *u)
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
static void rx_overflow(struct udp_link *u, struct io_uring_recvmsg_out *o)
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
static bool rx_complete(struct udp_link *u, const struct io_uring_cqe *cqe, sib_link_rx_fn rx,
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

static int udp_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct udp_link *u = to_udp(l);
	struct io_uring_cqe *cqe;
	int n = 0;

	pthread_mutex_lock(&u->rx_lock);
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

static int udp_wait_fd(struct sib_link *l)
{
	return to_udp(l)->efd;
}

static int udp_wait_arm(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);
	eventfd_t v;

	eventfd_read(u->efd, &v); /* non-blocking: EAGAIN when already clear */
	return io_uring_cq_ready(&u->rx_ring) > 0 || !__atomic_load_n(&u->rx_armed, __ATOMIC_RELAXED);
}

static void udp_close(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);

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

static const struct sib_link_ops udp_ops = {
	.kind = "udp",
	.tx_alloc = udp_tx_alloc,
	.tx_commit = udp_tx_commit,
	.tx_abort = udp_tx_abort,
	.flush = udp_flush,
	.poll = udp_poll,
	.wait_fd = udp_wait_fd,
	.wait_arm = udp_wait_arm,
	.close = udp_close,
};

/* ---------------------------------------------------------------- MTU */

unsigned sib_link_ib_mtu_for(unsigned if_mtu, bool ipv6)
{
	/* IP and UDP headers, then the largest IBA packet around the payload:
	 * LRH, GRH, BTH, the biggest set of ETHs, ICRC, VCRC (IBA 7.7, 9.2). */
	unsigned ip_udp = (ipv6 ? 40u : 20u) + 8u;
	unsigned ib_overhead = IB_MAX_PACKET - IB_MAX_MTU;

	for (unsigned m = IB_MAX_MTU; m > 256; m /= 2)
		if (if_mtu >= ip_udp + ib_overhead + m)
			return m;
	return 256; /* below that IP fragments the datagram: slower, still correct */
}

/* The interface holding ep's address, via getifaddrs. */
static bool ifname_of(const struct sib_endpoint *ep, char name[IF_NAMESIZE])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		struct sib_endpoint a;

		if (!i->ifa_addr ||
		    sib_endpoint_from_sockaddr(i->ifa_addr,
					       i->ifa_addr->sa_family == AF_INET
						       ? sizeof(struct sockaddr_in)
						       : sizeof(struct sockaddr_in6),
					       &a))
			continue;
		if (a.family == ep->family && !memcmp(a.addr, ep->addr, sizeof(a.addr))) {
			snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* The interface MTU for packets leaving through `name`, or through any up
 * interface (the smallest) when name is NULL.  0 when unknown. */
static unsigned if_mtu_of(const char *name)
{
	struct nl_sock *sk = nl_socket_alloc();
	unsigned mtu = 0;

	if (!sk)
		return 0;
	if (nl_connect(sk, NETLINK_ROUTE) < 0)
		goto out;
	if (name) {
		struct rtnl_link *link;

		if (rtnl_link_get_kernel(sk, 0, name, &link) >= 0) {
			mtu = rtnl_link_get_mtu(link);
			rtnl_link_put(link);
		}
	} else {
		struct nl_cache *cache;

		if (rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache) >= 0) {
			for (struct nl_object *o = nl_cache_get_first(cache); o;
			     o = nl_cache_get_next(o)) {
				struct rtnl_link *link = (struct rtnl_link *)o;
				unsigned flags = rtnl_link_get_flags(link);
				unsigned m = rtnl_link_get_mtu(link);

				if ((flags & IFF_UP) && !(flags & IFF_LOOPBACK) && m &&
				    (!mtu || m < mtu))
					mtu = m;
			}
			nl_cache_free(cache);
		}
	}
out:
	nl_socket_free(sk);
	return mtu;
}

static unsigned port_mtu(const struct sib_endpoint *ep, const char *netdev)
{
	char name[IF_NAMESIZE];
	const char *ifname = netdev;
	unsigned mtu;

	if (!ifname && ifname_of(ep, name))
		ifname = name;
	mtu = if_mtu_of(ifname);
	if (!mtu) {
		mtu = 1500;
		sib_warn("cannot read the MTU of %s with libnl; assuming %u",
			 ifname ? ifname : "the host's interfaces", mtu);
	}
	return sib_link_ib_mtu_for(mtu, ep->family == SIB_AF_INET6);
}

/* ---------------------------------------------------------------- opening */

static int netdev_ipv4(const char *netdev, struct sib_endpoint *ep)
{
	struct ifaddrs *ifa, *i;
	bool exists = false;
	int ret = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (strcmp(i->ifa_name, netdev))
			continue;
		exists = true;
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !sib_endpoint_from_sockaddr(i->ifa_addr, sizeof(struct sockaddr_in), ep)) {
			ep->port = 0;
			ret = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	if (!exists) {
		sib_err("SOFTIB_NETDEV=%s: no such network interface; set SOFTIB_NETDEV to one "
			"that `ip addr` lists, or SOFTIB_ADDR to an address",
			netdev);
		return -ENODEV;
	}
	if (ret)
		sib_err("SOFTIB_NETDEV=%s has no IPv4 address; give it one, or set SOFTIB_ADDR",
			netdev);
	return ret;
}

static int setup_socket(struct udp_link *u, const struct sib_endpoint *want, const char *knob)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, size = SOCK_BUF_BYTES;
	char s[SIB_ENDPOINT_STRLEN];

	u->af = want->family == SIB_AF_INET6 ? AF_INET6 : AF_INET;
	u->fd = socket(u->af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		int err = errno;

		sib_err("cannot create a UDP socket: %s", strerror(err));
		return -err;
	}
	/* Deep socket buffers absorb bursts; FORCE works only with
	 * CAP_NET_ADMIN, otherwise net.core.[rw]mem_max caps the request. */
	if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(u->fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (u->af == AF_INET6)
		setsockopt(u->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));

	len = sib_endpoint_to_sockaddr(want, u->af, &ss);
	if (bind(u->fd, (struct sockaddr *)&ss, len)) {
		int err = errno;

		sib_err("cannot bind the UDP socket to %s: %s; set %s to an address of this "
			"host%s",
			sib_endpoint_str(want, s), strerror(err), knob,
			want->port ? " and a free port (or none, for an ephemeral one)" : "");
		return -err;
	}
	len = sizeof(ss);
	if (getsockname(u->fd, (struct sockaddr *)&ss, &len) ||
	    sib_endpoint_from_sockaddr((struct sockaddr *)&ss, len, &u->link.local)) {
		int err = errno ? errno : EAFNOSUPPORT;

		sib_err("getsockname on the UDP socket: %s", strerror(err));
		return -err;
	}
	return 0;
}

static int uring_err(const char *what, int ret)
{
	sib_err("%s failed: %s; softib needs io_uring (check sysctl kernel.io_uring_disabled, "
		"and a container's seccomp profile must allow io_uring_setup)",
		what, strerror(-ret));
	return ret;
}

static int setup_rings(struct udp_link *u)
{
	struct io_uring_params p;
	struct io_uring_buf_reg reg;
	int ret;

	ret = io_uring_queue_init(SIB_LINK_TX_BUFS, &u->tx_ring, 0);
	if (ret < 0)
		return uring_err("io_uring_queue_init (send ring)", ret);
	u->tx_ring_up = true;

	/* Room in the CQ for a completion per receive buffer, so the CQ never
	 * overflows before the buffers run out. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * RX_BUFS;
	ret = io_uring_queue_init_params(8, &u->rx_ring, &p);
	if (ret < 0)
		return uring_err("io_uring_queue_init (receive ring)", ret);
	u->rx_ring_up = true;

	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0)
		return uring_err("eventfd", -errno);
	ret = io_uring_register_eventfd(&u->rx_ring, u->efd);
	if (ret < 0)
		return uring_err("io_uring_register_eventfd", ret);

	u->br = mmap(NULL, RX_BUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->br == MAP_FAILED) {
		u->br = NULL;
		return uring_err("mmap of the buffer ring", -errno);
	}
	io_uring_buf_ring_init(u->br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)(uintptr_t)u->br;
	reg.ring_entries = RX_BUFS;
	reg.bgid = RX_BGID;
	ret = io_uring_register_buf_ring(&u->rx_ring, &reg, 0);
	if (ret < 0)
		return uring_err("io_uring_register_buf_ring (kernel 5.19 or later)", ret);
	for (unsigned i = 0; i < RX_BUFS; i++)
		io_uring_buf_ring_add(u->br, u->rx_mem + (size_t)i * RX_BUF_SIZE, RX_BUF_SIZE,
				      (unsigned short)i, io_uring_buf_ring_mask(RX_BUFS), (int)i);
	io_uring_buf_ring_advance(u->br, RX_BUFS);

	u->rx_msg.msg_namelen = RX_NAME_LEN;
	u->rx_msg.msg_controllen = RX_CTRL_LEN;
	ret = rx_arm(u);
	if (ret < 0)
		return uring_err("multishot RECVMSG (kernel 6.0 or later)", ret);
	return 0;
}

int sib_link_udp_open(const char *addr, const char *netdev, struct sib_link **out)
{
	struct sib_endpoint want;
	struct udp_link *u;
	const char *knob = "SOFTIB_ADDR";
	char s[SIB_ENDPOINT_STRLEN];
	int ret;

	*out = NULL;
	if (addr) {
		if (sib_endpoint_parse(addr, 0, &want)) {
			sib_err("SOFTIB_ADDR=%s is not an address: write an IPv4 or IPv6 address, "
				"optionally with a port (127.0.0.1, 10.0.0.2:7000, [::1]:7000)",
				addr);
			return -EINVAL;
		}
	} else if (netdev) {
		knob = "SOFTIB_NETDEV";
		ret = netdev_ipv4(netdev, &want);
		if (ret)
			return ret;
	} else {
		sib_endpoint_parse("127.0.0.1", 0, &want);
	}

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->link.ops = &udp_ops;
	u->fd = u->efd = -1;
	pthread_mutex_init(&u->tx_lock, NULL);
	pthread_mutex_init(&u->rx_lock, NULL);
	u->tx_mem = aligned_alloc(4096, (size_t)SIB_LINK_TX_BUFS * SIB_LINK_MAX_DGRAM);
	u->rx_mem = aligned_alloc(4096, (size_t)RX_BUFS * RX_BUF_SIZE + 4096 -
						((size_t)RX_BUFS * RX_BUF_SIZE) % 4096);
	if (!u->tx_mem || !u->rx_mem) {
		udp_close(&u->link);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < SIB_LINK_TX_BUFS; i++)
		u->free_slots[i] = (uint16_t)(SIB_LINK_TX_BUFS - 1 - i);
	u->nfree = SIB_LINK_TX_BUFS;

	ret = setup_socket(u, &want, knob);
	if (!ret)
		ret = setup_rings(u);
	if (ret) {
		udp_close(&u->link);
		return ret;
	}
	u->link.mtu = port_mtu(&u->link.local, netdev);
	sib_info("link: UDP %s, active MTU %u", sib_endpoint_str(&u->link.local, s),
		 u->link.mtu);
	*out = &u->link;
	return 0;
}

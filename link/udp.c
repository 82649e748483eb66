/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP link: one non-blocking socket per port (docs/architecture.md section 4),
 * driven with batching system calls so that any thread can use it:
 *   - send: commits are queued and handed to the kernel at flush (or when
 *     SIB_LINK_TX_BATCH are queued) in one sendmmsg; runs of equal-sized
 *     datagrams to one endpoint go as one UDP GSO message (a UDP_SEGMENT
 *     control message), which the kernel splits into datagrams, about 3x
 *     the goodput of one message per datagram (tests/bench/udp_limit.c);
 *   - a packet that cannot lead such a run (the next one to its endpoint
 *     is longer: an ACK before the request that follows it) shares one
 *     datagram with the packets after it to that endpoint, back to back,
 *     up to SIB_LINK_MAX_DGRAM bytes: what one flush sends together
 *     arrives together, so the thread that reads the ACK also reads the
 *     request (sent as two datagrams, the request would often arrive
 *     after the peer's reader had taken the ACK and left: then only a
 *     wake-up of its progress thread could apply it);
 *   - receive: recvmmsg with UDP_GRO: a GSO burst from a peer arrives as
 *     one message of equal-sized segments (the kernel says the size), so
 *     one pass through the kernel's receive path carries up to 64 KiB;
 *     each datagram is cut into packets where LRH.PktLen says one ends;
 *   - the wait fd is the socket itself: readable while datagrams wait;
 *   - one receive context (its buffers and lock): one thread reads the
 *     link at a time, and handles each datagram of its batch in the order
 *     the socket gave them before it takes more (docs/architecture.md,
 *     the receive rule; the HCA decides which thread that is).
 * io_uring (the first version) ran receive work on the thread that armed
 * the receive, so only that thread could take datagrams and every burst
 * woke it; plain recvmmsg lets a thread polling an empty CQ drain the link
 * itself (docs/architecture.md section 6) with one system call per batch.
 *
 * The system calls themselves go through struct sib_udp_io (socket.h):
 * plain sendmmsg/recvmmsg here, io_uring in uring.c (SOFTIB_LINK=uring),
 * which keeps all of the above and changes only how the kernel is asked.
 *
 * Packets leave in commit order: one thread sends at a time, taking the
 * whole queue when it starts, and a thread that finds another sending
 * leaves its packets to it: the sender looks at the queue again when it
 * is done (docs/architecture.md, the transmit rule).  Only a thread that
 * needs a buffer and finds none free waits for the sender.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "link/socket.h"
#include "base/log.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* Messages per recvmmsg, and the room for each (a datagram longer than
 * SIB_LINK_MAX_DGRAM is dropped as truncated). */
#define RX_BATCH 32
#define RX_MSG_SIZE (64u << 10) /* a UDP_GRO message: at most one UDP length */
/* A GSO message: at most this many bytes (the UDP length field, less the
 * IPv6 header) and segments (the kernel's UDP_MAX_SEGMENTS is 64 or more). */
#define GSO_MAX_BYTES 65000u
#define GSO_MAX_SEGS 64u

struct tx_pkt {
	uint16_t slot;
	uint16_t len; /* the whole packet */
	uint16_t hdr_len; /* split (payload != NULL): the buffer's part before the payload */
	uint16_t payload_len;
	const uint8_t *payload; /* NULL: the packet is all in the buffer */
	struct sib_endpoint dst;
	struct sib_link_hold hold; /* split: released after the send */
};

/* iovecs per packet: header, payload, trailer */
#define IOV_PER_PKT 3

union tx_ctrl {
	char buf[CMSG_SPACE(sizeof(uint16_t))];
	struct cmsghdr align;
};

union rx_ctrl {
	char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

struct udp_link {
	struct sib_link link;
	const struct sib_udp_io *io;
	int fd;
	int af;
	bool gso; /* UDP_SEGMENT works; cleared when the kernel refuses it */

	pthread_mutex_t q_lock; /* free list and queue */
	uint8_t *tx_mem;
	uint16_t free_slots[SIB_LINK_TX_BUFS];
	unsigned nfree;
	struct tx_pkt queue[SIB_LINK_TX_BUFS];
	unsigned queued;

	/* The sender's scratch: one thread sends at a time (tx_flush). */
	struct udp_tx {
		pthread_mutex_t lock;
		struct tx_pkt sending[SIB_LINK_TX_BUFS];
		struct mmsghdr mmsg[SIB_LINK_TX_BUFS];
		unsigned first[SIB_LINK_TX_BUFS]; /* message i carries sending[first[i]..] */
		struct iovec iov[SIB_LINK_TX_BUFS * IOV_PER_PKT];
		unsigned piov[SIB_LINK_TX_BUFS + 1]; /* packet i's iovecs: [piov[i], piov[i+1]) */
		struct sockaddr_storage names[SIB_LINK_TX_BUFS];
		union tx_ctrl ctrl[SIB_LINK_TX_BUFS];
		void *io; /* the I/O context (io_uring: a ring), used under lock */
		/* Who holds lock (0: nobody), and a thread that will never run
		 * again (udp_abandoned_by); pthread_t values, read unlocked. */
		uintptr_t holder, gone;
	} tx;
	bool tx_err_logged;

	/* The receive context: one poller at a time (udp_poll). */
	struct udp_rx {
		pthread_mutex_t lock; /* the receive buffers below */
		uint8_t *mem;
		struct mmsghdr msgs[RX_BATCH];
		struct iovec iov[RX_BATCH];
		struct sockaddr_storage names[RX_BATCH];
		union rx_ctrl ctrl[RX_BATCH];
		unsigned used; /* messages the kernel may have written since the last reset */
		void *io;
	} rx;
	bool rx_err_logged;
};

static struct udp_link *to_udp(struct sib_link *l)
{
	return (struct udp_link *)l;
}

/* ---------------------------------------------------------------- send */

static uint8_t *slot_buf(struct udp_link *u, unsigned slot)
{
	return u->tx_mem + (size_t)slot * SIB_LINK_MAX_DGRAM;
}

static void tx_error(struct udp_link *u, int err, uint64_t packets)
{
	sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_TX_ERROR], packets);
	if (!u->tx_err_logged) {
		u->tx_err_logged = true;
		sib_warn("UDP send failed: %s (counted as tx_error; further failures are logged "
			 "at debug level)",
			 strerror(err));
	} else {
		sib_dbg("UDP send failed: %s", strerror(err));
	}
}

/* Packet i's iovecs, from t->iov[v]: its buffer, or for a split packet
 * the header, the payload where it lies, and the trailer.  Returns the
 * next free iovec. */
static unsigned tx_iovecs(struct udp_link *u, struct udp_tx *t, unsigned i, unsigned v)
{
	const struct tx_pkt *p = &t->sending[i];
	uint8_t *buf = slot_buf(u, p->slot);

	t->piov[i] = v;
	if (!p->payload) {
		t->iov[v++] = (struct iovec){ buf, p->len };
	} else {
		t->iov[v++] = (struct iovec){ buf, p->hdr_len };
		t->iov[v++] = (struct iovec){ (void *)p->payload, p->payload_len };
		t->iov[v++] = (struct iovec){ buf + p->hdr_len,
					      (size_t)p->len - p->hdr_len - p->payload_len };
	}
	t->piov[i + 1] = v;
	return v;
}

/*
 * Groups sending[0..n) into messages: a run of datagrams to one endpoint,
 * all of one size but the last (which may be shorter), becomes one GSO
 * message (the kernel cuts the concatenation of its iovecs at the segment
 * size); a packet that leads no such run becomes one datagram with the
 * packets after it to its endpoint that fit (a packed message: no segment
 * size).  Returns the number of messages.
 */
static unsigned tx_build(struct udp_link *u, struct udp_tx *t, unsigned n)
{
	unsigned m = 0, i = 0, v = 0;

	t->piov[0] = 0;
	while (i < n) {
		struct tx_pkt *p = &t->sending[i];
		struct mmsghdr *h = &t->mmsg[m];
		socklen_t alen = sib_endpoint_to_sockaddr(&p->dst, u->af, &t->names[m]);
		unsigned j = i + 1, bytes = p->len, v0 = v;
		bool packed = false;

		if (!alen) {
			sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_TX_NO_ROUTE], 1);
			t->piov[i + 1] = v;
			i++;
			continue;
		}
		v = tx_iovecs(u, t, i, v);
		if (u->gso) {
			/* the previous one's size is the segment size until one is shorter */
			while (j < n && j - i < GSO_MAX_SEGS && t->sending[j - 1].len == p->len &&
			       t->sending[j].len <= p->len &&
			       bytes + t->sending[j].len <= GSO_MAX_BYTES &&
			       sib_endpoint_equal(&t->sending[j].dst, &p->dst)) {
				v = tx_iovecs(u, t, j, v);
				bytes += t->sending[j].len;
				j++;
			}
		}
		if (j == i + 1) {
			while (j < n && j - i < GSO_MAX_SEGS &&
			       bytes + t->sending[j].len <= SIB_LINK_MAX_DGRAM &&
			       sib_endpoint_equal(&t->sending[j].dst, &p->dst)) {
				v = tx_iovecs(u, t, j, v);
				bytes += t->sending[j].len;
				j++;
			}
			packed = j - i > 1;
		}
		memset(h, 0, sizeof(*h));
		h->msg_hdr.msg_name = &t->names[m];
		h->msg_hdr.msg_namelen = alen;
		h->msg_hdr.msg_iov = &t->iov[v0];
		h->msg_hdr.msg_iovlen = v - v0;
		if (j - i > 1 && !packed) {
			struct cmsghdr *cm = &t->ctrl[m].align;
			uint16_t seg = p->len;

			h->msg_hdr.msg_control = t->ctrl[m].buf;
			h->msg_hdr.msg_controllen = sizeof(t->ctrl[m].buf);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
		}
		t->first[m++] = i;
		i = j;
	}
	t->first[m] = n;
	return m;
}

/* Sends GSO message k's datagrams one by one (the kernel refused GSO). */
static void tx_one_by_one(struct udp_link *u, struct udp_tx *t, unsigned k)
{
	struct mmsghdr one = { .msg_hdr = t->mmsg[k].msg_hdr };
	struct msghdr *mh = &one.msg_hdr;

	mh->msg_control = NULL;
	mh->msg_controllen = 0;
	for (unsigned i = t->first[k]; i < t->first[k + 1]; i++) {
		mh->msg_iov = &t->iov[t->piov[i]];
		mh->msg_iovlen = t->piov[i + 1] - t->piov[i];
		if (u->io->sendmmsg(t->io, u->fd, &one, 1) < 1) {
			tx_error(u, errno, 1);
		} else {
			sib_link_count(&u->link.counters.tx_packets, 1);
			sib_link_count(&u->link.counters.tx_bytes, t->sending[i].len);
		}
	}
}

/* Hands messages [0, m) of t to the kernel.  Called with t->lock held. */
static void tx_send(struct udp_link *u, struct udp_tx *t, unsigned m)
{
	unsigned k = 0, waits = 0;

	while (k < m) {
		int r = u->io->sendmmsg(t->io, u->fd, &t->mmsg[k], m - k);

		if (r > 0) {
			for (unsigned i = k; i < k + (unsigned)r; i++) {
				unsigned segs = t->first[i + 1] - t->first[i];

				sib_link_count(&u->link.counters.tx_packets, segs);
				sib_link_count(&u->link.counters.tx_bytes, t->mmsg[i].msg_len);
			}
			k += (unsigned)r;
			continue;
		}
		if (errno == EINTR)
			continue;
		if ((errno == EAGAIN || errno == ENOBUFS) && waits < 3) {
			/* The socket's send buffer is full: give the kernel a moment. */
			struct pollfd pfd = { .fd = u->fd, .events = POLLOUT };

			waits++;
			poll(&pfd, 1, 1);
			continue;
		}
		if (errno == EIO && t->mmsg[k].msg_hdr.msg_controllen) {
			/* No GSO on this path (e.g. no checksum offload). */
			sib_info("UDP GSO refused here (%s); sending one datagram per message",
				 strerror(errno));
			u->gso = false;
			tx_one_by_one(u, t, k);
		} else {
			tx_error(u, errno, t->first[k + 1] - t->first[k]);
		}
		k++;
	}
}

/* Takes the sender's part: false when another thread has it and !wait.
 * *in_place: the holder is a thread a fatal signal stopped for good, whose
 * part the caller takes over without the lock (the holder never touches it
 * again; nobody else can get it, the holder keeps the lock till the end). */
static bool tx_take(struct udp_tx *t, bool wait, bool *in_place)
{
	uintptr_t self = (uintptr_t)pthread_self();

	*in_place = false;
	if (pthread_mutex_trylock(&t->lock)) {
		uintptr_t gone = __atomic_load_n(&t->gone, __ATOMIC_ACQUIRE);

		if (!wait)
			return false;
		if (gone && __atomic_load_n(&t->holder, __ATOMIC_RELAXED) == gone) {
			*in_place = true;
			return true;
		}
		pthread_mutex_lock(&t->lock);
	}
	__atomic_store_n(&t->holder, self, __ATOMIC_RELAXED);
	return true;
}

static void tx_give(struct udp_tx *t, bool in_place)
{
	if (in_place)
		return;
	__atomic_store_n(&t->holder, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->lock);
}

/* Sends what is queued, in commit order: one thread at a time.  A thread
 * that finds another sending returns and leaves its packets to that one,
 * which looks at the queue again once it lets go (the fences pair with
 * tx_queue's, so that one of the two sees the other); with wait, it waits
 * for the sender instead (a buffer is needed: udp_tx_alloc), unless that
 * sender will never run again (tx_take). */
static void tx_flush(struct udp_link *u, bool wait)
{
	struct udp_tx *t = &u->tx;

	for (;;) {
		unsigned n;
		bool in_place;

		if (!tx_take(t, wait, &in_place))
			return;
		pthread_mutex_lock(&u->q_lock);
		n = u->queued;
		memcpy(t->sending, u->queue, n * sizeof(u->queue[0]));
		u->queued = 0;
		pthread_mutex_unlock(&u->q_lock);
		if (n) {
			tx_send(u, t, tx_build(u, t, n));
			/* The kernel has copied every payload (or dropped the packet). */
			for (unsigned i = 0; i < n; i++)
				if (t->sending[i].payload)
					t->sending[i].hold.release(t->sending[i].hold.ctx);
			pthread_mutex_lock(&u->q_lock);
			for (unsigned i = 0; i < n; i++)
				u->free_slots[u->nfree++] = t->sending[i].slot;
			pthread_mutex_unlock(&u->q_lock);
		}
		tx_give(t, in_place);
		if (in_place)
			return; /* what is queued later waits for the process's end */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&u->queued, __ATOMIC_RELAXED))
			return;
		wait = false; /* queued meanwhile: send it, unless another sender took over */
	}
}

static uint8_t *udp_tx_alloc(struct sib_link *l, size_t *cap)
{
	struct udp_link *u = to_udp(l);
	uint8_t *buf = NULL;

	*cap = SIB_LINK_MAX_DGRAM;
	for (int tries = 0; tries < 2 && !buf; tries++) {
		bool queued;

		pthread_mutex_lock(&u->q_lock);
		if (u->nfree)
			buf = slot_buf(u, u->free_slots[--u->nfree]);
		queued = u->queued != 0;
		pthread_mutex_unlock(&u->q_lock);
		/* None free: they are queued (send them), being sent by another
		 * thread (flush waits for it) or held by callers (NULL). */
		if (!buf && (queued || !tries))
			tx_flush(u, true);
	}
	if (!buf)
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_NO_BUFFER], 1);
	return buf;
}

static unsigned slot_of(struct udp_link *u, const uint8_t *buf)
{
	return sib_link_tx_slot(u->tx_mem, buf);
}

static void udp_tx_abort(struct sib_link *l, uint8_t *buf)
{
	struct udp_link *u = to_udp(l);
	unsigned idx = slot_of(u, buf);

	pthread_mutex_lock(&u->q_lock);
	u->free_slots[u->nfree++] = (uint16_t)idx;
	pthread_mutex_unlock(&u->q_lock);
}

/* Queues p, whose packet is buf and len bytes long, or drops it (and
 * releases its hold) when it is too long; flushes a full queue. */
static void tx_queue(struct udp_link *u, uint8_t *buf, size_t len, struct tx_pkt *p)
{
	bool full;

	if (len > SIB_LINK_MAX_DGRAM) {
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_TX_TOO_LONG], 1);
		if (p->payload)
			p->hold.release(p->hold.ctx);
		udp_tx_abort(&u->link, buf);
		return;
	}
	p->slot = (uint16_t)slot_of(u, buf);
	p->len = (uint16_t)len;
	pthread_mutex_lock(&u->q_lock);
	u->queue[u->queued++] = *p;
	full = u->queued >= SIB_LINK_TX_BATCH;
	pthread_mutex_unlock(&u->q_lock);
	if (full) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with tx_flush's */
		tx_flush(u, false);
	}
}

static void udp_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			  const struct sib_endpoint *dst)
{
	struct tx_pkt p = { .dst = *dst };

	tx_queue(to_udp(l), buf, len, &p);
}

static void udp_tx_commit_split(struct sib_link *l, uint8_t *buf, size_t hdr_len,
				const uint8_t *payload, size_t payload_len, size_t trailer_len,
				const struct sib_endpoint *dst, struct sib_link_hold *hold)
{
	/* The lengths fit 16 bits whenever tx_queue keeps the packet. */
	struct tx_pkt p = { .hdr_len = (uint16_t)hdr_len,
			    .payload_len = (uint16_t)payload_len,
			    .payload = payload,
			    .dst = *dst,
			    .hold = *hold };

	tx_queue(to_udp(l), buf, hdr_len + payload_len + trailer_len, &p);
}

static int udp_flush_wait(struct sib_link *l)
{
	tx_flush(to_udp(l), true);
	return 0;
}

static int udp_flush(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);

	if (__atomic_load_n(&u->queued, __ATOMIC_RELAXED)) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with tx_flush's */
		tx_flush(u, false);
	}
	return 0;
}

/* ---------------------------------------------------------------- receive */

/* SO_RXQ_OVFL: how many datagrams the socket has dropped since it was
 * opened because its receive buffer was full.  The kernel stamps it on each
 * datagram it queues, so drops show up with the next datagram received. */
/* Also returns the UDP_GRO segment size, 0 when the message is one
 * datagram. */
static unsigned rx_cmsgs(struct udp_link *u, struct msghdr *mh)
{
	unsigned seg = 0;

	if (mh->msg_flags & MSG_CTRUNC)
		return 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		uint32_t drops;

		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			seg = v > 0 ? (unsigned)v : 0;
			continue;
		}
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SO_RXQ_OVFL ||
		    cm->cmsg_len < CMSG_LEN(sizeof(drops)))
			continue;
		memcpy(&drops, CMSG_DATA(cm), sizeof(drops));
		/* The kernel's running total; both receive contexts see it. */
		uint64_t *c = &u->link.counters.drop[SIB_LINK_DROP_RX_QUEUE_FULL];
		uint64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);

		while (drops > old && !__atomic_compare_exchange_n(c, &old, (uint64_t)drops, false,
								   __ATOMIC_RELAXED,
								   __ATOMIC_RELAXED))
			;
	}
	return seg;
}

/* The lengths and flags recvmmsg wrote back, set again for the next call;
 * only those of messages it may have touched. */
static void rx_reset(struct udp_rx *c)
{
	for (unsigned k = 0; k < c->used; k++) {
		struct msghdr *mh = &c->msgs[k].msg_hdr;

		mh->msg_namelen = sizeof(c->names[k]);
		mh->msg_controllen = sizeof(c->ctrl[k].buf);
		mh->msg_flags = 0;
	}
	c->used = 0;
}

/* One received message: each packet it holds goes to rx in order, unless
 * the link drops the message (counted).  A UDP_GRO message holds a GSO
 * burst, cut at the size the kernel gives; a datagram holds one packet,
 * or several back to back (tx_build), each as long as its LRH says.
 * Where the LRH's length is too short or runs past the datagram, the rest
 * of it goes on as one packet, for the decoder to reject and count.
 * Returns the packets handed on. */
static unsigned rx_message(struct udp_link *u, struct udp_rx *c, unsigned k, sib_link_rx_fn rx,
			   void *arg)
{
	struct msghdr *mh = &c->msgs[k].msg_hdr;
	const uint8_t *buf = c->iov[k].iov_base;
	unsigned len = c->msgs[k].msg_len, seg, n = 0;
	struct sib_endpoint from;

	if (sib_endpoint_from_sockaddr(mh->msg_name, mh->msg_namelen, &from)) {
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_MALFORMED], 1);
		return 0;
	}
	seg = rx_cmsgs(u, mh);
	if (mh->msg_flags & MSG_TRUNC) {
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_TRUNCATED], 1);
		return 0;
	}
	if (!seg || seg >= len)
		seg = len;
	if (seg > SIB_LINK_MAX_DGRAM) { /* larger than any IB packet */
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_TRUNCATED],
			       (len + seg - 1) / seg);
		return 0;
	}
	sib_link_count(&u->link.counters.rx_bytes, len);
	for (unsigned off = 0; off < len; off += seg) {
		unsigned end = len - off < seg ? len : off + seg;

		for (unsigned at = off; at < end; n++) {
			size_t l = ib_packet_len_from_lrh(buf + at, end - at);

			if (l < IB_LRH_BYTES + IB_VCRC_BYTES || l > end - at)
				l = end - at;
			rx(arg, buf + at, l, &from);
			at += (unsigned)l;
		}
	}
	sib_link_count(&u->link.counters.rx_packets, n);
	return n;
}

/* One recvmmsg of up to want messages into c; how many it took. */
static unsigned rx_batch(struct udp_link *u, struct udp_rx *c, unsigned want)
{
	int got;

	rx_reset(c);
	got = u->io->recvmmsg(c->io, u->fd, c->msgs, want);
	/* The kernel writes back only the messages it filled; the one after
	 * them is reset too, in case a failed receive touched it. */
	c->used = got < 0 ? 1 : (unsigned)got + ((unsigned)got < want);
	if (got < 0) {
		int err = errno;

		if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR && !u->rx_err_logged) {
			u->rx_err_logged = true;
			sib_warn("UDP receive failed: %s", strerror(err));
		}
		return 0;
	}
	return (unsigned)got;
}

/* One poller at a time (link.h): batches off the socket, each handled in
 * the socket's order before the next is taken, until max datagrams or an
 * empty socket. */
static int udp_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct udp_link *u = to_udp(l);
	struct udp_rx *c = &u->rx;
	unsigned n = 0;

	pthread_mutex_lock(&c->lock);
	while (n < max) {
		unsigned want = max - n < RX_BATCH ? max - n : RX_BATCH;
		unsigned msgs = rx_batch(u, c, want);

		for (unsigned k = 0; k < msgs; k++)
			n += rx_message(u, c, k, rx, arg);
		if (msgs < want)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return (int)n;
}

static int udp_wait_fd(struct sib_link *l)
{
	return to_udp(l)->fd;
}

static int udp_wait_arm(struct sib_link *l)
{
	(void)l;
	return 0; /* the socket is readable exactly while datagrams wait */
}

static void udp_abandoned_by(struct sib_link *l, pthread_t thread)
{
	__atomic_store_n(&to_udp(l)->tx.gone, (uintptr_t)thread, __ATOMIC_RELEASE);
}

static void udp_close(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);

	if (u->fd >= 0)
		udp_flush_wait(l);
	if (u->tx.io)
		u->io->close(u->tx.io);
	if (u->rx.io)
		u->io->close(u->rx.io);
	if (u->fd >= 0)
		close(u->fd);
	free(u->tx_mem);
	free(u->rx.mem);
	pthread_mutex_destroy(&u->q_lock);
	pthread_mutex_destroy(&u->tx.lock);
	pthread_mutex_destroy(&u->rx.lock);
	free(u);
}

/* The same link whatever does its system calls; only the kind differs. */
#define UDP_OPS(kind_)                                                                             \
	{                                                                                          \
		.kind = kind_, .tx_alloc = udp_tx_alloc, .tx_commit = udp_tx_commit,               \
		.tx_commit_split = udp_tx_commit_split, .tx_abort = udp_tx_abort,                  \
		.flush = udp_flush, .flush_wait = udp_flush_wait, .poll = udp_poll,                \
		.wait_fd = udp_wait_fd, .wait_arm = udp_wait_arm,                                  \
		.abandoned_by = udp_abandoned_by, .close = udp_close,                              \
	}
static const struct sib_link_ops udp_ops = UDP_OPS("udp");
static const struct sib_link_ops udp_uring_ops = UDP_OPS("udp-uring");

/* ---------------------------------------------------------------- plain system calls */

static int sys_sendmmsg(void *ctx, int fd, struct mmsghdr *m, unsigned n)
{
	(void)ctx;
	return sendmmsg(fd, m, n, 0);
}

static int sys_recvmmsg(void *ctx, int fd, struct mmsghdr *m, unsigned n)
{
	(void)ctx;
	/* The system call itself: libc's recvmmsg is a cancellation point,
	 * two atomic operations around every empty poll of a spinning CQ. */
	return (int)syscall(SYS_recvmmsg, fd, m, n, MSG_DONTWAIT, NULL);
}

static int sys_open(void **ctx, int fd, char *why, size_t why_len)
{
	(void)fd;
	(void)why;
	(void)why_len;
	*ctx = NULL;
	return 0;
}

static void sys_close(void *ctx)
{
	(void)ctx;
}

static const struct sib_udp_io sys_io = {
	.what = "sockets",
	.open = sys_open,
	.close = sys_close,
	.sendmmsg = sys_sendmmsg,
	.recvmmsg = sys_recvmmsg,
};

/* ---------------------------------------------------------------- opening */

/* A receive context's messages, each over its own part of its memory. */
static void setup_rx(struct udp_rx *c)
{
	for (unsigned k = 0; k < RX_BATCH; k++) {
		struct msghdr *mh = &c->msgs[k].msg_hdr;

		c->iov[k].iov_base = c->mem + (size_t)k * RX_MSG_SIZE;
		c->iov[k].iov_len = RX_MSG_SIZE;
		mh->msg_name = &c->names[k];
		mh->msg_iov = &c->iov[k];
		mh->msg_iovlen = 1;
		mh->msg_control = c->ctrl[k].buf;
	}
	c->used = RX_BATCH;
	rx_reset(c);
}

int sib_link_udp_open_io(const char *addr, const char *netdev, const struct sib_udp_io *io,
			 struct sib_link **out, char *why, size_t why_len)
{
	struct udp_link *u;
	char s[SIB_ENDPOINT_STRLEN];

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->link.ops = io == &sys_io ? &udp_ops : &udp_uring_ops;
	u->io = io;
	u->fd = -1;
	pthread_mutex_init(&u->q_lock, NULL);
	pthread_mutex_init(&u->tx.lock, NULL);
	pthread_mutex_init(&u->rx.lock, NULL);
	u->rx.mem = aligned_alloc(4096, (size_t)RX_BATCH * RX_MSG_SIZE);
	u->tx_mem = aligned_alloc(4096, (size_t)SIB_LINK_TX_BUFS * SIB_LINK_MAX_DGRAM);
	if (!u->tx_mem || !u->rx.mem) {
		udp_close(&u->link);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < SIB_LINK_TX_BUFS; i++)
		u->free_slots[i] = (uint16_t)(SIB_LINK_TX_BUFS - 1 - i);
	u->nfree = SIB_LINK_TX_BUFS;

	setup_rx(&u->rx);
	u->fd = sib_link_socket_open(addr, netdev, &u->link.local, &u->af);
	if (u->fd < 0) {
		int ret = u->fd;

		u->fd = -1;
		udp_close(&u->link);
		return ret;
	}
	{
		int ret = io->open(&u->tx.io, u->fd, why, why_len);

		if (!ret)
			ret = io->open(&u->rx.io, u->fd, why, why_len);
		if (ret) {
			udp_close(&u->link);
			return ret;
		}
	}
	u->gso = true;
	{
		int one = 1;

		/* Without it (kernels before 5.0) datagrams come one by one. */
		if (setsockopt(u->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)))
			sib_info("UDP_GRO refused here (%s); receiving one datagram per message",
				 strerror(errno));
	}
	u->link.mtu = sib_link_port_mtu(&u->link.local, netdev);
	sib_info("link: UDP %s (%s), active MTU %u", sib_endpoint_str(&u->link.local, s), io->what,
		 u->link.mtu);
	*out = &u->link;
	return 0;
}

int sib_link_udp_open(const char *addr, const char *netdev, struct sib_link **out)
{
	return sib_link_udp_open_io(addr, netdev, &sys_io, out, NULL, 0);
}

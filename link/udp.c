/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP link: one non-blocking socket per port (DESIGN.md section 4),
 * driven with batching system calls so that any thread can use it:
 *   - send: commits are queued and handed to the kernel at flush (or when
 *     SIB_LINK_TX_BATCH are queued) in one sendmmsg; runs of equal-sized
 *     datagrams to one endpoint go as one UDP GSO message (a UDP_SEGMENT
 *     control message), which the kernel splits into datagrams, about 3x
 *     the goodput of one message per datagram (tests/bench/udp_limit.c);
 *   - receive: recvmmsg with UDP_GRO: a GSO burst from a peer arrives as
 *     one message of equal-sized segments (the kernel says the size), so
 *     one pass through the kernel's receive path carries up to 64 KiB;
 *   - the wait fd is the socket itself: readable while datagrams wait;
 *   - two receive contexts, each with its own buffers and lock: a poll
 *     that finds the first one taken (its poller lost the CPU in the
 *     middle of a poll: hca/progress.h, the drain rule) uses the second
 *     rather than wait for that thread to be scheduled again; it first
 *     handles the rest of the batch that poller took off the socket, so
 *     that datagrams keep the socket's order (link.h, the order rule).
 * io_uring (the first version) ran receive work on the thread that armed
 * the receive, so only that thread could take datagrams and every burst
 * woke it; plain recvmmsg lets a thread polling an empty CQ drain the link
 * itself (DESIGN.md section 6) with one system call per batch.
 *
 * The system calls themselves go through struct sib_udp_io (socket.h):
 * plain sendmmsg/recvmmsg here, io_uring in uring.c (SOFTIB_LINK=uring),
 * which keeps all of the above and changes only how the kernel is asked.
 *
 * Packets leave in commit order: one thread sends at a time (tx[0]),
 * and it takes the whole queue when it starts.  A sender that has held
 * tx[0] for SIB_LINK_STUCK_NS has lost the CPU in the middle of a send:
 * the others no longer wait for it but send with tx[1], and its own batch
 * leaves when it runs again, after theirs (link.h).
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
 * SIB_LINK_MAX_DGRAM is dropped as truncated); the second receive context
 * serves only while the first one's poller is off the CPU, with fewer. */
#define RX_BATCH 32
#define RX_BATCH_BESIDE 8
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

	/* A sender's scratch: tx[0] for every flush, tx[1] only while the
	 * holder of tx[0] has had it for SIB_LINK_STUCK_NS (tx_take). */
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
	} tx[2];
	uint64_t send_since; /* when tx[0]'s holder took it (0: free) */
	bool tx_err_logged;

	struct udp_rx {
		pthread_mutex_t lock; /* the receive buffers below */
		unsigned batch;	      /* messages per recvmmsg: RX_BATCH or RX_BATCH_BESIDE */
		uint8_t *mem;
		struct mmsghdr msgs[RX_BATCH];
		struct iovec iov[RX_BATCH];
		struct sockaddr_storage names[RX_BATCH];
		union rx_ctrl ctrl[RX_BATCH];
		unsigned used; /* messages the kernel may have written since the last reset */
		/* The batch taken off the socket, published for every poller
		 * (the order rule, link.h): each message's length (0: dropped)
		 * and datagram size, and pos, the next datagram to claim. */
		struct rx_msg {
			uint32_t len, seg;
			struct sib_endpoint from;
		} meta[RX_BATCH];
		uint64_t gen; /* the owner's: this batch's place among both contexts' */
		uint64_t pos; /* POS_*: read and claimed by any poller */
		/* Pollers of the other context inside this one's batch: while
		 * any is, the owner leaves the buffers alone (rx_batch), since a
		 * datagram one of them has claimed may still be in use. */
		unsigned readers;
		void *io;
	} rx[2];
	/* The read rule: one context at a time takes a batch off the socket
	 * and publishes it (rx_batch), so that batches are ordered by gen as
	 * the socket ordered their datagrams. */
	pthread_mutex_t rx_read;
	uint64_t rx_gen; /* under rx_read: batches taken so far, both contexts */
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
		memset(h, 0, sizeof(*h));
		h->msg_hdr.msg_name = &t->names[m];
		h->msg_hdr.msg_namelen = alen;
		h->msg_hdr.msg_iov = &t->iov[v0];
		h->msg_hdr.msg_iovlen = v - v0;
		if (j - i > 1) {
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

/* Sends message k's datagrams one by one (the kernel refused GSO). */
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
		if (errno == EIO && t->first[k + 1] - t->first[k] > 1) {
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

/*
 * The first sender's scratch, locked; or, once its holder has had it for
 * SIB_LINK_STUCK_NS (a send takes microseconds: that thread lost the CPU
 * in the middle of one), the second, so that this thread's packets leave
 * now rather than when the scheduler runs that one again (link.h).
 */
static struct udp_tx *tx_take(struct udp_link *u)
{
	uint64_t since;
	struct timespec until;

	if (pthread_mutex_trylock(&u->tx[0].lock)) {
		since = __atomic_load_n(&u->send_since, __ATOMIC_RELAXED);
		if (!since)
			since = sib_link_now_ns();
		since += SIB_LINK_STUCK_NS;
		until.tv_sec = (time_t)(since / 1000000000ull);
		until.tv_nsec = (long)(since % 1000000000ull);
		if (pthread_mutex_clocklock(&u->tx[0].lock, CLOCK_MONOTONIC, &until)) {
			pthread_mutex_lock(&u->tx[1].lock);
			return &u->tx[1];
		}
	}
	__atomic_store_n(&u->send_since, sib_link_now_ns(), __ATOMIC_RELAXED);
	return &u->tx[0];
}

static void tx_give(struct udp_link *u, struct udp_tx *t)
{
	if (t == &u->tx[0])
		__atomic_store_n(&u->send_since, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->lock);
}

/* Sends everything queued, in commit order (but for a stuck sender's
 * packets, which leave when it runs again: tx_take). */
static void tx_flush(struct udp_link *u)
{
	struct udp_tx *t = tx_take(u);
	unsigned n;

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
	tx_give(u, t);
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
			tx_flush(u);
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
	if (full)
		tx_flush(u);
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

static int udp_flush(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);

	if (__atomic_load_n(&u->queued, __ATOMIC_RELAXED))
		tx_flush(u);
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

/*
 * A receive context's position: the batch (gen, which changes with every
 * batch, so that a claim on an older one fails), its number of messages,
 * and the next datagram to claim (message k, byte offset off).
 */
static uint64_t pos_make(uint64_t gen, unsigned n, unsigned k, unsigned off)
{
	return gen << 28 | (uint64_t)n << 22 | (uint64_t)k << 16 | off;
}
#define POS_GEN(p) ((p) >> 28)
#define POS_N(p) ((unsigned)((p) >> 22) & 63u)
#define POS_K(p) ((unsigned)((p) >> 16) & 63u)
#define POS_OFF(p) ((unsigned)(p) & 0xffffu)
#define POS_GEN_MASK ((1ull << 36) - 1)

/* Whether batch a was taken after batch b (gens wrap in pos's 36 bits). */
static bool gen_newer(uint64_t a, uint64_t b)
{
	uint64_t d = (a - b) & POS_GEN_MASK;

	return d && d < POS_GEN_MASK / 2;
}

/* One received message, before anyone handles it: its length and datagram
 * size in meta[k] (length 0: the link drops it, counted). */
static void rx_message(struct udp_link *u, struct udp_rx *c, unsigned k)
{
	struct msghdr *mh = &c->msgs[k].msg_hdr;
	struct rx_msg *m = &c->meta[k];
	unsigned len = c->msgs[k].msg_len, seg;

	m->len = 0;
	if (sib_endpoint_from_sockaddr(mh->msg_name, mh->msg_namelen, &m->from)) {
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_MALFORMED], 1);
		return;
	}
	seg = rx_cmsgs(u, mh);
	if (mh->msg_flags & MSG_TRUNC) {
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_TRUNCATED], 1);
		return;
	}
	if (!seg || seg >= len)
		seg = len;
	if (seg > SIB_LINK_MAX_DGRAM) { /* larger than any IB packet */
		sib_link_count(&u->link.counters.drop[SIB_LINK_DROP_RX_TRUNCATED],
			       (len + seg - 1) / seg);
		return;
	}
	sib_link_count(&u->link.counters.rx_packets, (len + seg - 1) / seg);
	sib_link_count(&u->link.counters.rx_bytes, len);
	m->seg = seg;
	m->len = len;
}

/*
 * What is left of c's published batch, datagram by datagram in order,
 * possibly with another poller doing the same (the order rule, link.h):
 * each goes to rx, and counts for the thread whose claim wins it.  What
 * this thread reads of a batch that has moved on since it looked is never
 * used: its claim fails.
 */
static unsigned rx_handle(struct udp_rx *c, sib_link_rx_fn rx, void *arg)
{
	unsigned won = 0;

	for (;;) {
		uint64_t p = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE), next;
		unsigned n = POS_N(p), k = POS_K(p), off = POS_OFF(p), len, seg, l;
		struct sib_link_rx_cur save;
		struct sib_endpoint from;

		if (k >= n)
			return won;
		len = __atomic_load_n(&c->meta[k].len, __ATOMIC_RELAXED);
		seg = __atomic_load_n(&c->meta[k].seg, __ATOMIC_RELAXED);
		if (off >= len || !seg) { /* a dropped message (or a stale look) */
			__atomic_compare_exchange_n(&c->pos, &p, pos_make(POS_GEN(p), n, k + 1, 0),
						    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
			continue;
		}
		memcpy(&from, &c->meta[k].from, sizeof(from));
		l = len - off < seg ? len - off : seg;
		next = off + l < len ? p + l : pos_make(POS_GEN(p), n, k + 1, 0);
		sib_link_rx_begin(&save, &c->pos, p, next);
		rx(arg, (const uint8_t *)c->iov[k].iov_base + off, l, &from);
		if (sib_link_rx_end(&save))
			won++;
	}
}

/* rx_handle on the other context's batch, as a reader its owner does not
 * overwrite (rx_batch), if that batch is older than gen (0: any). */
static unsigned rx_handle_beside(struct udp_rx *c, sib_link_rx_fn rx, void *arg, uint64_t gen)
{
	uint64_t p = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE);
	unsigned n;

	if (POS_K(p) >= POS_N(p) || (gen && gen_newer(POS_GEN(p), gen)))
		return 0; /* nothing left (the usual case, without a store), or newer */
	__atomic_add_fetch(&c->readers, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* before rx_handle reads pos */
	n = rx_handle(c, rx, arg);
	__atomic_sub_fetch(&c->readers, 1, __ATOMIC_RELEASE);
	return n;
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

/* One recvmmsg of up to want messages into c, whose last batch is all
 * claimed, published for any poller (rx_handle); returns how many
 * messages it took. */
static unsigned rx_batch_locked(struct udp_link *u, struct udp_rx *c, unsigned want)
{
	int got;

	/* A poller still reading the last batch claims nothing from here on;
	 * one that is already applying a datagram it claimed still reads its
	 * buffer, so nothing overwrites it this time (this store and the load
	 * after it pair with rx_handle_beside's, in the other order). */
	c->gen = ++u->rx_gen;
	__atomic_store_n(&c->pos, pos_make(c->gen, 0, 0, 0), __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->readers, __ATOMIC_SEQ_CST))
		return 0;
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
	for (int k = 0; k < got; k++)
		rx_message(u, c, (unsigned)k);
	__atomic_store_n(&c->pos, pos_make(c->gen, (unsigned)got, 0, 0), __ATOMIC_RELEASE);
	return (unsigned)got;
}

/*
 * The read rule (rx_read): without it, a poller that lost the CPU between
 * taking datagrams off the socket and publishing them let the poller
 * beside it read and apply later ones first (a UC message whose Last came
 * before its First was lost: ibv_uc_pingpong -g hung under load).  The lock
 * is held for one non-blocking receive; a poller that finds it held waits
 * that long, not for the other's handling of its batch.
 */
static unsigned rx_batch(struct udp_link *u, struct udp_rx *c, unsigned want)
{
	unsigned got;

	pthread_mutex_lock(&u->rx_read);
	got = rx_batch_locked(u, c, want);
	pthread_mutex_unlock(&u->rx_read);
	return got;
}

/* The first receive context, or the second while the first is taken;
 * one of them locked (link.h: a poll never waits for another). */
static struct udp_rx *rx_take(struct udp_link *u)
{
	if (!pthread_mutex_trylock(&u->rx[0].lock))
		return &u->rx[0];
	if (!pthread_mutex_trylock(&u->rx[1].lock))
		return &u->rx[1];
	pthread_mutex_lock(&u->rx[0].lock); /* a third poller: take turns */
	return &u->rx[0];
}

/* The order rule (link.h): a batch the other context's poller took off
 * the socket and has not handled (it lost the CPU in the middle) goes
 * before this poll's own if it is older: before each take, and after it
 * (the other may have taken one just before this one), but not one the
 * other took after it (the read rule orders them by gen). */
static int udp_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct udp_link *u = to_udp(l);
	struct udp_rx *c = rx_take(u), *other = c == &u->rx[0] ? &u->rx[1] : &u->rx[0];
	unsigned n = 0;

	while (n < max) {
		unsigned want = max - n < c->batch ? max - n : c->batch, msgs;

		n += rx_handle_beside(other, rx, arg, 0);
		msgs = rx_batch(u, c, want);
		n += rx_handle_beside(other, rx, arg, c->gen);
		n += rx_handle(c, rx, arg);
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

static void udp_close(struct sib_link *l)
{
	struct udp_link *u = to_udp(l);

	if (u->fd >= 0)
		udp_flush(l);
	for (unsigned i = 0; i < 2; i++) {
		if (u->tx[i].io)
			u->io->close(u->tx[i].io);
		if (u->rx[i].io)
			u->io->close(u->rx[i].io);
	}
	if (u->fd >= 0)
		close(u->fd);
	free(u->tx_mem);
	free(u->rx[0].mem);
	free(u->rx[1].mem);
	pthread_mutex_destroy(&u->q_lock);
	pthread_mutex_destroy(&u->rx_read);
	pthread_mutex_destroy(&u->tx[0].lock);
	pthread_mutex_destroy(&u->tx[1].lock);
	pthread_mutex_destroy(&u->rx[0].lock);
	pthread_mutex_destroy(&u->rx[1].lock);
	free(u);
}

/* The same link whatever does its system calls; only the kind differs. */
#define UDP_OPS(kind_)                                                                             \
	{                                                                                          \
		.kind = kind_, .tx_alloc = udp_tx_alloc, .tx_commit = udp_tx_commit,               \
		.tx_commit_split = udp_tx_commit_split, .tx_abort = udp_tx_abort,                  \
		.flush = udp_flush, .poll = udp_poll, .wait_fd = udp_wait_fd,                      \
		.wait_arm = udp_wait_arm, .close = udp_close,                                      \
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
	for (unsigned k = 0; k < c->batch; k++) {
		struct msghdr *mh = &c->msgs[k].msg_hdr;

		c->iov[k].iov_base = c->mem + (size_t)k * RX_MSG_SIZE;
		c->iov[k].iov_len = RX_MSG_SIZE;
		mh->msg_name = &c->names[k];
		mh->msg_iov = &c->iov[k];
		mh->msg_iovlen = 1;
		mh->msg_control = c->ctrl[k].buf;
	}
	c->used = c->batch;
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
	pthread_mutex_init(&u->rx_read, NULL);
	pthread_mutex_init(&u->tx[0].lock, NULL);
	pthread_mutex_init(&u->tx[1].lock, NULL);
	for (unsigned i = 0; i < 2; i++) {
		pthread_mutex_init(&u->rx[i].lock, NULL);
		u->rx[i].batch = i ? RX_BATCH_BESIDE : RX_BATCH;
		u->rx[i].mem = aligned_alloc(4096, (size_t)u->rx[i].batch * RX_MSG_SIZE);
	}
	u->tx_mem = aligned_alloc(4096, (size_t)SIB_LINK_TX_BUFS * SIB_LINK_MAX_DGRAM);
	if (!u->tx_mem || !u->rx[0].mem || !u->rx[1].mem) {
		udp_close(&u->link);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < SIB_LINK_TX_BUFS; i++)
		u->free_slots[i] = (uint16_t)(SIB_LINK_TX_BUFS - 1 - i);
	u->nfree = SIB_LINK_TX_BUFS;

	setup_rx(&u->rx[0]);
	setup_rx(&u->rx[1]);
	u->fd = sib_link_socket_open(addr, netdev, &u->link.local, &u->af);
	if (u->fd < 0) {
		int ret = u->fd;

		u->fd = -1;
		udp_close(&u->link);
		return ret;
	}
	for (unsigned i = 0; i < 2; i++) {
		int ret = io->open(&u->tx[i].io, u->fd, why, why_len);

		if (!ret)
			ret = io->open(&u->rx[i].io, u->fd, why, why_len);
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

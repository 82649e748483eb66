/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * link/: the emulated wire under a port -- UDP sockets (udp.c), io_uring
 * (uring.c), the in-memory hub (mem.c), fault injection (faults.c) and
 * capture (capture.c) behind one interface (this header).  link/ may use
 * base/ and wire/; the transport above it never sees a socket.
 *
 * The emulated link (docs/architecture.md section 4): what the transport sends packets
 * through and receives them from.  A packet on the link is the IBA packet
 * from the first LRH byte to the last VCRC byte; the UDP link carries one
 * per datagram, or several back to back that one flush sends to one
 * endpoint and UDP GSO cannot carry (udp.c), each as long as its LRH says.
 *
 * The link is an interface, so the transport is testable without sockets:
 *   udp.c      the real thing: one UDP socket, sendmmsg (GSO), recvmmsg
 *   uring.c    udp.c with its system calls through io_uring (SOFTIB_LINK=uring)
 *   socket.c   the socket set-up and MTU both of those share
 *   mem.c      an in-memory hub for unit tests: in order, no threads
 *   faults.c   SOFTIB_FAULTS: drop/dup/reorder/corrupt/delay on send
 *   capture.c  SOFTIB_CAPTURE: every packet sent and received, as pcap,
 *              and those SOFTIB_FAULTS dropped (the dropped op)
 *   sched.c    the port's transmit scheduler: a packet leaves once due
 *              (SOFTIB_RATE)
 * sib_link_open_env() builds the stack a port uses:
 *   transport -> sched -> faults -> capture -> udp
 * so every packet passes the port's transmit scheduler (sched.c), and a
 * capture shows what really went on the wire (corruptions included).
 *
 * Sending, without an extra copy: the caller asks for a buffer, writes the
 * packet into it and commits it.  Commits are queued and handed to the
 * kernel in batches: when the batch is full, and at sib_link_flush().
 *
 *	size_t cap;
 *	uint8_t *buf = sib_link_tx_alloc(link, &cap);
 *	if (!buf) ... count it as a dropped packet ...
 *	len = build the packet in buf[0..cap);
 *	sib_link_tx_commit(link, buf, len, &dst);   (or sib_link_tx_abort)
 *	...
 *	sib_link_flush(link);                        (end of a post, of a poll)
 *
 * A large payload can also stay where it is (the application's registered
 * memory): sib_link_tx_commit_split queues header, payload and trailer as
 * pieces that the socket link hands the kernel as one datagram's iovecs,
 * and releases the caller's hold on the memory once the kernel has copied
 * it.
 *
 * Receiving: sib_link_poll() calls rx() once per packet that arrived, with
 * a pointer into the link's receive buffer, valid only during the call.
 *
 * Sleeping (the progress thread, docs/architecture.md section 6):
 *
 *	for (;;) {
 *		while (sib_link_poll(link, 64, rx, arg) > 0)
 *			;
 *		sib_link_flush(link);
 *		if (sib_link_wait_arm(link) > 0)
 *			continue;
 *		poll({ sib_link_wait_fd(link), POLLIN }, timeout from
 *		     sib_link_next_deadline_ns(link) and the transport's timers);
 *	}
 * sib_link_wait_arm clears the wait fd and then says whether anything is
 * already pending; whatever arrives after it makes the fd readable again,
 * so no wakeup is lost.  Spurious wakeups (another thread polled the
 * datagram first) are possible and harmless.
 *
 * Locking.  Application threads (posts, polls) and the progress thread use
 * one link concurrently (docs/architecture.md says who does what, and the
 * lock order):
 *   - the send side (tx_alloc, tx_commit, tx_abort, flush) keeps one queue
 *     in commit order and one sender at a time: flush hands the whole
 *     queue to the kernel, and a flush that finds another thread sending
 *     returns at once, leaving its packets to that sender, which looks at
 *     the queue again before it lets go.  A buffer between tx_alloc and
 *     tx_commit belongs to the caller alone, and several may be
 *     outstanding per thread (up to SIB_LINK_TX_BUFS in all); tx_alloc
 *     that finds none free waits for the sender.  The one exception: a
 *     sender a fatal signal stopped for good (sib_link_abandoned_by) is
 *     not waited for, the goodbyes are sent in its place;
 *   - poll takes the link's receive side for the whole call: one poller at
 *     a time, each packet handed to rx() in the order the link received
 *     them.  rx() runs on the polling thread and may send (an ACK, a read
 *     response) but must not poll the same link;
 *   - wait_fd, wait_arm, counters and the fields of struct sib_link may be
 *     used from any thread;
 *   - sib_link_close only once nothing else uses the link.
 * The receive side may take the send side's locks (rx() sends); the send
 * side never takes the receive side's.
 */
#ifndef SIB_LINK_LINK_H
#define SIB_LINK_LINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "wire/packet.h"

/* The largest datagram a link carries: any IBA packet (IB_MAX_PACKET) with
 * room to spare.  Larger datagrams are dropped on receive (RX_TRUNCATED). */
#define SIB_LINK_MAX_DGRAM 4352
/* Send buffers per link, and how many commits make a batch. */
#define SIB_LINK_TX_BUFS 256
#define SIB_LINK_TX_BATCH 64

/* ---------------------------------------------------------------- endpoint */

/*
 * Where a port's UDP socket lives: an IPv4 or IPv6 address and a UDP port.
 * 20 bytes with no padding holes, so memcmp and hashing the bytes are
 * correct once the unused address bytes are zero (all functions here keep
 * them zero).  IPv4 uses addr[0..4); IPv4-mapped IPv6 addresses are stored
 * as IPv4.
 */
struct sib_endpoint {
	uint8_t family; /* SIB_AF_INET or SIB_AF_INET6; 0 = none */
	uint8_t reserved;
	uint16_t port; /* host byte order */
	uint8_t addr[16];
};

enum { SIB_AF_INET = 4, SIB_AF_INET6 = 6 };

/* "255.255.255.255:65535", "[ffff:...:ffff]:65535" */
#define SIB_ENDPOINT_STRLEN 56

bool sib_endpoint_equal(const struct sib_endpoint *a, const struct sib_endpoint *b);
uint32_t sib_endpoint_hash(const struct sib_endpoint *ep);
/* Formats into buf (SIB_ENDPOINT_STRLEN bytes) and returns buf. */
const char *sib_endpoint_str(const struct sib_endpoint *ep, char *buf);
/*
 * Parses "1.2.3.4", "1.2.3.4:5000", "::1", "[::1]", "[::1]:5000"; a missing
 * port is default_port.  Returns 0 or -EINVAL.
 */
int sib_endpoint_parse(const char *s, uint16_t default_port, struct sib_endpoint *ep);
/* From a sockaddr_in/in6; returns 0 or -EAFNOSUPPORT. */
int sib_endpoint_from_sockaddr(const struct sockaddr *sa, socklen_t len, struct sib_endpoint *ep);
/* The network interface holding ep's address (getifaddrs); name holds
 * IF_NAMESIZE (16) bytes.  False when no interface has it. */
bool sib_endpoint_ifname(const struct sib_endpoint *ep, char name[16]);
/* To a sockaddr of the given family (AF_INET or AF_INET6; an IPv4 endpoint
 * becomes IPv4-mapped for AF_INET6).  Returns its length, or 0 when the
 * endpoint cannot be expressed in that family. */
socklen_t sib_endpoint_to_sockaddr(const struct sib_endpoint *ep, int af,
				   struct sockaddr_storage *ss);

/* ---------------------------------------------------------------- counters */

/* Why the link itself dropped a datagram (the transport's reasons are
 * enum ib_pkt_err, counted with sib_link_count_pkt_err). */
enum sib_link_drop {
	SIB_LINK_DROP_TX_ERROR,	     /* the kernel refused the send */
	SIB_LINK_DROP_TX_NO_ROUTE,   /* destination not reachable by this link */
	SIB_LINK_DROP_TX_TOO_LONG,   /* longer than the buffer tx_alloc gave */
	SIB_LINK_DROP_TX_NO_BUFFER,  /* tx_alloc had no buffer to give */
	SIB_LINK_DROP_RX_TRUNCATED,  /* datagram larger than SIB_LINK_MAX_DGRAM */
	SIB_LINK_DROP_RX_MALFORMED,  /* receive completion we cannot parse */
	SIB_LINK_DROP_RX_QUEUE_FULL, /* receive queue full: the socket buffer
				      * (as the kernel reports it, with the next
				      * datagram that arrives) or the mem link's */
	SIB_LINK_DROP_COUNT
};

/* What SOFTIB_FAULTS did, one count per packet affected. */
enum sib_fault {
	SIB_FAULT_DROP,
	SIB_FAULT_DUP,
	SIB_FAULT_REORDER,
	SIB_FAULT_CORRUPT,
	SIB_FAULT_DELAY,
	SIB_FAULT_COUNT
};

struct sib_link_counters {
	uint64_t tx_packets, tx_bytes; /* handed to the wire */
	uint64_t rx_packets, rx_bytes; /* taken from the wire */
	uint64_t drop[SIB_LINK_DROP_COUNT];
	uint64_t fault[SIB_FAULT_COUNT];
	uint64_t pkt_err[IB_PKT_ERR_COUNT]; /* the transport's receive checks */
};

const char *sib_link_drop_name(enum sib_link_drop d); /* "tx_error" */
const char *sib_fault_name(enum sib_fault f);	      /* "drop" */

/* ---------------------------------------------------------------- the link */

struct sib_link;

typedef void (*sib_link_rx_fn)(void *arg, const uint8_t *pkt, size_t len,
			       const struct sib_endpoint *from);

/*
 * What a packet whose payload the link does not own (it is sent straight
 * from the application's registered memory) keeps until the kernel has
 * copied it: release(ctx) runs once, after the send, whatever became of
 * the packet.  ctx is the holder's state, copied into the link.
 */
struct sib_link_hold {
	void (*release)(void *ctx);
	uint64_t ctx[8];
};

struct sib_link_ops {
	const char *kind; /* "udp", "mem", "faults", "capture" */
	uint8_t *(*tx_alloc)(struct sib_link *l, size_t *cap);
	void (*tx_commit)(struct sib_link *l, uint8_t *buf, size_t len,
			  const struct sib_endpoint *dst);
	/* NULL: the link wants each packet in one piece (sib_link_tx_commit_split) */
	void (*tx_commit_split)(struct sib_link *l, uint8_t *buf, size_t hdr_len,
				const uint8_t *payload, size_t payload_len, size_t trailer_len,
				const struct sib_endpoint *dst, struct sib_link_hold *hold);
	void (*tx_abort)(struct sib_link *l, uint8_t *buf);
	int (*flush)(struct sib_link *l);
	/* NULL: the same as flush (nothing is ever left to another sender) */
	int (*flush_wait)(struct sib_link *l);
	int (*poll)(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg);
	int (*wait_fd)(struct sib_link *l);
	int (*wait_arm)(struct sib_link *l);
	uint64_t (*next_deadline_ns)(struct sib_link *l); /* NULL: never */
	/* NULL: nothing a thread holds outlives it (sib_link_abandoned_by) */
	void (*abandoned_by)(struct sib_link *l, pthread_t thread);
	/* NULL: ignored.  A layer above dropped pkt on purpose (SOFTIB_FAULTS):
	 * told so that a capture can show what never reached the wire. */
	void (*dropped)(struct sib_link *l, const uint8_t *pkt, size_t len);
	void (*close)(struct sib_link *l);
};

/*
 * The part every link shares.  Implementations embed it first.  Counters
 * are updated with relaxed atomic adds and read with sib_link_counters_get.
 */
struct sib_link {
	const struct sib_link_ops *ops;
	struct sib_link *inner;	    /* the link a decorator wraps; NULL at the bottom */
	struct sib_endpoint local;  /* where peers send to reach this link */
	unsigned mtu;		    /* active IB MTU in bytes: 256, 512, ..., 4096 */
	struct sib_link_counters counters;
};

/*
 * A buffer of *cap (>= IB_MAX_PACKET) bytes for one outgoing packet, or
 * NULL when none can be had (counted as TX_NO_BUFFER): treat that as a
 * packet lost on the wire.  May reap send completions; never sleeps longer
 * than the kernel takes to finish an already submitted send.
 */
static inline uint8_t *sib_link_tx_alloc(struct sib_link *l, size_t *cap)
{
	return l->ops->tx_alloc(l, cap);
}

/* Queues buf[0..len) for dst; submits when a batch is full.  The buffer
 * belongs to the link again afterwards, whatever happens to the packet. */
static inline void sib_link_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
				      const struct sib_endpoint *dst)
{
	l->ops->tx_commit(l, buf, len, dst);
}

/*
 * Queues the packet buf[0..hdr_len) + payload[0..payload_len) +
 * buf[hdr_len..hdr_len + trailer_len) for dst, the payload read where it
 * lies when the packet is sent; hold->release runs after that (or at once
 * if the link joins the pieces now: links without tx_commit_split, such as
 * the fault and capture decorators, which read or change the bytes).
 * buf must have room for the joined packet, as from tx_alloc.
 */
static inline void sib_link_tx_commit_split(struct sib_link *l, uint8_t *buf, size_t hdr_len,
					    const uint8_t *payload, size_t payload_len,
					    size_t trailer_len, const struct sib_endpoint *dst,
					    struct sib_link_hold *hold)
{
	if (l->ops->tx_commit_split) {
		l->ops->tx_commit_split(l, buf, hdr_len, payload, payload_len, trailer_len, dst,
					hold);
		return;
	}
	memmove(buf + hdr_len + payload_len, buf + hdr_len, trailer_len);
	memcpy(buf + hdr_len, payload, payload_len);
	hold->release(hold->ctx);
	l->ops->tx_commit(l, buf, hdr_len + payload_len + trailer_len, dst);
}

/* Gives back a buffer from tx_alloc without sending. */
static inline void sib_link_tx_abort(struct sib_link *l, uint8_t *buf)
{
	l->ops->tx_abort(l, buf);
}

/* pkt[0..len), which the caller was about to send, is dropped on purpose
 * (SOFTIB_FAULTS): l and the links it wraps may record it (capture.c
 * writes it as IB_PCAP_PORT_DROPPED); nothing is sent. */
void sib_link_dropped(struct sib_link *l, const uint8_t *pkt, size_t len);

/* Submits everything queued and releases held packets that are due; a
 * flush that finds another thread sending leaves its packets to it
 * (Locking, above).  Returns 0 or a negative errno (the link is broken). */
static inline int sib_link_flush(struct sib_link *l)
{
	return l->ops->flush(l);
}

/* The same, but it waits for a sender that is inside rather than leave
 * its packets to it: for a thread that must know they left before it goes
 * on (a MAD, a process about to exit). */
static inline int sib_link_flush_wait(struct sib_link *l)
{
	return l->ops->flush_wait ? l->ops->flush_wait(l) : l->ops->flush(l);
}

/* Takes up to max datagrams off the link, delivering each packet to rx
 * unless the link itself drops it (counted); returns how many packets it
 * handed on (0 when none was pending) or a negative errno.  When it returns
 * max or more, more may be pending: call again before sleeping.  (More
 * than max: the socket link takes a peer's UDP GSO burst or a datagram of
 * several packets whole, and delivers all of it.) */
static inline int sib_link_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	return l->ops->poll(l, max, rx, arg);
}

/* A file descriptor that is readable while datagrams may be pending. */
static inline int sib_link_wait_fd(struct sib_link *l)
{
	return l->ops->wait_fd(l);
}

/* Clears the wait fd; returns > 0 when datagrams are already pending (do
 * not sleep), 0 when sleeping on the wait fd is safe. */
static inline int sib_link_wait_arm(struct sib_link *l)
{
	return l->ops->wait_arm(l);
}

/* CLOCK_MONOTONIC time (ns) by which sib_link_flush should be called to
 * release a held packet (SOFTIB_FAULTS delay/reorder), or 0 for none. */
static inline uint64_t sib_link_next_deadline_ns(struct sib_link *l)
{
	return l->ops->next_deadline_ns ? l->ops->next_deadline_ns(l) : 0;
}

/* Closes the link and every link it wraps. */
void sib_link_close(struct sib_link *l);

/*
 * thread will never run again: a fatal signal's handler holds it until the
 * process ends (provider/ucma.c, the goodbyes).  From now on a
 * sib_link_flush_wait that finds thread inside the sender's part sends in
 * its place instead of waiting for it forever.  For l and every link it
 * wraps.
 */
void sib_link_abandoned_by(struct sib_link *l, pthread_t thread);

/* Copies pkt into a link buffer and commits it: for rare packets (MADs)
 * where the extra copy does not matter.  Returns 0 or -ENOBUFS/-EMSGSIZE. */
int sib_link_send(struct sib_link *l, const void *pkt, size_t len, const struct sib_endpoint *dst);

/*
 * Counters of the whole stack: packets and bytes from the bottom link (the
 * wire), drops and faults summed over every layer, pkt_err from the top.
 */
void sib_link_counters_get(const struct sib_link *l, struct sib_link_counters *out);
void sib_link_count_pkt_err(struct sib_link *l, enum ib_pkt_err err);

/* For implementations. */
static inline void sib_link_count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}
uint64_t sib_link_now_ns(void); /* CLOCK_MONOTONIC */

/* ---------------------------------------------------------------- opening */

/*
 * The UDP link (udp.c).  addr: "ADDR[:PORT]" to bind (NULL: netdev's
 * first IPv4 address, or 127.0.0.1 when netdev is NULL too); port 0 or none
 * is ephemeral.  Returns 0 or a negative errno after a log line saying what
 * failed and which knob to change.
 */
int sib_link_udp_open(const char *addr, const char *netdev, struct sib_link **out);

/*
 * The same UDP link with its system calls made as io_uring requests
 * (uring.c): chains of SENDMSG and RECVMSG that complete on the calling
 * thread.  Same arguments and errors, and -EOPNOTSUPP (after an error
 * line saying why) when io_uring cannot be set up here: disabled by sysctl
 * kernel.io_uring_disabled or a seccomp profile, or an older kernel
 * without what the link uses.
 */
int sib_link_uring_open(const char *addr, const char *netdev, struct sib_link **out);

/* The largest IB MTU (256..4096) whose biggest packet fits in one UDP
 * datagram over an interface MTU of if_mtu bytes (IPv6 when ipv6). */
unsigned sib_link_ib_mtu_for(unsigned if_mtu, bool ipv6);

/*
 * In-memory links (mem.c).  A hub connects any number of links; each
 * gets the endpoint 192.0.2.N:4791 (TEST-NET-1), N = 1, 2, ... in order of
 * opening.  A packet committed on one link is queued at the link whose
 * endpoint is its destination (dropped as TX_NO_ROUTE when none is) and
 * delivered by that link's poll, in commit order.  Deterministic; safe with
 * threads, but needs none.
 */
struct sib_mem_hub;
struct sib_mem_hub *sib_mem_hub_new(void);
void sib_mem_hub_free(struct sib_mem_hub *hub); /* after closing its links */
int sib_link_mem_open(struct sib_mem_hub *hub, unsigned mtu, struct sib_link **out);

/*
 * Decorators wrap inner and close it when they are closed; when wrapping
 * fails, inner is still the caller's.
 *
 * SOFTIB_FAULTS (faults.c): faults applied to the packets sent through
 * the returned link.
 */
struct sib_fault_cfg {
	double rate[SIB_FAULT_COUNT]; /* probability per packet, 0..1 */
	uint64_t delay_ns;	      /* how long a delayed packet is held */
	uint64_t reorder_ns;	      /* longest a reordered packet waits for a successor */
	uint64_t seed;
	uint64_t stream; /* mixed into the seed: one stream per link */
	uint64_t drop_nth; /* also drop the Nth packet to a QP other than 0 and 1
			    * (1 = the first); 0: none */
};
/* Parses "drop=0.02,dup=0.01,reorder=0.02,corrupt=0.01,delay=0.01:200us,seed=42"
 * (and drop_nth=N).
 * Returns 0, or -EINVAL after a log line naming the offending part. */
int sib_fault_cfg_parse(const char *spec, struct sib_fault_cfg *cfg);
int sib_link_faults_wrap(struct sib_link *inner, const struct sib_fault_cfg *cfg,
			 struct sib_link **out);

/*
 * SOFTIB_CAPTURE (capture.c): records every packet sent and received
 * through the returned link into the pcap file path (created or truncated).
 * Safe with several threads.  Returns 0 or a negative errno with a log line.
 */
int sib_link_capture_wrap(struct sib_link *inner, const char *path, struct sib_link **out);

/*
 * The port's transmit scheduler (sched.c; docs/architecture.md, the
 * transmit rule): every packet passes it in commit order and leaves for
 * inner once due; rate_bps 0: every packet is due at once.  Held packets
 * leave at a flush at or after their due time (sib_link_next_deadline_ns
 * says when).
 */
int sib_link_sched_wrap(struct sib_link *inner, uint64_t rate_bps, struct sib_link **out);
/* SOFTIB_RATE: bits per second, with k, M or G ("10G").  0 or -EINVAL
 * after a line saying what it wants. */
int sib_link_rate_parse(const char *s, uint64_t *rate_bps);

/*
 * The stack a port uses, from the environment: SOFTIB_LINK, SOFTIB_ADDR,
 * SOFTIB_NETDEV, SOFTIB_CAPTURE, SOFTIB_FAULTS, SOFTIB_RATE (see their
 * pages through softib(7)'s ENVIRONMENT).  On failure nothing is left open.
 */
int sib_link_open_env(struct sib_link **out);

#endif

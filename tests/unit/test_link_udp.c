/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP link over loopback: two links in one process, 127.0.0.1 only.
 * The whole suite runs once per backend (socket, uring); each test's name
 * starts with its backend's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link/link.h"
#include "base/log.h"

#include "skip.h"

/* The backend under test. */
struct backend {
	const char *name; /* SOFTIB_LINK */
	const char *kind; /* its ops->kind */
	int (*open)(const char *addr, const char *netdev, struct sib_link **out);
};

static const struct backend backends[] = {
	{ "socket", "udp", sib_link_udp_open },
	{ "uring", "udp-uring", sib_link_uring_open },
};
static const struct backend *be;

#define MIN_LEN 26
#define MAX_LEN 4158
#define PACKETS 3000 /* per direction */
#define BURST 16     /* committed before waiting: well inside the socket buffers */

/* 4n + 2 bytes, as every IBA packet (LRH to ICRC in words, then the VCRC). */
static size_t len_of(uint32_t seq)
{
	return MIN_LEN + 4 * ((seq * 2654435761u) % ((MAX_LEN - MIN_LEN) / 4 + 1));
}

static uint8_t byte_of(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + (i >> 8));
}

/* What the link reads of a packet: LRH.PktLen in bytes 4 and 5, where the
 * UDP link cuts a datagram that holds several packets.  Test packets carry
 * their length there, the rest is theirs. */
static void put_len(uint8_t *buf, size_t len)
{
	buf[4] = (uint8_t)(((len - 2) / 4) >> 8);
	buf[5] = (uint8_t)((len - 2) / 4);
}

static uint8_t pkt_byte(uint32_t seq, size_t len, size_t i)
{
	uint8_t lrh[6];

	if (i != 4 && i != 5)
		return byte_of(seq, i);
	put_len(lrh, len);
	return lrh[i];
}

struct got {
	struct sib_link *self;
	unsigned n;
	unsigned bad;	    /* wrong length or wrong bytes */
	uint64_t bytes;
	uint32_t next_seq;  /* datagrams on loopback stay in order */
	struct sib_endpoint from;
	size_t last_len;
};

static void check_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	uint32_t seq;

	g->n++;
	g->bytes += len;
	g->from = *from;
	g->last_len = len;
	if (len < 4) {
		g->bad++;
		return;
	}
	memcpy(&seq, pkt, 4);
	if (seq != g->next_seq++ || len != len_of(seq)) {
		g->bad++;
		return;
	}
	for (size_t i = 4; i < len; i++)
		if (pkt[i] != pkt_byte(seq, len, i)) {
			g->bad++;
			return;
		}
}

static void send_one(struct sib_link *l, uint32_t seq, const struct sib_endpoint *dst)
{
	size_t cap, len = len_of(seq);
	uint8_t *buf = sib_link_tx_alloc(l, &cap);

	assert_non_null(buf);
	assert_true(cap >= len);
	memcpy(buf, &seq, 4);
	for (size_t i = 4; i < len; i++)
		buf[i] = pkt_byte(seq, len, i);
	sib_link_tx_commit(l, buf, len, dst);
}

/* Polls until g has `want` datagrams, sleeping on the wait fd between polls
 * as the progress thread will.  Bounded by a count of sleeps, not a time. */
static void receive_until(struct sib_link *l, struct got *g, unsigned want)
{
	for (unsigned sleeps = 0; g->n < want && sleeps < 200;) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(l), .events = POLLIN };

		if (sib_link_poll(l, 64, check_rx, g) > 0)
			continue;
		if (sib_link_wait_arm(l) > 0)
			continue;
		poll(&pfd, 1, 100);
		sleeps++;
	}
}

struct pair {
	struct sib_link *a, *b;
};

static int pair_setup(void **state)
{
	static struct pair p;

	assert_int_equal(be->open("127.0.0.1", NULL, &p.a), 0);
	assert_int_equal(be->open(NULL, NULL, &p.b), 0);
	*state = &p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	sib_link_close(p->a);
	sib_link_close(p->b);
	return 0;
}

static void local_endpoint_is_loopback_with_an_ephemeral_port(void **state)
{
	struct pair *p = *state;
	struct sib_endpoint lo;
	char s[SIB_ENDPOINT_STRLEN];

	assert_int_equal(sib_endpoint_parse("127.0.0.1", 0, &lo), 0);
	assert_int_equal(p->a->local.family, SIB_AF_INET);
	assert_memory_equal(p->a->local.addr, lo.addr, 16);
	assert_int_not_equal(p->a->local.port, 0);
	assert_int_not_equal(p->a->local.port, p->b->local.port);
	assert_memory_equal(p->b->local.addr, lo.addr, 16);
	sib_endpoint_str(&p->a->local, s);
	assert_int_equal(strncmp(s, "127.0.0.1:", 10), 0);
}

static void every_byte_arrives_in_both_directions_and_counters_count(void **state)
{
	struct pair *p = *state;
	struct got ga = { .self = p->a }, gb = { .self = p->b };
	struct sib_link_counters ca, cb;
	uint64_t sent_bytes = 0;

	for (uint32_t seq = 0; seq < PACKETS; seq += BURST) {
		for (uint32_t k = seq; k < seq + BURST && k < PACKETS; k++) {
			send_one(p->a, k, &p->b->local);
			send_one(p->b, k, &p->a->local);
			sent_bytes += len_of(k);
		}
		assert_int_equal(sib_link_flush(p->a), 0);
		assert_int_equal(sib_link_flush(p->b), 0);
		receive_until(p->b, &gb, seq + BURST < PACKETS ? seq + BURST : PACKETS);
		receive_until(p->a, &ga, seq + BURST < PACKETS ? seq + BURST : PACKETS);
	}
	assert_int_equal(gb.n, PACKETS);
	assert_int_equal(ga.n, PACKETS);
	assert_int_equal(gb.bad, 0);
	assert_int_equal(ga.bad, 0);
	assert_int_equal(gb.bytes, sent_bytes);
	assert_true(sib_endpoint_equal(&gb.from, &p->a->local));
	assert_true(sib_endpoint_equal(&ga.from, &p->b->local));

	sib_link_flush(p->a);
	sib_link_flush(p->b);
	sib_link_counters_get(p->a, &ca);
	sib_link_counters_get(p->b, &cb);
	assert_int_equal(ca.tx_packets, PACKETS);
	assert_int_equal(ca.tx_bytes, sent_bytes);
	assert_int_equal(cb.rx_packets, PACKETS);
	assert_int_equal(cb.rx_bytes, sent_bytes);
	assert_int_equal(cb.tx_packets, PACKETS);
	assert_int_equal(ca.rx_packets, PACKETS);
	for (unsigned i = 0; i < SIB_LINK_DROP_COUNT; i++) {
		assert_int_equal(ca.drop[i], 0);
		assert_int_equal(cb.drop[i], 0);
	}
	print_message("    %llu packets, %llu bytes each way\n",
		      (unsigned long long)ca.tx_packets, (unsigned long long)ca.tx_bytes);
}

static void more_commits_than_buffers_wait_for_completions(void **state)
{
	struct pair *p = *state;
	struct got gb = { .self = p->b };

	/* 2.5x the send buffers without a flush: batches go out on their own
	 * and tx_alloc reuses completed buffers. */
	for (uint32_t seq = 0; seq < SIB_LINK_TX_BUFS * 5 / 2; seq++) {
		send_one(p->a, seq, &p->b->local);
		if (seq % BURST == BURST - 1)
			receive_until(p->b, &gb, 0); /* only drains what is there */
		while (sib_link_poll(p->b, 64, check_rx, &gb) > 0)
			;
	}
	sib_link_flush(p->a);
	receive_until(p->b, &gb, SIB_LINK_TX_BUFS * 5 / 2);
	assert_int_equal(gb.bad, 0);
	assert_int_equal(gb.n, SIB_LINK_TX_BUFS * 5 / 2);
}

/* Which of the first 32 sequence numbers arrived, intact. */
static void seen_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	uint32_t *seen = arg, seq;

	(void)from;
	if (len < 4)
		return;
	memcpy(&seq, pkt, 4);
	if (seq < 32 && len == len_of(seq) && pkt[len - 1] == byte_of(seq, len - 1))
		*seen |= 1u << seq;
}

/*
 * A datagram the kernel refuses in the middle of a batch (IPv4 broadcast
 * without SO_BROADCAST: EACCES) is counted as tx_error, once, and the
 * batch's datagrams after it still go: the socket link's sendmmsg stops
 * at the refusal, the io_uring link's chain cancels the rest of its
 * requests (-ECANCELED), and both send them again from there.
 */
static void a_refused_datagram_mid_batch_is_counted_and_the_rest_still_go(void **state)
{
	struct pair *p = *state;
	struct sib_endpoint bcast;
	struct sib_link_counters ca;
	uint32_t seen = 0;
	char line[512] = "";

	assert_int_equal(sib_endpoint_parse("255.255.255.255", p->b->local.port, &bcast), 0);
	sib_log_capture(line, sizeof(line));
	for (uint32_t seq = 0; seq < 6; seq++)
		send_one(p->a, seq, seq == 1 ? &bcast : &p->b->local);
	assert_int_equal(sib_link_flush(p->a), 0);
	for (unsigned sleeps = 0; seen != 0x3d && sleeps < 200; sleeps++) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };

		if (sib_link_poll(p->b, 64, seen_rx, &seen) > 0 || sib_link_wait_arm(p->b) > 0)
			continue;
		poll(&pfd, 1, 100);
	}
	sib_log_capture(NULL, 0);
	assert_non_null(strstr(line, "UDP send failed: Permission denied"));
	assert_int_equal(seen, 0x3d); /* 0, 2, 3, 4, 5 */
	sib_link_counters_get(p->a, &ca);
	assert_int_equal(ca.drop[SIB_LINK_DROP_TX_ERROR], 1);
	assert_int_equal(ca.tx_packets, 5);
}

/* Two application threads post while a progress thread polls and sleeps on
 * the wait fd: the locking that link.h documents. */
#define THREAD_PACKETS 2000
#define WINDOW 32 /* a sender waits while this many of its packets are unreceived */

struct threaded {
	struct sib_link *a, *b;
	unsigned received[2]; /* per sender, by the poller */
	unsigned bad;
	unsigned no_buffer; /* tx_alloc gave NULL */
	bool stop;
};

struct sender_arg {
	struct threaded *t;
	uint32_t id;
};

static void threaded_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct threaded *t = arg;
	uint32_t id, seq;

	(void)from;
	if (len != 66) {
		t->bad++;
		return;
	}
	memcpy(&id, pkt, 4);
	memcpy(&seq, pkt + 8, 4);
	if (id > 1 || seq != t->received[id] || pkt[65] != (uint8_t)(seq ^ id)) {
		t->bad++;
		return;
	}
	__atomic_store_n(&t->received[id], seq + 1, __ATOMIC_RELEASE);
}

static void *sender(void *p)
{
	struct sender_arg *s = p;
	struct threaded *t = s->t;

	for (uint32_t seq = 0; seq < THREAD_PACKETS; seq++) {
		size_t cap;
		uint8_t *buf;

		while (seq - __atomic_load_n(&t->received[s->id], __ATOMIC_ACQUIRE) >= WINDOW)
			sched_yield();
		buf = sib_link_tx_alloc(t->a, &cap);
		if (!buf) { /* cmocka asserts belong to the main thread */
			__atomic_fetch_add(&t->no_buffer, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&t->received[s->id], THREAD_PACKETS, __ATOMIC_RELEASE);
			return NULL;
		}
		memset(buf, 0, 66);
		memcpy(buf, &s->id, 4);
		put_len(buf, 66);
		memcpy(buf + 8, &seq, 4);
		buf[65] = (uint8_t)(seq ^ s->id);
		sib_link_tx_commit(t->a, buf, 66, &t->b->local);
		if (seq % 8 == 7)
			sib_link_flush(t->a);
	}
	sib_link_flush(t->a);
	return NULL;
}

static void *progress(void *p)
{
	struct threaded *t = p;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(t->b), .events = POLLIN };

		while (sib_link_poll(t->b, 64, threaded_rx, t) > 0)
			;
		if (sib_link_wait_arm(t->b) > 0)
			continue;
		poll(&pfd, 1, 20); /* the timeout only lets the loop see stop */
	}
	return NULL;
}

static void concurrent_senders_and_a_progress_thread_lose_nothing(void **state)
{
	struct pair *p = *state;
	struct threaded t = { .a = p->a, .b = p->b };
	struct sender_arg s0 = { &t, 0 }, s1 = { &t, 1 };
	pthread_t th0, th1, thp;

	assert_int_equal(pthread_create(&thp, NULL, progress, &t), 0);
	assert_int_equal(pthread_create(&th0, NULL, sender, &s0), 0);
	assert_int_equal(pthread_create(&th1, NULL, sender, &s1), 0);
	pthread_join(th0, NULL);
	pthread_join(th1, NULL);
	/* The last window may still be on its way to the progress thread. */
	for (unsigned i = 0; i < 10000; i++) {
		if (__atomic_load_n(&t.received[0], __ATOMIC_ACQUIRE) == THREAD_PACKETS &&
		    __atomic_load_n(&t.received[1], __ATOMIC_ACQUIRE) == THREAD_PACKETS)
			break;
		usleep(1000);
	}
	__atomic_store_n(&t.stop, true, __ATOMIC_RELEASE);
	pthread_join(thp, NULL);
	assert_int_equal(t.no_buffer, 0);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.received[0], THREAD_PACKETS);
	assert_int_equal(t.received[1], THREAD_PACKETS);
}

static void holding_every_buffer_gives_null_not_a_hang(void **state)
{
	struct pair *p = *state;
	uint8_t *held[SIB_LINK_TX_BUFS];
	struct sib_link_counters c;
	size_t cap;

	for (unsigned i = 0; i < SIB_LINK_TX_BUFS; i++) {
		held[i] = sib_link_tx_alloc(p->a, &cap);
		assert_non_null(held[i]);
	}
	assert_null(sib_link_tx_alloc(p->a, &cap));
	sib_link_counters_get(p->a, &c);
	assert_int_equal(c.drop[SIB_LINK_DROP_TX_NO_BUFFER], 1);
	for (unsigned i = 0; i < SIB_LINK_TX_BUFS; i++)
		sib_link_tx_abort(p->a, held[i]);
	assert_non_null(held[0] = sib_link_tx_alloc(p->a, &cap));
	sib_link_tx_abort(p->a, held[0]);
}

static void wait_fd_becomes_readable_when_a_datagram_arrives(void **state)
{
	struct pair *p = *state;
	struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };
	struct got gb = { .self = p->b };

	while (sib_link_poll(p->b, 64, check_rx, &gb) > 0)
		;
	assert_int_equal(sib_link_wait_arm(p->b), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);

	send_one(p->a, 0, &p->b->local);
	sib_link_flush(p->a);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_true(pfd.revents & POLLIN);
	assert_int_equal(sib_link_poll(p->b, 64, check_rx, &gb), 1);
	assert_int_equal(gb.bad, 0);
}

static void oversized_datagram_is_dropped_as_truncated(void **state)
{
	struct pair *p = *state;
	struct got gb = { .self = p->b };
	struct sockaddr_storage ss;
	struct sib_link_counters c;
	static uint8_t big[SIB_LINK_MAX_DGRAM + 100];
	socklen_t alen = sib_endpoint_to_sockaddr(&p->b->local, AF_INET, &ss);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(sendto(fd, big, sizeof(big), 0, (struct sockaddr *)&ss, alen),
			 (ssize_t)sizeof(big));
	assert_int_equal(sendto(fd, big, 3, 0, (struct sockaddr *)&ss, alen), 3);
	close(fd);
	receive_until(p->b, &gb, 1);
	assert_int_equal(gb.n, 1); /* only the small one reaches the callback */
	assert_int_equal(gb.last_len, 3);
	sib_link_counters_get(p->b, &c);
	assert_int_equal(c.drop[SIB_LINK_DROP_RX_TRUNCATED], 1);
}

/* A run of equal-sized datagrams to one peer leaves as one UDP GSO message
 * and, on the socket link, arrives as one UDP_GRO message: one poll asked
 * for one message hands over several datagrams, each split back out at its
 * own boundary with its own bytes. */
struct gro_got {
	unsigned n, bad;
};

static void gro_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct gro_got *g = arg;
	uint32_t seq;

	(void)from;
	if (len != 3998) {
		g->bad++;
		return;
	}
	memcpy(&seq, pkt, 4);
	if (seq != g->n)
		g->bad++;
	for (size_t i = 4; i < len; i++)
		if (pkt[i] != pkt_byte(seq, len, i)) {
			g->bad++;
			break;
		}
	g->n++;
}

static void gso_burst_arrives_whole_and_is_split_into_its_datagrams(void **state)
{
	struct pair *p = *state;
	struct gro_got g = { 0 };
	unsigned first = 0;
	const unsigned n = 40;

	for (uint32_t seq = 0; seq < n; seq++) {
		size_t cap;
		uint8_t *buf = sib_link_tx_alloc(p->a, &cap);

		assert_non_null(buf);
		memcpy(buf, &seq, 4);
		for (size_t i = 4; i < 3998; i++)
			buf[i] = pkt_byte(seq, 3998, i);
		sib_link_tx_commit(p->a, buf, 3998, &p->b->local);
	}
	sib_link_flush(p->a);
	for (unsigned sleeps = 0; g.n < n && sleeps < 200;) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };
		int got = sib_link_poll(p->b, 1, gro_rx, &g);

		if (got > 0) {
			if (!first)
				first = (unsigned)got;
			continue;
		}
		poll(&pfd, 1, 100);
		sleeps++;
	}
	assert_int_equal(g.n, n);
	assert_int_equal(g.bad, 0);
	print_message("    the first message carried %u datagrams\n", first);
	assert_true(first > 1);
}

static unsigned released;

static void count_release(void *ctx)
{
	(void)ctx;
	released++;
}

/*
 * Packets whose payload stays where it lies (tx_commit_split: a header in
 * the link's buffer, the payload elsewhere, the trailer after the header):
 * each arrives as the three pieces joined, a burst of them still goes as
 * GSO, and each hold is released exactly once, after the send (at once on
 * a link that joins the pieces itself).
 */
static void split_packets_arrive_whole_and_are_released_once_sent(void **state)
{
	enum { N = 12, HDR = 24, PAY = 3966, TRAIL = 8 }; /* 3998 bytes, as gro_rx wants */
	static uint8_t payloads[N][PAY];
	struct pair *p = *state;
	struct gro_got g = { 0 };
	bool joins = p->a->ops->tx_commit_split == NULL;

	released = 0;
	for (uint32_t seq = 0; seq < N; seq++) {
		struct sib_link_hold hold = { .release = count_release };
		size_t cap;
		uint8_t *buf = sib_link_tx_alloc(p->a, &cap);

		assert_non_null(buf);
		memcpy(buf, &seq, 4);
		for (size_t i = 4; i < HDR; i++)
			buf[i] = pkt_byte(seq, HDR + PAY + TRAIL, i);
		for (size_t i = 0; i < PAY; i++)
			payloads[seq][i] = byte_of(seq, HDR + i);
		for (size_t i = 0; i < TRAIL; i++)
			buf[HDR + i] = byte_of(seq, HDR + PAY + i);
		sib_link_tx_commit_split(p->a, buf, HDR, payloads[seq], PAY, TRAIL, &p->b->local,
					 &hold);
	}
	assert_int_equal(released, joins ? N : 0);
	sib_link_flush(p->a);
	assert_int_equal(released, N);
	for (unsigned sleeps = 0; g.n < N && sleeps < 200;) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };

		if (sib_link_poll(p->b, 16, gro_rx, &g) > 0)
			continue;
		poll(&pfd, 1, 100);
		sleeps++;
	}
	assert_int_equal(g.n, N);
	assert_int_equal(g.bad, 0);
}

/* Counts datagrams; the one with seq 0 is the marker sent last. */
static unsigned marker_seen;

static void count_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	uint32_t seq;

	(void)from;
	(*(unsigned *)arg)++;
	if (len < 4)
		return;
	memcpy(&seq, pkt, 4);
	if (seq == 0)
		marker_seen++;
}

static void socket_overflow_is_counted_as_rx_queue_full(void **state)
{
	struct pair *p = *state;
	struct sib_link_counters c;
	const unsigned n = 30000; /* the socket buffers are 16 MiB */
	unsigned got = 0;

	/* Far more than the receive buffers and the socket buffer hold,
	 * with nobody polling b. */
	for (uint32_t seq = 0; seq < n; seq++)
		send_one(p->a, seq % 64 + 1000, &p->b->local);
	sib_link_flush(p->a);
	for (unsigned quiet = 0; quiet < 3;) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };

		if (sib_link_poll(p->b, 64, count_rx, &got) > 0 || sib_link_wait_arm(p->b) > 0) {
			quiet = 0;
			continue;
		}
		quiet += poll(&pfd, 1, 50) == 0;
	}
	/* The kernel reports its drops with the next datagram it queues. */
	send_one(p->a, 0, &p->b->local);
	sib_link_flush(p->a);
	marker_seen = 0;
	for (unsigned sleeps = 0; !marker_seen && sleeps < 100; sleeps++) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };

		while (sib_link_poll(p->b, 64, count_rx, &got) > 0)
			;
		if (!marker_seen && !sib_link_wait_arm(p->b))
			poll(&pfd, 1, 100);
	}
	assert_int_equal(marker_seen, 1);
	sib_link_counters_get(p->b, &c);
	print_message("    %u received, %llu dropped by the full socket buffer\n", got,
		      (unsigned long long)c.drop[SIB_LINK_DROP_RX_QUEUE_FULL]);
	assert_true(c.drop[SIB_LINK_DROP_RX_QUEUE_FULL] > 0);
	/* The socket takes a GSO burst whole (UDP_GRO), and the kernel counts
	 * a burst it drops as one: the drops are a lower bound. */
	assert_true(got <= n);
	assert_true(got + c.drop[SIB_LINK_DROP_RX_QUEUE_FULL] <= n + 1);
	assert_int_equal(c.rx_packets, got);
}

static void mtu_on_loopback_is_4096(void **state)
{
	struct pair *p = *state;

	assert_int_equal(p->a->mtu, 4096);
	assert_int_equal(p->b->mtu, 4096);
}

static void ib_mtu_is_the_largest_whose_packet_fits_the_interface(void **state)
{
	(void)state;
	assert_int_equal(sib_link_ib_mtu_for(65536, false), 4096);
	assert_int_equal(sib_link_ib_mtu_for(9000, false), 4096);
	assert_int_equal(sib_link_ib_mtu_for(4096 + 28 + IB_MAX_PACKET - IB_MAX_MTU, false), 4096);
	assert_int_equal(sib_link_ib_mtu_for(4096 + 28 + IB_MAX_PACKET - IB_MAX_MTU - 1, false),
			 2048);
	assert_int_equal(sib_link_ib_mtu_for(4096 + 28 + IB_MAX_PACKET - IB_MAX_MTU, true), 2048);
	assert_int_equal(sib_link_ib_mtu_for(1500, false), 1024);
	assert_int_equal(sib_link_ib_mtu_for(1280, true), 1024);
	assert_int_equal(sib_link_ib_mtu_for(576, false), 256);
	assert_int_equal(sib_link_ib_mtu_for(68, false), 256);
}

static void bad_softib_addr_fails_with_a_line_naming_the_knob(void **state)
{
	char line[512];
	struct sib_link *l = (struct sib_link *)1;

	(void)state;
	sib_log_capture(line, sizeof(line));
	assert_int_equal(be->open("300.1.2.3", NULL, &l), -EINVAL);
	assert_null(l);
	assert_non_null(strstr(line, "SOFTIB_ADDR=300.1.2.3"));

	/* A well-formed address this host does not have (TEST-NET-1). */
	assert_int_equal(be->open("192.0.2.1", NULL, &l), -EADDRNOTAVAIL);
	assert_non_null(strstr(line, "cannot bind"));
	assert_non_null(strstr(line, "SOFTIB_ADDR"));

	setenv("SOFTIB_LINK", be->name, 1);
	setenv("SOFTIB_ADDR", "not-an-address", 1);
	assert_int_equal(sib_link_open_env(&l), -EINVAL);
	assert_null(l);
	unsetenv("SOFTIB_ADDR");

	setenv("SOFTIB_NETDEV", "nosuchdev0", 1);
	assert_int_equal(sib_link_open_env(&l), -ENODEV);
	assert_non_null(strstr(line, "SOFTIB_NETDEV=nosuchdev0"));
	unsetenv("SOFTIB_NETDEV");
	unsetenv("SOFTIB_LINK");
	sib_log_capture(NULL, 0);
}

static void softib_netdev_lo_binds_its_ipv4_address(void **state)
{
	struct sib_link *l;
	char s[SIB_ENDPOINT_STRLEN];

	(void)state;
	assert_int_equal(be->open(NULL, "lo", &l), 0);
	sib_endpoint_str(&l->local, s);
	assert_int_equal(strncmp(s, "127.0.0.1:", 10), 0);
	assert_int_equal(l->mtu, 4096);
	sib_link_close(l);
}

static void ipv6_loopback_link_exchanges_datagrams(void **state)
{
	struct sib_link *a, *b;
	struct got gb = { 0 };
	int ret;

	(void)state;
	ret = be->open("[::1]:0", NULL, &a);
	if (ret == -EADDRNOTAVAIL || ret == -EAFNOSUPPORT)
		sib_skip("no IPv6 loopback here (a link on [::1]: %s)", strerror(-ret));
	assert_int_equal(ret, 0);
	assert_int_equal(be->open("::1", NULL, &b), 0);
	gb.self = b;
	assert_int_equal(a->local.family, SIB_AF_INET6);
	for (uint32_t seq = 0; seq < 8; seq++)
		send_one(a, seq, &b->local);
	sib_link_flush(a);
	receive_until(b, &gb, 8);
	assert_int_equal(gb.n, 8);
	assert_int_equal(gb.bad, 0);
	assert_true(sib_endpoint_equal(&gb.from, &a->local));
	sib_link_close(a);
	sib_link_close(b);
}

static void env_stack_with_faults_and_capture_still_delivers(void **state)
{
	char path[] = "/tmp/softib-link-test-XXXXXX";
	struct sib_link *a, *b;
	struct got gb = { 0 };
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	setenv("SOFTIB_CAPTURE", path, 1);
	setenv("SOFTIB_FAULTS", "drop=0,seed=3", 1);
	setenv("SOFTIB_LINK", be->name, 1);
	assert_int_equal(sib_link_open_env(&a), 0);
	unsetenv("SOFTIB_CAPTURE");
	unsetenv("SOFTIB_FAULTS");
	assert_int_equal(sib_link_open_env(&b), 0);
	unsetenv("SOFTIB_LINK");
	gb.self = b;
	/* Every port's packets pass its transmit scheduler first. */
	assert_string_equal(a->ops->kind, "sched");
	assert_string_equal(a->inner->ops->kind, "faults");
	assert_string_equal(a->inner->inner->ops->kind, "capture");
	assert_string_equal(a->inner->inner->inner->ops->kind, be->kind);
	assert_string_equal(b->ops->kind, "sched");
	assert_string_equal(b->inner->ops->kind, be->kind);
	assert_true(sib_endpoint_equal(&a->local, &a->inner->inner->inner->local));
	for (uint32_t seq = 0; seq < 8; seq++)
		send_one(a, seq, &b->local);
	sib_link_flush(a);
	receive_until(b, &gb, 8);
	assert_int_equal(gb.n, 8);
	assert_int_equal(gb.bad, 0);
	sib_link_close(a);
	sib_link_close(b);
	unlink(path);
}

/*
 * In a child whose seccomp filter fails io_uring_setup with EPERM (as
 * Docker's default profile does): asking for uring gets the socket link and
 * one warning; the uring backend alone says -EOPNOTSUPP.  Exits 0 when so.
 */
static int child_without_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sib_link *l;
	char line[512];

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 77;
	sib_log_capture(line, sizeof(line));
	if (sib_link_uring_open(NULL, NULL, &l) != -EOPNOTSUPP || l ||
	    !strstr(line, "io_uring is unavailable here (io_uring_setup: Operation not permitted)"))
		return 1;
	setenv("SOFTIB_LINK", "uring", 1);
	line[0] = 0;
	if (sib_link_open_env(&l) || strcmp(l->inner->ops->kind, "udp") ||
	    !strstr(line, "SOFTIB_LINK=uring: io_uring is unavailable here"))
		return 2;
	sib_link_close(l);
	line[0] = 0; /* the second link says nothing more */
	if (sib_link_open_env(&l) || strcmp(l->inner->ops->kind, "udp") || line[0])
		return 3;
	sib_link_close(l);
	return 0;
}

static void without_io_uring_softib_link_uring_falls_back_to_sockets(void **state)
{
	pid_t pid;
	int status;

	(void)state;
#if !defined(__x86_64__)
	sib_skip("the seccomp filter knows x86-64 system call numbers only");
#endif
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_without_io_uring());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		sib_skip("this process may not install a seccomp filter (prctl refused)");
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void unknown_softib_link_fails_with_a_line_naming_the_knob(void **state)
{
	char line[512];
	struct sib_link *l = (struct sib_link *)1;

	(void)state;
	sib_log_capture(line, sizeof(line));
	setenv("SOFTIB_LINK", "tcp", 1);
	assert_int_equal(sib_link_open_env(&l), -EINVAL);
	assert_null(l);
	assert_non_null(strstr(line, "SOFTIB_LINK=tcp"));
	unsetenv("SOFTIB_LINK");
	sib_log_capture(NULL, 0);
}

/*
 * link.h, Locking: one poller and one sender at a time.  A thread that
 * loses the CPU in the middle of a poll or a send holds that side until
 * the scheduler runs it again.  Here it is parked in its rx callback, or
 * in the release of a split packet's hold (both run under that side's
 * lock).  A second poller waits for the first, and gets what is left in
 * order; a second flusher leaves its packets to the sender and returns at
 * once, and the sender sends them before it lets go.  Each wait is at
 * most 10 s, so that a regression fails instead of hanging.
 */
struct parked {
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool inside, release, done;
	struct sib_link *link;
	uint32_t order[8]; /* the seqs the parked poller handled, in order */
	unsigned n;
};

static void park(struct parked *pk)
{
	pthread_mutex_lock(&pk->m);
	pk->inside = true;
	pthread_cond_broadcast(&pk->cv);
	while (!pk->release)
		pthread_cond_wait(&pk->cv, &pk->m);
	pthread_mutex_unlock(&pk->m);
}

static void parked_init(struct parked *pk, struct sib_link *link)
{
	memset(pk, 0, sizeof(*pk));
	pthread_mutex_init(&pk->m, NULL);
	pthread_cond_init(&pk->cv, NULL);
	pk->link = link;
}

/* Waits up to ms for *flag (under pk->m); returns it. */
static bool parked_wait_ms(struct parked *pk, bool *flag, unsigned ms)
{
	struct timespec until;
	bool v;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&pk->m);
	while (!*flag && pthread_cond_timedwait(&pk->cv, &pk->m, &until) == 0)
		;
	v = *flag;
	pthread_mutex_unlock(&pk->m);
	return v;
}

static bool parked_wait(struct parked *pk, bool *flag)
{
	return parked_wait_ms(pk, flag, 10000);
}

static void parked_release(struct parked *pk)
{
	pthread_mutex_lock(&pk->m);
	pk->release = true;
	pthread_cond_broadcast(&pk->cv);
	pthread_mutex_unlock(&pk->m);
}

static void parked_done(struct parked *pk)
{
	pthread_mutex_lock(&pk->m);
	pk->done = true;
	pthread_cond_broadcast(&pk->cv);
	pthread_mutex_unlock(&pk->m);
}

/* Records each seq; parks at the first. */
static void park_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct parked *pk = arg;
	uint32_t seq;

	(void)from;
	if (len < 4)
		return;
	memcpy(&seq, pkt, 4);
	if (pk->n < 8)
		pk->order[pk->n++] = seq;
	if (pk->n == 1)
		park(pk);
}

/* Polls until its callback has parked it and it was let go. */
static void *parked_poller(void *arg)
{
	struct parked *pk = arg;

	for (unsigned i = 0; i < 10000 && !pk->n; i++)
		if (sib_link_poll(pk->link, 8, park_rx, pk) <= 0)
			usleep(1000);
	return NULL;
}

struct second {
	struct parked *pk; /* for done */
	struct sib_link *link;
	uint32_t order[8]; /* the seqs it handled, in order */
	unsigned n;
};

static void order_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct second *b = arg;

	(void)from;
	if (len >= 4 && b->n < 8)
		memcpy(&b->order[b->n++], pkt, 4);
}

static void *second_poller(void *arg)
{
	struct second *b = arg;

	/* Its first poll returns only once the parked poller let go. */
	sib_link_poll(b->link, 64, order_rx, b);
	parked_done(b->pk);
	for (unsigned sleeps = 0; b->n + b->pk->n < 4 && sleeps < 200; sleeps++)
		if (sib_link_poll(b->link, 64, order_rx, b) <= 0)
			usleep(50000);
	return NULL;
}

/*
 * Three datagrams arrive and a poller takes them off the socket in one
 * batch, then loses the CPU in its rx for the first; a fourth arrives.  A
 * second poller waits for it (it neither reads the socket nor overwrites
 * the batch meanwhile), and the four are handled in the order they came:
 * 0, 1, 2 by the first, then 3 by whichever polls next.
 */
static void a_second_poller_waits_for_the_first_and_order_holds(void **state)
{
	struct pair *p = *state;
	struct parked pk;
	struct second bs = { .pk = &pk, .link = p->b };
	pthread_t t1, t2;
	unsigned in_order = 0;

	parked_init(&pk, p->b);
	for (uint32_t seq = 0; seq < 3; seq++)
		send_one(p->a, seq, &p->b->local);
	sib_link_flush(p->a);
	usleep(20000); /* all three in the first poller's batch */
	assert_int_equal(pthread_create(&t1, NULL, parked_poller, &pk), 0);
	assert_true(parked_wait(&pk, &pk.inside));
	send_one(p->a, 3, &p->b->local);
	sib_link_flush(p->a);
	assert_int_equal(pthread_create(&t2, NULL, second_poller, &bs), 0);
	/* The second poller waits for the first. */
	assert_false(parked_wait_ms(&pk, &pk.done, 100));
	parked_release(&pk);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	/* 0, 1, 2, 3 in order: what the first took (its batch; the io_uring
	 * link may take fewer at a time), then what the second took. */
	assert_int_equal(pk.n + bs.n, 4);
	for (unsigned i = 0; i < 4; i++)
		in_order += (i < pk.n ? pk.order[i] : bs.order[i - pk.n]) == i;
	assert_int_equal(in_order, 4);
}

static struct parked *release_parks; /* the hold whose release parks */

static void parking_release(void *ctx)
{
	(void)ctx;
	park(release_parks);
}

struct flusher {
	struct parked *pk;
	struct sib_link *link;
	struct sib_endpoint dst;
	bool wait; /* sib_link_flush_wait, not sib_link_flush */
};

static void *second_flusher(void *arg)
{
	struct flusher *f = arg;

	send_one(f->link, 1, &f->dst);
	if (f->wait)
		sib_link_flush_wait(f->link);
	else
		sib_link_flush(f->link);
	parked_done(f->pk);
	return NULL;
}

struct sender_start {
	struct parked *pk;
	struct sib_endpoint dst;
};

/* Sends one split packet (seq 0); the release of its hold, after the
 * send, parks this thread inside its flush. */
static void *split_sender(void *arg)
{
	struct sender_start *st = arg;
	static uint8_t payload[1998];
	struct sib_link_hold hold = { .release = parking_release };
	size_t cap;
	uint8_t *buf = sib_link_tx_alloc(st->pk->link, &cap);
	uint32_t seq = 0;

	if (!buf)
		return NULL;
	memcpy(buf, &seq, 4);
	memset(buf + 4, 0, 28);
	put_len(buf, 24 + sizeof(payload) + 8);
	sib_link_tx_commit_split(st->pk->link, buf, 24, payload, sizeof(payload), 8, &st->dst,
				 &hold);
	sib_link_flush(st->pk->link); /* parks in the release, after the send */
	return NULL;
}

static void seq_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	uint32_t seq;

	(void)from;
	if (len < 4)
		return;
	memcpy(&seq, pkt, 4);
	if (seq < 2)
		((unsigned *)arg)[seq]++;
}

/* Datagrams of seq < 2 that arrive at l within tenths/10 s, counted in seen. */
static void receive_two(struct sib_link *l, unsigned seen[2], unsigned tenths)
{
	for (unsigned sleeps = 0; (!seen[0] || !seen[1]) && sleeps < tenths;) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(l), .events = POLLIN };

		if (sib_link_poll(l, 16, seq_rx, seen) > 0)
			continue;
		poll(&pfd, 1, 100);
		sleeps++;
	}
}

/*
 * A sender loses the CPU inside its flush; another thread's flush returns
 * at once and leaves its packet to it, and the sender, back on the CPU,
 * sends it before it lets go: both arrive, and nobody waited.
 */
static void a_flush_leaves_its_packets_to_a_busy_sender(void **state)
{
	struct pair *p = *state;
	struct parked pk;
	struct sender_start st;
	struct flusher fl;
	pthread_t t1, t2;
	unsigned seen[2] = { 0, 0 };
	bool done;

	if (!p->a->ops->tx_commit_split)
		sib_skip("the %s link joins split packets at commit: no send to park in",
			 p->a->ops->kind);
	parked_init(&pk, p->a);
	release_parks = &pk;
	st = (struct sender_start){ &pk, p->b->local };
	fl = (struct flusher){ &pk, p->a, p->b->local, false };
	assert_int_equal(pthread_create(&t1, NULL, split_sender, &st), 0);
	assert_true(parked_wait(&pk, &pk.inside));
	assert_int_equal(pthread_create(&t2, NULL, second_flusher, &fl), 0);
	done = parked_wait(&pk, &pk.done);
	/* Left to the sender: not sent while it is parked. */
	receive_two(p->b, seen, 2);
	assert_int_equal(seen[1], 0);
	parked_release(&pk);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_true(done);
	receive_two(p->b, seen, 200);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 1);
}

/*
 * A fatal signal stops a sender inside its flush for good (parked here
 * for the rest of the run; provider/ucma.c's goodbyes).  Once the link is
 * told (sib_link_abandoned_by), a flush that would wait for that sender
 * sends in its place: the goodbye arrives while the sender is still
 * stopped.  Without the word, it would wait forever.
 */
static void a_flush_sends_in_place_of_an_abandoned_sender(void **state)
{
	struct pair *p = *state;
	/* static, one per backend: the stopped thread keeps them */
	static struct parked pks[2];
	static struct sender_start sts[2];
	static struct flusher fls[2];
	struct parked *pk = &pks[be - backends];
	pthread_t t1, t2;
	unsigned seen[2] = { 0, 0 };

	if (!p->a->ops->tx_commit_split)
		sib_skip("the %s link joins split packets at commit: no send to park in",
			 p->a->ops->kind);
	parked_init(pk, p->a);
	release_parks = pk;
	sts[be - backends] = (struct sender_start){ pk, p->b->local };
	fls[be - backends] = (struct flusher){ pk, p->a, p->b->local, true };
	assert_int_equal(pthread_create(&t1, NULL, split_sender, &sts[be - backends]), 0);
	assert_true(parked_wait(pk, &pk->inside));
	pthread_detach(t1);
	sib_link_abandoned_by(p->a, t1);
	assert_int_equal(pthread_create(&t2, NULL, second_flusher, &fls[be - backends]), 0);
	assert_true(parked_wait(pk, &pk->done));
	pthread_join(t2, NULL);
	receive_two(p->b, seen, 200);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 1);
}

/* A packet of len bytes, seq in its first 4, committed on l to dst. */
static void commit_len(struct sib_link *l, uint32_t seq, size_t len, const struct sib_endpoint *dst)
{
	size_t cap;
	uint8_t *buf = sib_link_tx_alloc(l, &cap);

	assert_non_null(buf);
	memcpy(buf, &seq, 4);
	for (size_t i = 4; i < len; i++)
		buf[i] = pkt_byte(seq, len, i);
	sib_link_tx_commit(l, buf, len, dst);
}

/* The next datagram at fd (a plain socket), within 10 s: its length. */
static ssize_t recv_datagram(int fd, uint8_t *buf, size_t cap)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, 10000) != 1)
		return -1;
	return recv(fd, buf, cap, 0);
}

/*
 * A packet that cannot lead a GSO run (the next one to its endpoint is
 * longer: an ACK before a request) shares a datagram with the packets
 * after it, back to back; a run of one size still goes as GSO, one packet
 * per datagram; a packet to another endpoint is a datagram of its own.
 * A plain socket shows the datagrams as they are on the wire.
 */
static void what_gso_cannot_carry_shares_a_datagram(void **state)
{
	struct pair *p = *state;
	struct sib_endpoint at;
	struct sockaddr_storage ss;
	socklen_t alen = sizeof(ss);
	static uint8_t buf[8192];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &alen), 0);
	assert_int_equal(sib_endpoint_from_sockaddr((struct sockaddr *)&ss, alen, &at), 0);

	commit_len(p->a, 0, 30, &at);	      /* an ACK */
	commit_len(p->a, 1, 50, &at);	      /* a WRITE */
	commit_len(p->a, 2, 50, &at);
	commit_len(p->a, 3, 30, &p->b->local); /* elsewhere */
	commit_len(p->a, 4, 50, &at);	      /* then a GSO run: 50, 50, 30 */
	commit_len(p->a, 5, 50, &at);
	commit_len(p->a, 6, 30, &at);
	sib_link_flush(p->a);
	assert_int_equal(recv_datagram(fd, buf, sizeof(buf)), 130);
	for (uint32_t seq = 0, off = 0; seq < 3; off += seq ? 50 : 30, seq++) {
		uint32_t got;

		memcpy(&got, buf + off, 4);
		assert_int_equal(got, seq);
		assert_int_equal(buf[off + 5], pkt_byte(seq, seq ? 50 : 30, 5));
	}
	assert_int_equal(recv_datagram(fd, buf, sizeof(buf)), 50);
	assert_int_equal(recv_datagram(fd, buf, sizeof(buf)), 50);
	assert_int_equal(recv_datagram(fd, buf, sizeof(buf)), 30);
	close(fd);
}

/* Packets handed on by a poll: their seqs and lengths, in order. */
struct cut {
	unsigned n;
	uint32_t seq[8];
	size_t len[8];
};

static void cut_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct cut *c = arg;

	(void)from;
	if (c->n < 8) {
		c->seq[c->n] = 0;
		if (len >= 4)
			memcpy(&c->seq[c->n], pkt, 4);
		c->len[c->n++] = len;
	}
}

/*
 * The link cuts a datagram where each packet's LRH says it ends, and hands
 * the packets on in order; what is left that no LRH describes whole (too
 * short for one, or a length past the end) goes on as one piece, for the
 * decoder to reject and count.  The packed datagram comes from a plain
 * socket, as a peer would send it.
 */
static void a_datagram_is_cut_where_each_lrh_says(void **state)
{
	struct pair *p = *state;
	struct sockaddr_storage ss;
	socklen_t alen = sib_endpoint_to_sockaddr(&p->b->local, AF_INET, &ss);
	struct sib_link_counters c0, c1;
	struct cut got = { 0 };
	static uint8_t dgram[256];
	size_t lens[] = { 30, 50, 26 }, off = 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	for (uint32_t seq = 0; seq < 3; off += lens[seq], seq++) {
		memcpy(dgram + off, &seq, 4);
		for (size_t i = 4; i < lens[seq]; i++)
			dgram[off + i] = pkt_byte(seq, lens[seq], i);
	}
	/* then 4 bytes that say they begin a 4 KiB packet: not an LRH at all */
	dgram[off + 0] = 9;
	dgram[off + 1] = 0;
	dgram[off + 2] = 0;
	dgram[off + 3] = 0;
	off += 4;
	/* and a datagram whose only packet claims more than it holds */
	sib_link_counters_get(p->b, &c0);
	assert_int_equal(sendto(fd, dgram, off, 0, (struct sockaddr *)&ss, alen), (ssize_t)off);
	put_len(dgram, 98);
	assert_int_equal(sendto(fd, dgram, 60, 0, (struct sockaddr *)&ss, alen), 60);
	close(fd);
	for (unsigned sleeps = 0; got.n < 5 && sleeps < 100; sleeps++) {
		struct pollfd pfd = { .fd = sib_link_wait_fd(p->b), .events = POLLIN };

		if (sib_link_poll(p->b, 16, cut_rx, &got) <= 0)
			poll(&pfd, 1, 100);
	}
	assert_int_equal(got.n, 5);
	for (uint32_t seq = 0; seq < 3; seq++) {
		assert_int_equal(got.seq[seq], seq);
		assert_int_equal(got.len[seq], lens[seq]);
	}
	assert_int_equal(got.len[3], 4);
	assert_int_equal(got.len[4], 60);
	sib_link_counters_get(p->b, &c1);
	assert_int_equal(c1.rx_packets - c0.rx_packets, 5);
	assert_int_equal(c1.rx_bytes - c0.rx_bytes, off + 60);
}

#define NTESTS 22

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(local_endpoint_is_loopback_with_an_ephemeral_port,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			every_byte_arrives_in_both_directions_and_counters_count, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(
			a_refused_datagram_mid_batch_is_counted_and_the_rest_still_go, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(more_commits_than_buffers_wait_for_completions,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			concurrent_senders_and_a_progress_thread_lose_nothing, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(holding_every_buffer_gives_null_not_a_hang,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(wait_fd_becomes_readable_when_a_datagram_arrives,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(oversized_datagram_is_dropped_as_truncated,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(socket_overflow_is_counted_as_rx_queue_full,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			gso_burst_arrives_whole_and_is_split_into_its_datagrams, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(split_packets_arrive_whole_and_are_released_once_sent,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(mtu_on_loopback_is_4096, pair_setup,
						pair_teardown),
		cmocka_unit_test(ib_mtu_is_the_largest_whose_packet_fits_the_interface),
		cmocka_unit_test(bad_softib_addr_fails_with_a_line_naming_the_knob),
		cmocka_unit_test(softib_netdev_lo_binds_its_ipv4_address),
		cmocka_unit_test(ipv6_loopback_link_exchanges_datagrams),
		cmocka_unit_test(env_stack_with_faults_and_capture_still_delivers),
		cmocka_unit_test_setup_teardown(a_second_poller_waits_for_the_first_and_order_holds,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(a_flush_leaves_its_packets_to_a_busy_sender,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(what_gso_cannot_carry_shares_a_datagram,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(a_datagram_is_cut_where_each_lrh_says,
						pair_setup, pair_teardown),
		/* Last: its stopped sender stays parked till the program ends. */
		cmocka_unit_test_setup_teardown(a_flush_sends_in_place_of_an_abandoned_sender,
						pair_setup, pair_teardown),
	};
	const struct CMUnitTest common[] = {
		cmocka_unit_test(without_io_uring_softib_link_uring_falls_back_to_sockets),
		cmocka_unit_test(unknown_softib_link_fails_with_a_line_naming_the_knob),
	};
	static char names[2][NTESTS][128];
	struct CMUnitTest named[NTESTS];
	int failed = 0;

	_Static_assert(sizeof(tests) / sizeof(tests[0]) == NTESTS, "NTESTS is the suite's size");
	for (unsigned b = 0; b < 2; b++) {
		struct sib_link *probe;
		char group[32];

		be = &backends[b];
		if (b == 1) {
			int ret = sib_link_uring_open(NULL, NULL, &probe);

			if (ret == -EOPNOTSUPP) {
				printf("[  SKIPPED ] uring: io_uring is unavailable here\n");
				continue;
			}
			if (!ret)
				sib_link_close(probe);
		}
		for (unsigned i = 0; i < NTESTS; i++) {
			named[i] = tests[i];
			snprintf(names[b][i], sizeof(names[b][i]), "%s_%s", be->name, tests[i].name);
			named[i].name = names[b][i];
		}
		snprintf(group, sizeof(group), "link_%s", be->name);
		failed += _cmocka_run_group_tests(group, named, NTESTS, NULL, NULL);
	}
	failed += cmocka_run_group_tests_name("link_select", common, NULL, NULL);
	return failed;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The port's transmit scheduler (docs/architecture.md, the transmit rule):
 * the top of every port's link stack, so every packet the port sends
 * passes it, in the order it was made.  A packet leaves for the link below
 * once it is due; until then it waits here, in order, and whoever flushes
 * next (a posting or polling thread, the progress thread, which sleeps no
 * longer than the head's due time: next_deadline_ns) sends it.
 *
 * What makes a packet wait today is the port's rate (SOFTIB_RATE): a
 * packet of n bytes occupies the wire for n * 8 / rate seconds after the
 * one before it, as on a real link of that speed.  Without a rate every
 * packet is due at once and goes straight through, in the commit that
 * made it.  Per-VL credits, arbitration and congestion-control injection
 * delays are later reasons for a packet to wait here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "link/link.h"

struct waiting {
	uint8_t *buf; /* from the link below's tx_alloc */
	size_t len;   /* whole packet; for a split one, hdr_len + payload + trailer */
	size_t hdr_len, payload_len, trailer_len;
	const uint8_t *payload; /* NULL: the packet is all in buf */
	struct sib_endpoint dst;
	struct sib_link_hold hold;
	uint64_t due;
};

struct sched_link {
	struct sib_link link;
	uint64_t rate_bps; /* 0: no rate, every packet due at once */
	pthread_mutex_t lock;
	uint64_t wire_free; /* when the wire is free of what was scheduled (ns) */
	struct waiting q[SIB_LINK_TX_BUFS]; /* ring, oldest first */
	unsigned head, n;
};

static struct sched_link *to_sched(struct sib_link *l)
{
	return (struct sched_link *)l;
}

static uint8_t *sched_tx_alloc(struct sib_link *l, size_t *cap)
{
	return sib_link_tx_alloc(l->inner, cap);
}

static void sched_tx_abort(struct sib_link *l, uint8_t *buf)
{
	sib_link_tx_abort(l->inner, buf);
}

/* Hands w to the link below. */
static void pass(struct sib_link *inner, struct waiting *w)
{
	if (w->payload)
		sib_link_tx_commit_split(inner, w->buf, w->hdr_len, w->payload, w->payload_len,
					 w->trailer_len, &w->dst, &w->hold);
	else
		sib_link_tx_commit(inner, w->buf, w->len, &w->dst);
}

/* Under lock: the waiting packets that are due go below, in order. */
static void release_due(struct sched_link *s, uint64_t now)
{
	while (s->n && s->q[s->head].due <= now) {
		pass(s->link.inner, &s->q[s->head]);
		s->head = (s->head + 1) % SIB_LINK_TX_BUFS;
		s->n--;
	}
}

/* The packet w is made: it goes below now if due and nothing waits
 * ahead of it, else it waits (its buffer is the link below's, so there is
 * always room: at most SIB_LINK_TX_BUFS buffers exist). */
static void schedule(struct sched_link *s, struct waiting *w)
{
	uint64_t now;

	if (!s->rate_bps) { /* no rate: due at once, the usual case */
		pass(s->link.inner, w);
		return;
	}
	now = sib_link_now_ns();
	pthread_mutex_lock(&s->lock);
	release_due(s, now);
	if (s->wire_free < now)
		s->wire_free = now;
	w->due = s->wire_free;
	s->wire_free += (uint64_t)((unsigned __int128)w->len * 8000000000ull / s->rate_bps);
	if (!s->n && w->due <= now) {
		pass(s->link.inner, w);
	} else if (s->n < SIB_LINK_TX_BUFS) {
		s->q[(s->head + s->n) % SIB_LINK_TX_BUFS] = *w;
		s->n++;
	} else { /* cannot happen: one entry per buffer below */
		sib_link_count(&s->link.counters.drop[SIB_LINK_DROP_TX_NO_BUFFER], 1);
		if (w->payload)
			w->hold.release(w->hold.ctx);
		sib_link_tx_abort(s->link.inner, w->buf);
	}
	pthread_mutex_unlock(&s->lock);
}

static void sched_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			    const struct sib_endpoint *dst)
{
	struct waiting w = { .buf = buf, .len = len, .dst = *dst };

	schedule(to_sched(l), &w);
}

static void sched_tx_commit_split(struct sib_link *l, uint8_t *buf, size_t hdr_len,
				  const uint8_t *payload, size_t payload_len, size_t trailer_len,
				  const struct sib_endpoint *dst, struct sib_link_hold *hold)
{
	struct waiting w = { .buf = buf,
			     .len = hdr_len + payload_len + trailer_len,
			     .hdr_len = hdr_len,
			     .payload_len = payload_len,
			     .trailer_len = trailer_len,
			     .payload = payload,
			     .dst = *dst,
			     .hold = *hold };

	schedule(to_sched(l), &w);
}

static void sched_release(struct sched_link *s)
{
	if (__atomic_load_n(&s->n, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&s->lock);
		release_due(s, sib_link_now_ns());
		pthread_mutex_unlock(&s->lock);
	}
}

static int sched_flush(struct sib_link *l)
{
	sched_release(to_sched(l));
	return sib_link_flush(l->inner);
}

static int sched_flush_wait(struct sib_link *l)
{
	sched_release(to_sched(l));
	return sib_link_flush_wait(l->inner);
}

static int sched_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	return sib_link_poll(l->inner, max, rx, arg);
}

static int sched_wait_fd(struct sib_link *l)
{
	return sib_link_wait_fd(l->inner);
}

static int sched_wait_arm(struct sib_link *l)
{
	return sib_link_wait_arm(l->inner);
}

/* The head's due time, or the link below's deadline if sooner. */
static uint64_t sched_next_deadline(struct sib_link *l)
{
	struct sched_link *s = to_sched(l);
	uint64_t d = sib_link_next_deadline_ns(l->inner), head = 0;

	if (__atomic_load_n(&s->n, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&s->lock);
		if (s->n)
			head = s->q[s->head].due;
		pthread_mutex_unlock(&s->lock);
	}
	if (head && (!d || head < d))
		d = head;
	return d;
}

static void sched_close(struct sib_link *l)
{
	struct sched_link *s = to_sched(l);

	/* What still waits leaves now, as the port goes away. */
	pthread_mutex_lock(&s->lock);
	release_due(s, UINT64_MAX);
	pthread_mutex_unlock(&s->lock);
	sib_link_flush_wait(l->inner);
	sib_link_close(l->inner);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct sib_link_ops sched_ops = {
	.kind = "sched",
	.tx_alloc = sched_tx_alloc,
	.tx_commit = sched_tx_commit,
	.tx_commit_split = sched_tx_commit_split,
	.tx_abort = sched_tx_abort,
	.flush = sched_flush,
	.flush_wait = sched_flush_wait,
	.poll = sched_poll,
	.wait_fd = sched_wait_fd,
	.wait_arm = sched_wait_arm,
	.next_deadline_ns = sched_next_deadline,
	.close = sched_close,
};

int sib_link_sched_wrap(struct sib_link *inner, uint64_t rate_bps, struct sib_link **out)
{
	struct sched_link *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->link.ops = &sched_ops;
	s->link.inner = inner;
	s->link.local = inner->local;
	s->link.mtu = inner->mtu;
	s->rate_bps = rate_bps;
	pthread_mutex_init(&s->lock, NULL);
	*out = &s->link;
	return 0;
}

int sib_link_rate_parse(const char *s, uint64_t *rate_bps)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		goto bad;
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1e3;
		end++;
		break;
	case 'm':
	case 'M':
		v *= 1e6;
		end++;
		break;
	case 'g':
	case 'G':
		v *= 1e9;
		end++;
		break;
	default:
		break;
	}
	if (*end || v < 1e3 || v > 1e13)
		goto bad;
	*rate_bps = (uint64_t)v;
	return 0;
bad:
	sib_err("SOFTIB_RATE=%s: want bits per second from 1k to 10000G, such as 100M or 10G", s);
	return -EINVAL;
}

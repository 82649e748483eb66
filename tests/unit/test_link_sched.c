/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* link/sched.c: the port's transmit scheduler (docs/architecture.md, the
 * transmit rule), on the in-memory link. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "link/link.h"

struct got {
	unsigned n;
	uint32_t seq[64];
};

static void collect(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	uint32_t seq = 0;

	(void)from;
	if (len >= 4)
		memcpy(&seq, pkt, 4);
	if (g->n < 64)
		g->seq[g->n] = seq;
	g->n++;
}

static void send_seq(struct sib_link *l, uint32_t seq, size_t len, const struct sib_endpoint *dst)
{
	size_t cap;
	uint8_t *buf = sib_link_tx_alloc(l, &cap);

	assert_non_null(buf);
	memset(buf, 0x5a, len);
	memcpy(buf, &seq, 4);
	sib_link_tx_commit(l, buf, len, dst);
}

struct pair {
	struct sib_mem_hub *hub;
	struct sib_link *a, *b; /* a: a scheduler over a mem link */
};

static struct pair *pair_new(uint64_t rate_bps)
{
	static struct pair p;
	struct sib_link *inner;

	p.hub = sib_mem_hub_new();
	assert_non_null(p.hub);
	assert_int_equal(sib_link_mem_open(p.hub, 4096, &inner), 0);
	assert_int_equal(sib_link_mem_open(p.hub, 4096, &p.b), 0);
	assert_int_equal(sib_link_sched_wrap(inner, rate_bps, &p.a), 0);
	assert_string_equal(p.a->ops->kind, "sched");
	assert_true(sib_endpoint_equal(&p.a->local, &inner->local));
	return &p;
}

static void pair_free(struct pair *p)
{
	sib_link_close(p->a);
	sib_link_close(p->b);
	sib_mem_hub_free(p->hub);
}

/* Without a rate every packet is due at once: it goes through in the
 * commit that made it, and nothing waits (no deadline). */
static void without_a_rate_packets_go_straight_through(void **state)
{
	struct pair *p = pair_new(0);
	struct got g = { 0 };

	(void)state;
	for (uint32_t i = 0; i < 10; i++)
		send_seq(p->a, i, 1000, &p->b->local);
	assert_int_equal(sib_link_next_deadline_ns(p->a), 0);
	assert_int_equal(sib_link_poll(p->b, 64, collect, &g), 10);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(g.seq[i], i);
	pair_free(p);
}

/*
 * With a rate, a packet waits until the wire is free of the ones before
 * it (its bytes at that rate), in order; whoever flushes at or after its
 * due time sends it, and next_deadline says when that is.
 */
static void with_a_rate_packets_wait_until_due_and_keep_their_order(void **state)
{
	/* 8 Mb/s: a 1000-byte packet holds the wire for 1 ms. */
	struct pair *p = pair_new(8000000);
	struct got g = { 0 };
	uint64_t t0 = sib_link_now_ns(), t1, d;

	(void)state;
	send_seq(p->a, 0, 1000, &p->b->local);
	t1 = sib_link_now_ns(); /* the first took the wire between t0 and t1 */
	for (uint32_t i = 1; i < 5; i++)
		send_seq(p->a, i, 1000, &p->b->local);
	sib_link_flush(p->a);
	/* The first was due at once; the rest wait, a millisecond apart. */
	sib_link_poll(p->b, 64, collect, &g);
	if (sib_link_now_ns() - t0 < 900000)
		assert_int_equal(g.n, 1);
	d = sib_link_next_deadline_ns(p->a);
	/* However long this thread was preempted: the second is due a
	 * millisecond after the first took the wire. */
	assert_true(d >= t0 + 1000000);
	assert_true(d <= t1 + 1000000);
	while (g.n < 5 && sib_link_now_ns() - t0 < 2000000000ull) {
		usleep(200);
		sib_link_flush(p->a);
		sib_link_poll(p->b, 64, collect, &g);
	}
	assert_int_equal(g.n, 5);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(g.seq[i], i);
	/* Five packets of a millisecond each took four after the first. */
	assert_true(sib_link_now_ns() - t0 >= 4000000);
	assert_int_equal(sib_link_next_deadline_ns(p->a), 0);
	pair_free(p);
}

/* What still waits when the port closes leaves then. */
static void closing_sends_what_waits(void **state)
{
	struct pair *p = pair_new(8000000);
	struct got g = { 0 };

	(void)state;
	for (uint32_t i = 0; i < 3; i++)
		send_seq(p->a, i, 1000, &p->b->local);
	sib_link_close(p->a);
	p->a = NULL;
	assert_int_equal(sib_link_poll(p->b, 64, collect, &g), 3);
	sib_link_close(p->b);
	sib_mem_hub_free(p->hub);
}

/* SOFTIB_RATE: bits per second with k, M or G; anything else is refused
 * with a line naming the knob. */
static void softib_rate_parses_bits_per_second(void **state)
{
	uint64_t r;
	char log[256];

	(void)state;
	assert_int_equal(sib_link_rate_parse("10G", &r), 0);
	assert_int_equal(r, 10000000000ull);
	assert_int_equal(sib_link_rate_parse("100M", &r), 0);
	assert_int_equal(r, 100000000ull);
	assert_int_equal(sib_link_rate_parse("2.5g", &r), 0);
	assert_int_equal(r, 2500000000ull);
	assert_int_equal(sib_link_rate_parse("56000", &r), 0);
	assert_int_equal(r, 56000);
	sib_log_capture(log, sizeof(log));
	assert_int_equal(sib_link_rate_parse("fast", &r), -EINVAL);
	assert_non_null(strstr(log, "SOFTIB_RATE=fast"));
	assert_int_equal(sib_link_rate_parse("10T", &r), -EINVAL);
	assert_int_equal(sib_link_rate_parse("-1G", &r), -EINVAL);
	assert_int_equal(sib_link_rate_parse("10", &r), -EINVAL);
	sib_log_capture(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(without_a_rate_packets_go_straight_through),
		cmocka_unit_test(with_a_rate_packets_wait_until_due_and_keep_their_order),
		cmocka_unit_test(closing_sends_what_waits),
		cmocka_unit_test(softib_rate_parses_bits_per_second),
	};

	return cmocka_run_group_tests_name("link_sched", tests, NULL, NULL);
}

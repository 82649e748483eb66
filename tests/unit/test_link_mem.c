/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The in-memory link the transport's unit tests run on. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "link/link.h"

struct got {
	unsigned n;
	uint32_t seq[1024];
	size_t len[1024];
	struct sib_endpoint from;
	struct sib_link *reply_on; /* when set, answer every packet */
};

static void collect(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	uint32_t seq = 0;

	if (len >= 4)
		memcpy(&seq, pkt, 4);
	if (g->n < 1024) {
		g->seq[g->n] = seq;
		g->len[g->n] = len;
	}
	g->n++;
	g->from = *from;
	if (g->reply_on)
		assert_int_equal(sib_link_send(g->reply_on, pkt, len, from), 0);
}

static void send_seq(struct sib_link *l, uint32_t seq, size_t len, const struct sib_endpoint *dst)
{
	size_t cap;
	uint8_t *buf = sib_link_tx_alloc(l, &cap);

	assert_non_null(buf);
	assert_true(cap >= IB_MAX_PACKET);
	memset(buf, 0xa5, len);
	memcpy(buf, &seq, 4);
	sib_link_tx_commit(l, buf, len, dst);
}

struct pair {
	struct sib_mem_hub *hub;
	struct sib_link *a, *b;
};

static int pair_setup(void **state)
{
	static struct pair p;

	p.hub = sib_mem_hub_new();
	assert_non_null(p.hub);
	assert_int_equal(sib_link_mem_open(p.hub, 4096, &p.a), 0);
	assert_int_equal(sib_link_mem_open(p.hub, 4096, &p.b), 0);
	*state = &p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	sib_link_close(p->a);
	sib_link_close(p->b);
	sib_mem_hub_free(p->hub);
	return 0;
}

static void packets_arrive_in_commit_order_with_sender_endpoint(void **state)
{
	struct pair *p = *state;
	struct got g = { 0 };
	struct sib_link_counters ca, cb;

	assert_false(sib_endpoint_equal(&p->a->local, &p->b->local));
	for (uint32_t i = 0; i < 200; i++)
		send_seq(p->a, i, 26 + i, &p->b->local);
	assert_int_equal(sib_link_flush(p->a), 0);
	assert_int_equal(sib_link_poll(p->b, 50, collect, &g), 50);
	while (sib_link_poll(p->b, 64, collect, &g) > 0)
		;
	assert_int_equal(g.n, 200);
	for (uint32_t i = 0; i < 200; i++) {
		assert_int_equal(g.seq[i], i);
		assert_int_equal(g.len[i], 26 + i);
	}
	assert_true(sib_endpoint_equal(&g.from, &p->a->local));

	sib_link_counters_get(p->a, &ca);
	sib_link_counters_get(p->b, &cb);
	assert_int_equal(ca.tx_packets, 200);
	assert_int_equal(cb.rx_packets, 200);
	assert_int_equal(ca.tx_bytes, cb.rx_bytes);
	assert_int_equal(ca.tx_bytes, 200 * 26 + 199 * 200 / 2);
}

static void unknown_destination_is_dropped_as_no_route(void **state)
{
	struct pair *p = *state;
	struct sib_endpoint nowhere;
	struct sib_link_counters c;
	struct got g = { 0 };

	assert_int_equal(sib_endpoint_parse("192.0.2.200:4791", 0, &nowhere), 0);
	send_seq(p->a, 1, 64, &nowhere);
	sib_link_counters_get(p->a, &c);
	assert_int_equal(c.drop[SIB_LINK_DROP_TX_NO_ROUTE], 1);
	assert_int_equal(c.tx_packets, 0);
	assert_int_equal(sib_link_poll(p->b, 64, collect, &g), 0);
}

static void full_receive_queue_drops_and_counts(void **state)
{
	struct pair *p = *state;
	struct sib_link_counters c;
	struct got g = { 0 };

	for (uint32_t i = 0; i < 300; i++)
		send_seq(p->a, i, 100, &p->b->local);
	while (sib_link_poll(p->b, 64, collect, &g) > 0)
		;
	sib_link_counters_get(p->b, &c);
	assert_int_equal(g.n + c.drop[SIB_LINK_DROP_RX_QUEUE_FULL], 300);
	assert_true(c.drop[SIB_LINK_DROP_RX_QUEUE_FULL] > 0);
	for (unsigned i = 0; i < g.n; i++)
		assert_int_equal(g.seq[i], i); /* the oldest are kept */
}

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static void wait_fd_is_readable_exactly_while_packets_wait(void **state)
{
	struct pair *p = *state;
	struct got g = { 0 };

	assert_int_equal(sib_link_wait_arm(p->b), 0);
	assert_false(readable(sib_link_wait_fd(p->b)));
	send_seq(p->a, 7, 64, &p->b->local);
	assert_true(readable(sib_link_wait_fd(p->b)));
	assert_true(sib_link_wait_arm(p->b) > 0); /* pending: do not sleep */
	assert_int_equal(sib_link_poll(p->b, 64, collect, &g), 1);
	assert_int_equal(sib_link_wait_arm(p->b), 0);
	assert_false(readable(sib_link_wait_fd(p->b)));
}

static void receive_callback_may_send(void **state)
{
	struct pair *p = *state;
	struct got gb = { .reply_on = p->b }, ga = { 0 };

	for (uint32_t i = 0; i < 10; i++)
		send_seq(p->a, i, 300, &p->b->local);
	assert_int_equal(sib_link_poll(p->b, 64, collect, &gb), 10);
	assert_int_equal(sib_link_poll(p->a, 64, collect, &ga), 10);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(ga.seq[i], i);
	assert_true(sib_endpoint_equal(&ga.from, &p->b->local));
}

static void aborted_buffers_are_reused(void **state)
{
	struct pair *p = *state;
	size_t cap;

	/* More allocations than the hub has buffers: each abort gives one back. */
	for (unsigned i = 0; i < 5000; i++) {
		uint8_t *buf = sib_link_tx_alloc(p->a, &cap);

		assert_non_null(buf);
		sib_link_tx_abort(p->a, buf);
	}
}

static void bad_mtu_is_rejected(void **state)
{
	struct pair *p = *state;
	struct sib_link *l;

	assert_int_equal(sib_link_mem_open(p->hub, 1000, &l), -EINVAL);
	assert_int_equal(sib_link_mem_open(p->hub, 8192, &l), -EINVAL);
	assert_int_equal(sib_link_mem_open(p->hub, 256, &l), 0);
	assert_int_equal(l->mtu, 256);
	sib_link_close(l);
}

/*
 * link.h, Locking: one poller at a time.  A poller that lost the CPU in
 * the middle of its poll (parked here in its rx callback) holds the
 * receive side; another thread's poll waits for it, then takes the packet
 * queued after the first one's.  The main thread waits at most 10 s, so
 * that a regression fails rather than hangs.
 */
struct parked {
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool inside, release, done;
	struct sib_link *link;
	struct got g; /* the second poller's */
};

static bool parked_wait_s(struct parked *pk, bool *flag, time_t s)
{
	struct timespec until;
	bool v;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s;
	pthread_mutex_lock(&pk->m);
	while (!*flag && pthread_cond_timedwait(&pk->cv, &pk->m, &until) == 0)
		;
	v = *flag;
	pthread_mutex_unlock(&pk->m);
	return v;
}

static bool parked_wait(struct parked *pk, bool *flag)
{
	return parked_wait_s(pk, flag, 10);
}

static void parked_set(struct parked *pk, bool *flag)
{
	pthread_mutex_lock(&pk->m);
	*flag = true;
	pthread_cond_broadcast(&pk->cv);
	pthread_mutex_unlock(&pk->m);
}

static void park_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct parked *pk = arg;

	(void)pkt;
	(void)len;
	(void)from;
	parked_set(pk, &pk->inside);
	pthread_mutex_lock(&pk->m);
	while (!pk->release)
		pthread_cond_wait(&pk->cv, &pk->m);
	pthread_mutex_unlock(&pk->m);
}

static void *parked_poller(void *arg)
{
	struct parked *pk = arg;

	sib_link_poll(pk->link, 1, park_rx, pk);
	return NULL;
}

static void *second_poller(void *arg)
{
	struct parked *pk = arg;

	for (unsigned i = 0; i < 10000 && !pk->g.n; i++)
		if (sib_link_poll(pk->link, 8, collect, &pk->g) <= 0)
			usleep(1000);
	parked_set(pk, &pk->done);
	return NULL;
}

static void a_poll_waits_for_a_poller_that_lost_the_cpu(void **state)
{
	struct pair *p = *state;
	struct parked pk = { .link = p->b };
	pthread_t t1, t2;
	bool done;

	pthread_mutex_init(&pk.m, NULL);
	pthread_cond_init(&pk.cv, NULL);
	send_seq(p->a, 1, 64, &p->b->local);
	assert_int_equal(pthread_create(&t1, NULL, parked_poller, &pk), 0);
	assert_true(parked_wait(&pk, &pk.inside));
	send_seq(p->a, 2, 64, &p->b->local);
	assert_int_equal(pthread_create(&t2, NULL, second_poller, &pk), 0);
	assert_false(parked_wait_s(&pk, &pk.done, 1)); /* it waits */
	parked_set(&pk, &pk.release);
	done = parked_wait(&pk, &pk.done);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_true(done);
	assert_int_equal(pk.g.n, 1);
	assert_int_equal(pk.g.seq[0], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(packets_arrive_in_commit_order_with_sender_endpoint,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(unknown_destination_is_dropped_as_no_route,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(full_receive_queue_drops_and_counts, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(wait_fd_is_readable_exactly_while_packets_wait,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(receive_callback_may_send, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(aborted_buffers_are_reused, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(bad_mtu_is_rejected, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(a_poll_waits_for_a_poller_that_lost_the_cpu,
						pair_setup, pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

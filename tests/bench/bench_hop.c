/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib's own work in one hop of an RC SEND ping-pong, without the
 * kernel: two engines on the in-memory link (tests/unit/engine_world.h),
 * one thread; with -u, on two UDP sockets on loopback instead, which adds
 * the UDP link and the kernel's sendmmsg and recvmmsg but no wake-up or
 * second core.  Each hop is what ib_send_lat's receiving side does: take
 * the peer's SEND (and the ACK of our last SEND) off the link, poll the
 * receive and send CQs, post the receive again, post the next signaled
 * 8-byte SEND, which leaves in one system call behind the ACK the peer's
 * SEND asked for (queued by the read, as an application thread's poll
 * leaves it: docs/architecture.md, the transmit rule).  Prints nanoseconds per
 * hop; the bench sets it beside ib_send_lat, whose hop adds the kernel's
 * sendmmsg and recvmmsg and the provider's verbs layer.  Nothing is
 * asserted but that every SEND arrives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/unit/engine_world.h"

enum { MSG = 8, WARMUP = 20000, HOPS = 400000 };

static void rx_one(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct node *n = arg;
	struct ib_packet pkt;

	if (ib_packet_decode(buf, len, &pkt) == IB_PKT_OK)
		sib_engine_rx(n->eng, &pkt, from);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct side {
	uint8_t sbuf[MSG], rbuf[MSG];
	uint32_t skey, rkey;
	uint64_t received, sent_done;
};

/* Node n takes the peer's SEND and answers it; false if it never came. */
static bool hop(struct world *w, int i, struct side *s)
{
	struct node *n = &w->n[i];
	struct sib_send_wqe wqe = { .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_cqe c;

	/* On loopback the datagram is queued by the sender's own system
	 * call; a few empty polls at most. */
	for (int tries = 0;; tries++) {
		sib_link_poll(n->link, 16, rx_one, n);
		if (world_poll(n->rcq, &c) == 1)
			break;
		if (tries == 1000000)
			return false;
	}
	if (c.status != SIB_WC_SUCCESS)
		return false;
	s->received++;
	world_post_recv(n, 0, s->rbuf, MSG, s->rkey);
	while (world_poll(n->scq, &c) == 1)
		s->sent_done += c.status == SIB_WC_SUCCESS;
	wqe.wr_id = s->received;
	world_post_send(n, &wqe, s->sbuf, MSG, s->skey);
	return true;
}

static int run(struct world *w, struct side *s, unsigned hops)
{
	for (unsigned k = 0; k < hops; k++)
		if (!hop(w, (int)(k & 1) ^ 1, &s[(k & 1) ^ 1]))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	bool udp = argc > 1 && !strcmp(argv[1], "-u");
	struct world *w = world_new_on(NULL, udp);
	static struct side s[2];
	struct sib_send_wqe first = { .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	uint64_t t0, t1;

	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	world_connect(w, SIB_MTU_4096);
	for (int i = 0; i < 2; i++) {
		s[i].skey = world_reg(&w->n[i], s[i].sbuf, MSG, 0);
		s[i].rkey = world_reg(&w->n[i], s[i].rbuf, MSG, MEMREG_ACCESS_LOCAL_WRITE);
		world_post_recv(&w->n[i], 0, s[i].rbuf, MSG, s[i].rkey);
	}
	/* Node 0 serves first; from then on each hop answers the last. */
	world_post_send(&w->n[0], &first, s[0].sbuf, MSG, s[0].skey);
	if (run(w, s, WARMUP)) {
		fprintf(stderr, "bench_hop: a SEND did not arrive during the warm-up\n");
		return 1;
	}
	t0 = now_ns();
	if (run(w, s, HOPS)) {
		fprintf(stderr, "bench_hop: a SEND did not arrive\n");
		return 1;
	}
	t1 = now_ns();
	printf("engine RC SEND hop (%s): %.0f ns per hop over %u hops "
	       "(%llu and %llu SENDs completed)\n",
	       udp ? "UDP loopback, one thread" : "in-memory link", (double)(t1 - t0) / HOPS, HOPS,
	       (unsigned long long)s[0].sent_done,
	       (unsigned long long)s[1].sent_done);
	world_free(w);
	return 0;
}

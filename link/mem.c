/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * In-memory links for unit tests of the transport: a hub joins any number
 * of links; a committed packet is queued at its destination and delivered
 * by that link's poll, in commit order.  No sockets, no threads, no time:
 * the same calls give the same packets.  One lock per hub makes it safe to
 * use from several threads all the same.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "link/link.h"

#define HUB_BUFS 1024	/* packet buffers shared by the hub's links */
#define HUB_LINKS 64
#define MEM_QUEUE 256	/* packets waiting at one link; more are dropped */
#define MEM_PORT 4791

struct mem_pkt {
	uint16_t buf; /* index into the hub's buffers */
	uint16_t len;
	struct sib_endpoint from;
};

struct mem_link {
	struct sib_link link;
	struct sib_mem_hub *hub;
	int efd;
	struct mem_pkt q[MEM_QUEUE]; /* ring, under the hub lock */
	unsigned head, count;
	bool armed; /* a waiter may sleep on efd (mem_wait_arm); under the hub lock */
	pthread_mutex_t poll_lock; /* one poller at a time (link.h) */
};

struct sib_mem_hub {
	pthread_mutex_t lock;
	uint8_t *mem;
	uint16_t free_bufs[HUB_BUFS];
	unsigned nfree;
	struct mem_link *links[HUB_LINKS]; /* by endpoint number - 1 */
	unsigned nlinks;
};

static struct mem_link *to_mem(struct sib_link *l)
{
	return (struct mem_link *)l;
}

static uint8_t *buf_at(struct sib_mem_hub *hub, unsigned i)
{
	return hub->mem + (size_t)i * SIB_LINK_MAX_DGRAM;
}

static unsigned buf_index(struct sib_mem_hub *hub, const uint8_t *buf)
{
	size_t off = (size_t)(buf - hub->mem);

	if (buf < hub->mem || off % SIB_LINK_MAX_DGRAM || off / SIB_LINK_MAX_DGRAM >= HUB_BUFS)
		abort(); /* not a buffer tx_alloc gave: a bug in the caller */
	return (unsigned)(off / SIB_LINK_MAX_DGRAM);
}

struct sib_mem_hub *sib_mem_hub_new(void)
{
	struct sib_mem_hub *hub = calloc(1, sizeof(*hub));

	if (!hub)
		return NULL;
	hub->mem = malloc((size_t)HUB_BUFS * SIB_LINK_MAX_DGRAM);
	if (!hub->mem) {
		free(hub);
		return NULL;
	}
	pthread_mutex_init(&hub->lock, NULL);
	for (unsigned i = 0; i < HUB_BUFS; i++)
		hub->free_bufs[i] = (uint16_t)(HUB_BUFS - 1 - i);
	hub->nfree = HUB_BUFS;
	return hub;
}

void sib_mem_hub_free(struct sib_mem_hub *hub)
{
	if (!hub)
		return;
	pthread_mutex_destroy(&hub->lock);
	free(hub->mem);
	free(hub);
}

static uint8_t *mem_tx_alloc(struct sib_link *l, size_t *cap)
{
	struct sib_mem_hub *hub = to_mem(l)->hub;
	uint8_t *buf = NULL;

	pthread_mutex_lock(&hub->lock);
	if (hub->nfree)
		buf = buf_at(hub, hub->free_bufs[--hub->nfree]);
	pthread_mutex_unlock(&hub->lock);
	if (!buf)
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_NO_BUFFER], 1);
	*cap = SIB_LINK_MAX_DGRAM;
	return buf;
}

static void mem_tx_abort(struct sib_link *l, uint8_t *buf)
{
	struct sib_mem_hub *hub = to_mem(l)->hub;
	unsigned i = buf_index(hub, buf);

	pthread_mutex_lock(&hub->lock);
	hub->free_bufs[hub->nfree++] = (uint16_t)i;
	pthread_mutex_unlock(&hub->lock);
}

/* The link at dst, or NULL; under the hub lock. */
static struct mem_link *route(struct sib_mem_hub *hub, const struct sib_endpoint *dst)
{
	for (unsigned i = 0; i < hub->nlinks; i++)
		if (hub->links[i] && sib_endpoint_equal(&hub->links[i]->link.local, dst))
			return hub->links[i];
	return NULL;
}

static void mem_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			  const struct sib_endpoint *dst)
{
	struct mem_link *m = to_mem(l);
	struct sib_mem_hub *hub = m->hub;
	unsigned i = buf_index(hub, buf);
	enum sib_link_drop why = SIB_LINK_DROP_COUNT;
	struct mem_link *to;

	pthread_mutex_lock(&hub->lock);
	to = route(hub, dst);
	if (len > SIB_LINK_MAX_DGRAM)
		why = SIB_LINK_DROP_TX_TOO_LONG;
	else if (!to)
		why = SIB_LINK_DROP_TX_NO_ROUTE;
	else if (to->count == MEM_QUEUE)
		why = SIB_LINK_DROP_RX_QUEUE_FULL;
	if (why != SIB_LINK_DROP_COUNT) {
		hub->free_bufs[hub->nfree++] = (uint16_t)i;
	} else {
		struct mem_pkt *p = &to->q[(to->head + to->count++) % MEM_QUEUE];

		p->buf = (uint16_t)i;
		p->len = (uint16_t)len;
		p->from = m->link.local;
		sib_link_count(&l->counters.tx_packets, 1);
		sib_link_count(&l->counters.tx_bytes, len);
		/* Only a waiter needs the eventfd: mem_wait_arm arms after it
		 * clears it and before it checks the count. */
		if (to->armed) {
			to->armed = false;
			eventfd_write(to->efd, 1);
		}
	}
	pthread_mutex_unlock(&hub->lock);
	if (why == SIB_LINK_DROP_RX_QUEUE_FULL)
		sib_link_count(&to->link.counters.drop[why], 1);
	else if (why != SIB_LINK_DROP_COUNT)
		sib_link_count(&l->counters.drop[why], 1);
}

static int mem_flush(struct sib_link *l)
{
	(void)l; /* commits are delivered at once */
	return 0;
}

static int mem_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct mem_link *m = to_mem(l);
	struct sib_mem_hub *hub = m->hub;
	unsigned n = 0;

	pthread_mutex_lock(&m->poll_lock);
	while (n < max) {
		struct mem_pkt p;

		pthread_mutex_lock(&hub->lock);
		if (!m->count) {
			pthread_mutex_unlock(&hub->lock);
			break;
		}
		p = m->q[m->head];
		m->head = (m->head + 1) % MEM_QUEUE;
		m->count--;
		pthread_mutex_unlock(&hub->lock);

		/* Without the hub lock: rx may send. */
		sib_link_count(&l->counters.rx_packets, 1);
		sib_link_count(&l->counters.rx_bytes, p.len);
		rx(arg, buf_at(hub, p.buf), p.len, &p.from);
		n++;

		pthread_mutex_lock(&hub->lock);
		hub->free_bufs[hub->nfree++] = p.buf;
		pthread_mutex_unlock(&hub->lock);
	}
	pthread_mutex_unlock(&m->poll_lock);
	return (int)n;
}

static int mem_wait_fd(struct sib_link *l)
{
	return to_mem(l)->efd;
}

static int mem_wait_arm(struct sib_link *l)
{
	struct mem_link *m = to_mem(l);
	eventfd_t v;
	unsigned count;

	eventfd_read(m->efd, &v);
	pthread_mutex_lock(&m->hub->lock);
	m->armed = true;
	count = m->count;
	pthread_mutex_unlock(&m->hub->lock);
	return count > 0;
}

static void mem_close(struct sib_link *l)
{
	struct mem_link *m = to_mem(l);
	struct sib_mem_hub *hub = m->hub;

	pthread_mutex_lock(&hub->lock);
	for (unsigned i = 0; i < hub->nlinks; i++)
		if (hub->links[i] == m)
			hub->links[i] = NULL;
	for (; m->count; m->count--, m->head = (m->head + 1) % MEM_QUEUE)
		hub->free_bufs[hub->nfree++] = m->q[m->head].buf;
	pthread_mutex_unlock(&hub->lock);
	close(m->efd);
	pthread_mutex_destroy(&m->poll_lock);
	free(m);
}

static const struct sib_link_ops mem_ops = {
	.kind = "mem",
	.tx_alloc = mem_tx_alloc,
	.tx_commit = mem_tx_commit,
	.tx_abort = mem_tx_abort,
	.flush = mem_flush,
	.poll = mem_poll,
	.wait_fd = mem_wait_fd,
	.wait_arm = mem_wait_arm,
	.close = mem_close,
};

int sib_link_mem_open(struct sib_mem_hub *hub, unsigned mtu, struct sib_link **out)
{
	struct mem_link *m;

	*out = NULL;
	if (mtu < 256 || mtu > IB_MAX_MTU || (mtu & (mtu - 1)))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->efd < 0) {
		int err = errno;

		free(m);
		return -err;
	}
	m->hub = hub;
	m->link.ops = &mem_ops;
	m->link.mtu = mtu;
	m->link.local.family = SIB_AF_INET;
	m->link.local.addr[0] = 192;
	m->link.local.addr[1] = 0;
	m->link.local.addr[2] = 2;
	m->link.local.port = MEM_PORT;
	pthread_mutex_init(&m->poll_lock, NULL);

	pthread_mutex_lock(&hub->lock);
	if (hub->nlinks == HUB_LINKS) {
		pthread_mutex_unlock(&hub->lock);
		close(m->efd);
		pthread_mutex_destroy(&m->poll_lock);
		free(m);
		return -ENOSPC;
	}
	hub->links[hub->nlinks++] = m;
	m->link.local.addr[3] = (uint8_t)hub->nlinks;
	pthread_mutex_unlock(&hub->lock);
	*out = &m->link;
	return 0;
}

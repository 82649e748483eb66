/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SOFTIB_CAPTURE=FILE: a link that records every packet sent and received
 * through it as pcap (wire/capture.h: ERF type 21 records, which Wireshark
 * decodes as InfiniBand; ERF port A = sent, port B = received, port C =
 * dropped by SOFTIB_FAULTS above it, which tells it through the dropped op).
 *
 * Writes go through stdio with a large buffer under one mutex, so several
 * threads may send and poll at once; the buffer is flushed at least once a
 * second (checked on each write and flush) and at close.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link/link.h"
#include "base/log.h"
#include "wire/capture.h"

#define CAPTURE_BUF_BYTES (1 << 20)
#define CAPTURE_FLUSH_NS 1000000000ull

struct capture_link {
	struct sib_link link;
	pthread_mutex_t lock;
	FILE *f;
	char *vbuf;
	char *path;
	uint64_t last_flush_ns;
	bool failed; /* a write failed: logged once, capture stopped */
};

static struct capture_link *to_capture(struct sib_link *l)
{
	return (struct capture_link *)l;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under c->lock. */
static void maybe_flush(struct capture_link *c, bool force)
{
	uint64_t now = sib_link_now_ns();

	if (c->failed || (!force && now - c->last_flush_ns < CAPTURE_FLUSH_NS))
		return;
	c->last_flush_ns = now;
	if (fflush(c->f)) {
		c->failed = true;
		sib_err("SOFTIB_CAPTURE=%s: write failed: %s; capture stopped", c->path,
			strerror(errno));
	}
}

static void record(struct capture_link *c, const uint8_t *pkt, size_t len, unsigned port)
{
	uint8_t hdr[IB_PCAP_RECORD_HDR_BYTES];
	size_t n = ib_pcap_record_header_port(hdr, realtime_ns(), len, port);

	if (!n)
		return; /* longer than a capture record can hold */
	pthread_mutex_lock(&c->lock);
	if (!c->failed) {
		if (fwrite(hdr, 1, n, c->f) != n || fwrite(pkt, 1, len, c->f) != len) {
			c->failed = true;
			sib_err("SOFTIB_CAPTURE=%s: write failed: %s; capture stopped", c->path,
				strerror(errno));
		} else {
			maybe_flush(c, false);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

static uint8_t *capture_tx_alloc(struct sib_link *l, size_t *cap)
{
	return sib_link_tx_alloc(l->inner, cap);
}

static void capture_tx_abort(struct sib_link *l, uint8_t *buf)
{
	sib_link_tx_abort(l->inner, buf);
}

static void capture_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			      const struct sib_endpoint *dst)
{
	if (len <= SIB_LINK_MAX_DGRAM)
		record(to_capture(l), buf, len, IB_PCAP_PORT_SENT);
	sib_link_tx_commit(l->inner, buf, len, dst);
}

static void capture_dropped(struct sib_link *l, const uint8_t *pkt, size_t len)
{
	if (len <= SIB_LINK_MAX_DGRAM)
		record(to_capture(l), pkt, len, IB_PCAP_PORT_DROPPED);
}

static void capture_file_flush(struct sib_link *l)
{
	struct capture_link *c = to_capture(l);

	pthread_mutex_lock(&c->lock);
	maybe_flush(c, false);
	pthread_mutex_unlock(&c->lock);
}

static int capture_flush(struct sib_link *l)
{
	capture_file_flush(l);
	return sib_link_flush(l->inner);
}

static int capture_flush_wait(struct sib_link *l)
{
	capture_file_flush(l);
	return sib_link_flush_wait(l->inner);
}

struct capture_rx {
	struct capture_link *c;
	sib_link_rx_fn rx;
	void *arg;
};

static void capture_rx_one(void *arg, const uint8_t *pkt, size_t len,
			   const struct sib_endpoint *from)
{
	struct capture_rx *r = arg;

	record(r->c, pkt, len, IB_PCAP_PORT_RECEIVED);
	r->rx(r->arg, pkt, len, from);
}

static int capture_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct capture_rx r = { to_capture(l), rx, arg };

	return sib_link_poll(l->inner, max, capture_rx_one, &r);
}

static int capture_wait_fd(struct sib_link *l)
{
	return sib_link_wait_fd(l->inner);
}

static int capture_wait_arm(struct sib_link *l)
{
	return sib_link_wait_arm(l->inner);
}

static uint64_t capture_next_deadline(struct sib_link *l)
{
	return sib_link_next_deadline_ns(l->inner);
}

static void capture_close(struct sib_link *l)
{
	struct capture_link *c = to_capture(l);

	sib_link_close(l->inner);
	pthread_mutex_lock(&c->lock);
	maybe_flush(c, true);
	pthread_mutex_unlock(&c->lock);
	fclose(c->f);
	free(c->vbuf);
	free(c->path);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static const struct sib_link_ops capture_ops = {
	.kind = "capture",
	.tx_alloc = capture_tx_alloc,
	.tx_commit = capture_tx_commit,
	.tx_abort = capture_tx_abort,
	.flush = capture_flush,
	.flush_wait = capture_flush_wait,
	.poll = capture_poll,
	.wait_fd = capture_wait_fd,
	.wait_arm = capture_wait_arm,
	.next_deadline_ns = capture_next_deadline,
	.dropped = capture_dropped,
	.close = capture_close,
};

int sib_link_capture_wrap(struct sib_link *inner, const char *path, struct sib_link **out)
{
	uint8_t fh[IB_PCAP_FILE_HDR_BYTES];
	struct capture_link *c;
	int err;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->vbuf = malloc(CAPTURE_BUF_BYTES);
	c->path = strdup(path);
	if (!c->vbuf || !c->path) {
		err = ENOMEM;
		goto fail;
	}
	c->f = fopen(path, "we");
	if (!c->f) {
		err = errno;
		sib_err("SOFTIB_CAPTURE=%s: cannot create the file: %s; set SOFTIB_CAPTURE to a "
			"writable path",
			path, strerror(err));
		goto fail;
	}
	setvbuf(c->f, c->vbuf, _IOFBF, CAPTURE_BUF_BYTES);
	ib_pcap_file_header(fh);
	if (fwrite(fh, 1, sizeof(fh), c->f) != sizeof(fh) || fflush(c->f)) {
		err = errno ? errno : EIO;
		sib_err("SOFTIB_CAPTURE=%s: write failed: %s", path, strerror(err));
		fclose(c->f);
		goto fail;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->last_flush_ns = sib_link_now_ns();
	c->link.ops = &capture_ops;
	c->link.inner = inner;
	c->link.local = inner->local;
	c->link.mtu = inner->mtu;
	*out = &c->link;
	return 0;
fail:
	free(c->vbuf);
	free(c->path);
	free(c);
	return -err;
}

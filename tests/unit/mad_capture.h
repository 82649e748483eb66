/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Test-only access to the MADs in the real hardware capture
 * ($SOFTIB_SHARED_DIR/data/ib-hw-capture.pcap): pcap, link type 197 (ERF),
 * each record a 16-byte ERF header and then the IB packet from the LRH on.
 * The real capture reader lives elsewhere; this is just enough to find MADs.
 */
#ifndef SIB_TESTS_MAD_CAPTURE_H
#define SIB_TESTS_MAD_CAPTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/mad.h"

#include "skip.h"

struct mad_capture {
	uint8_t *buf;
	size_t len;
	char absent[4200]; /* why buf is NULL */
};

static inline uint32_t cap_u32(const uint8_t *p, int swap)
{
	return swap ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		    : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* 0 when the capture is loaded; -1, with the reason in c->absent, when it
 * is not. */
static inline int mad_capture_load(struct mad_capture *c)
{
	FILE *f;
	long n;

	c->buf = NULL;
	c->len = 0;
	f = sib_hw_capture_open(c->absent, sizeof(c->absent));
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		c->buf = malloc((size_t)n);
		if (c->buf && fread(c->buf, 1, (size_t)n, f) == (size_t)n)
			c->len = (size_t)n;
	}
	fclose(f);
	if (!c->len) {
		free(c->buf);
		c->buf = NULL;
		snprintf(c->absent, sizeof(c->absent), "$SOFTIB_SHARED_DIR/%s is unreadable",
			 SIB_HW_CAPTURE);
		return -1;
	}
	return 0;
}

static inline void mad_capture_free(struct mad_capture *c)
{
	free(c->buf);
	c->buf = NULL;
}

/*
 * The 256-byte MAD of frame `frame` (numbered from 1, as tshark does), or
 * NULL when the frame is missing or does not hold a whole UD MAD.
 */
static inline const uint8_t *mad_capture_frame(const struct mad_capture *c, unsigned frame)
{
	size_t off = 24;
	int swap;

	if (c->len < 24)
		return NULL;
	if (cap_u32(c->buf, 0) == 0xa1b2c3d4)
		swap = 0;
	else if (cap_u32(c->buf, 1) == 0xa1b2c3d4)
		swap = 1;
	else
		return NULL;
	if (cap_u32(c->buf + 20, swap) != 197)
		return NULL;
	for (unsigned i = 1; off + 16 <= c->len; i++) {
		uint32_t incl = cap_u32(c->buf + off + 8, swap);
		const uint8_t *rec = c->buf + off + 16;
		size_t mad_at;

		if (incl > c->len - off - 16)
			return NULL;
		if (i == frame) {
			if (incl < 16 + 8)
				return NULL;
			/* ERF header, then LRH; LNH 3 means a GRH follows it */
			mad_at = 16 + 8 + ((rec[16 + 1] & 3) == 3 ? 40 : 0) + 12 + 8;
			if (mad_at + IB_MAD_BYTES > incl)
				return NULL;
			return rec + mad_at;
		}
		off += 16 + incl;
	}
	return NULL;
}


/*
 * The cmocka fixture both MAD tests use: the capture loaded once per group,
 * and the MAD of one frame, skipping (with the reason) when ../shared is
 * absent.  Include after <cmocka.h>.
 */
static struct mad_capture cap;

static int cap_setup(void **state)
{
	(void)state;
	mad_capture_load(&cap);
	return 0;
}

static int cap_teardown(void **state)
{
	(void)state;
	mad_capture_free(&cap);
	return 0;
}

static inline const uint8_t *cap_mad(unsigned frame)
{
	const uint8_t *m;

	if (!cap.buf)
		sib_skip("%s", cap.absent);
	m = mad_capture_frame(&cap, frame);
	if (!m)
		fail_msg("frame %u of the capture holds no MAD", frame);
	return m;
}

#endif

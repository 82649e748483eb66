/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A port's end of the cable (cable_port.h).
 */
#include "mgmt/cable_port.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

struct attach_wait {
	const struct sib_endpoint *sw;
	struct sib_cable_msg msg;
	int got; /* 0: nothing yet, 1: ATTACHED, -1: REFUSED */
};

static void attach_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct attach_wait *w = arg;
	struct sib_cable_msg m;

	if (w->got || !sib_endpoint_equal(from, w->sw) || !sib_cable_is(pkt, len) ||
	    sib_cable_decode(pkt, len, &m))
		return;
	if (m.type == SIB_CABLE_ATTACHED || m.type == SIB_CABLE_REFUSED) {
		w->msg = m;
		w->got = m.type == SIB_CABLE_ATTACHED ? 1 : -1;
	}
}

int sib_cable_say(struct sib_link *link, const struct sib_endpoint *sw, uint8_t type)
{
	struct sib_cable_msg m = { .type = type };
	uint8_t pkt[SIB_CABLE_BYTES];
	int rc = sib_link_send(link, pkt, sib_cable_encode(&m, pkt), sw);

	return rc ? rc : sib_link_flush_wait(link);
}

int sib_cable_attach(struct sib_link *link, const char *fabric, const char *node,
		     unsigned timeout_ms, struct sib_cable_msg *got, struct sib_endpoint *sw)
{
	struct sib_cable_msg m = { .type = SIB_CABLE_ATTACH };
	struct attach_wait w = { .sw = sw };
	uint8_t pkt[SIB_CABLE_BYTES];
	uint64_t end = sib_link_now_ns() + timeout_ms * 1000000ull, next = 0;

	if (sib_endpoint_parse(fabric, SIB_FABRIC_PORT_DEFAULT, sw))
		return -EINVAL;
	snprintf(m.id, sizeof(m.id), "%s", node ? node : "");
	sib_cable_encode(&m, pkt);
	while (!w.got) {
		uint64_t now = sib_link_now_ns();
		struct pollfd pfd = { .fd = sib_link_wait_fd(link), .events = POLLIN };

		if (now >= end)
			return -ETIMEDOUT;
		if (now >= next) {
			sib_link_send(link, pkt, SIB_CABLE_BYTES, sw);
			sib_link_flush_wait(link);
			next = now + 200000000ull;
		}
		if (sib_link_wait_arm(link) == 0)
			poll(&pfd, 1, (int)((next < end ? next : end) - now) / 1000000 + 1);
		while (!w.got && sib_link_poll(link, 64, attach_rx, &w) > 0)
			;
	}
	*got = w.msg;
	return w.got > 0 ? 0 : -ECONNREFUSED;
}

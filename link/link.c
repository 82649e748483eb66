/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every link shares: endpoints, counters, and building a port's link
 * stack from the environment.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link/socket.h"
#include "base/log.h"

bool sib_endpoint_equal(const struct sib_endpoint *a, const struct sib_endpoint *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

uint32_t sib_endpoint_hash(const struct sib_endpoint *ep)
{
	const uint8_t *p = (const uint8_t *)ep;
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < sizeof(*ep); i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

const char *sib_endpoint_str(const struct sib_endpoint *ep, char *buf)
{
	char a[INET6_ADDRSTRLEN];

	if (ep->family == SIB_AF_INET) {
		inet_ntop(AF_INET, ep->addr, a, sizeof(a));
		snprintf(buf, SIB_ENDPOINT_STRLEN, "%s:%u", a, ep->port);
	} else if (ep->family == SIB_AF_INET6) {
		inet_ntop(AF_INET6, ep->addr, a, sizeof(a));
		snprintf(buf, SIB_ENDPOINT_STRLEN, "[%s]:%u", a, ep->port);
	} else {
		snprintf(buf, SIB_ENDPOINT_STRLEN, "(none)");
	}
	return buf;
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static void set_v6(struct sib_endpoint *ep, const uint8_t a[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(a, mapped, sizeof(mapped))) {
		ep->family = SIB_AF_INET;
		memcpy(ep->addr, a + 12, 4);
	} else {
		ep->family = SIB_AF_INET6;
		memcpy(ep->addr, a, 16);
	}
}

int sib_endpoint_parse(const char *s, uint16_t default_port, struct sib_endpoint *ep)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *port_s = NULL;
	uint8_t a[16];
	size_t n;

	memset(ep, 0, sizeof(*ep));
	ep->port = default_port;
	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -EINVAL;
		n = (size_t)(close - s - 1);
		if (close[1] == ':')
			port_s = close + 2;
		if (n >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, n);
		host[n] = 0;
		if (inet_pton(AF_INET6, host, a) != 1)
			return -EINVAL;
		set_v6(ep, a);
	} else {
		const char *colon = strchr(s, ':');

		if (colon && strchr(colon + 1, ':')) { /* bare IPv6, no port */
			if (inet_pton(AF_INET6, s, a) != 1)
				return -EINVAL;
			set_v6(ep, a);
			return 0;
		}
		n = colon ? (size_t)(colon - s) : strlen(s);
		if (n >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, n);
		host[n] = 0;
		if (inet_pton(AF_INET, host, ep->addr) != 1)
			return -EINVAL;
		ep->family = SIB_AF_INET;
		if (colon)
			port_s = colon + 1;
	}
	if (port_s && parse_port(port_s, &ep->port))
		return -EINVAL;
	return 0;
}

int sib_endpoint_from_sockaddr(const struct sockaddr *sa, socklen_t len, struct sib_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		ep->family = SIB_AF_INET;
		memcpy(ep->addr, &in->sin_addr, 4);
		ep->port = ntohs(in->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		set_v6(ep, in6->sin6_addr.s6_addr);
		ep->port = ntohs(in6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

socklen_t sib_endpoint_to_sockaddr(const struct sib_endpoint *ep, int af,
				   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (af == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (ep->family != SIB_AF_INET)
			return 0;
		in->sin_family = AF_INET;
		in->sin_port = htons(ep->port);
		memcpy(&in->sin_addr, ep->addr, 4);
		return sizeof(*in);
	}
	if (af == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(ep->port);
		if (ep->family == SIB_AF_INET) {
			in6->sin6_addr.s6_addr[10] = 0xff;
			in6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&in6->sin6_addr.s6_addr[12], ep->addr, 4);
		} else if (ep->family == SIB_AF_INET6) {
			memcpy(&in6->sin6_addr, ep->addr, 16);
		} else {
			return 0;
		}
		return sizeof(*in6);
	}
	return 0;
}

static const char *const drop_names[SIB_LINK_DROP_COUNT] = {
	[SIB_LINK_DROP_TX_ERROR] = "tx_error",
	[SIB_LINK_DROP_TX_NO_ROUTE] = "tx_no_route",
	[SIB_LINK_DROP_TX_TOO_LONG] = "tx_too_long",
	[SIB_LINK_DROP_TX_NO_BUFFER] = "tx_no_buffer",
	[SIB_LINK_DROP_RX_TRUNCATED] = "rx_truncated",
	[SIB_LINK_DROP_RX_MALFORMED] = "rx_malformed",
	[SIB_LINK_DROP_RX_QUEUE_FULL] = "rx_queue_full",
};

static const char *const fault_names[SIB_FAULT_COUNT] = {
	[SIB_FAULT_DROP] = "drop",	 [SIB_FAULT_DUP] = "dup",     [SIB_FAULT_REORDER] = "reorder",
	[SIB_FAULT_CORRUPT] = "corrupt", [SIB_FAULT_DELAY] = "delay",
};

const char *sib_link_drop_name(enum sib_link_drop d)
{
	return (unsigned)d < SIB_LINK_DROP_COUNT ? drop_names[d] : "?";
}

const char *sib_fault_name(enum sib_fault f)
{
	return (unsigned)f < SIB_FAULT_COUNT ? fault_names[f] : "?";
}

void sib_link_close(struct sib_link *l)
{
	if (l)
		l->ops->close(l);
}

void sib_link_abandoned_by(struct sib_link *l, pthread_t thread)
{
	for (; l; l = l->inner)
		if (l->ops->abandoned_by)
			l->ops->abandoned_by(l, thread);
}

void sib_link_dropped(struct sib_link *l, const uint8_t *pkt, size_t len)
{
	for (; l; l = l->inner)
		if (l->ops->dropped)
			l->ops->dropped(l, pkt, len);
}

int sib_link_send(struct sib_link *l, const void *pkt, size_t len, const struct sib_endpoint *dst)
{
	size_t cap;
	uint8_t *buf = sib_link_tx_alloc(l, &cap);

	if (!buf)
		return -ENOBUFS;
	if (len > cap) {
		sib_link_tx_abort(l, buf);
		sib_link_count(&l->counters.drop[SIB_LINK_DROP_TX_TOO_LONG], 1);
		return -EMSGSIZE;
	}
	memcpy(buf, pkt, len);
	sib_link_tx_commit(l, buf, len, dst);
	return 0;
}

static uint64_t load(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

void sib_link_counters_get(const struct sib_link *l, struct sib_link_counters *out)
{
	const struct sib_link *bottom = l;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < IB_PKT_ERR_COUNT; i++)
		out->pkt_err[i] = load(&l->counters.pkt_err[i]);
	for (const struct sib_link *k = l; k; k = k->inner) {
		for (unsigned i = 0; i < SIB_LINK_DROP_COUNT; i++)
			out->drop[i] += load(&k->counters.drop[i]);
		for (unsigned i = 0; i < SIB_FAULT_COUNT; i++)
			out->fault[i] += load(&k->counters.fault[i]);
		bottom = k;
	}
	out->tx_packets = load(&bottom->counters.tx_packets);
	out->tx_bytes = load(&bottom->counters.tx_bytes);
	out->rx_packets = load(&bottom->counters.rx_packets);
	out->rx_bytes = load(&bottom->counters.rx_bytes);
}

void sib_link_count_pkt_err(struct sib_link *l, enum ib_pkt_err err)
{
	if ((unsigned)err < IB_PKT_ERR_COUNT)
		sib_link_count(&l->counters.pkt_err[err], 1);
}

uint64_t sib_link_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* The UDP link backend when SOFTIB_LINK is unset: the socket one.  The
 * io_uring link moves as much data, but one io_uring request costs about
 * twice the system call it replaces, so its ping-pong latency is 1.1 to
 * 1.2 times the socket link's (make bench: uring_cost; man/softib-performance.7). */
#define DEFAULT_LINK_URING false

/* SOFTIB_LINK=socket|uring: the UDP link's backend.  When io_uring cannot
 * be set up, the socket link, saying so once per process: at info level
 * when uring is only the default, at warn level when the user asked. */
static int open_udp(struct sib_link **l)
{
	static bool uring_missing;
	const char *which = env("SOFTIB_LINK");
	const char *addr = env("SOFTIB_ADDR"), *netdev = env("SOFTIB_NETDEV");
	bool uring = DEFAULT_LINK_URING;
	char why[128];
	int ret;

	if (which && !strcmp(which, "uring")) {
		uring = true;
	} else if (which && !strcmp(which, "socket")) {
		uring = false;
	} else if (which) {
		sib_err("SOFTIB_LINK=%s is not a link: write socket or uring", which);
		return -EINVAL;
	}
	if (uring && !__atomic_load_n(&uring_missing, __ATOMIC_RELAXED)) {
		ret = sib_link_uring_open_why(addr, netdev, l, why, sizeof(why));
		if (ret != -EOPNOTSUPP)
			return ret;
		if (!__atomic_exchange_n(&uring_missing, true, __ATOMIC_RELAXED)) {
			if (which)
				sib_warn("SOFTIB_LINK=uring: io_uring is unavailable here (%s); "
					 "using the socket link",
					 why);
			else
				sib_info("link: io_uring is unavailable here (%s); using the "
					 "socket link",
					 why);
		}
	}
	return sib_link_udp_open(addr, netdev, l);
}

int sib_link_open_env(struct sib_link **out)
{
	static uint64_t links_opened; /* the fault stream of each link in a process */
	const char *faults = env("SOFTIB_FAULTS");
	const char *capture = env("SOFTIB_CAPTURE");
	const char *rate = env("SOFTIB_RATE");
	struct sib_fault_cfg cfg;
	struct sib_link *l, *w;
	uint64_t rate_bps = 0;
	int ret;

	*out = NULL;
	if (rate && (ret = sib_link_rate_parse(rate, &rate_bps)))
		return ret;
	if (faults) {
		ret = sib_fault_cfg_parse(faults, &cfg);
		if (ret)
			return ret;
		cfg.stream = __atomic_fetch_add(&links_opened, 1, __ATOMIC_RELAXED);
	}
	ret = open_udp(&l);
	if (ret)
		return ret;
	if (capture) {
		ret = sib_link_capture_wrap(l, capture, &w);
		if (ret) {
			sib_link_close(l);
			return ret;
		}
		l = w;
	}
	if (faults) {
		ret = sib_link_faults_wrap(l, &cfg, &w);
		if (ret) {
			sib_link_close(l);
			return ret;
		}
		l = w;
	}
	ret = sib_link_sched_wrap(l, rate_bps, &w);
	if (ret) {
		sib_link_close(l);
		return ret;
	}
	*out = w;
	return 0;
}

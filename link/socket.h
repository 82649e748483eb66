/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the two UDP link backends share (socket.c): turning SOFTIB_ADDR
 * / SOFTIB_NETDEV into a bound UDP socket, and the port's active MTU.
 *   udp.c    the link: queues, GSO on send, GRO on receive, with its
 *            system calls through struct sib_udp_io: plain ones there
 *   uring.c  the same calls through io_uring (SOFTIB_LINK=uring)
 * Internal to transport/.
 */
#ifndef SIB_LINK_SOCKET_H
#define SIB_LINK_SOCKET_H

#include <stdlib.h>
#include "link/link.h"

/* Socket buffer sizes asked for (net.core.[rw]mem_max may cap them). */
#define SIB_LINK_SOCK_BUF_BYTES (16 << 20)

/*
 * A non-blocking UDP socket bound as sib_link_udp_open describes (addr,
 * else netdev's first IPv4 address, else 127.0.0.1), with deep buffers and
 * SO_RXQ_OVFL on.  Fills *local (the bound endpoint) and *af (AF_INET or
 * AF_INET6).  Returns the fd, or a negative errno after a log line naming
 * the knob to change.
 */
int sib_link_socket_open(const char *addr, const char *netdev, struct sib_endpoint *local,
			 int *af);

/* The active IB MTU of a link bound to ep (netdev: its interface, or NULL
 * to find the interface holding ep's address), from the interface MTU. */
unsigned sib_link_port_mtu(const struct sib_endpoint *ep, const char *netdev);

/*
 * How udp.c asks the kernel to send and receive: each sender's scratch
 * and each receive context has an I/O context of its own, used only
 * under that scratch's or context's lock.
 */
struct sib_udp_io {
	const char *what; /* in the link's open line: "sockets", "io_uring" */
	/* A context for fd; 0, or a negative errno (-EOPNOTSUPP after saying
	 * in why[0..why_len) what failed, when this I/O is unavailable here). */
	int (*open)(void **ctx, int fd, char *why, size_t why_len);
	void (*close)(void *ctx);
	/* sendmmsg(fd, m, n, 0)'s contract: how many messages from the first
	 * were sent (msg_len set), or -1 with errno for the first's failure. */
	int (*sendmmsg)(void *ctx, int fd, struct mmsghdr *m, unsigned n);
	/* recvmmsg(fd, m, n, MSG_DONTWAIT, NULL)'s contract, never blocking;
	 * fewer than n may leave datagrams waiting (the io_uring link cannot
	 * ask cheaply): the socket stays readable while they do, so a poller
	 * that sleeps on it (link.h) misses none. */
	int (*recvmmsg)(void *ctx, int fd, struct mmsghdr *m, unsigned n);
};

/* The UDP link (udp.c) with its system calls through io; why as for
 * sib_link_uring_open_why. */
int sib_link_udp_open_io(const char *addr, const char *netdev, const struct sib_udp_io *io,
			 struct sib_link **out, char *why, size_t why_len);

/*
 * sib_link_uring_open, saying in why[0..why_len) what failed when io_uring
 * cannot be set up here; then it returns -EOPNOTSUPP and logs only at
 * debug level, so that the caller can fall back to the socket link.
 */
int sib_link_uring_open_why(const char *addr, const char *netdev, struct sib_link **out,
			    char *why, size_t why_len);


/* The index of send buffer buf in a pool of SIB_LINK_TX_BUFS buffers of
 * SIB_LINK_MAX_DGRAM bytes at mem.  A buffer the pool did not hand out is a
 * bug in the caller: abort rather than corrupt the pool. */
static inline unsigned sib_link_tx_slot(const uint8_t *mem, const uint8_t *buf)
{
	size_t off = (size_t)(buf - mem);

	if (buf < mem || off % SIB_LINK_MAX_DGRAM || off / SIB_LINK_MAX_DGRAM >= SIB_LINK_TX_BUFS)
		abort();
	return (unsigned)(off / SIB_LINK_MAX_DGRAM);
}

#endif

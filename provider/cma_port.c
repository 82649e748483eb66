/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Port numbers for rdma_cm ids.  The kernel's rdma_cm keeps, per network
 * namespace and port space, which ids hold which address and port, and
 * applies the rules of TCP to them: a wildcard address conflicts with
 * every address on its port, REUSEADDR lets ids share a port until one of
 * them listens, AFONLY keeps IPv6 from IPv4, port 0 picks an ephemeral
 * port.  A real TCP socket bound to the same address and port, with the
 * same options, obeys exactly those rules host-wide -- across processes,
 * which is what no per-process table can do -- and the kernel frees it
 * when the process dies, however it dies.  So each bound id holds one,
 * listening when the id listens (it never accepts; `ss -lt` shows the
 * listener).  What differs: the ports are TCP's, so an rdma_cm id and a
 * TCP socket cannot hold the same port, and rdma_cm's TCP and UDP port
 * spaces share it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "provider/rdma_cm.h"

int cma_resv_bind(struct cma_resv *r, struct sockaddr_storage *addr, bool reuseaddr, int afonly)
{
	struct sockaddr_storage any;
	struct sockaddr *sa = (struct sockaddr *)addr;
	socklen_t len;
	int one = 1, fd, err;

	r->fd = -1;
	r->listening = false;
	if (sa->sa_family == SIB_AF_IB) {
		/* An AF_IB id names a port by its ServiceID: it takes the
		 * port on every address, as a wildcard IPv6 socket does. */
		struct sib_sockaddr_ib *ib = (struct sib_sockaddr_ib *)addr;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&any;

		memset(&any, 0, sizeof(any));
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)(be64toh(ib->sib_sid) & be64toh(ib->sib_sid_mask)));
		sa = (struct sockaddr *)&any;
		afonly = 0;
	}
	len = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (reuseaddr)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6 && afonly >= 0)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &afonly, sizeof(afonly));
	if (bind(fd, sa, len)) {
		err = errno;
		close(fd);
		return -err;
	}
	if (getsockname(fd, (struct sockaddr *)&any, &len) == 0) {
		uint16_t port = any.ss_family == AF_INET ? ((struct sockaddr_in *)&any)->sin_port
							 : ((struct sockaddr_in6 *)&any)->sin6_port;

		if (addr->ss_family == AF_INET)
			((struct sockaddr_in *)addr)->sin_port = port;
		else if (addr->ss_family == AF_INET6)
			((struct sockaddr_in6 *)addr)->sin6_port = port;
		else {
			struct sib_sockaddr_ib *ib = (struct sib_sockaddr_ib *)addr;

			ib->sib_sid = htobe64((be64toh(ib->sib_sid) & ~0xffffull) | ntohs(port));
			ib->sib_sid_mask = htobe64(be64toh(ib->sib_sid_mask) | 0xffffull);
		}
	}
	r->fd = fd;
	return 0;
}

int cma_resv_listen(struct cma_resv *r)
{
	if (r->fd < 0)
		return -EINVAL;
	if (r->listening)
		return 0;
	/* Backlog 0: it is never accepted from; a TCP client gets no more
	 * than the kernel's minimum queue. */
	if (listen(r->fd, 0))
		return -errno;
	r->listening = true;
	return 0;
}

void cma_resv_release(struct cma_resv *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->listening = false;
}

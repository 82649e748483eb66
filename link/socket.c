/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The UDP socket both link backends use (socket.h): where to bind it
 * (SOFTIB_ADDR, SOFTIB_NETDEV), its options, and the port's active MTU from
 * the interface MTU (libnl).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "link/socket.h"
#include "base/log.h"

/* ---------------------------------------------------------------- MTU */

unsigned sib_link_ib_mtu_for(unsigned if_mtu, bool ipv6)
{
	/* IP and UDP headers, then the largest IBA packet around the payload:
	 * LRH, GRH, BTH, the biggest set of ETHs, ICRC, VCRC (IBA 7.7, 9.2). */
	unsigned ip_udp = (ipv6 ? 40u : 20u) + 8u;
	unsigned ib_overhead = IB_MAX_PACKET - IB_MAX_MTU;

	for (unsigned m = IB_MAX_MTU; m > 256; m /= 2)
		if (if_mtu >= ip_udp + ib_overhead + m)
			return m;
	return 256; /* below that IP fragments the datagram: slower, still correct */
}

bool sib_endpoint_ifname(const struct sib_endpoint *ep, char name[IF_NAMESIZE])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		struct sib_endpoint a;

		if (!i->ifa_addr ||
		    sib_endpoint_from_sockaddr(i->ifa_addr,
					       i->ifa_addr->sa_family == AF_INET
						       ? sizeof(struct sockaddr_in)
						       : sizeof(struct sockaddr_in6),
					       &a))
			continue;
		if (a.family == ep->family && !memcmp(a.addr, ep->addr, sizeof(a.addr))) {
			snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* The interface MTU for packets leaving through `name`, or through any up
 * interface (the smallest) when name is NULL.  0 when unknown. */
static unsigned if_mtu_of(const char *name)
{
	struct nl_sock *sk = nl_socket_alloc();
	unsigned mtu = 0;

	if (!sk)
		return 0;
	if (nl_connect(sk, NETLINK_ROUTE) < 0)
		goto out;
	if (name) {
		struct rtnl_link *link;

		if (rtnl_link_get_kernel(sk, 0, name, &link) >= 0) {
			mtu = rtnl_link_get_mtu(link);
			rtnl_link_put(link);
		}
	} else {
		struct nl_cache *cache;

		if (rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache) >= 0) {
			for (struct nl_object *o = nl_cache_get_first(cache); o;
			     o = nl_cache_get_next(o)) {
				struct rtnl_link *link = (struct rtnl_link *)o;
				unsigned flags = rtnl_link_get_flags(link);
				unsigned m = rtnl_link_get_mtu(link);

				if ((flags & IFF_UP) && !(flags & IFF_LOOPBACK) && m &&
				    (!mtu || m < mtu))
					mtu = m;
			}
			nl_cache_free(cache);
		}
	}
out:
	nl_socket_free(sk);
	return mtu;
}

unsigned sib_link_port_mtu(const struct sib_endpoint *ep, const char *netdev)
{
	char name[IF_NAMESIZE];
	const char *ifname = netdev;
	unsigned mtu;

	if (!ifname && sib_endpoint_ifname(ep, name))
		ifname = name;
	mtu = if_mtu_of(ifname);
	if (!mtu) {
		mtu = 1500;
		sib_warn("cannot read the MTU of %s with libnl; assuming %u",
			 ifname ? ifname : "the host's interfaces", mtu);
	}
	return sib_link_ib_mtu_for(mtu, ep->family == SIB_AF_INET6);
}

static int netdev_ipv4(const char *netdev, struct sib_endpoint *ep)
{
	struct ifaddrs *ifa, *i;
	bool exists = false;
	int ret = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (strcmp(i->ifa_name, netdev))
			continue;
		exists = true;
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !sib_endpoint_from_sockaddr(i->ifa_addr, sizeof(struct sockaddr_in), ep)) {
			ep->port = 0;
			ret = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	if (!exists) {
		sib_err("SOFTIB_NETDEV=%s: no such network interface; set SOFTIB_NETDEV to one "
			"that `ip addr` lists, or SOFTIB_ADDR to an address",
			netdev);
		return -ENODEV;
	}
	if (ret)
		sib_err("SOFTIB_NETDEV=%s has no IPv4 address; give it one, or set SOFTIB_ADDR",
			netdev);
	return ret;
}

static int bind_socket(const struct sib_endpoint *want, const char *knob,
		       struct sib_endpoint *local, int *af)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, size = SIB_LINK_SOCK_BUF_BYTES;
	char s[SIB_ENDPOINT_STRLEN];

	*af = want->family == SIB_AF_INET6 ? AF_INET6 : AF_INET;
	fd = socket(*af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;

		sib_err("cannot create a UDP socket: %s", strerror(err));
		return -err;
	}
	/* Deep socket buffers absorb bursts; FORCE works only with
	 * CAP_NET_ADMIN, otherwise net.core.[rw]mem_max caps the request. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (*af == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));

	len = sib_endpoint_to_sockaddr(want, *af, &ss);
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		int err = errno;

		sib_err("cannot bind the UDP socket to %s: %s; set %s to an address of this "
			"host%s",
			sib_endpoint_str(want, s), strerror(err), knob,
			want->port ? " and a free port (or none, for an ephemeral one)" : "");
		close(fd);
		return -err;
	}
	len = sizeof(ss);
	errno = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    sib_endpoint_from_sockaddr((struct sockaddr *)&ss, len, local)) {
		int err = errno ? errno : EAFNOSUPPORT;

		sib_err("getsockname on the UDP socket: %s", strerror(err));
		close(fd);
		return -err;
	}
	return fd;
}

int sib_link_socket_open(const char *addr, const char *netdev, struct sib_endpoint *local,
			 int *af)
{
	struct sib_endpoint want;
	const char *knob = "SOFTIB_ADDR";
	int ret;

	if (addr) {
		if (sib_endpoint_parse(addr, 0, &want)) {
			sib_err("SOFTIB_ADDR=%s is not an address: write an IPv4 or IPv6 address, "
				"optionally with a port (127.0.0.1, 10.0.0.2:7000, [::1]:7000)",
				addr);
			return -EINVAL;
		}
	} else if (netdev) {
		knob = "SOFTIB_NETDEV";
		ret = netdev_ipv4(netdev, &want);
		if (ret)
			return ret;
	} else {
		sib_endpoint_parse("127.0.0.1", 0, &want);
	}
	return bind_socket(&want, knob, local, af);
}

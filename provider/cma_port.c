/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Port numbers for rdma_cm ids, in the kernel's rdma_cm port spaces
 * (drivers/infiniband/core/cma.c: cma_ps_alloc, cma_get_port): per network
 * namespace, the TCP, UDP, IB and IPoIB port spaces each have every port,
 * apart from one another and from the host's TCP and UDP ports.  iSER
 * beside iSCSI on 3260 (tgtd), UCX's rdma_cm and TCP listeners on one
 * port, and libfabric's XRC (a UDP-space id on its TCP-space id's port)
 * rely on that.
 *
 * Each bound id holds an abstract AF_UNIX socket whose name says its port
 * space, port, address and options (struct cma_holder); a listening id's
 * listens, so `ss -xl` shows it.  Abstract names are unique per network
 * namespace, as the kernel's port spaces are; they take no host port and
 * no file, and the kernel frees them when the process dies, however it
 * dies.  (A lock file in the run directory would be per user and shared
 * by namespaces: neither is the kernel's.)  The kernel's rules
 * (cma_check_port, cma_port_is_unique) look at every holder of a port:
 * they are read from /proc/net/unix while the port's lock, another
 * abstract name, is held, so the check and the bind are one step for all
 * processes of the namespace.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "provider/rdma_cm.h"

#define NAME_PREFIX "softib-rdma_cm/"
#define PROT_SOCK 1024		/* the kernel's cma_use_port: below, CAP_NET_BIND_SERVICE */
#define LOCK_WAIT_NS 2000000000 /* a port's lock held longer: its holder is stopped */
#define LOCK_POLL_NS 200000

static const char *ps_name(uint16_t ps)
{
	switch (ps) {
	case RDMA_PS_TCP:
		return "tcp";
	case RDMA_PS_UDP:
		return "udp";
	case RDMA_PS_IB:
		return "ib";
	case RDMA_PS_IPOIB:
		return "ipoib";
	}
	return NULL;
}

static const char *fam_name(uint8_t fam)
{
	return fam == AF_INET ? "ip4" : fam == AF_INET6 ? "ip6" : "ib";
}

/* The name of h, or of its port's lock when lock; its length for bind. */
static socklen_t holder_name(const struct cma_holder *h, uint32_t nonce, bool lock,
			     struct sockaddr_un *sun)
{
	char addr[INET6_ADDRSTRLEN] = "*";
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (lock) {
		n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, NAME_PREFIX "%s/%u/lock",
			     ps_name(h->ps), h->port);
	} else {
		if (!h->any)
			inet_ntop(h->fam == AF_INET ? AF_INET : AF_INET6, h->addr, addr, sizeof(addr));
		n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
			     NAME_PREFIX "%s/%u/%s/%s/%s%s%s/%x.%x", ps_name(h->ps), h->port,
			     fam_name(h->fam), addr, h->reuseaddr ? "r" : "",
			     h->afonly ? "o" : "", h->reuseaddr || h->afonly ? "" : "-",
			     (unsigned)getpid(), nonce);
	}
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* A holder from a name of /proc/net/unix (after its '@'); false when the
 * name is not one, or not of port space ps (port, when not 0). */
static bool parse_holder(const char *name, uint16_t ps, uint16_t port, struct cma_holder *h)
{
	char buf[108], *f[7], *save = NULL, *end;
	unsigned n = 0;
	unsigned long p;

	if (strncmp(name, NAME_PREFIX, strlen(NAME_PREFIX)))
		return false;
	snprintf(buf, sizeof(buf), "%s", name + strlen(NAME_PREFIX));
	for (char *t = strtok_r(buf, "/", &save); t && n < 7; t = strtok_r(NULL, "/", &save))
		f[n++] = t;
	if (n != 6 || strcmp(f[0], ps_name(ps)))
		return false;
	p = strtoul(f[1], &end, 10);
	if (*end || p == 0 || p > 0xffff || (port && p != port))
		return false;
	memset(h, 0, sizeof(*h));
	h->ps = ps;
	h->port = (uint16_t)p;
	if (!strcmp(f[2], "ip4"))
		h->fam = AF_INET;
	else if (!strcmp(f[2], "ip6"))
		h->fam = AF_INET6;
	else if (!strcmp(f[2], "ib"))
		h->fam = SIB_AF_IB;
	else
		return false;
	h->any = !strcmp(f[3], "*");
	if (!h->any && inet_pton(h->fam == AF_INET ? AF_INET : AF_INET6, f[3], h->addr) != 1)
		return false;
	h->reuseaddr = strchr(f[4], 'r') != NULL;
	h->afonly = strchr(f[4], 'o') != NULL;
	return true;
}

static bool same_addr(const struct cma_holder *a, const struct cma_holder *b)
{
	return a->fam == b->fam && !memcmp(a->addr, b->addr, 16); /* cma_addr_cmp */
}

/* The kernel's cma_check_port: may me take the port cur holds? */
static int check_port(const struct cma_holder *me, const struct cma_holder *cur, bool reuseaddr)
{
	if (reuseaddr && cur->reuseaddr)
		return 0;
	if (me->afonly && cur->afonly && me->fam != cur->fam)
		return 0;
	if (me->any || cur->any)
		return -EADDRNOTAVAIL;
	return same_addr(me, cur) ? -EADDRINUSE : 0;
}

/* The kernel's cma_port_is_unique for an id with no destination yet: may
 * an ephemeral port be shared with cur? */
static bool port_is_unique(const struct cma_holder *me, const struct cma_holder *cur)
{
	return !me->any && !cur->any && !same_addr(me, cur);
}

/* Each holder of ps (on port, when not 0) in this network namespace but
 * self's socket, by fn until it returns nonzero (which is returned).  The
 * file is read line by line: however many sockets others make, nothing
 * is kept. */
static int scan(uint16_t ps, uint16_t port, const struct sockaddr_un *self, socklen_t self_len,
		int (*fn)(const struct cma_holder *, void *), void *arg)
{
	const char *own = self ? self->sun_path + 1 : NULL;
	size_t own_len = self ? self_len - offsetof(struct sockaddr_un, sun_path) - 1 : 0;
	struct cma_holder h;
	char line[512];
	FILE *f = fopen("/proc/net/unix", "re");
	int rc = 0;

	if (!f) {
		sib_warn("rdma_cm: /proc/net/unix cannot be read (%s): port reservations see no "
			 "other id",
			 strerror(errno));
		return 0;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *at = strstr(line, " @" NAME_PREFIX), *nl;

		if (!at)
			continue;
		at += 2;
		nl = strchr(at, '\n');
		if (nl)
			*nl = 0;
		if (own && strlen(at) == own_len && !memcmp(at, own, own_len))
			continue;
		if (parse_holder(at, ps, port, &h))
			rc = fn(&h, arg);
	}
	fclose(f);
	return rc;
}

/* The port's lock: a name bound for the time of one check and bind.  Its
 * holder dying frees it. */
static int lock_port(const struct cma_holder *h)
{
	struct sockaddr_un sun;
	socklen_t len = holder_name(h, 0, true, &sun);
	struct timespec poll = { 0, LOCK_POLL_NS };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	for (long waited = 0; bind(fd, (struct sockaddr *)&sun, len); waited += LOCK_POLL_NS) {
		if (errno != EADDRINUSE || waited >= LOCK_WAIT_NS) {
			sib_warn("rdma_cm: port %u of the %s port space: its lock %s; refused",
				 h->port, ps_name(h->ps),
				 errno == EADDRINUSE ? "stayed taken for 2 s (its holder is stopped?)"
						     : strerror(errno));
			close(fd);
			return -EADDRNOTAVAIL;
		}
		nanosleep(&poll, NULL);
	}
	return fd;
}

/* Random bits for a nonce or a starting port: getrandom, or, if it cannot
 * give them (a seccomp filter, say), the clock and a counter: the names
 * carry the pid too, so they stay unique. */
static void random_fill(void *p, size_t n)
{
	static uint64_t counter;
	struct timespec ts;
	uint64_t v;

	if (getrandom(p, n, GRND_NONBLOCK) == (ssize_t)n)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
	    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 48;
	for (size_t k = 0; k < n; k++, v = v * 6364136223846793005ull + 1442695040888963407ull)
		((uint8_t *)p)[k] = (uint8_t)(v >> 56);
}

/* Binds a new socket to r's name (a fresh nonce if another process has
 * it: pids repeat across pid namespaces) and puts it in place of r->fd. */
static int take_name(struct cma_resv *r)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	for (int i = 0; i < 8; i++) {
		if (i)
			random_fill(&r->nonce, sizeof(r->nonce));
		len = holder_name(&r->h, r->nonce, false, &sun);
		err = bind(fd, (struct sockaddr *)&sun, len) ? errno : 0;
		if (err != EADDRINUSE)
			break;
	}
	if (!err && r->listening && listen(fd, 0))
		err = errno;
	if (err) {
		close(fd);
		return -err;
	}
	if (r->fd >= 0)
		close(r->fd);
	r->fd = fd;
	r->name = sun;
	r->name_len = len;
	return 0;
}

struct conflict {
	const struct cma_holder *me;
	bool reuseaddr;
};

static int conflicts(const struct cma_holder *cur, void *arg)
{
	struct conflict *c = arg;

	return check_port(c->me, cur, c->reuseaddr);
}

/* Under the port's lock: the kernel's rules against every other holder,
 * then r's name.  Each refusal says its rule, at debug level: programs
 * probe for free ports. */
static int use_port(struct cma_resv *r, bool reuseaddr, const char *what)
{
	struct conflict c = { &r->h, reuseaddr };
	int lock = lock_port(&r->h), rc;

	if (lock < 0)
		return lock;
	rc = scan(r->h.ps, r->h.port, r->fd >= 0 ? &r->name : NULL, r->name_len, conflicts, &c);
	if (!rc)
		rc = take_name(r);
	close(lock);
	if (rc == -EADDRINUSE)
		sib_dbg("rdma_cm: %s port %u of the %s port space: another id holds the address "
			"(one id an address and port, unless both have REUSEADDR and neither "
			"listens): EADDRINUSE",
			what, r->h.port, ps_name(r->h.ps));
	else if (rc == -EADDRNOTAVAIL)
		sib_dbg("rdma_cm: %s port %u of the %s port space: a wildcard address is in the "
			"way (it takes the port on every address of its family, of both "
			"without AFONLY): EADDRNOTAVAIL",
			what, r->h.port, ps_name(r->h.ps));
	return rc;
}

/* The kernel's ephemeral range (inet_get_local_port_range). */
static void local_port_range(unsigned *lo, unsigned *hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	*lo = 32768;
	*hi = 60999;
	if (f) {
		if (fscanf(f, "%u %u", lo, hi) != 2 || *lo < 1 || *hi > 65535 || *lo > *hi) {
			*lo = 32768;
			*hi = 60999;
		}
		fclose(f);
	}
}

struct busy {
	const struct cma_holder *me;
	uint8_t map[65536 / 8];
};

static int mark_busy(const struct cma_holder *cur, void *arg)
{
	struct busy *b = arg;

	if (!port_is_unique(b->me, cur))
		b->map[cur->port / 8] |= (uint8_t)(1u << (cur->port % 8));
	return 0;
}

static int port_taken(const struct cma_holder *cur, void *arg)
{
	return port_is_unique(arg, cur) ? 0 : -EADDRNOTAVAIL;
}

/* The kernel's cma_alloc_any_port: from a random port of the ephemeral
 * range, the first one no holder makes unusable. */
static int alloc_any_port(struct cma_resv *r)
{
	struct busy *b = calloc(1, sizeof(*b));
	unsigned lo, hi, n, start;
	int rc = -EADDRNOTAVAIL;

	if (!b)
		return -ENOMEM;
	b->me = &r->h;
	local_port_range(&lo, &hi);
	scan(r->h.ps, 0, NULL, 0, mark_busy, b);
	n = hi - lo + 1;
	random_fill(&start, sizeof(start));
	for (unsigned i = 0; i < n && rc == -EADDRNOTAVAIL; i++) {
		unsigned p = lo + (start + i) % n;
		int lock;

		if (b->map[p / 8] & (1u << (p % 8)))
			continue;
		r->h.port = (uint16_t)p;
		lock = lock_port(&r->h);
		if (lock < 0)
			continue;
		rc = scan(r->h.ps, r->h.port, NULL, 0, port_taken, &r->h);
		if (!rc)
			rc = take_name(r);
		close(lock);
	}
	free(b);
	if (rc == -EADDRNOTAVAIL)
		sib_warn("rdma_cm: bind to port 0 in the %s port space: every port of %u-%u is "
			 "taken: EADDRNOTAVAIL",
			 ps_name(r->h.ps), lo, hi);
	return rc;
}

static bool may_bind_service(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_NET_BIND_SERVICE / 32].effective & (1u << (CAP_NET_BIND_SERVICE % 32));
}

/* addr's holder: family, address, port (an AF_IB id's port is its
 * ServiceID's low 16 bits under the mask). */
static void holder_of(const struct sockaddr_storage *addr, struct cma_holder *h)
{
	static const uint8_t zero[16];

	h->fam = (uint8_t)addr->ss_family;
	memset(h->addr, 0, 16);
	if (addr->ss_family == AF_INET) {
		memcpy(h->addr, &((const struct sockaddr_in *)addr)->sin_addr, 4);
		h->port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
	} else if (addr->ss_family == AF_INET6) {
		memcpy(h->addr, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
		h->port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	} else {
		const struct sib_sockaddr_ib *ib = (const struct sib_sockaddr_ib *)addr;

		memcpy(h->addr, ib->sib_addr, 16);
		h->port = (uint16_t)(be64toh(ib->sib_sid) & be64toh(ib->sib_sid_mask));
	}
	h->any = !memcmp(h->addr, zero, 16);
}

static void set_port(struct sockaddr_storage *addr, uint16_t port)
{
	if (addr->ss_family == AF_INET) {
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	} else if (addr->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
	} else {
		struct sib_sockaddr_ib *ib = (struct sib_sockaddr_ib *)addr;

		ib->sib_sid = htobe64((be64toh(ib->sib_sid) & ~0xffffull) | port);
		ib->sib_sid_mask = htobe64(be64toh(ib->sib_sid_mask) | 0xffffull);
	}
}

bool cma_resv_afonly_default(void)
{
	FILE *f = fopen("/proc/sys/net/ipv6/bindv6only", "re");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v != 0;
}

int cma_resv_bind(struct cma_resv *r, uint16_t ps, struct sockaddr_storage *addr, bool reuseaddr,
		  bool afonly)
{
	int rc;

	r->fd = -1;
	r->listening = false;
	random_fill(&r->nonce, sizeof(r->nonce));
	memset(&r->h, 0, sizeof(r->h));
	if (!ps_name(ps))
		return -EPROTONOSUPPORT;
	r->h.ps = ps;
	holder_of(addr, &r->h);
	r->h.reuseaddr = reuseaddr;
	r->h.afonly = afonly;
	if (r->h.port == 0) {
		rc = alloc_any_port(r);
	} else if (r->h.port < PROT_SOCK && !may_bind_service()) {
		sib_dbg("rdma_cm: bind to port %u: a port below %u needs CAP_NET_BIND_SERVICE: "
			"EACCES",
			r->h.port, PROT_SOCK);
		rc = -EACCES;
	} else {
		rc = use_port(r, reuseaddr, "bind to");
	}
	if (!rc)
		set_port(addr, r->h.port);
	return rc;
}

/* The kernel's rdma_listen: an id with REUSEADDR must be alone on its
 * address now, and loses REUSEADDR; others were alone since their bind. */
int cma_resv_listen(struct cma_resv *r)
{
	bool was = r->h.reuseaddr;
	int rc;

	if (r->fd < 0)
		return -EINVAL;
	if (r->listening)
		return 0;
	r->listening = true;
	r->h.reuseaddr = false;
	rc = was ? use_port(r, false, "listen on") : take_name(r);
	if (rc) {
		r->listening = false;
		r->h.reuseaddr = was;
	}
	return rc;
}

int cma_resv_reuseaddr(struct cma_resv *r)
{
	if (r->fd < 0 || r->h.reuseaddr || r->listening)
		return 0;
	r->h.reuseaddr = true;
	/* Only more sharing: the name changes, no rule can refuse it. */
	if (take_name(r)) {
		r->h.reuseaddr = false;
		return -ENOMEM;
	}
	return 0;
}

void cma_resv_release(struct cma_resv *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->listening = false;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Which softib port an IP address reaches, the way IPoIB's ARP and the
 * kernel's route lookup tell the kernel's rdma_cm.
 *
 * This host: 127.0.0.1, ::1 and every address of the host (its network
 * namespace) are local.  Each process is its own node with its own port,
 * so a local address names the host, not yet a port.
 *
 * Other hosts: each port registers its host's addresses with the SA, one
 * ServiceRecord per address (ServiceID 0x534942 'SIB', then 04 and the
 * IPv4 address, or 06 and a hash of the IPv6 one; ServiceData8 the
 * address; ServiceKey this host's key; ServiceName "softib address").
 *
 * Listeners: a process that listens on a port registers a ServiceRecord
 * with the RDMA IP CM ServiceID of that port (IBA Annex A11), its port's
 * GID, this host's key, and the addresses it listens on (up to three:
 * ServiceData8, ServiceData16, ServiceData32; wildcards included, with
 * AFONLY bits in ServiceData64[0]) and when it registered (ServiceData64[1],
 * CLOCK_BOOTTIME ns).  A connection to address A port P goes to the port
 * of a listener on this host (A local) or on A's host whose addresses
 * cover A; with none, to some port of that host, whose CM answers REJ 8
 * (connection refused).  Of several records that cover A the newest
 * wins: a host's TCP port reservations let only one listener at a time
 * cover an address and port, so the others were left by processes that
 * ended without a word (SIGKILL, _exit), until the SM drops their ports.
 *
 * The host key is the kernel's boot id and the network namespace's inode:
 * processes share it exactly when they share the host's addresses.  The SA
 * tells a record's key to its owner only, and keeps an address to one host
 * (one key) at a time (softib-sm(8)): so a listener on this host is found
 * by our key, and one on another host counts only from a port that holds
 * the address's record there (cma_find_listener) -- a port of a third host
 * cannot capture connections meant for that address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "mgmt/sa_query.h"
#include "provider/rdma_cm.h"

#define NAME_ADDRESS "softib address"
#define NAME_LISTENER "softib rdma_cm"
#define LISTENER_IPS 3

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

bool cma_ip16(const struct sockaddr *sa, uint8_t ip[16])
{
	if (sa->sa_family == AF_INET) {
		memcpy(ip, v4_mapped, 12);
		memcpy(ip + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(ip, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

static bool is_v4(const uint8_t ip[16])
{
	return !memcmp(ip, v4_mapped, 12);
}

bool cma_ip16_any(const uint8_t ip[16])
{
	static const uint8_t zero[16];

	return !memcmp(ip, zero, 16) || (is_v4(ip) && !memcmp(ip + 12, zero, 4));
}

bool cma_ip16_loopback(const uint8_t ip[16])
{
	static const uint8_t lo6[16] = { [15] = 1 };

	return !memcmp(ip, lo6, 16) || (is_v4(ip) && ip[12] == 127);
}

bool cma_ip16_local(const uint8_t ip[16])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (cma_ip16_loopback(ip))
		return true;
	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		uint8_t a[16];

		if (i->ifa_addr && cma_ip16(i->ifa_addr, a) && !memcmp(a, ip, 16))
			found = true;
	}
	freeifaddrs(ifa);
	return found;
}

int cma_route_source(const uint8_t dst[16], uint8_t src[16])
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err = 0;

	memset(&ss, 0, sizeof(ss));
	if (is_v4(dst)) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(9);
		memcpy(&s4->sin_addr, dst + 12, 4);
		len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(9);
		memcpy(&s6->sin6_addr, dst, 16);
		len = sizeof(*s6);
	}
	/* connect() on a UDP socket sends nothing: it asks the routing table
	 * which source address reaches dst, as the kernel's rdma_cm does. */
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, len) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len))
		err = -errno;
	else
		cma_ip16((struct sockaddr *)&ss, src);
	close(fd);
	return err;
}

static bool read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

void cma_host_key(uint8_t key[16])
{
	static uint8_t cached[16];
	static bool have;
	char boot[64] = "";
	struct stat st;
	uint64_t ns = 0;
	unsigned j = 0;

	if (have) {
		memcpy(key, cached, 16);
		return;
	}
	memset(cached, 0, sizeof(cached));
	read_text("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	for (const char *p = boot; *p && j < 32; p++) {
		int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

		if (v < 0)
			continue;
		cached[j / 2] |= (uint8_t)(j % 2 ? v : v << 4);
		j++;
	}
	if (!stat("/proc/self/ns/net", &st))
		ns = (uint64_t)st.st_ino ^ ((uint64_t)st.st_dev << 32);
	for (int i = 0; i < 8; i++)
		cached[8 + i] ^= (uint8_t)(ns >> (56 - 8 * i));
	cached[0] |= 0x80; /* never all zero: zero means "no key" to the SA */
	have = true;
	memcpy(key, cached, 16);
}

static uint64_t address_sid(const uint8_t ip[16])
{
	uint64_t h = 1469598103934665603ull;

	if (is_v4(ip))
		return SIB_SR_ADDRESS_SID_PREFIX | 0x0400000000ull | (uint64_t)ip[12] << 24 |
		       (uint64_t)ip[13] << 16 | (uint64_t)ip[14] << 8 | ip[15];
	for (int i = 0; i < 16; i++)
		h = (h ^ ip[i]) * 1099511628211ull;
	return SIB_SR_ADDRESS_SID_PREFIX | 0x0600000000ull | (h & 0xffffffffull);
}

static void port_gid(struct sib_hca *hca, uint8_t gid[16])
{
	pthread_mutex_lock(&hca->node.lock);
	memcpy(gid, hca->node.ports[0].GID[0], 16);
	pthread_mutex_unlock(&hca->node.lock);
}

static void base_record(struct sib_hca *hca, struct ib_service_record *r, uint64_t sid,
			const char *name)
{
	memset(r, 0, sizeof(*r));
	r->ServiceID = sid;
	port_gid(hca, r->ServiceGID.raw);
	r->ServiceP_Key = 0xffff;
	r->ServiceLease = 0xffffffffu;
	cma_host_key(r->ServiceKey);
	snprintf((char *)r->ServiceName, sizeof(r->ServiceName), "%s", name);
}

/* The addresses a port registers: this host's, less loopback and
 * link-local ones (they mean nothing to another host). */
static unsigned host_addrs(uint8_t (*out)[16], unsigned cap)
{
	struct ifaddrs *ifa, *i;
	unsigned n = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && n < cap; i = i->ifa_next) {
		uint8_t a[16];
		bool dup = false;

		if (!i->ifa_addr || !cma_ip16(i->ifa_addr, a) || cma_ip16_loopback(a) ||
		    (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
			continue;
		for (unsigned k = 0; k < n; k++)
			dup |= !memcmp(out[k], a, 16);
		if (!dup)
			memcpy(out[n++], a, 16);
	}
	freeifaddrs(ifa);
	return n;
}

void cma_record_withdraw(struct sib_hca *hca, uint64_t sid)
{
	struct ib_service_record r;
	uint8_t rec[IB_SERVICE_RECORD_BYTES];

	base_record(hca, &r, sid, "");
	ib_service_record_encode(&r, rec);
	sib_sa_send_only(&hca->node, 1, IB_MAD_METHOD_DELETE, IB_SA_ATTR_SERVICE_RECORD,
			 IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_P_KEY |
				 IB_SR_COMP_SERVICE_KEY,
			 rec, sizeof(rec));
}

static pthread_mutex_t addrs_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t registered[32][16];
static unsigned nregistered;
static bool addrs_done;

void cma_addrs_register(struct sib_hca *hca)
{
	uint8_t addrs[32][16];
	unsigned n;

	pthread_mutex_lock(&addrs_lock);
	if (addrs_done) {
		pthread_mutex_unlock(&addrs_lock);
		return;
	}
	n = host_addrs(addrs, 32);
	nregistered = 0;
	addrs_done = true;
	for (unsigned i = 0; i < n; i++) {
		struct ib_service_record r;
		int rc;

		base_record(hca, &r, address_sid(addrs[i]), NAME_ADDRESS);
		memcpy(r.ServiceData8, addrs[i], 16);
		rc = sib_sa_service_set(&hca->node, 1, &r);
		if (rc == -ENETDOWN)
			break; /* no SM (SOFTIB_SM=none): a subnet of one */
		if (rc) {
			sib_dbg("rdma_cm: registering an address with the SA failed: %s",
				strerror(-rc));
			addrs_done = false; /* try again next time */
			continue;
		}
		memcpy(registered[nregistered++], addrs[i], 16);
	}
	pthread_mutex_unlock(&addrs_lock);
}

void cma_addrs_register_again(struct sib_hca *hca)
{
	pthread_mutex_lock(&addrs_lock);
	addrs_done = false;
	pthread_mutex_unlock(&addrs_lock);
	cma_addrs_register(hca);
}

void cma_addrs_unregister(struct sib_hca *hca)
{
	pthread_mutex_lock(&addrs_lock);
	for (unsigned i = 0; i < nregistered; i++)
		cma_record_withdraw(hca, address_sid(registered[i]));
	nregistered = 0;
	addrs_done = false;
	pthread_mutex_unlock(&addrs_lock);
}

int cma_find_host(struct sib_hca *hca, const uint8_t ip[16], uint8_t key[16], uint8_t gid[16])
{
	struct ib_service_record q, *out;
	unsigned n;
	int rc;

	memset(&q, 0, sizeof(q));
	q.ServiceID = address_sid(ip);
	memcpy(q.ServiceData8, ip, 16);
	/* ServiceID and the 16 ServiceData8 components (IBA 15.2.5.14). */
	rc = sib_sa_service_table(&hca->node, 1, &q, IB_SR_COMP_SERVICE_ID | (0xffffull << 7), &out,
				  &n);
	if (rc)
		return rc;
	if (!n)
		return -EHOSTUNREACH;
	memcpy(key, out[0].ServiceKey, 16);
	memcpy(gid, out[0].ServiceGID.raw, 16);
	free(out);
	return 0;
}

/* A listener record's addresses and their AFONLY bits. */
static unsigned record_ips(const struct ib_service_record *r, uint8_t ips[LISTENER_IPS][16],
			   bool afonly[LISTENER_IPS])
{
	uint64_t flags = r->ServiceData64[0];
	unsigned n = (unsigned)(flags >> 8) & 0xff;

	if (n > LISTENER_IPS)
		n = LISTENER_IPS;
	memcpy(ips[0], r->ServiceData8, 16);
	for (int i = 0; i < 8; i++) {
		ips[1][2 * i] = (uint8_t)(r->ServiceData16[i] >> 8);
		ips[1][2 * i + 1] = (uint8_t)r->ServiceData16[i];
	}
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 4; b++)
			ips[2][4 * i + b] = (uint8_t)(r->ServiceData32[i] >> (24 - 8 * b));
	for (unsigned i = 0; i < LISTENER_IPS; i++)
		afonly[i] = flags >> i & 1;
	return n;
}

/* How well listening address l (AFONLY afonly) covers ip: 2 exactly, 1 as
 * a wildcard, 0 not (the rules of a TCP listener). */
static int covers(const uint8_t l[16], bool afonly, const uint8_t ip[16])
{
	static const uint8_t zero[16];

	if (!memcmp(l, ip, 16))
		return 2;
	if (!memcmp(l, zero, 16)) /* [::] */
		return !is_v4(ip) || !afonly ? 1 : 0;
	if (is_v4(l) && cma_ip16_any(l)) /* 0.0.0.0 */
		return is_v4(ip) ? 1 : 0;
	return 0;
}

/* Does the port gid hold an address record for ip (is it of ip's host)? */
static bool holds_address(struct sib_hca *hca, const uint8_t gid[16], const uint8_t ip[16])
{
	struct ib_service_record q, *out;
	unsigned n = 0;

	memset(&q, 0, sizeof(q));
	q.ServiceID = address_sid(ip);
	memcpy(q.ServiceGID.raw, gid, 16);
	memcpy(q.ServiceData8, ip, 16);
	if (sib_sa_service_table(&hca->node, 1, &q,
				 IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | (0xffffull << 7),
				 &out, &n))
		return false;
	free(out);
	return n > 0;
}

static bool key_zero(const uint8_t key[16])
{
	static const uint8_t zero[16];

	return !memcmp(key, zero, 16);
}

/*
 * The listener for ip: of the records for sid that cover ip, the newest,
 * the most exact.  On this host (key: ours) the records are asked for by
 * the host key.  Another host's key is not told (the SA gives keys to
 * their owners only: zero), so its listener records count only from a
 * port that holds ip's address record: the SA keeps an address to one
 * host, so a port of another host cannot pass for a listener on it.
 */
int cma_find_listener(struct sib_hca *hca, uint64_t sid, const uint8_t key[16],
		      const uint8_t ip[16], uint8_t gid[16])
{
	struct cand {
		uint64_t when;
		int cover;
		uint8_t gid[16];
	} *c = NULL;
	struct ib_service_record q, *out;
	bool remote = key_zero(key);
	unsigned n, nc = 0;
	int rc;

	memset(&q, 0, sizeof(q));
	q.ServiceID = sid;
	memcpy(q.ServiceKey, key, 16);
	rc = sib_sa_service_table(&hca->node, 1, &q,
				  IB_SR_COMP_SERVICE_ID | (remote ? 0 : IB_SR_COMP_SERVICE_KEY), &out,
				  &n);
	if (rc)
		return rc;
	c = n ? calloc(n * LISTENER_IPS, sizeof(*c)) : NULL;
	for (unsigned i = 0; i < n && c; i++) {
		uint8_t ips[LISTENER_IPS][16];
		bool afonly[LISTENER_IPS];
		unsigned k = record_ips(&out[i], ips, afonly);

		if (memcmp(out[i].ServiceName, NAME_LISTENER, sizeof(NAME_LISTENER)))
			continue;
		for (unsigned j = 0; j < k; j++) {
			int cv = covers(ips[j], afonly[j], ip);

			if (!cv)
				continue;
			c[nc].when = out[i].ServiceData64[1];
			c[nc].cover = cv;
			memcpy(c[nc].gid, out[i].ServiceGID.raw, 16);
			nc++;
		}
	}
	free(out);
	rc = -ENOENT;
	/* Best first: the newest, then the most exact, until one passes. */
	while (nc) {
		unsigned b = 0;

		for (unsigned i = 1; i < nc; i++)
			if (c[i].when > c[b].when || (c[i].when == c[b].when && c[i].cover > c[b].cover))
				b = i;
		if (!remote || holds_address(hca, c[b].gid, ip)) {
			memcpy(gid, c[b].gid, 16);
			rc = 0;
			break;
		}
		sib_dbg("rdma_cm: a listener record for ServiceID 0x%016llx from a port that does "
			"not hold the address's record: passed over",
			(unsigned long long)sid);
		c[b] = c[--nc];
	}
	free(c);
	return rc;
}

void cma_listener_record(struct sib_hca *hca, uint64_t sid, const uint8_t (*ips)[16],
			 const bool *afonly, unsigned n, const char *what)
{
	struct ib_service_record r;
	struct timespec now;
	uint64_t flags = 0;
	int rc;

	base_record(hca, &r, sid, NAME_LISTENER);
	if (!n) {
		rc = sib_sa_service_delete(&hca->node, 1, &r);
		if (rc && rc != -ENOENT && rc != -ENETDOWN)
			sib_dbg("rdma_cm: withdrawing %s 0x%016llx from the SA failed: %s", what,
				(unsigned long long)sid, strerror(-rc));
		return;
	}
	if (n > LISTENER_IPS) {
		sib_warn("rdma_cm: port %u has %ss on %u addresses in this process; other "
			 "hosts find the first %u only",
			 (unsigned)(sid & 0xffff), what, n, LISTENER_IPS);
		n = LISTENER_IPS;
	}
	memcpy(r.ServiceData8, ips[0], 16);
	if (n > 1)
		for (int i = 0; i < 8; i++)
			r.ServiceData16[i] = (uint16_t)(ips[1][2 * i] << 8 | ips[1][2 * i + 1]);
	if (n > 2)
		for (int i = 0; i < 4; i++)
			r.ServiceData32[i] = (uint32_t)ips[2][4 * i] << 24 |
					     (uint32_t)ips[2][4 * i + 1] << 16 |
					     (uint32_t)ips[2][4 * i + 2] << 8 | ips[2][4 * i + 3];
	for (unsigned i = 0; i < n; i++)
		flags |= (uint64_t)afonly[i] << i;
	r.ServiceData64[0] = flags | (uint64_t)n << 8;
	clock_gettime(CLOCK_BOOTTIME, &now);
	r.ServiceData64[1] = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	rc = sib_sa_service_set(&hca->node, 1, &r);
	sib_dbg("rdma_cm: %s record for ServiceID 0x%016llx, %u address(es): %s", what,
		(unsigned long long)sid, n, rc ? strerror(-rc) : "registered");
	if (rc && rc != -ENETDOWN)
		sib_warn("rdma_cm: the SA did not take the %s on port %u (%s); only this "
			 "process can reach it",
			 what, (unsigned)(sid & 0xffff), strerror(-rc));
}

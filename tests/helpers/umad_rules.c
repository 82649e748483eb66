/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The user-MAD device's rules through raw system calls, as libibumad makes
 * them (provider/umad.h; the kernel's Documentation/infiniband/user_mad.rst),
 * run under `softib run` in a subnet without switches:
 *   - umad31 is a character device 231:31; ENABLE_PKEY is 0, an unknown
 *     ioctl EINVAL; an SMP agent on QP1 is EINVAL;
 *   - bad writes: shorter than a header and a MAD header, an agent that is
 *     not registered, a multi-segment MAD that is not an SA response: each
 *     EINVAL, nothing sent; a LID nobody has: EHOSTUNREACH;
 *   - a Get(NodeInfo) to the port's own LID comes back on read as the
 *     answer (status 0, the caller's low TID half, the node's GUID), after
 *     poll said readable; a buffer too small for it is EINVAL and the MAD
 *     stays queued;
 *   - a Get(NodeInfo) to the SM's LID with a timeout, which the SM's port
 *     does not answer for NodeInfo, comes back as itself with ETIMEDOUT;
 *   - issm31 held open makes the port IsSM; a second open is EBUSY;
 *     closing clears it;
 *   - unregistering twice is EINVAL.
 * Prints "ok NAME" per rule and "PASS: 0 failures" at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct hdr { /* struct ib_user_mad_hdr, 64 bytes */
	uint32_t agent_id, status, timeout_ms, retries, length;
	uint32_t qpn, qkey;
	uint16_t lid;
	uint8_t sl, path_bits, grh_present, gid_index, hop_limit, traffic_class, gid[16];
	uint32_t flow_label;
	uint16_t pkey_index;
	uint8_t reserved[6];
};

struct reg { /* struct ib_user_mad_reg_req */
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn, mgmt_class, mgmt_class_version, oui[3], rmpp_version;
};

#define REGISTER _IOWR(0x1b, 1, struct reg)
#define UNREGISTER _IOW(0x1b, 2, uint32_t)
#define ENABLE_PKEY _IO(0x1b, 3)

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                               \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static unsigned read_num(const char *path)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return (unsigned)strtoul(buf, NULL, 0);
}

/* A LID-routed SubnGet of attr (a 64-byte header and a 256-byte SMP). */
static void smp_get(uint8_t *buf, uint32_t agent, uint16_t dlid, uint16_t attr, uint32_t tid,
		    unsigned timeout_ms)
{
	struct hdr *h = (struct hdr *)buf;
	uint8_t *mad = buf + sizeof(*h);

	memset(buf, 0, sizeof(*h) + 256);
	h->agent_id = agent;
	h->timeout_ms = timeout_ms;
	h->retries = 1;
	h->lid = htons(dlid);
	h->qpn = htonl(0);
	mad[0] = 1;		/* BaseVersion */
	mad[1] = 0x01;		/* SubnMgt, LID-routed */
	mad[2] = 1;		/* ClassVersion */
	mad[3] = 0x01;		/* Get */
	tid = htonl(tid);
	memcpy(mad + 12, &tid, 4); /* the low half of the TID */
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
}

static int wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

int main(void)
{
	uint8_t buf[64 + 256], in[64 + 256], small[100];
	const struct hdr *rh = (const struct hdr *)in;
	struct reg r = { 0 };
	unsigned my_lid, sm_lid;
	struct stat st;
	uint32_t id;
	int fd, issm, issm2;

	fd = open("/dev/infiniband/umad31", O_RDWR | O_NONBLOCK);
	CHECK(fd >= 0, "open umad31: %s", strerror(errno));
	if (fd < 0)
		return 1;
	CHECK(!fstat(fd, &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(231, 31),
	      "fstat: S_ISCHR 231:31");
	CHECK(ioctl(fd, ENABLE_PKEY) == 0, "ENABLE_PKEY: %s", strerror(errno));
	errno = 0;
	CHECK(ioctl(fd, _IO(0x1b, 0x77)) == -1 && errno == EINVAL, "an unknown ioctl: EINVAL");
	r.qpn = 1;
	r.mgmt_class = 0x01;
	r.mgmt_class_version = 1;
	errno = 0;
	CHECK(ioctl(fd, REGISTER, &r) == -1 && errno == EINVAL, "an SMP agent on QP1: EINVAL");
	r.qpn = 0;
	CHECK(ioctl(fd, REGISTER, &r) == 0 && r.id == 0, "register: %s, id %u", strerror(errno), r.id);
	printf("ok device_and_agents\n");

	/* the port's LIDs, from sysfs (the view's) */
	my_lid = read_num("/sys/class/infiniband/softib0/ports/1/lid");
	sm_lid = read_num("/sys/class/infiniband/softib0/ports/1/sm_lid");
	CHECK(my_lid && sm_lid, "the port has LID %u and SM LID %u", my_lid, sm_lid);

	/* bad writes */
	smp_get(buf, 0, (uint16_t)my_lid, 0x0011, 1, 500);
	errno = 0;
	CHECK(write(fd, buf, 64 + 20) == -1 && errno == EINVAL, "a short write: EINVAL");
	((struct hdr *)buf)->agent_id = 5;
	errno = 0;
	CHECK(write(fd, buf, sizeof(buf)) == -1 && errno == EINVAL, "an unregistered agent: EINVAL");
	((struct hdr *)buf)->agent_id = 0;
	{
		uint8_t big[64 + 600] = { 0 };

		memcpy(big, buf, sizeof(buf));
		errno = 0;
		CHECK(write(fd, big, sizeof(big)) == -1 && errno == EINVAL,
		      "a multi-segment SMP: EINVAL");
	}
	smp_get(buf, 0, 0xbfff, 0x0011, 2, 200);
	errno = 0;
	CHECK(write(fd, buf, sizeof(buf)) == -1 && errno == EHOSTUNREACH,
	      "a LID nobody has: EHOSTUNREACH (%s)", strerror(errno));
	CHECK(!wait_readable(fd, 300), "nothing was queued by the bad writes");
	printf("ok bad_writes\n");

	/* the answer from the port's own SMA */
	smp_get(buf, 0, (uint16_t)my_lid, 0x0011, 0x1234, 1000);
	CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "write: %s", strerror(errno));
	CHECK(wait_readable(fd, 5000), "no answer within 5 s");
	errno = 0;
	CHECK(read(fd, small, sizeof(small)) == -1 && errno == EINVAL, "a short read: EINVAL");
	CHECK(read(fd, in, sizeof(in)) == (ssize_t)sizeof(in), "read: %s", strerror(errno));
	CHECK(rh->status == 0 && rh->agent_id == 0 && ntohs(rh->lid) == my_lid,
	      "the answer: status %u agent %u from LID %u", rh->status, rh->agent_id,
	      ntohs(rh->lid));
	CHECK(in[64 + 3] == 0x81 && !memcmp(in + 64 + 12, buf + 64 + 12, 4),
	      "GetResp with the caller's TID (method 0x%02x)", in[64 + 3]);
	printf("ok answer_by_tid\n");

	/* the SM's port answers SMInfo, not NodeInfo: the request comes back */
	smp_get(buf, 0, (uint16_t)sm_lid, 0x0011, 0x4321, 100);
	CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "write: %s", strerror(errno));
	CHECK(wait_readable(fd, 5000), "no timeout within 5 s");
	CHECK(read(fd, in, sizeof(in)) == (ssize_t)sizeof(in), "read: %s", strerror(errno));
	CHECK(rh->status == ETIMEDOUT && in[64 + 3] == 0x01 && !memcmp(in + 64 + 12, buf + 64 + 12, 4),
	      "the request back with ETIMEDOUT: status %u method 0x%02x", rh->status, in[64 + 3]);
	printf("ok timeout_returns_the_request\n");

	/* issm: IsSM while held */
	issm = open("/dev/infiniband/issm31", O_RDWR);
	CHECK(issm >= 0, "open issm31: %s", strerror(errno));
	errno = 0;
	issm2 = open("/dev/infiniband/issm31", O_RDWR);
	CHECK(issm2 == -1 && errno == EBUSY, "a second issm31: EBUSY");
	CHECK(read_num("/sys/class/infiniband/softib0/ports/1/cap_mask") & 0x2,
	      "IsSM in cap_mask while issm31 is open");
	close(issm);
	CHECK(!(read_num("/sys/class/infiniband/softib0/ports/1/cap_mask") & 0x2),
	      "no IsSM once it is closed");
	printf("ok issm\n");

	id = 0;
	CHECK(ioctl(fd, UNREGISTER, &id) == 0, "unregister: %s", strerror(errno));
	errno = 0;
	CHECK(ioctl(fd, UNREGISTER, &id) == -1 && errno == EINVAL, "unregister twice: EINVAL");
	close(fd);
	printf("ok unregister\n");
	printf("PASS: %d failures\n", failures);
	return failures ? 1 : 0;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Run under `softib run` with SOFTIB_LOG_FILE set (tests/integration/
 * test_device_rules.sh).  An ordinary verbs program that breaks the device,
 * port, GID, P_Key, AH and PD rules on softib0 and checks both halves of
 * each answer: the errno libibverbs documents, and the one log line that
 * names the rule (docs/architecture.md section 8).  Exit 0 when every check passed.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int failures;
static FILE *log_file;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

/* The log lines written since the last call must be exactly one, holding
 * `want`. */
static void expect_log(const char *what, const char *want)
{
	char line[600], last[600] = "";
	int lines = 0;

	clearerr(log_file);
	while (fgets(line, sizeof(line), log_file)) {
		lines++;
		snprintf(last, sizeof(last), "%s", line);
	}
	CHECK(lines == 1, "%s: %d log lines, want 1", what, lines);
	CHECK(strstr(last, want) != NULL, "%s: log line '%s' does not say '%s'", what, last, want);
	if (lines == 1 && strstr(last, want))
		printf("ok   %s: %s", what, last);
}

static void expect_no_log(const char *what)
{
	char line[600];
	int lines = 0;

	clearerr(log_file);
	while (fgets(line, sizeof(line), log_file)) {
		lines++;
		printf("     unexpected log line: %s", line);
	}
	CHECK(lines == 0, "%s: %d unexpected log lines", what, lines);
}

static struct ibv_context *open_softib(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list)
		return NULL;
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static void port_rules(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;
	int rc = ibv_query_port(ctx, 2, &pa);

	CHECK(rc == EINVAL, "query_port(2) = %d, want EINVAL", rc);
	expect_log("query_port on port 2", "port 2 does not exist");
	rc = ibv_query_port(ctx, 1, &pa);
	CHECK(rc == 0 && pa.state == IBV_PORT_ACTIVE && pa.lid != 0, "query_port(1) = %d", rc);
	expect_no_log("query_port(1)");
}

static void gid_and_pkey_rules(struct ibv_context *ctx)
{
	struct ibv_gid_entry entries[2];
	union ibv_gid gid;
	__be16 pkey;
	ssize_t n;
	int rc;

	errno = 0;
	rc = ibv_query_gid(ctx, 1, 8, &gid);
	CHECK(rc == -1 && errno == EINVAL, "query_gid(index 8) = %d errno %d", rc, errno);
	expect_log("query_gid index 8", "GID index 8 is outside the GID table");

	/* An empty slot reads as zeros through query_gid and as ENODATA
	 * through query_gid_ex, as libibverbs reports a kernel's empty slot. */
	memset(&gid, 0xa5, sizeof(gid));
	rc = ibv_query_gid(ctx, 1, 1, &gid);
	CHECK(rc == 0 && gid.global.subnet_prefix == 0 && gid.global.interface_id == 0,
	      "query_gid(empty index 1) = %d", rc);
	rc = ibv_query_gid_ex(ctx, 1, 1, &entries[0], 0);
	CHECK(rc == ENODATA, "query_gid_ex(empty index 1) = %d, want ENODATA", rc);
	expect_no_log("query_gid of an empty slot");

	rc = ibv_query_gid(ctx, 1, 0, &gid);
	CHECK(rc == 0 && gid.raw[0] == 0xfe && gid.raw[1] == 0x80, "query_gid(0) = %d", rc);
	expect_no_log("query_gid(0)");

	rc = ibv_query_gid_ex(ctx, 1, 9, &entries[0], 0);
	CHECK(rc == EINVAL, "query_gid_ex(index 9) = %d", rc);
	expect_log("query_gid_ex index 9", "GID index 9 is outside");

	n = ibv_query_gid_table(ctx, entries, 0, 0);
	CHECK(n == -EINVAL, "query_gid_table(0 entries) = %zd", n);
	expect_log("query_gid_table with no room", "do not hold every valid GID");

	n = ibv_query_gid_table(ctx, entries, 2, 0);
	CHECK(n == 1 && entries[0].port_num == 1 && entries[0].gid_index == 0 &&
		      entries[0].gid_type == IBV_GID_TYPE_IB && !memcmp(&entries[0].gid, &gid, 16),
	      "query_gid_table(2) = %zd", n);

	/* 16 entries (max_pkeys): index 16 is outside, 1 an empty slot. */
	errno = 0;
	rc = ibv_query_pkey(ctx, 1, 16, &pkey);
	CHECK(rc == -1 && errno == EINVAL, "query_pkey(index 16) = %d errno %d", rc, errno);
	expect_log("query_pkey index 16", "P_Key index 16 is outside");
	rc = ibv_query_pkey(ctx, 1, 1, &pkey);
	CHECK(rc == 0 && pkey == 0, "query_pkey(1) = %d, 0x%04x", rc, be16toh(pkey));
	rc = ibv_query_pkey(ctx, 1, 0, &pkey);
	CHECK(rc == 0 && be16toh(pkey) == 0xffff, "query_pkey(0) = %d", rc);
	CHECK(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)) == 0, "get_pkey_index(0xffff)");
	expect_no_log("good P_Key queries");
}

static void ah_and_pd_rules(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;
	struct ibv_ah_attr attr = { 0 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_ah *ah;
	int rc;

	CHECK(pd != NULL, "alloc_pd");
	if (!pd)
		return;
	ibv_query_port(ctx, 1, &pa);
	attr.dlid = pa.lid;
	attr.port_num = 2;
	errno = 0;
	ah = ibv_create_ah(pd, &attr);
	CHECK(!ah && errno == EINVAL, "create_ah(port 2) = %p errno %d", (void *)ah, errno);
	expect_log("create_ah on port 2", "port 2 does not exist");

	attr.port_num = 1;
	attr.is_global = 1;
	attr.grh.sgid_index = 8;
	errno = 0;
	ah = ibv_create_ah(pd, &attr);
	CHECK(!ah && errno == EINVAL, "create_ah(sgid_index 8) errno %d", errno);
	expect_log("create_ah with sgid_index 8", "sgid_index 8 is outside the GID table");

	attr.grh.sgid_index = 3;
	errno = 0;
	ah = ibv_create_ah(pd, &attr);
	CHECK(!ah && errno == EINVAL, "create_ah(sgid_index 3) errno %d", errno);
	expect_log("create_ah with sgid_index 3", "sgid_index 3 names an empty GID table entry");

	attr.grh.sgid_index = 0;
	ah = ibv_create_ah(pd, &attr);
	CHECK(ah != NULL, "create_ah(good) errno %d", errno);
	expect_no_log("create_ah(good)");

	errno = 0;
	rc = ibv_dealloc_pd(pd);
	CHECK(rc == EBUSY && errno == EBUSY, "dealloc_pd with an AH = %d errno %d, want EBUSY both",
	      rc, errno);
	expect_log("dealloc_pd while an AH uses it", "still use it");

	if (ah)
		CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
	rc = ibv_dealloc_pd(pd);
	CHECK(rc == 0, "dealloc_pd after destroy_ah = %d", rc);
	expect_no_log("dealloc_pd(idle)");
}

/* ibv_init_ah_from_wc / ibv_create_ah_from_wc look the GRH's DGID up with
 * ibv_query_gid, which only works because it is interposed. */
static void ah_from_wc_uses_the_gid_table(struct ibv_context *ctx)
{
	struct {
		struct ibv_grh grh;
	} buf;
	struct ibv_port_attr pa;
	struct ibv_ah_attr attr;
	struct ibv_wc wc = { 0 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_ah *ah;
	union ibv_gid gid;
	int rc;

	if (!pd || ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, 0, &gid)) {
		CHECK(0, "set-up for ah_from_wc");
		return;
	}
	memset(&buf, 0, sizeof(buf));
	buf.grh.version_tclass_flow = htobe32(6u << 28);
	buf.grh.hop_limit = 1;
	buf.grh.next_hdr = 0x1b; /* IBA 8.3.1: an IB transport header follows */
	buf.grh.sgid = gid;
	buf.grh.dgid = gid;
	wc.wc_flags = IBV_WC_GRH;
	wc.slid = pa.lid;
	wc.sl = 3;
	rc = ibv_init_ah_from_wc(ctx, 1, &wc, &buf.grh, &attr);
	CHECK(rc == 0, "init_ah_from_wc = %d errno %d", rc, errno);
	CHECK(rc || (attr.dlid == pa.lid && attr.sl == 3 && attr.is_global &&
		     attr.grh.sgid_index == 0 && !memcmp(&attr.grh.dgid, &gid, 16)),
	      "init_ah_from_wc built the wrong AV");
	ah = ibv_create_ah_from_wc(pd, &wc, &buf.grh, 1);
	CHECK(ah != NULL, "create_ah_from_wc errno %d", errno);
	if (ah)
		ibv_destroy_ah(ah);
	ibv_dealloc_pd(pd);
	expect_no_log("AH from a work completion");
}

static void channels_and_async_fd(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	char byte;
	int flags;

	CHECK(ch && ch->fd >= 0 && ch->context == ctx, "create_comp_channel");
	if (ch)
		CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy_comp_channel");
	/* An async fd that blocks like the kernel's, with no stray events. */
	CHECK(ctx->async_fd >= 0, "async_fd is %d", ctx->async_fd);
	flags = fcntl(ctx->async_fd, F_GETFL);
	CHECK(flags >= 0 && !(flags & O_NONBLOCK), "async_fd must block by default");
	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	CHECK(read(ctx->async_fd, &byte, 1) == -1 && errno == EAGAIN, "no async event expected");
	fcntl(ctx->async_fd, F_SETFL, flags);
	expect_no_log("channels and async fd");
}

/* A parent domain protects as its PD does and holds it; CQs may name one. */
static void parent_domain_rules(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_parent_domain_init_attr pa = { .pd = pd };
	struct ibv_cq_init_attr_ex ca = { .cqe = 4, .wc_flags = IBV_WC_STANDARD_FLAGS,
					  .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct ibv_pd *parent, *nested;
	struct ibv_cq_ex *cq;
	struct ibv_mr *mr;
	static char buf[64];

	CHECK(pd != NULL, "alloc_pd");
	if (!pd)
		return;
	parent = ibv_alloc_parent_domain(ctx, &pa);
	CHECK(parent && parent != pd && parent->context == ctx, "alloc_parent_domain errno %d",
	      errno);
	expect_no_log("alloc_parent_domain");
	if (!parent)
		return;
	pa.pd = parent;
	errno = 0;
	nested = ibv_alloc_parent_domain(ctx, &pa);
	CHECK(!nested && errno == EINVAL, "parent domain of a parent domain errno %d", errno);
	expect_log("nested parent domain", "pd must be a protection domain");

	ca.parent_domain = pd;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &ca);
	CHECK(!cq && errno == EINVAL, "create_cq_ex(parent_domain = a PD) errno %d", errno);
	expect_log("create_cq_ex on a PD", "parent_domain must be a parent domain");
	ca.parent_domain = parent;
	cq = ibv_create_cq_ex(ctx, &ca);
	CHECK(cq != NULL, "create_cq_ex(parent domain) errno %d", errno);
	mr = ibv_reg_mr(parent, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && mr->pd == parent, "reg_mr on a parent domain errno %d", errno);
	expect_no_log("CQ and MR on a parent domain");

	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd under a parent domain");
	expect_log("dealloc_pd under a parent domain", "still use it");
	CHECK(ibv_dealloc_pd(parent) == EBUSY, "dealloc parent domain with a CQ and an MR");
	expect_log("dealloc parent domain in use", "still use it");
	if (mr)
		CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr");
	if (cq)
		CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0, "destroy_cq");
	CHECK(ibv_dealloc_pd(parent) == 0, "dealloc parent domain");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd after its parent domain");
	expect_no_log("parent domain teardown");
}

/* The raw clock counts the cycles completion timestamps count: at 1 GHz
 * (hca_core_clock) the nanoseconds of CLOCK_MONOTONIC. */
static void raw_clock_counts_completion_cycles(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dx;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct timespec before, after;
	int rc;

	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0 && dx.hca_core_clock == 1000000,
	      "hca_core_clock %" PRIu64 " kHz", dx.hca_core_clock);
	clock_gettime(CLOCK_MONOTONIC, &before);
	rc = ibv_query_rt_values_ex(ctx, &v);
	clock_gettime(CLOCK_MONOTONIC, &after);
	uint64_t lo = (uint64_t)before.tv_sec * 1000000000u + (uint64_t)before.tv_nsec;
	uint64_t hi = (uint64_t)after.tv_sec * 1000000000u + (uint64_t)after.tv_nsec;

	CHECK(rc == 0 && v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && v.raw_clock.tv_sec == 0 &&
		      (uint64_t)v.raw_clock.tv_nsec >= lo && (uint64_t)v.raw_clock.tv_nsec <= hi,
	      "query_rt_values_ex = %d, raw clock %ld", rc, (long)v.raw_clock.tv_nsec);
	v.comp_mask = 2;
	CHECK(ibv_query_rt_values_ex(ctx, &v) == EINVAL, "query_rt_values_ex(comp_mask 2)");
	expect_log("query_rt_values_ex with comp_mask 2", "unknown comp_mask bits 0x2");
}

/* issue 36: SRQ resizing is advertised (it works: ibv_modify_srq max_wr),
 * and a memory window nobody allocated is unknown (ENOENT), as the kernel
 * answers a handle it does not know. */
static void srq_resize_and_unknown_mw(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_device_attr da;
	struct ibv_srq_attr sa = { .max_wr = 64 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mw *mw, fake;
	struct ibv_srq *srq;
	int rc;

	CHECK(pd != NULL, "alloc_pd");
	if (!pd)
		return;
	CHECK(ibv_query_device(ctx, &da) == 0, "query_device");
	CHECK(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE, "IBV_DEVICE_SRQ_RESIZE not advertised");
	srq = ibv_create_srq(pd, &sia);
	CHECK(srq != NULL, "create_srq errno %d", errno);
	if (srq) {
		CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == 0, "modify_srq(max_wr 64)");
		memset(&sa, 0, sizeof(sa));
		CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr >= 64, "query_srq max_wr %u",
		      sa.max_wr);
		expect_no_log("srq resize");
		CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq");
	}
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	CHECK(mw != NULL, "alloc_mw errno %d", errno);
	if (mw) {
		fake = *mw;
		CHECK(ibv_dealloc_mw(mw) == 0, "dealloc_mw");
		errno = 0;
		rc = ibv_dealloc_mw(&fake); /* the same window again: gone */
		CHECK(rc == ENOENT && errno == ENOENT, "dealloc_mw(gone) = %d errno %d, want ENOENT",
		      rc, errno);
		expect_log("dealloc_mw of a window already gone", "is not a live object of this process");
	}
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
}

/* Destroying an object twice (or a copy of one) is ENOENT, in the return
 * value and errno, with one line naming the verb; never a crash (issue 36:
 * the process crashed).  The kernel answers a handle it does not know so. */
#define TWICE(verb, call)                                                                          \
	do {                                                                                       \
		int rc_;                                                                           \
                                                                                                   \
		errno = 0;                                                                         \
		rc_ = (call);                                                                      \
		CHECK(rc_ == ENOENT && errno == ENOENT, verb " twice = %d errno %d, want ENOENT", \
		      rc_, errno);                                                                 \
		expect_log(verb " twice", verb ": ");                                              \
	} while (0)

static void destroyed_twice_is_enoent(struct ibv_context *ctx)
{
	static char buf[64];
	struct ibv_port_attr pa;
	struct ibv_pd *pd = ibv_alloc_pd(ctx), copy;
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mw *mw = pd ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = pd ? ibv_create_srq(pd, &sia) : NULL;
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = pd && cq ? ibv_create_qp(pd, &qia) : NULL;
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_ah *ah;

	CHECK(pd && mr && mw && cq && srq && qp, "objects for the double destroys: errno %d", errno);
	if (!pd || !mr || !mw || !cq || !srq || !qp)
		return;
	CHECK(ibv_query_port(ctx, 1, &pa) == 0, "query_port");
	aa.dlid = pa.lid;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL, "create_ah errno %d", errno);
	if (!ah)
		return;
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_srq(srq) == 0 && ibv_destroy_cq(cq) == 0 &&
		      ibv_destroy_ah(ah) == 0 && ibv_dealloc_mw(mw) == 0 && ibv_dereg_mr(mr) == 0,
	      "the first destroys");
	expect_no_log("the first destroys");
	TWICE("destroy_qp", ibv_destroy_qp(qp));
	TWICE("destroy_srq", ibv_destroy_srq(srq));
	TWICE("destroy_cq", ibv_destroy_cq(cq));
	TWICE("destroy_ah", ibv_destroy_ah(ah));
	TWICE("dealloc_mw", ibv_dealloc_mw(mw));
	TWICE("dereg_mr", ibv_dereg_mr(mr));
	/* A copy of a live PD is not the PD: refused, and the PD stays. */
	copy = *pd;
	TWICE("dealloc_pd", ibv_dealloc_pd(&copy));
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd after its copy was refused");
	TWICE("dealloc_pd", ibv_dealloc_pd(pd));
	/* The device still works: new objects come and go. */
	pd = ibv_alloc_pd(ctx);
	CHECK(pd != NULL && ibv_dealloc_pd(pd) == 0, "alloc_pd and dealloc_pd after the double destroys");
	expect_no_log("a PD after the double destroys");
}

/* Device memory (issue 36): max_dm_size bounds one DM and all of them;
 * copies move 32-bit words inside the DM; DM MRs are zero based; a DM with
 * an MR on it stays; what was written is read back, and through the MR. */
static void device_memory_rules(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex ax;
	struct ibv_alloc_dm_attr big = { 0 }, half = { 0 };
	struct ibv_dm *dm, *dm2;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint32_t out[4], in[4] = { 1, 2, 3, 4 };
	int rc;

	CHECK(ibv_query_device_ex(ctx, NULL, &ax) == 0 && ax.max_dm_size >= 4096,
	      "query_device_ex: max_dm_size %llu", (unsigned long long)ax.max_dm_size);
	big.length = ax.max_dm_size + 1;
	errno = 0;
	CHECK(!ibv_alloc_dm(ctx, &big) && errno == EINVAL, "alloc_dm beyond max_dm_size: errno %d",
	      errno);
	expect_log("alloc_dm beyond max_dm_size", "is not 1 to max_dm_size");
	half.length = ax.max_dm_size / 2 + 64;
	dm = ibv_alloc_dm(ctx, &half);
	CHECK(dm != NULL, "alloc_dm of half of max_dm_size: errno %d", errno);
	if (!dm)
		return;
	errno = 0;
	dm2 = ibv_alloc_dm(ctx, &half);
	CHECK(!dm2 && errno == ENOMEM, "a second half does not fit: errno %d", errno);
	expect_log("alloc_dm beside another", "do not fit beside");
	CHECK(ibv_memcpy_to_dm(dm, 64, in, sizeof(in)) == 0, "memcpy_to_dm");
	CHECK(ibv_memcpy_from_dm(out, dm, 64, sizeof(out)) == 0 && !memcmp(in, out, sizeof(in)),
	      "memcpy_from_dm reads back what was written");
	rc = ibv_memcpy_to_dm(dm, 2, in, 4);
	CHECK(rc == EINVAL, "memcpy_to_dm at offset 2 = %d, want EINVAL", rc);
	expect_log("memcpy_to_dm at offset 2", "must be multiples of 4");
	rc = ibv_memcpy_from_dm(out, dm, half.length, 4);
	CHECK(rc == EFAULT, "memcpy_from_dm past the end = %d, want EFAULT", rc);
	expect_log("memcpy_from_dm past the end", "is past the");
	pd = ibv_alloc_pd(ctx);
	errno = 0;
	CHECK(pd && !ibv_reg_dm_mr(pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
	      "reg_dm_mr without ZERO_BASED: errno %d", errno);
	expect_log("reg_dm_mr without ZERO_BASED", "zero based");
	mr = pd ? ibv_reg_dm_mr(pd, dm, 64, 64, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE)
		: NULL;
	CHECK(mr != NULL && mr->addr == NULL && mr->length == 64, "reg_dm_mr: errno %d", errno);
	rc = ibv_free_dm(dm);
	CHECK(rc == EBUSY, "free_dm with an MR on it = %d, want EBUSY", rc);
	expect_log("free_dm with an MR on it", "MR(s) are registered on this DM");
	CHECK(!mr || ibv_dereg_mr(mr) == 0, "dereg_mr of the DM MR");
	CHECK(ibv_free_dm(dm) == 0, "free_dm");
	CHECK(pd && ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	/* The room is back. */
	dm = ibv_alloc_dm(ctx, &half);
	CHECK(dm != NULL && ibv_free_dm(dm) == 0, "alloc_dm after free_dm: errno %d", errno);
	expect_no_log("device memory freed and allocated again");
}

/* issue 36: max_pd and max_ah are what the device holds: one more is
 * ENOMEM with a line naming the limit, and one freed makes room again. */
static void max_pd_and_max_ah_hold(struct ibv_context *ctx)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_ah_attr attr = { .port_num = 1 };
	struct ibv_pd **pds, *pd;
	struct ibv_ah **ahs;
	int n = 0, m = 0;

	CHECK(ibv_query_device(ctx, &da) == 0, "query_device");
	ibv_query_port(ctx, 1, &pa);
	pds = calloc((size_t)da.max_pd + 1, sizeof(*pds));
	ahs = calloc((size_t)da.max_ah + 1, sizeof(*ahs));
	if (!pds || !ahs) {
		CHECK(0, "no memory for %d PDs and %d AHs", da.max_pd, da.max_ah);
		free(pds);
		free(ahs);
		return;
	}
	errno = 0;
	while (n <= da.max_pd && (pds[n] = ibv_alloc_pd(ctx)))
		n++;
	CHECK(n == da.max_pd && errno == ENOMEM, "alloc_pd failed after %d of max_pd %d, errno %d",
	      n, da.max_pd, errno);
	expect_log("alloc_pd beyond max_pd", "PDs exist already (max_pd)");
	if (n) {
		CHECK(ibv_dealloc_pd(pds[--n]) == 0, "dealloc_pd");
		pds[n] = ibv_alloc_pd(ctx);
		CHECK(pds[n] != NULL, "alloc_pd after one was freed: errno %d", errno);
		if (pds[n])
			n++;
	}
	pd = n ? pds[0] : NULL;
	attr.dlid = pa.lid;
	errno = 0;
	while (pd && m <= da.max_ah && (ahs[m] = ibv_create_ah(pd, &attr)))
		m++;
	CHECK(m == da.max_ah && errno == ENOMEM, "create_ah failed after %d of max_ah %d, errno %d",
	      m, da.max_ah, errno);
	expect_log("create_ah beyond max_ah", "AHs exist already (max_ah)");
	while (m)
		CHECK(ibv_destroy_ah(ahs[--m]) == 0, "destroy_ah");
	while (n)
		CHECK(ibv_dealloc_pd(pds[--n]) == 0, "dealloc_pd");
	expect_no_log("freeing every PD and AH");
	free(pds);
	free(ahs);
}

int main(void)
{
	const char *log_path = getenv("SOFTIB_LOG_FILE");
	struct ibv_context *ctx;

	if (!log_path) {
		fprintf(stderr, "verbs_device_rules: set SOFTIB_LOG_FILE (the checks read the log)\n");
		return 2;
	}
	log_file = fopen(log_path, "a+");
	if (!log_file) {
		perror(log_path);
		return 2;
	}
	fseek(log_file, 0, SEEK_END);
	ctx = open_softib();
	if (!ctx) {
		fprintf(stderr, "verbs_device_rules: softib0 not listed or not opened (run under softib run)\n");
		return 2;
	}
	expect_no_log("open");
	port_rules(ctx);
	gid_and_pkey_rules(ctx);
	ah_and_pd_rules(ctx);
	ah_from_wc_uses_the_gid_table(ctx);
	channels_and_async_fd(ctx);
	raw_clock_counts_completion_cycles(ctx);
	parent_domain_rules(ctx);
	srq_resize_and_unknown_mw(ctx);
	max_pd_and_max_ah_hold(ctx);
	destroyed_twice_is_enoent(ctx);
	device_memory_rules(ctx);
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

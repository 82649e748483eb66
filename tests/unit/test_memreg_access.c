/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* memreg_check verdicts, MR rules, MW bind/invalidate rules, rereg, holds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memreg/memreg.h"

#define PD_A 7
#define PD_B 8
#define QP_X 0x12
#define QP_Y 0x13
#define IOVA 0x10000ull
#define LEN 4096u

#define RW (MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ)

static uint8_t mem[2 * LEN];
static struct memreg_table *t;

static int setup(void **state)
{
	(void)state;
	t = memreg_table_create(64, 64);
	return t ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	memreg_table_destroy(t);
	return 0;
}

static uint32_t reg_mr(uint32_t access, uint32_t pd)
{
	struct memreg_mr_attr a = { .host = mem, .iova = IOVA, .length = LEN, .access = access,
				    .pd = pd };
	uint32_t key;

	assert_int_equal(memreg_mr_register(t, &a, &key), 0);
	return key;
}

static enum memreg_verdict check(uint32_t key, bool remote, uint32_t pd, uint32_t qpn,
				 uint64_t va, uint64_t len, uint32_t need, uint8_t **host)
{
	struct memreg_request r = { .key = key, .remote = remote, .pd = pd, .qpn = qpn,
				    .va = va, .len = len, .access = need };
	struct memreg_grant g;
	enum memreg_verdict v = memreg_check(t, &r, &g);

	if (host)
		*host = g.host;
	if (v == MEMREG_OK)
		memreg_release(t, &g);
	else
		assert_null(g.host);
	return v;
}

static enum memreg_verdict rremote(uint32_t key, uint64_t va, uint64_t len, uint32_t need)
{
	return check(key, true, PD_A, QP_X, va, len, need, NULL);
}

/* ---------------------------------------------------------------- MR */

static void test_mr_local_read_gives_host_address_of_va(void **state)
{
	(void)state;
	uint32_t k = reg_mr(0, PD_A);
	uint8_t *host;

	assert_int_equal(check(k, false, PD_A, QP_X, IOVA + 100, 8, 0, &host), MEMREG_OK);
	assert_ptr_equal(host, mem + 100);
}

static void test_bounds_are_exact_at_both_edges(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	uint32_t r = MEMREG_ACCESS_REMOTE_READ;

	assert_int_equal(rremote(k, IOVA, LEN, r), MEMREG_OK);
	assert_int_equal(rremote(k, IOVA + LEN - 1, 1, r), MEMREG_OK);
	assert_int_equal(rremote(k, IOVA - 1, 1, r), MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(k, IOVA, LEN + 1, r), MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(k, IOVA + LEN, 1, r), MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(k, IOVA + 1, LEN, r), MEMREG_OUT_OF_BOUNDS);
}

static void test_va_plus_len_that_wraps_is_out_of_bounds(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	uint32_t r = MEMREG_ACCESS_REMOTE_READ;

	assert_int_equal(rremote(k, IOVA + 16, UINT64_MAX, r), MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(k, UINT64_MAX, 2, r), MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(k, IOVA + 1, UINT64_MAX - IOVA, r), MEMREG_OUT_OF_BOUNDS);
}

/* memreg's own rule, for the L_Keys of zero-length SGEs and the like.  A
 * responder never asks it about a zero-length RDMA WRITE or READ: their
 * R_Key is not validated (IBA C9-88; test_rc_rules.c, test_uc_ud_engine.c). */
static void test_zero_length_skips_bounds_but_checks_the_key(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	uint32_t w = MEMREG_ACCESS_REMOTE_WRITE;

	assert_int_equal(rremote(k, 0xdead0000, 0, w), MEMREG_OK);
	assert_int_equal(rremote(k ^ 0x1, 0xdead0000, 0, w), MEMREG_STALE_KEY);
	assert_int_equal(rremote(MEMREG_KEY(60, 1), IOVA, 0, w), MEMREG_NO_KEY);
	assert_int_equal(check(k, true, PD_B, QP_X, IOVA, 0, w, NULL), MEMREG_WRONG_PD);
	assert_int_equal(rremote(k, IOVA, 0, MEMREG_ACCESS_REMOTE_ATOMIC), MEMREG_NO_RIGHT);
}

static void test_zero_length_region_allows_only_zero_length(void **state)
{
	(void)state;
	struct memreg_mr_attr a = { .host = mem, .iova = IOVA, .length = 0, .access = RW,
				    .pd = PD_A };
	uint32_t k;

	assert_int_equal(memreg_mr_register(t, &a, &k), 0);
	assert_int_equal(rremote(k, IOVA, 0, MEMREG_ACCESS_REMOTE_READ), MEMREG_OK);
	assert_int_equal(rremote(k, IOVA, 1, MEMREG_ACCESS_REMOTE_READ), MEMREG_OUT_OF_BOUNDS);
}

static void test_each_missing_right_is_refused(void **state)
{
	(void)state;
	uint32_t ro = reg_mr(0, PD_A);
	uint32_t lw = reg_mr(MEMREG_ACCESS_LOCAL_WRITE, PD_A);
	uint32_t rr = reg_mr(MEMREG_ACCESS_REMOTE_READ, PD_A);
	uint32_t at = reg_mr(MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_ATOMIC, PD_A);

	assert_int_equal(check(ro, false, PD_A, QP_X, IOVA, 8, MEMREG_ACCESS_LOCAL_WRITE, NULL),
			 MEMREG_NO_RIGHT);
	assert_int_equal(check(lw, false, PD_A, QP_X, IOVA, 8, MEMREG_ACCESS_LOCAL_WRITE, NULL),
			 MEMREG_OK);
	assert_int_equal(rremote(lw, IOVA, 8, MEMREG_ACCESS_REMOTE_READ), MEMREG_NO_RIGHT);
	assert_int_equal(rremote(rr, IOVA, 8, MEMREG_ACCESS_REMOTE_READ), MEMREG_OK);
	assert_int_equal(rremote(rr, IOVA, 8, MEMREG_ACCESS_REMOTE_WRITE), MEMREG_NO_RIGHT);
	assert_int_equal(rremote(rr, IOVA, 8, MEMREG_ACCESS_REMOTE_ATOMIC), MEMREG_NO_RIGHT);
	assert_int_equal(rremote(at, IOVA, 8, MEMREG_ACCESS_REMOTE_ATOMIC), MEMREG_OK);
	assert_int_equal(rremote(at, IOVA, 8, MEMREG_ACCESS_REMOTE_WRITE), MEMREG_NO_RIGHT);
}

static void test_access_from_another_pd_is_refused(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);

	assert_int_equal(check(k, false, PD_B, QP_X, IOVA, 8, 0, NULL), MEMREG_WRONG_PD);
	assert_int_equal(check(k, true, PD_B, QP_X, IOVA, 8, MEMREG_ACCESS_REMOTE_READ, NULL),
			 MEMREG_WRONG_PD);
}

static void test_zero_based_mr_is_addressed_by_offset(void **state)
{
	(void)state;
	struct memreg_mr_attr a = { .host = mem, .iova = 0, .length = LEN,
				    .access = RW | MEMREG_ACCESS_ZERO_BASED, .pd = PD_A };
	uint8_t *host;
	uint32_t k;

	assert_int_equal(memreg_mr_register(t, &a, &k), 0);
	assert_int_equal(check(k, true, PD_A, QP_X, 10, 4, MEMREG_ACCESS_REMOTE_READ, &host),
			 MEMREG_OK);
	assert_ptr_equal(host, mem + 10);
	assert_int_equal(rremote(k, LEN, 1, MEMREG_ACCESS_REMOTE_READ), MEMREG_OUT_OF_BOUNDS);
}

static void test_remote_write_or_atomic_without_local_write_is_einval(void **state)
{
	(void)state;
	struct memreg_mr_attr a = { .host = mem, .iova = IOVA, .length = LEN, .pd = PD_A };
	const char *rule = NULL;
	uint32_t k;

	a.access = MEMREG_ACCESS_REMOTE_WRITE;
	assert_int_equal(memreg_mr_register(t, &a, &k), EINVAL);
	a.access = MEMREG_ACCESS_REMOTE_ATOMIC | MEMREG_ACCESS_REMOTE_READ;
	assert_int_equal(memreg_mr_register(t, &a, &k), EINVAL);
	assert_int_equal(memreg_mr_access_valid(MEMREG_ACCESS_REMOTE_WRITE, &rule), EINVAL);
	assert_non_null(strstr(rule, "LOCAL_WRITE"));
	a.access = MEMREG_ACCESS_REMOTE_READ | MEMREG_ACCESS_MW_BIND;
	assert_int_equal(memreg_mr_register(t, &a, &k), 0);
	assert_int_equal(memreg_mr_count(t), 1);
}

static void test_unknown_access_bits_are_refused_odp_and_hugetlb_taken(void **state)
{
	(void)state;
	assert_int_equal(memreg_mr_access_valid(1u << 20, NULL), EINVAL);
	assert_int_equal(memreg_mr_access_valid(MEMREG_ACCESS_ON_DEMAND | MEMREG_ACCESS_HUGETLB,
						NULL),
			 0);
	assert_int_equal(memreg_mr_access_valid(RW | MEMREG_ACCESS_REMOTE_ATOMIC |
						MEMREG_ACCESS_MW_BIND | MEMREG_ACCESS_ZERO_BASED,
						NULL),
			 0);
}

static void test_translation_that_wraps_is_einval(void **state)
{
	(void)state;
	struct memreg_mr_attr a = { .host = mem, .iova = UINT64_MAX - 10, .length = LEN, .pd = 1 };
	uint32_t k;

	assert_int_equal(memreg_mr_register(t, &a, &k), EINVAL);
	a.iova = IOVA;
	a.host = NULL;
	assert_int_equal(memreg_mr_register(t, &a, &k), EINVAL);
}

/* ---------------------------------------------------------------- rereg */

static void test_rereg_access_keeps_keys_and_changes_rights(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	struct memreg_mr_attr a = { .access = MEMREG_ACCESS_LOCAL_WRITE };

	assert_int_equal(rremote(k, IOVA, 8, MEMREG_ACCESS_REMOTE_WRITE), MEMREG_OK);
	assert_int_equal(memreg_mr_rereg(t, k, MEMREG_REREG_ACCESS, &a), 0);
	assert_int_equal(rremote(k, IOVA, 8, MEMREG_ACCESS_REMOTE_WRITE), MEMREG_NO_RIGHT);
	a.access = MEMREG_ACCESS_REMOTE_WRITE; /* without LOCAL_WRITE */
	assert_int_equal(memreg_mr_rereg(t, k, MEMREG_REREG_ACCESS, &a), EINVAL);
	a.access = RW;
	assert_int_equal(memreg_mr_rereg(t, k, MEMREG_REREG_ACCESS, &a), 0);
	assert_int_equal(rremote(k, IOVA, 8, MEMREG_ACCESS_REMOTE_WRITE), MEMREG_OK);
}

static void test_rereg_pd_moves_the_region_to_the_new_pd(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	struct memreg_mr_attr a = { .pd = PD_B, .access = 0xdead /* ignored */ };
	struct memreg_mr_attr q;

	assert_int_equal(memreg_mr_rereg(t, k, MEMREG_REREG_PD, &a), 0);
	assert_int_equal(check(k, false, PD_A, QP_X, IOVA, 8, 0, NULL), MEMREG_WRONG_PD);
	assert_int_equal(check(k, false, PD_B, QP_X, IOVA, 8, 0, NULL), MEMREG_OK);
	assert_int_equal(memreg_mr_query(t, k, &q), 0);
	assert_int_equal(q.access, RW);
	assert_int_equal(q.pd, PD_B);
}

static void test_rereg_translation_moves_the_region(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	struct memreg_mr_attr a = { .host = mem + LEN, .iova = 0x50000, .length = 64 };
	uint8_t *host;

	assert_int_equal(memreg_mr_rereg(t, k, MEMREG_REREG_TRANSLATION, &a), 0);
	assert_int_equal(check(k, false, PD_A, QP_X, IOVA, 8, 0, NULL), MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(check(k, false, PD_A, QP_X, 0x50000 + 8, 8, 0, &host), MEMREG_OK);
	assert_ptr_equal(host, mem + LEN + 8);
	assert_int_equal(check(k, false, PD_A, QP_X, 0x50000, 65, 0, NULL), MEMREG_OUT_OF_BOUNDS);
}

static void test_rereg_with_bad_flags_or_key_is_einval_and_changes_nothing(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	struct memreg_mr_attr a = { .pd = PD_B };

	assert_int_equal(memreg_mr_rereg(t, k, 0, &a), EINVAL);
	assert_int_equal(memreg_mr_rereg(t, k, 1u << 3, &a), EINVAL);
	assert_int_equal(memreg_mr_rereg(t, k + 1, MEMREG_REREG_PD, &a), EINVAL);
	assert_int_equal(check(k, false, PD_A, QP_X, IOVA, 8, 0, NULL), MEMREG_OK);
}

/* ---------------------------------------------------------------- MW */

static uint32_t alloc_mw(unsigned type, uint32_t pd)
{
	uint32_t rkey;

	assert_int_equal(memreg_mw_alloc(t, pd, type, &rkey), 0);
	return rkey;
}

static uint32_t inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

static struct memreg_bind bind_req(uint32_t mw, uint32_t mr, bool by_wr)
{
	struct memreg_bind b = { .mw_rkey = mw, .new_rkey = inc_rkey(mw), .mr_lkey = mr,
				 .addr = IOVA + 256, .length = 512,
				 .access = MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ,
				 .qpn = QP_X, .pd = PD_A, .by_wr = by_wr };
	return b;
}

static void test_mw_type_3_and_0_are_einval(void **state)
{
	(void)state;
	uint32_t rkey;

	assert_int_equal(memreg_mw_alloc(t, PD_A, 3, &rkey), EINVAL);
	assert_int_equal(memreg_mw_alloc(t, PD_A, 0, &rkey), EINVAL);
	assert_int_equal(memreg_mw_count(t), 0);
}

static void test_unbound_window_is_refused_and_is_never_an_lkey(void **state)
{
	(void)state;
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_1, PD_A);

	assert_int_equal(rremote(w, IOVA, 8, MEMREG_ACCESS_REMOTE_READ), MEMREG_WINDOW_UNBOUND);
	assert_int_equal(check(w, false, PD_A, QP_X, IOVA, 8, 0, NULL), MEMREG_WINDOW_AS_LKEY);
}

static void test_type1_bind_grants_exactly_the_window(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_1, PD_A);
	struct memreg_bind b = bind_req(w, mr, false);
	uint8_t *host;

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(rremote(w, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_READ), MEMREG_STALE_KEY);
	w = b.new_rkey;
	assert_int_equal(check(w, true, PD_A, QP_Y, IOVA + 256, 512, MEMREG_ACCESS_REMOTE_WRITE,
			       &host),
			 MEMREG_OK);
	assert_ptr_equal(host, mem + 256);
	assert_int_equal(rremote(w, IOVA + 255, 1, MEMREG_ACCESS_REMOTE_READ),
			 MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(w, IOVA + 256 + 512, 1, MEMREG_ACCESS_REMOTE_READ),
			 MEMREG_OUT_OF_BOUNDS);
	assert_int_equal(rremote(w, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_ATOMIC), MEMREG_NO_RIGHT);
	assert_int_equal(check(w, true, PD_B, QP_X, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_READ,
			       NULL),
			 MEMREG_WRONG_PD);
}

static void test_type1_zero_length_bind_unbinds(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_1, PD_A);
	struct memreg_bind b = bind_req(w, mr, false);
	bool bound;

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mr_deregister(t, mr), EBUSY);
	b.mw_rkey = b.new_rkey;
	b.new_rkey = inc_rkey(b.mw_rkey);
	b.length = 0;
	b.access = 0;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mw_query(t, b.new_rkey, NULL, NULL, &bound), 0);
	assert_false(bound);
	assert_int_equal(rremote(b.new_rkey, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_READ),
			 MEMREG_WINDOW_UNBOUND);
	assert_int_equal(memreg_mr_deregister(t, mr), 0);
}

static void test_type1_rebind_moves_the_window(void **state)
{
	(void)state;
	uint32_t mr1 = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t mr2 = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_1, PD_A);
	struct memreg_bind b = bind_req(w, mr1, false);

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	b.mw_rkey = b.new_rkey;
	b.new_rkey = inc_rkey(b.mw_rkey);
	b.mr_lkey = mr2;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mr_deregister(t, mr1), 0);
	assert_int_equal(memreg_mr_deregister(t, mr2), EBUSY);
}

static void test_bind_rules_of_iba_10_6_7_2(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t nobind = reg_mr(RW, PD_A);
	uint32_t nolw = reg_mr(MEMREG_ACCESS_REMOTE_READ | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t mr_b = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_B);
	uint32_t w1 = alloc_mw(MEMREG_MW_TYPE_1, PD_A);
	uint32_t w2 = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b;

	b = bind_req(w1, nobind, false);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_MR_NO_MW_BIND);
	b = bind_req(w1, nolw, false);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_NEEDS_LOCAL_WRITE);
	b.access = MEMREG_ACCESS_REMOTE_READ;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	b = bind_req(b.new_rkey, nolw, false);
	b.access = MEMREG_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_NEEDS_LOCAL_WRITE);
	b = bind_req(w2, mr_b, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_WRONG_PD);
	b = bind_req(w2, mr, true);
	b.pd = PD_B;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_WRONG_PD);
	b = bind_req(w2, mr, true);
	b.addr = IOVA - 1;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_OUTSIDE_MR);
	b.addr = IOVA + LEN - 511;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_OUTSIDE_MR);
	b.addr = IOVA + 16;
	b.length = UINT64_MAX;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_OUTSIDE_MR);
	b = bind_req(w2, mr, true);
	b.access |= 1u << 12;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_BAD_ACCESS);
	b = bind_req(w2, mr, false); /* type 2 through ibv_bind_mw */
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_WRONG_VERB);
	b = bind_req(w2, mr, true);
	b.mr_lkey = MEMREG_KEY(63, 0);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_NO_MR);
	b = bind_req(mr, mr, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_NOT_WINDOW);
	b = bind_req(MEMREG_KEY(62, 1), mr, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_NO_KEY);
	/* Nothing above may have bound anything. */
	assert_int_equal(memreg_mr_deregister(t, mr), 0);
}

static void test_windows_are_named_by_index_and_type1_may_bind_by_wr(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w1 = alloc_mw(MEMREG_MW_TYPE_1, PD_A);
	uint32_t w2 = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w1, mr, true);
	uint32_t stale;

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	/* type 2: bound, invalidated, then bound again through the handle
	 * whose key8 is the allocation's, not the last bind's */
	b = bind_req(w2, mr, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mw_invalidate(t, b.new_rkey, false, QP_X, PD_A), MEMREG_OK);
	stale = w2;
	b = bind_req(stale, mr, true);
	b.new_rkey = MEMREG_KEY(MEMREG_KEY_INDEX(w2), 0x77);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(rremote(b.new_rkey, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_READ), MEMREG_OK);
	assert_int_equal(rremote(stale, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_READ),
			 MEMREG_STALE_KEY);
	assert_int_equal(memreg_mw_dealloc(t, stale), 0);
	assert_int_equal(memreg_mw_dealloc(t, w1), 0);
	assert_int_equal(memreg_mw_count(t), 0);
	assert_int_equal(memreg_mr_deregister(t, mr), 0);
}

static void test_type2_bind_is_for_its_qp_only_and_needs_a_free_window(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);
	uint32_t rkey;

	b.new_rkey = MEMREG_KEY(MEMREG_KEY_INDEX(w), 0x5a); /* the consumer picks key8 */
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	rkey = b.new_rkey;
	assert_int_equal(check(rkey, true, PD_A, QP_X, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_WRITE,
			       NULL),
			 MEMREG_OK);
	assert_int_equal(check(rkey, true, PD_A, QP_Y, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_WRITE,
			       NULL),
			 MEMREG_WINDOW_OTHER_QP);
	b = bind_req(rkey, mr, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_TYPE2_BOUND);
}

/* A type 2 bind takes only the key byte of the new R_Key; the index stays
 * the window's, whatever the consumer put above the byte (mlx5 and rxe
 * read only the byte, and programs written for them rely on it). */
static void test_type2_bind_takes_only_the_key_byte(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);

	b.new_rkey = MEMREG_KEY(MEMREG_KEY_INDEX(w) + 7, 0x3c);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(check(MEMREG_KEY(MEMREG_KEY_INDEX(w), 0x3c), true, PD_A, QP_X, IOVA + 256,
			       8, MEMREG_ACCESS_REMOTE_WRITE, NULL),
			 MEMREG_OK);
	assert_int_not_equal(check(b.new_rkey, true, PD_A, QP_X, IOVA + 256, 8,
				   MEMREG_ACCESS_REMOTE_WRITE, NULL),
			     MEMREG_OK);
}

/* IBA o10-37.2.40: a type 2 window is bound to a region with a length;
 * a bind of zero length or without a region is refused (rxe agrees), and
 * the window stays free for a real bind. */
static void test_type2_zero_length_bind_is_refused(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);

	b.length = 0;
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_TYPE2_EMPTY);
	b = bind_req(w, 0, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_BIND_TYPE2_EMPTY);
	b = bind_req(w, mr, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
}

static void test_type2_local_invalidate_needs_same_pd(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);
	uint32_t rkey = b.new_rkey;

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mw_invalidate(t, rkey, false, QP_Y, PD_B), MEMREG_INV_WRONG_PD);
	assert_int_equal(memreg_mw_invalidate(t, w, false, QP_Y, PD_A), MEMREG_STALE_KEY);
	assert_int_equal(memreg_mw_invalidate(t, rkey, false, QP_Y, PD_A), MEMREG_OK);
	assert_int_equal(rremote(rkey, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_WRITE),
			 MEMREG_WINDOW_UNBOUND);
	assert_int_equal(memreg_mw_invalidate(t, rkey, false, QP_Y, PD_A), MEMREG_WINDOW_UNBOUND);
	/* Invalid again: may be bound again, and the MR is free to go. */
	b = bind_req(rkey, mr, true);
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mw_invalidate(t, b.new_rkey, false, QP_X, PD_A), MEMREG_OK);
	assert_int_equal(memreg_mr_deregister(t, mr), 0);
}

static void test_type2_remote_invalidate_must_come_from_its_qp(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mw_invalidate(t, b.new_rkey, true, QP_Y, PD_A),
			 MEMREG_INV_OTHER_QP);
	assert_int_equal(memreg_mw_invalidate(t, b.new_rkey, true, QP_X, PD_A), MEMREG_OK);
}

static void test_only_type2_windows_can_be_invalidated(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w1 = alloc_mw(MEMREG_MW_TYPE_1, PD_A);
	struct memreg_bind b = bind_req(w1, mr, false);

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mw_invalidate(t, b.new_rkey, false, QP_X, PD_A),
			 MEMREG_INV_NOT_TYPE2);
	assert_int_equal(memreg_mw_invalidate(t, mr, false, QP_X, PD_A), MEMREG_INV_NOT_TYPE2);
	assert_int_equal(memreg_mw_invalidate(t, MEMREG_KEY(50, 1), false, QP_X, PD_A),
			 MEMREG_NO_KEY);
}

static void test_dealloc_unbinds_and_frees_the_mr(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);

	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(memreg_mr_deregister(t, mr), EBUSY);
	struct memreg_mr_attr a = { .access = MEMREG_ACCESS_LOCAL_WRITE };
	assert_int_equal(memreg_mr_rereg(t, mr, MEMREG_REREG_ACCESS, &a), EBUSY);
	assert_int_equal(memreg_mw_dealloc(t, b.new_rkey), 0);
	assert_int_equal(rremote(b.new_rkey, IOVA + 256, 8, MEMREG_ACCESS_REMOTE_WRITE),
			 MEMREG_NO_KEY);
	assert_int_equal(memreg_mw_dealloc(t, b.new_rkey), EINVAL);
	assert_int_equal(memreg_mr_deregister(t, mr), 0);
}

static void test_zero_based_window_is_addressed_by_offset(void **state)
{
	(void)state;
	uint32_t mr = reg_mr(RW | MEMREG_ACCESS_MW_BIND, PD_A);
	uint32_t w = alloc_mw(MEMREG_MW_TYPE_2, PD_A);
	struct memreg_bind b = bind_req(w, mr, true);
	uint8_t *host;

	b.access |= MEMREG_ACCESS_ZERO_BASED | MEMREG_ACCESS_LOCAL_WRITE; /* LOCAL_WRITE ignored */
	assert_int_equal(memreg_mw_bind(t, &b), MEMREG_OK);
	assert_int_equal(check(b.new_rkey, true, PD_A, QP_X, 4, 4, MEMREG_ACCESS_REMOTE_READ,
			       &host),
			 MEMREG_OK);
	assert_ptr_equal(host, mem + 256 + 4);
	assert_int_equal(rremote(b.new_rkey, 509, 4, MEMREG_ACCESS_REMOTE_READ),
			 MEMREG_OUT_OF_BOUNDS);
}

/* ---------------------------------------------------------------- holds */

struct dereg_arg {
	uint32_t key;
	volatile int done;
};

static void *dereg_thread(void *p)
{
	struct dereg_arg *a = p;

	assert_int_equal(memreg_mr_deregister(t, a->key), 0);
	a->done = 1;
	return NULL;
}

static void test_dereg_waits_for_a_held_grant(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	struct memreg_request r = { .key = k, .pd = PD_A, .va = IOVA, .len = 8 };
	struct memreg_grant g;
	struct dereg_arg a = { .key = k };
	pthread_t th;

	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OK);
	assert_int_equal(pthread_create(&th, NULL, dereg_thread, &a), 0);
	/* The key stops working as soon as dereg starts ... */
	for (;;) {
		struct memreg_grant g2;

		if (memreg_check(t, &r, &g2) != MEMREG_OK)
			break;
		memreg_release(t, &g2);
		usleep(1000);
	}
	/* ... but dereg cannot return while the grant is held. */
	usleep(20000);
	assert_int_equal(a.done, 0);
	g.host[0] = 1; /* still ours */
	memreg_release(t, &g);
	pthread_join(th, NULL);
	assert_int_equal(a.done, 1);
	assert_int_equal(memreg_mr_count(t), 0);
}


/*
 * The lifetime rule under contention: a thread registers a fresh buffer,
 * deregisters it and frees it, over and over, while another writes through
 * every grant it gets.  A write after free would crash or trip ASan.
 */
struct churn {
	uint32_t key; /* both atomic: shared with the writer */
	int stop;
	unsigned writes;
};

static void *churn_writer(void *p)
{
	struct churn *c = p;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		struct memreg_request r = { .key = __atomic_load_n(&c->key, __ATOMIC_ACQUIRE),
					    .pd = PD_A, .va = IOVA, .len = 64,
					    .access = MEMREG_ACCESS_LOCAL_WRITE };
		struct memreg_grant g;

		if (memreg_check(t, &r, &g) == MEMREG_OK) {
			memset(g.host, 0xab, 64);
			sched_yield(); /* hold it a while: dereg must wait */
			memset(g.host, 0xcd, 64);
			c->writes++;
			memreg_release(t, &g);
		}
	}
	return NULL;
}

static void test_dereg_never_frees_memory_under_a_concurrent_access(void **state)
{
	(void)state;
	struct churn c = { 0 };
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, churn_writer, &c), 0);
	for (int i = 0; i < 3000; i++) {
		uint8_t *buf = malloc(64);
		struct memreg_mr_attr a = { .host = buf, .iova = IOVA, .length = 64,
					    .access = MEMREG_ACCESS_LOCAL_WRITE, .pd = PD_A };
		uint32_t key;

		assert_int_equal(memreg_mr_register(t, &a, &key), 0);
		__atomic_store_n(&c.key, key, __ATOMIC_RELEASE);
		sched_yield();
		assert_int_equal(memreg_mr_deregister(t, key), 0);
		free(buf);
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(memreg_mr_count(t), 0);
}

/* ---------------------------------------------------------------- messages */

static void test_every_verdict_has_a_message(void **state)
{
	(void)state;
	for (int v = 0; v < MEMREG_VERDICT_COUNT; v++)
		assert_string_not_equal(memreg_verdict_str(v), "unknown verdict");
	assert_string_equal(memreg_verdict_str(MEMREG_VERDICT_COUNT), "unknown verdict");
}

static void test_explain_names_key_address_and_range(void **state)
{
	(void)state;
	uint32_t k = reg_mr(RW, PD_A);
	struct memreg_request r = { .key = k, .remote = true, .pd = PD_A, .va = IOVA + LEN,
				    .len = 64, .access = MEMREG_ACCESS_REMOTE_READ };
	struct memreg_grant g;
	char line[160], want[160];

	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OUT_OF_BOUNDS);
	memreg_explain(&r, MEMREG_OUT_OF_BOUNDS, &g, line, sizeof(line));
	snprintf(want, sizeof(want), "rkey 0x%06x: va 0x11000 len 64 outside [0x10000, 0x11000)",
		 k);
	assert_string_equal(line, want);
	r.remote = false;
	r.key = MEMREG_KEY(40, 2);
	assert_int_equal(memreg_check(t, &r, &g), MEMREG_NO_KEY);
	memreg_explain(&r, MEMREG_NO_KEY, &g, line, sizeof(line));
	assert_string_equal(line, "lkey 0x002802: key index not in use");
}

/* ------------------------------------------------------------ ODP */

#define ODP (MEMREG_ACCESS_ON_DEMAND | MEMREG_ACCESS_LOCAL_WRITE)

static uint32_t reg_at(void *host, uint64_t len, uint32_t access)
{
	struct memreg_mr_attr a = { .host = host, .iova = (uintptr_t)host, .length = len,
				    .access = access, .pd = PD_A };
	uint32_t key;

	assert_int_equal(memreg_mr_register(t, &a, &key), 0);
	return key;
}

static void test_grant_says_on_demand_only_for_odp_regions(void **state)
{
	uint32_t odp = reg_at(mem, LEN, ODP), plain = reg_at(mem, LEN, RW);
	struct memreg_request r = { .key = odp, .pd = PD_A, .va = (uintptr_t)mem, .len = 8 };
	struct memreg_grant g;

	(void)state;
	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OK);
	assert_true(g.on_demand);
	memreg_release(t, &g);
	r.key = plain;
	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OK);
	assert_false(g.on_demand);
	memreg_release(t, &g);
}

/* Page 0 mapped, page 1 a hole, page 2 read-only: what hardware's page
 * fault serves or fails, the fault-safe copies serve or fail, no SIGSEGV. */
static void test_odp_copies_fail_not_mapped_where_a_page_fault_would(void **state)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t buf[16] = { 1 };
	struct memreg_grant g;

	(void)state;
	assert_true(p != MAP_FAILED);
	memset(p, 7, 3 * pg);
	assert_int_equal(munmap(p + pg, pg), 0);
	assert_int_equal(mprotect(p + 2 * pg, pg, PROT_READ), 0);
	struct memreg_request r = { .key = reg_at(p, 3 * pg, ODP), .pd = PD_A,
				    .va = (uintptr_t)p, .len = 3 * pg };

	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OK);
	assert_int_equal(memreg_grant_read(&g, 0, buf, sizeof(buf)), MEMREG_OK);
	assert_int_equal(buf[0], 7);
	assert_int_equal(memreg_grant_write(&g, 0, buf, sizeof(buf)), MEMREG_OK);
	assert_int_equal(memreg_grant_read(&g, pg - 8, buf, sizeof(buf)), MEMREG_NOT_MAPPED);
	assert_int_equal(memreg_grant_write(&g, pg, buf, 1), MEMREG_NOT_MAPPED);
	assert_int_equal(memreg_grant_read(&g, 2 * pg, buf, sizeof(buf)), MEMREG_OK);
	assert_int_equal(memreg_grant_write(&g, 2 * pg, buf, 1), MEMREG_NOT_MAPPED);
	assert_int_equal(memreg_odp_fault_in(p, pg, true), MEMREG_OK);
	assert_int_equal(memreg_odp_fault_in(p + pg, 8, false), MEMREG_NOT_MAPPED);
	assert_int_equal(memreg_odp_fault_in(p + 2 * pg, 8, false), MEMREG_OK);
	assert_int_equal(memreg_odp_fault_in(p + 2 * pg, 8, true), MEMREG_NOT_MAPPED);
	memreg_release(t, &g);
	munmap(p, pg);
	munmap(p + 2 * pg, pg);
}

static void test_implicit_odp_region_is_the_address_space_at_iova_0(void **state)
{
	struct memreg_mr_attr a = { .length = UINT64_MAX, .access = ODP, .pd = PD_A };
	struct memreg_request r = { .pd = PD_A, .va = (uintptr_t)mem + 5, .len = 8 };
	struct memreg_grant g;
	char line[160];

	(void)state;
	assert_int_equal(memreg_mr_register(t, &a, &r.key), 0);
	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OK);
	assert_ptr_equal(g.host, mem + 5);
	memreg_release(t, &g);
	r.va = 0x1000; /* never mapped */
	assert_int_equal(memreg_check(t, &r, &g), MEMREG_OK);
	assert_int_equal(memreg_grant_read(&g, 0, line, 8), MEMREG_NOT_MAPPED);
	memreg_release(t, &g);
	memreg_explain(&r, MEMREG_NOT_MAPPED, &g, line, sizeof(line));
	assert_non_null(strstr(line, "va 0x1000 len 8: no page is mapped there"));
	/* not implicit: an iova, or no ON_DEMAND */
	uint32_t k;

	a.iova = 0x1000;
	assert_int_equal(memreg_mr_register(t, &a, &k), EINVAL);
	a.iova = 0;
	a.access = MEMREG_ACCESS_LOCAL_WRITE;
	assert_int_equal(memreg_mr_register(t, &a, &k), EINVAL);
	/* nor may a rereg of its access alone drop ON_DEMAND */
	assert_int_equal(memreg_mr_rereg(t, r.key, MEMREG_REREG_ACCESS, &a), EINVAL);
	a.access = ODP | MEMREG_ACCESS_REMOTE_READ;
	assert_int_equal(memreg_mr_rereg(t, r.key, MEMREG_REREG_ACCESS, &a), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_mr_local_read_gives_host_address_of_va),
		T(test_bounds_are_exact_at_both_edges),
		T(test_va_plus_len_that_wraps_is_out_of_bounds),
		T(test_zero_length_skips_bounds_but_checks_the_key),
		T(test_zero_length_region_allows_only_zero_length),
		T(test_each_missing_right_is_refused),
		T(test_access_from_another_pd_is_refused),
		T(test_zero_based_mr_is_addressed_by_offset),
		T(test_remote_write_or_atomic_without_local_write_is_einval),
		T(test_unknown_access_bits_are_refused_odp_and_hugetlb_taken),
		T(test_translation_that_wraps_is_einval),
		T(test_rereg_access_keeps_keys_and_changes_rights),
		T(test_rereg_pd_moves_the_region_to_the_new_pd),
		T(test_rereg_translation_moves_the_region),
		T(test_rereg_with_bad_flags_or_key_is_einval_and_changes_nothing),
		T(test_mw_type_3_and_0_are_einval),
		T(test_unbound_window_is_refused_and_is_never_an_lkey),
		T(test_type1_bind_grants_exactly_the_window),
		T(test_type1_zero_length_bind_unbinds),
		T(test_type1_rebind_moves_the_window),
		T(test_bind_rules_of_iba_10_6_7_2),
		T(test_windows_are_named_by_index_and_type1_may_bind_by_wr),
		T(test_type2_bind_is_for_its_qp_only_and_needs_a_free_window),
		T(test_type2_bind_takes_only_the_key_byte),
		T(test_type2_zero_length_bind_is_refused),
		T(test_type2_local_invalidate_needs_same_pd),
		T(test_type2_remote_invalidate_must_come_from_its_qp),
		T(test_only_type2_windows_can_be_invalidated),
		T(test_dealloc_unbinds_and_frees_the_mr),
		T(test_zero_based_window_is_addressed_by_offset),
		T(test_dereg_waits_for_a_held_grant),
		T(test_dereg_never_frees_memory_under_a_concurrent_access),
		T(test_every_verdict_has_a_message),
		T(test_explain_names_key_address_and_range),
		T(test_grant_says_on_demand_only_for_odp_regions),
		T(test_odp_copies_fail_not_mapped_where_a_page_fault_would),
		T(test_implicit_odp_region_is_the_address_space_at_iova_0),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

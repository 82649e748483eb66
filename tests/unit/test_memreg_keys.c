/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Key allocation: 24-bit index + 8-bit key, reuse, staleness, growth, limits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "memreg/memreg.h"

static uint8_t buf[4096];

static uint32_t reg(struct memreg_table *t)
{
	struct memreg_mr_attr a = { .host = buf, .iova = (uintptr_t)buf, .length = sizeof(buf),
				    .access = MEMREG_ACCESS_LOCAL_WRITE, .pd = 1 };
	uint32_t key = 0;

	assert_int_equal(memreg_mr_register(t, &a, &key), 0);
	return key;
}

static enum memreg_verdict local_read(struct memreg_table *t, uint32_t key)
{
	struct memreg_request r = { .key = key, .pd = 1, .va = (uintptr_t)buf, .len = 8 };
	struct memreg_grant g;
	enum memreg_verdict v = memreg_check(t, &r, &g);

	if (v == MEMREG_OK)
		memreg_release(t, &g);
	return v;
}

static void test_key_is_index_shifted_by_8_plus_key8(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(16, 16);
	uint32_t k1 = reg(t), k2 = reg(t);

	assert_int_equal(MEMREG_KEY_INDEX(k1), 1);
	assert_int_equal(MEMREG_KEY_INDEX(k2), 2);
	assert_int_equal(MEMREG_KEY(MEMREG_KEY_INDEX(k1), MEMREG_KEY_KEY8(k1)), k1);
	assert_true(k1 <= 0xffffffffu);
	memreg_table_destroy(t);
}

static void test_index_zero_is_never_used_and_key_zero_is_rejected(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(300, 300);
	uint32_t keys[300];

	for (int i = 0; i < 300; i++) {
		keys[i] = reg(t);
		assert_int_not_equal(MEMREG_KEY_INDEX(keys[i]), 0);
	}
	for (int i = 0; i < 300; i++)
		assert_int_equal(memreg_mr_deregister(t, keys[i]), 0);
	for (int i = 0; i < 300; i++)
		assert_int_not_equal(MEMREG_KEY_INDEX(reg(t)), 0);
	assert_int_equal(local_read(t, 0), MEMREG_NO_KEY);
	for (uint32_t k8 = 0; k8 < 256; k8++)
		assert_int_equal(local_read(t, k8), MEMREG_NO_KEY);
	memreg_table_destroy(t);
}

static void test_key8_changes_on_every_reuse_of_an_index(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(1, 0);
	uint32_t prev = reg(t);

	/* With room for one MR the index must be reused each time. */
	for (int i = 0; i < 600; i++) {
		uint32_t k;

		assert_int_equal(memreg_mr_deregister(t, prev), 0);
		k = reg(t);
		assert_int_equal(MEMREG_KEY_INDEX(k), MEMREG_KEY_INDEX(prev));
		assert_int_not_equal(MEMREG_KEY_KEY8(k), MEMREG_KEY_KEY8(prev));
		prev = k;
	}
	memreg_table_destroy(t);
}

static void test_stale_key_is_rejected_after_dereg(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(4, 4);
	uint32_t k = reg(t);

	assert_int_equal(local_read(t, k), MEMREG_OK);
	assert_int_equal(memreg_mr_deregister(t, k), 0);
	assert_int_equal(local_read(t, k), MEMREG_NO_KEY);
	assert_int_equal(memreg_mr_deregister(t, k), EINVAL);
	memreg_table_destroy(t);
}

static void test_stale_key_is_rejected_after_the_index_is_reused(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(1, 0);
	uint32_t old = reg(t), fresh;

	assert_int_equal(memreg_mr_deregister(t, old), 0);
	fresh = reg(t);
	assert_int_equal(MEMREG_KEY_INDEX(fresh), MEMREG_KEY_INDEX(old));
	assert_int_equal(local_read(t, old), MEMREG_STALE_KEY);
	assert_int_equal(memreg_mr_deregister(t, old), EINVAL);
	assert_int_equal(local_read(t, fresh), MEMREG_OK);
	memreg_table_destroy(t);
}

static void test_freed_indices_are_reused_oldest_first(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(3, 0);
	uint32_t a = reg(t), b = reg(t), c = reg(t);

	assert_int_equal(memreg_mr_deregister(t, b), 0);
	assert_int_equal(memreg_mr_deregister(t, a), 0);
	assert_int_equal(MEMREG_KEY_INDEX(reg(t)), MEMREG_KEY_INDEX(b));
	assert_int_equal(MEMREG_KEY_INDEX(reg(t)), MEMREG_KEY_INDEX(a));
	(void)c;
	memreg_table_destroy(t);
}

static void test_table_grows_on_demand_and_every_key_stays_valid(void **state)
{
	(void)state;
	enum { N = 5000 };
	struct memreg_table *t = memreg_table_create(N, 0);
	uint32_t *keys = calloc(N, sizeof(*keys));

	for (int i = 0; i < N; i++)
		keys[i] = reg(t);
	assert_int_equal(memreg_mr_count(t), N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(local_read(t, keys[i]), MEMREG_OK);
		for (int j = 0; j < i && j < 3; j++)
			assert_int_not_equal(keys[i], keys[j]);
	}
	free(keys);
	memreg_table_destroy(t);
}

static void test_mr_limit_gives_enomem_and_frees_make_room(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(2, 1);
	struct memreg_mr_attr a = { .host = buf, .iova = 0, .length = 1, .pd = 1 };
	uint32_t k1 = reg(t), k2 = reg(t), k3, w1, w2;

	assert_int_equal(memreg_mr_register(t, &a, &k3), ENOMEM);
	/* MWs have their own limit in the shared table. */
	assert_int_equal(memreg_mw_alloc(t, 1, MEMREG_MW_TYPE_1, &w1), 0);
	assert_int_equal(memreg_mw_alloc(t, 1, MEMREG_MW_TYPE_2, &w2), ENOMEM);
	assert_int_equal(memreg_mr_deregister(t, k1), 0);
	assert_int_equal(memreg_mr_register(t, &a, &k3), 0);
	assert_int_equal(memreg_mr_count(t), 2);
	assert_int_equal(memreg_mw_count(t), 1);
	(void)k2;
	memreg_table_destroy(t);
}

static void test_mrs_and_mws_share_one_index_space(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(8, 8);
	uint32_t k = reg(t), w;

	assert_int_equal(memreg_mw_alloc(t, 1, MEMREG_MW_TYPE_2, &w), 0);
	assert_int_not_equal(MEMREG_KEY_INDEX(w), MEMREG_KEY_INDEX(k));
	assert_int_equal(memreg_mr_deregister(t, w), EINVAL); /* not an MR */
	assert_int_equal(memreg_mw_dealloc(t, k), EINVAL);    /* not an MW */
	assert_int_equal(memreg_mw_dealloc(t, w), 0);
	memreg_table_destroy(t);
}

static void test_key_beyond_the_table_is_no_key(void **state)
{
	(void)state;
	struct memreg_table *t = memreg_table_create(8, 8);

	reg(t);
	assert_int_equal(local_read(t, MEMREG_KEY(MEMREG_MAX_INDEX, 1)), MEMREG_NO_KEY);
	assert_int_equal(local_read(t, 0xffffffffu), MEMREG_NO_KEY);
	assert_int_equal(local_read(t, MEMREG_KEY(2, 0)), MEMREG_NO_KEY);
	memreg_table_destroy(t);
}

static void test_table_with_no_room_is_refused(void **state)
{
	(void)state;
	errno = 0;
	assert_null(memreg_table_create(0, 0));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_is_index_shifted_by_8_plus_key8),
		cmocka_unit_test(test_index_zero_is_never_used_and_key_zero_is_rejected),
		cmocka_unit_test(test_key8_changes_on_every_reuse_of_an_index),
		cmocka_unit_test(test_stale_key_is_rejected_after_dereg),
		cmocka_unit_test(test_stale_key_is_rejected_after_the_index_is_reused),
		cmocka_unit_test(test_freed_indices_are_reused_oldest_first),
		cmocka_unit_test(test_table_grows_on_demand_and_every_key_stays_valid),
		cmocka_unit_test(test_mr_limit_gives_enomem_and_frees_make_room),
		cmocka_unit_test(test_mrs_and_mws_share_one_index_space),
		cmocka_unit_test(test_key_beyond_the_table_is_no_key),
		cmocka_unit_test(test_table_with_no_room_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

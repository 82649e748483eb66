/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * IBA 1.5's ATOMIC WRITE and FLUSH over RC, two HCAs on the in-memory link:
 * what lands, what each needs of the QP and the region, how a refusal
 * ends, and that a duplicate is answered without running again.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "engine_world.h"
#include "base/log.h"
#include "transport/qp_impl.h"

enum { REMOTE_RW = MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_WRITE };

static struct world *rc_world(void)
{
	struct world *w = world_new();

	world_qp(w, 0, SIB_QPT_RC, 64);
	world_qp(w, 1, SIB_QPT_RC, 64);
	world_connect(w, SIB_MTU_1024);
	return w;
}

/* RTS -> RTS with new remote access flags on the responder (IBA 11.2.5.2). */
static void responder_access(struct world *w, uint32_t access)
{
	struct sib_qp_attr a = { .qp_state = SIB_QPS_RTS, .qp_access_flags = access };

	world_modify(w->n[1].qp, &a, SIB_QP_ACCESS_FLAGS);
}

static void post_atomic_write(struct world *w, uint64_t wr_id, uint64_t addr, uint32_t rkey,
			      const uint8_t bytes[8])
{
	struct sib_send_wqe s = { .wr_id = wr_id, .opcode = SIB_WR_ATOMIC_WRITE,
				  .send_flags = SIB_SEND_SIGNALED };

	s.rdma.remote_addr = addr;
	s.rdma.rkey = rkey;
	memcpy(&s.rdma.atomic_write, bytes, 8);
	world_post_send(&w->n[0], &s, NULL, 0, 0);
}

static void post_flush(struct world *w, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t rkey,
		       uint8_t type, uint8_t level)
{
	struct sib_send_wqe s = { .wr_id = wr_id, .opcode = SIB_WR_FLUSH,
				  .send_flags = SIB_SEND_SIGNALED };

	s.rdma.remote_addr = addr;
	s.rdma.rkey = rkey;
	s.rdma.flush_len = len;
	s.rdma.flush_type = type;
	s.rdma.flush_level = level;
	world_post_send(&w->n[0], &s, NULL, 0, 0);
}

/* A refusal: the status on the requester, both QPs in ERR, and the
 * requester's log line (the last one) naming the operation and the NAK. */
static void expect_refused(struct world *w, uint64_t wr_id, enum sib_wc_status st,
			   const char *line, const char *rule)
{
	world_expect_cqe(w->n[0].scq, wr_id, st, 0);
	assert_int_equal(sib_qp_state(w->n[0].qp), SIB_QPS_ERR);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_ERR);
	if (!strstr(line, rule))
		fail_msg("log line \"%s\" does not name \"%s\"", line, rule);
}

static const uint8_t pattern[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };

static void atomic_write_lands_8_bytes_with_remote_write_access(void **state)
{
	struct world *w = rc_world();
	static uint64_t target[3];
	/* Remote write is the right it needs (rxe; pyverbs registers no more). */
	uint32_t rk = world_reg(&w->n[1], target, sizeof(target), REMOTE_RW);

	(void)state;
	post_atomic_write(w, 1, (uint64_t)(uintptr_t)&target[1], rk, pattern);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 1, SIB_WC_SUCCESS, SIB_WC_ATOMIC_WRITE);
	assert_memory_equal(&target[1], pattern, 8); /* the bytes as posted */
	assert_int_equal(target[0], 0);
	assert_int_equal(target[2], 0);
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	world_free(w);
}

static void atomic_write_misaligned_is_refused_as_an_invalid_request(void **state)
{
	struct world *w = rc_world();
	static uint64_t target[2];
	uint32_t rk = world_reg(&w->n[1], target, sizeof(target), REMOTE_RW);
	char line[256] = "";

	(void)state;
	sib_log_capture(line, sizeof(line));
	post_atomic_write(w, 2, (uint64_t)(uintptr_t)target + 4, rk, pattern);
	world_pump(w);
	sib_log_capture(NULL, 0);
	expect_refused(w, 2, SIB_WC_REM_INV_REQ_ERR, line, "ATOMIC WRITE on QP");
	assert_non_null(strstr(line, "invalid request"));
	assert_int_equal(target[0], 0);
	assert_int_equal(target[1], 0);
	world_free(w);
}

static void atomic_write_with_a_bad_rkey_is_rem_access_err(void **state)
{
	struct world *w = rc_world();
	static uint64_t target;
	uint32_t rk = world_reg(&w->n[1], &target, 8, REMOTE_RW);
	char line[256] = "";

	(void)state;
	sib_log_capture(line, sizeof(line));
	post_atomic_write(w, 3, (uint64_t)(uintptr_t)&target, rk ^ 0x100, pattern);
	world_pump(w);
	sib_log_capture(NULL, 0);
	expect_refused(w, 3, SIB_WC_REM_ACCESS_ERR, line, "ATOMIC WRITE on QP");
	assert_int_equal(target, 0);
	world_free(w);
}

static void atomic_write_to_a_region_without_remote_write_is_rem_access_err(void **state)
{
	struct world *w = rc_world();
	static uint64_t target;
	uint32_t rk = world_reg(&w->n[1], &target, 8,
				MEMREG_ACCESS_LOCAL_WRITE | MEMREG_ACCESS_REMOTE_ATOMIC);
	char line[256] = "";

	(void)state;
	sib_log_capture(line, sizeof(line));
	post_atomic_write(w, 4, (uint64_t)(uintptr_t)&target, rk, pattern);
	world_pump(w);
	sib_log_capture(NULL, 0);
	expect_refused(w, 4, SIB_WC_REM_ACCESS_ERR, line, "ATOMIC WRITE on QP");
	assert_int_equal(target, 0);
	world_free(w);
}

/* Drops the first packet that reaches the requester: the response. */
static bool drop_first_response(int node, uint64_t n, const struct ib_packet *pkt, void *arg)
{
	bool *dropped = arg;

	(void)n;
	(void)pkt;
	if (node != 0 || *dropped)
		return false;
	*dropped = true;
	return true;
}

static void lost_atomic_write_response_is_answered_without_writing_again(void **state)
{
	struct world *w = rc_world();
	static uint64_t target;
	uint32_t rk = world_reg(&w->n[1], &target, 8, REMOTE_RW);
	const uint64_t later = 0x0123456789abcdefull;
	struct sib_engine_counters ec;
	bool dropped = false;

	(void)state;
	w->drop = drop_first_response;
	w->drop_arg = &dropped;
	post_atomic_write(w, 5, (uint64_t)(uintptr_t)&target, rk, pattern);
	world_pump(w);
	assert_true(dropped);
	assert_memory_equal(&target, pattern, 8);
	target = later; /* the owner stores after it: a resend must not undo that */
	assert_true(world_advance(w)); /* ACK timeout: the ATOMIC WRITE goes again */
	world_expect_cqe(w->n[0].scq, 5, SIB_WC_SUCCESS, SIB_WC_ATOMIC_WRITE);
	assert_true(target == later);
	sib_engine_counters_get(w->n[1].eng, &ec);
	assert_int_equal(ec.rx_duplicates, 1);
	world_free(w);
}

static void flush_completes_after_the_writes_before_it(void **state)
{
	struct world *w = rc_world();
	static uint8_t src[64], dst[256];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), REMOTE_RW | MEMREG_ACCESS_FLUSH_GLOBAL);
	struct sib_send_wqe s = { .wr_id = 6, .opcode = SIB_WR_RDMA_WRITE };

	(void)state;
	responder_access(w, MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_FLUSH_GLOBAL);
	memset(src, 0x5a, sizeof(src));
	s.rdma.remote_addr = (uint64_t)(uintptr_t)dst + 64;
	s.rdma.rkey = rk;
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	post_flush(w, 7, (uint64_t)(uintptr_t)dst + 64, sizeof(src), rk, IB_FETH_PLT_GLOBAL,
		   IB_FETH_SEL_RANGE);
	/* The whole region, at whatever VA the request names (IBA 1.5). */
	post_flush(w, 8, 0, 0, rk, IB_FETH_PLT_GLOBAL, IB_FETH_SEL_REGION);
	world_pump(w);
	world_expect_cqe(w->n[0].scq, 7, SIB_WC_SUCCESS, SIB_WC_FLUSH);
	world_expect_cqe(w->n[0].scq, 8, SIB_WC_SUCCESS, SIB_WC_FLUSH);
	assert_memory_equal(dst + 64, src, sizeof(src));
	assert_int_equal(sib_qp_state(w->n[1].qp), SIB_QPS_RTS);
	world_free(w);
}

static void flush_to_a_region_without_flush_access_is_rem_access_err(void **state)
{
	struct world *w = rc_world();
	static uint8_t dst[64];
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), REMOTE_RW);
	char line[256] = "";

	(void)state;
	responder_access(w, MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_FLUSH_GLOBAL);
	sib_log_capture(line, sizeof(line));
	post_flush(w, 9, (uint64_t)(uintptr_t)dst, sizeof(dst), rk, IB_FETH_PLT_GLOBAL,
		   IB_FETH_SEL_RANGE);
	world_pump(w);
	sib_log_capture(NULL, 0);
	expect_refused(w, 9, SIB_WC_REM_ACCESS_ERR, line, "FLUSH on QP");
	world_free(w);
}

/* pyverbs' test_qp_ex_rc_flush_type_violate: a GLOBAL region asked for persistence. */
static void flush_to_persistence_of_a_global_region_is_rem_access_err(void **state)
{
	struct world *w = rc_world();
	static uint8_t dst[64];
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), REMOTE_RW | MEMREG_ACCESS_FLUSH_GLOBAL);
	char line[256] = "";

	(void)state;
	responder_access(w, MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_FLUSH_GLOBAL |
				    MEMREG_ACCESS_FLUSH_PERSISTENT);
	sib_log_capture(line, sizeof(line));
	post_flush(w, 10, (uint64_t)(uintptr_t)dst, sizeof(dst), rk, IB_FETH_PLT_PERSISTENT,
		   IB_FETH_SEL_RANGE);
	world_pump(w);
	sib_log_capture(NULL, 0);
	expect_refused(w, 10, SIB_WC_REM_ACCESS_ERR, line, "FLUSH on QP");
	world_free(w);
}

static void flush_on_a_qp_without_flush_access_is_refused(void **state)
{
	struct world *w = rc_world(); /* world_connect grants no flush rights */
	static uint8_t dst[64];
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), REMOTE_RW | MEMREG_ACCESS_FLUSH_GLOBAL);
	char line[256] = "";

	(void)state;
	sib_log_capture(line, sizeof(line));
	post_flush(w, 11, (uint64_t)(uintptr_t)dst, sizeof(dst), rk, IB_FETH_PLT_GLOBAL,
		   IB_FETH_SEL_RANGE);
	world_pump(w);
	sib_log_capture(NULL, 0);
	expect_refused(w, 11, SIB_WC_REM_ACCESS_ERR, line, "FLUSH on QP");
	world_free(w);
}

static void a_region_cannot_be_registered_for_flush_to_persistence(void **state)
{
	const char *rule = NULL;

	(void)state;
	assert_int_equal(memreg_mr_access_valid(MEMREG_ACCESS_FLUSH_GLOBAL, &rule), 0);
	assert_int_equal(memreg_mr_access_valid(MEMREG_ACCESS_FLUSH_PERSISTENT, &rule), EINVAL);
	assert_non_null(strstr(rule, "persistent memory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(atomic_write_lands_8_bytes_with_remote_write_access),
		cmocka_unit_test(atomic_write_misaligned_is_refused_as_an_invalid_request),
		cmocka_unit_test(atomic_write_with_a_bad_rkey_is_rem_access_err),
		cmocka_unit_test(atomic_write_to_a_region_without_remote_write_is_rem_access_err),
		cmocka_unit_test(lost_atomic_write_response_is_answered_without_writing_again),
		cmocka_unit_test(flush_completes_after_the_writes_before_it),
		cmocka_unit_test(flush_to_a_region_without_flush_access_is_rem_access_err),
		cmocka_unit_test(flush_to_persistence_of_a_global_region_is_rem_access_err),
		cmocka_unit_test(flush_on_a_qp_without_flush_access_is_refused),
		cmocka_unit_test(a_region_cannot_be_registered_for_flush_to_persistence),
	};

	return cmocka_run_group_tests_name("rc_atomic_write_flush", tests, NULL, NULL);
}

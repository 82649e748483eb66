/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * On-demand paging on the data path, two engines on the in-memory link:
 * an ODP region whose page is not mapped (or mapped read-only) makes the
 * operation fail with the status hardware gives for a page fault it cannot
 * serve, never SIGSEGV; mapped ODP pages and implicit regions move bytes
 * as any region does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/mman.h>
#include <unistd.h>

#include "engine_world.h"

#define ODP (MEMREG_ACCESS_ON_DEMAND | MEMREG_ACCESS_LOCAL_WRITE)
#define ODP_ALL                                                                                    \
	(ODP | MEMREG_ACCESS_REMOTE_WRITE | MEMREG_ACCESS_REMOTE_READ | MEMREG_ACCESS_REMOTE_ATOMIC)

/* Three pages: [0] mapped, [1] a hole (unmapped), [2] mapped read-only. */
struct pages {
	uint8_t *base;
	size_t page;
};

static struct pages pages_with_a_hole(void)
{
	struct pages p = { .page = (size_t)sysconf(_SC_PAGESIZE) };

	p.base = mmap(NULL, 3 * p.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p.base != MAP_FAILED);
	memset(p.base, 0x5a, 3 * p.page);
	assert_int_equal(munmap(p.base + p.page, p.page), 0);
	assert_int_equal(mprotect(p.base + 2 * p.page, p.page, PROT_READ), 0);
	return p;
}

static void pages_free(struct pages *p)
{
	munmap(p->base, p->page);
	munmap(p->base + 2 * p->page, p->page);
}

static struct world *connected(enum sib_qp_type t)
{
	struct world *w = world_new();

	world_qp(w, 0, t, 16);
	world_qp(w, 1, t, 16);
	if (t != SIB_QPT_UD)
		world_connect(w, SIB_MTU_1024);
	return w;
}

static void expect_status(struct sib_cq *cq, uint64_t wr_id, enum sib_wc_status st)
{
	struct sib_cqe c;

	assert_int_equal(world_poll(cq, &c), 1);
	assert_int_equal(c.wr_id, wr_id);
	assert_int_equal(c.status, st);
}

/* An RDMA op from node 0 at `addr` of node 1's region rk. */
static void post_rdma(struct world *w, enum sib_wr_opcode op, uint64_t addr, uint32_t rk,
		      void *local, uint32_t len, uint32_t lk)
{
	struct sib_send_wqe s = { .wr_id = 1, .opcode = op, .send_flags = SIB_SEND_SIGNALED };

	if (op == SIB_WR_ATOMIC_FETCH_AND_ADD) {
		s.atomic.remote_addr = addr;
		s.atomic.rkey = rk;
		s.atomic.compare_add = 1;
	} else {
		s.rdma.remote_addr = addr;
		s.rdma.rkey = rk;
	}
	world_post_send(&w->n[0], &s, local, len, lk);
	world_pump(w);
}

static void remote_op_on_odp_page(enum sib_wr_opcode op, int page, enum sib_wc_status want)
{
	struct world *w = connected(SIB_QPT_RC);
	struct pages p = pages_with_a_hole();
	uint8_t local[64] = { 1, 2, 3 };
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], p.base, 3 * p.page, ODP_ALL);
	uint32_t len = op == SIB_WR_ATOMIC_FETCH_AND_ADD ? 8 : sizeof(local);

	post_rdma(w, op, (uint64_t)(uintptr_t)(p.base + (size_t)page * p.page), rk, local, len, lk);
	expect_status(w->n[0].scq, 1, want);
	if (want == SIB_WC_SUCCESS && op == SIB_WR_RDMA_WRITE)
		assert_int_equal(p.base[2], 3);
	if (want == SIB_WC_SUCCESS && op != SIB_WR_RDMA_WRITE)
		assert_int_equal(local[0], 0x5a);
	pages_free(&p);
	world_free(w);
}

static void rdma_write_to_an_unmapped_odp_page_is_rem_access_err(void **state)
{
	(void)state;
	remote_op_on_odp_page(SIB_WR_RDMA_WRITE, 1, SIB_WC_REM_ACCESS_ERR);
}

static void rdma_write_to_a_read_only_odp_page_is_rem_access_err(void **state)
{
	(void)state;
	remote_op_on_odp_page(SIB_WR_RDMA_WRITE, 2, SIB_WC_REM_ACCESS_ERR);
}

static void rdma_read_of_an_unmapped_odp_page_is_rem_access_err(void **state)
{
	(void)state;
	remote_op_on_odp_page(SIB_WR_RDMA_READ, 1, SIB_WC_REM_ACCESS_ERR);
}

static void atomic_on_unmapped_or_read_only_odp_page_is_rem_access_err(void **state)
{
	(void)state;
	remote_op_on_odp_page(SIB_WR_ATOMIC_FETCH_AND_ADD, 1, SIB_WC_REM_ACCESS_ERR);
	remote_op_on_odp_page(SIB_WR_ATOMIC_FETCH_AND_ADD, 2, SIB_WC_REM_ACCESS_ERR);
}

static void mapped_odp_pages_take_write_read_and_atomic(void **state)
{
	(void)state;
	remote_op_on_odp_page(SIB_WR_RDMA_WRITE, 0, SIB_WC_SUCCESS);
	remote_op_on_odp_page(SIB_WR_RDMA_READ, 0, SIB_WC_SUCCESS);
	remote_op_on_odp_page(SIB_WR_RDMA_READ, 2, SIB_WC_SUCCESS); /* read-only is readable */
	remote_op_on_odp_page(SIB_WR_ATOMIC_FETCH_AND_ADD, 0, SIB_WC_SUCCESS);
}

/* A payload large enough to be sent in place is copied from an ODP page
 * instead, so a hole fails the WR rather than the process or the packet. */
static void send_from_an_unmapped_odp_page_is_loc_prot_err(void **state)
{
	struct world *w = connected(SIB_QPT_RC);
	struct pages p = pages_with_a_hole();
	static uint8_t dst[8192];
	uint32_t sk = world_reg(&w->n[0], p.base, 3 * p.page, ODP);
	uint32_t rk = world_reg(&w->n[1], dst, sizeof(dst), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 4, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	world_post_recv(&w->n[1], 9, dst, sizeof(dst), rk);
	world_post_send(&w->n[0], &s, p.base + p.page, 2048, sk);
	world_pump(w);
	expect_status(w->n[0].scq, 4, SIB_WC_LOC_PROT_ERR);
	pages_free(&p);
	world_free(w);
}

static void receive_into_an_unmapped_odp_page_is_loc_prot_err(void **state)
{
	struct world *w = connected(SIB_QPT_RC);
	struct pages p = pages_with_a_hole();
	static uint8_t src[64];
	uint32_t sk = world_reg(&w->n[0], src, sizeof(src), MEMREG_ACCESS_LOCAL_WRITE);
	uint32_t rk = world_reg(&w->n[1], p.base, 3 * p.page, ODP);
	struct sib_send_wqe s = { .wr_id = 5, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };

	(void)state;
	world_post_recv(&w->n[1], 6, p.base + p.page, 64, rk);
	world_post_send(&w->n[0], &s, src, sizeof(src), sk);
	world_pump(w);
	expect_status(w->n[1].rcq, 6, SIB_WC_LOC_PROT_ERR);
	pages_free(&p);
	world_free(w);
}

static void ud_send_from_an_unmapped_odp_page_is_loc_prot_err(void **state)
{
	struct world *w = connected(SIB_QPT_UD);
	struct pages p = pages_with_a_hole();
	uint32_t sk = world_reg(&w->n[0], p.base, 3 * p.page, ODP);
	struct sib_send_wqe s = { .wr_id = 7, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };
	struct sib_qp_attr a = { .qp_state = SIB_QPS_INIT, .port_num = 1, .qkey = 0x11 };

	(void)state;
	world_modify(w->n[0].qp, &a, SIB_QP_PKEY_INDEX | SIB_QP_PORT | SIB_QP_QKEY);
	a.qp_state = SIB_QPS_RTR;
	world_modify(w->n[0].qp, &a, 0);
	a.qp_state = SIB_QPS_RTS;
	world_modify(w->n[0].qp, &a, SIB_QP_SQ_PSN);
	s.ud.av.DLID = w->n[1].port.LID;
	s.ud.av.port_num = 1;
	s.ud.dest = w->n[1].link->local;
	s.ud.remote_qpn = sib_qp_num(w->n[1].qp);
	s.ud.remote_qkey = 0x11;
	world_post_send(&w->n[0], &s, p.base + p.page, 64, sk);
	world_pump(w);
	expect_status(w->n[0].scq, 7, SIB_WC_LOC_PROT_ERR);
	pages_free(&p);
	world_free(w);
}

/* ibv_reg_mr(pd, NULL, SIZE_MAX, ON_DEMAND): any address is in the region. */
static void implicit_odp_region_reaches_any_mapped_address(void **state)
{
	struct world *w = connected(SIB_QPT_RC);
	static uint8_t local[64] = { 9, 8, 7 }, target[64];
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), MEMREG_ACCESS_LOCAL_WRITE);
	struct memreg_mr_attr a = { .host = NULL, .iova = 0, .length = UINT64_MAX,
				    .access = ODP_ALL, .pd = w->n[1].pd };
	uint32_t rk;

	(void)state;
	assert_int_equal(memreg_mr_register(w->n[1].mr, &a, &rk), 0);
	post_rdma(w, SIB_WR_RDMA_WRITE, (uint64_t)(uintptr_t)target, rk, local, sizeof(local), lk);
	expect_status(w->n[0].scq, 1, SIB_WC_SUCCESS);
	assert_memory_equal(target, local, sizeof(local));
	world_free(w);
}

static void implicit_odp_region_refuses_an_unmapped_address(void **state)
{
	struct world *w = connected(SIB_QPT_RC);
	static uint8_t local[64];
	uint32_t lk = world_reg(&w->n[0], local, sizeof(local), MEMREG_ACCESS_LOCAL_WRITE);
	struct memreg_mr_attr a = { .host = NULL, .iova = 0, .length = UINT64_MAX,
				    .access = ODP_ALL, .pd = w->n[1].pd };
	uint32_t rk;

	(void)state;
	assert_int_equal(memreg_mr_register(w->n[1].mr, &a, &rk), 0);
	post_rdma(w, SIB_WR_RDMA_READ, 0x1000 /* page 1: never mapped */, rk, local,
		  sizeof(local), lk);
	expect_status(w->n[0].scq, 1, SIB_WC_REM_ACCESS_ERR);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rdma_write_to_an_unmapped_odp_page_is_rem_access_err),
		cmocka_unit_test(rdma_write_to_a_read_only_odp_page_is_rem_access_err),
		cmocka_unit_test(rdma_read_of_an_unmapped_odp_page_is_rem_access_err),
		cmocka_unit_test(atomic_on_unmapped_or_read_only_odp_page_is_rem_access_err),
		cmocka_unit_test(mapped_odp_pages_take_write_read_and_atomic),
		cmocka_unit_test(send_from_an_unmapped_odp_page_is_loc_prot_err),
		cmocka_unit_test(receive_into_an_unmapped_odp_page_is_loc_prot_err),
		cmocka_unit_test(ud_send_from_an_unmapped_odp_page_is_loc_prot_err),
		cmocka_unit_test(implicit_odp_region_reaches_any_mapped_address),
		cmocka_unit_test(implicit_odp_region_refuses_an_unmapped_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

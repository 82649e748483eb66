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
	world_expect_status(w->n[0].scq, 1, want);
	if (want == SIB_WC_SUCCESS && op == SIB_WR_RDMA_WRITE)
		assert_int_equal(p.base[2], 3);
	if (want == SIB_WC_SUCCESS && op != SIB_WR_RDMA_WRITE)
		assert_int_equal(local[0], 0x5a);
	pages_free(&p);
	world_free(w);
}

/* Page 1 is a hole, page 2 read-only: what a page fault cannot serve. */
static void remote_write_read_or_atomic_on_an_odp_hole_is_rem_access_err(void **state)
{
	(void)state;
	remote_op_on_odp_page(SIB_WR_RDMA_WRITE, 1, SIB_WC_REM_ACCESS_ERR);
	remote_op_on_odp_page(SIB_WR_RDMA_WRITE, 2, SIB_WC_REM_ACCESS_ERR);
	remote_op_on_odp_page(SIB_WR_RDMA_READ, 1, SIB_WC_REM_ACCESS_ERR);
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

/* An RC SEND of len bytes with the ODP hole on one side: that side's WR
 * fails LOC_PROT_ERR. */
static void rc_send_with_an_odp_hole(bool hole_at_sender, uint32_t len)
{
	struct world *w = connected(SIB_QPT_RC);
	struct pages p = pages_with_a_hole();
	static uint8_t plain[8192];
	int h = hole_at_sender ? 0 : 1;
	uint32_t hk = world_reg(&w->n[h], p.base, 3 * p.page, ODP);
	uint32_t pk = world_reg(&w->n[1 - h], plain, sizeof(plain), MEMREG_ACCESS_LOCAL_WRITE);
	struct sib_send_wqe s = { .wr_id = 4, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED };

	if (hole_at_sender) {
		world_post_recv(&w->n[1], 9, plain, sizeof(plain), pk);
		world_post_send(&w->n[0], &s, p.base + p.page, len, hk);
	} else {
		world_post_recv(&w->n[1], 9, p.base + p.page, len, hk);
		world_post_send(&w->n[0], &s, plain, len, pk);
	}
	world_pump(w);
	if (hole_at_sender)
		world_expect_status(w->n[0].scq, 4, SIB_WC_LOC_PROT_ERR);
	else
		world_expect_status(w->n[1].rcq, 9, SIB_WC_LOC_PROT_ERR);
	pages_free(&p);
	world_free(w);
}

/* 2048 bytes would be sent in place from a plain MR; from an ODP page they
 * are copied, so the hole fails the WR rather than the process or the packet. */
static void send_from_an_unmapped_odp_page_is_loc_prot_err(void **state)
{
	(void)state;
	rc_send_with_an_odp_hole(true, 2048);
	rc_send_with_an_odp_hole(true, 64);
}

static void receive_into_an_unmapped_odp_page_is_loc_prot_err(void **state)
{
	(void)state;
	rc_send_with_an_odp_hole(false, 64);
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
	world_expect_status(w->n[0].scq, 7, SIB_WC_LOC_PROT_ERR);
	pages_free(&p);
	world_free(w);
}

/* An op from node 0 through node 1's implicit ODP region,
 * ibv_reg_mr(pd, NULL, SIZE_MAX, ON_DEMAND): any address is in it. */
static void through_an_implicit_region(enum sib_wr_opcode op, uint64_t addr, uint8_t *local,
				       enum sib_wc_status want)
{
	struct world *w = connected(SIB_QPT_RC);
	uint32_t lk = world_reg(&w->n[0], local, 64, MEMREG_ACCESS_LOCAL_WRITE);
	struct memreg_mr_attr a = { .host = NULL, .iova = 0, .length = UINT64_MAX,
				    .access = ODP_ALL, .pd = w->n[1].pd };
	uint32_t rk;

	assert_int_equal(memreg_mr_register(w->n[1].mr, &a, &rk), 0);
	post_rdma(w, op, addr, rk, local, 64, lk);
	world_expect_status(w->n[0].scq, 1, want);
	world_free(w);
}

static void implicit_odp_region_reaches_any_mapped_address(void **state)
{
	static uint8_t local[64] = { 9, 8, 7 }, target[64];

	(void)state;
	through_an_implicit_region(SIB_WR_RDMA_WRITE, (uintptr_t)target, local, SIB_WC_SUCCESS);
	assert_memory_equal(target, local, sizeof(local));
}

static void implicit_odp_region_refuses_an_unmapped_address(void **state)
{
	static uint8_t local[64];

	(void)state;
	/* page 1 is never mapped */
	through_an_implicit_region(SIB_WR_RDMA_READ, 0x1000, local, SIB_WC_REM_ACCESS_ERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(remote_write_read_or_atomic_on_an_odp_hole_is_rem_access_err),
		cmocka_unit_test(mapped_odp_pages_take_write_read_and_atomic),
		cmocka_unit_test(send_from_an_unmapped_odp_page_is_loc_prot_err),
		cmocka_unit_test(receive_into_an_unmapped_odp_page_is_loc_prot_err),
		cmocka_unit_test(ud_send_from_an_unmapped_odp_page_is_loc_prot_err),
		cmocka_unit_test(implicit_odp_region_reaches_any_mapped_address),
		cmocka_unit_test(implicit_odp_region_refuses_an_unmapped_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

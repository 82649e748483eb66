/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * IBA 1.5's ATOMIC WRITE and FLUSH through the real libibverbs on softib0,
 * over a loopback RC pair: ibv_wr_atomic_write (rdma-core 44) and
 * ibv_wr_flush (rdma-core 45), the capability bits, the MR access rules,
 * and the completion each refusal ends in.  Prints "ok NAME" per check
 * ("skip NAME: why" for what the rdma-core built against lacks); exit 1
 * on a wrong result, 77 when softib0 is not visible.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs_abi_layout.h" /* SIB_ABI_LAYOUT: the rdma-core this builds against */
#include "verbs_loopback.h"
#include "verbs_open.h"

/* The kernel's uverbs bits (ib_user_ioctl_verbs.h), which rdma-core passes
 * through without naming them; and IBV_ACCESS_FLUSH_* of rdma-core 45. */
#define DEVICE_FLUSH_GLOBAL (1ull << 38)
#define DEVICE_FLUSH_PERSISTENT (1ull << 39)
#define DEVICE_ATOMIC_WRITE (1ull << 40)
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)

static int failures;

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *qp[2]; /* [0] requests, [1] responds */
	struct ibv_qp_ex *qpx;
};

#if SIB_ABI_LAYOUT >= 44 /* rdma-core 39 to 43 have neither operation */
static uint64_t send_ops(void)
{
	uint64_t f = IBV_QP_EX_WITH_RDMA_WRITE;

#if SIB_ABI_LAYOUT >= 44
	f |= IBV_QP_EX_WITH_ATOMIC_WRITE;
#endif
#if SIB_ABI_LAYOUT >= 45
	f |= IBV_QP_EX_WITH_FLUSH;
#endif
	return f;
}

/* Two RC QPs connected to each other; the responder allows remote write
 * and (RTS -> RTS) `access`. */
static int pair_open(struct ibv_context *ctx, struct ibv_pd *pd, uint16_t lid, int access,
		     struct pair *p)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = send_ops(),
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .qp_access_flags = access };

	memset(p, 0, sizeof(*p));
	p->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!p->cq)
		return -1;
	ia.send_cq = ia.recv_cq = p->cq;
	p->qp[0] = ibv_create_qp_ex(ctx, &ia);
	p->qp[1] = ibv_create_qp_ex(ctx, &ia);
	if (!p->qp[0] || !p->qp[1])
		return -1;
	p->qpx = ibv_qp_to_qp_ex(p->qp[0]);
	if (verbs_connect_rc(p->qp[0], p->qp[1]->qp_num, lid, IBV_MTU_1024) ||
	    verbs_connect_rc(p->qp[1], p->qp[0]->qp_num, lid, IBV_MTU_1024))
		return -1;
	return ibv_modify_qp(p->qp[1], &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
}

static void pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++)
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
	if (p->cq)
		ibv_destroy_cq(p->cq);
}

/* The next completion, waited for at most ~5 s (a hang is a failure). */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		poll(NULL, 0, 1);
	}
	return 0;
}

static int atomic_write(struct pair *p, uint64_t wr_id, uint32_t rkey, uint64_t addr,
			const void *bytes, struct ibv_wc *wc)
{
	ibv_wr_start(p->qpx);
	p->qpx->wr_id = wr_id;
	p->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p->qpx, rkey, addr, bytes);
	if (ibv_wr_complete(p->qpx))
		return -1;
	return poll_one(p->cq, wc) == 1 && wc->wr_id == wr_id ? 0 : -1;
}
#endif /* SIB_ABI_LAYOUT >= 44 */

#if SIB_ABI_LAYOUT >= 45
static int flush(struct pair *p, uint64_t wr_id, uint32_t rkey, uint64_t addr, size_t len,
		 uint8_t type, uint8_t level, struct ibv_wc *wc)
{
	ibv_wr_start(p->qpx);
	p->qpx->wr_id = wr_id;
	p->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(p->qpx, rkey, addr, len, type, level);
	if (ibv_wr_complete(p->qpx))
		return -1;
	return poll_one(p->cq, wc) == 1 && wc->wr_id == wr_id ? 0 : -1;
}
#endif

int main(void)
{
	struct ibv_context *ctx = verbs_open_softib0();
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	static uint64_t target[4] __attribute__((aligned(64)));
	struct ibv_mr *mr, *bad;

	if (!ctx) {
		fprintf(stderr, "softib0 is not visible\n");
		return 77;
	}
	pd = ibv_alloc_pd(ctx);
	CHECK("query_port", pd && !ibv_query_port(ctx, 1, &pa));
	CHECK("device_cap_flags_ex: ATOMIC_WRITE and FLUSH_GLOBAL, not FLUSH_PERSISTENT",
	      !ibv_query_device_ex(ctx, NULL, &dx) &&
		      (dx.device_cap_flags_ex & DEVICE_ATOMIC_WRITE) &&
		      (dx.device_cap_flags_ex & DEVICE_FLUSH_GLOBAL) &&
		      !(dx.device_cap_flags_ex & DEVICE_FLUSH_PERSISTENT));

	/* No persistent memory here: refused as rxe refuses non-pmem pages. */
	errno = 0;
	bad = ibv_reg_mr(pd, target, sizeof(target),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | ACCESS_FLUSH_PERSISTENT);
	CHECK("reg_mr FLUSH_PERSISTENT is EINVAL", !bad && errno == EINVAL);
	mr = ibv_reg_mr(pd, target, sizeof(target),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | ACCESS_FLUSH_GLOBAL);
	CHECK("reg_mr FLUSH_GLOBAL", mr != NULL);
	if (!mr || !pd)
		return 1;

#if SIB_ABI_LAYOUT >= 44
	{
		static const uint8_t bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
		struct ibv_wc wc;
		struct pair p;

		CHECK("pair", !pair_open(ctx, pd, pa.lid, IBV_ACCESS_REMOTE_WRITE, &p));
		CHECK("ibv_wr_atomic_write lands 8 bytes",
		      !atomic_write(&p, 1, mr->rkey, (uintptr_t)&target[1], bytes, &wc) &&
			      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE &&
			      !memcmp(&target[1], bytes, 8) && !target[0] && !target[2]);
		pair_close(&p);

		CHECK("pair", !pair_open(ctx, pd, pa.lid, IBV_ACCESS_REMOTE_WRITE, &p));
		CHECK("misaligned ATOMIC WRITE is REM_INV_REQ_ERR",
		      !atomic_write(&p, 2, mr->rkey, (uintptr_t)&target[2] + 4, bytes, &wc) &&
			      wc.status == IBV_WC_REM_INV_REQ_ERR && !target[2]);
		pair_close(&p);

		CHECK("pair", !pair_open(ctx, pd, pa.lid, IBV_ACCESS_REMOTE_WRITE, &p));
		CHECK("ATOMIC WRITE with a bad rkey is REM_ACCESS_ERR",
		      !atomic_write(&p, 3, mr->rkey ^ 0x100, (uintptr_t)&target[3], bytes, &wc) &&
			      wc.status == IBV_WC_REM_ACCESS_ERR && !target[3]);
		pair_close(&p);
	}
#else
	printf("skip atomic_write: rdma-core %s has no ibv_wr_atomic_write (44 added it)\n",
	       SIB_ABI_RDMA_CORE);
#endif

#if SIB_ABI_LAYOUT >= 45
	{
		struct ibv_mr *nf = ibv_reg_mr(pd, target, sizeof(target),
					       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		struct ibv_wc wc;
		struct pair p;

		CHECK("pair", !pair_open(ctx, pd, pa.lid,
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL, &p));
		CHECK("ibv_wr_flush of a range completes",
		      !flush(&p, 4, mr->rkey, (uintptr_t)target, sizeof(target), IBV_FLUSH_GLOBAL,
			     IBV_FLUSH_RANGE, &wc) &&
			      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH);
		CHECK("ibv_wr_flush of the region completes",
		      !flush(&p, 5, mr->rkey, 0, 0, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR, &wc) &&
			      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH);
		pair_close(&p);

		CHECK("pair", !pair_open(ctx, pd, pa.lid,
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL, &p));
		CHECK("FLUSH to a region without flush access is REM_ACCESS_ERR",
		      nf && !flush(&p, 6, nf->rkey, (uintptr_t)target, 8, IBV_FLUSH_GLOBAL,
				   IBV_FLUSH_RANGE, &wc) &&
			      wc.status == IBV_WC_REM_ACCESS_ERR);
		pair_close(&p);
		if (nf)
			ibv_dereg_mr(nf);
	}
#else
	printf("skip flush: rdma-core %s has no ibv_wr_flush (45 added it)\n", SIB_ABI_RDMA_CORE);
#endif

	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}

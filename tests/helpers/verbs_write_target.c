/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The victim of a forged RDMA WRITE (tests/integration/test_attack_forged_
 * write.sh).  Run under `softib run`: connects two RC QPs of its own, A to
 * B, over a buffer of 64 bytes of 'A' that B's MR lets remote peers write,
 * makes one real WRITE from A (so that B expects the next PSN), and prints
 * everything an attacker who sniffed the connection would know:
 *
 *   target lid L qpn Q psn P va V rkey K len N
 *
 * then waits for a line on its standard input (the attack happens), and
 * prints "buffer intact" or "buffer CHANGED", makes a second real WRITE
 * and prints "legit write ok" when that one lands.  Exit 0 when the buffer
 * was intact and the real WRITE landed.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_loopback.h"

enum { LEN = 64 };

static int write_once(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *src, uint64_t va,
		      uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src->addr, .length = LEN, .lkey = src->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n;

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

int main(void)
{
	static char src[LEN], dst[LEN];
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *smr, *dmr;
	struct ibv_qp *a, *b;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	char line[64];
	bool intact = true;

	for (int i = 0; list && list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_port(ctx, 1, &pa) || !(pd = ibv_alloc_pd(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 8, NULL, NULL, 0))) {
		fprintf(stderr, "verbs_write_target: cannot open softib0\n");
		return 1;
	}
	qa.send_cq = qa.recv_cq = cq;
	memset(src, 'B', LEN);
	memset(dst, 'A', LEN);
	smr = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	a = ibv_create_qp(pd, &qa);
	b = ibv_create_qp(pd, &qa);
	if (!smr || !dmr || !a || !b || verbs_connect_rc(a, b->qp_num, pa.lid, IBV_MTU_4096) ||
	    verbs_connect_rc(b, a->qp_num, pa.lid, IBV_MTU_4096)) {
		fprintf(stderr, "verbs_write_target: cannot set up the QPs\n");
		return 1;
	}
	/* One real WRITE of 'B's (then the buffer is 'A's again): B now
	 * expects PSN 2. */
	if (write_once(a, cq, smr, (uintptr_t)dst, dmr->rkey)) {
		fprintf(stderr, "verbs_write_target: the first WRITE failed\n");
		return 1;
	}
	memset(dst, 'A', LEN);
	printf("target lid %u qpn %u psn %u va 0x%" PRIxPTR " rkey 0x%x len %u\n", pa.lid, b->qp_num,
	       2, (uintptr_t)dst, dmr->rkey, LEN);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int i = 0; i < LEN; i++)
		intact &= __atomic_load_n(&dst[i], __ATOMIC_RELAXED) == 'A';
	printf("buffer %s\n", intact ? "intact" : "CHANGED");
	if (write_once(a, cq, smr, (uintptr_t)dst, dmr->rkey) || memcmp(dst, src, LEN)) {
		printf("legit write FAILED\n");
		return 1;
	}
	printf("legit write ok\n");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return intact ? 0 : 1;
}

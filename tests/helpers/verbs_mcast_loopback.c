/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * UD multicast on one port through the real libibverbs: the advertised
 * limits, ibv_attach_mcast / ibv_detach_mcast and their refusals, a
 * multicast send looped back to every attached QP of the sending port
 * (the sender too), IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, and destroy_qp
 * refusing a QP still attached (EBUSY, as the kernel's uverbs).  Prints
 * "ok NAME" per check; exit 1 when one failed, 77 when softib0 is not
 * visible.  test_mcast_loopback.sh checks the log lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include "verbs_open.h"

#define MLID 0xc001
#define QKEY 0x11110000u
#define LEN 64

static int failures;

static const union ibv_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0,
					     0, 0, 0, 0, 1 } };

static struct ibv_qp *make_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type t, uint32_t flags)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd,
		.create_flags = flags,
	};

	return ibv_create_qp_ex(ctx, &ia);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static char rbuf[3][4][40 + LEN], sbuf[LEN];
static struct ibv_mr *rmr, *smr;

static int post_recv(struct ibv_qp *qp, int q, int k)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rbuf[q][k], .length = sizeof(rbuf[q][k]),
			       .lkey = rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)(q * 4 + k), .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int mc_send(struct ibv_qp *qp, struct ibv_ah *ah, char tag)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = LEN, .lkey = smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	memset(sbuf, tag, sizeof(sbuf));
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = QKEY;
	return ibv_post_send(qp, &wr, &bad);
}

/* Polls until n receive completions (and any send completions) came, or
 * 20 s passed; counts receives per QP index (wr_id / 4) and the tag seen. */
static int wait_recvs(struct ibv_cq *cq, int n, int got[3], char tags[3])
{
	struct timespec t0, t;
	int have = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (have < n) {
		struct ibv_wc wc;
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r < 0)
			return -1;
		if (r == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 20)
				return have;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("completion error: %s\n", ibv_wc_status_str(wc.status));
			return -1;
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;
		int q = (int)(wc.wr_id / 4), k = (int)(wc.wr_id % 4);

		if (!(wc.wc_flags & IBV_WC_GRH) || wc.byte_len != 40 + LEN ||
		    memcmp(rbuf[q][k] + 24, mgid.raw, 16)) {
			printf("receive without the GRH carrying the MGID\n");
			return -1;
		}
		got[q]++;
		tags[q] = rbuf[q][k][40];
		have++;
	}
	return have;
}

int main(void)
{
	struct ibv_context *ctx = verbs_open_softib0();
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid ucast = { .raw = { 0xfe, 0x80 } };
	int got[3], err;
	char tags[3];

	if (!ctx) {
		printf("softib0 not visible\n");
		return 77;
	}
	CHECK("query_device", !ibv_query_device(ctx, &da));
	printf("max_mcast_grp %d max_mcast_qp_attach %d max_total_mcast_qp_attach %d\n",
	       da.max_mcast_grp, da.max_mcast_qp_attach, da.max_total_mcast_qp_attach);
	CHECK("limits advertised", da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 1 &&
					   da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach);
	CHECK("query_port", !ibv_query_port(ctx, 1, &pa));

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);

	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	if (!pd || !cq || !rmr || !smr)
		return 1;
	struct ibv_qp *a = make_qp(ctx, pd, cq, IBV_QPT_UD, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	struct ibv_qp *b = make_qp(ctx, pd, cq, IBV_QPT_UD, 0);
	struct ibv_qp *c = make_qp(ctx, pd, cq, IBV_QPT_UD, 0);
	struct ibv_qp *rc = make_qp(ctx, pd, cq, IBV_QPT_RC, 0);

	CHECK("create UD QP with BLOCK_SELF_MCAST_LB", a != NULL);
	if (!a || !b || !c || !rc)
		return 1;
	errno = 0;
	CHECK("BLOCK_SELF_MCAST_LB on RC is EINVAL",
	      !make_qp(ctx, pd, cq, IBV_QPT_RC, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) &&
		      errno == EINVAL);
	CHECK("to RTS", !to_rts(a) && !to_rts(b) && !to_rts(c));

	CHECK("attach RC QP is EINVAL", ibv_attach_mcast(rc, &mgid, MLID) == EINVAL);
	CHECK("attach unicast GID is EINVAL", ibv_attach_mcast(b, &ucast, MLID) == EINVAL);
	CHECK("attach unicast LID is EINVAL", ibv_attach_mcast(b, &mgid, pa.lid) == EINVAL);
	CHECK("attach a", !ibv_attach_mcast(a, &mgid, MLID));
	CHECK("attach b", !ibv_attach_mcast(b, &mgid, MLID));
	CHECK("attach b twice", !ibv_attach_mcast(b, &mgid, MLID));
	CHECK("attach c", !ibv_attach_mcast(c, &mgid, MLID));

	struct ibv_ah_attr aha = { .dlid = MLID, .port_num = 1, .is_global = 1,
				   .grh = { .dgid = mgid, .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aha);

	CHECK("create_ah to the MLID", ah != NULL);
	if (!ah)
		return 1;
	for (int k = 0; k < 4; k++) {
		post_recv(a, 0, k);
		post_recv(b, 1, k);
		post_recv(c, 2, k);
	}
	/* From a (which blocks its own): b and c get it.  Then from b: a, b
	 * (its own copy) and c.  a's only receive must be b's ('B'); had its
	 * own come back it would have arrived first. */
	memset(got, 0, sizeof(got));
	CHECK("send from a", !mc_send(a, ah, 'A'));
	err = wait_recvs(cq, 2, got, tags);
	CHECK("b and c got a's multicast", err == 2 && got[1] == 1 && got[2] == 1 &&
						   tags[1] == 'A' && tags[2] == 'A');
	memset(got, 0, sizeof(got));
	CHECK("send from b", !mc_send(b, ah, 'B'));
	err = wait_recvs(cq, 3, got, tags);
	CHECK("a, b (its own copy, once) and c got b's multicast",
	      err == 3 && got[0] == 1 && got[1] == 1 && got[2] == 1);
	CHECK("a never got its own", tags[0] == 'B');

	errno = 0;
	CHECK("destroy_qp while attached is EBUSY", ibv_destroy_qp(c) == EBUSY);
	CHECK("detach c", !ibv_detach_mcast(c, &mgid, MLID));
	CHECK("detach c again is EINVAL", ibv_detach_mcast(c, &mgid, MLID) == EINVAL);
	/* Two more from b: once both copies of the second are in, every copy
	 * of the first was placed (one packet is delivered to all its QPs
	 * before the next), so a copy for c would be in the CQ now. */
	memset(got, 0, sizeof(got));
	CHECK("send from b twice more", !mc_send(b, ah, 'C') && !mc_send(b, ah, 'D'));
	err = wait_recvs(cq, 4, got, tags);
	CHECK("a and b got both", err == 4 && got[0] == 2 && got[1] == 2);
	{
		struct ibv_wc wc;
		int extra = 0;

		while (ibv_poll_cq(cq, 1, &wc) == 1)
			extra += wc.opcode == IBV_WC_RECV;
		CHECK("c detached gets nothing", got[2] == 0 && extra == 0);
	}

	CHECK("detach a, b", !ibv_detach_mcast(a, &mgid, MLID) && !ibv_detach_mcast(b, &mgid, MLID));
	CHECK("destroy", !ibv_destroy_qp(a) && !ibv_destroy_qp(b) && !ibv_destroy_qp(c) &&
				 !ibv_destroy_qp(rc));
	ibv_destroy_ah(ah);
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(smr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}

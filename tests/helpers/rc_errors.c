/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RC error paths and rules between two processes (tests/integration/
 * test_rc_errors.sh): one fork before any verb (stress_pair.h), the parent
 * the requester, the child the responder.  Each case checks the completion
 * statuses on both sides and both QPs' states afterwards.
 *
 *   bad_rkey, bad_rkey_read, out_of_bounds, out_of_bounds_read,
 *   no_remote_write, no_remote_read, no_remote_atomic
 *	requester REM_ACCESS_ERR, its next WR WR_FLUSH_ERR; the responder's
 *	QP in ERR with its posted receives WR_FLUSH_ERR (IBA 9.7.5.2.4,
 *	10.3.1); the target memory untouched.
 *   bad_rkey_imm	an RDMA WRITE with immediate and a bad R_Key: requester
 *			REM_ACCESS_ERR; the receive it took completes with
 *			LOC_ACCESS_ERR (ibv_poll_cq(3)), the rest WR_FLUSH_ERR
 *   send_too_long	requester REM_INV_REQ_ERR, responder LOC_LEN_ERR (9.7.5.2.2)
 *   recv_bad_lkey	requester REM_OP_ERR, responder LOC_PROT_ERR (9.7.5.2.5)
 *   no_rd_resources	READ to a responder with max_dest_rd_atomic 0:
 *			requester REM_INV_REQ_ERR, responder QP in ERR
 *   misaligned_atomic	sent, as hardware sends it; the responder refuses it
 *			(NAK Invalid Request, IBA 9.4.5): requester
 *			REM_INV_REQ_ERR, the responder's QP in ERR, the target
 *			untouched
 *   peer_gone		the responder process is killed: RETRY_EXC_ERR no
 *			earlier than (retry_cnt+1) x 4.096 us x 2^timeout
 *   rnr		no receive posted, rnr_retry 2: RNR_RETRY_EXC_ERR no
 *			earlier than rnr_retry RNR waits; the responder sees
 *			nothing and stays RTS
 *   solicited		req_notify_cq(solicited_only=1) wakes only for a SEND
 *			with IBV_SEND_SOLICITED (IBA 11.4.2.2)
 *   fence		a fenced SEND of the buffer an earlier READ fills
 *			carries the data the READ brought (IBA 10.8.3.3)
 *   atomic_glob	FetchAdd and CmpSwap from the peer race the target
 *			CPU's own atomics on the same words: the totals add up
 *			(what IBV_ATOMIC_GLOB would promise; softib reports the
 *			weaker IBV_ATOMIC_HCA and keeps this too)
 *   zero_length	UCX's endpoint flush (RDMA WRITE, no SGE, R_Key 0,
 *			address 0), a zero-length READ and a zero-length WRITE
 *			with immediate, both with a made-up R_Key and address,
 *			then a SEND: all succeed, the WRITE with immediate takes
 *			a receive, both QPs stay RTS (IBA C9-88)
 *
 * Usage: rc_errors CASE.  Exit 0 when every check holds.
 */
#include "stress_pair.h"

enum { BUF = 4096, MSG = 64, NRECV = 2 };

enum key_kind { K_ALL, K_NOWRITE, K_NOREAD, K_NOATOMIC, K_BAD };

/* What the responder tells the requester. */
struct resp_info {
	uint16_t lid;
	uint32_t qpn;
	uint64_t addr;
	uint32_t rkey[K_BAD];
};

struct conn_params {
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
};

/* A case whose first WR fails at the responder or locally. */
struct err_case {
	const char *name;
	enum ibv_wr_opcode op;
	enum key_kind key;
	uint64_t off; /* remote address: tgt + off */
	uint32_t len;
	enum ibv_wc_status req_status;
	enum ibv_wc_status resp_first; /* the first receive's status */
	bool resp_err;		       /* the responder's QP ends in ERR */
	bool recv_small;	       /* the responder's receives are MSG / 2 bytes */
	bool recv_bad_lkey;	       /* ... and their L_Key is a deregistered one */
	bool no_rd_res;		       /* max_dest_rd_atomic 0 */
};

/* The responder's QP ends in ERR, its receives flushed after the first. */
#define REMOTE_ERR(n, o, k, at, l, req, first, ...)                                               \
	{ .name = n, .op = o, .key = k, .off = at, .len = l, .req_status = req,                    \
	  .resp_first = first, .resp_err = true, __VA_ARGS__ }

static const struct err_case err_cases[] = {
	REMOTE_ERR("bad_rkey", IBV_WR_RDMA_WRITE, K_BAD, 0, MSG, IBV_WC_REM_ACCESS_ERR,
		   IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("bad_rkey_read", IBV_WR_RDMA_READ, K_BAD, 0, MSG, IBV_WC_REM_ACCESS_ERR,
		   IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("bad_rkey_imm", IBV_WR_RDMA_WRITE_WITH_IMM, K_BAD, 0, MSG,
		   IBV_WC_REM_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR),
	REMOTE_ERR("out_of_bounds", IBV_WR_RDMA_WRITE, K_ALL, BUF - MSG / 2, MSG,
		   IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("out_of_bounds_read", IBV_WR_RDMA_READ, K_ALL, BUF, 8, IBV_WC_REM_ACCESS_ERR,
		   IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("no_remote_write", IBV_WR_RDMA_WRITE, K_NOWRITE, 0, MSG, IBV_WC_REM_ACCESS_ERR,
		   IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("no_remote_read", IBV_WR_RDMA_READ, K_NOREAD, 0, MSG, IBV_WC_REM_ACCESS_ERR,
		   IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("no_remote_atomic", IBV_WR_ATOMIC_FETCH_AND_ADD, K_NOATOMIC, 0, 8,
		   IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR),
	REMOTE_ERR("send_too_long", IBV_WR_SEND, K_ALL, 0, MSG, IBV_WC_REM_INV_REQ_ERR,
		   IBV_WC_LOC_LEN_ERR, .recv_small = true),
	REMOTE_ERR("recv_bad_lkey", IBV_WR_SEND, K_ALL, 0, MSG, IBV_WC_REM_OP_ERR,
		   IBV_WC_LOC_PROT_ERR, .recv_bad_lkey = true),
	REMOTE_ERR("no_rd_resources", IBV_WR_RDMA_READ, K_ALL, 0, MSG, IBV_WC_REM_INV_REQ_ERR,
		   IBV_WC_WR_FLUSH_ERR, .no_rd_res = true),
	REMOTE_ERR("misaligned_atomic", IBV_WR_ATOMIC_CMP_AND_SWP, K_ALL, 4, 8,
		   IBV_WC_REM_INV_REQ_ERR, IBV_WC_WR_FLUSH_ERR),
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *ch;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qp;
static uint8_t *buf; /* requester: local buffer; responder: the target */
static struct ibv_mr *mr[K_BAD];
static struct resp_info peer_info;
static int failures;

#define check(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			pair_say("FAIL: " __VA_ARGS__);                                            \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static void setup(int side)
{
	static const int access[K_BAD] = {
		[K_ALL] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		[K_NOWRITE] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC,
		[K_NOREAD] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_ATOMIC,
		[K_NOATOMIC] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	ctx = verbs_open_softib0();
	if (!ctx)
		pair_die("no softib0 device (run under `softib run`)");
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!pd || !ch)
		pair_die("alloc_pd / create_comp_channel failed");
	scq = ibv_create_cq(ctx, 128, NULL, ch, 0);
	rcq = ibv_create_cq(ctx, 128, NULL, ch, 0);
	if (!scq || !rcq)
		pair_die("create_cq failed");
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		pair_die("create_qp: %s", strerror(errno));
	buf = aligned_alloc(BUF, BUF);
	if (!buf)
		pair_die("out of memory");
	memset(buf, side ? 0x5a : 0xa5, BUF);
	for (int k = 0; k < K_BAD; k++) {
		mr[k] = ibv_reg_mr(pd, buf, BUF, access[k]);
		if (!mr[k])
			pair_die("reg_mr: %s", strerror(errno));
	}
}

static void connect_qp(const struct conn_params *p, uint16_t dlid, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		pair_die("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = p->max_dest_rd_atomic;
	a.min_rnr_timer = p->min_rnr_timer;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		pair_die("modify_qp RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.max_rd_atomic = p->max_rd_atomic;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		pair_die("modify_qp RTS: %s", strerror(errno));
}

/* Exchanges addresses and connects; the responder's receives are posted by then. */
static void handshake(int side, const struct conn_params *p)
{
	struct resp_info me = { .lid = pair_wait_lid(ctx), .qpn = qp->qp_num };

	me.addr = (uintptr_t)buf;
	for (int k = 0; k < K_BAD; k++)
		me.rkey[k] = mr[k]->rkey;
	pair_xchg(&me, &peer_info, sizeof(me));
	(void)side;
	connect_qp(p, peer_info.lid, peer_info.qpn);
}

static enum ibv_qp_state qp_state(void)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		pair_die("query_qp failed");
	return a.qp_state;
}

/* One completion from cq within ms, else dies. */
static struct ibv_wc wait_wc(struct ibv_cq *cq, int ms)
{
	uint64_t end = pair_now_ns() + (uint64_t)ms * 1000000;
	struct ibv_wc wc;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			pair_die("poll_cq failed");
		if (n == 1)
			return wc;
		if (pair_now_ns() > end)
			pair_die("no completion within %d ms", ms);
		usleep(200);
	}
}

static bool cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return ibv_poll_cq(cq, 1, &wc) == 0;
}

static void post_recv(uint64_t wr_id, uint32_t off, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		pair_die("post_recv failed");
}

static void post_send(uint64_t wr_id, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		      unsigned flags, uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr[K_ALL]->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = flags | IBV_SEND_SIGNALED },
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp, &wr, &bad))
		pair_die("post_send failed: %s", strerror(errno));
}

static void expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st, const char *who)
{
	struct ibv_wc wc = wait_wc(cq, 60000);

	check(wc.wr_id == wr_id && wc.status == st, "%s: wr_id %llu status %s, expected wr_id %llu %s",
	      who, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	      (unsigned long long)wr_id, ibv_wc_status_str(st));
}

static void expect_state(enum ibv_qp_state want, const char *who)
{
	enum ibv_qp_state s = qp_state();

	check(s == want, "%s QP state %d, expected %d", who, s, want);
}

static const struct conn_params default_params = {
	.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 1,
	.max_rd_atomic = 4, .max_dest_rd_atomic = 4,
};

/* ------------------------------------------------------------ error cases */

static void run_err_case(int side, const struct err_case *c)
{
	struct conn_params p = default_params;
	uint8_t done = 1;

	if (c->no_rd_res)
		p.max_dest_rd_atomic = 0;
	if (side == 1) {
		uint32_t lkey = mr[K_ALL]->lkey;

		if (c->recv_bad_lkey) {
			struct ibv_mr *gone = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);

			if (!gone)
				pair_die("reg_mr failed");
			lkey = gone->lkey;
			ibv_dereg_mr(gone);
		}
		handshake(side, &p);
		for (int i = 0; i < NRECV; i++)
			post_recv(100 + (uint64_t)i, (uint32_t)(BUF / 2 + i * MSG),
				  c->recv_small ? MSG / 2 : MSG, lkey);
		pair_xchg(&done, &done, 1); /* receives posted */
		pair_read(&done, 1);	    /* the requester has its completions */
		if (c->resp_err) {
			expect_wc(rcq, 100, c->resp_first, "responder receive 1");
			expect_wc(rcq, 101, IBV_WC_WR_FLUSH_ERR, "responder receive 2");
			expect_state(IBV_QPS_ERR, "responder");
		} else {
			check(cq_empty(rcq), "the responder got a completion");
			expect_state(IBV_QPS_RTS, "responder");
		}
		for (int i = 0; i < BUF / 2; i++)
			if (buf[i] != 0x5a) {
				check(false, "target byte %d changed to 0x%02x", i, buf[i]);
				break;
			}
		pair_write(&done, 1);
		return;
	}
	handshake(side, &p);
	pair_xchg(&done, &done, 1);
	uint32_t rkey = c->key == K_BAD ? peer_info.rkey[K_ALL] ^ 0x80 : peer_info.rkey[c->key];

	post_send(1, c->op, 0, c->len, 0, peer_info.addr + c->off, rkey, 1, 2);
	post_send(2, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	expect_wc(scq, 1, c->req_status, "requester WR 1");
	expect_wc(scq, 2, IBV_WC_WR_FLUSH_ERR, "requester WR 2");
	expect_state(IBV_QPS_ERR, "requester");
	pair_write(&done, 1);
	pair_read(&done, 1); /* the responder has checked */
}

/* ------------------------------------------------------------ timed cases */

static void run_peer_gone(int side)
{
	struct conn_params p = default_params;
	uint8_t done = 1;

	p.timeout = 10;
	p.retry_cnt = 3;
	handshake(side, &p);
	if (side == 1) {
		pair_write(&done, 1);
		for (;;)
			pause(); /* until killed */
	}
	pair_read(&done, 1);
	kill(pair_child, SIGKILL);
	waitpid(pair_child, NULL, 0);
	pair_child = -1;

	uint64_t t0 = pair_now_ns();

	post_send(1, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	post_send(2, IBV_WR_RDMA_WRITE, 0, MSG, 0, peer_info.addr, peer_info.rkey[K_ALL], 0, 0);
	expect_wc(scq, 1, IBV_WC_RETRY_EXC_ERR, "requester WR 1");
	uint64_t dt = pair_now_ns() - t0;
	/* IBA 9.7.6.1.3: the first try and retry_cnt retries each wait a timeout. */
	uint64_t min = (uint64_t)(p.retry_cnt + 1) * (4096ull << p.timeout);

	expect_wc(scq, 2, IBV_WC_WR_FLUSH_ERR, "requester WR 2");
	expect_state(IBV_QPS_ERR, "requester");
	pair_say("RETRY_EXC_ERR after %.1f ms (IBA minimum %.1f ms)", dt / 1e6, min / 1e6);
	check(dt >= min, "RETRY_EXC_ERR after %.3f ms, before the IBA minimum %.3f ms", dt / 1e6,
	      min / 1e6);
	check(dt < 20 * min + 1000000000ull, "RETRY_EXC_ERR only after %.3f ms", dt / 1e6);
}

static void run_rnr(int side)
{
	struct conn_params p = default_params;
	uint8_t done = 1;
	/* IBA 9.7.5.2.8 Table 45: code 18 is 5.12 ms. */
	const uint64_t rnr_ns = 5120000;

	p.rnr_retry = 2;
	p.min_rnr_timer = 18;
	handshake(side, &p);
	if (side == 1) {
		pair_write(&done, 1);
		pair_read(&done, 1); /* the requester has its completions */
		check(cq_empty(rcq), "the responder got a completion");
		expect_state(IBV_QPS_RTS, "responder");
		pair_write(&done, 1);
		return;
	}
	pair_read(&done, 1);
	uint64_t t0 = pair_now_ns();

	post_send(1, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	post_send(2, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	expect_wc(scq, 1, IBV_WC_RNR_RETRY_EXC_ERR, "requester WR 1");
	uint64_t dt = pair_now_ns() - t0;
	uint64_t min = p.rnr_retry * rnr_ns;

	expect_wc(scq, 2, IBV_WC_WR_FLUSH_ERR, "requester WR 2");
	expect_state(IBV_QPS_ERR, "requester");
	pair_say("RNR_RETRY_EXC_ERR after %.1f ms (%u RNR waits of %.2f ms)", dt / 1e6, p.rnr_retry,
		 rnr_ns / 1e6);
	check(dt >= min, "RNR_RETRY_EXC_ERR after %.3f ms, before %u RNR waits", dt / 1e6,
	      p.rnr_retry);
	check(dt < 20 * (min + rnr_ns) + 1000000000ull, "RNR_RETRY_EXC_ERR only after %.3f ms",
	      dt / 1e6);
	pair_write(&done, 1);
	pair_read(&done, 1);
}

/* ------------------------------------------------------------ rules */

/* True when the channel has an event within ms (consumed and acknowledged). */
static bool got_event(int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, ms) <= 0)
		return false;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		pair_die("get_cq_event failed");
	ibv_ack_cq_events(ev_cq, 1);
	return ev_cq == rcq;
}

static void run_solicited(int side)
{
	uint8_t step = 1;

	handshake(side, &default_params);
	if (side == 1) {
		for (int i = 0; i < 3; i++)
			post_recv(100 + (uint64_t)i, (uint32_t)(i * MSG), MSG, mr[K_ALL]->lkey);
		if (ibv_req_notify_cq(rcq, 1))
			pair_die("req_notify_cq failed");
		pair_write(&step, 1);
		/* 1: an unsolicited SEND, completed at the requester (so its
		 * receive completion was made before the ACK left): no event. */
		pair_read(&step, 1);
		check(!got_event(100), "an unsolicited SEND woke a solicited-only CQ");
		expect_wc(rcq, 100, IBV_WC_SUCCESS, "receive 1");
		pair_write(&step, 1);
		/* 2: a solicited SEND wakes it. */
		check(got_event(5000), "a solicited SEND did not wake a solicited-only CQ");
		expect_wc(rcq, 101, IBV_WC_SUCCESS, "receive 2");
		/* 3: armed for any completion, an unsolicited SEND wakes it. */
		if (ibv_req_notify_cq(rcq, 0))
			pair_die("req_notify_cq failed");
		pair_write(&step, 1);
		check(got_event(5000), "an unsolicited SEND did not wake a CQ armed for any");
		expect_wc(rcq, 102, IBV_WC_SUCCESS, "receive 3");
		pair_write(&step, 1);
		return;
	}
	pair_read(&step, 1);
	post_send(1, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	expect_wc(scq, 1, IBV_WC_SUCCESS, "SEND 1");
	pair_write(&step, 1);
	pair_read(&step, 1);
	post_send(2, IBV_WR_SEND, 0, MSG, IBV_SEND_SOLICITED, 0, 0, 0, 0);
	expect_wc(scq, 2, IBV_WC_SUCCESS, "SEND 2");
	pair_read(&step, 1);
	post_send(3, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	expect_wc(scq, 3, IBV_WC_SUCCESS, "SEND 3");
	pair_read(&step, 1);
}

/*
 * The requester READs the peer's buffer (value v) into its own, then SENDs
 * that buffer with IBV_SEND_FENCE: the SEND may only start once the READ
 * has completed, so it carries v, never the buffer's old contents.
 */
static void run_fence(int side)
{
	enum { ROUNDS = 50 };
	uint8_t step = 1;

	handshake(side, &default_params);
	if (side == 1) {
		for (int r = 0; r < ROUNDS; r++) {
			memset(buf, 0x10 + r, MSG);
			post_recv((uint64_t)r, BUF / 2, MSG, mr[K_ALL]->lkey);
			pair_write(&step, 1);
			expect_wc(rcq, (uint64_t)r, IBV_WC_SUCCESS, "receive");
			for (int i = 0; i < MSG; i++)
				if (buf[BUF / 2 + i] != 0x10 + r) {
					check(false, "round %d: the fenced SEND carried 0x%02x, not the READ's 0x%02x",
					      r, buf[BUF / 2 + i], 0x10 + r);
					break;
				}
		}
		pair_write(&step, 1);
		return;
	}
	for (int r = 0; r < ROUNDS; r++) {
		pair_read(&step, 1);
		memset(buf, 0xee, MSG);
		post_send(1, IBV_WR_RDMA_READ, 0, MSG, 0, peer_info.addr, peer_info.rkey[K_ALL], 0, 0);
		post_send(2, IBV_WR_SEND, 0, MSG, IBV_SEND_FENCE, 0, 0, 0, 0);
		expect_wc(scq, 1, IBV_WC_SUCCESS, "READ");
		expect_wc(scq, 2, IBV_WC_SUCCESS, "fenced SEND");
	}
	pair_read(&step, 1);
}

/*
 * Atomic with the CPU (IBV_ATOMIC_GLOB strength, though softib reports the
 * weaker IBV_ATOMIC_HCA, provider/device.c): the responder executes atomics
 * with the CPU's atomic instructions on host memory, so they are atomic
 * with respect to the target process's own CPU atomics on the same word.  The peer FetchAdds 1
 * and CmpSwap-increments while the target's CPU does the same: no update
 * may be lost.
 */
static void run_atomic_glob(int side)
{
	enum { NFADD = 3000, NCAS = 500, DEPTH = 16 };
	uint64_t *word = (uint64_t *)(void *)buf; /* [0] FetchAdd, [1] CmpSwap */
	uint64_t cpu_fadd = 0, cpu_cas = 0, remote_cas = 0, done = 0;

	handshake(side, &default_params);
	if (side == 1) {
		struct pollfd pfd = { .fd = pair_sock, .events = POLLIN };

		word[0] = word[1] = 0;
		pair_write(&done, sizeof(done));
		while (poll(&pfd, 1, 0) == 0) {
			for (int i = 0; i < 8; i++) {
				uint64_t c = __atomic_load_n(&word[1], __ATOMIC_SEQ_CST);

				__atomic_fetch_add(&word[0], 1, __ATOMIC_SEQ_CST);
				cpu_fadd++;
				if (__atomic_compare_exchange_n(&word[1], &c, c + 1, false,
								__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
					cpu_cas++;
			}
			usleep(20); /* leave the peer's CmpSwap a chance */
		}
		pair_read(&remote_cas, sizeof(remote_cas));
		pair_say("CPU: %llu adds, %llu CmpSwap increments; peer: %d FetchAdds, %llu CmpSwap "
			 "increments",
			 (unsigned long long)cpu_fadd, (unsigned long long)cpu_cas, NFADD,
			 (unsigned long long)remote_cas);
		check(word[0] == cpu_fadd + NFADD, "FetchAdd word %llu, expected %llu + %d",
		      (unsigned long long)word[0], (unsigned long long)cpu_fadd, NFADD);
		check(cpu_fadd && cpu_cas, "the CPU did no atomics while the peer's ran");
		check(word[1] == cpu_cas + remote_cas, "CmpSwap word %llu, expected %llu + %llu",
		      (unsigned long long)word[1], (unsigned long long)cpu_cas,
		      (unsigned long long)remote_cas);
		pair_write(&done, sizeof(done));
		return;
	}
	pair_read(&done, sizeof(done));
	uint64_t posted = 0, completed = 0;

	while (completed < NFADD) {
		while (posted < NFADD && posted - completed < DEPTH) {
			post_send(posted, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint32_t)(8 * (posted % DEPTH)),
				  8, 0, peer_info.addr, peer_info.rkey[K_ALL], 1, 0);
			posted++;
		}
		struct ibv_wc wc = wait_wc(scq, 60000);

		check(wc.status == IBV_WC_SUCCESS, "FetchAdd: %s", ibv_wc_status_str(wc.status));
		if (wc.status != IBV_WC_SUCCESS)
			break;
		completed++;
	}
	/* CmpSwap increments: guess, and learn the value from each answer. */
	uint64_t guess = 0, *res = (uint64_t *)(void *)(buf + 1024);

	for (int tries = 0; remote_cas < NCAS && tries < 100 * NCAS && !failures; tries++) {
		post_send(7, IBV_WR_ATOMIC_CMP_AND_SWP, 1024, 8, 0, peer_info.addr + 8,
			  peer_info.rkey[K_ALL], guess, guess + 1);
		struct ibv_wc wc = wait_wc(scq, 60000);

		check(wc.status == IBV_WC_SUCCESS, "CmpSwap: %s", ibv_wc_status_str(wc.status));
		if (*res == guess) {
			remote_cas++;
			guess++;
		} else {
			guess = *res;
		}
	}
	check(remote_cas, "no CmpSwap increment of the peer succeeded");
	pair_write(&remote_cas, sizeof(remote_cas));
	pair_read(&done, sizeof(done));
}

/* A work request with no SGE: a zero-length RDMA WRITE or READ. */
static void post_empty(uint64_t wr_id, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .num_sge = 0, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0xc988) },
			   *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad))
		pair_die("post_send failed: %s", strerror(errno));
}

static void run_zero_length(int side)
{
	uint8_t done = 1;

	handshake(side, &default_params);
	if (side == 1) {
		for (int i = 0; i < NRECV; i++)
			post_recv(100 + (uint64_t)i, (uint32_t)(BUF / 2 + i * MSG), MSG,
				  mr[K_ALL]->lkey);
		pair_write(&done, 1);
		pair_read(&done, 1); /* the requester has its completions */
		struct ibv_wc wc = wait_wc(rcq, 10000);

		check(wc.wr_id == 100 && wc.status == IBV_WC_SUCCESS &&
			      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 0 &&
			      (wc.wc_flags & IBV_WC_WITH_IMM) && be32toh(wc.imm_data) == 0xc988,
		      "receive 1: wr_id %llu %s opcode %d byte_len %u imm 0x%x, expected the "
		      "zero-length WRITE with immediate 0xc988",
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode,
		      wc.byte_len, be32toh(wc.imm_data));
		wc = wait_wc(rcq, 10000);
		check(wc.wr_id == 101 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      wc.byte_len == MSG,
		      "receive 2: wr_id %llu %s byte_len %u, expected the SEND of %d bytes",
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len, MSG);
		expect_state(IBV_QPS_RTS, "responder");
		for (int i = 0; i < BUF / 2; i++)
			if (buf[i] != 0x5a) {
				check(false, "target byte %d changed to 0x%02x", i, buf[i]);
				break;
			}
		pair_write(&done, 1);
		return;
	}
	pair_read(&done, 1); /* receives posted */
	post_empty(1, IBV_WR_RDMA_WRITE, 0, 0);
	post_empty(2, IBV_WR_RDMA_READ, 0x7fffab14a010ull, 0xab149fd0);
	post_empty(3, IBV_WR_RDMA_WRITE_WITH_IMM, peer_info.addr + BUF, peer_info.rkey[K_ALL] ^ 0x80);
	post_send(4, IBV_WR_SEND, 0, MSG, 0, 0, 0, 0, 0);
	expect_wc(scq, 1, IBV_WC_SUCCESS, "zero-length WRITE, R_Key 0");
	expect_wc(scq, 2, IBV_WC_SUCCESS, "zero-length READ");
	expect_wc(scq, 3, IBV_WC_SUCCESS, "zero-length WRITE with immediate");
	expect_wc(scq, 4, IBV_WC_SUCCESS, "SEND after them");
	expect_state(IBV_QPS_RTS, "requester");
	pair_write(&done, 1);
	pair_read(&done, 1); /* the responder has checked */
}

/* ------------------------------------------------------------ main */

static void teardown(void)
{
	ibv_destroy_qp(qp);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	for (int k = 0; k < K_BAD; k++)
		ibv_dereg_mr(mr[k]);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";
	const struct err_case *ec = NULL;
	int side;

	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++)
		if (!strcmp(name, err_cases[i].name))
			ec = &err_cases[i];
	if (!ec && strcmp(name, "peer_gone") && strcmp(name, "rnr") && strcmp(name, "solicited") &&
	    strcmp(name, "fence") && strcmp(name, "atomic_glob") && strcmp(name, "zero_length")) {
		fprintf(stderr, "usage: rc_errors CASE (");
		for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++)
			fprintf(stderr, "%s ", err_cases[i].name);
		fprintf(stderr, "peer_gone rnr solicited fence atomic_glob zero_length)\n");
		return 2;
	}
	side = pair_start(name, 60);
	setup(side);
	if (ec)
		run_err_case(side, ec);
	else if (!strcmp(name, "peer_gone"))
		run_peer_gone(side);
	else if (!strcmp(name, "rnr"))
		run_rnr(side);
	else if (!strcmp(name, "solicited"))
		run_solicited(side);
	else if (!strcmp(name, "fence"))
		run_fence(side);
	else if (!strcmp(name, "zero_length"))
		run_zero_length(side);
	else
		run_atomic_glob(side);
	teardown();
	if (!failures)
		pair_say("OK");
	if (pair_child < 0) { /* peer_gone: the child was killed and reaped */
		close(pair_sock);
		return failures ? 1 : 0;
	}
	return pair_finish(failures ? 1 : 0);
}

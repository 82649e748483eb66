/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A two-node world for data-path tests: two HCAs (memreg table, port, QP
 * numbers, engine) on one in-memory link hub (or on two UDP sockets on
 * loopback: world_new_on), one QP each, a test clock, and a pump that
 * moves packets until the wire is quiet.  No threads.
 * A filter can drop chosen packets on their way in.
 */
#ifndef SIB_TESTS_ENGINE_WORLD_H
#define SIB_TESTS_ENGINE_WORLD_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memreg/memreg.h"
#include "transport/cq.h"
#include "transport/engine.h"
#include "transport/numtab.h"
#include "transport/qp.h"
#include "transport/srq.h"

struct node {
	struct sib_link *link;
	struct memreg_table *mr;
	struct sib_numtab *qpns;
	struct sib_numtab *srqns; /* XRC SRQ numbers */
	struct sib_port port;
	struct sib_engine *eng;
	struct sib_cq *scq, *rcq;
	struct sib_srq *srq;
	struct sib_qp *qp;
	uint32_t pd;
	uint64_t rx_count; /* data packets delivered to the engine */
	struct sib_event_sink *sink; /* the QP's affiliated events (world_qp); NULL: none */
};

/* Returns true to drop the packet (n: index of data packets seen by node). */
typedef bool (*drop_fn)(int node, uint64_t n, const struct ib_packet *pkt, void *arg);

struct world {
	struct sib_mem_hub *hub;
	struct node n[2];
	uint64_t now;
	drop_fn drop;
	void *drop_arg;
	uint8_t rnr_retry; /* for world_connect; 0 means 7 (forever) */
	uint8_t retry_cnt; /* for world_connect; 0 means 3 */
	uint8_t max_dest_rd_atomic; /* for world_connect; 0 means 4 */
	bool lossy;	   /* packets may arrive damaged (faults): drop what does not decode */
	bool udp;	   /* links are UDP sockets (world_new_on), not the in-memory hub */
	bool lookup_pending; /* the receive checks' lookup says "being asked" (-EAGAIN) */
	bool resolve_timeout; /* modify_qp's resolve: the SA did not answer (-ETIMEDOUT) */
	uint16_t slow_lid;    /* ... for this LID only, and the lookup says "being asked" */
	uint64_t rx_bad;   /* ... counted here */
};

static const struct sib_qp_limits world_lim = {
	.active_mtu = SIB_MTU_4096, .pkey_tbl_len = 1, .gid_tbl_len = 1, .phys_port_cnt = 1,
};

static inline uint64_t world_clock(void *arg)
{
	return ((struct world *)arg)->now;
}

static inline int world_resolve(void *arg, uint16_t dlid, const uint8_t *dgid, struct sib_endpoint *out)
{
	struct world *w = arg;

	(void)dgid;
	if (w->resolve_timeout || (w->slow_lid && w->slow_lid == dlid))
		return -ETIMEDOUT;
	for (int i = 0; i < 2; i++) {
		if (w->n[i].port.LID == dlid) {
			*out = w->n[i].link->local;
			return 0;
		}
	}
	return -ENOENT;
}

static inline int world_lookup(void *arg, uint16_t lid, bool refresh, struct sib_endpoint *out)
{
	struct world *w = arg;
	bool timeout = w->resolve_timeout;
	int rc;

	(void)refresh;
	if (w->lookup_pending || (w->slow_lid && w->slow_lid == lid))
		return -EAGAIN;
	w->resolve_timeout = false;
	rc = world_resolve(arg, lid, NULL, out);
	w->resolve_timeout = timeout;
	return rc;
}

static inline void world_node_init(struct world *w, int i, uint16_t lid,
				   const struct sib_fault_cfg *faults)
{
	struct node *n = &w->n[i];
	struct sib_cq_init ci = { .cqe = 4096 };

	if (w->udp)
		assert_int_equal(sib_link_udp_open("127.0.0.1", NULL, &n->link), 0);
	else
		assert_int_equal(sib_link_mem_open(w->hub, 4096, &n->link), 0);
	if (faults) {
		struct sib_fault_cfg fc = *faults;
		struct sib_link *inner = n->link;

		fc.stream = (uint64_t)i;
		assert_int_equal(sib_link_faults_wrap(inner, &fc, &n->link), 0);
	}
	n->mr = memreg_table_create(64, 64);
	assert_non_null(n->mr);
	n->qpns = sib_numtab_create(2, 1024);
	assert_non_null(n->qpns);
	n->srqns = sib_numtab_create(1, 1024);
	assert_non_null(n->srqns);
	sib_port_init(&n->port, 1, 0x0200000000000010ull + (uint64_t)i * 0x10);
	sib_port_set_lid(&n->port, lid, 1);
	struct sib_engine_init ei = {
		.link = n->link,
		.memreg = n->mr,
		.qpns = n->qpns,
		.srqns = n->srqns,
		.port = &n->port,
		.resolve = world_resolve,
		.resolve_arg = w,
		.lookup = world_lookup,
		.lookup_arg = w,
		.clock = world_clock,
		.clock_arg = w,
	};
	assert_int_equal(sib_engine_create(&ei, &n->eng), 0);
	assert_int_equal(sib_cq_create(&ci, &n->scq), 0);
	assert_int_equal(sib_cq_create(&ci, &n->rcq), 0);
	n->pd = 7 + (uint32_t)i;
}

/* Two nodes; with faults, each node's link applies them to what it sends;
 * with udp, their links are UDP sockets on loopback instead of the hub. */
static inline struct world *world_new_on(const struct sib_fault_cfg *faults, bool udp)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->hub = sib_mem_hub_new();
	assert_non_null(w->hub);
	w->now = 1000000000ull;
	w->lossy = faults != NULL;
	w->udp = udp;
	world_node_init(w, 0, 0x11, faults);
	world_node_init(w, 1, 0x22, faults);
	return w;
}

static inline struct world *world_new_faulty(const struct sib_fault_cfg *faults)
{
	return world_new_on(faults, false);
}

static inline struct world *world_new(void)
{
	return world_new_faulty(NULL);
}

static inline void world_free(struct world *w)
{
	for (int i = 0; i < 2; i++) {
		struct node *n = &w->n[i];

		if (n->qp)
			sib_qp_destroy(n->qp);
		if (n->srq)
			assert_int_equal(sib_srq_destroy(n->srq), 0);
		assert_int_equal(sib_cq_destroy(n->scq), 0);
		assert_int_equal(sib_cq_destroy(n->rcq), 0);
		sib_engine_destroy(n->eng);
		memreg_table_destroy(n->mr);
		sib_numtab_destroy(n->qpns);
		sib_numtab_destroy(n->srqns);
		sib_link_close(n->link);
	}
	sib_mem_hub_free(w->hub);
	free(w);
}

struct pump_ctx {
	struct world *w;
	int i;
	int got;
};

static inline void pump_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct pump_ctx *pc = arg;
	struct node *n = &pc->w->n[pc->i];
	struct ib_packet pkt;

	pc->got++;
	if (pc->w->lossy && ib_packet_decode(buf, len, &pkt) != IB_PKT_OK) {
		pc->w->rx_bad++;
		return;
	}
	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	uint64_t idx = n->rx_count++;

	if (pc->w->drop && pc->w->drop(pc->i, idx, &pkt, pc->w->drop_arg))
		return;
	sib_engine_rx(n->eng, &pkt, from);
}

/* Moves packets (and runs due timers) until nothing is in flight. */
static inline void world_pump(struct world *w)
{
	for (int round = 0; round < 100000; round++) {
		int moved = 0;

		for (int i = 0; i < 2; i++) {
			struct pump_ctx pc = { .w = w, .i = i };

			sib_link_poll(w->n[i].link, 64, pump_rx, &pc);
			sib_link_flush(w->n[i].link);
			moved += pc.got;
		}
		for (int i = 0; i < 2; i++) {
			uint64_t d = sib_engine_next_deadline(w->n[i].eng);

			if (d && d <= w->now)
				sib_engine_tick(w->n[i].eng);
		}
		if (!moved) {
			int again = 0;

			for (int i = 0; i < 2; i++) {
				uint64_t d = sib_engine_next_deadline(w->n[i].eng);

				again += d && d <= w->now;
			}
			if (!again)
				return;
		}
	}
	fail_msg("world_pump: the wire never went quiet");
}

/* Advances the clock to the next engine deadline of either node; false if none. */
static inline bool world_advance(struct world *w)
{
	uint64_t best = 0;

	for (int i = 0; i < 2; i++) {
		uint64_t d = sib_engine_next_deadline(w->n[i].eng);

		if (d && (!best || d < best))
			best = d;
	}
	if (!best)
		return false;
	if (best > w->now)
		w->now = best;
	for (int i = 0; i < 2; i++)
		sib_engine_tick(w->n[i].eng);
	world_pump(w);
	return true;
}

static inline uint32_t world_reg(struct node *n, void *buf, size_t len, uint32_t access)
{
	struct memreg_mr_attr a = {
		.host = buf, .iova = (uint64_t)(uintptr_t)buf, .length = len, .access = access, .pd = n->pd,
	};
	uint32_t key = 0;

	assert_int_equal(memreg_mr_register(n->mr, &a, &key), 0);
	return key;
}

static inline void world_qp(struct world *w, int i, enum sib_qp_type t, uint32_t max_wr)
{
	struct node *n = &w->n[i];
	char why[160];
	struct sib_qp_init in = {
		.type = t,
		.cap = { .max_send_wr = max_wr, .max_recv_wr = max_wr, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
		.send_cq = n->scq,
		.recv_cq = n->rcq,
		.srq = n->srq,
		.pd = n->pd,
		.qpns = n->qpns,
		.engine = n->eng,
		.sink = n->sink,
	};

	assert_int_equal(sib_qp_create(&in, &n->qp, why, sizeof(why)), 0);
}

static inline void world_modify(struct sib_qp *qp, struct sib_qp_attr *a, uint32_t mask)
{
	char why[160] = "";
	int rc = sib_qp_modify(qp, a, mask | SIB_QP_STATE, &world_lim, why, sizeof(why));

	if (rc)
		fail_msg("modify: %s", why);
}

/* Connects the two QPs (RC or UC) at the given path MTU. */
static inline void world_connect(struct world *w, enum sib_mtu mtu)
{
	for (int i = 0; i < 2; i++) {
		struct sib_qp *qp = w->n[i].qp;
		bool rc = sib_qp_type(qp) == SIB_QPT_RC;
		struct sib_qp_attr a = { 0 };

		a.qp_state = SIB_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = MEMREG_ACCESS_REMOTE_WRITE |
				    (rc ? MEMREG_ACCESS_REMOTE_READ | MEMREG_ACCESS_REMOTE_ATOMIC : 0);
		world_modify(qp, &a, SIB_QP_PKEY_INDEX | SIB_QP_PORT | SIB_QP_ACCESS_FLAGS);
		a.qp_state = SIB_QPS_RTR;
		a.ah_attr.DLID = w->n[1 - i].port.LID;
		a.ah_attr.port_num = 1;
		a.path_mtu = mtu;
		a.dest_qp_num = sib_qp_num(w->n[1 - i].qp);
		a.rq_psn = 0xfffff0u + (uint32_t)i; /* PSNs wrap past 2^24 during the tests */
		a.max_dest_rd_atomic = w->max_dest_rd_atomic ? w->max_dest_rd_atomic : 4;
		a.min_rnr_timer = 1;
		world_modify(qp, &a,
			     SIB_QP_AV | SIB_QP_PATH_MTU | SIB_QP_DEST_QPN | SIB_QP_RQ_PSN |
				     (rc ? SIB_QP_MAX_DEST_RD_ATOMIC | SIB_QP_MIN_RNR_TIMER : 0));
		a.qp_state = SIB_QPS_RTS;
		a.sq_psn = 0xfffff0u + (uint32_t)(1 - i);
		a.timeout = 14;
		a.retry_cnt = w->retry_cnt ? w->retry_cnt : 3;
		a.rnr_retry = w->rnr_retry ? w->rnr_retry : 7;
		a.max_rd_atomic = 4;
		world_modify(qp, &a,
			     SIB_QP_SQ_PSN | (rc ? SIB_QP_TIMEOUT | SIB_QP_RETRY_CNT | SIB_QP_RNR_RETRY |
							   SIB_QP_MAX_QP_RD_ATOMIC
						 : 0));
	}
}

static inline void world_post_recv(struct node *n, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)buf, .length = len, .lkey = lkey };
	char why[160];

	if (n->srq)
		assert_int_equal(sib_srq_post(n->srq, wr_id, &sge, 1, why, sizeof(why)), 0);
	else
		assert_int_equal(sib_qp_post_recv(n->qp, wr_id, &sge, 1, why, sizeof(why)), 0);
}

static inline void world_post_send(struct node *n, struct sib_send_wqe *w, void *buf, uint32_t len,
			    uint32_t lkey)
{
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)buf, .length = len, .lkey = lkey };
	char why[160] = "";

	w->num_sge = 1;
	if (sib_qp_post_send(n->qp, w, &sge, why, sizeof(why)))
		fail_msg("post_send: %s", why);
	sib_qp_kick(n->qp);
	sib_engine_flush(n->eng); /* as a thread that does not poll sends */
}

static inline int world_poll(struct sib_cq *cq, struct sib_cqe *c)
{
	return sib_cq_poll(cq, c, 1);
}

/* The next completion of cq is wr_id's, with status st. */
static inline void world_expect_status(struct sib_cq *cq, uint64_t wr_id, enum sib_wc_status st)
{
	struct sib_cqe c;

	assert_int_equal(world_poll(cq, &c), 1);
	assert_int_equal(c.wr_id, wr_id);
	assert_int_equal(c.status, st);
}

/* ... and, when it succeeded, its opcode is op. */
static inline void world_expect_cqe(struct sib_cq *cq, uint64_t wr_id, enum sib_wc_status st,
				    enum sib_wc_opcode op)
{
	struct sib_cqe c;

	assert_int_equal(world_poll(cq, &c), 1);
	assert_int_equal(c.status, st);
	assert_int_equal(c.wr_id, wr_id);
	if (st == SIB_WC_SUCCESS)
		assert_int_equal(c.opcode, op);
}

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The send side of the MAD layer (mgmt/mad_send.c) on an owner of the
 * test's own -- a clock moved by hand, a link that only records, a timer
 * that only remembers when it should fire -- as softib-sm drives it; and
 * the blocking call (mgmt/mad_wait.c) on a node over the in-memory link.
 * A response counts only by TID and endpoint, a timeout resends with the
 * TID until the retries run out, cancel, modify, back-off, an answer in
 * RMPP segments keeping its send, and who gets unsolicited MADs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/timer.h"
#include "link/link.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_send.h"
#include "mgmt/mad_wait.h"
#include "mgmt/node.h"
#include "wire/bitfield.h"
#include "wire/mad.h"

#define MS 1000000ull

/* The layer's owner: what it was asked to do, and what its handlers heard. */
struct owner {
	struct sib_mad_layer l;
	uint64_t now;
	int sent;			/* MADs handed to the link */
	uint8_t last[IB_MAD_BYTES];	/* the last of them */
	struct sib_endpoint last_dst;
	uint64_t armed;			/* the deadline ops->arm was last given */
	int ev[SIB_MAD_CANCELED + 1];	/* handler calls by status */
	void *last_context;
	enum sib_mad_verdict verdict;	/* what the handler says of a response */
	int rx, rx_get;			/* the agents' rx calls */
};

static uint64_t clock_of(void *owner)
{
	return ((struct owner *)owner)->now;
}

static int record_xmit(void *owner, unsigned port_num, const struct sib_mad_addr *a,
		       const uint8_t *mad, const struct sib_endpoint *dst)
{
	struct owner *o = owner;

	(void)port_num, (void)a;
	o->sent++;
	memcpy(o->last, mad, IB_MAD_BYTES);
	o->last_dst = *dst;
	return 0;
}

static void record_arm(void *owner, uint64_t deadline_ns)
{
	((struct owner *)owner)->armed = deadline_ns;
}

static const struct sib_mad_ops ops = { .now = clock_of, .xmit = record_xmit, .arm = record_arm };

static bool count_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)r;
	((struct owner *)owner)->rx++;
	return true;
}

static bool count_get(void *owner, const struct sib_mad_recv *r)
{
	(void)r;
	((struct owner *)owner)->rx_get++;
	return true;
}

/* A sender of SA queries that serves no requests, and a Get server of the
 * same class beside it. */
static const struct sib_mad_agent sender = {
	.name = "sender", .qp = SIB_QP1, .mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
	.class_version = IB_SA_CLASS_VERSION, .rx = count_rx,
};
static const struct sib_mad_agent getter = {
	.name = "getter", .qp = SIB_QP1, .mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
	.class_version = IB_SA_CLASS_VERSION, .methods = SIB_MAD_METHOD(IB_MAD_METHOD_GET),
	.rx = count_get,
};

static enum sib_mad_verdict handler(void *owner, const struct sib_mad_send_wc *wc)
{
	struct owner *o = owner;

	o->ev[wc->status]++;
	o->last_context = wc->context;
	if (wc->status == SIB_MAD_RESPONSE)
		assert_int_equal(ib_bits_get(wc->resp->mad, 64, 64), wc->tid);
	return o->verdict;
}

static struct sib_endpoint ep(uint16_t port)
{
	struct sib_endpoint e;

	assert_int_equal(sib_endpoint_parse("127.0.0.1", port, &e), 0);
	return e;
}

static int setup(void **state)
{
	struct owner *o = calloc(1, sizeof(*o));

	o->now = 1000 * MS;
	sib_mad_layer_init(&o->l, o, &ops);
	assert_int_equal(sib_mad_register(&o->l, &sender), 0);
	assert_int_equal(sib_mad_register(&o->l, &getter), 0);
	*state = o;
	return 0;
}

static int teardown(void **state)
{
	struct owner *o = *state;

	sib_mad_layer_fini(&o->l);
	free(o);
	return 0;
}

/* A SubnAdmGet to port 4000, waiting timeout ms, with retries more tries. */
static uint64_t ask(struct owner *o, uint64_t timeout, unsigned retries)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_send_req req = {
		.port_num = 1, .dst = ep(4000), .mad = mad, .timeout_ns = timeout * MS,
		.retries = retries, .fn = handler, .context = o,
	};
	struct ib_mad_hdr h;
	uint64_t tid = 0;

	memset(mad, 0, sizeof(mad));
	sib_mad_request_hdr(&h, IB_MGMT_CLASS_SUBN_ADM, IB_SA_CLASS_VERSION, IB_MAD_METHOD_GET,
			    0x0035, 0);
	ib_mad_hdr_encode(&h, mad);
	sib_mad_addr_init(&req.addr, SIB_QP1, 1, 2);
	assert_int_equal(sib_mad_post(&o->l, &sender, &req, &tid), 0);
	assert_int_not_equal(tid, 0);
	return tid;
}

/* A MAD of class mclass and method, TID tid, arriving from UDP port `from`. */
static bool arrive(struct owner *o, uint8_t mclass, uint8_t method, uint64_t tid, uint16_t from)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_endpoint src = ep(from);
	struct sib_mad_addr a;
	struct ib_mad_hdr h;
	struct sib_mad_recv r = { .port_num = 1, .a = &a, .mad = mad, .from = &src };

	memset(mad, 0, sizeof(mad));
	sib_mad_request_hdr(&h, mclass, IB_SA_CLASS_VERSION, method, 0x0035, 0);
	h.TransactionID = tid;
	ib_mad_hdr_encode(&h, mad);
	sib_mad_addr_init(&a, SIB_QP1, 2, 1);
	return sib_mad_deliver(&o->l, &r);
}

static bool answer(struct owner *o, uint64_t tid, uint16_t from)
{
	return arrive(o, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_GET_RESP, tid, from);
}

static void tick_at(struct owner *o, uint64_t ms_from_start)
{
	o->now = 1000 * MS + ms_from_start * MS;
	sib_mad_tick(&o->l);
}

static void a_response_is_matched_by_tid_and_endpoint(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 3);

	assert_int_equal(o->sent, 1);
	assert_int_equal(ib_bits_get(o->last, 64, 64), tid); /* the send's TID is on the wire */
	assert_int_equal(o->last_dst.port, 4000);
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 1);
	assert_ptr_equal(o->last_context, o);
	assert_int_equal(o->rx, 0);
	/* Over: nothing waits, and the same answer again is nobody's send. */
	assert_int_equal(sib_mad_next_deadline(&o->l), 0);
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 1);
	assert_int_equal(o->rx, 1);
}

/* TIDs are guessable; endpoints are not (softib's source check). */
static void a_response_from_another_endpoint_is_no_answer(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 3);

	assert_true(answer(o, tid, 4001));		       /* the right TID, elsewhere */
	assert_true(arrive(o, IB_MGMT_CLASS_PERF, IB_MAD_METHOD_GET_RESP, tid, 4000) == false);
	assert_true(answer(o, tid + 1, 4000));		       /* another TID */
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 0);
	assert_int_equal(o->rx, 2); /* the class's first agent heard both */
	assert_int_not_equal(sib_mad_next_deadline(&o->l), 0);
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 1);
}

/* IBA 13.4.6.4: a retry is the same MAD with the same TID. */
static void a_timeout_resends_with_the_same_tid(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 3);
	uint8_t first[IB_MAD_BYTES];

	memcpy(first, o->last, sizeof(first));
	assert_int_equal(sib_mad_next_deadline(&o->l), o->now + 100 * MS);
	tick_at(o, 99);
	assert_int_equal(o->sent, 1);
	tick_at(o, 100);
	assert_int_equal(o->sent, 2);
	assert_int_equal(o->ev[SIB_MAD_RESENT], 1);
	assert_memory_equal(o->last, first, IB_MAD_BYTES);
	assert_int_equal(sib_mad_next_deadline(&o->l), o->now + 100 * MS);
	/* An answer to either try counts. */
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 1);
}

static void retries_run_out_and_the_sender_gets_a_timeout(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 1);

	tick_at(o, 100);
	assert_int_equal(o->sent, 2);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 0);
	tick_at(o, 200);
	assert_int_equal(o->sent, 2);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 1);
	assert_int_equal(o->ev[SIB_MAD_RESENT], 1);
	assert_int_equal(sib_mad_next_deadline(&o->l), 0);
	/* Too late: nobody's send any more. */
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 0);
	assert_int_equal(o->rx, 1);
}

/* ib_cancel_mad: the end reaches the handler from the next tick, never
 * from the cancel (the caller may hold its own locks). */
static void cancel_ends_the_send_at_the_next_tick(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 3);

	assert_int_equal(sib_mad_cancel(&o->l, tid, NULL), -ENOENT); /* another context */
	assert_int_equal(sib_mad_cancel(&o->l, tid, o), 0);
	assert_int_equal(o->ev[SIB_MAD_CANCELED], 0);
	assert_int_equal(sib_mad_cancel(&o->l, tid, o), -ENOENT);
	assert_int_equal(o->armed, o->now); /* due at once */
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 0);
	sib_mad_tick(&o->l);
	assert_int_equal(o->ev[SIB_MAD_CANCELED], 1);
	assert_int_equal(o->sent, 1);
	assert_int_equal(sib_mad_next_deadline(&o->l), 0);
	/* Everything to one endpoint: a port that is gone. */
	ask(o, 100, 3);
	ask(o, 100, 3);
	assert_int_equal(sib_mad_cancel_to(&o->l, &(struct sib_endpoint){ 0 }, SIB_MAD_ANY), 0);
	{
		struct sib_endpoint dst = ep(4000);

		assert_int_equal(sib_mad_cancel_to(&o->l, &dst, SIB_MAD_ANY), 2);
	}
	sib_mad_tick(&o->l);
	assert_int_equal(o->ev[SIB_MAD_CANCELED], 3);
}

/* IBA 13.6: each segment of a GetTable answer keeps the send out and
 * starts its wait again; the last one ends it. */
static void an_rmpp_answer_keeps_its_send_and_restarts_the_wait(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 0);

	o->verdict = SIB_MAD_MORE;
	tick_at(o, 80);
	assert_true(answer(o, tid, 4000));
	assert_int_equal(sib_mad_next_deadline(&o->l), o->now + 100 * MS);
	tick_at(o, 160); /* past the first wait: the segment restarted it */
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 0);
	assert_true(answer(o, tid, 4000));
	o->verdict = SIB_MAD_DONE;
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->ev[SIB_MAD_RESPONSE], 3);
	assert_int_equal(sib_mad_next_deadline(&o->l), 0);
	/* A transfer that stalls times out from its last segment. */
	tid = ask(o, 100, 0);
	o->verdict = SIB_MAD_MORE;
	tick_at(o, 200);
	assert_true(answer(o, tid, 4000));
	tick_at(o, 299);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 0);
	tick_at(o, 300);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 1);
}

/* An MRA (IBA 12.6.6, ib_modify_mad): the current wait only. */
static void modify_stretches_the_current_wait_only(void **state)
{
	struct owner *o = *state;
	uint64_t tid = ask(o, 100, 1);

	assert_int_equal(sib_mad_modify(&o->l, tid, o, 500 * MS), 0);
	tick_at(o, 100);
	assert_int_equal(o->sent, 1);
	tick_at(o, 500);
	assert_int_equal(o->sent, 2);
	tick_at(o, 599);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 0);
	tick_at(o, 600);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 1);
	assert_int_equal(sib_mad_modify(&o->l, tid, o, 500 * MS), -ENOENT);
}

static void waits_double_up_to_their_cap(void **state)
{
	struct owner *o = *state;
	static const uint64_t resent_at[] = { 100, 300, 700, 1100 };
	uint8_t mad[IB_MAD_BYTES] = { 0 };
	struct sib_mad_send_req req = {
		.port_num = 1, .dst = ep(4000), .mad = mad, .timeout_ns = 100 * MS,
		.timeout_max_ns = 400 * MS, .retries = 4, .fn = handler,
	};

	mad[1] = IB_MGMT_CLASS_SUBN_ADM;
	assert_int_equal(sib_mad_post(&o->l, &sender, &req, NULL), 0);
	for (unsigned i = 0; i < 4; i++) {
		tick_at(o, resent_at[i] - 1);
		assert_int_equal(o->sent, 1 + (int)i);
		tick_at(o, resent_at[i]);
		assert_int_equal(o->sent, 2 + (int)i);
	}
	tick_at(o, 1499);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 0);
	tick_at(o, 1500);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 1);
}

/* The node's timer: always armed by the earliest deadline. */
static void the_owner_is_armed_for_the_earliest_deadline(void **state)
{
	struct owner *o = *state;

	ask(o, 300, 0);
	assert_int_equal(o->armed, o->now + 300 * MS);
	ask(o, 100, 0);
	assert_int_equal(o->armed, o->now + 100 * MS);
	tick_at(o, 100);
	assert_int_equal(o->ev[SIB_MAD_TIMEOUT], 1);
	assert_int_equal(o->armed, 1000 * MS + 300 * MS);
}

/* A send that expects nothing is over once the link took it. */
static void a_send_without_a_timeout_is_over_once_sent(void **state)
{
	struct owner *o = *state;
	uint8_t mad[IB_MAD_BYTES] = { IB_MAD_BASE_VERSION, IB_MGMT_CLASS_SUBN_ADM };
	struct sib_mad_send_req req = { .port_num = 1, .dst = ep(4000), .mad = mad };
	uint64_t tid;

	assert_int_equal(sib_mad_post(&o->l, &sender, &req, &tid), 0);
	assert_int_equal(o->sent, 1);
	assert_int_equal(ib_bits_get(o->last, 64, 64), tid);
	assert_int_equal(sib_mad_next_deadline(&o->l), 0);
	assert_true(answer(o, tid, 4000));
	assert_int_equal(o->rx, 1);
	/* A timeout needs a handler to hear the end. */
	req.timeout_ns = MS;
	assert_int_equal(sib_mad_post(&o->l, &sender, &req, NULL), -EINVAL);
}

/* The kernel's TID layout: the agent's id above, a counter that is not
 * one below. */
static void tids_carry_the_agent_id_above_and_differ_below(void **state)
{
	struct owner *o = *state;
	static const struct sib_mad_agent stranger = { .name = "stranger" };
	uint32_t id = sib_mad_agent_id(&o->l, &sender);
	uint64_t a = sib_mad_tid(&o->l, &sender), b = sib_mad_tid(&o->l, &sender);

	assert_int_not_equal(id, 0);
	assert_int_not_equal(id, sib_mad_agent_id(&o->l, &getter));
	assert_int_equal(a >> 32, id);
	assert_int_equal(b >> 32, id);
	assert_int_not_equal((uint32_t)a, (uint32_t)b);
	assert_int_not_equal((uint32_t)a + 1, (uint32_t)b);
	assert_int_equal(sib_mad_tid(&o->l, &stranger), 0);
}

/* Requests go to the agent registered for their class, version and
 * method; nobody else's. */
static void unsolicited_requests_go_by_class_and_method(void **state)
{
	struct owner *o = *state;

	assert_true(arrive(o, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_GET, 77, 4000));
	assert_int_equal(o->rx_get, 1);
	assert_false(arrive(o, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_SET, 77, 4000));
	assert_false(arrive(o, IB_MGMT_CLASS_PERF, IB_MAD_METHOD_GET, 77, 4000));
	assert_int_equal(o->rx_get, 1);
	assert_int_equal(o->rx, 0);
	/* Agents that serve nothing share a class; servers of one method do not. */
	{
		static const struct sib_mad_agent second_sender = {
			.name = "second sender", .qp = SIB_QP1,
			.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
		};
		static const struct sib_mad_agent second_getter = {
			.name = "second getter", .qp = SIB_QP1,
			.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
			.methods = SIB_MAD_METHOD(IB_MAD_METHOD_GET), .rx = count_get,
		};

		assert_int_equal(sib_mad_register(&o->l, &second_sender), 0);
		assert_int_equal(sib_mad_register(&o->l, &second_getter), -EEXIST);
	}
}

/* Closing the layer ends what is still out. */
static void the_layer_closes_with_every_send_canceled(void **state)
{
	struct owner *o = *state;

	ask(o, 100, 3);
	ask(o, 100, 3);
	sib_mad_layer_fini(&o->l);
	assert_int_equal(o->ev[SIB_MAD_CANCELED], 2);
	sib_mad_layer_init(&o->l, o, &ops); /* for teardown */
}

/* ---------------------------------------------------------------- a node's blocking call */

struct node_fixture {
	struct sib_timers timers;
	struct sib_node node;
	struct sib_mem_hub *hub;
	struct sib_link *peer;
	bool answers; /* the peer answers what it gets */
	int asked;
};

static struct node_fixture *nf;

static void peer_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct node_fixture *f = arg;
	struct ib_packet pkt;
	struct sib_mad_addr a, ra;
	uint8_t mad[IB_MAD_BYTES];
	const uint8_t *in;

	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	in = sib_mgmt_parse(&pkt, &a);
	assert_non_null(in);
	f->asked++;
	if (!f->answers)
		return;
	memcpy(mad, in, IB_MAD_BYTES);
	mad[3] = IB_MAD_METHOD_GET_RESP;
	sib_mad_addr_reply(&a, 1, &ra);
	assert_int_equal(sib_mgmt_send(f->peer, &ra, mad, from), 0);
}

/* What the node's owner does without a progress thread: its timers, and
 * its link (here the peer answers in the same pass). */
static bool node_never(struct sib_node *node)
{
	(void)node;
	return false;
}

static void node_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct ib_packet pkt;
	struct sib_mad_addr a;
	const uint8_t *mad;

	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	mad = sib_mgmt_parse(&pkt, &a);
	assert_non_null(mad);
	sib_mad_agent_deliver(arg, 1, &a, mad, from);
}

static int node_poll(struct sib_node *node)
{
	sib_link_poll(nf->peer, 8, peer_rx, nf);
	return sib_link_poll(node->mgmt[0].link, 8, node_rx, node) + sib_timers_run(node->timers);
}

static void node_event(struct sib_node *node, unsigned port_num, enum sib_event ev)
{
	(void)node, (void)port_num, (void)ev;
}

static const struct sib_node_ops node_ops = {
	.port_event = node_event, .threaded = node_never, .poll = node_poll,
	.on_thread = node_never,
};

static enum sib_mad_verdict call_handler(void *owner, const struct sib_mad_send_wc *wc)
{
	(void)owner;
	(*(int *)wc->context)++;
	return SIB_MAD_DONE;
}

static void a_blocking_call_returns_the_answer_or_the_timeout(void **state)
{
	struct node_fixture f = { 0 };
	uint8_t mad[IB_MAD_BYTES] = { IB_MAD_BASE_VERSION, IB_MGMT_CLASS_SUBN_ADM, 2,
				      IB_MAD_METHOD_GET };
	struct sib_mad_send_req req = { .port_num = 1, .mad = mad, .timeout_ns = 5 * MS,
					.retries = 2, .fn = call_handler };
	enum sib_mad_status end;
	int events = 0;

	(void)state;
	nf = &f;
	assert_int_equal(sib_timers_init(&f.timers), 0);
	assert_int_equal(sib_node_init(&f.node, 0x0212340000000050ull, &f.timers, &node_ops), 0);
	f.hub = sib_mem_hub_new();
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.node.mgmt[0].link), 0);
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.peer), 0);
	assert_int_equal(sib_mad_agent_register(&f.node, &sender), 0);
	req.dst = f.peer->local;
	sib_mad_addr_init(&req.addr, SIB_QP1, 1, 2);
	req.context = &events;

	f.answers = true;
	assert_int_equal(sib_mad_call(&f.node, &sender, &req, &end), 0);
	assert_int_equal(end, SIB_MAD_RESPONSE);
	assert_int_equal(events, 1);
	assert_int_equal(f.asked, 1);

	f.answers = false;
	events = 0;
	assert_int_equal(sib_mad_call(&f.node, &sender, &req, &end), 0);
	assert_int_equal(end, SIB_MAD_TIMEOUT);
	assert_int_equal(events, 3); /* two RESENT, one TIMEOUT */
	assert_int_equal(f.asked, 4);

	sib_node_fini(&f.node);
	sib_link_close(f.node.mgmt[0].link);
	sib_link_close(f.peer);
	sib_mem_hub_free(f.hub);
	sib_timers_fini(&f.timers);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(a_response_is_matched_by_tid_and_endpoint),
		T(a_response_from_another_endpoint_is_no_answer),
		T(a_timeout_resends_with_the_same_tid),
		T(retries_run_out_and_the_sender_gets_a_timeout),
		T(cancel_ends_the_send_at_the_next_tick),
		T(an_rmpp_answer_keeps_its_send_and_restarts_the_wait),
		T(modify_stretches_the_current_wait_only),
		T(waits_double_up_to_their_cap),
		T(the_owner_is_armed_for_the_earliest_deadline),
		T(a_send_without_a_timeout_is_over_once_sent),
		T(tids_carry_the_agent_id_above_and_differ_below),
		T(unsolicited_requests_go_by_class_and_method),
		T(the_layer_closes_with_every_send_canceled),
#undef T
		cmocka_unit_test(a_blocking_call_returns_the_answer_or_the_timeout),
	};

	return cmocka_run_group_tests_name("mgmt/mad_send", tests, NULL, NULL);
}

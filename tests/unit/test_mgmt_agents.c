/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The MAD layer of a node (mgmt/mad_agent.c) and the node itself
 * (mgmt/node.c), with no HCA: agents register for a QP, a management
 * class, a version and methods, and get exactly the requests of those
 * (a response no send took goes to the class's first agent); port LID
 * changes reach the owner's port_event hook.  The send side is
 * test_mad_send.c's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "mgmt/mad_agent.h"
#include "mgmt/node.h"
#include "wire/mad.h"

static unsigned events[32];
static int got_cm, got_sa;

static void port_event(struct sib_node *node, unsigned port_num, enum sib_event ev)
{
	(void)node;
	assert_int_equal(port_num, 1);
	events[ev]++;
}

static bool never(struct sib_node *node)
{
	(void)node;
	return false;
}

static int poll_none(struct sib_node *node)
{
	(void)node;
	return 0;
}

static const struct sib_node_ops ops = {
	.port_event = port_event,
	.threaded = never,
	.poll = poll_none,
	.on_thread = never,
};

static bool cm_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)owner, (void)r;
	got_cm++;
	return true;
}

/* Takes responses only, as the SA client does. */
static bool sa_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)owner;
	got_sa++;
	return r->mad[3] & IB_MAD_METHOD_RESP;
}

static const struct sib_mad_agent cm_agent = {
	.name = "CM", .qp = 1, .mgmt_class = IB_MGMT_CLASS_CM, .methods = SIB_MAD_METHODS_ALL,
	.rx = cm_rx,
};
/* Serves no requests: it only sends (and hears stray answers). */
static const struct sib_mad_agent sa_agent = {
	.name = "SA", .qp = 1, .mgmt_class = IB_MGMT_CLASS_SUBN_ADM, .rx = sa_rx,
};

static bool deliver_v(struct sib_node *node, uint32_t qp, uint8_t mclass, uint8_t version,
		      uint8_t method)
{
	uint8_t mad[IB_MAD_BYTES] = { IB_MAD_BASE_VERSION, mclass, version, method };
	struct sib_mad_addr a;
	struct sib_endpoint from = { 0 };

	sib_mad_addr_init(&a, qp, 2, 3);
	return sib_mad_agent_deliver(node, 1, &a, mad, &from);
}

static bool deliver(struct sib_node *node, uint32_t qp, uint8_t mclass, uint8_t method)
{
	return deliver_v(node, qp, mclass, 2, method);
}

static void agents_get_their_qp_and_class_only(void **state)
{
	struct sib_timers timers;
	struct sib_node node;

	(void)state;
	got_cm = got_sa = 0;
	assert_int_equal(sib_timers_init(&timers), 0);
	assert_int_equal(sib_node_init(&node, 0x0212340000000020ull, &timers, &ops), 0);
	assert_false(deliver(&node, 1, IB_MGMT_CLASS_CM, IB_MAD_METHOD_SEND));
	assert_int_equal(sib_mad_agent_register(&node, &cm_agent), 0);
	assert_int_equal(sib_mad_agent_register(&node, &sa_agent), 0);
	assert_int_equal(sib_mad_agent_register(&node, &cm_agent), -EEXIST);

	assert_true(deliver(&node, 1, IB_MGMT_CLASS_CM, IB_MAD_METHOD_SEND));
	assert_int_equal(got_cm, 1);
	/* The same class on QP0 is nobody's. */
	assert_false(deliver(&node, 0, IB_MGMT_CLASS_CM, IB_MAD_METHOD_SEND));
	assert_int_equal(got_cm, 1);
	/* A request of a method nobody serves is nobody's: the caller counts
	 * it as unclaimed.  A response no send took reaches the class's agent. */
	assert_false(deliver(&node, 1, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_GET));
	assert_int_equal(got_sa, 0);
	assert_true(deliver(&node, 1, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_GET_RESP));
	assert_int_equal(got_sa, 1);
	assert_false(deliver(&node, 1, IB_MGMT_CLASS_PERF, IB_MAD_METHOD_GET));
	/* IBA 13.4.4.1: an unknown BaseVersion is nobody's. */
	{
		uint8_t mad[IB_MAD_BYTES] = { 2, IB_MGMT_CLASS_CM, 2, IB_MAD_METHOD_SEND };
		struct sib_mad_addr a;
		struct sib_endpoint from = { 0 };

		sib_mad_addr_init(&a, 1, 2, 3);
		assert_false(sib_mad_agent_deliver(&node, 1, &a, mad, &from));
		assert_int_equal(got_cm, 1);
	}

	sib_node_fini(&node);
	sib_timers_fini(&timers);
}

static int got_get, got_set, got_v1;

static bool get_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)owner, (void)r;
	got_get++;
	return true;
}

static bool set_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)owner, (void)r;
	got_set++;
	return true;
}

static bool v1_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)owner, (void)r;
	got_v1++;
	return true;
}

/* As ib_register_mad_agent: one class, several agents, each for its own
 * methods and class version. */
static void requests_go_to_the_agent_of_their_class_version_and_method(void **state)
{
	static const struct sib_mad_agent getter = {
		.name = "getter", .qp = 1, .mgmt_class = IB_MGMT_CLASS_PERF, .class_version = 2,
		.methods = SIB_MAD_METHOD(IB_MAD_METHOD_GET), .rx = get_rx,
	};
	static const struct sib_mad_agent setter = {
		.name = "setter", .qp = 1, .mgmt_class = IB_MGMT_CLASS_PERF, .class_version = 2,
		.methods = SIB_MAD_METHOD(IB_MAD_METHOD_SET) | SIB_MAD_METHOD(IB_MAD_METHOD_DELETE),
		.rx = set_rx,
	};
	static const struct sib_mad_agent old = {
		.name = "version 1", .qp = 1, .mgmt_class = IB_MGMT_CLASS_PERF, .class_version = 1,
		.methods = SIB_MAD_METHOD(IB_MAD_METHOD_GET), .rx = v1_rx,
	};
	static const struct sib_mad_agent clash = {
		.name = "clash", .qp = 1, .mgmt_class = IB_MGMT_CLASS_PERF,
		.methods = SIB_MAD_METHOD(IB_MAD_METHOD_DELETE), .rx = set_rx,
	};
	struct sib_timers timers;
	struct sib_node node;

	(void)state;
	got_get = got_set = got_v1 = 0;
	assert_int_equal(sib_timers_init(&timers), 0);
	assert_int_equal(sib_node_init(&node, 0x0212340000000040ull, &timers, &ops), 0);
	assert_int_equal(sib_mad_agent_register(&node, &getter), 0);
	assert_int_equal(sib_mad_agent_register(&node, &setter), 0);
	assert_int_equal(sib_mad_agent_register(&node, &old), 0);
	/* Every version overlaps version 2, and Delete is the setter's. */
	assert_int_equal(sib_mad_agent_register(&node, &clash), -EEXIST);

	assert_true(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 2, IB_MAD_METHOD_GET));
	assert_true(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 2, IB_MAD_METHOD_SET));
	assert_true(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 2, IB_MAD_METHOD_DELETE));
	assert_true(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 1, IB_MAD_METHOD_GET));
	assert_int_equal(got_get, 1);
	assert_int_equal(got_set, 2);
	assert_int_equal(got_v1, 1);
	/* A method or a version nobody registered: nobody's. */
	assert_false(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 2, IB_MAD_METHOD_GET_TABLE));
	assert_false(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 3, IB_MAD_METHOD_GET));
	assert_false(deliver_v(&node, 1, IB_MGMT_CLASS_PERF, 1, IB_MAD_METHOD_SET));
	assert_int_equal(got_get + got_set + got_v1, 4);

	sib_node_fini(&node);
	sib_timers_fini(&timers);
}

static void port_lid_changes_reach_the_owner(void **state)
{
	struct sib_timers timers;
	struct sib_node node;

	(void)state;
	memset(events, 0, sizeof(events));
	assert_int_equal(sib_timers_init(&timers), 0);
	assert_int_equal(sib_node_init(&node, 0x0212340000000030ull, &timers, &ops), 0);
	assert_int_equal(node.ports[0].port_guid, 0x0212340000000031ull);
	assert_ptr_equal(sib_node_port(&node, 1), &node.ports[0]);
	assert_null(sib_node_port(&node, 0));
	assert_null(sib_node_port(&node, SIB_NUM_PORTS + 1));
	node.ports[0].state = SIB_PORT_INIT;
	sib_node_port_set_lid(&node, 1, 9, 1);
	assert_int_equal(events[SIB_EV_PORT_ACTIVE], 1);
	sib_node_port_set_lid(&node, 1, 9, 1);
	assert_int_equal(events[SIB_EV_LID_CHANGE], 0);
	sib_node_port_set_lid(&node, 1, 10, 1);
	assert_int_equal(events[SIB_EV_LID_CHANGE], 1);
	assert_int_equal(node.ports[0].LID, 10);
	sib_node_fini(&node);
	sib_timers_fini(&timers);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agents_get_their_qp_and_class_only),
		cmocka_unit_test(requests_go_to_the_agent_of_their_class_version_and_method),
		cmocka_unit_test(port_lid_changes_reach_the_owner),
	};

	return cmocka_run_group_tests_name("mgmt/mad_agent+node", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The MAD layer of a node (mgmt/mad_agent.c) and the node itself
 * (mgmt/node.c), with no HCA: agents register for a QP and a management
 * class and get exactly the MADs of both; port LID changes reach the
 * owner's port_event hook.
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

static bool cm_rx(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
		  const uint8_t *mad, const struct sib_endpoint *from)
{
	(void)node, (void)port_num, (void)a, (void)mad, (void)from;
	got_cm++;
	return true;
}

/* Takes responses only, as the SA client does. */
static bool sa_rx(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
		  const uint8_t *mad, const struct sib_endpoint *from)
{
	(void)node, (void)port_num, (void)a, (void)from;
	got_sa++;
	return mad[3] & IB_MAD_METHOD_RESP;
}

static const struct sib_mad_agent cm_agent = { "CM", 1, IB_MGMT_CLASS_CM, cm_rx };
static const struct sib_mad_agent sa_agent = { "SA", 1, IB_MGMT_CLASS_SUBN_ADM, sa_rx };

static bool deliver(struct sib_node *node, uint32_t qp, uint8_t mclass, uint8_t method)
{
	uint8_t mad[IB_MAD_BYTES] = { IB_MAD_BASE_VERSION, mclass, 2, method };
	struct sib_mad_addr a;
	struct sib_endpoint from = { 0 };

	sib_mad_addr_init(&a, qp, 2, 3);
	return sib_mad_agent_deliver(node, 1, &a, mad, &from);
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
	/* An agent may decline: the caller counts the MAD as unclaimed. */
	assert_false(deliver(&node, 1, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_GET));
	assert_true(deliver(&node, 1, IB_MGMT_CLASS_SUBN_ADM, IB_MAD_METHOD_GET_RESP));
	assert_int_equal(got_sa, 2);
	assert_false(deliver(&node, 1, IB_MGMT_CLASS_PERF, IB_MAD_METHOD_GET));

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
		cmocka_unit_test(port_lid_changes_reach_the_owner),
	};

	return cmocka_run_group_tests_name("mgmt/mad_agent+node", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* transport/hca and transport/port: GUIDs, GIDs, LIDs, the per-process HCA
 * lifetime and port events; the polling lease of transport/progress. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/hca.h"
#include "transport/link.h"

static void guid_from_random_is_locally_administered_unicast(void **state)
{
	static const uint64_t inputs[] = { 0, ~0ull, 0x0123456789abcdefull, 0x0100000000000000ull };

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		uint64_t g = sib_guid_from_random(inputs[i]);

		assert_int_equal((g >> 56) & 0x02, 0x02); /* U/L: locally administered */
		assert_int_equal((g >> 56) & 0x01, 0);    /* I/G: not a group address */
		assert_int_equal(g & 0xf, 0);             /* room for port numbers */
		assert_true((g & 0x00fffffffffffff0ull) != 0);
	}
}

static void guid_format_matches_ibv_devinfo(void **state)
{
	char buf[20];

	(void)state;
	sib_guid_format(0x0123456789abcdefull, buf);
	assert_string_equal(buf, "0123:4567:89ab:cdef");
	sib_guid_format(0x0200000000000010ull, buf);
	assert_string_equal(buf, "0200:0000:0000:0010");
}

static void gid_format_is_eight_groups(void **state)
{
	const uint8_t gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x71 };
	char buf[40];

	(void)state;
	sib_gid_format(gid, buf);
	assert_string_equal(buf, "fe80:0000:0000:0000:0211:2233:4455:6671");
}

static void port_init_sets_default_gid_and_pkey(void **state)
{
	struct sib_port port;
	uint8_t gid[16];
	uint16_t pkey;
	const uint8_t want[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				   0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01 };

	(void)state;
	sib_port_init(&port, 1, 0x02aabbccddeeff01ull);
	assert_int_equal(port.state, SIB_PORT_DOWN);
	assert_int_equal(port.LID, 0);
	assert_int_equal(sib_port_gid(&port, 0, gid), 0);
	assert_memory_equal(gid, want, 16);
	assert_int_equal(sib_port_pkey(&port, 0, &pkey), 0);
	assert_int_equal(pkey, 0xffff);
	assert_int_equal(sib_mtu_bytes(port.active_mtu), 4096);
}

static void port_tables_reject_out_of_range_indices(void **state)
{
	struct sib_port port;
	uint8_t gid[16];
	uint16_t pkey;

	(void)state;
	sib_port_init(&port, 1, 0x0200000000000011ull);
	assert_int_equal(sib_port_gid(&port, SIB_GID_TBL_LEN, gid), -1);
	assert_int_equal(sib_port_gid(&port, ~0u, gid), -1);
	assert_int_equal(sib_port_pkey(&port, SIB_MAX_PKEYS, &pkey), -1);
	assert_int_equal(sib_mtu_bytes((enum sib_mtu)0), 0);
	assert_int_equal(sib_mtu_bytes((enum sib_mtu)6), 0);
	assert_int_equal(sib_mtu_bytes(SIB_MTU_256), 256);
}

static void set_lid_activates_once_and_rejects_reserved_lids(void **state)
{
	struct sib_port port;

	(void)state;
	sib_port_init(&port, 1, 0x0200000000000011ull);
	assert_false(sib_port_set_lid(&port, 0, 1));      /* LID 0 is reserved */
	assert_false(sib_port_set_lid(&port, 0xc000, 1)); /* multicast range */
	assert_int_equal(port.state, SIB_PORT_DOWN);
	assert_true(sib_port_set_lid(&port, 7, 1));
	assert_int_equal(port.state, SIB_PORT_ACTIVE);
	assert_int_equal(port.LID, 7);
	assert_false(sib_port_set_lid(&port, 8, 1)); /* already active: no new PORT_ACTIVE */
	assert_int_equal(port.LID, 8);
}

static void local_lid_is_unicast_for_every_pid(void **state)
{
	static const pid_t pids[] = { 0, 1, 0xbffe, 0xbfff, 0xc000, 4194304, 2147483647 };

	(void)state;
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		uint16_t lid = sib_port_local_lid(pids[i]);

		assert_true(lid >= 1 && lid <= 0xbfff);
	}
	assert_int_not_equal(sib_port_local_lid(100), sib_port_local_lid(101));
}

static void hca_is_shared_until_the_last_put(void **state)
{
	struct sib_hca *a, *b, *c;

	(void)state;
	a = sib_hca_get();
	assert_non_null(a);
	b = sib_hca_get();
	assert_ptr_equal(a, b);
	assert_int_equal(a->refcnt, 2);
	assert_int_equal(a->node_guid, sib_node_guid());
	assert_int_equal(a->ports[0].port_guid, a->node_guid + 1);
	assert_int_equal(a->ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(a->ports[0].LID, sib_port_local_lid(getpid()));
	sib_hca_put(b);
	assert_int_equal(a->refcnt, 1);
	sib_hca_put(a);
	/* A new HCA after the last close: same node (GUID), fresh state. */
	c = sib_hca_get();
	assert_non_null(c);
	assert_int_equal(c->refcnt, 1);
	assert_int_equal(c->node_guid, sib_node_guid());
	sib_hca_put(c);
}

static void hca_port_lookup_rejects_bad_ports(void **state)
{
	struct sib_hca *hca = sib_hca_get();

	(void)state;
	assert_null(sib_hca_port(hca, 0));
	assert_null(sib_hca_port(hca, SIB_NUM_PORTS + 1));
	assert_non_null(sib_hca_port(hca, 1));
	assert_null(sib_hca_port(NULL, 1));
	sib_hca_put(hca);
}

struct recorder {
	struct sib_event_sink sink;
	int n;
	enum sib_event last;
	unsigned port;
};

static void record(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port)
{
	struct recorder *r = (struct recorder *)sink;

	(void)obj;
	r->n++;
	r->last = ev;
	r->port = port;
}

static void lid_change_reaches_every_listener_until_unlisten(void **state)
{
	struct sib_hca *hca = sib_hca_get();
	struct recorder r1 = { .sink.deliver = record }, r2 = { .sink.deliver = record };
	struct sib_hca_listener l1, l2;
	uint16_t lid = hca->ports[0].LID;

	(void)state;
	sib_hca_listen(hca, &l1, &r1.sink);
	sib_hca_listen(hca, &l2, &r2.sink);
	sib_hca_port_set_lid(hca, 1, (uint16_t)(lid % 0xbffe + 1), 1);
	assert_int_equal(r1.n, 1);
	assert_int_equal(r1.last, SIB_EV_LID_CHANGE);
	assert_int_equal(r1.port, 1);
	assert_int_equal(r2.n, 1);
	sib_hca_unlisten(hca, &l1);
	sib_hca_port_set_lid(hca, 1, lid, 1);
	assert_int_equal(r1.n, 1);
	assert_int_equal(r2.n, 2);
	sib_hca_port_set_lid(hca, 1, lid, 1); /* same LID: no event */
	assert_int_equal(r2.n, 2);
	sib_hca_unlisten(hca, &l2);
	sib_hca_put(hca);
}

static void first_lid_raises_port_active(void **state)
{
	struct sib_hca *hca = sib_hca_get();
	struct recorder r = { .sink.deliver = record };
	struct sib_hca_listener l;

	(void)state;
	/* Model a port that loses its LID and gets one again from the SM. */
	hca->ports[0].state = SIB_PORT_DOWN;
	sib_hca_listen(hca, &l, &r.sink);
	sib_hca_port_set_lid(hca, 1, 5, 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.last, SIB_EV_PORT_ACTIVE);
	sib_hca_port_set_lid(hca, 9, 5, 1); /* no such port: nothing */
	assert_int_equal(r.n, 1);
	sib_hca_unlisten(hca, &l);
	sib_hca_put(hca);
}

static void pd_numbers_are_unique_and_nonzero(void **state)
{
	struct sib_hca *hca = sib_hca_get();
	uint32_t a = sib_hca_alloc_pdn(hca), b = sib_hca_alloc_pdn(hca);

	(void)state;
	assert_int_not_equal(a, 0);
	assert_int_not_equal(b, 0);
	assert_int_not_equal(a, b);
	sib_hca_put(hca);
}

static uint64_t lease_end(struct sib_hca *h)
{
	return __atomic_load_n(&h->progress.busy_until_ns, __ATOMIC_RELAXED);
}

/* progress.h: a poll that found completions holds the lease as an empty
 * one does; the poll of a thread that armed its CQ (about to sleep) holds
 * none, and drain_end gives the lease back. */
static void polls_hold_the_lease_unless_the_poller_is_about_to_sleep(void **state)
{
	struct sib_hca *h = sib_hca_get();
	uint64_t before;

	(void)state;
	assert_non_null(h);
	sib_progress_drain_end(h);
	assert_int_equal(lease_end(h), 0);
	sib_progress_drain(h, false);
	assert_int_equal(lease_end(h), 0);

	before = sib_link_now_ns();
	sib_progress_touch(h);
	assert_true(lease_end(h) > before);
	sib_progress_drain_end(h);
	assert_int_equal(lease_end(h), 0);

	before = sib_link_now_ns();
	sib_progress_drain(h, true);
	assert_true(lease_end(h) > before);
	sib_progress_drain_end(h);
	sib_hca_put(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guid_from_random_is_locally_administered_unicast),
		cmocka_unit_test(guid_format_matches_ibv_devinfo),
		cmocka_unit_test(gid_format_is_eight_groups),
		cmocka_unit_test(port_init_sets_default_gid_and_pkey),
		cmocka_unit_test(port_tables_reject_out_of_range_indices),
		cmocka_unit_test(set_lid_activates_once_and_rejects_reserved_lids),
		cmocka_unit_test(local_lid_is_unicast_for_every_pid),
		cmocka_unit_test(hca_is_shared_until_the_last_put),
		cmocka_unit_test(hca_port_lookup_rejects_bad_ports),
		cmocka_unit_test(lid_change_reaches_every_listener_until_unlisten),
		cmocka_unit_test(first_lid_raises_port_active),
		cmocka_unit_test(pd_numbers_are_unique_and_nonzero),
		cmocka_unit_test(polls_hold_the_lease_unless_the_poller_is_about_to_sleep),
	};

	/* The HCA object alone: no subnet manager (tests/unit/test_sm.c has
	 * those), so the port is a subnet of one, ACTIVE with its local LID. */
	setenv("SOFTIB_SM", "none", 1);
	return cmocka_run_group_tests_name("transport/hca", tests, NULL, NULL);
}

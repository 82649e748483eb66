/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-switch's host (fabric/switch_host.h) over in-memory links: ports
 * attach as CAs of the topology with cable packets (wire/cable.h) and are
 * refused when the name is unknown or taken; a packet from an endpoint
 * that attached to nothing is dropped and counted; directed-route SMPs
 * from an attached port cross both hosted switches and come back; a port
 * that falls silent is detached and its switch port goes down; a subset
 * of the switches keeps its cables to the others down.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fabric/switch.c"
#include "fabric/switch_host.c"
#include "fabric/topology.c"
#include "mgmt/mad_packet.h"
#include "wire/cable.h"

static struct sib_mem_hub *hub;
static struct sib_link *host_link, *ca[3];
static struct sib_switch_host h;

static void start_host(const char *only)
{
	const char *top = getenv("SOFTIB_TOP");
	char path[512], err[256];
	struct sib_topo t;

	snprintf(path, sizeof(path), "%s/tests/fabric/two-switches-2-links.topo",
		 top ? top : ".");
	if (sib_topo_load(&t, path, err, sizeof(err)))
		fail_msg("%s", err);
	hub = sib_mem_hub_new();
	assert_non_null(hub);
	assert_int_equal(sib_link_mem_open(hub, 4096, &host_link), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sib_link_mem_open(hub, 4096, &ca[i]), 0);
	if (sib_switch_host_init(&h, &t, only, SIB_DATA_SWITCHED, host_link, err, sizeof(err)))
		fail_msg("%s", err);
}

static void stop_host(void)
{
	sib_switch_host_free(&h);
	sib_link_close(host_link);
	for (int i = 0; i < 3; i++)
		sib_link_close(ca[i]);
	sib_mem_hub_free(hub);
}

struct got {
	uint8_t pkt[IB_MAX_PACKET];
	size_t len;
	unsigned n;
};

static void take(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;

	(void)from;
	memcpy(g->pkt, pkt, len);
	g->len = len;
	g->n++;
}

/* Send from CA link i to the host, let the host work, and take what comes
 * back to i. */
static struct got exchange(int i, const uint8_t *pkt, size_t len)
{
	struct got g = { .n = 0 };

	sib_link_send(ca[i], pkt, len, &host_link->local);
	sib_link_flush(ca[i]);
	while (sib_link_poll(host_link, 64, sib_switch_host_rx, &h) > 0)
		sib_link_flush(host_link);
	sib_link_flush(host_link);
	while (sib_link_poll(ca[i], 64, take, &g) > 0)
		;
	return g;
}

static struct sib_cable_msg cable(int i, uint8_t type, const char *id)
{
	struct sib_cable_msg m = { .type = type }, back;
	uint8_t pkt[SIB_CABLE_BYTES];
	struct got g;

	snprintf(m.id, sizeof(m.id), "%s", id);
	g = exchange(i, pkt, sib_cable_encode(&m, pkt));
	memset(&back, 0, sizeof(back));
	if (g.n)
		assert_int_equal(sib_cable_decode(g.pkt, g.len, &back), 0);
	return back;
}

static void test_attach_by_name_and_refusals(void **state)
{
	struct sib_cable_msg m;
	int h1 = -1;

	(void)state;
	start_host(NULL);
	assert_int_equal(h.nsw, 2);
	assert_int_equal(h.nslots, 4);
	m = cable(0, SIB_CABLE_ATTACH, "H1");
	assert_int_equal(m.type, SIB_CABLE_ATTACHED);
	assert_string_equal(m.id, "H1");
	h1 = sib_topo_find(&h.topo, "H1");
	assert_true(m.node_guid == h.topo.node[h1].node_guid);
	assert_int_equal(m.port, 1);
	assert_int_equal(m.switch_port, 1);
	assert_int_equal(m.data_mode, SIB_DATA_SWITCHED);
	assert_int_equal(h.sw[0].port[1].pi.PortState, IB_PORT_STATE_INIT); /* the link is up */
	/* the same name from another port: taken; an unknown name */
	m = cable(1, SIB_CABLE_ATTACH, "H1");
	assert_int_equal(m.type, SIB_CABLE_REFUSED);
	assert_int_equal(m.reason, SIB_CABLE_TAKEN);
	m = cable(1, SIB_CABLE_ATTACH, "H9");
	assert_int_equal(m.reason, SIB_CABLE_NO_SUCH_NODE);
	/* no name: the next free CA */
	m = cable(1, SIB_CABLE_ATTACH, "");
	assert_int_equal(m.type, SIB_CABLE_ATTACHED);
	assert_string_equal(m.id, "H2");
	/* attaching again is answered the same */
	m = cable(0, SIB_CABLE_ATTACH, "H1");
	assert_int_equal(m.type, SIB_CABLE_ATTACHED);
	assert_int_equal(h.c.attached, 2);
	/* a keepalive from a port the switch does not know */
	m = cable(2, SIB_CABLE_KEEPALIVE, "");
	assert_int_equal(m.reason, SIB_CABLE_NOT_ATTACHED);
	/* goodbye: the link goes down */
	cable(1, SIB_CABLE_DETACH, "");
	assert_int_equal(h.sw[0].port[2].pi.PortState, IB_PORT_STATE_DOWN);
	assert_int_equal(h.c.refused, 3);
	stop_host();
}

static size_t node_info_request(uint8_t *pkt, const uint8_t *path, unsigned hops)
{
	uint8_t initial[IB_SMP_MAX_HOPS + 1] = { 0 };
	unsigned out;

	memcpy(&initial[1], path, hops);
	return sib_dr_smp_build(IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, initial, hops, NULL,
				0, 0, pkt, IB_MAX_PACKET, &out);
}

static void test_smps_cross_the_hosted_switches(void **state)
{
	const uint8_t to_s2[] = { 1, 7 };
	uint8_t pkt[IB_MAX_PACKET];
	struct ib_node_info ni;
	struct ib_dr_smp dr;
	struct ib_packet p;
	struct sib_mad_addr a;
	struct got g;
	size_t len;

	(void)state;
	start_host(NULL);
	/* before attaching, nothing passes */
	g = exchange(0, pkt, node_info_request(pkt, to_s2, 2));
	assert_int_equal(g.n, 0);
	assert_int_equal(h.c.rx_unattached, 1);
	assert_int_equal(cable(0, SIB_CABLE_ATTACH, "H1").type, SIB_CABLE_ATTACHED);
	g = exchange(0, pkt, node_info_request(pkt, to_s2, 2));
	assert_int_equal(g.n, 1);
	assert_int_equal(ib_packet_decode(g.pkt, g.len, &p), IB_PKT_OK);
	ib_dr_smp_decode(&dr, sib_mgmt_parse(&p, &a));
	ib_node_info_decode(&ni, dr.SMPData);
	assert_true(ni.NodeGUID == h.topo.node[sib_topo_find(&h.topo, "S2")].node_guid);
	assert_int_equal(ni.LocalPortNum, 7);
	assert_int_equal(dr.ReturnPath[1], 1);
	assert_int_equal(dr.ReturnPath[2], 7);
	/* a packet the decoder refuses (its ICRC) is counted, not carried */
	len = node_info_request(pkt, to_s2, 2);
	pkt[100] ^= 0x5a;
	g = exchange(0, pkt, len);
	assert_int_equal(g.n, 0);
	assert_int_equal(h.c.rx_malformed, 1);
	/* silent past SIB_CABLE_DEAD_MS: detached, its port down */
	sib_switch_host_tick(&h, sib_switch_host_now() + (SIB_CABLE_DEAD_MS + 1) * 1000000ull);
	assert_int_equal(h.c.dead, 1);
	assert_int_equal(h.sw[0].port[1].pi.PortState, IB_PORT_STATE_DOWN);
	g = exchange(0, pkt, node_info_request(pkt, to_s2, 2));
	assert_int_equal(g.n, 0);
	assert_int_equal(h.c.rx_unattached, 2);
	assert_int_equal(h.c.rx_late, 0); /* silent, then back: not late */
	/* after a goodbye, what is still on its way is late: counted apart */
	assert_int_equal(cable(0, SIB_CABLE_ATTACH, "H1").type, SIB_CABLE_ATTACHED);
	cable(0, SIB_CABLE_DETACH, "");
	g = exchange(0, pkt, node_info_request(pkt, to_s2, 2));
	assert_int_equal(g.n, 0);
	assert_int_equal(h.c.rx_late, 1);
	assert_int_equal(h.c.rx_unattached, 2);
	stop_host();
}

static void test_a_subset_of_the_switches(void **state)
{
	const uint8_t to_s2[] = { 1, 7 };
	uint8_t pkt[IB_MAX_PACKET];
	struct got g;

	(void)state;
	start_host("S1");
	assert_int_equal(h.nsw, 1);
	assert_int_equal(h.nslots, 2); /* H1 and H2; H3 and H4 are behind S2 */
	assert_int_equal(h.sw[0].port[7].pi.PortState, IB_PORT_STATE_DOWN);
	assert_int_equal(cable(0, SIB_CABLE_ATTACH, "H3").reason, SIB_CABLE_NO_SUCH_NODE);
	assert_int_equal(cable(0, SIB_CABLE_ATTACH, "H1").type, SIB_CABLE_ATTACHED);
	g = exchange(0, pkt, node_info_request(pkt, to_s2, 2));
	assert_int_equal(g.n, 0);
	assert_int_equal(h.sw[0].drops[SIB_DROP_PORT_STATE], 1);
	stop_host();
	{
		struct sib_topo t;
		char err[256];

		assert_int_equal(sib_topo_parse(&t, "Switch 2 \"S\"\n", "x", NULL, err, sizeof(err)),
				 0);
		assert_int_equal(sib_switch_host_init(&h, &t, "T", SIB_DATA_DIRECT, NULL, err,
						      sizeof(err)),
				 -1);
		assert_non_null(strstr(err, "no switch named in T"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_by_name_and_refusals),
		cmocka_unit_test(test_smps_cross_the_hosted_switches),
		cmocka_unit_test(test_a_subset_of_the_switches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

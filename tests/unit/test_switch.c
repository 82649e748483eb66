/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Switches (fabric/switch.h) in a fabric of two, cabled by a topology file,
 * with the test as every cable: a subnet manager at H1 discovers them with
 * directed-route SMPs, programs their LinearForwardingTable and
 * MulticastForwardingTable and port states, and data then crosses them
 * by LID and MLID.  What a switch must refuse it drops and counts, a CA
 * that claims another's LID among it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fabric/switch.c"
#include "fabric/topology.c"
#include "mgmt/mad_packet.h"
#include "wire/perfmgt.h"

#include "fabric_world.h"

/*   H1 -[1] S1 [3]=[3] S2 [1]- H3
 *   H2 -[2] S1 [4]=[4] S2 [2]- H4     */
static const char fabric_text[] = "Switch 4 \"S1\"\n"
				  "[1] \"H1\"[1]\n[2] \"H2\"[1]\n[3] \"S2\"[3]\n[4] \"S2\"[4]\n"
				  "\n"
				  "Switch 4 \"S2\"\n"
				  "[1] \"H3\"[1]\n[2] \"H4\"[1]\n"
				  "\n"
				  "Hca 1 \"H1\"\n\nHca 1 \"H2\"\n\nHca 1 \"H3\"\n\nHca 1 \"H4\"\n";

static struct world w;

static int setup(void **state)
{
	(void)state;
	world_init(&w, NULL, fabric_text);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	world_free(&w);
	return 0;
}

static int node(const char *id)
{
	return world_node(&w, id);
}

static int carry(int from, unsigned port, uint8_t *pkt, size_t *len)
{
	return world_carry(&w, from, port, pkt, len);
}

/* A DR SMP from H1 and the response H1 gets back. */
static bool ask(const uint8_t *path, unsigned hops, uint8_t method, uint16_t attr, uint32_t mod,
		const uint8_t *data, uint64_t m_key, struct ib_dr_smp *resp)
{
	return world_dr(&w, node("H1"), path, hops, method, attr, mod, data, m_key, resp);
}

static void test_discovery_by_directed_route(void **state)
{
	const uint8_t to_s1[] = { 1 }, to_s2[] = { 1, 3 }, to_s2_other[] = { 1, 4 };
	struct ib_dr_smp r;
	struct ib_node_info ni;
	struct ib_node_description nd;
	struct ib_switch_info si;
	struct ib_port_info pi;

	(void)state;
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, 0, &r));
	assert_int_equal(r.Status, 0);
	ib_node_info_decode(&ni, r.SMPData);
	assert_int_equal(ni.NodeType, IB_NODE_TYPE_SWITCH);
	assert_int_equal(ni.NumPorts, 4);
	assert_int_equal(ni.LocalPortNum, 1); /* H1 is on S1's port 1 */
	assert_true(ni.NodeGUID == w.topo.node[node("S1")].node_guid);
	assert_int_equal(r.ReturnPath[1], 1);

	/* two hops: S2, reached by S1's port 3, answers that it was entered by 3 */
	assert_true(ask(to_s2, 2, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, 0, &r));
	ib_node_info_decode(&ni, r.SMPData);
	assert_true(ni.NodeGUID == w.topo.node[node("S2")].node_guid);
	assert_int_equal(ni.LocalPortNum, 3);
	assert_int_equal(r.ReturnPath[1], 1);
	assert_int_equal(r.ReturnPath[2], 3);
	assert_true(ask(to_s2_other, 2, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, 0, &r));
	ib_node_info_decode(&ni, r.SMPData);
	assert_int_equal(ni.LocalPortNum, 4);

	assert_true(ask(to_s2, 2, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_DESCRIPTION, 0, NULL, 0, &r));
	ib_node_description_decode(&nd, r.SMPData);
	assert_string_equal((const char *)nd.NodeString, "S2");
	assert_true(ask(to_s2, 2, IB_MAD_METHOD_GET, IB_SMP_ATTR_SWITCH_INFO, 0, NULL, 0, &r));
	ib_switch_info_decode(&si, r.SMPData);
	assert_int_equal(si.LinearFDBCap, SIB_SWITCH_LFT_CAP);
	assert_int_equal(si.PortStateChange, 1); /* its links came up */
	/* PortInfo of each port: cabled ones in Init, the rest Down */
	assert_true(ask(to_s2, 2, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 1, NULL, 0, &r));
	ib_port_info_decode(&pi, r.SMPData);
	assert_int_equal(pi.PortState, IB_PORT_STATE_INIT);
	assert_int_equal(pi.PortPhysicalState, IB_PORT_PHYS_LINK_UP);
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 5, NULL, 0, &r));
	assert_int_equal(r.Status, IB_MAD_STATUS_INVALID_FIELD); /* S1 has 4 ports */
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_SM_INFO, 0, NULL, 0, &r));
	assert_int_equal(r.Status, IB_MAD_STATUS_UNSUP_METHOD_ATTR);
}

static void set_port_state(const uint8_t *path, unsigned hops, unsigned port, uint8_t state)
{
	struct ib_port_info pi;
	struct ib_dr_smp r;
	uint8_t data[IB_SMP_DATA_BYTES];

	memset(&pi, 0, sizeof(pi));
	pi.PortState = state;
	ib_port_info_encode(&pi, data);
	assert_true(ask(path, hops, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, port, data, 0, &r));
	assert_int_equal(r.Status, 0);
}

static void program(const uint8_t *path, unsigned hops, uint16_t lid, const uint8_t ports[8])
{
	struct ib_lft_block b;
	struct ib_switch_info si;
	struct ib_port_info pi;
	struct ib_dr_smp r;
	uint8_t data[IB_SMP_DATA_BYTES];

	memset(&pi, 0, sizeof(pi));
	pi.LID = lid;
	ib_port_info_encode(&pi, data);
	assert_true(ask(path, hops, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, 0, &r));
	memset(b.Port, IB_LFT_PORT_NONE, sizeof(b.Port));
	memcpy(b.Port, ports, 8);
	ib_lft_block_encode(&b, data);
	assert_true(ask(path, hops, IB_MAD_METHOD_SET, IB_SMP_ATTR_LINEAR_FORWARDING_TABLE, 0, data,
			0, &r));
	assert_int_equal(r.Status, 0);
	memset(&si, 0, sizeof(si));
	si.LinearFDBTop = 7;
	si.PortStateChange = 1;
	si.LifeTimeValue = SIB_SWITCH_LIFETIME;
	si.MulticastFDBTop = 0xc000;
	ib_switch_info_encode(&si, data);
	assert_true(ask(path, hops, IB_MAD_METHOD_SET, IB_SMP_ATTR_SWITCH_INFO, 0, data, 0, &r));
	assert_int_equal(r.Status, 0);
	ib_switch_info_decode(&si, r.SMPData);
	assert_int_equal(si.PortStateChange, 0); /* the SM's 1 cleared it */
	assert_int_equal(si.LinearFDBTop, 7);
}

/* A UD SEND from CA `from` (LID slid) to dlid. */
static size_t data_packet(uint8_t *buf, uint16_t dlid, uint16_t slid)
{
	struct sib_mad_addr a;
	uint8_t payload[IB_MAD_BYTES];

	memset(payload, 0x5a, sizeof(payload));
	sib_mad_addr_init(&a, SIB_QP1, dlid, slid); /* QP1 on VL0: data as far as a switch cares */
	return sib_mgmt_build(&a, payload, buf, IB_MAX_PACKET);
}

static void test_routes_by_lid_once_programmed(void **state)
{
	const uint8_t to_s1[] = { 1 }, to_s2[] = { 1, 3 };
	/* LIDs: H1 1, H2 2, H3 3, H4 4, S1 5, S2 6 */
	const uint8_t lft_s1[8] = { 0xff, 1, 2, 3, 4, 0, 3, 0xff };
	const uint8_t lft_s2[8] = { 0xff, 3, 3, 1, 2, 3, 0, 0xff };
	uint8_t pkt[IB_MAX_PACKET];
	size_t len;

	(void)state;
	program(to_s1, 1, 5, lft_s1);
	program(to_s2, 2, 6, lft_s2);

	/* links still in Init: data is refused at the first switch */
	len = data_packet(pkt, 3, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[0].drops[SIB_DROP_PORT_STATE], 1);
	/* Active skips Armed: refused (IBA 14.2.5.6) */
	{
		struct ib_port_info pi;
		struct ib_dr_smp r;
		uint8_t data[IB_SMP_DATA_BYTES];

		memset(&pi, 0, sizeof(pi));
		pi.PortState = IB_PORT_STATE_ACTIVE;
		ib_port_info_encode(&pi, data);
		assert_true(ask(to_s1, 1, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 1, data, 0, &r));
		assert_int_equal(r.Status, IB_MAD_STATUS_INVALID_FIELD);
	}
	for (unsigned p = 1; p <= 4; p++) {
		set_port_state(to_s1, 1, p, IB_PORT_STATE_ARMED);
		set_port_state(to_s1, 1, p, IB_PORT_STATE_ACTIVE);
		set_port_state(to_s2, 2, p, IB_PORT_STATE_ARMED);
		if (p != 1) /* S2's port to H3 stays Armed */
			set_port_state(to_s2, 2, p, IB_PORT_STATE_ACTIVE);
	}
	/* Nothing but VL15 leaves an Armed port ... */
	len = data_packet(pkt, 3, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[1].drops[SIB_DROP_PORT_STATE], 1);
	/* ... until a data packet from H3 (Active) comes in by it: IBA 7.2,
	 * Armed goes Active */
	len = data_packet(pkt, 1, 3);
	assert_int_equal(carry(node("H3"), 1, pkt, &len), node("H1"));
	assert_int_equal(w.sw[1].port[1].pi.PortState, IB_PORT_STATE_ACTIVE);
	len = data_packet(pkt, 3, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), node("H3"));
	len = data_packet(pkt, 2, 4);
	assert_int_equal(carry(node("H4"), 1, pkt, &len), node("H2"));
	assert_true(w.sw[1].port[2].pc.PortRcvPkts >= 1);
	assert_true(w.sw[0].port[2].pc.PortXmitPkts >= 1);

	/* LID 7 has no entry; the relay error counts on the input port */
	len = data_packet(pkt, 7, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[0].drops[SIB_DROP_NO_ROUTE], 1);
	assert_int_equal(w.sw[0].port[1].pc.PortRcvSwitchRelayErrors, 2);
	/* H2 claims H1's LID: the edge check drops it where it entered */
	len = data_packet(pkt, 3, 1);
	assert_int_equal(carry(node("H2"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[0].drops[SIB_DROP_SLID], 1);
	/* the permissive SLID only on a directed-route SMP */
	len = data_packet(pkt, 3, 0xffff);
	assert_int_equal(carry(node("H2"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[0].drops[SIB_DROP_SLID], 2);
	/* back out the port it came in by */
	len = data_packet(pkt, 1, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[0].drops[SIB_DROP_LOOP], 1);

	/* PortCounters of S2's port 2 by LID, from H4 */
	{
		struct sib_mad_addr a;
		struct ib_mad_hdr h;
		struct ib_port_counters pc;
		uint8_t mad[IB_MAD_BYTES];
		struct ib_packet p;
		const uint8_t *resp;

		memset(mad, 0, sizeof(mad));
		memset(&h, 0, sizeof(h));
		h.BaseVersion = 1;
		h.MgmtClass = IB_MGMT_CLASS_PERF;
		h.ClassVersion = 1;
		h.Method = IB_MAD_METHOD_GET;
		h.AttributeID = IB_PERF_ATTR_PORT_COUNTERS;
		ib_mad_hdr_encode(&h, mad);
		memset(&pc, 0, sizeof(pc));
		pc.PortSelect = 2;
		ib_port_counters_encode(&pc, mad + IB_PERF_DATA_OFFSET);
		sib_mad_addr_init(&a, SIB_QP1, 6, 4);
		len = sib_mgmt_build(&a, mad, pkt, sizeof(pkt));
		assert_int_equal(carry(node("H4"), 1, pkt, &len), node("H4"));
		assert_int_equal(ib_packet_decode(pkt, len, &p), IB_PKT_OK);
		resp = sib_mgmt_parse(&p, &a);
		assert_int_equal(a.SLID, 6);
		ib_port_counters_decode(&pc, resp + IB_PERF_DATA_OFFSET);
		assert_int_equal(pc.PortSelect, 2);
		assert_true(pc.PortRcvPkts >= 2); /* the data and this request */

		/* PortCountersExtended of that port, then of all (0xff):
		 * 64 bits, unicast and multicast apart (perfquery -x). */
		for (unsigned sel = 2; sel <= 0xff; sel += 0xff - 2) {
			struct ib_port_counters_ext x;

			h.AttributeID = IB_PERF_ATTR_PORT_COUNTERS_EXT;
			ib_mad_hdr_encode(&h, mad);
			memset(&x, 0, sizeof(x));
			x.PortSelect = (uint8_t)sel;
			ib_port_counters_ext_encode(&x, mad + IB_PERF_DATA_OFFSET);
			sib_mad_addr_init(&a, SIB_QP1, 6, 4);
			len = sib_mgmt_build(&a, mad, pkt, sizeof(pkt));
			assert_int_equal(carry(node("H4"), 1, pkt, &len), node("H4"));
			assert_int_equal(ib_packet_decode(pkt, len, &p), IB_PKT_OK);
			resp = sib_mgmt_parse(&p, &a);
			assert_int_equal(ib_bits_get(resp, 32, 16), 0); /* Status */
			ib_port_counters_ext_decode(&x, resp + IB_PERF_DATA_OFFSET);
			assert_int_equal(x.PortSelect, sel);
			assert_true(x.PortRcvPkts >= (sel == 2 ? 3u : 4u));
			assert_int_equal(x.PortUnicastRcvPkts, x.PortRcvPkts);
			assert_int_equal(x.PortMulticastRcvPkts, 0);
			assert_true(x.PortRcvData >= x.PortRcvPkts * 6); /* words: LRH+BTH and more */
		}
	}
	/* SLtoVLMappingTable by (input port, output port), kept as set */
	{
		uint8_t t[IB_SMP_DATA_BYTES] = { 0, 0, 0, 0, 0, 0, 0, 0x0f };
		struct ib_dr_smp r;

		assert_true(ask(to_s1, 1, IB_MAD_METHOD_SET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE,
				1 << 8 | 3, t, 0, &r));
		assert_int_equal(r.Status, 0);
		assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE,
				2 << 8 | 3, NULL, 0, &r));
		assert_int_equal(r.Status, 0);
		assert_memory_equal(r.SMPData, t, IB_SL2VL_BYTES);
		assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE,
				1 << 8 | 9, NULL, 0, &r));
		assert_int_equal(r.Status, IB_MAD_STATUS_INVALID_FIELD);
	}
}

static void test_multicast_by_mft(void **state)
{
	const uint8_t to_s1[] = { 1 };
	struct ib_mft_block b;
	struct ib_dr_smp r;
	struct ib_packet p;
	struct sib_switch_out out;
	uint8_t data[IB_SMP_DATA_BYTES], pkt[IB_MAX_PACKET], buf[IB_MAX_PACKET];
	size_t len;

	(void)state;
	/* MLID 0xc000 on S1's ports 1, 2 and 3 */
	memset(&b, 0, sizeof(b));
	b.PortMask[0] = 1u << 1 | 1u << 2 | 1u << 3;
	ib_mft_block_encode(&b, data);
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_SET, IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE, 0, data,
			0, &r));
	assert_int_equal(r.Status, 0);
	/* Position 1 would be ports 16..31: S1 has none */
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_SET, IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE,
			0x10000000, data, 0, &r));
	assert_int_equal(r.Status, IB_MAD_STATUS_INVALID_FIELD);

	len = data_packet(pkt, 0xc000, 1);
	assert_int_equal(ib_packet_decode(pkt, len, &p), IB_PKT_OK);
	sib_switch_route(&w.sw[0], 1, &p, len, buf, &out);
	assert_int_equal(out.nports, 2); /* not back to port 1 */
	assert_int_equal(out.port[0], 2);
	assert_int_equal(out.port[1], 3);
	len = data_packet(pkt, 0xc001, 1);
	assert_int_equal(ib_packet_decode(pkt, len, &p), IB_PKT_OK);
	sib_switch_route(&w.sw[0], 1, &p, len, buf, &out);
	assert_int_equal(out.nports, 0); /* past MulticastFDBTop */
}

static void test_port0_m_key(void **state)
{
	const uint8_t to_s1[] = { 1 };
	struct ib_port_info pi;
	struct ib_dr_smp r;
	uint8_t data[IB_SMP_DATA_BYTES];
	uint64_t before = w.sw[0].drops[SIB_DROP_M_KEY];

	(void)state;
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, 0, &r));
	ib_port_info_decode(&pi, r.SMPData);
	pi.M_Key = 0x1122334455667788ull;
	pi.M_KeyProtectBits = 2;
	pi.PortState = 0;
	ib_port_info_encode(&pi, data);
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, 0, &r));
	assert_int_equal(r.Status, 0);
	/* protection 2: a Get without the key goes unanswered and counts */
	assert_false(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, 0, &r));
	assert_int_equal(w.sw[0].drops[SIB_DROP_M_KEY], before + 1);
	assert_int_equal(w.sw[0].port[0].pi.M_KeyViolations, 1);
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL,
			0x1122334455667788ull, &r));
	assert_int_equal(r.Status, 0);
	/* the key is not readable through another port's PortInfo */
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 2, NULL,
			0x1122334455667788ull, &r));
	ib_port_info_decode(&pi, r.SMPData);
	assert_true(pi.M_Key == 0);
	/* back to no key, for the tests after */
	w.sw[0].port[0].pi.M_Key = 0;
	w.sw[0].port[0].pi.M_KeyProtectBits = 0;
}

static void test_bad_directed_routes_are_dropped(void **state)
{
	const uint8_t beyond[] = { 1, 9 }, down[] = { 1, 4, 4 };
	uint8_t pkt[IB_MAX_PACKET];
	size_t len;
	uint64_t before = w.sw[0].drops[SIB_DROP_DR];

	(void)state;
	/* InitialPath[2] = 9 on a 4-port switch: C14-9:2 */
	len = world_dr_smp(pkt, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, beyond, 2, NULL, 0, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), -1);
	assert_int_equal(w.sw[0].drops[SIB_DROP_DR], before + 1);
	assert_non_null(strstr(w.sw[0].last_drop, "C14-9:2"));
	/* S1's port 4 leads to S2, whose port 4 leads back to S1: a path
	 * may cross a node twice, and this one ends at S1 */
	len = world_dr_smp(pkt, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, down, 3, NULL, 0, 1);
	assert_int_equal(carry(node("H1"), 1, pkt, &len), node("H1"));
	/* a link goes down: its SMPs are dropped where it starts */
	sib_switch_link(&w.sw[1], 1, false);
	{
		const uint8_t to_h3[] = { 1, 3, 1 };
		uint64_t port_state_drops = w.sw[1].drops[SIB_DROP_PORT_STATE];

		len = world_dr_smp(pkt, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, to_h3, 3, NULL,
				   0, 1);
		assert_int_equal(carry(node("H1"), 1, pkt, &len), -1);
		assert_int_equal(w.sw[1].drops[SIB_DROP_PORT_STATE], port_state_drops + 1);
		assert_int_equal(w.sw[1].port[1].pc.LinkDownedCounter, 1);
	}
}

/* Trap 128 once the switch knows its LID and its SM: every second until
 * the SM represses it. */
static void test_trap_128_until_repressed(void **state)
{
	const uint8_t to_s1[] = { 1 };
	struct ib_port_info pi;
	struct ib_dr_smp r;
	struct sib_switch_out out;
	struct ib_packet p;
	struct sib_mad_addr a;
	struct ib_smp smp;
	struct ib_notice n;
	uint8_t data[IB_SMP_DATA_BYTES], buf[IB_MAX_PACKET], mad[IB_MAD_BYTES];
	size_t len;

	(void)state;
	/* S1 learns its SM is LID 1 (H1) */
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, 0, &r));
	ib_port_info_decode(&pi, r.SMPData);
	pi.MasterSMLID = 1;
	ib_port_info_encode(&pi, data);
	assert_true(ask(to_s1, 1, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, 0, &r));
	w.sw[0].si.PortStateChange = 0;
	assert_false(sib_switch_trap(&w.sw[0], 10000000000ull, buf, &out)); /* nothing changed */
	sib_switch_link(&w.sw[0], 2, false); /* H2's cable */
	assert_true(sib_switch_trap(&w.sw[0], 10000000000ull, buf, &out));
	assert_int_equal(out.nports, 1);
	assert_int_equal(out.port[0], 1); /* toward H1 */
	assert_int_equal(ib_packet_decode(buf, out.len, &p), IB_PKT_OK);
	ib_smp_decode(&smp, sib_mgmt_parse(&p, &a));
	assert_int_equal(a.DLID, 1);
	assert_int_equal(a.SLID, w.sw[0].port[0].pi.LID);
	assert_int_equal(ib_mad_method(&smp.hdr), IB_MAD_METHOD_TRAP);
	ib_notice_decode(&n, smp.SMPData);
	assert_int_equal(n.TrapNumber, 128);
	assert_int_equal(n.IssuerLID, w.sw[0].port[0].pi.LID);
	/* not again within a second; again after it */
	assert_false(sib_switch_trap(&w.sw[0], 10500000000ull, buf, &out));
	assert_true(sib_switch_trap(&w.sw[0], 11100000000ull, buf, &out));
	/* the SM represses it: no more */
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP_REPRESS);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, w.sw[0].port[0].pi.LID, 1);
	len = sib_mgmt_build(&a, mad, buf, sizeof(buf));
	assert_int_equal(carry(node("H1"), 1, buf, &len), -1); /* no answer to a TrapRepress */
	assert_false(sib_switch_trap(&w.sw[0], 20000000000ull, buf, &out));
	assert_int_equal(w.sw[0].traps_sent, 2);
	sib_switch_link(&w.sw[0], 2, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovery_by_directed_route),
		cmocka_unit_test(test_routes_by_lid_once_programmed),
		cmocka_unit_test(test_multicast_by_mft),
		cmocka_unit_test(test_port0_m_key),
		cmocka_unit_test(test_bad_directed_routes_are_dropped),
		cmocka_unit_test(test_trap_128_until_repressed),
	};

	/* the tests follow one another on one fabric, as an SM's work does */
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The port's subnet management agent (mgmt/sma.c), QP0/QP1 framing
 * (mgmt/mad_packet.c) and the progress engine's dispatch and timers
 * (hca/progress.c), over the in-memory link.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hca/hca.h"
#include "mgmt/mad_packet.h"
#include "mgmt/port_up.h"
#include "hca/progress.h"
#include "mgmt/perf_agent.h"
#include "mgmt/sma.h"
#include "wire/perfmgt.h"
#include "wire/smp.h"

struct fixture {
	struct sib_mem_hub *hub;
	struct sib_link *sm_link; /* stands in for the SM */
	struct sib_hca *hca;
};

static int setup(void **state)
{
	static struct fixture f;
	struct sib_link *port_link;
	char sm[SIB_ENDPOINT_STRLEN];
	struct sib_hca_opts o = { 0 };

	memset(&f, 0, sizeof(f));
	f.hub = sib_mem_hub_new();
	assert_non_null(f.hub);
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.sm_link), 0);
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &port_link), 0);
	sib_endpoint_str(&f.sm_link->local, sm);
	o.link = port_link;
	o.sm = sm;
	o.no_thread = true;
	o.no_bringup_wait = true;
	o.no_spawn = true;
	o.node_guid = 0x0212340000000010ull;
	f.hca = sib_hca_new(&o);
	assert_non_null(f.hca);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sib_hca_free(f->hca);
	sib_link_close(f->sm_link);
	sib_mem_hub_free(f->hub);
	return 0;
}

static void lid_smp(uint8_t *mad, uint8_t method, uint16_t attr, uint32_t mod,
		    const uint8_t *data)
{
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	smp.hdr.BaseVersion = 1;
	smp.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp.hdr.ClassVersion = 1;
	ib_mad_set_method(&smp.hdr, method);
	smp.hdr.TransactionID = 0x1122334455667788ull;
	smp.hdr.AttributeID = attr;
	smp.hdr.AttributeModifier = mod;
	if (data)
		memcpy(smp.SMPData, data, IB_SMP_DATA_BYTES);
	ib_smp_encode(&smp, mad);
}

/* Runs a LID-routed SMP through the SMA; returns the response's status. */
static uint16_t sma(struct sib_hca *hca, uint8_t method, uint16_t attr, uint32_t mod,
		    const uint8_t *data, struct ib_smp *resp)
{
	uint8_t in[IB_MAD_BYTES], out[IB_MAD_BYTES];

	lid_smp(in, method, attr, mod, data);
	assert_true(sib_sma_process(&hca->node, 1, in, out));
	ib_smp_decode(resp, out);
	assert_int_equal(ib_mad_method(&resp->hdr), IB_MAD_METHOD_GET_RESP);
	assert_int_equal(resp->hdr.TransactionID, 0x1122334455667788ull);
	assert_int_equal(resp->hdr.AttributeID, attr);
	return resp->hdr.Status;
}

static void node_info_names_the_node_and_port(void **state)
{
	struct fixture *f = *state;
	struct ib_node_info ni;
	struct ib_smp r;

	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, &r), 0);
	ib_node_info_decode(&ni, r.SMPData);
	assert_int_equal(ni.NodeType, IB_NODE_TYPE_CA);
	assert_int_equal(ni.NumPorts, SIB_NUM_PORTS);
	assert_int_equal(ni.NodeGUID, 0x0212340000000010ull);
	assert_int_equal(ni.PortGUID, 0x0212340000000011ull);
	assert_int_equal(ni.SystemImageGUID, 0x0212340000000010ull);
	assert_int_equal(ni.LocalPortNum, 1);
	assert_int_equal(ni.VendorID, SIB_VENDOR_ID);
	assert_int_equal(ni.PartitionCap, SIB_MAX_PKEYS);
}

static void port_info_reports_init_port_with_link_up(void **state)
{
	struct fixture *f = *state;
	struct ib_port_info pi;
	struct ib_smp r;

	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, &r), 0);
	ib_port_info_decode(&pi, r.SMPData);
	assert_int_equal(pi.PortState, IB_PORT_STATE_INIT);
	assert_int_equal(pi.PortPhysicalState, IB_PORT_PHYS_LINK_UP);
	assert_int_equal(pi.LID, 0);
	assert_int_equal(pi.GidPrefix, 0xfe80000000000000ull);
	assert_int_equal(pi.MTUCap, IB_MTU_4096);
	assert_int_equal(pi.LocalPortNum, 1);
	assert_true(pi.CapabilityMask & IB_PORT_CAP_IS_TRAP_SUP);
	/* Modifier: 0 or this port; anything else is an invalid field. */
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 1, NULL, &r), 0);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 2, NULL, &r),
			 IB_MAD_STATUS_INVALID_FIELD);
}

struct recorder {
	struct sib_event_sink sink;
	int active, lid_change, pkey_change;
};

static void record(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port)
{
	struct recorder *r = (struct recorder *)sink;

	(void)obj;
	(void)port;
	r->active += ev == SIB_EV_PORT_ACTIVE;
	r->lid_change += ev == SIB_EV_LID_CHANGE;
	r->pkey_change += ev == SIB_EV_PKEY_CHANGE;
}

static uint16_t set_port(struct sib_hca *hca, uint16_t lid, uint16_t sm_lid, uint8_t state,
			 struct ib_port_info *out)
{
	struct ib_port_info pi;
	uint8_t data[IB_SMP_DATA_BYTES];
	struct ib_smp r;
	uint16_t status;

	memset(&pi, 0, sizeof(pi));
	pi.LID = lid;
	pi.MasterSMLID = sm_lid;
	pi.PortState = state;
	pi.SubnetTimeOut = 18;
	ib_port_info_encode(&pi, data);
	status = sma(hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, &r);
	ib_port_info_decode(out, r.SMPData);
	return status;
}

static void set_port_info_arms_then_activates_and_raises_port_active(void **state)
{
	struct fixture *f = *state;
	struct recorder rec = { .sink.deliver = record };
	struct sib_hca_listener l;
	struct ib_port_info pi;

	sib_hca_listen(f->hca, &l, &rec.sink);
	assert_int_equal(set_port(f->hca, 7, 1, IB_PORT_STATE_ARMED, &pi), 0);
	assert_int_equal(pi.PortState, IB_PORT_STATE_ARMED);
	assert_int_equal(pi.LID, 7);
	assert_int_equal(pi.MasterSMLID, 1);
	assert_int_equal(pi.SubnetTimeOut, 18);
	assert_int_equal(rec.active, 0);
	assert_int_equal(set_port(f->hca, 7, 1, IB_PORT_STATE_ACTIVE, &pi), 0);
	assert_int_equal(pi.PortState, IB_PORT_STATE_ACTIVE);
	assert_int_equal(rec.active, 1);
	assert_int_equal(f->hca->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(f->hca->node.ports[0].LID, 7);
	assert_int_equal(f->hca->node.ports[0].SMLID, 1);
	/* A new LID on an ACTIVE port is a LID change, not a second PORT_ACTIVE. */
	assert_int_equal(set_port(f->hca, 9, 1, IB_PORT_STATE_NOP, &pi), 0);
	assert_int_equal(set_port(f->hca, 9, 1, IB_PORT_STATE_ACTIVE, &pi), 0);
	assert_int_equal(rec.active, 1);
	assert_int_equal(rec.lid_change, 1);
	sib_hca_unlisten(f->hca, &l);
}

static void set_port_info_refuses_bad_transitions_and_changes_nothing(void **state)
{
	struct fixture *f = *state;
	struct ib_port_info pi;

	/* INIT -> ACTIVE skips ARMED (IBA 7.2). */
	assert_int_equal(set_port(f->hca, 7, 1, IB_PORT_STATE_ACTIVE, &pi),
			 IB_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(pi.PortState, IB_PORT_STATE_INIT);
	assert_int_equal(pi.LID, 0);
	/* ARMED needs a unicast LID. */
	assert_int_equal(set_port(f->hca, 0, 1, IB_PORT_STATE_ARMED, &pi),
			 IB_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(set_port(f->hca, 0xc001, 1, IB_PORT_STATE_ARMED, &pi),
			 IB_MAD_STATUS_INVALID_FIELD);
	/* INIT is not a state an SM may set. */
	assert_int_equal(set_port(f->hca, 7, 1, IB_PORT_STATE_INIT, &pi),
			 IB_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(f->hca->node.ports[0].state, SIB_PORT_INIT);
	assert_int_equal(f->hca->node.ports[0].LID, 0);
}

static void tables_and_descriptions_answer_get(void **state)
{
	struct fixture *f = *state;
	struct ib_node_description nd;
	struct ib_p_key_table pt;
	struct ib_guid_info gi;
	struct ib_sm_info si;
	struct ib_smp r;

	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_DESCRIPTION, 0, NULL, &r),
			 0);
	ib_node_description_decode(&nd, r.SMPData);
	assert_memory_equal(nd.NodeString, "softib0", 7);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_P_KEY_TABLE, 0, NULL, &r), 0);
	ib_p_key_table_decode(&pt, r.SMPData);
	assert_int_equal(pt.P_KeyTableBlock[0], 0xffff);
	assert_int_equal(pt.P_KeyTableBlock[1], 0);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_GUID_INFO, 0, NULL, &r), 0);
	ib_guid_info_decode(&gi, r.SMPData);
	assert_int_equal(gi.GUIDBlock[0], 0x0212340000000011ull);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_SM_INFO, 0, NULL, &r), 0);
	ib_sm_info_decode(&si, r.SMPData);
	assert_int_equal(si.SMState, IB_SM_STATE_NOT_ACTIVE);
	/* Blocks beyond the tables are invalid fields. */
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_P_KEY_TABLE, 1, NULL, &r),
			 IB_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_GUID_INFO, 1, NULL, &r),
			 IB_MAD_STATUS_INVALID_FIELD);
}

/* What smpquery sl2vl and vlarb read and an SM writes: tables kept as set
 * (VL0 is the only data VL, so nothing maps by them yet). */
static void sl_to_vl_and_vl_arbitration_tables_keep_what_the_sm_sets(void **state)
{
	struct fixture *f = *state;
	uint8_t sl2vl[IB_SMP_DATA_BYTES] = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f };
	uint8_t arb[IB_SMP_DATA_BYTES] = { 0x00, 0x20 }; /* VL0, weight 32 */
	struct ib_smp r;

	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE, 0,
			     NULL, &r), 0);
	assert_int_equal(r.SMPData[7], 0);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE, 0,
			     sl2vl, &r), 0);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE, 1,
			     NULL, &r), 0);
	assert_memory_equal(r.SMPData, sl2vl, IB_SL2VL_BYTES);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_VL_ARBITRATION_TABLE,
			     1u << 16, arb, &r), 0);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_VL_ARBITRATION_TABLE,
			     1u << 16 | 1, NULL, &r), 0);
	assert_memory_equal(r.SMPData, arb, IB_VL_ARB_BLOCK_BYTES);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_VL_ARBITRATION_TABLE,
			     3u << 16, NULL, &r), 0);
	assert_int_equal(r.SMPData[1], 0); /* the high-priority block is its own */
	/* No block 0 or 5, no port 2 on a one-port CA. */
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_VL_ARBITRATION_TABLE, 0, NULL,
			     &r), IB_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_VL_ARBITRATION_TABLE,
			     5u << 16, NULL, &r), IB_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE, 2,
			     NULL, &r), IB_MAD_STATUS_INVALID_FIELD);
}

static void unsupported_requests_get_the_iba_status(void **state)
{
	struct fixture *f = *state;
	uint8_t in[IB_MAD_BYTES], out[IB_MAD_BYTES];
	struct ib_smp r;

	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_SWITCH_INFO, 0, NULL, &r),
			 IB_MAD_STATUS_UNSUP_METHOD_ATTR);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET, 0x7777, 0, NULL, &r),
			 IB_MAD_STATUS_UNSUP_METHOD_ATTR);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_NODE_INFO, 0, NULL, &r),
			 IB_MAD_STATUS_UNSUP_METHOD_ATTR);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_NODE_DESCRIPTION, 0, NULL, &r),
			 IB_MAD_STATUS_UNSUP_METHOD_ATTR);
	assert_int_equal(sma(f->hca, IB_MAD_METHOD_GET_TABLE, IB_SMP_ATTR_NODE_INFO, 0, NULL, &r),
			 IB_MAD_STATUS_UNSUP_METHOD);
	lid_smp(in, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL);
	in[2] = 2; /* ClassVersion */
	assert_true(sib_sma_process(&f->hca->node, 1, in, out));
	ib_smp_decode(&r, out);
	assert_int_equal(r.hdr.Status, IB_MAD_STATUS_BAD_VERSION);
	/* Responses and unknown base versions get no answer at all. */
	lid_smp(in, IB_MAD_METHOD_GET_RESP, IB_SMP_ATTR_NODE_INFO, 0, NULL);
	assert_false(sib_sma_process(&f->hca->node, 1, in, out));
	lid_smp(in, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL);
	in[0] = 2;
	assert_false(sib_sma_process(&f->hca->node, 1, in, out));
}

static void dr_smp(uint8_t *mad, uint8_t hop_ptr, uint8_t hop_cnt, uint8_t d)
{
	struct ib_dr_smp dr;

	memset(&dr, 0, sizeof(dr));
	dr.BaseVersion = 1;
	dr.MgmtClass = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	dr.ClassVersion = 1;
	dr.Method = IB_MAD_METHOD_GET;
	dr.D = d;
	dr.HopPointer = hop_ptr;
	dr.HopCount = hop_cnt;
	dr.InitialPath[1] = 1;
	dr.TransactionID = 42;
	dr.AttributeID = IB_SMP_ATTR_NODE_INFO;
	dr.DrSLID = dr.DrDLID = 0xffff;
	ib_dr_smp_encode(&dr, mad);
}

static void directed_route_smp_is_answered_on_the_return_path(void **state)
{
	struct fixture *f = *state;
	uint8_t in[IB_MAD_BYTES], out[IB_MAD_BYTES];
	struct ib_node_info ni;
	struct ib_dr_smp r;

	dr_smp(in, 1, 1, 0);
	assert_true(sib_sma_process(&f->hca->node, 1, in, out));
	ib_dr_smp_decode(&r, out);
	assert_int_equal(r.R, 1);
	assert_int_equal(r.D, 1);
	assert_int_equal(r.Status, 0);
	assert_int_equal(r.TransactionID, 42);
	assert_int_equal(r.HopCount, 1);
	assert_int_equal(r.ReturnPath[1], 1);
	ib_node_info_decode(&ni, r.SMPData);
	assert_int_equal(ni.PortGUID, 0x0212340000000011ull);
	/* Mid-path (a CA cannot forward) and return-trip SMPs are dropped. */
	dr_smp(in, 1, 2, 0);
	assert_false(sib_sma_process(&f->hca->node, 1, in, out));
	dr_smp(in, 1, 1, 1);
	assert_false(sib_sma_process(&f->hca->node, 1, in, out));
}

struct got {
	int n;
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct sib_endpoint from;
};

static void got_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	struct ib_packet pkt;
	const uint8_t *mad;

	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	mad = sib_mgmt_parse(&pkt, &g->a);
	assert_non_null(mad);
	memcpy(g->mad, mad, IB_MAD_BYTES);
	g->from = *from;
	g->n++;
}

/* The fake SM answers the port's SubnGet(SMInfo) (the MAD in g) with
 * SMState state, from link l. */
static void sminfo_answer(struct fixture *f, struct sib_link *l, const struct got *g, uint8_t state)
{
	struct sib_link *port_link = f->hca->node.mgmt[0].link;
	struct ib_sm_info si = { .GUID = 0x0200000000000abcull, .SMState = state };
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_smp smp;

	ib_smp_decode(&smp, g->mad);
	assert_int_equal(smp.hdr.AttributeID, IB_SMP_ATTR_SM_INFO);
	assert_int_equal(ib_mad_method(&smp.hdr), IB_MAD_METHOD_GET);
	assert_int_equal(smp.M_Key, 0); /* a port never hands out a key */
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_GET_RESP);
	ib_sm_info_encode(&si, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, 0xffff, 1);
	assert_int_equal(sib_mgmt_send(l, &a, mad, &port_link->local), 0);
	sib_progress_poll(f->hca);
}

/* What the port sent the SM since the last look: the trap in *trap and
 * the SMInfo query in *sminfo (either may be absent: n counts). */
static int sm_inbox(struct sib_link *l, struct got *trap, struct got *sminfo)
{
	struct got g;
	int n = 0;

	trap->n = sminfo->n = 0;
	for (;;) {
		memset(&g, 0, sizeof(g));
		if (sib_link_poll(l, 1, got_rx, &g) != 1)
			return n;
		n++;
		if (g.mad[3] == IB_MAD_METHOD_TRAP)
			*trap = g;
		else
			*sminfo = g;
	}
}

static void trap_goes_to_the_sm_and_smp_is_answered_over_the_link(void **state)
{
	struct fixture *f = *state;
	struct sib_link *port_link = f->hca->node.mgmt[0].link;
	struct got g = { 0 }, q = { 0 };
	struct sib_mad_addr a;
	struct ib_notice n;
	struct ib_smp smp;
	uint8_t mad[IB_MAD_BYTES];

	/* sib_hca_new sent the bring-up trap: a LID-routed SubnTrap(Notice)
	 * on VL15 to QP0, trap 128 from a CA; and asked the SM for SMInfo. */
	assert_int_equal(sm_inbox(f->sm_link, &g, &q), 2);
	assert_int_equal(g.n, 1);
	assert_int_equal(q.n, 1);
	ib_smp_decode(&smp, g.mad);
	assert_int_equal(ib_mad_method(&smp.hdr), IB_MAD_METHOD_TRAP);
	assert_int_equal(smp.hdr.AttributeID, IB_SMP_ATTR_NOTICE);
	assert_int_equal(g.a.DestQP, 0);
	assert_int_equal(g.a.DLID, SIB_LID_PERMISSIVE);
	ib_notice_decode(&n, smp.SMPData);
	assert_int_equal(n.IsGeneric, 1);
	assert_int_equal(n.TrapNumber, IB_TRAP_LINK_STATE_CHANGE);
	assert_int_equal(n.ProducerType, IB_NOTICE_PRODUCER_CA);
	assert_true(sib_endpoint_equal(&g.from, &port_link->local));

	/* The SM verifies itself: SMInfo says MASTER, from its address. */
	assert_false(f->hca->node.mgmt[0].sm_heard);
	sminfo_answer(f, f->sm_link, &q, IB_SM_STATE_MASTER);
	assert_true(f->hca->node.mgmt[0].sm_heard);
	assert_true(sib_endpoint_equal(&f->hca->node.mgmt[0].sm_ep, &f->sm_link->local));

	/* Its TrapRepress is heard. */
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP_REPRESS);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, 0xffff, 1);
	f->hca->node.mgmt[0].last_smp_ns = 0;
	assert_int_equal(sib_mgmt_send(f->sm_link, &a, mad, &port_link->local), 0);
	sib_progress_poll(f->hca);
	assert_true(f->hca->node.mgmt[0].last_smp_ns > 0);

	/* A DR SubnGet(NodeInfo) over the link comes back as a GetResp. */
	dr_smp(mad, 1, 1, 0);
	assert_int_equal(sib_mgmt_send(f->sm_link, &a, mad, &port_link->local), 0);
	sib_progress_poll(f->hca);
	g.n = 0;
	assert_int_equal(sib_link_poll(f->sm_link, 8, got_rx, &g), 1);
	assert_int_equal(g.mad[1], IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	assert_int_equal(g.mad[3], IB_MAD_METHOD_GET_RESP);
	assert_int_equal(g.a.DLID, SIB_LID_PERMISSIVE);
}

/*
 * The attack this stops: any SMP made its sender the port's SM, whose SA
 * answers then placed the port's peers.  Now SMPs from a stranger are
 * answered and change nothing; an SMInfo answer counts only from a
 * configured SM address and only as MASTER.
 */
static void a_stranger_never_becomes_the_ports_sm(void **state)
{
	struct fixture *f = *state;
	struct sib_link *port_link = f->hca->node.mgmt[0].link, *evil;
	struct got g = { 0 }, q = { 0 };
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &evil), 0);
	assert_int_equal(sm_inbox(f->sm_link, &g, &q), 2);
	/* The stranger's Get is answered... */
	dr_smp(mad, 1, 1, 0);
	sib_mad_addr_init(&a, SIB_QP0, 0xffff, 0xffff);
	assert_int_equal(sib_mgmt_send(evil, &a, mad, &port_link->local), 0);
	sib_progress_poll(f->hca);
	assert_int_equal(sib_link_poll(evil, 8, got_rx, &g), 1);
	/* ...but makes it nobody's SM, and its SMInfo answer (even with our
	 * TID) counts for nothing. */
	assert_false(f->hca->node.mgmt[0].sm_heard);
	sminfo_answer(f, evil, &q, IB_SM_STATE_MASTER);
	assert_false(f->hca->node.mgmt[0].sm_heard);
	/* The configured SM answering STANDBY is not master either. */
	sminfo_answer(f, f->sm_link, &q, IB_SM_STATE_STANDBY);
	assert_false(f->hca->node.mgmt[0].sm_heard);
	sminfo_answer(f, f->sm_link, &q, IB_SM_STATE_MASTER);
	assert_true(f->hca->node.mgmt[0].sm_heard);
	/* The stranger's SMPs never feed the silence watch either. */
	f->hca->node.mgmt[0].last_smp_ns = 0;
	dr_smp(mad, 1, 1, 0);
	assert_int_equal(sib_mgmt_send(evil, &a, mad, &port_link->local), 0);
	sib_progress_poll(f->hca);
	assert_int_equal(f->hca->node.mgmt[0].last_smp_ns, 0);
	sib_link_close(evil);
}

/* Runs a LID-routed SMP with M_Key key through the SMA (from: NULL, the
 * owner); true when it was answered, with the response in *resp. */
static bool sma_keyed(struct sib_hca *hca, uint8_t method, uint16_t attr, uint64_t key,
		      const uint8_t *data, const struct sib_endpoint *from, struct ib_smp *resp)
{
	uint8_t in[IB_MAD_BYTES], out[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_smp smp;

	lid_smp(in, method, attr, 0, data);
	ib_smp_decode(&smp, in);
	smp.M_Key = key;
	ib_smp_encode(&smp, in);
	sib_mad_addr_init(&a, SIB_QP0, 7, 0x66);
	if (!sib_sma_handle(&hca->node, 1, &a, in, from, out))
		return false;
	ib_smp_decode(resp, out);
	return true;
}

/* SubnSet(PortInfo) as an SM: LID 7, ARMED, with the given key fields. */
static void port_info_keys(uint8_t *data, uint64_t m_key, uint8_t bits, uint16_t lease,
			   uint16_t lid)
{
	struct ib_port_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.LID = lid;
	pi.MasterSMLID = 1;
	pi.PortState = IB_PORT_STATE_ARMED;
	pi.M_Key = m_key;
	pi.M_KeyProtectBits = bits;
	pi.M_KeyLeasePeriod = lease;
	ib_port_info_encode(&pi, data);
}

#define KEY 0x1122aabbccddeeffull

static void m_key_and_protect_bits_are_stored_as_the_sm_sets_them(void **state)
{
	struct fixture *f = *state;
	uint8_t data[IB_SMP_DATA_BYTES];
	struct ib_port_info pi;
	struct ib_smp r;

	port_info_keys(data, KEY, 3, 60, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, NULL, &r));
	assert_int_equal(r.hdr.Status, 0);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, KEY, NULL, NULL, &r));
	ib_port_info_decode(&pi, r.SMPData);
	assert_int_equal(pi.M_Key, KEY);
	assert_int_equal(pi.M_KeyProtectBits, 3);
	assert_int_equal(pi.M_KeyLeasePeriod, 60);
	assert_int_equal(pi.M_KeyViolations, 0);
	assert_int_equal(pi.LID, 7);
}

/* IBA 14.2.4.1, level by level. */
static void a_wrong_m_key_is_refused_as_the_protection_level_says(void **state)
{
	struct fixture *f = *state;
	struct sib_port_mgmt *pm = &f->hca->node.mgmt[0];
	uint8_t data[IB_SMP_DATA_BYTES], evil[IB_SMP_DATA_BYTES];
	struct ib_port_info pi;
	struct ib_smp r;

	port_info_keys(data, KEY, 1, 0, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, NULL, &r));
	/* Level 1: a Get without the key is answered, M_Key reads 0. */
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 5, NULL, NULL, &r));
	ib_port_info_decode(&pi, r.SMPData);
	assert_int_equal(pi.M_Key, 0);
	assert_int_equal(pi.M_KeyProtectBits, 1);
	assert_int_equal(pi.M_KeyViolations, 0);
	/* A Set without the key is discarded: no answer, nothing changes,
	 * a violation is counted. */
	port_info_keys(evil, 0, 0, 0, 99);
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, evil, NULL, &r));
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, KEY + 1, evil, NULL,
			       &r));
	assert_int_equal(f->hca->node.ports[0].LID, 7);
	assert_int_equal(pm->M_Key, KEY);
	assert_int_equal(pm->M_KeyViolations, 2);
	/* So is a TrapRepress without it (it gets no answer either way). */
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_TRAP_REPRESS, IB_SMP_ATTR_NOTICE, 0, NULL, NULL,
			       &r));
	assert_int_equal(pm->M_KeyViolations, 3);
	/* Level 0: the Get shows the key. */
	port_info_keys(data, KEY, 0, 0, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, KEY, data, NULL, &r));
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, NULL, &r));
	ib_port_info_decode(&pi, r.SMPData);
	assert_int_equal(pi.M_Key, KEY);
	assert_int_equal(pi.M_KeyViolations, 3);
	/* Levels 2 and 3: even a Get without the key is discarded. */
	for (uint8_t bits = 2; bits <= 3; bits++) {
		port_info_keys(data, KEY, bits, 0, 7);
		assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, KEY, data,
				      NULL, &r));
		assert_false(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL,
				       NULL, &r));
		assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, KEY, NULL,
				      NULL, &r));
	}
	assert_int_equal(pm->M_KeyViolations, 5);
	assert_true(pm->smp_refused >= 5);
}

/* IBA 14.2.4.2: a violation starts the lease; an SMP with the key stops
 * it; when it runs out the protection falls to level 0. */
static void the_m_key_lease_runs_out_unless_the_sm_shows_the_key(void **state)
{
	struct fixture *f = *state;
	struct sib_port_mgmt *pm = &f->hca->node.mgmt[0];
	uint8_t data[IB_SMP_DATA_BYTES];
	struct ib_port_info pi;
	struct ib_smp r;

	port_info_keys(data, KEY, 2, 1, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, NULL, &r));
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, NULL, &r));
	assert_true(pm->mkey_lease_end_ns != 0);
	/* The SM's next SMP carries the key: the lease stops. */
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, KEY, NULL, NULL, &r));
	assert_int_equal(pm->mkey_lease_end_ns, 0);
	usleep(1100 * 1000);
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, NULL, &r));
	/* Now nobody shows the key for a whole lease period (1 s). */
	usleep(1100 * 1000);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, NULL, &r));
	ib_port_info_decode(&pi, r.SMPData);
	assert_int_equal(pi.M_KeyProtectBits, 0);
	assert_int_equal(pi.M_Key, KEY); /* readable: a new SM can take over */
	/* Sets still need the key. */
	port_info_keys(data, 0, 0, 0, 8);
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, NULL, &r));
	assert_int_equal(f->hca->node.ports[0].LID, 7);
}

/* Trap 256 reaches the port's verified SM with the facts of the attempt. */
static void a_bad_m_key_sends_trap_256_to_the_sm(void **state)
{
	struct fixture *f = *state;
	struct sib_port_mgmt *pm = &f->hca->node.mgmt[0];
	uint8_t data[IB_SMP_DATA_BYTES];
	struct ib_notice_bad_m_key d;
	struct got g = { 0 }, q = { 0 };
	struct ib_notice n;
	struct ib_smp r, smp;

	assert_int_equal(sm_inbox(f->sm_link, &g, &q), 2);
	sminfo_answer(f, f->sm_link, &q, IB_SM_STATE_MASTER);
	port_info_keys(data, KEY, 1, 0, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, NULL, &r));
	pm->mkey_trap_ns = 0;
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0xbad, data, NULL,
			       &r));
	assert_int_equal(sm_inbox(f->sm_link, &g, &q), 1);
	assert_int_equal(g.n, 1);
	ib_smp_decode(&smp, g.mad);
	ib_notice_decode(&n, smp.SMPData);
	assert_int_equal(n.TrapNumber, IB_TRAP_BAD_M_KEY);
	assert_int_equal(n.Type, IB_NOTICE_TYPE_SECURITY);
	assert_int_equal(n.IssuerLID, 7);
	ib_notice_bad_m_key_decode(&d, n.DataDetails);
	assert_int_equal(d.LIDADDR, 0x66);
	assert_int_equal(d.Method, IB_MAD_METHOD_SET);
	assert_int_equal(d.AttributeID, IB_SMP_ATTR_PORT_INFO);
	assert_int_equal(d.M_Key, 0xbad);
	assert_int_equal(d.DRNotice, 0);
}

/* Before any SM keyed the port, only its configured SM addresses may Set
 * it; Gets are anyone's. */
static void an_unkeyed_port_takes_sets_only_from_its_sm(void **state)
{
	struct fixture *f = *state;
	uint8_t data[IB_SMP_DATA_BYTES];
	struct sib_endpoint stranger;
	struct ib_smp r;

	assert_int_equal(sib_endpoint_parse("192.0.2.99:4791", 0, &stranger), 0);
	port_info_keys(data, 0, 0, 0, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 0, NULL, &stranger,
			      &r));
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, &stranger,
			       &r));
	assert_int_equal(f->hca->node.ports[0].LID, 0);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data,
			      &f->sm_link->local, &r));
	assert_int_equal(f->hca->node.ports[0].LID, 7);
}

/* A second master (a standby that took over) is the port's SM only once
 * it showed the port's M_Key, and only while the current one is silent. */
static void a_new_master_must_show_the_ports_m_key(void **state)
{
	struct fixture *f = *state;
	struct sib_port_mgmt *pm = &f->hca->node.mgmt[0];
	struct sib_link *port_link = pm->link, *sm2;
	char list[2 * SIB_ENDPOINT_STRLEN + 2], e1[SIB_ENDPOINT_STRLEN], e2[SIB_ENDPOINT_STRLEN];
	uint8_t data[IB_SMP_DATA_BYTES];
	struct got g = { 0 }, q = { 0 }, q2 = { 0 };
	struct ib_smp r;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &sm2), 0);
	snprintf(list, sizeof(list), "%s,%s", sib_endpoint_str(&f->sm_link->local, e1),
		 sib_endpoint_str(&sm2->local, e2));
	assert_int_equal(sib_port_sm_config(pm, list), 0);
	assert_int_equal(pm->n_sm_addr, 2);
	assert_int_equal(sm_inbox(f->sm_link, &g, &q), 2);
	sminfo_answer(f, f->sm_link, &q, IB_SM_STATE_MASTER);
	assert_int_equal(pm->sm_index, 0);
	port_info_keys(data, KEY, 1, 0, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data,
			      &f->sm_link->local, &r));
	/* The port asks the second address too (as while its SM is silent):
	 * an answer counts only from where its query went. */
	sib_port_sm_probe(&f->hca->node, 1);
	assert_int_equal(sm_inbox(sm2, &g, &q2), 1);
	assert_int_equal(q2.n, 1);
	sminfo_answer(f, sm2, &q, IB_SM_STATE_MASTER); /* the first SM's query */
	assert_true(pm->smp_refused >= 1);
	/* The second SM claims MASTER: not while the first speaks. */
	pm->sm_keyed[1] = true;
	sminfo_answer(f, sm2, &q2, IB_SM_STATE_MASTER);
	assert_int_equal(pm->sm_index, 0);
	/* The first went silent; the second has not shown our key. */
	pm->sm_keyed[1] = false;
	pm->sm_silent = true;
	sminfo_answer(f, sm2, &q2, IB_SM_STATE_MASTER);
	assert_int_equal(pm->sm_index, 0);
	/* It configures us with the key (a standby shares the key file). */
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, KEY, NULL,
			      &sm2->local, &r));
	assert_true(pm->sm_keyed[1]);
	sminfo_answer(f, sm2, &q2, IB_SM_STATE_MASTER);
	assert_int_equal(pm->sm_index, 1);
	assert_true(sib_endpoint_equal(&pm->sm_ep, &sm2->local));
	(void)port_link;
	sib_link_close(sm2);
}

/* A PerfMgt Get through the link, as perfquery sends it; the answer. */
static uint16_t perf_ask(struct fixture *f, uint8_t method, uint16_t attr, uint8_t port_select,
			 uint8_t *resp)
{
	struct sib_link *port_link = f->hca->node.mgmt[0].link;
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_mad_hdr h;
	struct got g = { 0 }, q = { 0 };

	sm_inbox(f->sm_link, &g, &q); /* what bring-up sent */
	memset(mad, 0, sizeof(mad));
	memset(&h, 0, sizeof(h));
	h.BaseVersion = 1;
	h.MgmtClass = IB_MGMT_CLASS_PERF;
	h.ClassVersion = 1;
	ib_mad_set_method(&h, method);
	h.TransactionID = 0x7e57;
	h.AttributeID = attr;
	ib_mad_hdr_encode(&h, mad);
	mad[IB_PERF_DATA_OFFSET + 1] = port_select;
	sib_mad_addr_init(&a, SIB_QP1, 0xffff, 9);
	a.SrcQP = 1;
	assert_int_equal(sib_mgmt_send(f->sm_link, &a, mad, &port_link->local), 0);
	sib_progress_poll(f->hca);
	g.n = 0;
	assert_int_equal(sib_link_poll(f->sm_link, 8, got_rx, &g), 1);
	assert_int_equal(g.a.DestQP, 1);
	assert_int_equal(g.a.Q_Key, SIB_GSI_Q_KEY);
	memcpy(resp, g.mad, IB_MAD_BYTES);
	ib_mad_hdr_decode(&h, resp);
	assert_int_equal(ib_mad_method(&h), IB_MAD_METHOD_GET_RESP);
	assert_int_equal(h.TransactionID, 0x7e57);
	return h.Status;
}

/* What perfquery reads: ClassPortInfo, PortCounters, PortCountersExtended;
 * counters nobody may clear. */
static void perfmgt_answers_port_counters(void **state)
{
	struct fixture *f = *state;
	struct ib_class_port_info cpi;
	struct ib_port_counters pc;
	struct ib_port_counters_ext x;
	uint8_t r[IB_MAD_BYTES];

	assert_int_equal(perf_ask(f, IB_MAD_METHOD_GET, IB_PERF_ATTR_CLASS_PORT_INFO, 0, r), 0);
	ib_class_port_info_decode(&cpi, r + IB_PERF_DATA_OFFSET);
	assert_int_equal(cpi.ClassVersion, 1);
	assert_true(cpi.CapabilityMask & IB_PERF_CAP_EXT_WIDTH);
	assert_int_equal(perf_ask(f, IB_MAD_METHOD_GET, IB_PERF_ATTR_PORT_COUNTERS, 1, r), 0);
	ib_port_counters_decode(&pc, r + IB_PERF_DATA_OFFSET);
	assert_int_equal(pc.PortSelect, 1);
	assert_true(pc.PortXmitPkts >= 2); /* the bring-up trap and SMInfo query at least */
	assert_true(pc.PortXmitData >= pc.PortXmitPkts * 256 / 4);
	assert_true(pc.PortRcvPkts >= 1);
	assert_int_equal(perf_ask(f, IB_MAD_METHOD_GET, IB_PERF_ATTR_PORT_COUNTERS_EXT, 1, r), 0);
	ib_port_counters_ext_decode(&x, r + IB_PERF_DATA_OFFSET);
	assert_true(x.PortXmitPkts >= pc.PortXmitPkts);
	assert_int_equal(x.PortUnicastXmitPkts, x.PortXmitPkts);
	assert_int_equal(perf_ask(f, IB_MAD_METHOD_GET, IB_PERF_ATTR_PORT_COUNTERS, 2, r),
			 IB_MAD_STATUS_INVALID_FIELD);
	/* PortSelect 0, as perfquery sends for a LID without a port: the
	 * port the request came in by. */
	assert_int_equal(perf_ask(f, IB_MAD_METHOD_GET, IB_PERF_ATTR_PORT_COUNTERS, 0, r), 0);
	ib_port_counters_decode(&pc, r + IB_PERF_DATA_OFFSET);
	assert_int_equal(pc.PortSelect, 0);
	assert_true(pc.PortXmitPkts >= 2);
	assert_int_equal(perf_ask(f, IB_MAD_METHOD_SET, IB_PERF_ATTR_PORT_COUNTERS, 1, r),
			 IB_MAD_STATUS_UNSUP_METHOD_ATTR);
	assert_int_equal(perf_ask(f, IB_MAD_METHOD_GET, IB_PERF_ATTR_PORT_SAMPLES_CONTROL, 1, r),
			 IB_MAD_STATUS_UNSUP_METHOD_ATTR);
}

static int data_hook_calls;
static uint32_t data_hook_qp;

static void data_hook(struct sib_hca *hca, const struct ib_packet *pkt,
		      const struct sib_endpoint *from)
{
	(void)hca;
	(void)from;
	data_hook_calls++;
	data_hook_qp = pkt->bth.DestQP;
}

static size_t ud_packet(uint8_t *buf, uint32_t dest_qp)
{
	struct ib_packet pkt;
	uint8_t payload[32] = { 1, 2, 3 };

	memset(&pkt, 0, sizeof(pkt));
	pkt.lrh.LNH = IB_LNH_IBA_LOCAL;
	pkt.lrh.DLID = 2;
	pkt.lrh.SLID = 3;
	pkt.bth.OpCode = IB_OPCODE(IB_TRANSPORT_UD, IB_OP_SEND_ONLY);
	pkt.bth.P_Key = 0xffff;
	pkt.bth.DestQP = dest_qp;
	pkt.deth.Q_Key = 0x1234;
	pkt.deth.SrcQP = 9;
	return ib_packet_encode(&pkt, payload, sizeof(payload), buf, IB_MAX_PACKET);
}

static void progress_dispatches_data_to_the_hook_and_counts_bad_packets(void **state)
{
	struct fixture *f = *state;
	struct sib_link *link = f->hca->node.mgmt[0].link;
	struct sib_link_counters c;
	uint8_t buf[IB_MAX_PACKET];
	size_t len = ud_packet(buf, 0x42);

	assert_true(len > 0);
	sib_hca_set_rx_data(f->hca, NULL); /* the HCA's data path registers itself */
	sib_progress_rx(f->hca, 1, buf, len, &f->sm_link->local);
	assert_int_equal(f->hca->progress.rx_data_unclaimed, 1);
	sib_hca_set_rx_data(f->hca, data_hook);
	sib_progress_rx(f->hca, 1, buf, len, &f->sm_link->local);
	assert_int_equal(data_hook_calls, 1);
	assert_int_equal(data_hook_qp, 0x42);
	sib_hca_set_rx_data(f->hca, NULL);

	buf[len - 10] ^= 0xff; /* payload byte: ICRC and VCRC now wrong */
	sib_progress_rx(f->hca, 1, buf, len, &f->sm_link->local);
	sib_link_counters_get(link, &c);
	assert_int_equal(c.pkt_err[IB_PKT_ERR_VCRC] + c.pkt_err[IB_PKT_ERR_ICRC], 1);
	assert_int_equal(data_hook_calls, 1);

	/* A UD packet to QP1 that is no MAD is counted, not served. */
	len = ud_packet(buf, 1);
	sib_progress_rx(f->hca, 1, buf, len, &f->sm_link->local);
	assert_int_equal(f->hca->progress.rx_mad_malformed, 1);
}

static int fired;

static void on_timer(void *arg)
{
	fired += (int)(intptr_t)arg;
}

static void timers_run_once_when_due_and_cancel_disarms(void **state)
{
	struct fixture *f = *state;
	struct sib_timer a = { 0 }, b = { 0 };

	sib_port_up_stop(&f->hca->node, 1); /* quiet the trap timer for this test */
	fired = 0;
	sib_timer_arm(&f->hca->progress.timers, &a, 0, on_timer, (void *)(intptr_t)1);
	sib_timer_arm(&f->hca->progress.timers, &b, 3600ull * 1000000000ull, on_timer, (void *)(intptr_t)100);
	assert_true(a.armed);
	sib_progress_poll(f->hca);
	assert_int_equal(fired, 1);
	assert_false(a.armed);
	sib_progress_poll(f->hca);
	assert_int_equal(fired, 1);
	assert_true(sib_timer_cancel(&f->hca->progress.timers, &b));
	assert_false(sib_timer_cancel(&f->hca->progress.timers, &b));
	assert_false(sib_timer_cancel(&f->hca->progress.timers, &a));
}

static void progress_thread_runs_timers_while_the_caller_sleeps(void **state)
{
	struct fixture *f = *state;
	struct sib_timer t = { 0 };

	(void)f;
	sib_port_up_stop(&f->hca->node, 1);
	assert_int_equal(sib_progress_start(f->hca), 0);
	assert_true(f->hca->progress.running);
	fired = 0;
	sib_timer_arm(&f->hca->progress.timers, &t, 1000000, on_timer, (void *)(intptr_t)1);
	/* Bounded wait for the thread to run it (not a timing assertion). */
	for (int i = 0; i < 5000 && !__atomic_load_n(&fired, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	assert_int_equal(fired, 1);
	sib_progress_stop(f->hca);
	assert_false(f->hca->progress.running);
}

/* IBA 14.2.5.7: the SM programs the P_Key table; only with the M_Key. */
static void the_p_key_table_is_set_by_the_sm_and_only_with_the_m_key(void **state)
{
	struct fixture *f = *state;
	uint8_t data[IB_SMP_DATA_BYTES], pk[IB_SMP_DATA_BYTES];
	struct ib_p_key_table pt;
	struct ib_smp r;

	port_info_keys(data, KEY, 1, 0, 7);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, NULL, &r));
	memset(&pt, 0, sizeof(pt));
	pt.P_KeyTableBlock[0] = 0xffff;
	pt.P_KeyTableBlock[1] = 0x8001;
	pt.P_KeyTableBlock[2] = 0x0002;
	ib_p_key_table_encode(&pt, pk);
	/* Without the key: discarded, the table unchanged. */
	assert_false(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_P_KEY_TABLE, KEY + 1, pk, NULL,
			       &r));
	assert_int_equal(f->hca->node.ports[0].P_Key[1], 0);
	struct recorder rec = { .sink.deliver = record };
	struct sib_hca_listener l;

	sib_hca_listen(f->hca, &l, &rec.sink);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_P_KEY_TABLE, KEY, pk, NULL, &r));
	assert_int_equal(r.hdr.Status, 0);
	assert_int_equal(rec.pkey_change, 1); /* IBV_EVENT_PKEY_CHANGE */
	/* The same table again changes nothing: no event. */
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_SET, IB_SMP_ATTR_P_KEY_TABLE, KEY, pk, NULL, &r));
	assert_int_equal(rec.pkey_change, 1);
	sib_hca_unlisten(f->hca, &l);
	assert_int_equal(f->hca->node.ports[0].P_Key[1], 0x8001);
	assert_int_equal(f->hca->node.ports[0].P_Key[2], 0x0002);
	assert_true(sma_keyed(f->hca, IB_MAD_METHOD_GET, IB_SMP_ATTR_P_KEY_TABLE, KEY, NULL, NULL, &r));
	ib_p_key_table_decode(&pt, r.SMPData);
	assert_int_equal(pt.P_KeyTableBlock[2], 0x0002);
	assert_int_equal(pt.P_KeyTableBlock[SIB_MAX_PKEYS], 0); /* beyond PartitionCap */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(node_info_names_the_node_and_port),
		T(port_info_reports_init_port_with_link_up),
		T(set_port_info_arms_then_activates_and_raises_port_active),
		T(set_port_info_refuses_bad_transitions_and_changes_nothing),
		T(tables_and_descriptions_answer_get),
		T(sl_to_vl_and_vl_arbitration_tables_keep_what_the_sm_sets),
		T(unsupported_requests_get_the_iba_status),
		T(directed_route_smp_is_answered_on_the_return_path),
		T(trap_goes_to_the_sm_and_smp_is_answered_over_the_link),
		T(a_stranger_never_becomes_the_ports_sm),
		T(the_p_key_table_is_set_by_the_sm_and_only_with_the_m_key),
		T(m_key_and_protect_bits_are_stored_as_the_sm_sets_them),
		T(a_wrong_m_key_is_refused_as_the_protection_level_says),
		T(the_m_key_lease_runs_out_unless_the_sm_shows_the_key),
		T(a_bad_m_key_sends_trap_256_to_the_sm),
		T(an_unkeyed_port_takes_sets_only_from_its_sm),
		T(a_new_master_must_show_the_ports_m_key),
		T(perfmgt_answers_port_counters),
		T(progress_dispatches_data_to_the_hook_and_counts_bad_packets),
		T(timers_run_once_when_due_and_cancel_disarms),
		T(progress_thread_runs_timers_while_the_caller_sleeps),
#undef T
	};

	/* The refusals warn, as they should; keep the output clean. */
	setenv("SOFTIB_LOG", "error", 0);
	return cmocka_run_group_tests_name("mgmt/sma+progress", tests, NULL, NULL);
}

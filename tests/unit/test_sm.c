/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's engine (fabric/sm.c, fabric/sa.c) against real ports (HCAs
 * built with sib_hca_new) over the in-memory link: bring-up to ACTIVE,
 * unique LIDs, a LID given back to its GUID, sweeps dropping a silent port,
 * SA PathRecord and the vendor endpoint record, the port's SA client,
 * ServiceRecords (Set, Delete, Get, GetTable over RMPP, ownership, leases,
 * records leaving with their port).
 *
 * The fabric sources are compiled into this test (the build links only
 * wire/, memreg/ and transport/ into test programs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric/sa.c"
#include "fabric/sa_rmpp.c"
#include "fabric/sa_mcast.c"
#include "fabric/sm_mcast.c"
#include "fabric/sa_service.c"
#include "fabric/sa_nodes.c"
#include "fabric/partitions.c"
#include "fabric/sm.c"
#include "fabric/sm_admit.c"
#include "hca/hca.h"
#include "mgmt/port_up.h"
#include "wire/smp.h"
#include "mgmt/sa_query.h"
#include "wire/sa.h"

#define SEC 1000000000ull

struct fixture {
	struct sib_mem_hub *hub;
	struct sib_link *sm_link;
	struct sib_sm sm;
	uint64_t now; /* the SM's clock, advanced by hand */
};

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.hub = sib_mem_hub_new();
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.sm_link), 0);
	f.now = 1000 * SEC;
	assert_int_equal(sib_sm_init(&f.sm, f.sm_link, 0x0200000000000100ull, f.now), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sib_sm_fini(&f->sm);
	sib_link_close(f->sm_link);
	sib_mem_hub_free(f->hub);
	return 0;
}

static struct sib_hca *hca_port_new(struct fixture *f, uint64_t node_guid)
{
	struct sib_link *link;
	char sm[SIB_ENDPOINT_STRLEN];
	struct sib_hca_opts o = { 0 };
	struct sib_hca *hca;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &link), 0);
	sib_endpoint_str(&f->sm_link->local, sm);
	o.link = link;
	o.sm = sm;
	o.no_thread = true;
	o.no_bringup_wait = true;
	o.no_spawn = true;
	o.node_guid = node_guid;
	hca = sib_hca_new(&o);
	assert_non_null(hca);
	return hca;
}

/* Lets the SM and the ports exchange everything pending (bounded). */
static void settle(struct fixture *f, struct sib_hca **hcas, unsigned n)
{
	for (int round = 0; round < 50; round++) {
		int moved = sib_sm_step(&f->sm, f->now);

		for (unsigned i = 0; i < n; i++)
			if (hcas[i])
				moved += sib_progress_poll(hcas[i]);
		if (!moved)
			return;
	}
}

struct recorder {
	struct sib_event_sink sink;
	int active;
};

static void record(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port)
{
	(void)obj;
	(void)port;
	((struct recorder *)sink)->active += ev == SIB_EV_PORT_ACTIVE;
}

static void bringup_assigns_a_lid_and_raises_port_active(void **state)
{
	struct fixture *f = *state;
	struct recorder rec = { .sink.deliver = record };
	struct sib_hca_listener l;
	struct sib_hca *hca = hca_port_new(f, 0x0200000000000010ull);
	struct sib_sm_port *p;

	sib_hca_listen(hca, &l, &rec.sink);
	assert_int_equal(hca->node.ports[0].state, SIB_PORT_INIT);
	settle(f, &hca, 1);
	assert_int_equal(hca->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(rec.active, 1);
	assert_true(hca->node.ports[0].LID >= 2 && hca->node.ports[0].LID <= SIB_LID_UNICAST_MAX);
	assert_int_equal(hca->node.ports[0].SMLID, SIB_SM_LID);
	assert_int_equal(hca->node.ports[0].SubnetTimeOut, SIB_SM_SUBNET_TIMEOUT);
	assert_true(hca->node.mgmt[0].sm_heard);
	assert_int_equal(sib_sm_active_ports(&f->sm), 1);
	p = sib_sm_port_by_lid(&f->sm, hca->node.ports[0].LID);
	assert_non_null(p);
	assert_int_equal(p->guid, 0x0200000000000011ull);
	assert_true(sib_endpoint_equal(&p->ep, &hca->node.mgmt[0].link->local));
	assert_int_equal(p->mtu_cap, IB_MTU_4096);
	sib_hca_unlisten(hca, &l);
	sib_hca_free(hca);
}

static void lids_are_unique_across_ports(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[3];

	for (unsigned i = 0; i < 3; i++)
		h[i] = hca_port_new(f, 0x0200000000000020ull + 0x10 * i);
	settle(f, h, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(h[i]->node.ports[0].state, SIB_PORT_ACTIVE);
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(h[i]->node.ports[0].LID, h[j]->node.ports[0].LID);
	}
	assert_int_equal(sib_sm_active_ports(&f->sm), 3);
	for (unsigned i = 0; i < 3; i++)
		sib_hca_free(h[i]);
}

/* Advances the SM's clock sweep by sweep until `ports` remain (bounded). */
static void sweep_until(struct fixture *f, struct sib_hca **h, unsigned n, unsigned ports)
{
	for (int i = 0; i < 20 && sib_sm_active_ports(&f->sm) != ports; i++) {
		f->now += f->sm.sweep_ns;
		settle(f, h, n);
		f->now += SIB_SM_TIMEOUT_NS;
		settle(f, h, n);
	}
}

static void sweeps_keep_live_ports_and_drop_silent_ones(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[2];
	uint16_t gone_lid;

	h[0] = hca_port_new(f, 0x0200000000000100ull);
	h[1] = hca_port_new(f, 0x0200000000000200ull);
	settle(f, h, 2);
	assert_int_equal(sib_sm_active_ports(&f->sm), 2);
	/* Live ports answer their sweeps: three sweeps later both remain. */
	for (int i = 0; i < 3; i++) {
		f->now += f->sm.sweep_ns;
		settle(f, h, 2);
	}
	assert_int_equal(sib_sm_active_ports(&f->sm), 2);
	/* A port that stops answering is dropped after missed sweeps. */
	gone_lid = h[1]->node.ports[0].LID;
	sib_hca_free(h[1]);
	h[1] = NULL;
	sweep_until(f, h, 2, 1);
	assert_int_equal(sib_sm_active_ports(&f->sm), 1);
	assert_null(sib_sm_port_by_lid(&f->sm, gone_lid));
	assert_false(lid_is_used(&f->sm, gone_lid));
	assert_int_equal(f->sm.leaves, 1);
	sib_hca_free(h[0]);
}

static void a_returning_guid_gets_its_lid_back(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[2] = { NULL, NULL };
	uint16_t lid;

	h[0] = hca_port_new(f, 0x0200000000000300ull);
	settle(f, h, 1);
	lid = h[0]->node.ports[0].LID;
	sib_hca_free(h[0]);
	h[0] = NULL;
	sweep_until(f, h, 1, 0);
	assert_int_equal(sib_sm_active_ports(&f->sm), 0);
	/* Another port joins meanwhile: it does not take the departed LID. */
	h[1] = hca_port_new(f, 0x0200000000000400ull);
	settle(f, h, 2);
	assert_int_not_equal(h[1]->node.ports[0].LID, lid);
	/* The same port GUID comes back (new endpoint): same LID. */
	h[0] = hca_port_new(f, 0x0200000000000300ull);
	settle(f, h, 2);
	assert_int_equal(h[0]->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(h[0]->node.ports[0].LID, lid);
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

/* A fake port on its own link: what the SM sent it, and answers. */
struct fake_port {
	struct sib_link *link;
	int n;
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
};

static void fake_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct fake_port *fp = arg;
	struct ib_packet pkt;
	const uint8_t *mad;

	(void)from;
	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	mad = sib_mgmt_parse(&pkt, &fp->a);
	assert_non_null(mad);
	memcpy(fp->mad, mad, IB_MAD_BYTES);
	fp->n++;
}

/* The fake port traps to the SM (trap 128, LID 0). */
static void fake_trap(struct fixture *f, struct fake_port *fp)
{
	struct ib_notice n = { .IsGeneric = 1, .Type = IB_NOTICE_TYPE_URGENT,
			       .ProducerType = IB_NOTICE_PRODUCER_CA,
			       .TrapNumber = IB_TRAP_LINK_STATE_CHANGE };
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_smp smp;

	memset(&smp, 0, sizeof(smp));
	smp.hdr.BaseVersion = 1;
	smp.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp.hdr.ClassVersion = 1;
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP);
	smp.hdr.TransactionID = 0x5150;
	smp.hdr.AttributeID = IB_SMP_ATTR_NOTICE;
	ib_notice_encode(&n, smp.SMPData);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, 0xffff, 0xffff);
	assert_int_equal(sib_mgmt_send(fp->link, &a, mad, &f->sm_link->local), 0);
}

/* The SM's last SMP to the fake port (a DR Get(NodeInfo) after a trap):
 * answered with port GUID guid, from link `via` (the fake port's own, or
 * another).  Returns the TID answered. */
static uint64_t fake_answer_node_info(struct fixture *f, struct fake_port *fp,
				      struct sib_link *via, uint64_t guid)
{
	struct ib_node_info ni = { .BaseVersion = 1, .ClassVersion = 1, .NodeType = 1,
				   .NumPorts = 1, .NodeGUID = guid - 1, .PortGUID = guid,
				   .LocalPortNum = 1 };
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_dr_smp dr;

	fp->n = 0;
	while (sib_link_poll(fp->link, 8, fake_rx, fp) > 0)
		;
	assert_true(fp->n >= 1);
	assert_int_equal(fp->mad[1], IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
	ib_dr_smp_decode(&dr, fp->mad);
	assert_int_equal(dr.AttributeID, IB_SMP_ATTR_NODE_INFO);
	dr.R = 1;
	dr.D = 1;
	dr.Method = IB_MAD_METHOD_GET_RESP & 0x7f;
	ib_node_info_encode(&ni, dr.SMPData);
	ib_dr_smp_encode(&dr, mad);
	sib_mad_addr_init(&a, SIB_QP0, 0xffff, 0xffff);
	assert_int_equal(sib_mgmt_send(via, &a, mad, &f->sm_link->local), 0);
	sib_sm_step(&f->sm, f->now);
	return dr.TransactionID;
}

/* IBA 13.4.6.4 matches responses by TID; TIDs are guessable, so the SM
 * also wants the answer from where the request went. */
static void a_response_counts_only_from_where_the_request_went(void **state)
{
	struct fixture *f = *state;
	struct fake_port fp = { 0 };
	struct sib_link *evil;
	struct sib_sm_port *p;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &fp.link), 0);
	assert_int_equal(sib_link_mem_open(f->hub, 4096, &evil), 0);
	fake_trap(f, &fp);
	sib_sm_step(&f->sm, f->now);
	/* The right TID from the wrong socket: no answer. */
	fake_answer_node_info(f, &fp, evil, 0x0200000000000b01ull);
	assert_int_equal(f->sm.resp_misrouted, 1);
	assert_null(sib_sm_port_by_guid(&f->sm, 0x0200000000000b01ull));
	p = port_by_ep(&f->sm, &fp.link->local);
	assert_non_null(p);
	assert_int_equal(p->state, SIB_SMP_GET_NODE_INFO);
	sib_link_close(evil);
	sib_link_close(fp.link);
}

/* A NodeInfo that claims a live port's GUID from another endpoint is
 * refused; the live port keeps its LID, its endpoint record, and its
 * place (it answers the SM's challenge). */
static void a_claim_of_a_live_ports_guid_is_refused(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[1];
	struct fake_port fp = { 0 };
	struct sib_sm_port *p;
	uint64_t guid;
	uint16_t lid;

	h[0] = hca_port_new(f, 0x0200000000000c00ull);
	settle(f, h, 1);
	guid = h[0]->node.ports[0].port_guid;
	lid = h[0]->node.ports[0].LID;
	assert_int_equal(sib_link_mem_open(f->hub, 4096, &fp.link), 0);
	fake_trap(f, &fp);
	sib_sm_step(&f->sm, f->now);
	fake_answer_node_info(f, &fp, fp.link, guid);
	assert_int_equal(f->sm.claims_refused, 1);
	p = sib_sm_port_by_guid(&f->sm, guid);
	assert_non_null(p);
	assert_true(sib_endpoint_equal(&p->ep, &h[0]->node.mgmt[0].link->local));
	assert_int_equal(p->lid, lid);
	/* The challenge is answered: the port stays, the claimant got nothing. */
	settle(f, h, 1);
	f->now += SIB_SM_TIMEOUT_NS;
	settle(f, h, 1);
	p = sib_sm_port_by_lid(&f->sm, lid);
	assert_non_null(p);
	assert_int_equal(p->guid, guid);
	assert_int_equal(p->state, SIB_SMP_ACTIVE);
	assert_false(p->challenged);
	assert_int_equal(sib_sm_known_ports(&f->sm), 1);
	assert_int_equal(h[0]->node.ports[0].LID, lid);
	sib_link_close(fp.link);
	sib_hca_free(h[0]);
}

/* The same port GUID at a new endpoint while the SM still holds the old
 * one: refused until the old endpoint fails the challenge, then it keeps
 * its LID. */
static void the_same_port_at_a_new_endpoint_keeps_its_lid(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[2] = { NULL, NULL };
	uint16_t lid;

	h[0] = hca_port_new(f, 0x0200000000000d00ull);
	settle(f, h, 1);
	lid = h[0]->node.ports[0].LID;
	sib_hca_free(h[0]); /* gone, but the SM has not swept it yet */
	h[0] = NULL;
	h[1] = hca_port_new(f, 0x0200000000000d00ull);
	settle(f, h, 2);
	assert_int_equal(f->sm.claims_refused, 1);
	assert_int_not_equal(h[1]->node.ports[0].state, SIB_PORT_ACTIVE);
	/* The challenge times out: the old endpoint is gone. */
	f->now += SIB_SM_TIMEOUT_NS;
	settle(f, h, 2);
	assert_null(sib_sm_port_by_lid(&f->sm, lid));
	/* The port traps again and gets its LID back at its new endpoint. */
	sib_port_up_start(&h[1]->node, 1);
	settle(f, h, 2);
	assert_int_equal(h[1]->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(h[1]->node.ports[0].LID, lid);
	sib_hca_free(h[1]);
}

struct lid_events {
	struct sib_event_sink sink;
	int lid_change, active;
};

static void count_lid_events(struct sib_event_sink *sink, enum sib_event ev, void *obj,
			     unsigned port)
{
	(void)obj;
	(void)port;
	((struct lid_events *)sink)->lid_change += ev == SIB_EV_LID_CHANGE;
	((struct lid_events *)sink)->active += ev == SIB_EV_PORT_ACTIVE;
}

/* The SM restarts (same address, same keys, nothing remembered): the ports
 * trap again, in another order, and each keeps the LID it reports. */
static void lids_survive_an_sm_restart(void **state)
{
	struct fixture *f = *state;
	struct lid_events ev = { .sink.deliver = count_lid_events };
	struct sib_hca_listener l;
	struct sib_hca *h[3];
	uint16_t lid[3];

	f->sm.m_key = 0x00c0ffee00c0ffeeull;
	f->sm.protect_bits = 1;
	for (unsigned i = 0; i < 3; i++)
		h[i] = hca_port_new(f, 0x0200000000000e00ull + 0x10 * i);
	settle(f, h, 3);
	for (unsigned i = 0; i < 3; i++) {
		lid[i] = h[i]->node.ports[0].LID;
		assert_int_equal(h[i]->node.mgmt[0].M_Key, 0x00c0ffee00c0ffeeull);
	}
	sib_hca_listen(h[2], &l, &ev.sink);
	sib_sm_fini(&f->sm);
	assert_int_equal(sib_sm_init(&f->sm, f->sm_link, 0x0200000000000200ull, f->now), 0);
	f->sm.m_key = 0x00c0ffee00c0ffeeull;
	f->sm.protect_bits = 1;
	for (int i = 2; i >= 0; i--) {
		sib_port_up_start(&h[i]->node, 1);
		settle(f, h, 3);
	}
	assert_int_equal(sib_sm_active_ports(&f->sm), 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(h[i]->node.ports[0].state, SIB_PORT_ACTIVE);
		assert_int_equal(h[i]->node.ports[0].LID, lid[i]);
		assert_non_null(sib_sm_port_by_lid(&f->sm, lid[i]));
	}
	assert_int_equal(ev.lid_change, 0);
	sib_hca_unlisten(h[2], &l);

	/* An SM with other keys (the key file lost) cannot renumber them. */
	sib_sm_fini(&f->sm);
	assert_int_equal(sib_sm_init(&f->sm, f->sm_link, 0x0200000000000300ull, f->now), 0);
	f->sm.m_key = 0x1234;
	f->sm.next_lid = 0x40;
	sib_port_up_start(&h[0]->node, 1);
	for (int i = 0; i < 8; i++) {
		settle(f, h, 3);
		f->now += SIB_SM_TIMEOUT_NS;
	}
	assert_int_equal(h[0]->node.ports[0].LID, lid[0]);
	assert_true(h[0]->node.mgmt[0].M_KeyViolations >= 1);
	for (unsigned i = 0; i < 3; i++)
		sib_hca_free(h[i]);
}

/* A LID the SM remembers (its LID cache) goes back to its GUID. */
static void a_remembered_lid_goes_back_to_its_guid(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[1];

	sib_sm_remember_lid(&f->sm, 0x0200000000000f01ull, 0x77);
	h[0] = hca_port_new(f, 0x0200000000000f00ull);
	settle(f, h, 1);
	assert_int_equal(h[0]->node.ports[0].LID, 0x77);
	sib_hca_free(h[0]);
}

/* Two SMs of one subnet (same SM_Key): one is master, the other stands by
 * and takes over when the master stops; an SM of another subnet is
 * ignored. */
static void a_second_sm_stands_by_and_takes_over(void **state)
{
	struct fixture *f = *state;
	struct sib_link *l2, *l3;
	struct sib_sm sm2, sm3;
	struct sib_sm *master, *standby;
	struct sib_hca *h[1];
	char list[2 * SIB_ENDPOINT_STRLEN + 2], e1[SIB_ENDPOINT_STRLEN], e2[SIB_ENDPOINT_STRLEN];
	struct sib_link *port_link;
	struct sib_hca_opts o = { 0 };
	uint16_t lid;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &l2), 0);
	assert_int_equal(sib_link_mem_open(f->hub, 4096, &l3), 0);
	assert_int_equal(sib_sm_init(&sm2, l2, 0x0200000000000900ull, f->now), 0);
	assert_int_equal(sib_sm_init(&sm3, l3, 0x0200000000000050ull, f->now), 0);
	f->sm.sm_key = sm2.sm_key = 0x5eed;
	sm3.sm_key = 0xf00d; /* another subnet, lower GUID: it would go first */
	f->sm.m_key = sm2.m_key = 0xabcd;
	assert_int_equal(sib_sm_add_peer(&f->sm, &l2->local), 0);
	assert_int_equal(sib_sm_add_peer(&f->sm, &l3->local), 0);
	assert_int_equal(sib_sm_add_peer(&sm2, &f->sm_link->local), 0);
	for (int i = 0; i < 20; i++) {
		sib_sm_step(&f->sm, f->now);
		sib_sm_step(&sm2, f->now);
		sib_sm_step(&sm3, f->now);
		f->now += SIB_SM_TIMEOUT_NS / 2;
	}
	/* f->sm has the lower GUID of the two of the subnet: it is master. */
	assert_int_equal(f->sm.state, IB_SM_STATE_MASTER);
	assert_int_equal(sm2.state, IB_SM_STATE_STANDBY);
	assert_int_equal(sm3.state, IB_SM_STATE_MASTER);
	master = &f->sm;
	standby = &sm2;

	/* A port configured with both addresses joins the master. */
	assert_int_equal(sib_link_mem_open(f->hub, 4096, &port_link), 0);
	snprintf(list, sizeof(list), "%s,%s", sib_endpoint_str(&f->sm_link->local, e1),
		 sib_endpoint_str(&l2->local, e2));
	o.link = port_link;
	o.sm = list;
	o.no_thread = o.no_bringup_wait = o.no_spawn = true;
	o.node_guid = 0x0200000000000a00ull;
	h[0] = sib_hca_new(&o);
	assert_non_null(h[0]);
	for (int i = 0; i < 20; i++) {
		sib_sm_step(master, f->now);
		sib_sm_step(standby, f->now);
		sib_progress_poll(h[0]);
	}
	assert_int_equal(h[0]->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(h[0]->node.mgmt[0].sm_index, 0);
	assert_int_equal(sib_sm_known_ports(standby), 0);
	lid = h[0]->node.ports[0].LID;

	/* The master stops.  The standby misses it for 3 sweeps and takes
	 * over; the port, silent too long, traps to both and follows. */
	for (int i = 0; i < 4 * (int)SIB_SM_MAX_MISSED && standby->state != IB_SM_STATE_MASTER; i++) {
		f->now += standby->sweep_ns;
		for (int k = 0; k < 4; k++) {
			sib_sm_step(standby, f->now);
			f->now += SIB_SM_TIMEOUT_NS;
		}
	}
	assert_int_equal(standby->state, IB_SM_STATE_MASTER);
	h[0]->node.mgmt[0].sm_silent = true;
	for (int round = 0; round < 3; round++) {
		sib_port_up_start(&h[0]->node, 1);
		for (int i = 0; i < 20; i++) {
			sib_sm_step(standby, f->now);
			sib_progress_poll(h[0]);
		}
	}
	assert_int_equal(h[0]->node.ports[0].LID, lid);
	assert_int_equal(h[0]->node.mgmt[0].sm_index, 1);
	assert_non_null(sib_sm_port_by_lid(standby, lid));

	sib_hca_free(h[0]);
	sib_sm_fini(&sm2);
	sib_sm_fini(&sm3);
	sib_link_close(l2);
	sib_link_close(l3);
}

struct got {
	int n;
	uint8_t mad[IB_MAD_BYTES];
};

static void got_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	struct ib_packet pkt;
	struct sib_mad_addr a;
	const uint8_t *mad;

	(void)from;
	assert_int_equal(ib_packet_decode(buf, len, &pkt), IB_PKT_OK);
	mad = sib_mgmt_parse(&pkt, &a);
	assert_non_null(mad);
	assert_int_equal(a.DestQP, 1);
	memcpy(g->mad, mad, IB_MAD_BYTES);
	g->n++;
}

static struct ib_service_record service(struct sib_hca *h, uint64_t sid, uint8_t tag)
{
	struct ib_service_record r;

	memset(&r, 0, sizeof(r));
	r.ServiceID = sid;
	memcpy(r.ServiceGID.raw, h->node.ports[0].GID[0], 16);
	r.ServiceP_Key = 0xffff;
	r.ServiceLease = 0xffffffffu;
	r.ServiceKey[0] = 0x5a;
	snprintf((char *)r.ServiceName, sizeof(r.ServiceName), "test %u", tag);
	r.ServiceData8[15] = tag;
	return r;
}

/* Sends an SA request from link, with SLID slid, to the SM. */
static void sa_send_tid(struct fixture *f, struct sib_link *link, uint16_t slid, uint64_t tid,
			uint8_t method, uint16_t attr, uint64_t comp, const uint8_t *rec,
			unsigned rec_len)
{
	struct ib_sa_mad m;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];

	memset(&m, 0, sizeof(m));
	m.hdr.BaseVersion = 1;
	m.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	m.hdr.ClassVersion = IB_SA_CLASS_VERSION;
	ib_mad_set_method(&m.hdr, method);
	m.hdr.TransactionID = tid;
	m.hdr.AttributeID = attr;
	m.ComponentMask = comp;
	if (rec)
		memcpy(m.SubnAdmData, rec, rec_len);
	ib_sa_mad_encode(&m, mad);
	sib_mad_addr_init(&a, SIB_QP1, SIB_SM_LID, slid);
	assert_int_equal(sib_mgmt_send(link, &a, mad, &f->sm_link->local), 0);
}

static void sa_send(struct fixture *f, struct sib_link *link, uint16_t slid, uint8_t method,
		    uint16_t attr, uint64_t comp, const uint8_t *rec, unsigned rec_len)
{
	sa_send_tid(f, link, slid, 77, method, attr, comp, rec, rec_len);
}

/* The statuses of the SA answers that reach a link. */
struct statuses {
	int n, ok, no_resources;
};

static void status_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct statuses *st = arg;
	struct got g = { 0 };
	struct ib_sa_mad m;

	got_rx(&g, buf, len, from);
	ib_sa_mad_decode(&m, g.mad);
	st->n++;
	st->ok += m.hdr.Status == 0;
	st->no_resources += m.hdr.Status == IB_SA_STATUS_NO_RESOURCES;
}

/* Sends an SA request from port as (its link, its LID: the SA believes
 * nothing else, sa.c), runs the SM, returns the response. */
static void sa_ask(struct fixture *f, struct sib_hca *as, uint8_t method, uint16_t attr,
		   uint64_t comp, const uint8_t *rec, unsigned rec_len, struct ib_sa_mad *resp)
{
	struct sib_link *link = as->node.mgmt[0].link;
	struct got g = { 0 };

	sa_send(f, link, as->node.ports[0].LID, method, attr, comp, rec, rec_len);
	sib_sm_step(&f->sm, f->now);
	assert_int_equal(sib_link_poll(link, 4, got_rx, &g), 1);
	ib_sa_mad_decode(resp, g.mad);
	assert_int_equal(resp->hdr.TransactionID, 77);
}

/*
 * The source check (sa.c): a request counts only from the endpoint of the
 * port its SLID names.  A stranger's socket and another port each ask the
 * SA to delete h[0]'s ServiceRecord, with h[0]'s SLID (and the record's
 * key): neither is answered, the record stays, both are counted.
 */
static void sa_believes_a_request_only_from_where_its_slid_lives(void **state)
{
	struct fixture *f = *state;
	uint8_t rec[IB_SERVICE_RECORD_BYTES];
	struct ib_service_record sr;
	struct sib_link *evil;
	struct sib_hca *h[2];
	struct ib_sa_mad m;
	struct got g = { 0 };
	uint16_t victim;

	h[0] = hca_port_new(f, 0x0200000000000e10ull);
	h[1] = hca_port_new(f, 0x0200000000000e20ull);
	settle(f, h, 2);
	victim = h[0]->node.ports[0].LID;
	sr = service(h[0], 0x1234, 1);
	ib_service_record_encode(&sr, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
	       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(f->sm.sa->nservices, 1);

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &evil), 0);
	sa_send(f, evil, victim, IB_MAD_METHOD_DELETE, IB_SA_ATTR_SERVICE_RECORD,
		IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_KEY, rec,
		sizeof(rec));
	sa_send(f, h[1]->node.mgmt[0].link, victim, IB_MAD_METHOD_DELETE,
		IB_SA_ATTR_SERVICE_RECORD,
		IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_KEY, rec,
		sizeof(rec));
	sib_sm_step(&f->sm, f->now);
	assert_int_equal(f->sm.sa_wrong_source, 2);
	assert_int_equal(f->sm.sa->nservices, 1);
	assert_int_equal(sib_link_poll(evil, 4, got_rx, &g), 0);
	assert_int_equal(sib_link_poll(h[1]->node.mgmt[0].link, 4, got_rx, &g), 0);
	assert_int_equal(sib_link_poll(h[0]->node.mgmt[0].link, 4, got_rx, &g), 0);
	/* From h[0] itself, the same Delete is taken. */
	sa_ask(f, h[0], IB_MAD_METHOD_DELETE, IB_SA_ATTR_SERVICE_RECORD,
	       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_KEY, rec,
	       sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(f->sm.sa->nservices, 0);
	sib_link_close(evil);
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

/*
 * sa_service.c: a ServiceRecord's key goes to its owner only, and an
 * address record ("SIB" ServiceID) stays with one host: another key's Set
 * is refused while a port of the first host holds it; the same key's (a
 * port of the same host) is taken.
 */
static void sa_keys_go_to_owners_and_an_address_to_one_host(void **state)
{
	struct fixture *f = *state;
	uint8_t rec[IB_SERVICE_RECORD_BYTES];
	struct ib_service_record sr, got;
	struct sib_hca *h[3];
	struct ib_sa_mad m;

	h[0] = hca_port_new(f, 0x0200000000001010ull);
	h[1] = hca_port_new(f, 0x0200000000001020ull);
	h[2] = hca_port_new(f, 0x0200000000001030ull);
	settle(f, h, 3);
	sr = service(h[0], SIB_SR_ADDRESS_SID_PREFIX | 0x040a4e0001ull, 1); /* 10.78.0.1 */
	memset(sr.ServiceKey, 0xa1, sizeof(sr.ServiceKey));		      /* host A's key */
	ib_service_record_encode(&sr, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
	       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	/* Its owner reads the key; another port reads zeros, and still finds
	 * the record by the key. */
	sa_ask(f, h[0], IB_MAD_METHOD_GET, IB_SA_ATTR_SERVICE_RECORD, IB_SR_COMP_SERVICE_ID, rec,
	       sizeof(rec), &m);
	ib_service_record_decode(&got, m.SubnAdmData);
	assert_int_equal(got.ServiceKey[0], 0xa1);
	sa_ask(f, h[1], IB_MAD_METHOD_GET, IB_SA_ATTR_SERVICE_RECORD,
	       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_KEY, rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	ib_service_record_decode(&got, m.SubnAdmData);
	for (int i = 0; i < 16; i++)
		assert_int_equal(got.ServiceKey[i], 0);
	/* Another host's port (another key) claims the address: refused. */
	memcpy(sr.ServiceGID.raw, h[1]->node.ports[0].GID[0], 16);
	memset(sr.ServiceKey, 0xb2, sizeof(sr.ServiceKey));
	ib_service_record_encode(&sr, rec);
	sa_ask(f, h[1], IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
	       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, IB_SA_STATUS_REQ_DENIED);
	assert_int_equal(f->sm.sa->address_claims_refused, 1);
	/* A port of the same host (the same key) registers it too. */
	memcpy(sr.ServiceGID.raw, h[2]->node.ports[0].GID[0], 16);
	memset(sr.ServiceKey, 0xa1, sizeof(sr.ServiceKey));
	ib_service_record_encode(&sr, rec);
	sa_ask(f, h[2], IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
	       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(f->sm.sa->nservices, 2);
	for (int i = 0; i < 3; i++)
		sib_hca_free(h[i]);
}

/* GetTable answers that wait for ACKs are bounded (sa.h): a requester
 * that never ACKs has SIB_SA_TRANSFERS_PER_SOURCE on their way, its next
 * GetTable gets ERR_NO_RESOURCES, and another port is still answered. */
static void sa_transfers_nobody_acks_are_bounded(void **state)
{
	struct fixture *f = *state;
	uint8_t rec[IB_SERVICE_RECORD_BYTES];
	struct ib_service_record sr;
	struct statuses st = { 0 };
	struct sib_hca *h[2];
	struct ib_sa_mad m;

	h[0] = hca_port_new(f, 0x0200000000000f10ull);
	h[1] = hca_port_new(f, 0x0200000000000f20ull);
	settle(f, h, 2);
	/* Two records: a table of 352 bytes, two RMPP segments. */
	for (int i = 0; i < 2; i++) {
		sr = service(h[0], 0x4000 + (uint64_t)i, (uint8_t)i);
		ib_service_record_encode(&sr, rec);
		sa_ask(f, h[0], IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
		       IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, rec, sizeof(rec), &m);
		assert_int_equal(m.hdr.Status, 0);
	}
	memset(rec, 0, sizeof(rec));
	for (uint64_t tid = 1; tid <= SIB_SA_TRANSFERS_PER_SOURCE + 1; tid++)
		sa_send_tid(f, h[0]->node.mgmt[0].link, h[0]->node.ports[0].LID, tid,
			    IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_SERVICE_RECORD, 0, rec, sizeof(rec));
	sib_sm_step(&f->sm, f->now);
	while (sib_link_poll(h[0]->node.mgmt[0].link, 16, status_rx, &st) > 0)
		;
	assert_int_equal(st.n, SIB_SA_TRANSFERS_PER_SOURCE + 1);
	assert_int_equal(st.ok, SIB_SA_TRANSFERS_PER_SOURCE); /* each a first segment */
	assert_int_equal(st.no_resources, 1);
	assert_int_equal(f->sm.sa->ntransfers, SIB_SA_TRANSFERS_PER_SOURCE);
	assert_int_equal(f->sm.sa->transfers_refused, 1);
	assert_int_equal(f->sm.sa->transfer_bytes,
			 SIB_SA_TRANSFERS_PER_SOURCE * 2 * IB_SERVICE_RECORD_BYTES);
	sa_ask(f, h[1], IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_SERVICE_RECORD, 0, rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(f->sm.sa->ntransfers, SIB_SA_TRANSFERS_PER_SOURCE + 1);
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

/* Sends count SA Gets of endpoint record rec from h's link, in rounds the
 * memory link holds (256 a link), each followed by an SM step; the
 * answers are counted in st. */
static void flood_sa(struct fixture *f, struct sib_hca *h, const uint8_t *rec, unsigned count,
		     struct statuses *st)
{
	struct sib_link *link = h->node.mgmt[0].link;

	for (unsigned sent = 0; sent < count;) {
		unsigned n = count - sent < 200 ? count - sent : 200;

		for (unsigned i = 0; i < n; i++, sent++)
			sa_send_tid(f, link, h->node.ports[0].LID, sent + 1, IB_MAD_METHOD_GET,
				    SIB_SA_ATTR_ENDPOINT_RECORD, SIB_EPR_COMP_LID, rec,
				    SIB_ENDPOINT_RECORD_BYTES);
		assert_int_equal(sib_sm_step(&f->sm, f->now), n);
		while (sib_link_poll(link, 64, status_rx, st) > 0)
			;
	}
}

/*
 * sm_admit.h: a port that floods the SM gets SIB_SM_SOURCE_BURST requests
 * through at once and SIB_SM_SOURCE_RATE a second after that; the rest
 * are dropped unparsed and counted.  One pass of the SM reads at most
 * SIB_SM_RX_BUDGET.  Meanwhile the SA answers another port, and a new
 * port comes up.
 */
static void a_flooding_port_spends_only_its_own_share(void **state)
{
	struct fixture *f = *state;
	uint8_t rec[SIB_ENDPOINT_RECORD_BYTES];
	struct sib_endpoint_record q;
	const unsigned extra = 100;
	struct statuses st = { 0 };
	struct sib_hca *h[3];
	struct ib_sa_mad m;

	h[0] = hca_port_new(f, 0x0200000000000a10ull);
	h[1] = hca_port_new(f, 0x0200000000000a20ull);
	settle(f, h, 2);
	memset(&q, 0, sizeof(q));
	q.LID = h[1]->node.ports[0].LID;
	sib_endpoint_record_encode(&q, rec);
	f->now += SEC; /* what the ports' bring-up spent is back */
	flood_sa(f, h[0], rec, SIB_SM_SOURCE_BURST + extra, &st);
	assert_int_equal(st.n, SIB_SM_SOURCE_BURST);
	assert_int_equal(st.ok, SIB_SM_SOURCE_BURST);
	assert_int_equal(f->sm.admit.over_rate, extra);

	/* The flooder's share is spent; the others' is not. */
	sa_ask(f, h[1], IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD, SIB_EPR_COMP_LID, rec,
	       sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	h[2] = hca_port_new(f, 0x0200000000000a30ull);
	settle(f, h + 2, 1);
	assert_int_not_equal(h[2]->node.ports[0].LID, 0);
	assert_int_equal(h[2]->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(f->sm.admit.over_rate, extra);

	/* Half a second on, half a second's worth gets through again. */
	f->now += SEC / 2;
	st = (struct statuses){ 0 };
	flood_sa(f, h[0], rec, SIB_SM_SOURCE_RATE, &st);
	assert_int_equal(st.ok, SIB_SM_SOURCE_RATE / 2);
	assert_int_equal(f->sm.admit.over_rate, extra + SIB_SM_SOURCE_RATE / 2);
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
	sib_hca_free(h[2]);
}

static void sa_path_record_by_dlid_and_dgid(void **state)
{
	struct fixture *f = *state;
	struct sib_hca *h[2];
	struct ib_path_record q, pr;
	struct ib_sa_mad r;
	struct ib_rmpp_hdr *rm = &r.rmpp;
	uint8_t rec[IB_PATH_RECORD_BYTES];

	h[0] = hca_port_new(f, 0x0200000000000500ull);
	h[1] = hca_port_new(f, 0x0200000000000600ull);
	settle(f, h, 2);

	/* GetTable by DLID, source = the requester (LRH SLID). */
	memset(&q, 0, sizeof(q));
	q.DLID = h[1]->node.ports[0].LID;
	ib_path_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_PATH_RECORD,
	       IB_PR_COMP_DLID, rec, sizeof(rec), &r);
	assert_int_equal(ib_mad_method(&r.hdr), IB_MAD_METHOD_GET_TABLE_RESP);
	assert_int_equal(r.hdr.Status, 0);
	assert_int_equal(rm->RMPPType, IB_RMPP_TYPE_DATA);
	assert_int_equal(rm->RMPPFlags, IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_FIRST | IB_RMPP_FLAG_LAST);
	assert_int_equal(rm->Data1, 1);
	assert_int_equal(rm->Data2, IB_SA_CLASS_HDR_BYTES + IB_PATH_RECORD_BYTES);
	assert_int_equal(r.AttributeOffset, IB_PATH_RECORD_BYTES / 8);
	ib_path_record_decode(&pr, r.SubnAdmData);
	assert_int_equal(pr.DLID, h[1]->node.ports[0].LID);
	assert_int_equal(pr.SLID, h[0]->node.ports[0].LID);
	assert_memory_equal(pr.DGID.raw, h[1]->node.ports[0].GID[0], 16);
	assert_memory_equal(pr.SGID.raw, h[0]->node.ports[0].GID[0], 16);
	assert_int_equal(pr.MTU, IB_MTU_4096);
	assert_int_equal(pr.P_Key, 0xffff);
	assert_int_equal(pr.SL, 0);
	assert_int_equal(pr.Rate, SIB_SM_RATE);
	assert_int_equal(pr.PacketLifeTime, SIB_SM_PACKET_LIFE_TIME);

	/* Get by DGID and SGID. */
	memset(&q, 0, sizeof(q));
	memcpy(q.DGID.raw, h[0]->node.ports[0].GID[0], 16);
	memcpy(q.SGID.raw, h[1]->node.ports[0].GID[0], 16);
	ib_path_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD,
	       IB_PR_COMP_DGID | IB_PR_COMP_SGID, rec, sizeof(rec), &r);
	assert_int_equal(ib_mad_method(&r.hdr), IB_MAD_METHOD_GET_RESP);
	assert_int_equal(r.hdr.Status, 0);
	ib_path_record_decode(&pr, r.SubnAdmData);
	assert_int_equal(pr.DLID, h[0]->node.ports[0].LID);
	assert_int_equal(pr.SLID, h[1]->node.ports[0].LID);

	/* Nobody at that LID: Get says NO_RECORDS, GetTable an empty table. */
	memset(&q, 0, sizeof(q));
	q.DLID = 0x999;
	ib_path_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD,
	       IB_PR_COMP_DLID, rec, sizeof(rec), &r);
	assert_int_equal(r.hdr.Status, IB_SA_STATUS_NO_RECORDS);
	sa_ask(f, h[0], IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_PATH_RECORD,
	       IB_PR_COMP_DLID, rec, sizeof(rec), &r);
	assert_int_equal(r.hdr.Status, 0);
	assert_int_equal(r.rmpp.Data2, IB_SA_CLASS_HDR_BYTES);
	/* No destination named at all. */
	sa_ask(f, h[0], IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD, 0, rec,
	       sizeof(rec), &r);
	assert_int_equal(r.hdr.Status, IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS);
	/* An attribute the SA does not serve. */
	sa_ask(f, h[0], IB_MAD_METHOD_GET, IB_SA_ATTR_LINK_RECORD, 0, NULL,
	       0, &r);
	assert_int_equal(r.hdr.Status, IB_MAD_STATUS_UNSUP_METHOD_ATTR);

	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

static void sa_endpoint_record_maps_lid_and_gid_to_the_udp_endpoint(void **state)
{
	struct fixture *f = *state;
	struct sib_endpoint_record q, r;
	struct sib_hca *h[1];
	struct ib_sa_mad m;
	uint8_t rec[SIB_ENDPOINT_RECORD_BYTES];

	h[0] = hca_port_new(f, 0x0200000000000700ull);
	settle(f, h, 1);
	memset(&q, 0, sizeof(q));
	q.LID = h[0]->node.ports[0].LID;
	sib_endpoint_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD, SIB_EPR_COMP_LID,
	       rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(sib_endpoint_record_decode(&r, m.SubnAdmData), 0);
	assert_int_equal(r.LID, h[0]->node.ports[0].LID);
	assert_memory_equal(r.GID, h[0]->node.ports[0].GID[0], 16);
	assert_true(sib_endpoint_equal(&r.ep, &h[0]->node.mgmt[0].link->local));
	assert_int_equal(r.ep.family, SIB_AF_INET);

	memset(&q, 0, sizeof(q));
	memcpy(q.GID, h[0]->node.ports[0].GID[0], 16);
	sib_endpoint_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD, SIB_EPR_COMP_GID,
	       rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(sib_endpoint_record_decode(&r, m.SubnAdmData), 0);
	assert_int_equal(r.LID, h[0]->node.ports[0].LID);

	q.LID = 0x777;
	sib_endpoint_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD, SIB_EPR_COMP_LID,
	       rec, sizeof(rec), &m);
	assert_int_equal(m.hdr.Status, IB_SA_STATUS_NO_RECORDS);
	sib_hca_free(h[0]);
}

/*
 * The port counts itself ACTIVE as soon as the SM's Set arrives; until the
 * SM sees the GetResp, a peer that already has the port's LID must still
 * find it by LID (a miss is cached and dooms the peer's first QP).
 */
static void sa_finds_a_port_told_active_before_its_getresp_arrives(void **state)
{
	struct fixture *f = *state;
	struct sib_endpoint_record q, r;
	struct ib_path_record pq;
	struct sib_hca *h[2];
	struct sib_sm_port *p;
	struct ib_sa_mad m;
	uint8_t rec[IB_PATH_RECORD_BYTES];

	h[0] = hca_port_new(f, 0x0200000000000800ull);
	h[1] = hca_port_new(f, 0x0200000000000900ull);
	settle(f, h, 2);
	p = NULL;
	for (unsigned i = 0; i < f->sm.nports; i++)
		if (f->sm.ports[i].state != SIB_SMP_FREE && f->sm.ports[i].lid == h[1]->node.ports[0].LID)
			p = &f->sm.ports[i];
	assert_non_null(p);
	p->state = SIB_SMP_SET_ACTIVE; /* its GetResp not yet received */
	memset(&q, 0, sizeof(q));
	q.LID = h[1]->node.ports[0].LID;
	sib_endpoint_record_encode(&q, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD,
	       SIB_EPR_COMP_LID, rec, SIB_ENDPOINT_RECORD_BYTES, &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(sib_endpoint_record_decode(&r, m.SubnAdmData), 0);
	assert_int_equal(r.LID, h[1]->node.ports[0].LID);
	memset(&pq, 0, sizeof(pq));
	pq.DLID = h[1]->node.ports[0].LID;
	ib_path_record_encode(&pq, rec);
	sa_ask(f, h[0], IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD,
	       IB_PR_COMP_DLID, rec, IB_PATH_RECORD_BYTES, &m);
	assert_int_equal(m.hdr.Status, 0);
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

/* The SM on a thread of its own, with the real clock, for blocking
 * clients. */
struct sm_thread {
	struct fixture *f;
	pthread_mutex_t lock;
	bool stop;
};

static void *sm_main(void *arg)
{
	struct sm_thread *t = arg;

	for (;;) {
		pthread_mutex_lock(&t->lock);
		if (t->stop) {
			pthread_mutex_unlock(&t->lock);
			return NULL;
		}
		sib_sm_step(&t->f->sm, t->f->now);
		pthread_mutex_unlock(&t->lock);
		usleep(200);
	}
}

static void sa_client_resolves_and_caches(void **state)
{
	struct fixture *f = *state;
	struct sm_thread t = { .f = f, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sib_endpoint ep;
	struct sib_hca *h[2];
	pthread_t th;
	uint16_t lid = 0;
	uint64_t sent;

	h[0] = hca_port_new(f, 0x0200000000000800ull);
	h[1] = hca_port_new(f, 0x0200000000000900ull);
	settle(f, h, 2);
	assert_int_equal(h[1]->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(pthread_create(&th, NULL, sm_main, &t), 0);

	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, h[1]->node.ports[0].LID, &ep), 0);
	assert_true(sib_endpoint_equal(&ep, &h[1]->node.mgmt[0].link->local));
	sent = h[0]->node.sa.sent;
	/* Cached: the second lookup sends nothing. */
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, h[1]->node.ports[0].LID, &ep), 0);
	assert_int_equal(h[0]->node.sa.sent, sent);
	assert_true(h[0]->node.sa.hits >= 1);
	assert_int_equal(sib_sa_resolve_gid(&h[0]->node, 1, h[1]->node.ports[0].GID[0], &ep, &lid), 0);
	assert_int_equal(lid, h[1]->node.ports[0].LID);
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, 0x0abc, &ep), -ENOENT);
	/* Our own LID needs no SM. */
	sent = h[0]->node.sa.sent;
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, h[0]->node.ports[0].LID, &ep), 0);
	assert_true(sib_endpoint_equal(&ep, &h[0]->node.mgmt[0].link->local));
	assert_int_equal(h[0]->node.sa.sent, sent);
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, 0, &ep), -EINVAL);
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 2, 5, &ep), -EINVAL);

	pthread_mutex_lock(&t.lock);
	t.stop = true;
	pthread_mutex_unlock(&t.lock);
	pthread_join(th, NULL);
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

static unsigned lids_resolved;
static uint16_t last_lid_resolved;

static void count_lid_resolved(struct sib_node *node, unsigned port_num, uint16_t lid)
{
	(void)node;
	assert_int_equal(port_num, 1);
	__atomic_add_fetch(&lids_resolved, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&last_lid_resolved, lid, __ATOMIC_RELAXED);
}

/* The data path waits for LIDs (node ops lid_resolved): every answer the
 * SA client caches for a LID, from a resolve or a background lookup, found
 * or not, is told; cache hits and GID resolves are not. */
static void the_owner_hears_of_every_lid_the_sa_client_caches(void **state)
{
	struct fixture *f = *state;
	struct sm_thread t = { .f = f, .lock = PTHREAD_MUTEX_INITIALIZER };
	const struct sib_node_ops *hca_ops;
	struct sib_node_ops ops;
	struct sib_endpoint ep;
	struct sib_hca *h[2];
	pthread_t th;
	uint16_t lid;

	h[0] = hca_port_new(f, 0x0200000000000d10ull);
	h[1] = hca_port_new(f, 0x0200000000000d20ull);
	settle(f, h, 2);
	hca_ops = h[0]->node.ops;
	ops = *hca_ops;
	ops.lid_resolved = count_lid_resolved;
	h[0]->node.ops = &ops;
	lids_resolved = 0;
	lid = h[1]->node.ports[0].LID;
	assert_int_equal(pthread_create(&th, NULL, sm_main, &t), 0);

	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, lid, &ep), 0);
	assert_int_equal(lids_resolved, 1);
	assert_int_equal(last_lid_resolved, lid);
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, lid, &ep), 0); /* a hit */
	assert_int_equal(sib_sa_resolve_gid(&h[0]->node, 1, h[1]->node.ports[0].GID[0], &ep, &lid),
			 0);
	assert_int_equal(lids_resolved, 1);
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, 0x0bcd, &ep), -ENOENT);
	assert_int_equal(lids_resolved, 2);
	assert_int_equal(last_lid_resolved, 0x0bcd);
	/* In the background: the answer comes on the thread that drives the
	 * node (here: this one). */
	assert_int_equal(sib_sa_lookup_lid(&h[0]->node, 1, 0x0bce, false, &ep), -EAGAIN);
	for (int i = 0; i < 5000 && __atomic_load_n(&lids_resolved, __ATOMIC_RELAXED) < 3; i++) {
		sib_progress_poll(h[0]);
		usleep(1000);
	}
	assert_int_equal(lids_resolved, 3);
	assert_int_equal(last_lid_resolved, 0x0bce);
	assert_int_equal(sib_sa_lookup_lid(&h[0]->node, 1, 0x0bce, false, &ep), -ENOENT);

	pthread_mutex_lock(&t.lock);
	t.stop = true;
	pthread_mutex_unlock(&t.lock);
	pthread_join(th, NULL);
	h[0]->node.ops = hca_ops;
	sib_hca_free(h[0]);
	sib_hca_free(h[1]);
}

static void sa_client_times_out_without_an_sm_and_refuses_inactive_ports(void **state)
{
	struct fixture *f = *state;
	struct sib_endpoint ep;
	struct sib_hca *h[1];

	h[0] = hca_port_new(f, 0x0200000000000a00ull);
	/* Not configured yet: the port is INIT. */
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, 5, &ep), -ENETDOWN);
	settle(f, h, 1);
	/* The SM no longer runs (nobody steps it): the query times out. */
	assert_int_equal(sib_sa_resolve_lid(&h[0]->node, 1, 5, &ep), -ETIMEDOUT);
	assert_int_equal(h[0]->node.sa.timeouts, 1);
	sib_hca_free(h[0]);
}

/* What sib_sa_query answered, from its own thread. */
struct sa_call {
	struct sib_hca *h;
	int rc;
	struct sib_sa_answer ans;
	bool done;
};

static void *sa_call_main(void *arg)
{
	struct sa_call *c = arg;
	uint8_t rec[IB_SERVICE_RECORD_BYTES] = { 0 };

	c->rc = sib_sa_query(&c->h->node, 1, IB_MAD_METHOD_GET, IB_SA_ATTR_SERVICE_RECORD,
			     IB_SR_COMP_SERVICE_ID, rec, sizeof(rec), &c->ans);
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Keeps the last SA-class MAD that reached a link (SMPs are skipped). */
static void sa_mad_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	struct ib_packet pkt;
	struct sib_mad_addr a;
	const uint8_t *mad;

	(void)from;
	if (ib_packet_decode(buf, len, &pkt) != IB_PKT_OK || !(mad = sib_mgmt_parse(&pkt, &a)) ||
	    mad[1] != IB_MGMT_CLASS_SUBN_ADM)
		return;
	memcpy(g->mad, mad, IB_MAD_BYTES);
	g->n++;
}

/* A GetResp to the query in g->mad, status `status`, from link `via`. */
static void sa_answer_from(struct sib_hca *h, struct sib_link *via, const struct got *g,
			   uint16_t status)
{
	struct ib_sa_mad m;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];

	ib_sa_mad_decode(&m, g->mad);
	ib_mad_set_method(&m.hdr, IB_MAD_METHOD_GET_RESP);
	m.hdr.Status = status;
	ib_sa_mad_encode(&m, mad);
	sib_mad_addr_init(&a, SIB_QP1, h->node.ports[0].LID, SIB_SM_LID);
	assert_int_equal(sib_mgmt_send(via, &a, mad, &h->node.mgmt[0].link->local), 0);
}

/* SA queries go only to the SM that verified itself to the port (never to
 * an unset address: without one the query fails once it waited as long as
 * a query may), and only that SM's answers count: the right TID from
 * another socket is dropped and counted. */
static void sa_queries_go_to_and_come_from_the_verified_sm_only(void **state)
{
	struct fixture *f = *state;
	struct sib_link *evil;
	struct sib_endpoint saved;
	struct ib_path_record pr;
	struct sa_call c = { 0 };
	struct got g = { 0 };
	struct sib_hca *h[1];
	uint64_t sent, foreign;
	pthread_t th;

	h[0] = hca_port_new(f, 0x0200000000000c00ull);
	settle(f, h, 1);
	assert_int_equal(h[0]->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_true(h[0]->node.mgmt[0].sm_heard);

	/* ACTIVE, but no SM has verified itself (and the SM is not run):
	 * nothing is sent and the query fails. */
	pthread_mutex_lock(&h[0]->node.lock);
	saved = h[0]->node.mgmt[0].sm_ep;
	h[0]->node.mgmt[0].sm_heard = false;
	memset(&h[0]->node.mgmt[0].sm_ep, 0, sizeof(saved));
	pthread_mutex_unlock(&h[0]->node.lock);
	while (sib_link_poll(f->sm_link, 16, sa_mad_rx, &g) > 0)
		;
	g.n = 0;
	sent = h[0]->node.sa.sent;
	c.h = h[0];
	sa_call_main(&c);
	assert_int_equal(c.rc, -ENETDOWN);
	assert_int_equal(sib_sa_path_record(&h[0]->node, 1, h[0]->node.ports[0].GID[0],
					    h[0]->node.ports[0].GID[0], 0, 0, &pr),
			 -ENETDOWN);
	assert_int_equal(h[0]->node.sa.sent, sent);
	while (sib_link_poll(f->sm_link, 16, sa_mad_rx, &g) > 0)
		;
	assert_int_equal(g.n, 0);

	/* Verified again: the query goes to the SM's endpoint. */
	pthread_mutex_lock(&h[0]->node.lock);
	h[0]->node.mgmt[0].sm_ep = saved;
	h[0]->node.mgmt[0].sm_heard = true;
	pthread_mutex_unlock(&h[0]->node.lock);
	assert_int_equal(sib_link_mem_open(f->hub, 4096, &evil), 0);
	foreign = h[0]->node.sa.foreign;
	memset(&c, 0, sizeof(c));
	c.h = h[0];
	assert_int_equal(pthread_create(&th, NULL, sa_call_main, &c), 0);
	while (!g.n)
		sib_link_poll(f->sm_link, 16, sa_mad_rx, &g);
	/* The answer with the right TID from a stranger: dropped, counted,
	 * and the query still waits (it retries with the same TID). */
	sa_answer_from(h[0], evil, &g, 0);
	while (__atomic_load_n(&h[0]->node.sa.foreign, __ATOMIC_RELAXED) == foreign &&
	       !__atomic_load_n(&c.done, __ATOMIC_ACQUIRE))
		usleep(100);
	assert_int_equal(h[0]->node.sa.foreign, foreign + 1);
	assert_false(__atomic_load_n(&c.done, __ATOMIC_ACQUIRE));
	/* The SM's own answer (no records) is the one the query returns. */
	sa_answer_from(h[0], f->sm_link, &g, IB_SA_STATUS_NO_RECORDS);
	pthread_join(th, NULL);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.ans.status, IB_SA_STATUS_NO_RECORDS);
	sib_sa_answer_free(&c.ans);
	sib_link_close(evil);
	sib_hca_free(h[0]);
}


static void sa_service_records_register_find_and_leave(void **state)
{
	struct fixture *f = *state;
	struct sm_thread t = { .f = f, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct ib_service_record r, q, *out;
	struct sib_sa_answer ans;
	uint8_t rec[IB_SERVICE_RECORD_BYTES];
	struct sib_hca *h[2];
	pthread_t th;
	unsigned n;

	h[0] = hca_port_new(f, 0x0200000000000a00ull);
	h[1] = hca_port_new(f, 0x0200000000000b00ull);
	settle(f, h, 2);
	assert_int_equal(pthread_create(&th, NULL, sm_main, &t), 0);

	/* Five records: a GetTable of all of them is five RMPP segments. */
	for (uint8_t i = 1; i <= 5; i++) {
		r = service(h[0], 0x1000 + (i % 2), i);
		r.ServiceP_Key = (uint16_t)(0xff00 | i);
		assert_int_equal(sib_sa_service_set(&h[0]->node, 1, &r), 0);
	}
	memset(&q, 0, sizeof(q));
	assert_int_equal(sib_sa_service_table(&h[1]->node, 1, &q, 0, &out, &n), 0);
	assert_int_equal(n, 5);
	for (unsigned i = 0; i < n; i++)
		assert_memory_equal(out[i].ServiceGID.raw, h[0]->node.ports[0].GID[0], 16);
	free(out);
	/* By a ServiceData8 byte: one. */
	q.ServiceData8[15] = 3;
	assert_int_equal(sib_sa_service_table(&h[1]->node, 1, &q, IB_SA_COMP(7 + 15), &out, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal((char *)out[0].ServiceName, "test 3");
	free(out);
	/* By ServiceID: the odd ones. */
	q.ServiceID = 0x1001;
	assert_int_equal(sib_sa_service_table(&h[1]->node, 1, &q, IB_SR_COMP_SERVICE_ID, &out, &n),
			 0);
	assert_int_equal(n, 3);
	free(out);
	/* Get must find exactly one. */
	ib_service_record_encode(&q, rec);
	assert_int_equal(sib_sa_query(&h[1]->node, 1, IB_MAD_METHOD_GET, IB_SA_ATTR_SERVICE_RECORD,
				      IB_SR_COMP_SERVICE_ID, rec, sizeof(rec), &ans),
			 0);
	assert_int_equal(ans.status, IB_SA_STATUS_TOO_MANY_RECORDS);
	sib_sa_answer_free(&ans);
	/* Someone else's GID, or the wrong key: refused. */
	r = service(h[0], 0x2000, 9);
	assert_int_equal(sib_sa_service_set(&h[1]->node, 1, &r), -EACCES);
	r = service(h[0], 0x1001, 1);
	r.ServiceP_Key = 0xff01;
	r.ServiceKey[0] = 0x77;
	assert_int_equal(sib_sa_service_delete(&h[0]->node, 1, &r), -EACCES);
	r.ServiceKey[0] = 0x5a;
	assert_int_equal(sib_sa_service_delete(&h[0]->node, 1, &r), 0);
	assert_int_equal(sib_sa_service_delete(&h[0]->node, 1, &r), -ENOENT);
	memset(&q, 0, sizeof(q));
	assert_int_equal(sib_sa_service_table(&h[1]->node, 1, &q, 0, &out, &n), 0);
	assert_int_equal(n, 4);
	free(out);

	/* A lease of 1 s ends; the port's own records leave with it. */
	pthread_mutex_lock(&t.lock);
	r = service(h[1], 0x3000, 1);
	r.ServiceLease = 1;
	pthread_mutex_unlock(&t.lock);
	assert_int_equal(sib_sa_service_set(&h[1]->node, 1, &r), 0);
	assert_int_equal(f->sm.sa->nservices, 5);
	pthread_mutex_lock(&t.lock);
	f->now += 2 * SEC;
	pthread_mutex_unlock(&t.lock);
	while (1) {
		pthread_mutex_lock(&t.lock);
		n = f->sm.sa->nservices;
		pthread_mutex_unlock(&t.lock);
		if (n == 4)
			break;
		usleep(1000);
	}
	pthread_mutex_lock(&t.lock);
	t.stop = true;
	pthread_mutex_unlock(&t.lock);
	pthread_join(th, NULL);
	sib_hca_free(h[0]);
	h[0] = NULL;
	sweep_until(f, h, 2, 1);
	assert_int_equal(f->sm.sa->nservices, 0);
	sib_hca_free(h[1]);
}

/* ---------------------------------------------------------------- on a fabric */

static void fabric_sm_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	sib_sm_rx(arg, buf, len, from);
}

/* An SA request through the "switch" link sw, with SLID slid; the SM
 * hears it as sm_fabric.c does (sib_sm_rx, no sweep of its own); the
 * answers that came back are in st, the last one in *resp. */
static void fabric_ask(struct fixture *f, struct sib_link *sw, uint16_t slid, uint64_t tid,
		       uint8_t method, uint16_t attr, uint64_t comp, const uint8_t *rec,
		       unsigned rec_len, struct statuses *st)
{
	sa_send_tid(f, sw, slid, tid, method, attr, comp, rec, rec_len);
	while (sib_link_poll(f->sm_link, 16, fabric_sm_rx, &f->sm) > 0)
		;
	sib_link_flush(f->sm_link);
	while (sib_link_poll(sw, 16, status_rx, st) > 0)
		;
}

static void port_gid(uint64_t guid, uint8_t gid[16])
{
	struct sib_sm_port p = { .guid = guid };

	sib_sm_port_gid(&p, gid);
}

/*
 * On a fabric (sm.h: fabric) the sweeps' ports are the SA's, all behind
 * the switch's endpoint, and the SLID names the requester: a PathRecord
 * between two found ports (the smaller MTU), nothing for a LID no sweep
 * found, GetTable answers in flight bounded per
 * LID behind the one endpoint, and a port forgotten after 3 sweeps that
 * missed it (not after 2).
 */
static void sa_on_a_fabric_serves_the_ports_its_sweeps_found(void **state)
{
	struct fixture *f = *state;
	const uint64_t ga = 0x0200000000000a01ull, gb = 0x0200000000000b01ull;
	uint8_t rec[IB_SERVICE_RECORD_BYTES], prec[IB_PATH_RECORD_BYTES];
	struct ib_path_record q, pr;
	struct ib_service_record sr;
	struct statuses st = { 0 };
	struct got g = { 0 };
	struct ib_sa_mad m;
	struct sib_link *sw;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &sw), 0);
	f->sm.fabric = true;
	assert_int_equal(sib_sm_port_found(&f->sm, ga, ga - 1, 5, IB_MTU_4096, &sw->local), 0);
	assert_int_equal(sib_sm_port_found(&f->sm, gb, gb - 1, 6, IB_MTU_2048, &sw->local), 0);
	sib_sm_sweep_end(&f->sm);

	/* A PathRecord from LID 5 to LID 6. */
	memset(&q, 0, sizeof(q));
	q.DLID = 6;
	ib_path_record_encode(&q, prec);
	sa_send(f, sw, 5, IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD, IB_PR_COMP_DLID, prec,
		sizeof(prec));
	while (sib_link_poll(f->sm_link, 16, fabric_sm_rx, &f->sm) > 0)
		;
	sib_link_flush(f->sm_link);
	assert_int_equal(sib_link_poll(sw, 4, got_rx, &g), 1);
	ib_sa_mad_decode(&m, g.mad);
	assert_int_equal(m.hdr.Status, 0);
	ib_path_record_decode(&pr, m.SubnAdmData);
	assert_int_equal(pr.SLID, 5);
	assert_int_equal(pr.DLID, 6);
	assert_int_equal(pr.MTU, IB_MTU_2048);

	/* From a LID no sweep found: dropped and counted. */
	fabric_ask(f, sw, 7, 1, IB_MAD_METHOD_GET, IB_SA_ATTR_PATH_RECORD, IB_PR_COMP_DLID, prec,
		   sizeof(prec), &st);
	assert_int_equal(st.n, 0);
	assert_int_equal(f->sm.sa_wrong_source, 1);

	/* Two ServiceRecords of port 5 (its own GID): a two-segment table. */
	for (int i = 0; i < 2; i++) {
		memset(&sr, 0, sizeof(sr));
		sr.ServiceID = 0x4000 + (uint64_t)i;
		port_gid(ga, sr.ServiceGID.raw);
		sr.ServiceP_Key = 0xffff;
		sr.ServiceLease = 0xffffffffu;
		ib_service_record_encode(&sr, rec);
		memset(&st, 0, sizeof(st));
		fabric_ask(f, sw, 5, 10 + (uint64_t)i, IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
			   IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, rec, sizeof(rec), &st);
		assert_int_equal(st.ok, 1);
	}
	/* LID 5's GetTables nobody ACKs: its share, then refused ... */
	memset(rec, 0, sizeof(rec));
	memset(&st, 0, sizeof(st));
	for (uint64_t tid = 20; tid < 20 + SIB_SA_TRANSFERS_PER_SOURCE + 1; tid++)
		fabric_ask(f, sw, 5, tid, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_SERVICE_RECORD, 0,
			   rec, sizeof(rec), &st);
	assert_int_equal(st.ok, SIB_SA_TRANSFERS_PER_SOURCE);
	assert_int_equal(st.no_resources, 1);
	/* ... while LID 6, behind the same endpoint, still has its own. */
	memset(&st, 0, sizeof(st));
	fabric_ask(f, sw, 6, 40, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_SERVICE_RECORD, 0, rec,
		   sizeof(rec), &st);
	assert_int_equal(st.ok, 1);

	/* Port 6 missed by two sweeps: still there; by a third: gone, and
	 * its LID is no requester any more. */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sib_sm_port_found(&f->sm, ga, ga - 1, 5, IB_MTU_4096, &sw->local),
				 0);
		sib_sm_sweep_end(&f->sm);
	}
	assert_non_null(sib_sm_port_by_lid(&f->sm, 6));
	assert_int_equal(sib_sm_port_found(&f->sm, ga, ga - 1, 5, IB_MTU_4096, &sw->local), 0);
	sib_sm_sweep_end(&f->sm);
	assert_null(sib_sm_port_by_lid(&f->sm, 6));
	assert_non_null(sib_sm_port_by_lid(&f->sm, 5));
	/* A LID the sweep gave to another port leaves the old holder. */
	assert_int_equal(sib_sm_port_found(&f->sm, gb, gb - 1, 5, IB_MTU_4096, &sw->local), 0);
	assert_null(sib_sm_port_by_guid(&f->sm, ga));
	assert_int_equal(sib_sm_port_by_lid(&f->sm, 5)->guid, gb);
	sib_link_close(sw);
}

/* What an SA request through sw answered: one MAD, decoded into *m. */
static void fabric_answer(struct fixture *f, struct sib_link *sw, uint16_t slid, uint8_t method,
			  uint16_t attr, uint64_t comp, const uint8_t *rec, unsigned rec_len,
			  struct ib_sa_mad *m)
{
	struct got g = { 0 };

	sa_send(f, sw, slid, method, attr, comp, rec, rec_len);
	while (sib_link_poll(f->sm_link, 16, fabric_sm_rx, &f->sm) > 0)
		;
	sib_link_flush(f->sm_link);
	assert_int_equal(sib_link_poll(sw, 4, got_rx, &g), 1);
	ib_sa_mad_decode(m, g.mad);
}

/*
 * NodeRecords and PortInfoRecords from a sweep's fabric (sa_nodes.c): the
 * SM's CA at LID 1 and a 2-port switch at LID 2.  saquery's GetTable of
 * every node, a Get by LID, and saquery -s: the PortInfoRecords whose
 * CapabilityMask has IsSM (every bit asked for set), which must not tell
 * the M_Key the sweep read.
 */
static void sa_on_a_fabric_answers_node_and_port_info_records(void **state)
{
	struct fixture *f = *state;
	struct sib_disc_port ca_ports[2], sw_ports[3];
	struct sib_disc_node nodes[2];
	struct sib_disc d = { .node = nodes, .nnodes = 2 };
	const uint16_t lids[2] = { 1, 2 };
	struct ib_port_info pi;
	struct ib_node_info ni;
	struct ib_sa_mad m;
	struct sib_link *sw;
	uint8_t q[72];

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &sw), 0);
	f->sm.fabric = true;
	assert_int_equal(sib_sm_port_found(&f->sm, 0x0200000000000a01ull, 0x0200000000000a00ull, 5,
					   IB_MTU_4096, &sw->local), 0);
	sib_sm_sweep_end(&f->sm);
	/* saquery -p: every path between every two ports (one port: its own). */
	fabric_answer(f, sw, 5, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_PATH_RECORD, 0, NULL, 0, &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(m.rmpp.Data2, IB_SA_CLASS_HDR_BYTES + IB_PATH_RECORD_BYTES);
	/* No sweep's records yet: not served. */
	fabric_answer(f, sw, 5, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_NODE_RECORD, 0, NULL, 0, &m);
	assert_int_equal(m.hdr.Status, IB_MAD_STATUS_UNSUP_METHOD_ATTR);

	memset(nodes, 0, sizeof(nodes));
	memset(ca_ports, 0, sizeof(ca_ports));
	memset(sw_ports, 0, sizeof(sw_ports));
	nodes[0].ni = (struct ib_node_info){ .NodeType = IB_NODE_TYPE_CA, .NumPorts = 1,
					     .NodeGUID = 0x0200000000000100ull,
					     .PortGUID = 0x0200000000000101ull, .LocalPortNum = 1 };
	snprintf(nodes[0].desc, sizeof(nodes[0].desc), "softib-sm");
	nodes[0].port = ca_ports;
	ca_ports[1].have_pi = true;
	ca_ports[1].pi.CapabilityMask = IB_PORT_CAP_IS_SM | IB_PORT_CAP_IS_TRAP_SUP;
	ca_ports[1].pi.M_Key = 0x5ec2e7;
	nodes[1].ni = (struct ib_node_info){ .NodeType = IB_NODE_TYPE_SWITCH, .NumPorts = 2,
					     .NodeGUID = 0x0200000000000200ull,
					     .PortGUID = 0x0200000000000200ull, .LocalPortNum = 1 };
	snprintf(nodes[1].desc, sizeof(nodes[1].desc), "leaf 1");
	nodes[1].port = sw_ports;
	for (int p = 0; p <= 2; p++) {
		sw_ports[p].have_pi = true;
		sw_ports[p].pi.M_Key = 0x5ec2e7;
		sw_ports[p].pi.CapabilityMask = p ? 0 : IB_PORT_CAP_IS_TRAP_SUP;
	}
	sib_sa_nodes_set(&f->sm, &d, lids);

	/* saquery: every node, 112 bytes apart. */
	fabric_answer(f, sw, 5, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_NODE_RECORD, 0, NULL, 0, &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(m.AttributeOffset, 14);
	assert_int_equal(m.rmpp.Data2, 2 * IB_SA_CLASS_HDR_BYTES + 2 * 112); /* two segments */
	assert_int_equal(ib_bits_get(m.SubnAdmData, 0, 16), 1);
	assert_memory_equal(m.SubnAdmData + 44, "softib-sm", 9);
	assert_int_equal(ib_bits_get(m.SubnAdmData + 112, 0, 16), 2);
	/* By LID: the switch alone. */
	memset(q, 0, sizeof(q));
	q[1] = 2;
	fabric_answer(f, sw, 5, IB_MAD_METHOD_GET, IB_SA_ATTR_NODE_RECORD, 1, q, sizeof(q), &m);
	assert_int_equal(m.hdr.Status, 0);
	ib_node_info_decode(&ni, m.SubnAdmData + 4);
	assert_int_equal(ni.NodeType, IB_NODE_TYPE_SWITCH);
	assert_memory_equal(m.SubnAdmData + 44, "leaf 1", 6);
	/* saquery -s: IsSM set, whatever else is; M_Key 0. */
	memset(q, 0, sizeof(q));
	pi = (struct ib_port_info){ .CapabilityMask = IB_PORT_CAP_IS_SM };
	ib_port_info_encode(&pi, q + 4);
	fabric_answer(f, sw, 5, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_PORT_INFO_RECORD, 1u << 7, q,
		      sizeof(q), &m);
	assert_int_equal(m.hdr.Status, 0);
	assert_int_equal(m.rmpp.Data2, IB_SA_CLASS_HDR_BYTES + 72);
	assert_int_equal(ib_bits_get(m.SubnAdmData, 0, 16), 1);
	ib_port_info_decode(&pi, m.SubnAdmData + 4);
	assert_int_equal(pi.M_Key, 0);
	assert_int_equal(pi.LID, 1);
	assert_int_equal(pi.MasterSMLID, SIB_SM_LID);
	/* Every PortInfoRecord: the CA's port and the switch's ports 0-2. */
	fabric_answer(f, sw, 5, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_PORT_INFO_RECORD, 0, NULL, 0,
		      &m);
	assert_int_equal(m.rmpp.RMPPFlags, IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_FIRST);
	assert_int_equal(m.rmpp.Data2, 2 * IB_SA_CLASS_HDR_BYTES + 4 * 72);
	for (int i = 0; i < 2; i++) {
		ib_port_info_decode(&pi, m.SubnAdmData + 72 * i + 4);
		assert_int_equal(pi.M_Key, 0);
	}
	sib_link_close(sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(bringup_assigns_a_lid_and_raises_port_active),
		T(lids_are_unique_across_ports),
		T(sweeps_keep_live_ports_and_drop_silent_ones),
		T(a_returning_guid_gets_its_lid_back),
		T(sa_path_record_by_dlid_and_dgid),
		T(sa_endpoint_record_maps_lid_and_gid_to_the_udp_endpoint),
		T(sa_finds_a_port_told_active_before_its_getresp_arrives),
		T(sa_client_resolves_and_caches),
		T(sa_client_times_out_without_an_sm_and_refuses_inactive_ports),
		T(the_owner_hears_of_every_lid_the_sa_client_caches),
		T(a_response_counts_only_from_where_the_request_went),
		T(a_claim_of_a_live_ports_guid_is_refused),
		T(the_same_port_at_a_new_endpoint_keeps_its_lid),
		T(lids_survive_an_sm_restart),
		T(a_remembered_lid_goes_back_to_its_guid),
		T(a_second_sm_stands_by_and_takes_over),
		T(sa_service_records_register_find_and_leave),
		T(sa_queries_go_to_and_come_from_the_verified_sm_only),
		T(sa_believes_a_request_only_from_where_its_slid_lives),
		T(sa_transfers_nobody_acks_are_bounded),
		T(sa_keys_go_to_owners_and_an_address_to_one_host),
		T(a_flooding_port_spends_only_its_own_share),
		T(sa_on_a_fabric_serves_the_ports_its_sweeps_found),
		T(sa_on_a_fabric_answers_node_and_port_info_records),
#undef T
	};

	/* The SM's warnings are expected in some tests; keep the output clean. */
	setenv("SOFTIB_LOG", "error", 0);
	return cmocka_run_group_tests_name("fabric/sm", tests, NULL, NULL);
}

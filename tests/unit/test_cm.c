/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The IB CM (mgmt/cm.c) between two HCAs on the in-memory link: the RC
 * handshake and disconnect with private data, REJ for a service nobody
 * serves and for a consumer's no, duplicate REQ (MRA) and REP (RTU
 * again), retransmission until REQ_ERROR and REP_ERROR, stale connections,
 * TIMEWAIT answering a late REQ, crossing DREQs, destroy mid-handshake
 * and while connected, SIDR, malformed MADs dropped and counted, and every
 * refused consumer request saying why in a debug line.
 * A subnet manager (softib-sm's engine, fabric/) places each port for the
 * other's CM, whose source check (cm.h) is tested too: a stranger's DREQ,
 * REJ and stale REQ dropped, REJs matched on both comm IDs, random comm
 * IDs, a REQ waiting for the SA's answer.
 * What is asserted is what happened, never how long it took.  The tests
 * of retransmission set the CM response timeouts small (4.096 us * 2^8:
 * 1 ms); the others long (2^18: 1 s), so that a loaded machine's pauses
 * never make a side send again what the test counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
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
#include "base/log.h"
#include "hca/hca.h"
#include "mgmt/cm.h"
#include "mgmt/mad_packet.h"
#include "wire/cm.h"

#define SID 0x0000000001061c06ull
#define MAX_EVENTS 16

struct rec {
	int n;
	enum sib_cm_event_type type[MAX_EVENTS];
	struct sib_cm_id *id[MAX_EVENTS];
	uint16_t reason;	/* last REJ */
	uint8_t pd[4];		/* first bytes of the last message's private data */
	uint32_t qpn, qkey;	/* last SIDR_REP */
	uint8_t sidr_status;
	int answer;		/* what the handler returns for REQ / SIDR_REQ */
	bool delay_mra;		/* the handler asks for a delayed MRA on REQ */
	struct sib_cm_id *last_new; /* the id a REQ/SIDR_REQ made */
};

struct fixture {
	struct sib_mem_hub *hub;
	struct sib_link *sm_link;
	struct sib_sm sm; /* places each port for the other's CM (cm.h: the source check) */
	struct sib_hca *srv, *cli;
	struct rec rs, rc;
	struct sib_cm_id *listener;
};

static struct sib_hca *hca_new(struct fixture *f, uint64_t guid)
{
	char sm[SIB_ENDPOINT_STRLEN];
	struct sib_hca_opts o = { 0 };
	struct sib_link *link;
	struct sib_hca *hca;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &link), 0);
	sib_endpoint_str(&f->sm_link->local, sm);
	o.link = link;
	o.sm = sm;
	o.no_thread = true;
	o.no_bringup_wait = true;
	o.no_spawn = true;
	o.node_guid = guid;
	hca = sib_hca_new(&o);
	assert_non_null(hca);
	assert_non_null(hca->node.cm);
	return hca;
}

static void pump(struct fixture *f);

static int handler(struct sib_cm_id *id, const struct sib_cm_event *ev)
{
	struct rec *r = id->context;

	if (r->n < MAX_EVENTS) {
		r->type[r->n] = ev->type;
		r->id[r->n] = id;
		r->n++;
	}
	switch (ev->type) {
	case SIB_CM_EV_REQ_RECEIVED:
		r->last_new = id;
		memcpy(r->pd, ev->req->PrivateData, sizeof(r->pd));
		if (!r->answer && r->delay_mra)
			assert_int_equal(sib_cm_send_mra(id, 24, true, NULL, 0), 0);
		return r->answer;
	case SIB_CM_EV_SIDR_REQ_RECEIVED:
		r->last_new = id;
		memcpy(r->pd, ev->sidr_req->PrivateData, sizeof(r->pd));
		return r->answer;
	case SIB_CM_EV_REP_RECEIVED:
		memcpy(r->pd, ev->rep->PrivateData, sizeof(r->pd));
		break;
	case SIB_CM_EV_REJ_RECEIVED:
		r->reason = ev->rej->Reason;
		memcpy(r->pd, ev->rej->PrivateData, sizeof(r->pd));
		break;
	case SIB_CM_EV_SIDR_REP_RECEIVED:
		r->sidr_status = ev->sidr_rep->Status;
		r->qpn = ev->sidr_rep->QPN;
		r->qkey = ev->sidr_rep->Q_Key;
		break;
	default:
		break;
	}
	return 0;
}

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.hub = sib_mem_hub_new();
	assert_int_equal(sib_link_mem_open(f.hub, 4096, &f.sm_link), 0);
	assert_int_equal(sib_sm_init(&f.sm, f.sm_link, 0x0200000000000001ull, sib_link_now_ns()), 0);
	f.srv = hca_new(&f, 0x0200000000000100ull);
	f.cli = hca_new(&f, 0x0200000000000200ull);
	for (int i = 0; i < 5000 && (f.srv->node.ports[0].state != SIB_PORT_ACTIVE ||
				     f.cli->node.ports[0].state != SIB_PORT_ACTIVE);
	     i++) {
		pump(&f);
		usleep(1000);
	}
	assert_int_equal(f.srv->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(f.cli->node.ports[0].state, SIB_PORT_ACTIVE);
	sib_cm_lock(f.srv->node.cm);
	f.listener = sib_cm_create_id(f.srv->node.cm, 1, handler, &f.rs);
	assert_int_equal(sib_cm_listen(f.listener, SID, ~0ull), 0);
	sib_cm_unlock(f.srv->node.cm);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->srv)
		sib_hca_free(f->srv);
	if (f->cli)
		sib_hca_free(f->cli);
	sib_sm_fini(&f->sm);
	sib_link_close(f->sm_link);
	sib_mem_hub_free(f->hub);
	return 0;
}

/* Lets both HCAs exchange whatever is pending, timers included. */
static void pump(struct fixture *f)
{
	for (int round = 0; round < 20; round++) {
		int n = sib_sm_step(&f->sm, sib_link_now_ns());

		if (f->srv)
			n += sib_progress_poll(f->srv);
		if (f->cli)
			n += sib_progress_poll(f->cli);
		if (!n)
			return;
	}
}

/* Pumps (for up to 5 s) until rec has n events. */
static void pump_until(struct fixture *f, struct rec *r, int n)
{
	for (int i = 0; i < 5000 && r->n < n; i++) {
		pump(f);
		if (r->n < n)
			usleep(1000);
	}
	assert_true(r->n >= n);
}

static struct sib_cm_path path_to(struct sib_hca *from, struct sib_hca *to)
{
	struct sib_cm_path p;

	memset(&p, 0, sizeof(p));
	p.SLID = from->node.ports[0].LID;
	p.DLID = to->node.ports[0].LID;
	memcpy(p.SGID, from->node.ports[0].GID[0], 16);
	memcpy(p.DGID, to->node.ports[0].GID[0], 16);
	p.MTU = IB_MTU_4096;
	p.P_Key = 0xffff;
	p.Rate = 7;
	p.PacketLifeTime = 8; /* 1 ms */
	return p;
}

static struct sib_cm_req_param req_param(struct fixture *f, uint32_t qpn)
{
	static const uint8_t pd[] = { 0xa1, 0xa2, 0xa3, 0xa4 };
	struct sib_cm_req_param p;

	memset(&p, 0, sizeof(p));
	p.service_id = SID;
	p.qpn = qpn;
	p.transport = IB_CM_TRANSPORT_RC;
	p.starting_psn = 0x123456;
	p.responder_resources = 4;
	p.initiator_depth = 2;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.local_ack_timeout = 8;
	p.path = path_to(f->cli, f->srv);
	p.timing.remote_cm_response_timeout = 18;
	p.timing.local_cm_response_timeout = 18;
	p.timing.max_cm_retries = 2;
	p.peer = f->srv->node.mgmt[0].link->local;
	p.private_data = pd;
	p.private_data_len = sizeof(pd);
	return p;
}

static struct sib_cm_id *client_req_p(struct fixture *f, const struct sib_cm_req_param *pp)
{
	struct sib_cm_req_param p = *pp;
	struct sib_cm_id *id;

	sib_cm_lock(f->cli->node.cm);
	id = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	assert_non_null(id);
	assert_int_equal(sib_cm_send_req(id, &p), 0);
	sib_cm_unlock(f->cli->node.cm);
	return id;
}

static struct sib_cm_id *client_req(struct fixture *f, uint32_t qpn)
{
	struct sib_cm_req_param p = req_param(f, qpn);

	return client_req_p(f, &p);
}

static void server_rep(struct fixture *f, struct sib_cm_id *id)
{
	static const uint8_t pd[] = { 0xb1, 0xb2 };
	struct sib_cm_rep_param p = { .qpn = 0x77, .starting_psn = 0xabcdef, .responder_resources = 2,
				      .initiator_depth = 4, .target_ack_delay = 15,
				      .rnr_retry_count = 7, .private_data = pd,
				      .private_data_len = sizeof(pd) };

	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_rep(id, &p), 0);
	sib_cm_unlock(f->srv->node.cm);
}

/* Client REQ, server REP, client RTU: both ESTABLISHED.  Returns the
 * server's id; *cid the client's. */
static struct sib_cm_id *connect_pair(struct fixture *f, struct sib_cm_id **cid)
{
	struct sib_cm_id *sid;
	int rs = f->rs.n, rc = f->rc.n;

	*cid = client_req(f, 0x55);
	pump_until(f, &f->rs, rs + 1);
	assert_int_equal(f->rs.type[rs], SIB_CM_EV_REQ_RECEIVED);
	sid = f->rs.last_new;
	server_rep(f, sid);
	pump_until(f, &f->rc, rc + 1);
	assert_int_equal(f->rc.type[rc], SIB_CM_EV_REP_RECEIVED);
	sib_cm_lock(f->cli->node.cm);
	assert_int_equal(sib_cm_send_rtu(*cid, NULL, 0), 0);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rs, rs + 2);
	assert_int_equal(f->rs.type[rs + 1], SIB_CM_EV_RTU_RECEIVED);
	assert_int_equal(sid->state, SIB_CM_ESTABLISHED);
	assert_int_equal((*cid)->state, SIB_CM_ESTABLISHED);
	return sid;
}

static void handshake_disconnect_and_timewait(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);

	assert_int_equal(f->rs.pd[0], 0xa1);
	assert_int_equal(f->rs.pd[3], 0xa4);
	assert_int_equal(f->rc.pd[0], 0xb1);
	assert_int_equal(sid->remote_qpn, 0x55);
	assert_int_equal(cid->remote_qpn, 0x77);
	assert_int_equal(sid->path.DLID, f->cli->node.ports[0].LID);
	assert_int_equal(sid->path.SLID, f->srv->node.ports[0].LID);
	assert_true(sid->remote_ca_guid == 0x0200000000000200ull);
	/* The REQ waited for the SA to place the client (cm.h), then went on. */
	assert_int_equal(f->srv->node.cm->counters.rx_held, 1);
	assert_int_equal(f->srv->node.cm->counters.rx_wrong_source, 0);
	/* Disconnect: DREQ from the client, DREP from the server. */
	sib_cm_lock(f->cli->node.cm);
	assert_int_equal(sib_cm_send_dreq(cid, NULL, 0), 0);
	assert_int_equal(sib_cm_send_dreq(cid, NULL, 0), -EINVAL);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rs, 3);
	assert_int_equal(f->rs.type[2], SIB_CM_EV_DREQ_RECEIVED);
	assert_int_equal(sid->state, SIB_CM_DREQ_RCVD);
	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_drep(sid, NULL, 0), 0);
	sib_cm_unlock(f->srv->node.cm);
	pump_until(f, &f->rc, 2);
	assert_int_equal(f->rc.type[1], SIB_CM_EV_DREP_RECEIVED);
	assert_int_equal(cid->state, SIB_CM_TIMEWAIT);
	/* TIMEWAIT ends by itself on both sides. */
	pump_until(f, &f->rc, 3);
	pump_until(f, &f->rs, 4);
	assert_int_equal(f->rc.type[2], SIB_CM_EV_TIMEWAIT_EXIT);
	assert_int_equal(f->rs.type[3], SIB_CM_EV_TIMEWAIT_EXIT);
	assert_int_equal(cid->state, SIB_CM_IDLE);
	assert_int_equal(f->cli->node.cm->counters.rx_malformed, 0);
	assert_int_equal(f->srv->node.cm->counters.rx_malformed, 0);
}

static void no_listener_gets_rej_invalid_service_id(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_req_param p = req_param(f, 0x56);
	struct sib_cm_id *id;

	p.service_id = SID + 1;
	sib_cm_lock(f->cli->node.cm);
	id = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	assert_int_equal(sib_cm_send_req(id, &p), 0);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rc, 1);
	assert_int_equal(f->rc.type[0], SIB_CM_EV_REJ_RECEIVED);
	assert_int_equal(f->rc.reason, IB_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(id->state, SIB_CM_IDLE);
	assert_int_equal(f->rs.n, 0);
}

static void consumer_rejects_with_private_data(void **state)
{
	struct fixture *f = *state;
	static const uint8_t pd[] = { 0xc1, 0xc2, 0xc3 };

	client_req(f, 0x57);
	pump_until(f, &f->rs, 1);
	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_rej(f->rs.last_new, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, pd,
					 sizeof(pd)),
			 0);
	sib_cm_unlock(f->srv->node.cm);
	pump_until(f, &f->rc, 1);
	assert_int_equal(f->rc.type[0], SIB_CM_EV_REJ_RECEIVED);
	assert_int_equal(f->rc.reason, IB_CM_REJ_CONSUMER_DEFINED);
	assert_int_equal(f->rc.pd[0], 0xc1);
	assert_int_equal(f->rc.pd[2], 0xc3);
	/* A handler's answer rejects at once. */
	f->rs.answer = IB_CM_REJ_NO_RESOURCES;
	client_req(f, 0x58);
	pump_until(f, &f->rc, 2);
	assert_int_equal(f->rc.reason, IB_CM_REJ_NO_RESOURCES);
}

static void duplicate_req_draws_the_delayed_mra(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid;

	f->rs.delay_mra = true;
	cid = client_req(f, 0x59);
	pump_until(f, &f->rs, 1);
	assert_int_equal(f->rs.last_new->state, SIB_CM_MRA_REQ_SENT);
	/* The client's REQ again, as its retransmission would send it. */
	sib_mgmt_send(f->cli->node.mgmt[0].link, &cid->addr, cid->msg, &cid->peer);
	pump_until(f, &f->rc, 1);
	assert_int_equal(f->rc.type[0], SIB_CM_EV_MRA_RECEIVED);
	assert_int_equal(cid->state, SIB_CM_MRA_REQ_RCVD);
	assert_int_equal(f->rs.n, 1); /* the server was told once */
	assert_int_equal(f->srv->node.cm->counters.duplicates, 1);
	/* The REP still completes the handshake. */
	server_rep(f, f->rs.last_new);
	pump_until(f, &f->rc, 2);
	assert_int_equal(f->rc.type[1], SIB_CM_EV_REP_RECEIVED);
}

static void duplicate_rep_draws_the_rtu_again(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);
	uint64_t srv_dups = f->srv->node.cm->counters.duplicates;

	sib_mgmt_send(f->srv->node.mgmt[0].link, &sid->addr, sid->msg, &sid->peer);
	pump(f);
	assert_int_equal(f->cli->node.cm->counters.duplicates, 1);
	/* The RTU sent again reaches an ESTABLISHED server: a duplicate. */
	assert_int_equal(f->srv->node.cm->counters.duplicates, srv_dups + 1);
	assert_int_equal(f->rc.n, 1);
	assert_int_equal(f->rs.n, 2);
}

static void unanswered_req_retransmits_then_req_error(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_req_param p = req_param(f, 0x5a);
	struct sib_cm_id *id;

	p.timing.remote_cm_response_timeout = 8;
	/* The server's port is gone: the REQ goes nowhere. */
	sib_hca_free(f->srv);
	f->srv = NULL;
	id = client_req_p(f, &p);
	pump_until(f, &f->rc, 1);
	assert_int_equal(f->rc.type[0], SIB_CM_EV_REQ_ERROR);
	assert_int_equal(id->state, SIB_CM_IDLE);
	assert_int_equal(f->cli->node.cm->counters.retransmits, 2);
	assert_int_equal(f->cli->node.cm->counters.timeouts, 1);
	assert_int_equal(f->cli->node.cm->counters.tx, 3);
}

static void unanswered_rep_gives_rep_error(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_req_param p = req_param(f, 0x5b);

	p.timing.local_cm_response_timeout = 8; /* the server waits that long for the RTU */
	client_req_p(f, &p);
	pump_until(f, &f->rs, 1);
	sib_hca_free(f->cli);
	f->cli = NULL;
	server_rep(f, f->rs.last_new);
	pump_until(f, &f->rs, 2);
	assert_int_equal(f->rs.type[1], SIB_CM_EV_REP_ERROR);
	assert_int_equal(f->srv->node.cm->counters.retransmits, 2); /* the REQ's MaxCMRetries */
}

static void reused_qpn_is_stale(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);
	struct sib_cm_id *again;

	(void)sid;
	/* A new REQ from the same CA for the QP still connected. */
	again = client_req(f, 0x55);
	pump_until(f, &f->rc, 3);
	assert_int_equal(f->srv->node.cm->counters.stale, 1);
	/* The new attempt is rejected as stale, the old connection gets a
	 * DREQ (in either order). */
	for (int i = 1; i < 3; i++) {
		if (f->rc.id[i] == again) {
			assert_int_equal(f->rc.type[i], SIB_CM_EV_REJ_RECEIVED);
		} else {
			assert_ptr_equal(f->rc.id[i], cid);
			assert_int_equal(f->rc.type[i], SIB_CM_EV_DREQ_RECEIVED);
		}
	}
	assert_int_equal(f->rc.reason, IB_CM_REJ_STALE_CONN);
	assert_int_equal(f->rs.n, 2); /* no new REQ_RECEIVED */
}

static void timewait_answers_a_late_req_with_stale(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);
	uint8_t old_req[IB_MAD_BYTES];
	struct sib_mad_addr a = cid->addr;
	struct sib_endpoint peer = cid->peer;

	memcpy(old_req, cid->msg, sizeof(old_req));
	sib_cm_lock(f->srv->node.cm);
	/* The server leaves: DREQ, and its side rests in TIMEWAIT. */
	sib_cm_destroy_id(sid);
	assert_int_equal(sid->state, SIB_CM_TIMEWAIT);
	sib_cm_unlock(f->srv->node.cm);
	pump_until(f, &f->rc, 2);
	assert_int_equal(f->rc.type[1], SIB_CM_EV_DREQ_RECEIVED);
	/* The old REQ arrives late: TIMEWAIT says stale. */
	sib_mgmt_send(f->cli->node.mgmt[0].link, &a, old_req, &peer);
	pump(f);
	assert_int_equal(f->srv->node.cm->counters.duplicates, 1);
	/* The client, in DREQ_RCVD, is not in a state a REJ applies to. */
	assert_int_equal(f->rc.n, 2);
	sib_cm_lock(f->cli->node.cm);
	assert_int_equal(sib_cm_send_drep(cid, NULL, 0), 0);
	sib_cm_unlock(f->cli->node.cm);
	pump(f);
	assert_int_equal(f->rs.n, 2); /* a destroyed id hears nothing more */
}

static void crossing_dreqs_each_get_dreq_received(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);

	sib_cm_lock(f->cli->node.cm);
	assert_int_equal(sib_cm_send_dreq(cid, NULL, 0), 0);
	sib_cm_unlock(f->cli->node.cm);
	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_dreq(sid, NULL, 0), 0);
	sib_cm_unlock(f->srv->node.cm);
	pump_until(f, &f->rc, 2);
	pump_until(f, &f->rs, 3);
	assert_int_equal(f->rc.type[1], SIB_CM_EV_DREQ_RECEIVED);
	assert_int_equal(f->rs.type[2], SIB_CM_EV_DREQ_RECEIVED);
	/* Each answers with a DREP and rests in TIMEWAIT. */
	sib_cm_lock(f->cli->node.cm);
	assert_int_equal(sib_cm_send_drep(cid, NULL, 0), 0);
	sib_cm_unlock(f->cli->node.cm);
	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_drep(sid, NULL, 0), 0);
	sib_cm_unlock(f->srv->node.cm);
	assert_int_equal(cid->state, SIB_CM_TIMEWAIT);
	assert_int_equal(sid->state, SIB_CM_TIMEWAIT);
}

static void destroy_mid_handshake_sends_rej_timeout(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid = client_req(f, 0x5c);

	pump_until(f, &f->rs, 1);
	sib_cm_lock(f->cli->node.cm);
	sib_cm_destroy_id(cid);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rs, 2);
	assert_int_equal(f->rs.type[1], SIB_CM_EV_REJ_RECEIVED);
	assert_int_equal(f->rs.reason, IB_CM_REJ_TIMEOUT);
	assert_int_equal(f->rs.last_new->state, SIB_CM_IDLE);
}

static void destroy_while_connected_sends_dreq(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);

	sib_cm_lock(f->cli->node.cm);
	sib_cm_destroy_id(cid);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rs, 3);
	assert_int_equal(f->rs.type[2], SIB_CM_EV_DREQ_RECEIVED);
	/* The server's DREP reaches the client's TIMEWAIT: no event, no
	 * unmatched message. */
	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_drep(sid, NULL, 0), 0);
	sib_cm_unlock(f->srv->node.cm);
	pump(f);
	assert_int_equal(f->rc.n, 1); /* only the REP, from before the destroy */
	assert_int_equal(f->cli->node.cm->counters.rx_unmatched, 0);
}

static void dreq_for_an_unknown_connection_gets_drep(void **state)
{
	struct fixture *f = *state;
	struct ib_cm_dreq dreq;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];
	struct ib_mad_hdr h;

	memset(&h, 0, sizeof(h));
	h.BaseVersion = 1;
	h.MgmtClass = IB_MGMT_CLASS_CM;
	h.ClassVersion = IB_CM_CLASS_VERSION;
	ib_mad_set_method(&h, IB_MAD_METHOD_SEND);
	h.AttributeID = IB_CM_ATTR_DREQ;
	memset(mad, 0, sizeof(mad));
	ib_mad_hdr_encode(&h, mad);
	memset(&dreq, 0, sizeof(dreq));
	dreq.LocalCommID = 0x1111;
	dreq.RemoteCommID = 0x2222;
	ib_cm_dreq_encode(&dreq, mad + IB_CM_DATA_OFFSET);
	sib_mad_addr_init(&a, SIB_QP1, f->srv->node.ports[0].LID, f->cli->node.ports[0].LID);
	sib_mgmt_send(f->cli->node.mgmt[0].link, &a, mad, &f->srv->node.mgmt[0].link->local);
	pump(f);
	assert_int_equal(f->srv->node.cm->counters.rx_unmatched, 1);
	/* The DREP came back; the client knows no such connection either. */
	assert_int_equal(f->cli->node.cm->counters.rx, 1);
	assert_int_equal(f->cli->node.cm->counters.rx_unmatched, 1);
}

static void sidr_resolves_a_service(void **state)
{
	struct fixture *f = *state;
	static const uint8_t pd[] = { 0xd1, 0xd2 };
	struct sib_cm_sidr_req_param p;
	struct sib_cm_id *id;

	memset(&p, 0, sizeof(p));
	p.service_id = SID;
	p.path = path_to(f->cli, f->srv);
	p.timing.remote_cm_response_timeout = 8;
	p.timing.max_cm_retries = 2;
	p.peer = f->srv->node.mgmt[0].link->local;
	p.private_data = pd;
	p.private_data_len = sizeof(pd);
	sib_cm_lock(f->cli->node.cm);
	id = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	assert_int_equal(sib_cm_send_sidr_req(id, &p), 0);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rs, 1);
	assert_int_equal(f->rs.type[0], SIB_CM_EV_SIDR_REQ_RECEIVED);
	assert_int_equal(f->rs.pd[0], 0xd1);
	sib_cm_lock(f->srv->node.cm);
	assert_int_equal(sib_cm_send_sidr_rep(f->rs.last_new, IB_CM_SIDR_SUCCESS, 0x99, 0x01234567,
					      NULL, 0),
			 0);
	sib_cm_unlock(f->srv->node.cm);
	pump_until(f, &f->rc, 1);
	assert_int_equal(f->rc.type[0], SIB_CM_EV_SIDR_REP_RECEIVED);
	assert_int_equal(f->rc.sidr_status, IB_CM_SIDR_SUCCESS);
	assert_int_equal(f->rc.qpn, 0x99);
	assert_int_equal(f->rc.qkey, 0x01234567);
	/* Nobody serves the next ServiceID: status 1. */
	p.service_id = SID + 1;
	sib_cm_lock(f->cli->node.cm);
	id = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	assert_int_equal(sib_cm_send_sidr_req(id, &p), 0);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rc, 2);
	assert_int_equal(f->rc.sidr_status, IB_CM_SIDR_UNSUPPORTED);
	/* And a server that is gone: SIDR_REQ_ERROR after the retries. */
	sib_hca_free(f->srv);
	f->srv = NULL;
	p.service_id = SID;
	sib_cm_lock(f->cli->node.cm);
	id = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	assert_int_equal(sib_cm_send_sidr_req(id, &p), 0);
	sib_cm_unlock(f->cli->node.cm);
	pump_until(f, &f->rc, 3);
	assert_int_equal(f->rc.type[2], SIB_CM_EV_SIDR_REQ_ERROR);
}

/* A CM MAD to the server from link with SLID slid: the header fields
 * given, then data (the message from MAD byte 24 on, IB_CM_DATA_OFFSET),
 * or all ones without data. */
static void send_mad(struct fixture *f, struct sib_link *link, uint16_t slid,
		     uint8_t class_version, uint8_t method, uint16_t attr, uint32_t qkey,
		     const uint8_t *data, size_t len)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_mad_hdr h;

	memset(&h, 0, sizeof(h));
	h.BaseVersion = 1;
	h.MgmtClass = IB_MGMT_CLASS_CM;
	h.ClassVersion = class_version;
	ib_mad_set_method(&h, method);
	h.AttributeID = attr;
	h.TransactionID = 0x77770000u + attr;
	memset(mad, data ? 0 : 0xff, sizeof(mad));
	ib_mad_hdr_encode(&h, mad);
	if (data)
		memcpy(mad + IB_CM_DATA_OFFSET, data, len);
	sib_mad_addr_init(&a, SIB_QP1, f->srv->node.ports[0].LID, slid);
	a.Q_Key = qkey;
	sib_mgmt_send(link, &a, mad, &f->srv->node.mgmt[0].link->local);
}

/* A CM MAD from the client's link with the header fields given. */
static void send_raw(struct fixture *f, uint8_t class_version, uint8_t method, uint16_t attr,
		     uint32_t qkey)
{
	send_mad(f, f->cli->node.mgmt[0].link, f->cli->node.ports[0].LID, class_version, method,
		 attr, qkey, NULL, 0);
}

static void malformed_mads_are_dropped_and_counted(void **state)
{
	struct fixture *f = *state;
	struct sib_cm *cm = f->srv->node.cm;

	send_raw(f, 1, IB_MAD_METHOD_SEND, IB_CM_ATTR_REQ, SIB_GSI_Q_KEY);	  /* class version */
	send_raw(f, 2, IB_MAD_METHOD_GET, IB_CM_ATTR_REQ, SIB_GSI_Q_KEY);	  /* method */
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_LAP, SIB_GSI_Q_KEY);	  /* not served */
	send_raw(f, 2, IB_MAD_METHOD_SEND, 0x7777, SIB_GSI_Q_KEY);		  /* no such attribute */
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_REQ, 0x12345678);		  /* Q_Key */
	pump(f);
	assert_int_equal(cm->counters.rx, 5);
	assert_int_equal(cm->counters.rx_malformed, 5);
	/* Replies for connections nobody has: unmatched, never answered. */
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_REP, SIB_GSI_Q_KEY);
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_RTU, SIB_GSI_Q_KEY);
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_REJ, SIB_GSI_Q_KEY);
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_MRA, SIB_GSI_Q_KEY);
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_DREP, SIB_GSI_Q_KEY);
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_SIDR_REP, SIB_GSI_Q_KEY);
	pump(f);
	assert_int_equal(cm->counters.rx_unmatched, 6);
	assert_int_equal(f->cli->node.cm->counters.rx, 0);
	/* An all-ones REQ: a ServiceID nobody serves, rejected, no crash. */
	send_raw(f, 2, IB_MAD_METHOD_SEND, IB_CM_ATTR_REQ, SIB_GSI_Q_KEY);
	pump(f);
	assert_int_equal(f->cli->node.cm->counters.rx, 1);
	assert_int_equal(f->rs.n, 0);
}

/* A CM message from link with SLID slid to the server. */
static void send_cm(struct fixture *f, struct sib_link *link, uint16_t slid, uint16_t attr,
		    const uint8_t *data, size_t len)
{
	send_mad(f, link, slid, IB_CM_CLASS_VERSION, IB_MAD_METHOD_SEND, attr, SIB_GSI_Q_KEY, data,
		 len);
}

/* Pumps (for up to 5 s) until *ctr reaches n. */
static void pump_until_count(struct fixture *f, const uint64_t *ctr, uint64_t n)
{
	for (int i = 0; i < 5000 && __atomic_load_n(ctr, __ATOMIC_RELAXED) < n; i++) {
		pump(f);
		usleep(1000);
	}
	assert_true(*ctr >= n);
}

/*
 * cm.h, the source check: a stranger on the subnet who knows everything
 * about a connection (both comm IDs, the QPNs, the client's LID and CA
 * GUID) sends the server, with the client's SLID, a DREQ, a REJ and a REQ
 * for the client's connected QP (a stale-connection REQ, IBA 12.4.1).
 * Each used to end the connection; now each is dropped and counted, and
 * nothing is answered.
 */
static void a_stranger_cannot_end_a_connection(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);
	struct sib_cm *cm = f->srv->node.cm;
	uint16_t clid = f->cli->node.ports[0].LID;
	uint8_t data[IB_MAD_BYTES - IB_CM_DATA_OFFSET];
	struct sib_link *evil;
	struct ib_cm_dreq dreq;
	struct ib_cm_rej rej;
	struct ib_cm_req req;
	uint64_t wrong = cm->counters.rx_wrong_source;
	uint64_t unknown = cm->counters.rx_unknown_source;

	assert_int_equal(sib_link_mem_open(f->hub, 4096, &evil), 0);
	memset(&dreq, 0, sizeof(dreq));
	dreq.LocalCommID = cid->local_comm_id;
	dreq.RemoteCommID = sid->local_comm_id;
	dreq.RemoteQPN = sid->local_qpn;
	ib_cm_dreq_encode(&dreq, data);
	send_cm(f, evil, clid, IB_CM_ATTR_DREQ, data, sizeof(data));
	memset(&rej, 0, sizeof(rej));
	rej.LocalCommID = cid->local_comm_id;
	rej.RemoteCommID = sid->local_comm_id;
	rej.Reason = IB_CM_REJ_CONSUMER_DEFINED;
	ib_cm_rej_encode(&rej, data);
	send_cm(f, evil, clid, IB_CM_ATTR_REJ, data, sizeof(data));
	memset(&req, 0, sizeof(req));
	req.LocalCommID = 0x0badc0de;
	req.ServiceID = SID;
	req.LocalCAGUID = cid->cm->node->node_guid;
	req.LocalQPN = 0x55; /* the client's connected QP */
	req.TransportServiceType = IB_CM_TRANSPORT_RC;
	req.PathPacketPayloadMTU = IB_MTU_4096;
	req.P_Key = 0xffff;
	req.Primary.LocalPortLID = clid;
	req.Primary.RemotePortLID = f->srv->node.ports[0].LID;
	ib_cm_req_encode(&req, data);
	send_cm(f, evil, clid, IB_CM_ATTR_REQ, data, sizeof(data));
	pump_until_count(f, &cm->counters.rx_wrong_source, wrong + 3);
	pump(f);
	assert_int_equal(cm->counters.rx_wrong_source, wrong + 3);
	assert_int_equal(cm->counters.rx_unknown_source, unknown);
	assert_int_equal(cm->counters.stale, 0);
	assert_int_equal(sid->state, SIB_CM_ESTABLISHED);
	assert_int_equal(cid->state, SIB_CM_ESTABLISHED);
	assert_int_equal(f->rs.n, 2); /* REQ and RTU, from connect_pair */
	assert_int_equal(f->rc.n, 1); /* REP */
	sib_link_close(evil);
}

/* From the client itself, a REJ counts only when it names both comm IDs
 * (Linux's cm_acquire_id): one naming the server's alone is unmatched. */
static void a_rej_names_both_comm_ids(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *cid, *sid = connect_pair(f, &cid);
	struct sib_cm *cm = f->srv->node.cm;
	uint8_t data[IB_MAD_BYTES - IB_CM_DATA_OFFSET];
	uint64_t unmatched = cm->counters.rx_unmatched;
	struct ib_cm_rej rej;

	memset(&rej, 0, sizeof(rej));
	rej.RemoteCommID = sid->local_comm_id; /* LocalCommID 0 */
	rej.Reason = IB_CM_REJ_CONSUMER_DEFINED;
	ib_cm_rej_encode(&rej, data);
	send_cm(f, f->cli->node.mgmt[0].link, f->cli->node.ports[0].LID, IB_CM_ATTR_REJ, data,
		sizeof(data));
	pump_until_count(f, &cm->counters.rx_unmatched, unmatched + 1);
	assert_int_equal(sid->state, SIB_CM_ESTABLISHED);
	assert_int_equal(f->rs.n, 2);
}

/* Comm IDs are random (cm.h): one says nothing of the next. */
static void comm_ids_are_not_a_counter(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_id *id[8];
	int steps = 0;

	sib_cm_lock(f->cli->node.cm);
	for (int i = 0; i < 8; i++)
		id[i] = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	for (int i = 1; i < 8; i++)
		steps += id[i]->local_comm_id - id[i - 1]->local_comm_id == 1 ||
			 id[i - 1]->local_comm_id - id[i]->local_comm_id == 1;
	for (int i = 0; i < 8; i++)
		sib_cm_destroy_id(id[i]);
	sib_cm_unlock(f->cli->node.cm);
	assert_true(steps < 7); /* a counter gives 7; random ids, 7 in 2^-200 */
}

/*
 * cm.h, "Bounds": SIB_CM_PENDING_MAX REQs wait for the server's consumer;
 * the next is rejected with "no resources" and counted; once the consumer
 * answers one, a new REQ gets in again.
 */
static void requests_waiting_for_their_consumer_are_bounded(void **state)
{
	struct fixture *f = *state;
	struct sib_cm *scm = f->srv->node.cm;
	struct sib_cm_id *cid;

	client_req(f, 0x1000);
	pump_until(f, &f->rs, 1); /* the SA has placed the client */
	for (unsigned i = 1; i < SIB_CM_PENDING_MAX; i++) {
		client_req(f, 0x1000 + i);
		if (i % 64 == 0)
			pump(f);
	}
	pump(f);
	assert_int_equal(scm->pending, SIB_CM_PENDING_MAX);
	assert_int_equal(f->rc.n, 0);
	cid = client_req(f, 0x2000);
	pump_until(f, &f->rc, 1);
	assert_int_equal(f->rc.type[0], SIB_CM_EV_REJ_RECEIVED);
	assert_int_equal(f->rc.reason, IB_CM_REJ_NO_RESOURCES);
	assert_int_equal(cid->state, SIB_CM_IDLE);
	assert_int_equal(scm->counters.rx_pending_full, 1);

	sib_cm_lock(scm);
	assert_int_equal(sib_cm_send_rej(f->rs.id[0], IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0),
			 0);
	sib_cm_unlock(scm);
	assert_int_equal(scm->pending, SIB_CM_PENDING_MAX - 1);
	client_req(f, 0x2001);
	pump(f);
	assert_int_equal(scm->pending, SIB_CM_PENDING_MAX);
	assert_int_equal(scm->counters.rx_pending_full, 1);
}

static void overlapping_listeners_are_refused(void **state)
{
	struct fixture *f = *state;
	struct sib_cm *cm = f->srv->node.cm;
	struct sib_cm_id *a, *b;

	sib_cm_lock(cm);
	a = sib_cm_create_id(cm, 1, handler, &f->rs);
	assert_int_equal(sib_cm_listen(a, SID, ~0ull), -EADDRINUSE);
	assert_int_equal(sib_cm_listen(a, SID & ~0xffffull, ~0xffffull), -EADDRINUSE);
	assert_int_equal(sib_cm_listen(a, SID + 1, ~0ull), 0);
	b = sib_cm_create_id(cm, 1, handler, &f->rs);
	sib_cm_destroy_id(f->listener);
	assert_int_equal(sib_cm_listen(b, SID, ~0ull), 0);
	sib_cm_destroy_id(a);
	sib_cm_destroy_id(b);
	sib_cm_unlock(cm);
}

/* cm.h: every error return says in one debug line which rule it enforces. */
static char refused_line[512];

static void expect_refused(int rc, int err, const char *what, const char *rule)
{
	assert_int_equal(rc, err);
	assert_non_null(strstr(refused_line, "refused in"));
	assert_non_null(strstr(refused_line, what));
	assert_non_null(strstr(refused_line, rule));
	refused_line[0] = 0;
}

static void every_refused_request_says_why_in_a_debug_line(void **state)
{
	struct fixture *f = *state;
	struct sib_cm_req_param p = req_param(f, 0x60);
	struct sib_cm_sidr_req_param sp;
	struct sib_cm_rep_param rp = { .qpn = 1 };
	struct sib_cm_id *idle, *cid, *sid;
	uint8_t big[256] = { 0 };
	int level = sib_log_level_cur;

	sib_log_level_cur = SIB_LOG_DEBUG;
	sib_log_capture(refused_line, sizeof(refused_line));
	sib_cm_lock(f->cli->node.cm);
	idle = sib_cm_create_id(f->cli->node.cm, 1, handler, &f->rc);
	expect_refused(sib_cm_send_rep(idle, &rp), -EINVAL, "REP", "REQ received");
	expect_refused(sib_cm_send_rtu(idle, NULL, 0), -EINVAL, "RTU", "REP received");
	expect_refused(sib_cm_send_rej(idle, 1, NULL, 0, NULL, 0), -EINVAL, "REJ", "being set up");
	expect_refused(sib_cm_send_rej(idle, 1, NULL, 0, big, sizeof(big)), -EINVAL, "REJ",
		       "private data");
	expect_refused(sib_cm_send_mra(idle, 1, false, NULL, 0), -EINVAL, "MRA",
		       "REQ or REP received");
	expect_refused(sib_cm_send_dreq(idle, NULL, 0), -EINVAL, "DREQ", "ESTABLISHED");
	expect_refused(sib_cm_send_drep(idle, NULL, 0), -EINVAL, "DREP", "DREQ received");
	expect_refused(sib_cm_establish(idle), -EINVAL, "establish", "sent its REP");
	expect_refused(sib_cm_send_sidr_rep(idle, 0, 0, 0, NULL, 0), -EINVAL, "SIDR_REP",
		       "SIDR_REQ received");
	p.private_data_len = IB_CM_REQ_PRIVATE_DATA_BYTES + 1;
	expect_refused(sib_cm_send_req(idle, &p), -EINVAL, "REQ", "private data");
	p.private_data_len = 0;
	p.transport = 9;
	expect_refused(sib_cm_send_req(idle, &p), -EINVAL, "REQ", "RC, UC and XRC");
	memset(&sp, 0, sizeof(sp));
	sp.private_data_len = IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES + 1;
	expect_refused(sib_cm_send_sidr_req(idle, &sp), -EINVAL, "SIDR_REQ", "private data");
	sib_cm_unlock(f->cli->node.cm);

	sib_log_level_cur = level; /* the handshake's own debug lines stay quiet */
	sid = connect_pair(f, &cid);
	sib_log_level_cur = SIB_LOG_DEBUG;
	sib_cm_lock(f->cli->node.cm);
	expect_refused(sib_cm_send_req(cid, &p), -EINVAL, "REQ", "IDLE id");
	expect_refused(sib_cm_send_sidr_req(cid, &sp), -EINVAL, "SIDR_REQ", "IDLE id");
	expect_refused(sib_cm_listen(cid, SID, ~0ull), -EINVAL, "listen", "IDLE id");
	expect_refused(sib_cm_send_dreq(cid, big, sizeof(big)), -EINVAL, "DREQ", "private data");
	sib_cm_unlock(f->cli->node.cm);
	sib_cm_lock(f->srv->node.cm);
	expect_refused(sib_cm_establish(sid), -EISCONN, "establish", "ESTABLISHED already");
	expect_refused(sib_cm_listen(sib_cm_create_id(f->srv->node.cm, 1, handler, &f->rs), SID,
				     ~0ull),
		       -EADDRINUSE, "listen", "overlaps");
	sib_cm_unlock(f->srv->node.cm);
	sib_log_capture(NULL, 0);
	sib_log_level_cur = level;
}

static void ack_timeout_covers_twice_the_packet_lifetime(void **state)
{
	(void)state;
	/* IBA 9.7.6.1.3: 4.096 us * 2^t >= 2 * 4.096 us * 2^plt + ack delay. */
	for (unsigned plt = 0; plt < 30; plt++)
		for (unsigned d = 0; d < 31; d++) {
			uint8_t t = sib_cm_ack_timeout((uint8_t)plt, (uint8_t)d);

			assert_true(t <= 31);
			if (t < 31)
				assert_true(sib_cm_time_ns(t) >=
					    2 * sib_cm_time_ns(plt) + sib_cm_time_ns(d));
		}
	assert_int_equal(sib_cm_time_ns(0), 4096);
	assert_true(sib_cm_time_ns(20) == 4096ull << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(handshake_disconnect_and_timewait, setup, teardown),
		cmocka_unit_test_setup_teardown(no_listener_gets_rej_invalid_service_id, setup,
						teardown),
		cmocka_unit_test_setup_teardown(consumer_rejects_with_private_data, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_req_draws_the_delayed_mra, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_rep_draws_the_rtu_again, setup, teardown),
		cmocka_unit_test_setup_teardown(unanswered_req_retransmits_then_req_error, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unanswered_rep_gives_rep_error, setup, teardown),
		cmocka_unit_test_setup_teardown(reused_qpn_is_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(timewait_answers_a_late_req_with_stale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(crossing_dreqs_each_get_dreq_received, setup,
						teardown),
		cmocka_unit_test_setup_teardown(destroy_mid_handshake_sends_rej_timeout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(destroy_while_connected_sends_dreq, setup, teardown),
		cmocka_unit_test_setup_teardown(dreq_for_an_unknown_connection_gets_drep, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sidr_resolves_a_service, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_mads_are_dropped_and_counted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_stranger_cannot_end_a_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(a_rej_names_both_comm_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(comm_ids_are_not_a_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(requests_waiting_for_their_consumer_are_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(overlapping_listeners_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(every_refused_request_says_why_in_a_debug_line, setup,
						teardown),
		cmocka_unit_test(ack_timeout_covers_twice_the_packet_lifetime),
	};

	return cmocka_run_group_tests_name("cm", tests, NULL, NULL);
}

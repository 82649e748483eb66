/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm on a fabric (sm_fabric.h): attach, then sweep; between the
 * sweeps' SMPs, serve the SA (fabric/sa.c) for the CA ports the sweeps
 * found.  The SA's requests come through the switch, whose CA ports drop
 * a packet with another port's SLID, so a request's SLID names its port.
 */
#include "fabric/sm_fabric.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fabric/sm_configure.h"
#include "fabric/sm_discover.h"
#include "fabric/mft_plan.h"
#include "fabric/sa.h"
#include "fabric/sa_mcast.h"
#include "fabric/sm.h"
#include "link/link.h"
#include "mgmt/cable_port.h"
#include "mgmt/mad_packet.h"

enum {
	WINDOW = 16,			      /* SMPs out at once */
	TRIES = 4,
	RESEND_NS = 250 * 1000000ull,
};

struct smp_req {
	uint8_t path[IB_SMP_MAX_HOPS + 1];
	unsigned hops;
	uint8_t method;
	uint16_t attr;
	uint32_t mod;
	uint8_t data[IB_SMP_DATA_BYTES];
	uint32_t tag;
};

struct in_flight {
	bool used;
	struct smp_req req;
	uint64_t tid, sent_ns;
	unsigned tries;
};

/* Where the requests of one exchange come from and their answers go. */
struct exchange {
	bool (*next)(void *ctx, struct smp_req *req);
	void (*answer)(void *ctx, uint32_t tag, const struct ib_dr_smp *resp);
	void *ctx;
};

struct fsm {
	struct sib_link *link;
	struct sib_endpoint sw;
	struct sib_cable_msg att;
	uint64_t next_tid, next_keepalive_ns;
	struct in_flight out[WINDOW];
	const struct exchange *ex;
	struct {
		uint64_t guid;
		uint16_t lid;
	} *lids;
	unsigned nlids, lids_cap;
	uint16_t next_lid;
	struct sib_cfg_state st;
	uint64_t smps, timeouts, stray, traps, own_smps;
	bool sweep_now; /* a trap said something changed */
	struct sib_sm sa; /* the SA's ports and records (sm.h: fabric) */
	struct sib_disc last; /* the last finished sweep's fabric (have_last) */
	bool have_last;
	struct sib_mft_state mft; /* what the switches' MFTs hold */
	uint64_t mft_gen;	  /* the groups' generation they were written for */
	uint64_t mft_sets;
};

static void send_smp(struct fsm *f, struct in_flight *o)
{
	uint8_t pkt[IB_MAX_PACKET];
	unsigned port;
	size_t len = sib_dr_smp_build(o->req.method, o->req.attr, o->req.mod, o->req.path,
				      o->req.hops, o->req.data, 0, o->tid, pkt, sizeof(pkt), &port);

	if (len && !sib_link_send(f->link, pkt, len, &f->sw))
		f->smps++;
	o->sent_ns = sib_link_now_ns();
	o->tries++;
}

/* Trap 128 from a switch (a link came or went): repress it and sweep now
 * (IBA 14.4.2: the SM sweeps on a trap, not only on its timer). */
static void trap(struct fsm *f, const struct sib_mad_addr *a, const uint8_t *mad)
{
	struct ib_smp smp;
	struct ib_notice n;
	struct sib_mad_addr ra;
	uint8_t out[IB_MAD_BYTES];

	ib_smp_decode(&smp, mad);
	if (ib_mad_method(&smp.hdr) != IB_MAD_METHOD_TRAP || smp.hdr.AttributeID != IB_SMP_ATTR_NOTICE) {
		f->stray++;
		return;
	}
	ib_notice_decode(&n, smp.SMPData);
	ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_TRAP_REPRESS);
	ib_smp_encode(&smp, out);
	sib_mad_addr_reply(a, SIB_SM_LID, &ra);
	sib_mgmt_send(f->link, &ra, out, &f->sw);
	f->traps++;
	if (n.TrapNumber == IB_TRAP_LINK_STATE_CHANGE) {
		if (!f->sweep_now)
			sib_info("trap 128 from LID %u: a link changed; sweeping now", a->SLID);
		f->sweep_now = true;
	}
}

/* ---------------------------------------------------------------- the SM's own port */

/* The SM's own CA, as it attached (the sweeps start from it). */
static struct ib_node_info own_node_info(const struct fsm *f)
{
	return (struct ib_node_info){
		.BaseVersion = IB_MAD_BASE_VERSION,
		.ClassVersion = IB_SMP_CLASS_VERSION,
		.NodeType = IB_NODE_TYPE_CA,
		.NumPorts = f->att.nports,
		.SystemImageGUID = f->att.sys_image_guid,
		.NodeGUID = f->att.node_guid,
		.PortGUID = f->att.node_guid + f->att.port,
		.PartitionCap = 1,
		.LocalPortNum = f->att.port,
	};
}

/*
 * The SMA of the SM's own CA port (IBA 14.2.5), for the fabric's tools:
 * Get NodeInfo, NodeDescription, PortInfo and SMInfo (14.2.5.13: sminfo
 * asks the SM's port).  Data into out; 0 or a MAD status.
 */
static uint16_t own_attr(struct fsm *f, uint16_t attr, uint32_t mod, uint8_t *out)
{
	memset(out, 0, IB_SMP_DATA_BYTES);
	switch (attr) {
	case IB_SMP_ATTR_NODE_INFO: {
		struct ib_node_info ni = own_node_info(f);

		ib_node_info_encode(&ni, out);
		return 0;
	}
	case IB_SMP_ATTR_NODE_DESCRIPTION:
		snprintf((char *)out, IB_NODE_DESCRIPTION_BYTES, "softib-sm");
		return 0;
	case IB_SMP_ATTR_PORT_INFO: {
		struct ib_port_info pi = {
			.GidPrefix = 0xfe80000000000000ull,
			.LID = SIB_SM_LID,
			.MasterSMLID = SIB_SM_LID,
			.CapabilityMask = IB_PORT_CAP_IS_SM,
			.LocalPortNum = f->att.port,
			.LinkWidthEnabled = 2,
			.LinkWidthSupported = 2,
			.LinkWidthActive = 2, /* 4X */
			.LinkSpeedSupported = 4,
			.LinkSpeedActive = 4,
			.LinkSpeedEnabled = 4, /* QDR, as every softib port says */
			.PortState = IB_PORT_STATE_ACTIVE,
			.PortPhysicalState = IB_PORT_PHYS_LINK_UP,
			.NeighborMTU = IB_MTU_4096,
			.MTUCap = IB_MTU_4096,
			.VLCap = 1,
			.OperationalVLs = 1,
			.SubnetTimeOut = SIB_SM_SUBNET_TIMEOUT,
		};

		if (mod > f->att.nports)
			return IB_MAD_STATUS_INVALID_FIELD;
		ib_port_info_encode(&pi, out);
		return 0;
	}
	case IB_SMP_ATTR_SM_INFO: {
		struct ib_sm_info si = {
			.GUID = f->att.node_guid + f->att.port,
			.ActCount = (uint32_t)f->smps,
			.SMState = IB_SM_STATE_MASTER,
		};

		ib_sm_info_encode(&si, out);
		return 0;
	}
	default:
		return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	}
}

/* A Get for the SM's own port, LID-routed or at the end of a directed
 * route: answered back the way it came, as a CA's SMA answers. */
static void own_smp(struct fsm *f, const struct sib_mad_addr *a, const uint8_t *mad)
{
	uint8_t out[IB_MAD_BYTES], data[IB_SMP_DATA_BYTES];
	struct sib_mad_addr ra;
	uint16_t status;

	if (mad[3] != IB_MAD_METHOD_GET)
		status = IB_MAD_STATUS_UNSUP_METHOD; /* no Set: this SM configures itself */
	else if (mad[2] != IB_SMP_CLASS_VERSION)
		status = IB_MAD_STATUS_BAD_VERSION;
	else
		status = own_attr(f, ib_bits_get(mad, 128, 16), (uint32_t)ib_bits_get(mad, 160, 32),
				  data);
	if (mad[1] == IB_MGMT_CLASS_SUBN_LID_ROUTED) {
		struct ib_smp smp;

		ib_smp_decode(&smp, mad);
		ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_GET_RESP);
		smp.hdr.Status = status;
		if (!status)
			memcpy(smp.SMPData, data, sizeof(data));
		ib_smp_encode(&smp, out);
		sib_mad_addr_reply(a, SIB_SM_LID, &ra);
	} else {
		struct ib_dr_smp dr;

		ib_dr_smp_decode(&dr, mad);
		ib_dr_smp_to_response(&dr, status);
		if (dr.HopCount)
			dr.ReturnPath[dr.HopPointer] = f->att.port;
		if (!status)
			memcpy(dr.SMPData, data, sizeof(data));
		ib_dr_smp_encode(&dr, out);
		sib_mad_addr_reply(a, SIB_LID_PERMISSIVE, &ra); /* as mgmt/sma.c answers */
		ra.DLID = SIB_LID_PERMISSIVE;
	}
	f->own_smps++;
	sib_mgmt_send(f->link, &ra, out, &f->sw);
}

static void smp_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct fsm *f = arg;
	struct ib_packet p;
	struct sib_mad_addr a;
	const uint8_t *mad;
	struct ib_dr_smp dr;
	const char *why;
	unsigned port;

	if (!sib_endpoint_equal(from, &f->sw) || ib_packet_decode(pkt, len, &p) != IB_PKT_OK ||
	    !(mad = sib_mgmt_parse(&p, &a))) {
		f->stray++;
		return;
	}
	if (mad[1] == IB_MGMT_CLASS_SUBN_LID_ROUTED) {
		if (mad[3] == IB_MAD_METHOD_TRAP)
			trap(f, &a, mad);
		else if (!sib_mad_is_response(mad))
			own_smp(f, &a, mad);
		else
			f->stray++;
		return;
	}
	if (mad[1] == IB_MGMT_CLASS_SUBN_ADM) {
		f->sa.now_ns = sib_link_now_ns();
		sib_sm_rx(&f->sa, pkt, len, from);
		return;
	}
	if (mad[1] != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		f->stray++;
		return;
	}
	ib_dr_smp_decode(&dr, mad);
	/* A request whose outbound path ends at this CA (IBA 14.2.2.2, as
	 * the HCAs' SMA takes it: mgmt/sma.c) is for the SM's own port. */
	if (!dr.D && !dr.R) {
		if (dr.HopCount <= IB_SMP_MAX_HOPS && (!dr.HopCount || dr.HopPointer == dr.HopCount))
			own_smp(f, &a, mad);
		else
			f->stray++;
		return;
	}
	if (!dr.R || !dr.D ||
	    ib_dr_smp_arrive(&dr, false, f->att.nports, f->att.port, &port, &why) != IB_DR_DELIVER) {
		f->stray++;
		return;
	}
	for (unsigned i = 0; i < WINDOW && f->ex; i++) {
		struct in_flight *o = &f->out[i];

		if (o->used && o->tid == dr.TransactionID) {
			o->used = false;
			f->ex->answer(f->ex->ctx, o->req.tag, &dr);
			return;
		}
	}
	f->stray++; /* the answer to a try given up on */
}

/* The cable's keepalive, and the SA's timers (RMPP resends, leases). */
static void keepalive(struct fsm *f)
{
	uint64_t now = sib_link_now_ns();

	f->sa.now_ns = now;
	sib_sa_step(&f->sa);
	sib_sa_mcast_answer_waiting(&f->sa); /* those whose wait ran out */
	sib_link_flush(f->link);
	if (now < f->next_keepalive_ns)
		return;
	sib_cable_say(f->link, &f->sw, SIB_CABLE_KEEPALIVE);
	f->next_keepalive_ns = now + SIB_CABLE_KEEPALIVE_MS * 1000000ull;
}

/* Every request of ex out and answered (or given up on). */
static void run(struct fsm *f, const struct exchange *ex, volatile sig_atomic_t *stop)
{
	f->ex = ex;
	while (!*stop) {
		unsigned busy = 0;
		uint64_t now;
		bool more = true;
		struct pollfd pfd = { .fd = sib_link_wait_fd(f->link), .events = POLLIN };

		/* answers make more requests (a new node's attributes) */
		for (unsigned i = 0; i < WINDOW && more; i++) {
			struct in_flight *o = &f->out[i];

			if (o->used)
				continue;
			if (!(more = ex->next(ex->ctx, &o->req)))
				break;
			o->used = true;
			o->tries = 0;
			o->tid = ++f->next_tid;
			send_smp(f, o);
		}
		sib_link_flush(f->link);
		for (unsigned i = 0; i < WINDOW; i++)
			busy += f->out[i].used;
		if (!busy && !more)
			break;
		if (sib_link_wait_arm(f->link) == 0)
			poll(&pfd, 1, 20);
		while (sib_link_poll(f->link, 64, smp_rx, f) > 0)
			;
		now = sib_link_now_ns();
		for (unsigned i = 0; i < WINDOW; i++) {
			struct in_flight *o = &f->out[i];

			if (!o->used || now - o->sent_ns < RESEND_NS)
				continue;
			if (o->tries < TRIES) {
				send_smp(f, o); /* the same TID (IBA 13.4.6.4) */
				continue;
			}
			o->used = false;
			f->timeouts++;
			ex->answer(ex->ctx, o->req.tag, NULL);
		}
		keepalive(f);
	}
	f->ex = NULL;
}

/* ---------------------------------------------------------------- discovery */

static bool disc_next(void *ctx, struct smp_req *req)
{
	struct sib_disc_smp q;

	if (!sib_disc_next(ctx, &q))
		return false;
	memset(req, 0, sizeof(*req));
	memcpy(req->path, q.path, sizeof(req->path));
	req->hops = q.hops;
	req->method = IB_MAD_METHOD_GET;
	req->attr = q.attr;
	req->mod = q.mod;
	req->tag = q.tag;
	return true;
}

static void disc_answer(void *ctx, uint32_t tag, const struct ib_dr_smp *resp)
{
	sib_disc_answer(ctx, tag, resp);
}

/* ---------------------------------------------------------------- Sets */

struct set_run {
	const struct sib_cfg_set *sets;
	unsigned n, next, failed;
};

static bool set_next(void *ctx, struct smp_req *req)
{
	struct set_run *r = ctx;
	const struct sib_cfg_set *s;

	if (r->next == r->n)
		return false;
	s = &r->sets[r->next];
	memset(req, 0, sizeof(*req));
	memcpy(req->path, s->path, sizeof(req->path));
	req->hops = s->hops;
	req->method = IB_MAD_METHOD_SET;
	req->attr = s->attr;
	req->mod = s->mod;
	memcpy(req->data, s->data, sizeof(req->data));
	req->tag = r->next++;
	return true;
}

static void set_answer(void *ctx, uint32_t tag, const struct ib_dr_smp *resp)
{
	struct set_run *r = ctx;

	if (!resp || resp->Status) {
		r->failed++;
		sib_log(sib_log_nth(r->failed), "SubnSet(%s) along a %u-hop path %s",
			ib_mad_attr_str(IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, r->sets[tag].attr),
			r->sets[tag].hops, resp ? "refused" : "got no answer");
	}
}

/* A LID per port GUID, kept across sweeps; the SM's own is SIB_SM_LID. */
static uint16_t lid_of(struct fsm *f, uint64_t guid)
{
	for (unsigned i = 0; i < f->nlids; i++)
		if (f->lids[i].guid == guid)
			return f->lids[i].lid;
	if (f->nlids == f->lids_cap) {
		unsigned cap = f->lids_cap ? f->lids_cap * 2 : 64;
		void *a = realloc(f->lids, cap * sizeof(*f->lids));

		if (!a)
			return 0;
		f->lids = a;
		f->lids_cap = cap;
	}
	if (f->next_lid >= 0xc000)
		return 0;
	f->lids[f->nlids].guid = guid;
	f->lids[f->nlids].lid = f->next_lid++;
	return f->lids[f->nlids++].lid;
}

/* ---------------------------------------------------------------- multicast */

/*
 * The groups' trees into the MFTs of the switches of the last sweep
 * (mft_plan.h), then the SA answers the joins and leaves that waited for
 * them (sa_mcast.h: a member hears it joined once the fabric carries the
 * group).  A Set that fails leaves the state unknown: the next sweep
 * writes every block again.
 */
static void mcast_program(struct fsm *f, volatile sig_atomic_t *stop)
{
	struct sib_sa_mcast *mc = f->sa.sa ? f->sa.sa->mcast : NULL;
	struct set_run sr = { 0 };
	struct exchange sx = { set_next, set_answer, &sr };
	struct sib_mft_member *m = NULL;
	struct sib_mft_group *g = NULL;
	struct sib_cfg_set *sets = NULL;
	unsigned nm = 0, k = 0, ng;
	uint64_t gen;

	if (!mc || !f->have_last)
		return;
	gen = mc->generation;
	ng = mc->ngroups;
	for (unsigned i = 0; i < ng; i++)
		nm += mc->groups[i].nmembers;
	g = calloc(ng ? ng : 1, sizeof(*g));
	m = calloc(nm ? nm : 1, sizeof(*m));
	if (!g || !m)
		goto out;
	for (unsigned i = 0; i < ng; i++) {
		const struct sib_sa_mgroup *gr = &mc->groups[i];

		g[i].mlid = gr->rec.MLID;
		g[i].m = &m[k];
		for (unsigned j = 0; j < gr->nmembers; j++, k++) {
			m[k].port_guid = gr->members[j].port_guid;
			m[k].receives = gr->members[j].JoinState &
					(IB_MCR_JOIN_FULL_MEMBER | IB_MCR_JOIN_NON_MEMBER);
			g[i].n++;
		}
	}
	if (sib_mft_plan(&f->last, g, ng, &f->mft, &sets, &sr.n))
		goto out;
	sr.sets = sets;
	if (sr.n)
		run(f, &sx, stop);
	f->mft_sets += sr.n;
	if (sr.n)
		sib_info("multicast: %u MFT blocks written for %u groups, %u failed", sr.n, ng,
			 sr.failed);
	if (sr.failed) {
		sib_mft_state_free(&f->mft);
	} else {
		/* members of the groups as planned (run() may have taken
		 * joins since: those groups wait for the next plan) */
		for (unsigned i = 0; i < mc->ngroups; i++)
			for (unsigned j = 0; mc->groups[i].generation <= gen &&
					     j < mc->groups[i].nmembers; j++)
				mc->groups[i].members[j].programmed_gen = mc->groups[i].generation;
	}
	f->mft_gen = gen;
	sib_sa_mcast_answer_waiting(&f->sa);
out:
	free(sets);
	free(g);
	free(m);
}

/* ---------------------------------------------------------------- a sweep */

static void sweep(struct fsm *f, const struct sib_sm_fabric_opts *o, volatile sig_atomic_t *stop,
		  unsigned *last_nodes)
{
	struct ib_node_info self = own_node_info(f);
	struct exchange dx = { disc_next, disc_answer, NULL };
	struct exchange sx = { set_next, set_answer, NULL };
	struct set_run sr = { 0 };
	struct sib_cfg_counts c;
	struct sib_cfg_set *sets;
	struct sib_disc d;
	uint16_t *lids;
	unsigned nsw = 0;

	if (sib_disc_start(&d, &self, "softib-sm"))
		return;
	dx.ctx = &d;
	run(f, &dx, stop);
	lids = calloc(d.nnodes, sizeof(*lids));
	if (!lids || *stop) {
		free(lids);
		sib_disc_free(&d);
		return;
	}
	for (unsigned i = 0; i < d.nnodes; i++) {
		const struct sib_disc_node *n = &d.node[i];
		const struct sib_disc_port *cp = &n->port[n->ni.LocalPortNum];
		uint8_t mtu = cp->have_pi && cp->pi.MTUCap >= IB_MTU_256 && cp->pi.MTUCap <= IB_MTU_4096
				      ? cp->pi.MTUCap
				      : IB_MTU_256;

		nsw += n->ni.NodeType == IB_NODE_TYPE_SWITCH;
		lids[i] = i == 0 ? SIB_SM_LID : lid_of(f, n->ni.PortGUID);
		/* The SA knows a CA port before its Sets go out: its first
		 * request may come as soon as it is ACTIVE. */
		if (i && n->ni.NodeType == IB_NODE_TYPE_CA && lids[i])
			sib_sm_port_found(&f->sa, n->ni.PortGUID, n->ni.NodeGUID, lids[i], mtu,
					  &f->sw);
	}
	if (sib_disc_done(&d)) {
		struct sib_disc_port *own = &d.node[0].port[d.node[0].ni.LocalPortNum];
		uint8_t pi[IB_SMP_DATA_BYTES];

		sib_sm_sweep_end(&f->sa);
		/* The SM's own port is in the records too (saquery -s) */
		if (!own->have_pi && !own_attr(f, IB_SMP_ATTR_PORT_INFO, 0, pi)) {
			ib_port_info_decode(&own->pi, pi);
			own->have_pi = true;
		}
		sib_sa_nodes_set(&f->sa, &d, lids);
	}
	if (!sib_cfg_plan(&d, lids, SIB_SM_LID, o->engine, &f->st, &sets, &sr.n, &c)) {
		sr.sets = sets;
		sx.ctx = &sr;
		run(f, &sx, stop);
		if (d.nnodes != *last_nodes || c.lft_sets || c.arm_sets || c.activate_sets || sr.failed)
			sib_info("sweep: %u nodes (%u switches, %u CAs) in %u discovery SMPs "
				 "(%u timed out); %u LID, %u LFT block, %u Armed, %u Active Sets, "
				 "%u failed%s",
				 d.nnodes, nsw, d.nnodes - nsw, d.smps, d.timeouts, c.lid_sets,
				 c.lft_sets, c.arm_sets, c.activate_sets, sr.failed,
				 c.unrouted ? "; some LIDs have no route" : "");
		if (sr.failed) /* write them all again next time */
			sib_cfg_state_free(&f->st);
		free(sets);
	}
	*last_nodes = d.nnodes;
	free(lids);
	/* The groups' trees over what this sweep found. */
	if (f->have_last)
		sib_disc_free(&f->last);
	f->last = d;
	f->have_last = true;
	mcast_program(f, stop);
}

int sib_sm_fabric_run(const struct sib_sm_fabric_opts *o, volatile sig_atomic_t *stop)
{
	struct fsm f;
	unsigned last_nodes = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	f.next_lid = SIB_SM_LID + 1;
	if (sib_link_open_env(&f.link)) {
		fprintf(stderr, "softib-sm: no link to attach with (SOFTIB_ADDR?)\n");
		return 1;
	}
	rc = sib_cable_attach(f.link, o->fabric, o->node, 5000, &f.att, &f.sw);
	if (rc) {
		fprintf(stderr, "softib-sm: cannot attach to the fabric at %s as \"%s\": %s\n",
			o->fabric, o->node ? o->node : "",
			rc == -ECONNREFUSED ? sib_cable_reason_str(f.att.reason)
					    : "no softib-switch answers there");
		sib_link_close(f.link);
		return 1;
	}
	if (sib_sm_init(&f.sa, f.link, f.att.node_guid + f.att.port, sib_link_now_ns())) {
		fprintf(stderr, "softib-sm: out of memory\n");
		sib_cable_say(f.link, &f.sw, SIB_CABLE_DETACH);
		sib_link_close(f.link);
		return 1;
	}
	f.sa.fabric = true;
	fprintf(stderr, "softib-sm: on the fabric at %s as CA \"%s\" (LID %u), sweeping every %g s "
			"with %s routing\n",
		o->fabric, f.att.id, SIB_SM_LID, o->sweep_s, sib_route_engine_name(o->engine));
	while (!*stop) {
		uint64_t next = sib_link_now_ns() + (uint64_t)(o->sweep_s * 1e9);

		f.sweep_now = false;
		sweep(&f, o, stop, &last_nodes);
		while (!*stop && !f.sweep_now && sib_link_now_ns() < next) {
			struct pollfd pfd = { .fd = sib_link_wait_fd(f.link), .events = POLLIN };

			if (sib_link_wait_arm(f.link) == 0)
				poll(&pfd, 1, 100);
			while (sib_link_poll(f.link, 64, smp_rx, &f) > 0)
				;
			/* a join or leave changed a group: its tree now */
			if (f.sa.sa && f.sa.sa->mcast && f.sa.sa->mcast->generation != f.mft_gen)
				mcast_program(&f, stop);
			keepalive(&f);
		}
	}
	sib_cable_say(f.link, &f.sw, SIB_CABLE_DETACH);
	fprintf(stderr, "softib-sm: %llu SMPs sent, %llu timed out, %llu traps, %llu SA requests "
			"(%llu from a LID no sweep found), %llu other packets ignored\n",
		(unsigned long long)f.smps, (unsigned long long)f.timeouts,
		(unsigned long long)f.traps, (unsigned long long)f.sa.sa_queries,
		(unsigned long long)f.sa.sa_wrong_source, (unsigned long long)f.stray);
	sib_sm_fini(&f.sa);
	sib_cfg_state_free(&f.st);
	sib_mft_state_free(&f.mft);
	if (f.have_last)
		sib_disc_free(&f.last);
	free(f.lids);
	sib_link_close(f.link);
	return 0;
}

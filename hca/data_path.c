/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The HCA's data-path engine wired to the rest of the HCA: port 1's link,
 * the memreg table and QP numbers, the progress thread (the rx_data hook
 * and one progress timer for every data-path timer), and the SA client for
 * LID/GID -> endpoint.
 */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "hca/hca.h"
#include "mgmt/mad_packet.h"
#include "mgmt/port_up.h"
#include "mgmt/sa_client.h"
#include "transport/engine.h"

static void engine_timer_fired(void *arg)
{
	struct sib_hca *hca = arg;

	if (hca->engine)
		sib_engine_tick(hca->engine);
}

static void engine_arm(void *arg, uint64_t when)
{
	struct sib_hca *hca = arg;
	uint64_t now = sib_link_now_ns();

	sib_timer_arm(&hca->progress.timers, &hca->engine_timer, when > now ? when - now : 0,
		      engine_timer_fired, hca);
}

static int engine_resolve(void *arg, uint16_t dlid, const uint8_t *dgid, struct sib_endpoint *out)
{
	struct sib_hca *hca = arg;
	struct sib_port *port = sib_hca_port(hca, 1);
	uint16_t lid;

	/* Our own port: no need to ask the SA (loopback QPs in one process). */
	if (port && port->LID && dlid == port->LID && hca->node.mgmt[0].link) {
		*out = hca->node.mgmt[0].link->local;
		return 0;
	}
	if (dgid && !dlid)
		return sib_sa_resolve_gid(&hca->node, 1, dgid, out, &lid);
	return sib_sa_resolve_lid(&hca->node, 1, dlid, out);
}

/* The receive checks' lookup: the SA client's cache, never waiting. */
static int engine_lookup(void *arg, uint16_t lid, bool refresh, struct sib_endpoint *out)
{
	struct sib_hca *hca = arg;

	return sib_sa_lookup_lid(&hca->node, 1, lid, refresh, out);
}

/* A packet dropped for its P_Key: trap 257 to the SM (IBA 10.9.4). */
static void engine_bad_pkey(void *arg, const struct ib_packet *pkt)
{
	struct sib_hca *hca = arg;
	struct ib_notice_bad_key d;

	memset(&d, 0, sizeof(d));
	d.LID1 = pkt->lrh.SLID;
	d.LID2 = pkt->lrh.DLID;
	d.Key = pkt->bth.P_Key;
	d.SL = pkt->lrh.SL;
	d.QP1 = (pkt->headers & IB_HDRBIT(IB_HDR_DETH)) ? pkt->deth.SrcQP : 0;
	d.QP2 = pkt->bth.DestQP;
	if (pkt->has_grh) {
		memcpy(d.GID1, pkt->grh.SGID.raw, 16);
		memcpy(d.GID2, pkt->grh.DGID.raw, 16);
	}
	sib_port_trap_bad_p_key(&hca->node, 1, &d);
}

/* The progress thread's rx_data hook: the packet goes to the HCA's engine. */
static void data_path_rx(struct sib_hca *hca, const struct ib_packet *pkt,
			 const struct sib_endpoint *from)
{
	if (hca && hca->engine)
		sib_engine_rx(hca->engine, pkt, from);
}

int sib_hca_engine_init(struct sib_hca *hca)
{
	struct sib_engine_init ei = {
		.link = hca->node.mgmt[0].link,
		.memreg = hca->memreg,
		.qpns = hca->qpns,
		.srqns = hca->srqns,
		.port = &hca->node.ports[0],
		.resolve = engine_resolve,
		.resolve_arg = hca,
		.lookup = engine_lookup,
		.lookup_arg = hca,
		.arm = engine_arm,
		.arm_arg = hca,
		.bad_pkey = engine_bad_pkey,
		.bad_pkey_arg = hca,
	};
	int err = sib_engine_create(&ei, &hca->engine);

	if (err)
		return err;
	sib_hca_set_rx_data(hca, data_path_rx);
	return 0;
}

void sib_hca_engine_fini(struct sib_hca *hca)
{
	if (!hca->engine)
		return;
	sib_hca_set_rx_data(hca, NULL);
	sib_timer_cancel(&hca->progress.timers, &hca->engine_timer);
	sib_engine_destroy(hca->engine);
	hca->engine = NULL;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The HCA's data-path engine wired to the rest of the HCA: port 1's link,
 * the memreg table and QP numbers, the progress thread (the rx_data hook
 * and one progress timer for every data-path timer), and the SA client for
 * LID/GID -> endpoint.
 */
#include <errno.h>
#include <string.h>

#include "transport/engine.h"
#include "hca/hca.h"
#include "base/log.h"
#include "mgmt/sa_client.h"

static void engine_timer_fired(struct sib_hca *hca, void *arg)
{
	(void)arg;
	if (hca->engine)
		sib_engine_tick(hca->engine);
}

static void engine_arm(void *arg, uint64_t when)
{
	struct sib_hca *hca = arg;
	uint64_t now = sib_link_now_ns();

	sib_timer_arm(hca, &hca->engine_timer, when > now ? when - now : 0, engine_timer_fired,
		      NULL);
}

static int engine_resolve(void *arg, uint16_t dlid, const uint8_t *dgid, struct sib_endpoint *out)
{
	struct sib_hca *hca = arg;
	struct sib_port *port = sib_hca_port(hca, 1);
	uint16_t lid;

	/* Our own port: no need to ask the SA (loopback QPs in one process). */
	if (port && port->LID && dlid == port->LID && hca->mgmt[0].link) {
		*out = hca->mgmt[0].link->local;
		return 0;
	}
	if (dgid && !dlid)
		return sib_sa_resolve_gid(hca, 1, dgid, out, &lid);
	return sib_sa_resolve_lid(hca, 1, dlid, out);
}

int sib_hca_engine_init(struct sib_hca *hca)
{
	struct sib_engine_init ei = {
		.link = hca->mgmt[0].link,
		.memreg = hca->memreg,
		.qpns = hca->qpns,
		.srqns = hca->srqns,
		.port = &hca->ports[0],
		.resolve = engine_resolve,
		.resolve_arg = hca,
		.arm = engine_arm,
		.arm_arg = hca,
	};
	int err = sib_engine_create(&ei, &hca->engine);

	if (err)
		return err;
	sib_hca_set_rx_data(hca, sib_transport_rx);
	return 0;
}

void sib_hca_engine_fini(struct sib_hca *hca)
{
	if (!hca->engine)
		return;
	sib_hca_set_rx_data(hca, NULL);
	sib_timer_cancel(hca, &hca->engine_timer);
	sib_engine_destroy(hca->engine);
	hca->engine = NULL;
}

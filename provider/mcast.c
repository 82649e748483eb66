/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ibv_attach_mcast / ibv_detach_mcast: a UD QP joins or leaves the
 * receivers of a multicast group on its port.  The rules and what happens
 * to the packets are transport/mcast.h's; joining the group at the SA (so
 * that the subnet manager adds the port to the MLID) is the program's own
 * step, as on hardware (ibv_attach_mcast(3)).
 */
#include <errno.h>

#include "base/log.h"
#include "provider/queues.h"
#include "provider/softib.h"
#include "transport/mcast.h"

static int softib_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	char why[160] = "";
	int err;

	if (!gid) {
		sib_warn("attach_mcast on QP 0x%06x: gid is NULL", qp->qp_num);
		return EINVAL;
	}
	err = sib_qp_mcast_attach(to_sqp(qp)->qp, gid->raw, lid, why, sizeof(why));
	if (err)
		sib_warn("attach_mcast on QP 0x%06x: %s", qp->qp_num, why);
	return err;
}

static int softib_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	char why[160] = "";
	int err;

	if (!gid) {
		sib_warn("detach_mcast on QP 0x%06x: gid is NULL", qp->qp_num);
		return EINVAL;
	}
	err = sib_qp_mcast_detach(to_sqp(qp)->qp, gid->raw, lid, why, sizeof(why));
	if (err)
		sib_warn("detach_mcast on QP 0x%06x: %s", qp->qp_num, why);
	return err;
}

const struct verbs_context_ops softib_mcast_ops = {
	.attach_mcast = softib_attach_mcast,
	.detach_mcast = softib_detach_mcast,
};

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * UD multicast in the HCA (IBA Vol 1 10.5.2.x, 9.8.2; verbs
 * ibv_attach_mcast(3)): which of this port's QPs are attached to which
 * multicast group, and which ports are members of each MLID -- the part of
 * a switch's MulticastForwardingTable (IBA 14.2.5.12) that softib's ports
 * keep for themselves, because there is no switch: a multicast send is
 * replicated by the sender to every member port's UDP endpoint, the way a
 * switch fans it out.  The owner (the HCA, from what the SM programs)
 * fills the member ports with sib_engine_mcast_set_ports.
 *
 * What real HCAs do, and so what softib does:
 *   - a QP attached twice to one group receives one copy (ibv_attach_mcast(3));
 *   - only UD QPs attach, the MGID must be a multicast GID (first byte
 *     0xFF, IBA 4.1.1) and on an IB port the MLID a multicast LID
 *     0xC000..0xFFFE (IBA 4.1.3) -- EINVAL otherwise, as the kernel's
 *     ib_attach_mcast (drivers/infiniband/core/verbs.c) refuses them;
 *   - a multicast send is delivered to every QP of the sending port that
 *     is attached to the group, the sending QP included: a switch never
 *     sends a packet back out of the port it came in on, so the HCA loops
 *     it back itself (mlx4/mlx5 do: IPoIB drops its own looped-back
 *     multicasts, "net/mlx5e: IPoIB, Drop multicast packets that this
 *     interface sent", and rdma-core's mckey receives its own by default);
 *   - a QP created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB does not receive
 *     the multicasts it sent itself; the port's other attached QPs still
 *     do (mlx4 keeps the block bit per attached QP: mlx4_ib_mcg_attach
 *     passes the QP's BLOCK_MULTICAST_LOOPBACK flag to the group entry).
 *
 * On receive a packet for QP 0xFFFFFF (IBA 9.6.1.1) goes to every QP
 * attached to the group its GRH's DGID names (or, without a GRH, to the
 * groups with its DLID), each through the receive checks of its QP (P_Key,
 * Q_Key, state) as if it had been sent to that QP alone.
 */
#ifndef SIB_TRANSPORT_MCAST_H
#define SIB_TRANSPORT_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link/link.h"

struct sib_engine;
struct sib_qp;

#define SIB_MCAST_QPN 0xffffffu /* IBA 9.6.1.1: DestQP of every multicast packet */
#define SIB_MLID_MIN 0xc000     /* IBA 4.1.3: multicast LIDs 0xC000..0xFFFE */
#define SIB_MLID_MAX 0xfffe

static inline bool sib_lid_is_multicast(uint16_t lid)
{
	return lid >= SIB_MLID_MIN && lid <= SIB_MLID_MAX;
}

static inline bool sib_gid_is_multicast(const uint8_t gid[16])
{
	return gid[0] == 0xff;
}

/*
 * Attach / detach a QP (ibv_attach_mcast / ibv_detach_mcast).  0; EINVAL
 * (not UD, not a multicast MGID or MLID, the MGID known with another MLID,
 * detach of a QP not attached), ENOMEM (SIB_MAX_MCAST_* reached).  why
 * names the rule on failure.  Attaching twice is 0 and one copy.
 */
int sib_qp_mcast_attach(struct sib_qp *qp, const uint8_t mgid[16], uint16_t mlid, char *why,
			size_t why_len);
int sib_qp_mcast_detach(struct sib_qp *qp, const uint8_t mgid[16], uint16_t mlid, char *why,
			size_t why_len);
/* Groups the QP is attached to (destroy refuses a QP still attached). */
unsigned sib_qp_mcast_groups(struct sib_qp *qp);

/*
 * The member ports of MLID mlid, as the subnet manager programmed them
 * (this port may be among them): n endpoints, n = 0 removes the MLID.
 * 0 or ENOMEM / EINVAL.
 */
int sib_engine_mcast_set_ports(struct sib_engine *eng, uint16_t mlid,
			       const struct sib_endpoint *eps, unsigned n);

/*
 * A port cabled to a fabric (SOFTIB_FABRIC) sends each multicast packet
 * once, to the switch (sw), whose multicast forwarding table fans it out;
 * the lists above are not used.  The loopback to this port's attached QPs
 * stays: a switch never sends a packet back out of the port it came in by.
 */
void sib_engine_mcast_via_cable(struct sib_engine *eng, const struct sib_endpoint *sw);

/* One attached group, for `softib info`. */
struct sib_mcast_group_info {
	uint8_t MGID[16];
	uint16_t MLID;
	unsigned nqp;	/* QPs of this port attached */
	unsigned ports; /* member ports the SM programmed for the MLID */
};
/* Up to max groups into out; returns how many there are in all. */
unsigned sib_engine_mcast_groups(struct sib_engine *eng, struct sib_mcast_group_info *out,
				 unsigned max);

#endif

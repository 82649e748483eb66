/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A port joining and leaving multicast groups at the SA: SubnAdmSet and
 * SubnAdmDelete of an MCMemberRecord (IBA 15.2.5.17; the SA's rules are
 * fabric/sa_mcast.h's).  The SM then programs the member ports
 * (mgmt/mcast_ports.h).  Both block like every sa_query.h call.
 */
#ifndef SIB_MGMT_SA_MCMEMBER_H
#define SIB_MGMT_SA_MCMEMBER_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/sa.h"

struct sib_node;

/* Queries a join or leave makes at most (each sa_query.h's retries): the
 * SA waits up to 3 s for the member ports (fabric/sa_mcast.h). */
#define SIB_SA_MCAST_ATTEMPTS 4

/*
 * Joins (or creates) the group q names with the components comp_mask;
 * q->PortGID is set to the port's GID[0].  0 and *out (the group's
 * values, MLID and Q_Key included); -EINVAL when the SA refused the
 * request (its status in *sa_status), or the errors of sib_sa_query.
 */
int sib_sa_mcast_join(struct sib_node *node, unsigned port_num, struct ib_mcmember_record *q,
		      uint64_t comp_mask, struct ib_mcmember_record *out, uint16_t *sa_status);
/* Leaves with the JoinState bits of q (MGID, PortGID, JoinState).  0, or
 * -ENOENT when the SA knew no such membership, or sib_sa_query's errors;
 * wait false: sends and does not wait (teardown). */
int sib_sa_mcast_leave(struct sib_node *node, unsigned port_num, const uint8_t mgid[16],
		       uint8_t join_state, bool wait);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * MCMemberRecord joins and leaves from a port (sa_mcmember.h).
 */
#include <errno.h>
#include <string.h>

#include "mgmt/node.h"
#include "mgmt/sa_mcmember.h"
#include "mgmt/sa_query.h"

int sib_sa_mcast_join(struct sib_node *node, unsigned port_num, struct ib_mcmember_record *q,
		      uint64_t comp_mask, struct ib_mcmember_record *out, uint16_t *sa_status)
{
	struct sib_port *port = sib_node_port(node, port_num);
	uint8_t rec[IB_MCMEMBER_RECORD_BYTES];
	struct sib_sa_answer ans;
	int rc;

	if (!port)
		return -EINVAL;
	memcpy(q->PortGID.raw, port->GID[0], 16);
	ib_mcmember_record_encode(q, rec);
	/* The SA answers once every member port installed the change, which
	 * on a loaded machine may take longer than one query's retries: a
	 * join asked again is the same join (JoinState bits only add). */
	for (int i = 0; i < SIB_SA_MCAST_ATTEMPTS; i++) {
		rc = sib_sa_query(node, port_num, IB_MAD_METHOD_SET, IB_SA_ATTR_MCMEMBER_RECORD,
				  comp_mask | IB_MCR_COMP_PORT_GID, rec, sizeof(rec), &ans);
		if (rc != -ETIMEDOUT)
			break;
	}
	if (rc)
		return rc;
	if (sa_status)
		*sa_status = ans.status;
	if (ans.status || ans.nrec < 1 || ans.rec_bytes < IB_MCMEMBER_RECORD_BYTES) {
		sib_sa_answer_free(&ans);
		return -EINVAL;
	}
	ib_mcmember_record_decode(out, ans.records);
	sib_sa_answer_free(&ans);
	return 0;
}

int sib_sa_mcast_leave(struct sib_node *node, unsigned port_num, const uint8_t mgid[16],
		       uint8_t join_state, bool wait)
{
	const uint64_t comp = IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID | IB_MCR_COMP_JOIN_STATE;
	struct sib_port *port = sib_node_port(node, port_num);
	uint8_t rec[IB_MCMEMBER_RECORD_BYTES];
	struct ib_mcmember_record q;
	struct sib_sa_answer ans;
	bool asked_before = false;
	int rc = 0;

	if (!port)
		return -EINVAL;
	memset(&q, 0, sizeof(q));
	memcpy(q.MGID.raw, mgid, 16);
	memcpy(q.PortGID.raw, port->GID[0], 16);
	q.JoinState = join_state;
	ib_mcmember_record_encode(&q, rec);
	if (!wait) {
		sib_sa_send_only(node, port_num, IB_MAD_METHOD_DELETE, IB_SA_ATTR_MCMEMBER_RECORD,
				 comp, rec, sizeof(rec));
		return 0;
	}
	for (int i = 0; i < SIB_SA_MCAST_ATTEMPTS; i++) {
		rc = sib_sa_query(node, port_num, IB_MAD_METHOD_DELETE, IB_SA_ATTR_MCMEMBER_RECORD,
				  comp, rec, sizeof(rec), &ans);
		if (rc != -ETIMEDOUT)
			break;
		asked_before = true;
	}
	if (rc)
		return rc;
	/* A leave asked again finds the membership gone: that was ours. */
	rc = ans.status && !asked_before ? -ENOENT : 0;
	sib_sa_answer_free(&ans);
	return rc;
}

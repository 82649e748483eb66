/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SA queries beyond the endpoint lookups of sa_client.c: any SubnAdm method
 * on any attribute, with RMPP reassembly of GetTable answers (IBA 13.6:
 * the receiving side ACKs each segment in order, a gap is ACKed again from
 * the last one in order), and the record operations the rdma_cm emulation
 * needs: PathRecord Get (IBA 15.2.5.16), ServiceRecord Set, Delete and
 * GetTable (15.2.5.14).
 *
 * Every call is a blocking send of the node's MAD layer (mad_wait.h): up
 * to SIB_SA_WAIT_MS (sa_client.h), and each segment of an answer still
 * arriving restarts the wait; it must not run on the thread that delivers
 * MADs (-EDEADLK).
 */
#ifndef SIB_MGMT_SA_QUERY_H
#define SIB_MGMT_SA_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"
#include "wire/sa.h"

struct sib_node;

/* The SA's answer: its status (0 when records follow) and the records. */
struct sib_sa_answer {
	uint16_t status;
	unsigned nrec, rec_bytes;
	uint8_t *records; /* nrec * rec_bytes, malloc'd; NULL when none */
};

/*
 * Sends method (Get, GetTable, Set, Delete) for attr with record and
 * ComponentMask comp_mask to the port's SM and waits for the answer.
 * 0 with *ans filled (ans->status says what the SA answered), or
 * -ETIMEDOUT, -ENETDOWN (port not ACTIVE, no SM, or no SM verified itself
 * to the port within SIB_PORT_BRINGUP_NS: nothing is sent),
 * -EDEADLK, -ENOMEM.  Only the verified SM's answers count (sa_client.c
 * drops and counts the others in sa.foreign).
 */
int sib_sa_query(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
		 uint64_t comp_mask, const uint8_t *record, unsigned rec_bytes,
		 struct sib_sa_answer *ans);
void sib_sa_answer_free(struct sib_sa_answer *ans);

/* Sends method for attr and does not wait (what is left to do at exit);
 * without a verified SM nothing is sent (a debug line says so). */
void sib_sa_send_only(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
		      uint64_t comp_mask, const uint8_t *record, unsigned rec_bytes);

/*
 * The path from sgid to dgid (SubnAdmGet(PathRecord) with SGID, DGID,
 * P_Key 0xffff, NumbPath 1, Reversible, and the ServiceID and TClass
 * given): 0 and *out, -EHOSTUNREACH when the SA knows no such path, or the
 * errors of sib_sa_query.
 */
int sib_sa_path_record(struct sib_node *node, unsigned port_num, const uint8_t sgid[16],
		       const uint8_t dgid[16], uint64_t service_id, uint8_t tclass,
		       struct ib_path_record *out);

/* SubnAdmSet / SubnAdmDelete of a ServiceRecord (identified by ServiceID,
 * ServiceGID, ServiceP_Key; its ServiceKey proves ownership).  0, or
 * -EACCES when the SA refused, or the errors of sib_sa_query. */
int sib_sa_service_set(struct sib_node *node, unsigned port_num,
		       const struct ib_service_record *r);
int sib_sa_service_delete(struct sib_node *node, unsigned port_num,
			  const struct ib_service_record *r);

/* SubnAdmGetTable(ServiceRecord): every record matching q in the
 * components of comp_mask, in *out (malloc'd, *n of them). */
int sib_sa_service_table(struct sib_node *node, unsigned port_num,
			 const struct ib_service_record *q, uint64_t comp_mask,
			 struct ib_service_record **out, unsigned *n);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's subnet administrator beyond PathRecord: the ServiceRecords
 * ports register (sa_service.c, IBA 15.2.5.14) and the RMPP transfers that
 * carry GetTable answers longer than one MAD (sa_rmpp.c, IBA 13.6).  sa.c
 * dispatches to both.  The state lives in struct sib_sa_state, hung from
 * the SM (sm->sa) on first use.
 */
#ifndef SIB_FABRIC_SA_H
#define SIB_FABRIC_SA_H

#include <stdint.h>

#include "fabric/sm.h"
#include "wire/sa.h"

/* How long an RMPP segment waits for its ACK, and how often it is sent. */
#define SIB_SA_RMPP_TIMEOUT_NS (200ull * 1000000ull)
#define SIB_SA_RMPP_TRIES 5
/* GetTable answers on their way at once: from one requester (endpoint),
 * and their bytes in all, so that requests nobody ACKs cannot make the SM
 * grow (a requester asks again once its transfers end). */
#define SIB_SA_TRANSFERS_PER_SOURCE 4
#define SIB_SA_TRANSFER_BYTES_MAX (16u << 20)
/* Records per port, and in all, the SA keeps. */
#define SIB_SA_SERVICES_PER_PORT 64
#define SIB_SA_SERVICES_MAX 16384

struct sib_sa_service {
	struct ib_service_record rec;
	uint64_t port_guid;  /* the port that registered it */
	uint64_t expires_ns; /* 0: infinite lease */
};

/* One GetTableResp on its way, segment by segment. */
struct sib_sa_transfer {
	uint64_t tid;
	struct sib_mad_addr a;	  /* the reply's addressing */
	struct sib_endpoint to;
	struct ib_sa_mad hdr;	  /* the request's header, turned into the response's */
	uint8_t *data;
	uint32_t len;		  /* bytes of records */
	uint32_t nseg, acked, window_last, sent;
	unsigned tries;
	uint64_t deadline_ns;
};

struct sib_sa_mcast;

struct sib_sa_state {
	struct sib_sa_mcast *mcast; /* multicast groups (sa_mcast.h) */
	struct sib_sa_service *services;
	unsigned nservices, services_cap;
	struct sib_sa_transfer *transfers;
	unsigned ntransfers, transfers_cap;
	uint64_t transfer_bytes; /* of every transfer's records */
	uint64_t transfers_refused; /* a limit above: ERR_NO_RESOURCES */
	uint64_t service_sets, service_deletes;
	uint64_t address_claims_refused; /* address records another host holds */
	uint64_t services_refused; /* Sets beyond the records of a port or of the SA */
	/* NodeRecords and PortInfoRecords, encoded (sa_nodes.c): on a fabric
	 * only, where the sweeps read every node (have_nodes). */
	bool have_nodes;
	uint8_t *node_recs, *port_recs;
	unsigned n_node_recs, n_port_recs;
};

/* The state, made on first use; NULL when out of memory. */
struct sib_sa_state *sib_sa_state(struct sib_sm *sm);
void sib_sa_state_free(struct sib_sm *sm);

/* Answers request m with status and nrec records (one MAD; sa.c). */
void sib_sa_respond(struct sib_sm *sm, const struct sib_mad_addr *a,
		    const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		    uint16_t status, const uint8_t *records, unsigned rec_bytes, unsigned nrec);

/* A ServiceRecord request (Set, Get, GetTable, Delete). */
void sib_sa_service_record(struct sib_sm *sm, const struct sib_mad_addr *a,
			   const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method);
/* Every record the port registered goes with it (the SM dropped it). */
void sib_sa_port_gone(struct sib_sm *sm, uint64_t port_guid);
/* Records whose lease ran out leave; when the next one does (0: none). */
void sib_sa_services_expire(struct sib_sm *sm);
uint64_t sib_sa_services_next_expiry(const struct sib_sm *sm);

/* Sends nrec records of rec_bytes each as a GetTableResp to request m:
 * one MAD, or an RMPP transfer that continues with the requester's ACKs. */
void sib_sa_send_table(struct sib_sm *sm, const struct sib_mad_addr *a,
		       const struct sib_endpoint *to, const struct ib_sa_mad *m,
		       const uint8_t *records, unsigned rec_bytes, unsigned nrec);
/* An RMPP ACK, STOP or ABORT from the requester at LID slid behind from. */
void sib_sa_rmpp_rx(struct sib_sm *sm, const struct ib_sa_mad *m, uint16_t slid,
		    const struct sib_endpoint *from);

struct sib_disc;
/* The nodes and ports of a sweep's fabric (lids[i]: node i's LID, 0: none
 * yet), as NodeRecords and PortInfoRecords from now on. */
void sib_sa_nodes_set(struct sib_sm *sm, const struct sib_disc *d, const uint16_t *lids);
void sib_sa_nodes_free(struct sib_sa_state *s);
/* A NodeRecord or PortInfoRecord Get or GetTable, answered: true; false
 * when it is neither, or no sweep gave records (then it is not served). */
bool sib_sa_nodes_query(struct sib_sm *sm, const struct sib_mad_addr *a,
			const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method);

/* Retransmissions, expired leases; and when that is next due (0: never). */
void sib_sa_step(struct sib_sm *sm);
uint64_t sib_sa_next_deadline(const struct sib_sm *sm);

#endif

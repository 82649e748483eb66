/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The port's SA client (IBA 15.4): asks softib-sm on QP1 where a LID or GID
 * lives (the vendor SoftibEndpointRecord, mgmt/mad_packet.h) and caches the
 * answer.  The data path calls it when a QP moves to RTR with an address
 * vector and at create_ah; after that data goes straight to the peer's
 * endpoint, never through the SM.
 *
 * Cache: a positive entry is trusted for SIB_SA_POSITIVE_TTL_NS (a port that
 * left and came back gets a new endpoint, so entries must expire), a
 * negative one ("no such port") for SIB_SA_NEGATIVE_TTL_NS.  Every answer
 * cached for a LID is told to the node's owner (node ops lid_resolved) and
 * to its CM (sib_cm_source_known): what waits for that source goes on.
 *
 * Queries go to the port's verified SM (mgmt/port_up.h) through the node's
 * MAD layer (mad_send.h): SIB_SA_TRIES tries, the first waiting
 * SIB_SA_TIMEOUT_MS and each next one twice as long (SIB_SA_WAIT_MS in
 * all), all with one TID, and an answer counts only from the endpoint the
 * query went to.  Other SA answers are counted in foreign.
 */
#ifndef SIB_MGMT_SA_CLIENT_H
#define SIB_MGMT_SA_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_packet.h"

struct sib_node;
struct sib_mad_send_req;

#define SIB_SA_POSITIVE_TTL_NS (30ull * 1000000000ull)
#define SIB_SA_NEGATIVE_TTL_NS (500ull * 1000000ull)
/* A query's first try waits SIB_SA_TIMEOUT_MS, each next one twice as
 * long (IBA 13.4.6.4: a starved SM answers late, and an answer to any try
 * counts, all having one TID): SIB_SA_TRIES tries, SIB_SA_WAIT_MS in all. */
#define SIB_SA_TIMEOUT_MS 250
#define SIB_SA_TRIES 4
#define SIB_SA_WAIT_MS (SIB_SA_TIMEOUT_MS * ((1u << SIB_SA_TRIES) - 1)) /* 3750 */
#define SIB_SA_CACHE_SIZE 64
#define SIB_SA_ASYNC_MAX 8			 /* background lookups in flight */
#define SIB_SA_REFRESH_NS (100ull * 1000000ull) /* at most one per LID this often */
/* A background lookup is asked again, with its TID (IBA 13.4.6.4: a starved
 * SM answers late, never too late), after SIB_SA_REFRESH_NS, then twice as
 * long each time up to 1.6 s, SIB_SA_ASYNC_RETRIES times (4.7 s in all);
 * then it is given up until the data path wants that LID again. */
#define SIB_SA_ASYNC_BACKOFF_MAX 4
#define SIB_SA_ASYNC_RETRIES 5

struct sib_sa_cache_entry {
	bool used;
	bool found;	 /* false: a cached "no such port" */
	bool by_gid;	 /* the key is gid, else lid */
	uint16_t lid;
	uint8_t gid[16];
	struct sib_endpoint_record rec;
	uint64_t expires_ns;
};

/* A lookup the data path started and nobody waits for (its answer fills
 * the cache); the slot is the context of its send. */
struct sib_sa_async {
	uint16_t lid;
	unsigned port_num;
	bool busy;	   /* its send is out */
	uint64_t asked_ns; /* when it was sent (kept after the answer: refresh) */
};

struct sib_sa_client {
	pthread_mutex_t lock; /* the cache and the background lookups */
	struct sib_sa_cache_entry cache[SIB_SA_CACHE_SIZE];
	unsigned next_victim;
	struct sib_sa_async async[SIB_SA_ASYNC_MAX];
	uint64_t hits, sent, timeouts;
	uint64_t foreign; /* SA answers not from the port's SM, or to nothing we asked */
	uint64_t async_full; /* background lookups not asked: SIB_SA_ASYNC_MAX were out */
};

int sib_sa_client_init(struct sib_sa_client *sa);
void sib_sa_client_fini(struct sib_sa_client *sa);

/*
 * Where LID lid (or the port with GID gid) lives, through port port_num.
 * 0 and *out filled; -ENOENT when the SM says there is no such port;
 * -ETIMEDOUT when the SM did not answer; -ENETDOWN when the port is not
 * ACTIVE or no SM has verified itself to it; -EINVAL for a bad port or LID.
 * Blocks up to SIB_SA_WAIT_MS; never call it on the
 * progress thread (returns -EDEADLK there).
 */
int sib_sa_resolve_lid(struct sib_node *node, unsigned port_num, uint16_t lid,
		       struct sib_endpoint *out);
int sib_sa_resolve_gid(struct sib_node *node, unsigned port_num, const uint8_t gid[16],
		       struct sib_endpoint *out, uint16_t *lid_out);

/*
 * For the data path's receive checks, never blocking: where LID lid lives
 * as the cache knows it.  An expired answer still counts while the SA is
 * asked again in the background; refresh asks again now (the caller saw
 * the LID somewhere else), at most every SIB_SA_REFRESH_NS per LID.
 * 0 and *out; -EAGAIN: not known yet, the SA has been asked; -ENOENT: the
 * SA said there is no such port; -ENETDOWN: no SM to ask.
 */
int sib_sa_lookup_lid(struct sib_node *node, unsigned port_num, uint16_t lid, bool refresh,
		      struct sib_endpoint *out);

/* Forgets every cached answer (the SM changed, a LID moved). */
void sib_sa_flush_cache(struct sib_node *node);

/* Registers the client with the node's MAD layer: QP1, class SubnAdm, no
 * requests served (a node is no SA); it sends, and counts the answers its
 * sends did not take. */
int sib_sa_client_register(struct sib_node *node);
extern const struct sib_mad_agent sib_sa_client_agent;

/*
 * How an SA request from port port_num goes (sa_query.c's too): to the
 * port's verified SM, SIB_SA_TRIES tries of SIB_SA_TIMEOUT_MS; fills *req
 * but its MAD and handler.  0; -ENETDOWN when the port has no SM to ask
 * (not ACTIVE, no link, SOFTIB_SM=none: a subnet of one); -EAGAIN while no
 * SM has verified itself to the port yet (SA queries never go to an
 * unverified or unset address).
 */
int sib_sa_route(struct sib_node *node, unsigned port_num, struct sib_mad_send_req *req);

#endif

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
 * negative one ("no such port") for SIB_SA_NEGATIVE_TTL_NS.  A query waits
 * SIB_SA_TIMEOUT_MS for each of SIB_SA_TRIES attempts.
 *
 * Queries go to the port's verified SM (mgmt/port_up.h), and an answer
 * counts only when it comes from there and matches a question asked.
 */
#ifndef SIB_MGMT_SA_CLIENT_H
#define SIB_MGMT_SA_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"

struct sib_node;

#define SIB_SA_POSITIVE_TTL_NS (30ull * 1000000000ull)
#define SIB_SA_NEGATIVE_TTL_NS (500ull * 1000000ull)
#define SIB_SA_TIMEOUT_MS 250
#define SIB_SA_TRIES 4
#define SIB_SA_CACHE_SIZE 64
#define SIB_SA_ASYNC_MAX 8			 /* background lookups in flight */
#define SIB_SA_REFRESH_NS (100ull * 1000000ull) /* at most one per LID this often */
/* A background lookup still wanted is asked again after SIB_SA_REFRESH_NS,
 * then twice as long each time up to 1.6 s; one nobody has wanted for
 * SIB_SA_ASYNC_GIVEUP_NS is given up. */
#define SIB_SA_ASYNC_BACKOFF_MAX 4
#define SIB_SA_ASYNC_GIVEUP_NS (4ull * 1000000000ull)

struct sib_sa_cache_entry {
	bool used;
	bool found;	 /* false: a cached "no such port" */
	bool by_gid;	 /* the key is gid, else lid */
	uint16_t lid;
	uint8_t gid[16];
	struct sib_endpoint_record rec;
	uint64_t expires_ns;
};

struct sib_sa_query; /* one outstanding query (sa_client.c) */
struct sib_sa_gq;    /* one outstanding query of sa_query.c */

/* A lookup the data path started and nobody waits for (its answer fills
 * the cache). */
struct sib_sa_async {
	uint64_t tid;
	uint16_t lid;
	uint8_t tries;	  /* asked again this many times (the backoff) */
	uint64_t sent_ns; /* last asked; 0: free */
};

struct sib_sa_client {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct sib_sa_cache_entry cache[SIB_SA_CACHE_SIZE];
	unsigned next_victim;
	struct sib_sa_query *queries;
	struct sib_sa_async async[SIB_SA_ASYNC_MAX];
	struct sib_sa_gq *gqueries;
	uint64_t hits, sent, timeouts;
	uint64_t foreign; /* SA answers not from the port's SM, or to nothing we asked */
};

/* With sa->lock held: waits until *done, or until timeout_ns after
 * *since_ns (read again at every wake-up; both under sa->lock).  Without
 * a progress thread (tests) it drives the node itself. */
void sib_sa_wait_locked(struct sib_node *node, const bool *done, const uint64_t *since_ns,
			uint64_t timeout_ns);
int sib_sa_client_init(struct sib_sa_client *sa);
void sib_sa_client_fini(struct sib_sa_client *sa);

/*
 * Where LID lid (or the port with GID gid) lives, through port port_num.
 * 0 and *out filled; -ENOENT when the SM says there is no such port;
 * -ETIMEDOUT when the SM did not answer; -ENETDOWN when the port is not
 * ACTIVE or no SM has verified itself to it; -EINVAL for a bad port or LID.
 * Blocks up to SIB_SA_TIMEOUT_MS * SIB_SA_TRIES; never call it on the
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

/* Registers the client with the node's MAD layer for SA responses on QP1. */
int sib_sa_client_register(struct sib_node *node);

#endif

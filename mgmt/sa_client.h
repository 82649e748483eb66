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

struct sib_sa_client {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct sib_sa_cache_entry cache[SIB_SA_CACHE_SIZE];
	unsigned next_victim;
	struct sib_sa_query *queries;
	struct sib_sa_gq *gqueries;
	uint64_t hits, sent, timeouts;
};

int sib_sa_client_init(struct sib_sa_client *sa);
void sib_sa_client_fini(struct sib_sa_client *sa);

/*
 * Where LID lid (or the port with GID gid) lives, through port port_num.
 * 0 and *out filled; -ENOENT when the SM says there is no such port;
 * -ETIMEDOUT when the SM did not answer; -ENETDOWN when the port is not
 * ACTIVE (no SM has configured it); -EINVAL for a bad port or LID.
 * Blocks up to SIB_SA_TIMEOUT_MS * SIB_SA_TRIES; never call it on the
 * progress thread (returns -EDEADLK there).
 */
int sib_sa_resolve_lid(struct sib_node *node, unsigned port_num, uint16_t lid,
		       struct sib_endpoint *out);
int sib_sa_resolve_gid(struct sib_node *node, unsigned port_num, const uint8_t gid[16],
		       struct sib_endpoint *out, uint16_t *lid_out);

/* Forgets every cached answer (the SM changed, a LID moved). */
void sib_sa_flush_cache(struct sib_node *node);

/* Registers the client with the node's MAD layer for SA responses on QP1. */
int sib_sa_client_register(struct sib_node *node);

#endif

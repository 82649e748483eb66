/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * UD datagrams whose source the subnet has not placed yet (recv.c's source
 * check: the lookup said -EAGAIN, the SA is being asked).  Dropping them
 * would lose the first datagrams from every new peer -- perftest's UD
 * server, for one, never asks where its client lives before the client's
 * SENDs arrive -- so they wait here, copied, and pass the receive checks
 * again once the answer is in (looked for every SIB_PARK_RECHECK_NS), or
 * after SIB_PARK_MAX_NS, when they are dropped as unknown_source.  At most
 * SIB_PARK_MAX wait at once; more are dropped at once.
 *
 * The park keeps order: while anything waits here, every datagram that
 * arrives waits behind it, and a datagram leaves only after every earlier
 * one from its SLID.  Without that, a UC message whose First packet waited
 * while its Middle and Last passed was lost (its PSNs out of order), and
 * ibv_uc_pingpong -g hung under load.  Connected QPs park too (recv.c).
 * When the park is full, a datagram that would only wait behind goes on.
 */
#ifndef SIB_TRANSPORT_SRC_PARK_H
#define SIB_TRANSPORT_SRC_PARK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "wire/packet.h"

#define SIB_PARK_MAX 64
#define SIB_PARK_RECHECK_NS (1000ull * 1000ull)
#define SIB_PARK_MAX_NS (1000ull * 1000000ull)

struct sib_engine;
struct sib_parked;

struct sib_park {
	pthread_mutex_t lock;
	pthread_mutex_t run; /* one sib_park_run at a time: two would reorder */
	struct sib_parked *head, *tail;
	unsigned n; /* parked and not yet delivered; changed under lock */
};

/* Whether anything waits: the check every datagram makes first, without
 * the lock (one that a thread parked before it, under its QP's lock, it
 * sees). */
static inline bool sib_park_waits(struct sib_park *pk)
{
	return __atomic_load_n(&pk->n, __ATOMIC_ACQUIRE) != 0;
}

void sib_park_init(struct sib_park *pk);
void sib_park_fini(struct sib_park *pk); /* frees what still waits */

/* Copies the datagram in; false when the park is full. */
bool sib_park_add(struct sib_park *pk, const struct ib_packet *pkt, const struct sib_endpoint *from,
		  uint64_t now);
/* The same, but only while something waits already (the order rule above);
 * false: nothing waits (or the park is full), go on. */
bool sib_park_add_behind(struct sib_park *pk, const struct ib_packet *pkt,
			 const struct sib_endpoint *from, uint64_t now);

/*
 * Offers the parked datagrams to deliver in arrival order; deliver returns
 * false when one must wait on (its source is still being asked), and then
 * every later one from its SLID waits too.  last: the time is up for this
 * one (the receiver drops it if its source is still unknown).  A run that
 * finds another running returns: the next tick looks again.
 */
typedef bool (*sib_park_deliver_fn)(struct sib_engine *eng, const struct ib_packet *pkt,
				    const struct sib_endpoint *from, bool last);
void sib_park_run(struct sib_park *pk, struct sib_engine *eng, uint64_t now,
		  sib_park_deliver_fn deliver);

/* When sib_park_run should run next (engine time), 0: nothing waits. */
uint64_t sib_park_deadline(struct sib_park *pk, uint64_t now);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A QP's input queue (docs/architecture.md, the receive rule).  The thread
 * that reads the link hands each datagram to its QP in the order the link
 * received them; the QP applies them in that order, one thread at a time.
 * Most datagrams are applied at once, from the link's buffer, by the
 * reading thread.  A datagram is copied into its QP's input queue instead
 * when
 *   - another thread holds the QP (it posts, or a timer runs on it): that
 *     thread applies the queue before it lets the QP go (sib_qp_unlock),
 *     so the reader never waits for a QP;
 *   - its source is not known yet (the SA is being asked where its SLID
 *     lives): it waits at the head of the queue until the SA answers
 *     (sib_engine_source_known wakes the QP) or SIB_RXQ_WAIT_NS pass;
 *   - an earlier datagram of the same QP from the same SLID waits there:
 *     it goes behind it, so one source's datagrams keep their order (a UC
 *     message whose Middle passed its First would be lost).  Datagrams
 *     from other sources do not wait behind it.
 * At most SIB_RXQ_MAX wait in one QP's queue.  A datagram that would wait
 * behind its source beyond that is dropped and counted (rx_queue_full); a
 * busy QP's is not: the reader then waits for the QP.
 *
 * The queue's own lock is taken inside the QP's lock, never the other way.
 */
#ifndef SIB_TRANSPORT_RXQ_H
#define SIB_TRANSPORT_RXQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"
#include "wire/packet.h"

#define SIB_RXQ_MAX 256
/* How long a datagram waits for the SA to place its source. */
#define SIB_RXQ_WAIT_NS (1000ull * 1000000ull)

struct sib_rxq_entry;

struct sib_rxq {
	pthread_mutex_t lock;
	struct sib_rxq_entry *head, *tail;
	unsigned n;	  /* entries; read without the lock (sib_rxq_pending) */
	bool stalled;	  /* every entry waits for its source: nothing to do until
			   * the SA answers, a datagram arrives or one's time is up */
	uint64_t oldest;  /* when the oldest waiting entry began to wait (0: none) */
};

void sib_rxq_init(struct sib_rxq *q);
/* Frees whatever waits (the QP is gone: those datagrams are lost). */
void sib_rxq_fini(struct sib_rxq *q);

/* Whether the queue holds anything a holder of the QP should apply now. */
static inline bool sib_rxq_runnable(struct sib_rxq *q)
{
	return __atomic_load_n(&q->n, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&q->stalled, __ATOMIC_ACQUIRE);
}

/* Whether a datagram from slid must go behind an entry of the queue. */
bool sib_rxq_blocks(struct sib_rxq *q, uint16_t slid);

/* Copies the datagram to the end of the queue; false when it is full.
 * from may be NULL (tests that inject). */
bool sib_rxq_add(struct sib_rxq *q, const struct ib_packet *pkt, const struct sib_endpoint *from);
/* The same for a datagram that already found its source unknown: it
 * begins to wait at now. */
bool sib_rxq_add_waiting(struct sib_rxq *q, const struct ib_packet *pkt,
			 const struct sib_endpoint *from, uint64_t now);

/*
 * What applying one datagram of the queue came to: applied (or dropped by
 * the receive checks), or it waits on for its source.
 */
enum sib_rxq_verdict { SIB_RXQ_DONE, SIB_RXQ_WAIT };
/* last: its time is up (it may not wait on). */
typedef enum sib_rxq_verdict (*sib_rxq_apply_fn)(void *arg, const struct ib_packet *pkt,
						 const struct sib_endpoint *from, bool last);

/*
 * Applies the queue in order, with the QP held: each entry goes to apply,
 * but one from an SLID an earlier entry still waits for stays behind it.
 * What waits on goes back to the head of the queue, ahead of what came
 * meanwhile.
 */
void sib_rxq_run(struct sib_rxq *q, uint64_t now, sib_rxq_apply_fn apply, void *arg);

/* The queue may move again (the SA answered, or a wait ran out). */
void sib_rxq_wake(struct sib_rxq *q);

/* When the oldest waiting entry's time is up (0: none waits). */
uint64_t sib_rxq_deadline(struct sib_rxq *q);

#endif

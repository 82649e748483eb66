/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * transport/: the data path -- QPs and their state machine (qp.c,
 * qp_state.c), CQs, SRQs, XRC domains, and the RC, UC and UD requester,
 * responder and completer with the engine that drives them (this header).
 * transport/ may use base/, wire/, memreg/ and link/; it knows no HCA,
 * agent or verbs: its owner hands it a link, tables and callbacks.
 *
 * The data-path engine of one HCA port: the RC, UC and UD requester,
 * responder and completer (IBA Vol 1 chapter 9) driving the QPs of
 * transport/qp.h over a link (link/link.h).
 *
 * Who calls what (docs/architecture.md section 6):
 *   - post_send queues a WQE, then sib_qp_kick() transmits what can be sent
 *     now on the caller's thread;
 *   - every received data packet (decoded and CRC-checked by the caller)
 *     goes to sib_engine_rx() (the HCA's progress thread calls it through
 *     its rx_data hook, hca/data_path.c);
 *   - sib_engine_tick() runs the timers (local ACK timeout, RNR wait) and
 *     continues output that did not fit at once (long read responses,
 *     windows); sib_engine_next_deadline() says when it is next due.
 *
 * Unit tests drive everything by hand: sib_engine_poll() drains the link
 * into sib_engine_rx(), and an injected clock moves time forward.
 *
 * Threads: posts, rx and tick may run on different threads.  Each QP's
 * lock guards its transport state, and whoever holds it applies what the
 * QP received meanwhile (rxq.h; docs/architecture.md, the receive rule);
 * the engine's QP lock (a rwlock) keeps a QP alive while rx or tick uses
 * it.
 */
#ifndef SIB_TRANSPORT_ENGINE_H
#define SIB_TRANSPORT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "memreg/memreg.h"
#include "link/link.h"
#include "transport/port.h"
#include "transport/qp_state.h"
#include "wire/packet.h"

struct sib_engine;
struct sib_qp;
struct sib_numtab;

/*
 * Where a destination lives: 0 and *out, or a negative errno when the
 * subnet does not know it.  dgid is NULL for an AV without GRH.  May block
 * (an SA query): never called with a QP lock held.
 */
typedef int (*sib_resolve_fn)(void *arg, uint16_t dlid, const uint8_t *dgid,
			      struct sib_endpoint *out);
/*
 * Where LID lid lives as the subnet is known right now, for the receive
 * checks; never blocks.  0 and *out; -EAGAIN: not known yet (the owner is
 * finding out); another negative errno: unknown.  refresh: a packet came
 * from somewhere else, so the owner should look again.
 */
typedef int (*sib_lookup_fn)(void *arg, uint16_t lid, bool refresh, struct sib_endpoint *out);
/* The engine's clock (ns, monotonic).  Tests inject their own. */
typedef uint64_t (*sib_clock_fn)(void *arg);
/* Asks the owner to call sib_engine_tick at engine time `when` (or soon after). */
typedef void (*sib_arm_fn)(void *arg, uint64_t when);
/* A packet was dropped for its P_Key (the owner tells the SM: trap 257,
 * IBA 10.9.4).  Called on the receive path; must not block. */
typedef void (*sib_bad_pkey_fn)(void *arg, const struct ib_packet *pkt);

struct sib_engine_init {
	struct sib_link *link;
	struct memreg_table *memreg;
	struct sib_numtab *qpns; /* QP number -> struct sib_qp * */
	struct sib_numtab *srqns; /* XRC SRQ number -> struct sib_srq *; NULL: no XRC */
	struct sib_port *port;	 /* LID, GID and P_Key tables of the port */
	sib_resolve_fn resolve;
	void *resolve_arg;
	sib_lookup_fn lookup; /* NULL: no source is known (all refused) */
	void *lookup_arg;
	sib_clock_fn clock; /* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	sib_arm_fn arm; /* NULL: the owner polls sib_engine_next_deadline */
	void *arm_arg;
	sib_bad_pkey_fn bad_pkey; /* NULL: nobody to tell */
	void *bad_pkey_arg;
};

/* Why the receive checks dropped a packet (IBA 9.6), and other events. */
struct sib_engine_counters {
	uint64_t rx_no_qp;	    /* DestQP unknown */
	uint64_t rx_bad_transport;  /* opcode's transport differs from the QP type */
	uint64_t rx_bad_state;	    /* QP state does not receive */
	uint64_t P_KeyViolations;   /* BTH P_Key does not match (IBA 9.6.1.1, 16.1.3.5) */
	uint64_t Q_KeyViolations;   /* DETH Q_Key does not match (IBA 9.6.1.1) */
	uint64_t rx_bad_source;	    /* connected QP: SLID / source QP not its peer */
	uint64_t rx_wrong_endpoint; /* the UDP sender is not where the source lives */
	uint64_t rx_unknown_source; /* where the source lives is not known (in time) */
	uint64_t rx_waited;	    /* datagrams that waited for the SA to place their source */
	uint64_t rx_queued;	    /* datagrams that waited for their QP (rxq.h) */
	uint64_t rx_queue_full;	    /* ... and were dropped: SIB_RXQ_MAX waited already */
	uint64_t rx_ud_no_wqe;	    /* UD datagram with no receive WQE: dropped */
	uint64_t rx_bad_mcast;	    /* multicast with no QP attached, or DLID/DestQP disagree */
	uint64_t tx_mcast;	    /* multicast packets sent (a copy per member port) */
	uint64_t rx_mcast;	    /* multicast packets received */
	uint64_t rx_uc_dropped;	    /* UC packets dropped after a sequence error */
	uint64_t tx_ud_no_path;	    /* UD datagrams to a LID no port has: lost, as on a fabric */
	uint64_t rx_duplicates;	    /* RC duplicate requests answered */
	uint64_t tx_seq_naks;	    /* PSN sequence error NAKs sent */
	uint64_t tx_rnr_naks;	    /* RNR NAKs sent */
	uint64_t retransmits;	    /* go-back-N restarts on the requester */
	uint64_t timeouts;	    /* local ACK timeouts */
};

/* 0 and *out, or ENOMEM / EINVAL. */
int sib_engine_create(const struct sib_engine_init *init, struct sib_engine **out);
/* Every QP must have been destroyed first. */
void sib_engine_destroy(struct sib_engine *eng);

struct sib_link *sib_engine_link(struct sib_engine *eng);
uint64_t sib_engine_now(struct sib_engine *eng);
void sib_engine_counters_get(struct sib_engine *eng, struct sib_engine_counters *out);

/*
 * One received data packet (ib_packet_decode said OK; DestQP not 0 or 1)
 * from UDP endpoint from.  The source check, softib's stand-in for a
 * fabric's cabling: a connected QP (RC, UC, XRC) takes packets only from
 * the endpoint its destination resolved to (at RTR, or when its path
 * changed); a UD QP takes a datagram only from the endpoint its SLID
 * lives at (lookup).  from NULL skips the check (tests that inject).
 */
void sib_engine_rx(struct sib_engine *eng, const struct ib_packet *pkt,
		   const struct sib_endpoint *from);

/*
 * Tests (and callers without a progress thread): take up to max datagrams
 * off the link, decode them, feed data packets to sib_engine_rx (others are
 * counted and dropped), then flush.  Returns the number taken.
 */
int sib_engine_poll(struct sib_engine *eng, unsigned max);

/* Everything the link has queued leaves now (the transmit rule). */
void sib_engine_flush(struct sib_engine *eng);

/*
 * The SA answered where LID lid lives (or that nothing lives there): the
 * QPs whose datagrams wait for their source look again (rxq.h).
 */
void sib_engine_source_known(struct sib_engine *eng, uint16_t lid);

/* Timers that are due, output that waits for room; then flush the link. */
void sib_engine_tick(struct sib_engine *eng);
/* Engine time (ns) of the next tick that has something to do; 0 = none. */
uint64_t sib_engine_next_deadline(struct sib_engine *eng);

/*
 * Returns once no rx or tick that started before the call still runs: an
 * object the data path finds by number (an XRC SRQ) may be freed after its
 * number left the table and this returned.
 */
void sib_engine_quiesce(struct sib_engine *eng);

/* Transmit what the QP's send queue allows now (after a post): the packets
 * are queued on the link; the caller flushes (the transmit rule). */
void sib_qp_kick(struct sib_qp *qp);

/*
 * Resolve the destination of an AV (outside any QP lock).  0 or a negative
 * errno (then the caller logs why).
 */
int sib_engine_resolve(struct sib_engine *eng, const struct sib_av *av, struct sib_endpoint *out);
/*
 * The same, never waiting for the SA (create_ah and post_send: a verb does
 * not wait on the SA, as on real hardware, where neither asks it): what the
 * SA client knows now.  -EAGAIN: not known yet, and the SA has been asked
 * (a UD send waits for the answer on its QP: ud.c); -ENOENT: the SA says
 * no port has that LID; -ENETDOWN: no SM to ask.
 */
int sib_engine_resolve_nowait(struct sib_engine *eng, const struct sib_av *av,
			      struct sib_endpoint *out);

#endif

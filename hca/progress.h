/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The progress engine, one per HCA (DESIGN.md section 6).  A thread that
 * sleeps in the kernel (poll on every port link's wait fd, a timerfd for the
 * timers, an eventfd to stop it) and, when woken, drains the links:
 * every datagram passes ib_packet_decode (failures are dropped and counted
 * on the link by reason), then goes by BTH.DestQP to
 *   QP0, QP1  the MAD layer (mgmt/mad_agent.h), which hands each MAD to the
 *             agent registered for its QP and class (the SMA, the SA
 *             client); QP1 MADs nobody serves are counted,
 *   any other the data path's receive hook (sib_hca_set_rx_data), counted
 *             and dropped while none is registered.
 *
 * Timers: the progress's timer queue (base/timer.h, `timers` below), run
 * on the progress thread (or on whichever thread calls sib_progress_poll
 * when the HCA runs without one, as unit tests do).  The callback runs with
 * no softib lock held.
 *
 * fork(): the child of a process with an HCA does not inherit the progress
 * thread, so it must not use the parent's HCA; its first sib_hca_get()
 * builds a fresh HCA with a new node GUID (hca.c registers pthread_atfork).
 */
#ifndef SIB_HCA_PROGRESS_H
#define SIB_HCA_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/timer.h"
#include "link/link.h"

struct sib_hca;
struct ib_packet;

/* The data path's receive hook: every packet whose DestQP is neither 0 nor
 * 1, already validated.  Runs on the polling thread, under the link's
 * receive lock: it may send but must not poll the link. */
typedef void (*sib_rx_data_fn)(struct sib_hca *hca, const struct ib_packet *pkt,
			       const struct sib_endpoint *from);

struct sib_progress {
	pthread_t thread;
	bool running;
	int stop_fd;  /* eventfd: written to stop the thread */
	int kick_fd;  /* eventfd: ends the thread's timed sleep early */
	struct sib_timers timers; /* the HCA's timers: the data path's and the agents' */
	sib_rx_data_fn rx_data;
	/* Application threads polling (sib_progress_drain): */
	pthread_mutex_t drain_lock;  /* one drainer at a time; others skip */
	uint64_t drain_since_ns;     /* an application drain holds it since then (0: none) */
	bool beside;		     /* the thread drains beside a stuck drainer: others stay out */
	uint64_t drains_beside;	     /* stuck drains it took over from (softib info) */
	uint64_t beside_of;	     /* the drain_since_ns of the last one (the thread's own) */
	uint64_t busy_until_ns;	     /* someone drains until about then */
	uint64_t last_drain_ns;	     /* when an application thread last drained */
	uint64_t last_post_ns;	     /* ... last posted a send */
	uint64_t tx_deferred_ns;     /* ... last left packets queued (a burst) */
	uint64_t spin_ns;	     /* SOFTIB_SPIN_US */
	uint64_t ack_hold_ns;	     /* the thread holds owed ACKs since then (0: not) */
	uint64_t ack_hold_max_ns;    /* ... for at most this long (SIB_PROGRESS_DEFER_NS) */
	bool lease_sleep;	     /* the thread sleeps on a timeout, not the links */
	uint64_t wake_by_ns;	     /* the sleeping thread looks again by then (0: awake) */
	/* Application threads waiting for a completion event (sib_progress_wait): */
	unsigned waiters;	     /* inside it now */
	uint64_t wait_lease_ns;	     /* one left it; the thread stays off the links till then */
	/* thread wake-ups, for `softib info` and make bench (the wake-up rule) */
	uint64_t wakes_thread;	     /* the progress thread's returns from a sleep */
	uint64_t wakes_waiter;	     /* an application thread's, in sib_progress_wait */
	uint64_t wakes_event;	     /* completion events another thread wrote (each wakes
				      * the application at most once) */
	uint64_t rx_requests;	     /* data packets other than plain ACKs: the messages */
	/* what nobody took, for `softib info` */
	uint64_t rx_data_unclaimed; /* data packets while no rx_data hook */
	uint64_t rx_mad_malformed;  /* QP0/QP1 packets that are no well-formed MAD */
	uint64_t rx_gsi_unclaimed;  /* QP1 MADs nobody here serves yet (CM, ...) */
	uint64_t rx_smp_unclaimed;  /* QP0 MADs of a class nobody serves */
};

/* Set-up and tear-down (hca.c): init makes the fds, start the thread. */
int sib_progress_init(struct sib_hca *hca);
int sib_progress_start(struct sib_hca *hca);
void sib_progress_stop(struct sib_hca *hca); /* joins the thread */
void sib_progress_fini(struct sib_hca *hca);

/* One pass: drains every port's link, flushes, runs the timers that are
 * due.  Returns how many packets and timers it handled.  The thread loops
 * on it; without a thread, callers drive the HCA with it. */
int sib_progress_poll(struct sib_hca *hca);

/*
 * Called by an application thread that polls and finds nothing (an empty
 * CQ, DESIGN.md section 6): drains the links on this thread, so a busy
 * poller gets its packets without a hand-over between threads.  With
 * lease, the caller says it keeps polling: while such calls (or
 * sib_progress_touch) keep coming, the progress thread stops waking for
 * every datagram and only looks in now and then (SIB_PROGRESS_LEASE_NS),
 * since the poller does its work; timers stay with it.  Never waits for
 * another drainer.  What the last batch of a leased drain made the HCA
 * send (ACKs, mostly) stays queued until the caller's next post, drain or
 * drain_end, a QP change, or the progress thread's next pass, which
 * comes within a lease (the leftovers rule, below): the completions reach
 * the caller first, and a post right after sends ACK and request in one
 * system call.  The ACKs the thread's own pass owes while such a caller
 * polls and posts are held for its next post too (progress.c,
 * thread_pass), and its drains leave them held until they take packets
 * themselves.  Without lease (the CQ is armed: the caller is
 * about to sleep) everything leaves at once.
 * Returns the number of packets handled.
 */
int sib_progress_drain(struct sib_hca *hca, bool lease);
/* A poll that found completions: the caller keeps polling (the lease of
 * sib_progress_drain) even though it had no need to drain. */
void sib_progress_touch(struct sib_hca *hca);
/*
 * After a post (provider post_send, wr_complete): transmits what the QP's
 * send queue allows now, on the caller's thread (DESIGN.md section 6), or,
 * for back-to-back posts while the caller polls, leaves the packets queued
 * so that the burst goes out in one system call.
 */
struct sib_qp;
void sib_progress_post(struct sib_hca *hca, struct sib_qp *qp);
/* Hands the kernel whatever the links have queued (sib_progress_drain
 * leaves the ACKs of its last batch queued; see there). */
void sib_progress_flush(struct sib_hca *hca);
/* The application is going to sleep (it armed a CQ for an event): the
 * progress thread takes the links back at once. */
void sib_progress_drain_end(struct sib_hca *hca);
#define SIB_PROGRESS_LEASE_NS 1000000ull
/*
 * The leftovers rule: the progress thread never sleeps past the end of an
 * application's lease, so what a leased drain leaves owed or queued
 * leaves within a lease of the caller's last poll even if it never calls
 * again.  A thread asleep on the links with no timeout when a lease
 * begins is kicked once (lease_renew); before, the caller took the
 * datagram that would have woken it, and an application that then
 * stopped calling (it had its completion, and waited on memory or on its
 * peer) left the ACK owed for good: its peer had to time out and resend.
 */

/*
 * The drain rule: a drainer holds the links for at most SIB_LINK_STUCK_NS;
 * the progress thread that finds them held longer drains them beside it.
 * An application thread that polls an empty CQ drains the links under
 * drain_lock, and it spends most of its time there, in recvmmsg; the
 * scheduler takes the CPU from it there as often as anywhere, and on a
 * loaded two-core machine gave it back 650 ms later, while the progress
 * thread woke 2000 times, found the drain lock taken and went back to
 * sleep: the peer's requests and ACKs waited unread in the socket until
 * its retry_cnt ran out (RETRY_EXC_ERR on a clean connection).  Beside
 * such a drainer the thread polls with buffers of its own (link.h) and
 * sends everything at once, as a pass without an application does.  What
 * the drainer had taken off the socket and not handled yet, the thread
 * handles first, in order (link.h, the order rule): handled after the
 * thread's, it reached UC out of order, and UC, which never retransmits,
 * lost those messages.  New drains stay out while the thread is beside
 * (sib_progress_drain).
 */
/* A packet other than a plain ACK that the thread finds waiting when the
 * application has not drained for this long means it waits on something
 * else (memory, in ib_write_lat): the thread then watches the links. */
#define SIB_PROGRESS_STALE_NS 25000ull
/* ...until this many wake-ups in a row find the application took the
 * datagrams first. */
#define SIB_PROGRESS_WATCH_EMPTY 16
/* With no application thread polling, the thread keeps polling the links
 * this long after the last datagram before it sleeps (SOFTIB_SPIN_US). */
#define SIB_PROGRESS_SPIN_NS 50000ull
/* Posts this close together are a burst (sib_progress_post); what a burst
 * left queued leaves at the latest this long after, as do the ACKs the
 * thread holds for a posting application (ack_hold_max_ns).  A streaming
 * sender's thread wakes once per bound: at 50 us it woke about 6000 times
 * a second and preempted the receiver's thread as often on two cores.
 * 200 us moved 7 to 28 % more in ib_write_bw, ib_read_bw and ib_send_bw
 * (alternated runs); 400 and 1000 us moved less again, since those passes
 * also take ACK work off a sender that is short of CPU. */
#define SIB_PROGRESS_BURST_NS 5000ull
#define SIB_PROGRESS_DEFER_NS 200000ull

/*
 * The wake-up rule: a packet wakes one thread, the one that needs it.
 * Which thread sleeps on the links in the kernel:
 *   - an application thread that waits for a completion event in
 *     ibv_get_cq_event (sib_progress_wait), while it waits: it drains the
 *     links itself, so the event it waits for is written by the thread
 *     that reads it, with one wake-up per message as a blocking UDP
 *     receiver has, not the progress thread's and then the application's;
 *     from its first wait until a lease after it last left one, the
 *     progress thread keeps off the links (it sleeps on its timers and
 *     looks in once a lease), as it does for a polling application;
 *   - an application thread that polls (a lease, sib_progress_drain) takes
 *     the datagrams between its polls, and the thread stays off the links
 *     (the leftovers rule, the drain rule and watch mode above bound that);
 *   - otherwise the progress thread.  It asks the scheduler for a short
 *     slice (SIB_PROGRESS_SLICE_NS), so that the packet that wakes it
 *     preempts a thread spinning on memory at once, rather than waiting
 *     for the end of that thread's slice (up to milliseconds on a busy
 *     core), which is how long a WRITE took to land for a program that
 *     waits on memory.
 * Every such wake-up is counted (wakes_* above); make bench prints them
 * per message received.
 */
#define SIB_PROGRESS_SLICE_NS 100000ull
/*
 * Called by an application thread before it blocks reading fd, a
 * completion channel's fd (provider/interpose.c, ibv_get_cq_event): waits
 * until fd is readable, draining the links whenever they have datagrams
 * (the wake-up rule).  0, or -errno when it could not wait (the caller
 * then reads as it would have).
 */
int sib_progress_wait(struct sib_hca *hca, int fd);
/* A completion event is due on the channel whose read end is fd
 * (provider/events.c).  True when this thread waits on fd in
 * sib_progress_wait and has no event yet: the caller hands it over
 * directly and the wait ends.  Otherwise the caller writes it, and one
 * the progress thread writes counts as a wake-up. */
bool sib_progress_event_for_waiter(struct sib_hca *hca, int fd);

/* True on the HCA's progress thread (waiting there would deadlock). */
bool sib_progress_on_thread(struct sib_hca *hca);

/* Registers the data path's receive hook (NULL: count and drop). */
void sib_hca_set_rx_data(struct sib_hca *hca, sib_rx_data_fn fn);

/* The receive path, exposed for tests: one datagram as port_num received it. */
void sib_progress_rx(struct sib_hca *hca, unsigned port_num, const uint8_t *buf, size_t len,
		     const struct sib_endpoint *from);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The progress engine, one per HCA: the receive, transmit and waiting
 * rules of docs/architecture.md, in one place.  A thread serves the passive
 * side and the timers, sleeping in the kernel (poll on every port link's
 * wait fd, a timerfd for the timers, an eventfd to kick or stop it) when
 * nothing is to do; application threads read the links themselves when
 * they poll an empty CQ or wait for a completion event.  Whoever reads,
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
 * 1, already validated.  Runs on the reading thread, under the read lock:
 * it may send but must not read the links. */
typedef void (*sib_rx_data_fn)(struct sib_hca *hca, const struct ib_packet *pkt,
			       const struct sib_endpoint *from);

/* Who holds the links now (docs/architecture.md, the waiting rule). */
enum sib_links_owner {
	SIB_OWNER_THREAD, /* the progress thread: it sleeps on the links */
	SIB_OWNER_POLLER, /* an application thread that polls a CQ */
	SIB_OWNER_WAITER, /* an application thread that waits for a completion event */
};

struct sib_progress {
	pthread_t thread;
	bool running;
	int stop_fd;  /* eventfd: written to stop the thread */
	int kick_fd;  /* eventfd: ends the thread's timed sleep early */
	struct sib_timers timers; /* the HCA's timers: the data path's and the agents' */
	sib_rx_data_fn rx_data;
	/* The receive rule: one thread reads the links at a time. */
	pthread_mutex_t read_lock;
	/* The waiting rule: the links' owner follows from these (links_owner
	 * in progress.c is the one place that reads them together). */
	uint64_t poll_until;  /* an application thread polled a CQ: it holds the links till then */
	uint64_t wait_until;  /* ... waited for an event: it holds them till then */
	unsigned waiters;     /* threads inside sib_progress_wait now */
	uint64_t last_take_ns; /* when an application thread last read the links or posted */
	uint64_t wake_by_ns;  /* the thread, asleep, looks again by then (UINT64_MAX: when woken) */
	bool timers_only;     /* ... and sleeps on its timers, not the links */
	uint64_t spin_ns;     /* SOFTIB_SPIN_US */
	uint64_t watches;     /* times watch mode began (softib info) */
	/* thread wake-ups, for `softib info` and make bench */
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
void sib_progress_stop(struct sib_hca *hca); /* joins the thread; start runs it again */
void sib_progress_fini(struct sib_hca *hca);

/* One pass: reads every port's link (waiting for another reader), sends
 * what is queued, runs the timers that are due.  Returns how many packets
 * and timers it handled.  The thread loops on it; without a thread,
 * callers drive the HCA with it. */
int sib_progress_poll(struct sib_hca *hca);

/*
 * The application's calls (provider/), each stated in docs/architecture.md:
 *
 * sib_progress_polled: a thread polled a CQ (empty: it found nothing).  It
 * sends what it queued (with a lease, a poll that found something sends
 * only if the thread posted since its last poll: its answer goes with the
 * ACKs); an empty poll then reads the links itself, unless another thread
 * reads them.  With lease (the CQ is not armed) it holds
 * the links for a lease (SIB_PROGRESS_LEASE_NS), and what its read made
 * (ACKs) waits for its next poll or post; without, that leaves at once.
 * Returns the packets it read.
 */
int sib_progress_polled(struct sib_hca *hca, bool empty, bool lease);
/* After a post: the QP transmits what its send queue allows; the packets
 * leave at once, unless this thread polls (then with its next poll). */
struct sib_qp;
void sib_progress_post(struct sib_hca *hca, struct sib_qp *qp);
/* Sends whatever the links have queued (a deregistration, a QP change). */
void sib_progress_flush(struct sib_hca *hca);
/* ... and has it left before it returns (the process is about to exit). */
void sib_progress_flush_wait(struct sib_hca *hca);
/* The thread armed a CQ (it is going to sleep): its lease ends, and unless
 * a thread waits for events, the progress thread takes the links now. */
void sib_progress_armed(struct sib_hca *hca);
/*
 * Called by an application thread before it blocks reading fd, a
 * completion channel's fd (provider/interpose.c, ibv_get_cq_event): waits
 * until fd is readable, sleeping on the links meanwhile and reading them
 * whenever they have datagrams.  0, or -errno when it could not wait (the
 * caller then reads as it would have).
 */
int sib_progress_wait(struct sib_hca *hca, int fd);
/* A completion event is due on the channel whose read end is fd
 * (provider/events.c).  True when this thread waits on fd in
 * sib_progress_wait and has no event yet: the caller hands it over
 * directly and the wait ends.  Otherwise the caller writes it, and one
 * the progress thread writes counts as a wake-up. */
bool sib_progress_event_for_waiter(struct sib_hca *hca, int fd);

/* How long an application thread holds the links after it last polled or
 * waited (the waiting rule). */
#define SIB_PROGRESS_LEASE_NS 1000000ull
/* Without an application holding the links, the thread keeps polling them
 * this long after the last datagram before it sleeps (SOFTIB_SPIN_US):
 * waking from a sleep costs tens of microseconds here. */
#define SIB_PROGRESS_SPIN_NS 50000ull
/* Watch mode (progress.c, watch_mode): a packet other than a plain ACK
 * that the thread finds unread when the owner has not read the links for
 * this long means the owner waits on something else (memory, in
 * ib_write_lat) ... */
#define SIB_PROGRESS_STALE_NS 25000ull
/* ... until this many wake-ups in a row find the owner took the datagrams
 * first. */
#define SIB_PROGRESS_WATCH_EMPTY 16
/* The thread asks the scheduler for a short slice, so that the packet that
 * wakes it preempts a thread spinning on memory at once (EEVDF, Linux 6.12
 * and later). */
#define SIB_PROGRESS_SLICE_NS 100000ull

/* True on the HCA's progress thread (waiting there would deadlock). */
bool sib_progress_on_thread(struct sib_hca *hca);
/* True on a thread that reads the links now, handing out what it read: a
 * MAD agent there must not wait for an answer (only this thread could
 * read it). */
bool sib_progress_reading(void);

/* Registers the data path's receive hook (NULL: count and drop). */
void sib_hca_set_rx_data(struct sib_hca *hca, sib_rx_data_fn fn);

/* The receive path, exposed for tests: one datagram as port_num received it. */
void sib_progress_rx(struct sib_hca *hca, unsigned port_num, const uint8_t *buf, size_t len,
		     const struct sib_endpoint *from);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "base/thread.h"
#include "hca/hca.h"
#include "hca/progress.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_packet.h"
#include "transport/engine.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

struct rx_ctx {
	struct sib_hca *hca;
	unsigned port_num;
	unsigned placing; /* data packets that were not plain ACKs */
};

/* True for a data packet that may change memory or wants an answer: any
 * but a plain ACK or NAK, which only completes work requests. */
static bool progress_rx(struct sib_hca *hca, unsigned port_num, const uint8_t *buf, size_t len,
			const struct sib_endpoint *from)
{
	struct sib_link *link = hca->node.mgmt[port_num - 1].link;
	struct ib_packet pkt;
	enum ib_pkt_err err = ib_packet_decode(buf, len, &pkt);
	sib_rx_data_fn rx_data;

	if (err != IB_PKT_OK) {
		if (link && sib_link_rx_claim())
			sib_link_count_pkt_err(link, err);
		return false;
	}
	if (pkt.bth.DestQP <= SIB_QP1) {
		struct sib_mad_addr a;
		const uint8_t *mad = sib_mgmt_parse(&pkt, &a);

		/* A MAD is handled once (link.h, the order rule); a data packet
		 * is claimed under its QP's lock (transport/recv.c). */
		if (!sib_link_rx_claim())
			return false;
		if (!mad) {
			sib_link_count(&hca->progress.rx_mad_malformed, 1);
			return false;
		}
		/* MADs of a class (CM) or method nobody here serves are
		 * counted, by QP. */
		if (!sib_mad_agent_deliver(&hca->node, port_num, &a, mad, from))
			sib_link_count(a.DestQP == SIB_QP1 ? &hca->progress.rx_gsi_unclaimed
							   : &hca->progress.rx_smp_unclaimed,
				       1);
		return false;
	}
	rx_data = __atomic_load_n(&hca->progress.rx_data, __ATOMIC_ACQUIRE);
	if (rx_data)
		rx_data(hca, &pkt, from);
	else
		sib_link_count(&hca->progress.rx_data_unclaimed, 1);
	if (!pkt.op || ((pkt.op->flags & IB_OPF_ACK) && !(pkt.op->flags & IB_OPF_ATOMIC)))
		return false;
	sib_link_count(&hca->progress.rx_requests, 1);
	return true;
}

void sib_progress_rx(struct sib_hca *hca, unsigned port_num, const uint8_t *buf, size_t len,
		     const struct sib_endpoint *from)
{
	progress_rx(hca, port_num, buf, len, from);
}

static void rx_cb(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct rx_ctx *c = arg;

	if (progress_rx(c->hca, c->port_num, pkt, len, from))
		c->placing++;
}

enum { DRAIN_BATCH = 16, DRAIN_MAX = 256 };

/* Owed ACKs (the data path is on port 1's link) unless acks is false,
 * then the link's queue. */
static void flush_port(struct sib_hca *hca, unsigned i, bool acks)
{
	if (acks && i == 0 && hca->engine)
		sib_engine_send_owed(hca->engine);
	sib_link_flush(hca->node.mgmt[i].link);
}

enum drain_mode {
	/* Everything the packets caused leaves. */
	DRAIN_FLUSH,
	/* An application thread drains for its poll (with a lease): the ACKs
	 * its last batch asks for stay owed (engine.h) and what it queued
	 * stays queued, so the completions reach the caller one system call
	 * sooner.  They leave with the caller's next post (after its request,
	 * in one sendmmsg), its next drain, its drain_end, a QP change, or
	 * the progress thread's next pass (which may hold them in turn:
	 * DRAIN_HOLD), whichever comes first. */
	DRAIN_DEFER,
	/* The progress thread while an application that posts holds a
	 * lease (thread_pass), and a thread that waits for completion
	 * events (the wake-up rule): owed ACKs stay owed, the rest leaves. */
	DRAIN_HOLD,
};

/* The thread holds owed ACKs for the application's next post, and has not
 * held them for its bound yet. */
static bool acks_held(struct sib_progress *pg)
{
	uint64_t since = __atomic_load_n(&pg->ack_hold_ns, __ATOMIC_RELAXED);

	return since && sib_link_now_ns() - since < pg->ack_hold_max_ns;
}

static bool waiter_active(struct sib_progress *pg, uint64_t now);

/* ACKs a drain left owed for the application's next post: held from now,
 * unless already (the bound counts from the first). */
static void hold_start(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;

	if (hca->engine && sib_engine_acks_owed(hca->engine) &&
	    !__atomic_load_n(&pg->ack_hold_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&pg->ack_hold_ns, sib_link_now_ns(), __ATOMIC_RELAXED);
}

/* Every port's link, up to DRAIN_MAX datagrams each; under drain_lock. */
static int drain_links(struct sib_hca *hca, enum drain_mode mode, unsigned *placing)
{
	struct sib_progress *pg = &hca->progress;
	bool defer = mode == DRAIN_DEFER;
	/* What the thread holds stays for this caller's post (thread_pass). */
	bool acks = mode == DRAIN_FLUSH || (defer && !acks_held(pg));
	int total = 0;

	if (hca->engine)
		sib_engine_defer_acks(hca->engine, mode != DRAIN_FLUSH);
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		struct sib_link *link = hca->node.mgmt[i].link;
		struct rx_ctx c = { hca, i + 1, 0 };
		int n;

		if (!link)
			continue;
		if (defer)
			flush_port(hca, i, acks); /* what the last drain left */
		/* Small batches, each followed by a flush: the ACKs and read
		 * responses they caused leave before the next batch is read,
		 * so the peer's window keeps moving. */
		while ((n = sib_link_poll(link, DRAIN_BATCH, rx_cb, &c)) > 0) {
			total += n;
			if (n < DRAIN_BATCH || total >= DRAIN_MAX ||
			    __atomic_load_n(&pg->beside, __ATOMIC_RELAXED))
				break; /* ... or the thread took over (drain_beside) */
			flush_port(hca, i, mode != DRAIN_HOLD);
		}
		if (!defer || !total)
			flush_port(hca, i, acks);
		if (placing)
			*placing += c.placing;
	}
	if (hca->engine && mode != DRAIN_FLUSH)
		sib_engine_defer_acks(hca->engine, false);
	/* A caller that takes packets itself is served as usual again: what
	 * is owed leaves with its next post or drain. */
	if (defer && total && __atomic_load_n(&pg->ack_hold_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&pg->ack_hold_ns, 0, __ATOMIC_RELAXED);
	return total;
}

void sib_progress_flush(struct sib_hca *hca)
{
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
		if (hca->node.mgmt[i].link)
			flush_port(hca, i, true);
}

int sib_progress_poll(struct sib_hca *hca)
{
	int n;

	pthread_mutex_lock(&hca->progress.drain_lock);
	n = drain_links(hca, DRAIN_FLUSH, NULL);
	pthread_mutex_unlock(&hca->progress.drain_lock);
	return n + sib_timers_run(&hca->progress.timers);
}

/* A burst left packets queued lately (also one newer than now). */
static bool tx_deferred(struct sib_progress *pg, uint64_t now)
{
	return __atomic_load_n(&pg->tx_deferred_ns, __ATOMIC_SEQ_CST) + SIB_PROGRESS_LEASE_NS > now;
}

/*
 * The thread is about to sleep for ns (UINT64_MAX: no timeout): it
 * publishes when it will look again, then caps the sleep at the burst
 * bound if a burst is queued, and at the end of an application's lease
 * (the leftovers rule).  Both sequentially consistent, like the other
 * side (sib_progress_post, lease_renew: their time, then wake_by_ns, in
 * wake_by), so the one is either seen here or sees the long sleep and
 * kicks it.
 */
static uint64_t sleep_publish(struct sib_progress *pg, uint64_t now, uint64_t ns)
{
	uint64_t held = __atomic_load_n(&pg->ack_hold_ns, __ATOMIC_RELAXED), busy;

	/* Held ACKs leave by their bound (hold_update). */
	if (held) {
		uint64_t left = held + pg->ack_hold_max_ns > now ? held + pg->ack_hold_max_ns - now : 0;

		if (left < ns)
			ns = left;
	}
	__atomic_store_n(&pg->wake_by_ns, ns == UINT64_MAX ? UINT64_MAX : now + ns,
			 __ATOMIC_SEQ_CST);
	if (ns > SIB_PROGRESS_DEFER_NS && tx_deferred(pg, now)) {
		ns = SIB_PROGRESS_DEFER_NS;
		__atomic_store_n(&pg->wake_by_ns, now + ns, __ATOMIC_SEQ_CST);
	}
	busy = __atomic_load_n(&pg->busy_until_ns, __ATOMIC_SEQ_CST);
	if (busy > now && ns > busy - now) {
		ns = busy - now;
		__atomic_store_n(&pg->wake_by_ns, now + ns, __ATOMIC_SEQ_CST);
	}
	return ns;
}

/* Kicks the thread once if it sleeps past `by` (sleep_publish). */
static void wake_by(struct sib_progress *pg, uint64_t by)
{
	uint64_t wake = __atomic_load_n(&pg->wake_by_ns, __ATOMIC_SEQ_CST), one = 1;

	if (wake > by && pg->kick_fd >= 0 &&
	    __atomic_compare_exchange_n(&pg->wake_by_ns, &wake, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED) &&
	    write(pg->kick_fd, &one, sizeof(one)) < 0)
		sib_dbg("progress kick: %s", strerror(errno));
}

void sib_progress_post(struct sib_hca *hca, struct sib_qp *qp)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t now = sib_link_now_ns();
	uint64_t prev = __atomic_exchange_n(&pg->last_post_ns, now, __ATOMIC_RELAXED);

	/* Back-to-back posts while a poller holds the lease: a burst whose
	 * packets go out together (UDP GSO) when the poller polls next, a
	 * post comes after a pause, the queue fills, or at the latest
	 * SIB_PROGRESS_DEFER_NS later from the progress thread.  A lone post
	 * transmits at once. */
	if (now - prev < SIB_PROGRESS_BURST_NS &&
	    __atomic_load_n(&pg->busy_until_ns, __ATOMIC_RELAXED) > now) {
		__atomic_store_n(&pg->tx_deferred_ns, now, __ATOMIC_SEQ_CST);
		sib_qp_kick_queued(qp);
		/* The thread went to sleep before this burst, for longer than
		 * the bound (sleep_publish): wake it once, so that it sleeps
		 * to the bound. */
		wake_by(pg, now + SIB_PROGRESS_DEFER_NS);
		return;
	}
	sib_qp_kick(qp);
}

/* The caller polls: renewed only when a good part of the lease has passed,
 * one shared store per few hundred microseconds, not one per poll.
 * Returns the time it read. */
static uint64_t lease_renew(struct sib_progress *pg)
{
	uint64_t now = sib_link_now_ns(), until = now + SIB_PROGRESS_LEASE_NS;
	uint64_t busy = __atomic_load_n(&pg->busy_until_ns, __ATOMIC_RELAXED);

	__atomic_store_n(&pg->last_drain_ns, now, __ATOMIC_RELAXED);
	if (until > busy + SIB_PROGRESS_LEASE_NS / 4) {
		__atomic_store_n(&pg->busy_until_ns, until, __ATOMIC_SEQ_CST);
		/* A lease begins: a thread asleep past its end is woken,
		 * so that it looks in by then (the leftovers rule). */
		if (busy <= now)
			wake_by(pg, until);
	}
	return now;
}

/*
 * An application drain's claim on the links, under drain_lock: the time
 * it took them, unless the thread is draining beside a stuck drainer.
 * Stamp, then look (both sequentially consistent), as drain_beside sets
 * beside, then looks: one of the two sees the other, so a fresh drain
 * and the thread never drain together.
 */
static bool drain_claim(struct sib_progress *pg, uint64_t now)
{
	__atomic_store_n(&pg->drain_since_ns, now, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&pg->beside, __ATOMIC_SEQ_CST))
		return true;
	__atomic_store_n(&pg->drain_since_ns, 0, __ATOMIC_RELAXED);
	return false;
}

int sib_progress_drain(struct sib_hca *hca, bool lease)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t now = lease ? lease_renew(pg) : sib_link_now_ns();
	int n;

	if (pthread_mutex_trylock(&pg->drain_lock))
		return 0;
	if (!drain_claim(pg, now)) {
		pthread_mutex_unlock(&pg->drain_lock);
		return 0;
	}
	/* Without a lease nothing may wait for this caller's next call,
	 * but the ACKs of one that waits for events (the wake-up rule). */
	if (!lease && waiter_active(pg, now)) {
		n = drain_links(hca, DRAIN_HOLD, NULL);
		hold_start(hca);
	} else {
		n = drain_links(hca, lease ? DRAIN_DEFER : DRAIN_FLUSH, NULL);
	}
	__atomic_store_n(&pg->drain_since_ns, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pg->drain_lock);
	return n;
}

void sib_progress_touch(struct sib_hca *hca)
{
	lease_renew(&hca->progress);
}

/* An application thread waits for completion events on the links, or
 * left such a wait less than a lease ago (the wake-up rule). */
static bool waiter_active(struct sib_progress *pg, uint64_t now)
{
	return __atomic_load_n(&pg->waiters, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&pg->wait_lease_ns, __ATOMIC_RELAXED) > now;
}

void sib_progress_drain_end(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t one = 1;

	/* What a deferring drain left; a waiter's ACKs wait for its post. */
	if (waiter_active(pg, sib_link_now_ns())) {
		for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
			if (hca->node.mgmt[i].link)
				flush_port(hca, i, false);
	} else {
		sib_progress_flush(hca);
	}
	if (!__atomic_load_n(&pg->busy_until_ns, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&pg->busy_until_ns, 0, __ATOMIC_RELAXED);
	/* An application that waits in ibv_get_cq_event takes the links
	 * itself (the wake-up rule): the thread sleeps on. */
	if (waiter_active(pg, sib_link_now_ns()))
		return;
	if (__atomic_load_n(&pg->lease_sleep, __ATOMIC_ACQUIRE) && pg->kick_fd >= 0 &&
	    write(pg->kick_fd, &one, sizeof(one)) < 0)
		sib_dbg("progress kick: %s", strerror(errno));
}

/* sib_progress_wait's fd on this thread (-1: none), and whether a drain
 * here wrote its event. */
static __thread int wait_fd = -1;
static __thread bool wait_fd_written;

bool sib_progress_event_for_waiter(struct sib_hca *hca, int fd)
{
	if (fd >= 0 && fd == wait_fd && !wait_fd_written) {
		wait_fd_written = true;
		return true;
	}
	if (sib_progress_on_thread(hca))
		sib_link_count(&hca->progress.wakes_event, 1);
	return false;
}

/* Whether a signal that interrupted a wait would have restarted the read
 * the caller was going to block in: every handler the process has set is
 * SA_RESTART (a read(2) on a pipe restarts then; ppoll(2) never does). */
static bool signals_restart(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) || sa.sa_handler == SIG_DFL ||
		    sa.sa_handler == SIG_IGN)
			continue;
		if (!(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}

/* The waiter's drain: it has nothing else to do, so it waits for the
 * drain lock (a drain is short).  What it owes but ACKs leaves at once;
 * the ACKs wait for its post, at most the hold's bound (sib_progress_wait
 * sends them then if it still waits). */
static void waiter_drain(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;
	bool claimed;

	pthread_mutex_lock(&pg->drain_lock);
	claimed = drain_claim(pg, sib_link_now_ns());
	if (claimed) {
		drain_links(hca, DRAIN_HOLD, NULL);
		hold_start(hca);
		__atomic_store_n(&pg->drain_since_ns, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&pg->drain_lock);
	if (!claimed)
		sched_yield(); /* the thread drains beside: it is done in a moment */
}

int sib_progress_wait(struct sib_hca *hca, int fd)
{
	struct sib_progress *pg = &hca->progress;
	struct pollfd fds[SIB_NUM_PORTS + 1];
	int rc = 0;

	if (fd < 0 || wait_fd >= 0 || sib_progress_on_thread(hca))
		return -EINVAL;
	wait_fd = fd;
	wait_fd_written = false;
	__atomic_add_fetch(&pg->waiters, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		unsigned nfds = 1;
		bool pending = false;
		int64_t timeout = -1; /* ns */
		uint64_t now = sib_link_now_ns();
		struct timespec ts;
		uint64_t held;
		int n;

		fds[0].fd = fd;
		fds[0].events = POLLIN;
		fds[0].revents = 0;
		/* Arm, then sleep: what arrives after wait_arm wakes us (link.h). */
		for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
			struct sib_link *link = hca->node.mgmt[i].link;
			uint64_t d;

			if (!link)
				continue;
			if (sib_link_wait_arm(link) > 0)
				pending = true;
			fds[nfds].fd = sib_link_wait_fd(link);
			fds[nfds].events = POLLIN;
			fds[nfds++].revents = 0;
			d = sib_link_next_deadline_ns(link);
			if (d) {
				int64_t left = d <= now ? 0 : (int64_t)(d - now);

				if (timeout < 0 || left < timeout)
					timeout = left;
			}
		}
		/* ACKs held for our next post leave by their bound. */
		held = __atomic_load_n(&pg->ack_hold_ns, __ATOMIC_RELAXED);
		if (held && hca->engine) {
			if (now - held >= pg->ack_hold_max_ns || !sib_engine_acks_owed(hca->engine)) {
				__atomic_store_n(&pg->ack_hold_ns, 0, __ATOMIC_RELAXED);
				sib_progress_flush(hca);
			} else if (timeout < 0 || held + pg->ack_hold_max_ns - now < (uint64_t)timeout) {
				timeout = (int64_t)(held + pg->ack_hold_max_ns - now);
			}
		}
		if (pending)
			timeout = 0;
		ts.tv_sec = timeout < 0 ? 0 : (time_t)(timeout / 1000000000);
		ts.tv_nsec = timeout < 0 ? 0 : (long)(timeout % 1000000000);
		n = ppoll(fds, nfds, timeout < 0 ? NULL : &ts, NULL);
		if (n < 0 && errno == EINTR) {
			if (signals_restart())
				continue;
			rc = -EINTR;
			break;
		}
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (!pending)
			sib_link_count(&pg->wakes_waiter, 1);
		if (fds[0].revents)
			break; /* the event (or an error the read will report) */
		waiter_drain(hca);
		if (wait_fd_written)
			break;
	}
	__atomic_store_n(&pg->wait_lease_ns, sib_link_now_ns() + SIB_PROGRESS_LEASE_NS,
			 __ATOMIC_RELAXED);
	__atomic_sub_fetch(&pg->waiters, 1, __ATOMIC_SEQ_CST);
	wait_fd = -1;
	return rc;
}

bool sib_progress_on_thread(struct sib_hca *hca)
{
	return hca->progress.running && pthread_equal(pthread_self(), hca->progress.thread);
}

void sib_hca_set_rx_data(struct sib_hca *hca, sib_rx_data_fn fn)
{
	__atomic_store_n(&hca->progress.rx_data, fn, __ATOMIC_RELEASE);
}

/*
 * Whether the thread's pass holds the ACKs it owes: while an application
 * thread polls (a lease) and has posted lately.  An application waiting on
 * memory (ib_write_lat) sees the WRITE the thread took and answers within
 * microseconds; its request and the ACK then reach the peer in one
 * message, which the peer's poll for that ACK takes whole.  Sent alone,
 * the ACK completes the peer's request early, the peer goes back to
 * waiting on memory, and nobody drains our answer there until its
 * progress thread looks: up to a lease, or a wake-up per hop from then on
 * (the thread's watch mode).
 */
static bool hold_acks(struct sib_progress *pg)
{
	uint64_t now = sib_link_now_ns();

	return __atomic_load_n(&pg->busy_until_ns, __ATOMIC_RELAXED) > now &&
	       __atomic_load_n(&pg->last_post_ns, __ATOMIC_RELAXED) + SIB_PROGRESS_LEASE_NS > now;
}

/* After a pass: starts holding what is owed, or sends it once it has been
 * held for the bound (the thread's sleeps end by then: sleep_publish). */
static void hold_update(struct sib_hca *hca, bool held)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t since = __atomic_load_n(&pg->ack_hold_ns, __ATOMIC_RELAXED), now;

	if (!held || !hca->engine || !sib_engine_acks_owed(hca->engine)) {
		if (since)
			__atomic_store_n(&pg->ack_hold_ns, 0, __ATOMIC_RELAXED);
		return;
	}
	now = sib_link_now_ns();
	if (!since) {
		__atomic_store_n(&pg->ack_hold_ns, now, __ATOMIC_RELAXED);
	} else if (now - since >= pg->ack_hold_max_ns) {
		__atomic_store_n(&pg->ack_hold_ns, 0, __ATOMIC_RELAXED);
		flush_port(hca, 0, true);
	}
}

/*
 * The drain rule (progress.h): drain_lock's holder, an application drain,
 * has had the links for SIB_LINK_STUCK_NS, so it lost the CPU in the
 * middle of its drain.  Takes every port's datagrams beside it (the links
 * give a second poller buffers of its own) and sends all that is owed and
 * queued, as a pass without an application does.  Returns the number of
 * packets, or -1 when the holder is not stuck (or has just left).
 */
static int drain_beside(struct sib_hca *hca, unsigned *placing)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t since = __atomic_load_n(&pg->drain_since_ns, __ATOMIC_SEQ_CST);
	int total = 0;

	if (!since || sib_link_now_ns() < since + SIB_LINK_STUCK_NS)
		return -1;
	__atomic_store_n(&pg->beside, true, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&pg->drain_since_ns, __ATOMIC_SEQ_CST) != since) {
		/* It left, and a fresh drain may have begun (drain_claim). */
		__atomic_store_n(&pg->beside, false, __ATOMIC_RELEASE);
		return -1;
	}
	if (since != pg->beside_of) { /* a new stuck drain: counted once */
		pg->beside_of = since;
		__atomic_fetch_add(&pg->drains_beside, 1, __ATOMIC_RELAXED);
		sib_dbg("progress: an application thread has held the links for over %llu us (it "
			"lost the CPU in the middle of a drain); draining beside it",
			SIB_LINK_STUCK_NS / 1000);
	}
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		struct sib_link *link = hca->node.mgmt[i].link;
		struct rx_ctx c = { hca, i + 1, 0 };
		int n;

		if (!link)
			continue;
		while ((n = sib_link_poll(link, DRAIN_BATCH, rx_cb, &c)) > 0) {
			total += n;
			if (n < DRAIN_BATCH || total >= DRAIN_MAX)
				break;
			flush_port(hca, i, true);
		}
		flush_port(hca, i, true);
		*placing += c.placing;
	}
	__atomic_store_n(&pg->beside, false, __ATOMIC_RELEASE);
	return total;
}

/* The thread's sib_progress_poll: an application thread draining now
 * holds the links (and a lease, so the thread sleeps next), unless it
 * has held them too long (drain_beside).  *placing: how many of the
 * packets were more than plain ACKs (progress_rx). */
static int thread_pass(struct sib_hca *hca, bool *busy, int *packets, unsigned *placing)
{
	struct sib_progress *pg = &hca->progress;

	*packets = 0;
	*placing = 0;
	*busy = pthread_mutex_trylock(&pg->drain_lock) != 0;
	if (*busy) {
		int n = drain_beside(hca, placing);

		if (n >= 0) {
			*packets = n;
			*busy = false; /* the links are the thread's for this pass */
		}
	} else {
		bool hold = hold_acks(pg);

		/* Nothing owed before this pass: the application's post took
		 * what was held, and a new hold starts from now. */
		if (hold && hca->engine && !sib_engine_acks_owed(hca->engine))
			__atomic_store_n(&pg->ack_hold_ns, 0, __ATOMIC_RELAXED);
		*packets = drain_links(hca, hold ? DRAIN_HOLD : DRAIN_FLUSH, placing);
		hold_update(hca, hold);
		pthread_mutex_unlock(&pg->drain_lock);
	}
	return *packets + sib_timers_run(&pg->timers);
}

/* Sleeps up to ns on the timers, the kick and the stop fd only; true when
 * the thread is to stop. */
static bool lease_sleep(struct sib_hca *hca, uint64_t ns)
{
	struct sib_progress *pg = &hca->progress;
	struct pollfd fds[3] = {
		{ .fd = sib_timers_fd(&pg->timers), .events = POLLIN },
		{ .fd = pg->kick_fd, .events = POLLIN },
		{ .fd = pg->stop_fd, .events = POLLIN },
	};
	struct timespec ts;
	uint64_t v;

	/* A drain_end that misses this flag costs at most the timeout. */
	__atomic_store_n(&pg->lease_sleep, true, __ATOMIC_SEQ_CST);
	ns = sleep_publish(pg, sib_link_now_ns(), ns);
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	ppoll(fds, 3, &ts, NULL);
	sib_link_count(&pg->wakes_thread, 1);
	__atomic_store_n(&pg->wake_by_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pg->lease_sleep, false, __ATOMIC_RELEASE);
	if (fds[0].revents & POLLIN && read(sib_timers_fd(&pg->timers), &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		sib_dbg("timerfd read: %s", strerror(errno));
	if (fds[1].revents & POLLIN && read(pg->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		sib_dbg("kick read: %s", strerror(errno));
	return fds[2].revents & POLLIN;
}

/*
 * While an application thread polls (a lease), the thread either sleeps
 * until the lease runs out, so that datagrams the poller takes do not wake
 * it too, or, in watch mode, sleeps on the links as usual.  Watch mode is
 * for a poller that polls a CQ now and then but waits on something else
 * in between (ib_write_lat spins on memory): the thread entered it when it
 * found a packet other than a plain ACK waiting that the poller had left
 * for a while, and leaves it when the poller keeps taking the datagrams
 * first.  A plain ACK only completes work requests, which the poller sees
 * when it polls; what a thread waiting on memory waits for is an RDMA
 * WRITE, a READ response or atomic result, or the peer's wait for our
 * answer to its READ.  A sender that spends a while posting, or that two
 * busy processes on two cores keep off the CPU, leaves ACKs waiting too:
 * watching its links would cost a wake-up per datagram and take CPU it
 * needs (ib_send_bw moved 15 to 20 % less).
 */
/* The scheduler's struct sched_attr (sched_setattr(2)); glibc has no
 * wrapper, and linux/sched/types.h clashes with sched.h. */
struct sched_attr_v1 {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

/* The wake-up rule: a short slice (EEVDF, Linux 6.12 and later: a waking
 * task with a shorter slice preempts the running one), the thread's nice
 * value kept.  Refused or ignored by older kernels: no harm. */
static void short_slice(void)
{
#ifdef SYS_sched_setattr
	struct sched_attr_v1 a = {
		.size = sizeof(a),
		.sched_policy = SCHED_OTHER,
		.sched_runtime = SIB_PROGRESS_SLICE_NS,
	};

	errno = 0;
	a.sched_nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	if (errno || syscall(SYS_sched_setattr, 0, &a, 0))
		sib_dbg("progress thread: no short scheduler slice: %s", strerror(errno));
#endif
}

static void *progress_main(void *arg)
{
	struct sib_hca *hca = arg;
	struct sib_progress *pg = &hca->progress;
	struct pollfd fds[SIB_NUM_PORTS + 3];
	bool watch = false;
	unsigned empty = 0;
	uint64_t last_rx = 0;

	short_slice();
	for (;;) {
		unsigned nfds = 0;
		int64_t timeout = -1; /* ns */
		struct timespec ts;
		bool pending = false, draining;
		uint64_t now, busy;
		unsigned placing;
		int packets, n = thread_pass(hca, &draining, &packets, &placing);

		now = sib_link_now_ns();
		busy = __atomic_load_n(&pg->busy_until_ns, __ATOMIC_RELAXED);
		if (n > 0) {
			uint64_t active = __atomic_load_n(&pg->last_drain_ns, __ATOMIC_RELAXED),
				 post = __atomic_load_n(&pg->last_post_ns, __ATOMIC_RELAXED);

			if (!packets) /* timers only */
				continue;
			empty = 0;
			last_rx = now;
			if (post > active)
				active = post;
			if (!watch && placing && busy > now && now - active > SIB_PROGRESS_STALE_NS)
				watch = true;
			continue;
		}
		/* An application thread waits on the links for its event (the
		 * wake-up rule): look in once a lease, for the drain rule. */
		if (waiter_active(pg, now)) {
			uint64_t until = __atomic_load_n(&pg->wait_lease_ns, __ATOMIC_RELAXED);

			if (lease_sleep(hca, until > now ? until - now : SIB_PROGRESS_LEASE_NS))
				break;
			continue;
		}
		if (watch && (busy > now || draining) && ++empty >= SIB_PROGRESS_WATCH_EMPTY) {
			watch = false;
			empty = 0;
		}
		if ((busy > now || draining) && !watch) {
			/* An application thread drains the links: look again
			 * when its lease runs out (or it says it sleeps); one
			 * draining past its lease is done in a moment.  A burst
			 * caps the sleep (sleep_publish). */
			if (lease_sleep(hca, busy > now ? busy - now : SIB_PROGRESS_LEASE_NS / 4))
				break;
			continue;
		}
		/* Nobody polls here but datagrams came a moment ago: the
		 * next one (a READ in ib_read_lat) is likely as close, and
		 * waking from sleep costs tens of microseconds here. */
		if (!(busy > now || draining) && now - last_rx < pg->spin_ns) {
			cpu_relax();
			continue;
		}
		/* Arm every link, then check once more: whatever arrives
		 * after wait_arm makes its fd readable (link.h). */
		for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
			struct sib_link *link = hca->node.mgmt[i].link;
			uint64_t d;

			if (!link)
				continue;
			if (sib_link_wait_arm(link) > 0)
				pending = true;
			fds[nfds].fd = sib_link_wait_fd(link);
			fds[nfds++].events = POLLIN;
			d = sib_link_next_deadline_ns(link);
			if (d) {
				int64_t left = d <= now ? 0 : (int64_t)(d - now);

				if (timeout < 0 || left < timeout)
					timeout = left;
			}
		}
		if (pending)
			continue;
		fds[nfds].fd = pg->kick_fd;
		fds[nfds++].events = POLLIN;
		fds[nfds].fd = sib_timers_fd(&pg->timers);
		fds[nfds++].events = POLLIN;
		fds[nfds].fd = pg->stop_fd;
		fds[nfds++].events = POLLIN;
		/* Packets a post left queued leave within the bound even if
		 * the poller never comes back: the sleep is capped at it, and
		 * a burst posted while this sleeps kicks it (sib_progress_post). */
		timeout = (int64_t)sleep_publish(pg, now, timeout < 0 ? UINT64_MAX : (uint64_t)timeout);
		if (timeout == (int64_t)UINT64_MAX)
			timeout = -1;
		ts.tv_sec = timeout < 0 ? 0 : (time_t)(timeout / 1000000000);
		ts.tv_nsec = timeout < 0 ? 0 : (long)(timeout % 1000000000);
		if (ppoll(fds, nfds, timeout < 0 ? NULL : &ts, NULL) < 0 && errno != EINTR) {
			sib_err("progress thread: poll failed: %s; stopping", strerror(errno));
			break;
		}
		sib_link_count(&pg->wakes_thread, 1);
		__atomic_store_n(&pg->wake_by_ns, 0, __ATOMIC_RELEASE);
		if (fds[nfds - 3].revents & POLLIN) {
			uint64_t v;

			if (read(pg->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				sib_dbg("kick read: %s", strerror(errno));
		}
		if (fds[nfds - 2].revents & POLLIN) {
			uint64_t expirations;

			if (read(sib_timers_fd(&pg->timers), &expirations, sizeof(expirations)) < 0 &&
			    errno != EAGAIN)
				sib_dbg("timerfd read: %s", strerror(errno));
		}
		if (fds[nfds - 1].revents & POLLIN)
			break;
	}
	return NULL;
}

/* SOFTIB_SPIN_US (man/softib.7): 0..1000000, default SIB_PROGRESS_SPIN_NS. */
static uint64_t spin_from_env(void)
{
	const char *v = getenv("SOFTIB_SPIN_US");
	char *end;
	unsigned long us;

	if (!v || !*v)
		return SIB_PROGRESS_SPIN_NS;
	errno = 0;
	us = strtoul(v, &end, 10);
	if (errno || *end || v[0] == '-' || us > 1000000) {
		sib_warn("SOFTIB_SPIN_US=%s: want microseconds 0..1000000; using %llu", v,
			 SIB_PROGRESS_SPIN_NS / 1000);
		return SIB_PROGRESS_SPIN_NS;
	}
	return (uint64_t)us * 1000;
}

int sib_progress_init(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;
	int terr;

	memset(pg, 0, sizeof(*pg));
	pg->spin_ns = spin_from_env();
	pg->ack_hold_max_ns = SIB_PROGRESS_DEFER_NS;
	pthread_mutex_init(&pg->drain_lock, NULL);
	pg->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pg->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	terr = sib_timers_init(&pg->timers);
	if (pg->stop_fd < 0 || pg->kick_fd < 0 || terr) {
		int err = terr ? -terr : errno;

		sib_err("progress engine: cannot create its eventfd/timerfd: %s", strerror(err));
		sib_progress_fini(hca);
		return -err;
	}
	return 0;
}

int sib_progress_start(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;
	int rc;

	rc = sib_thread_create(&pg->thread, progress_main, hca);
	if (rc) {
		sib_err("cannot start the progress thread: %s", strerror(rc));
		return -rc;
	}
	pthread_setname_np(pg->thread, "softib-progress");
	pg->running = true;
	return 0;
}

void sib_progress_stop(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t one = 1;

	if (!pg->running)
		return;
	if (write(pg->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		sib_warn("cannot wake the progress thread to stop it: %s", strerror(errno));
	pthread_join(pg->thread, NULL);
	pg->running = false;
}

void sib_progress_fini(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;

	if (pg->stop_fd >= 0)
		close(pg->stop_fd);
	if (pg->kick_fd >= 0)
		close(pg->kick_fd);
	pg->stop_fd = pg->kick_fd = -1;
	sib_timers_fini(&pg->timers);
	pthread_mutex_destroy(&pg->drain_lock);
}

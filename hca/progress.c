/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The data path's rules (docs/architecture.md), each in one place here:
 *   - the receive rule: read_links, under read_lock;
 *   - the transmit rule: flush_links, and sib_progress_post's one
 *     exception (a thread that polls sends with its next poll);
 *   - the waiting rule: links_owner decides who sleeps on the links, and
 *     watch_mode is its one heuristic.
 */
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

/* ---------------------------------------------------------------- the receive rule */

struct rx_ctx {
	struct sib_hca *hca;
	unsigned port_num;
	unsigned placing; /* data packets that were not plain ACKs */
};

/* One datagram, on the thread that reads the links: decoded, then to the
 * MAD layer (QP0, QP1) or the data path, which hands it to its QP.  True
 * for a data packet that may change memory or wants an answer: any but a
 * plain ACK or NAK, which only completes work requests. */
static bool progress_rx(struct sib_hca *hca, unsigned port_num, const uint8_t *buf, size_t len,
			const struct sib_endpoint *from)
{
	struct sib_link *link = hca->node.mgmt[port_num - 1].link;
	struct ib_packet pkt;
	enum ib_pkt_err err = ib_packet_decode(buf, len, &pkt);
	sib_rx_data_fn rx_data;

	if (err != IB_PKT_OK) {
		if (link)
			sib_link_count_pkt_err(link, err);
		return false;
	}
	if (pkt.bth.DestQP <= SIB_QP1) {
		struct sib_mad_addr a;
		const uint8_t *mad = sib_mgmt_parse(&pkt, &a);

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

enum { READ_BATCH = 16, READ_MAX = 256 };

/* This thread reads the links now (it holds read_lock): what it hands on
 * must not wait for a datagram, which only it could read. */
static __thread bool reading;

bool sib_progress_reading(void)
{
	return reading;
}

/*
 * The receive rule: with read_lock held, every port's link, up to READ_MAX
 * datagrams each, each handed on in the order the link received them.
 * Batches of READ_BATCH, each but the last followed by a flush: the ACKs
 * and read responses they made leave before the next batch is read, so the
 * peer's window keeps moving.  What the last batch made stays queued for
 * the caller (the transmit rule).
 */
static int read_links(struct sib_hca *hca, unsigned *placing)
{
	int total = 0;

	reading = true;
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		struct sib_link *link = hca->node.mgmt[i].link;
		struct rx_ctx c = { hca, i + 1, 0 };
		int n;

		if (!link)
			continue;
		while ((n = sib_link_poll(link, READ_BATCH, rx_cb, &c)) > 0) {
			total += n;
			if (n < READ_BATCH || total >= READ_MAX)
				break;
			sib_link_flush(link);
		}
		if (placing)
			*placing += c.placing;
	}
	reading = false;
	return total;
}

/* ---------------------------------------------------------------- the transmit rule */

/* Every port's queued packets leave (one sender at a time: link.h). */
static void flush_links(struct sib_hca *hca)
{
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
		if (hca->node.mgmt[i].link)
			sib_link_flush(hca->node.mgmt[i].link);
}

void sib_progress_flush(struct sib_hca *hca)
{
	flush_links(hca);
}

void sib_progress_flush_wait(struct sib_hca *hca)
{
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
		if (hca->node.mgmt[i].link)
			sib_link_flush_wait(hca->node.mgmt[i].link);
}

int sib_progress_poll(struct sib_hca *hca)
{
	int n;

	pthread_mutex_lock(&hca->progress.read_lock);
	n = read_links(hca, NULL);
	pthread_mutex_unlock(&hca->progress.read_lock);
	flush_links(hca);
	return n + sib_timers_run(&hca->progress.timers);
}

/* ---------------------------------------------------------------- the waiting rule */

/* This thread polled a CQ and holds the links until then (its share of
 * poll_until): its posts wait for its next poll. */
static __thread uint64_t polls_until;
/* It posted since its last poll: that poll sends, whatever it finds. */
static __thread bool posted_since_poll;

/*
 * Who holds the links now; *until: when the holder's lease ends (the
 * progress thread looks in then), for a thread inside a wait a lease from
 * now (it looks in once a lease while one waits).
 */
static enum sib_links_owner links_owner(struct sib_progress *pg, uint64_t now, uint64_t *until)
{
	uint64_t w = __atomic_load_n(&pg->wait_until, __ATOMIC_SEQ_CST);
	uint64_t p = __atomic_load_n(&pg->poll_until, __ATOMIC_SEQ_CST);

	if (__atomic_load_n(&pg->waiters, __ATOMIC_SEQ_CST)) {
		*until = now + SIB_PROGRESS_LEASE_NS;
		return SIB_OWNER_WAITER;
	}
	*until = w > p ? w : p;
	if (*until <= now)
		return SIB_OWNER_THREAD;
	return w > now ? SIB_OWNER_WAITER : SIB_OWNER_POLLER;
}

/* Kicks the sleeping thread once if it would sleep past by. */
static void wake_by(struct sib_progress *pg, uint64_t by)
{
	uint64_t wake = __atomic_load_n(&pg->wake_by_ns, __ATOMIC_SEQ_CST), one = 1;

	if (wake > by && pg->kick_fd >= 0 &&
	    __atomic_compare_exchange_n(&pg->wake_by_ns, &wake, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED) &&
	    write(pg->kick_fd, &one, sizeof(one)) < 0)
		sib_dbg("progress kick: %s", strerror(errno));
}

/* The calling thread polls: its lease (and the HCA's) is renewed once a
 * quarter of it has passed, not at every poll.  A lease that begins wakes
 * the progress thread if it sleeps past its end (on the links, with no
 * timeout): it must look in by then for what this thread leaves queued. */
static uint64_t lease_renew(struct sib_progress *pg)
{
	uint64_t now = sib_link_now_ns(), until = now + SIB_PROGRESS_LEASE_NS, old;

	if (polls_until > now + SIB_PROGRESS_LEASE_NS * 3 / 4)
		return now;
	polls_until = until;
	old = __atomic_exchange_n(&pg->poll_until, until, __ATOMIC_SEQ_CST);
	if (old <= now)
		wake_by(pg, until);
	return now;
}

/* A thread waits for events, or left a wait less than a lease ago: it
 * holds the links, and its next wait sends what is queued. */
static bool waiter_holds(struct sib_progress *pg, uint64_t now)
{
	return __atomic_load_n(&pg->waiters, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&pg->wait_until, __ATOMIC_RELAXED) > now;
}

int sib_progress_polled(struct sib_hca *hca, bool empty, bool lease)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t now = lease ? lease_renew(pg) : sib_link_now_ns();
	int n;

	/* A poll that found completions, by a thread that holds a lease and
	 * posted nothing since its last poll, leaves what is queued (the ACKs
	 * of what it read) to its next poll: the thread acts on the
	 * completions first, and the request it posts in answer goes out
	 * with those ACKs, behind them, in one datagram (the transmit rule).
	 * What it posted leaves now; a thread without a lease may sleep
	 * next: it sends. */
	if (!empty) {
		if (!lease || posted_since_poll)
			flush_links(hca);
		posted_since_poll = false;
		return 0;
	}
	posted_since_poll = false;
	/* What this thread queued leaves first (the transmit rule). */
	flush_links(hca);
	__atomic_store_n(&pg->last_take_ns, now, __ATOMIC_RELAXED);
	/* Another thread reads: it hands out what it takes. */
	if (pthread_mutex_trylock(&pg->read_lock))
		return 0;
	n = read_links(hca, NULL);
	pthread_mutex_unlock(&pg->read_lock);
	/* Without a lease nothing may wait for this thread's next call. */
	if (!lease && !waiter_holds(pg, now))
		flush_links(hca);
	return n;
}

void sib_progress_post(struct sib_hca *hca, struct sib_qp *qp)
{
	uint64_t now = sib_link_now_ns();

	sib_qp_kick(qp);
	/* A thread that polls sends with its next poll: a burst of posts goes
	 * out in one system call, and the ACKs its last poll made go ahead of
	 * it.  Its lease bounds the wait (the progress thread looks in at its
	 * end; unless another thread armed its CQ and ended the lease
	 * meanwhile: then it sends now).  Any other thread sends before it
	 * returns. */
	if (polls_until > now && __atomic_load_n(&hca->progress.poll_until, __ATOMIC_RELAXED) > now) {
		__atomic_store_n(&hca->progress.last_take_ns, now, __ATOMIC_RELAXED);
		posted_since_poll = true;
		return;
	}
	flush_links(hca);
}

void sib_progress_armed(struct sib_hca *hca)
{
	struct sib_progress *pg = &hca->progress;
	uint64_t now = sib_link_now_ns(), one = 1;

	polls_until = 0;
	/* A thread that waits for events holds the links: its next sleep
	 * sends what is queued. */
	if (waiter_holds(pg, now))
		return;
	flush_links(hca);
	if (__atomic_load_n(&pg->poll_until, __ATOMIC_RELAXED) <= now)
		return;
	__atomic_store_n(&pg->poll_until, 0, __ATOMIC_SEQ_CST);
	/* The thread sleeps on its timers: it takes the links now. */
	if (__atomic_load_n(&pg->timers_only, __ATOMIC_SEQ_CST) && pg->kick_fd >= 0 &&
	    write(pg->kick_fd, &one, sizeof(one)) < 0)
		sib_dbg("progress kick: %s", strerror(errno));
}

/* ---------------------------------------------------------------- waiting for an event */

/* sib_progress_wait's fd on this thread (-1: none), and whether a read
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

/* Arms every port's link for a sleep; true when datagrams wait already
 * (link.h: what arrives after the arm makes the fd readable). */
static bool arm_links(struct sib_hca *hca, struct pollfd *fds, unsigned *nfds, int64_t *timeout,
		      uint64_t now)
{
	bool pending = false;

	for (unsigned i = 0; i < SIB_NUM_PORTS; i++) {
		struct sib_link *link = hca->node.mgmt[i].link;
		uint64_t d;

		if (!link)
			continue;
		if (sib_link_wait_arm(link) > 0)
			pending = true;
		fds[*nfds].fd = sib_link_wait_fd(link);
		fds[(*nfds)++].events = POLLIN;
		d = sib_link_next_deadline_ns(link);
		if (d) {
			int64_t left = d <= now ? 0 : (int64_t)(d - now);

			if (*timeout < 0 || left < *timeout)
				*timeout = left;
		}
	}
	return pending;
}

/*
 * The waiting rule, for a thread that waits for a completion event: it
 * sends what is queued, sleeps on the links and its channel, and reads the
 * links itself when they wake it, so the event it waits for is written by
 * the thread that reads it (one wake-up per message, as a blocking UDP
 * receiver has).  What its last read made (ACKs) stays queued for its next
 * post: the progress thread looks in once a lease meanwhile.
 */
int sib_progress_wait(struct sib_hca *hca, int fd)
{
	struct sib_progress *pg = &hca->progress;
	struct pollfd fds[SIB_NUM_PORTS + 1];
	int rc = 0;

	if (fd < 0 || wait_fd >= 0 || sib_progress_on_thread(hca))
		return -EINVAL;
	wait_fd = fd;
	wait_fd_written = false;
	polls_until = 0;
	__atomic_add_fetch(&pg->waiters, 1, __ATOMIC_SEQ_CST);
	/* The links are this thread's now: a progress thread asleep on them
	 * looks again (thread_sleep's store and load pair with these). */
	if (!__atomic_load_n(&pg->timers_only, __ATOMIC_SEQ_CST))
		wake_by(pg, 0);
	for (;;) {
		unsigned nfds = 1;
		int64_t timeout = -1; /* ns */
		struct timespec ts;
		bool pending;
		int n;

		flush_links(hca);
		fds[0].fd = fd;
		fds[0].events = POLLIN;
		pending = arm_links(hca, fds, &nfds, &timeout, sib_link_now_ns());
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
		/* It has nothing else to do: it waits for another reader. */
		pthread_mutex_lock(&pg->read_lock);
		read_links(hca, NULL);
		pthread_mutex_unlock(&pg->read_lock);
		__atomic_store_n(&pg->last_take_ns, sib_link_now_ns(), __ATOMIC_RELAXED);
		if (wait_fd_written)
			break;
	}
	__atomic_store_n(&pg->wait_until, sib_link_now_ns() + SIB_PROGRESS_LEASE_NS,
			 __ATOMIC_SEQ_CST);
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

/* ---------------------------------------------------------------- the progress thread */

/*
 * The thread's pass: the links read, the timers run, and what is queued
 * sent.  When the thread holds the links it waits for a reader that is
 * inside (it has nothing else to do).  Looking in on an application's
 * links it reads only if no other thread is reading, and when that
 * application polls, what the pass queued is the poller's to send, with
 * its next poll or post (at the latest the thread sends it when the lease
 * ends), as what the poller's own reading queues (the transmit rule): the
 * ACK for a peer's WRITE that the thread took while ib_write_lat's side
 * waited on memory leaves with that side's own WRITE, in one datagram.  A
 * thread that waits for events sleeps: the pass sends for it.
 */
static int thread_pass(struct sib_hca *hca, enum sib_links_owner owner, int *packets,
		       unsigned *placing)
{
	struct sib_progress *pg = &hca->progress;

	*placing = 0;
	*packets = 0;
	if (owner == SIB_OWNER_THREAD)
		pthread_mutex_lock(&pg->read_lock);
	if (owner == SIB_OWNER_THREAD || !pthread_mutex_trylock(&pg->read_lock)) {
		*packets = read_links(hca, placing);
		pthread_mutex_unlock(&pg->read_lock);
	}
	if (owner != SIB_OWNER_POLLER)
		flush_links(hca);
	return *packets + sib_timers_run(&pg->timers);
}

/*
 * Watch mode, the waiting rule's one heuristic: while an application
 * thread holds the links, the thread sleeps on its timers only, since the
 * holder reads the links itself; but a holder that polls a CQ now and then
 * and waits on something else in between (ib_write_lat spins on memory for
 * the peer's WRITE) leaves what it waits for unread.  The thread watches
 * the links too (sleeps on them) from when one of its passes finds a
 * packet other than a plain ACK that the holder had left for
 * SIB_PROGRESS_STALE_NS (during the lease, or at its end: a holder that
 * polls again is watched), until SIB_PROGRESS_WATCH_EMPTY wake-ups in a
 * row, while an application polls, find that it read the datagrams first,
 * or until a thread waits for events (it reads what wakes it).  A plain ACK only
 * completes work requests, which the holder sees when it polls; a sender
 * that is short of CPU leaves ACKs unread too, and watching its links
 * would take a wake-up per datagram from it.  Returns whether to watch.
 */
struct watch {
	bool on;
	unsigned empty;
};

static bool watch_mode(struct sib_progress *pg, struct watch *w, enum sib_links_owner owner,
		       int packets, unsigned placing, uint64_t now)
{
	if (owner == SIB_OWNER_WAITER) { /* a waiter reads what wakes it */
		w->on = false;
		w->empty = 0;
	} else if (packets) {
		w->empty = 0;
		if (!w->on && placing &&
		    now - __atomic_load_n(&pg->last_take_ns, __ATOMIC_RELAXED) >
			    SIB_PROGRESS_STALE_NS) {
			w->on = true;
			sib_link_count(&pg->watches, 1);
		}
	} else if (owner == SIB_OWNER_POLLER && w->on && ++w->empty >= SIB_PROGRESS_WATCH_EMPTY) {
		w->on = false;
		w->empty = 0;
	}
	return w->on;
}

/* The scheduler's struct sched_attr (sched_setattr(2)); glibc has no
 * wrapper, and linux/sched/types.h clashes with sched.h. */
struct sched_attr_v1 {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

/* SIB_PROGRESS_SLICE_NS, the thread's nice value kept.  Refused or
 * ignored by older kernels: no harm. */
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

/*
 * Sleeps up to timeout ns (negative: until woken) on the timers, the kick
 * and the stop fd, and on the links unless timers_only.  It first says
 * when it looks again (wake_by_ns, for wake_by); going to sleep on the
 * links as their holder, it then looks at the holder once more: a lease
 * that began meanwhile (lease_renew's exchange, then its load of
 * wake_by_ns; all sequentially consistent) or a waiter that came
 * (sib_progress_wait) sends it back to decide again.  True when the
 * thread is to stop.
 */
static bool thread_sleep(struct sib_hca *hca, bool timers_only, bool watching, int64_t timeout)
{
	struct sib_progress *pg = &hca->progress;
	struct pollfd fds[SIB_NUM_PORTS + 3];
	uint64_t now = sib_link_now_ns(), until, v;
	unsigned nfds = 0;
	struct timespec ts;

	if (!timers_only && arm_links(hca, fds, &nfds, &timeout, now))
		return false; /* datagrams wait already */
	__atomic_store_n(&pg->timers_only, timers_only, __ATOMIC_SEQ_CST);
	__atomic_store_n(&pg->wake_by_ns, timeout < 0 ? UINT64_MAX : now + (uint64_t)timeout,
			 __ATOMIC_SEQ_CST);
	if (!timers_only && !watching && links_owner(pg, now, &until) != SIB_OWNER_THREAD) {
		/* An application took the links meanwhile: decide again. */
		__atomic_store_n(&pg->wake_by_ns, 0, __ATOMIC_RELEASE);
		return false;
	}
	fds[nfds].fd = pg->kick_fd;
	fds[nfds++].events = POLLIN;
	fds[nfds].fd = sib_timers_fd(&pg->timers);
	fds[nfds++].events = POLLIN;
	fds[nfds].fd = pg->stop_fd;
	fds[nfds++].events = POLLIN;
	ts.tv_sec = timeout < 0 ? 0 : (time_t)(timeout / 1000000000);
	ts.tv_nsec = timeout < 0 ? 0 : (long)(timeout % 1000000000);
	if (ppoll(fds, nfds, timeout < 0 ? NULL : &ts, NULL) < 0 && errno != EINTR) {
		sib_err("progress thread: poll failed: %s; stopping", strerror(errno));
		return true;
	}
	sib_link_count(&pg->wakes_thread, 1);
	__atomic_store_n(&pg->wake_by_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pg->timers_only, false, __ATOMIC_RELEASE);
	if (fds[nfds - 3].revents & POLLIN && read(pg->kick_fd, &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		sib_dbg("kick read: %s", strerror(errno));
	if (fds[nfds - 2].revents & POLLIN && read(sib_timers_fd(&pg->timers), &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		sib_dbg("timerfd read: %s", strerror(errno));
	return fds[nfds - 1].revents & POLLIN;
}

/*
 * The waiting rule, for the progress thread.  It reads the links, sends
 * and runs its timers until a pass finds nothing; then, when it holds the
 * links, it polls them for SOFTIB_SPIN_US after the last datagram and
 * sleeps on them; when an application thread holds them, it sleeps on its
 * timers until that thread's lease ends (or on the links too, in watch
 * mode).
 */
static void *progress_main(void *arg)
{
	struct sib_hca *hca = arg;
	struct sib_progress *pg = &hca->progress;
	struct watch w = { 0 };
	uint64_t last_rx = 0;

	short_slice();
	for (;;) {
		uint64_t now = sib_link_now_ns(), until;
		enum sib_links_owner owner = links_owner(pg, now, &until), passed = owner;
		unsigned placing;
		int packets, n = thread_pass(hca, passed, &packets, &placing);
		bool stop;

		now = sib_link_now_ns();
		owner = links_owner(pg, now, &until);
		if (n > 0) {
			if (packets) {
				last_rx = now;
				watch_mode(pg, &w, owner, packets, placing, now);
			}
			continue;
		}
		/* It sleeps only after an empty pass made as the owner it sleeps
		 * as: a pass made for a poller leaves what it queued to the
		 * poller, and if that lease ended meanwhile, nobody else would
		 * send it (a loaded machine stalled an ACK so, for good). */
		if (owner != passed)
			continue;
		if (owner == SIB_OWNER_THREAD) {
			watch_mode(pg, &w, owner, 0, 0, now);
			if (now - last_rx < pg->spin_ns) {
				cpu_relax();
				continue;
			}
			stop = thread_sleep(hca, false, false, -1);
		} else {
			bool watching = watch_mode(pg, &w, owner, 0, 0, now);

			stop = thread_sleep(hca, !watching, watching, (int64_t)(until - now));
		}
		if (stop)
			break;
	}
	return NULL;
}

/* SOFTIB_SPIN_US (man/softib-performance.7): 0..1000000, default SIB_PROGRESS_SPIN_NS. */
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
	pthread_mutex_init(&pg->read_lock, NULL);
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
	/* Consumed, so that a later start runs (the thread never reads it). */
	if (read(pg->stop_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		sib_dbg("stop fd read: %s", strerror(errno));
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
	pthread_mutex_destroy(&pg->read_lock);
}

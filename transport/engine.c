/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The engine object: the QPs it serves, its clock and timers, the loop a
 * test (or a caller without a progress thread) uses to drain the link, and
 * sib_qp_kick, the post-time transmit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/engine.h"
#include "base/log.h"
#include "transport/mcast.h"
#include "transport/numtab.h"
#include "transport/qp_impl.h"

struct sib_engine {
	struct sib_link *link;
	struct memreg_table *memreg;
	struct sib_numtab *qpns;
	struct sib_numtab *srqns;
	struct sib_port *port;
	sib_resolve_fn resolve;
	void *resolve_arg;
	sib_lookup_fn lookup;
	void *lookup_arg;
	sib_clock_fn clock;
	void *clock_arg;
	sib_arm_fn arm;
	void *arm_arg;
	sib_bad_pkey_fn bad_pkey;
	void *bad_pkey_arg;
	uint64_t armed; /* deadline the owner was last asked for; 0 none */
	/* Held for reading while rx or tick uses a QP, for writing while one
	 * leaves: a QP is never freed under a packet that found it. */
	pthread_rwlock_t qps_lock;
	struct sib_qp *qps;
	/* The QP the last packet went to (a stream goes to one QP): found
	 * again without the number table's lock.  Read under qps_lock held
	 * for reading, cleared under it held for writing when the QP leaves. */
	struct sib_qp *rx_last;
	uint32_t rc_busy;   /* RC QPs with requests in flight */
	struct sib_mcast *mcast; /* groups and member ports (mcast.h) */
	struct sib_engine_counters ctrs;
};

static uint64_t default_clock(void *arg)
{
	(void)arg;
	return sib_link_now_ns();
}

int sib_engine_create(const struct sib_engine_init *in, struct sib_engine **out)
{
	struct sib_engine *eng;

	if (!in->link || !in->memreg || !in->qpns || !in->port)
		return EINVAL;
	eng = calloc(1, sizeof(*eng));
	if (!eng)
		return ENOMEM;
	eng->mcast = sib_mcast_new();
	if (!eng->mcast) {
		free(eng);
		return ENOMEM;
	}
	eng->link = in->link;
	eng->memreg = in->memreg;
	eng->qpns = in->qpns;
	eng->srqns = in->srqns;
	eng->port = in->port;
	eng->resolve = in->resolve;
	eng->resolve_arg = in->resolve_arg;
	eng->lookup = in->lookup;
	eng->lookup_arg = in->lookup_arg;
	eng->clock = in->clock ? in->clock : default_clock;
	eng->clock_arg = in->clock_arg;
	eng->arm = in->arm;
	eng->arm_arg = in->arm_arg;
	eng->bad_pkey = in->bad_pkey;
	eng->bad_pkey_arg = in->bad_pkey_arg;
	/* Readers preferred (glibc's default, said here because sib_qp_unlock
	 * relies on it): a thread holding it for reading takes it again
	 * without waiting for a writer. */
	{
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_READER_NP);
		pthread_rwlock_init(&eng->qps_lock, &ra);
		pthread_rwlockattr_destroy(&ra);
	}
	*out = eng;
	return 0;
}

void sib_engine_destroy(struct sib_engine *eng)
{
	if (!eng)
		return;
	if (eng->qps)
		sib_warn("engine destroyed with QPs still attached");
	sib_mcast_free(eng->mcast);
	pthread_rwlock_destroy(&eng->qps_lock);
	free(eng);
}

int sib_engine_lookup(struct sib_engine *eng, uint16_t lid, bool refresh, struct sib_endpoint *out)
{
	return eng->lookup ? eng->lookup(eng->lookup_arg, lid, refresh, out) : -ENOENT;
}

void sib_engine_report_bad_pkey(struct sib_engine *eng, const struct ib_packet *pkt)
{
	if (eng->bad_pkey)
		eng->bad_pkey(eng->bad_pkey_arg, pkt);
}

struct sib_mcast *sib_engine_mcast(struct sib_engine *eng)
{
	return eng->mcast;
}

struct sib_qp *sib_engine_qps(struct sib_engine *eng)
{
	return eng->qps;
}

struct sib_link *sib_engine_link(struct sib_engine *eng)
{
	return eng->link;
}

uint64_t sib_engine_now(struct sib_engine *eng)
{
	return eng->clock(eng->clock_arg);
}

struct memreg_table *sib_engine_memreg(struct sib_engine *eng)
{
	return eng->memreg;
}

struct sib_port *sib_engine_port(struct sib_engine *eng)
{
	return eng->port;
}

struct sib_numtab *sib_engine_qpns(struct sib_engine *eng)
{
	return eng->qpns;
}

struct sib_numtab *sib_engine_srqns(struct sib_engine *eng)
{
	return eng->srqns;
}

uint32_t sib_engine_rc_busy(struct sib_engine *eng)
{
	return __atomic_load_n(&eng->rc_busy, __ATOMIC_RELAXED);
}

void sib_engine_rc_busy_add(struct sib_engine *eng, int d)
{
	__atomic_fetch_add(&eng->rc_busy, (uint32_t)d, __ATOMIC_RELAXED);
}

void sib_engine_flush(struct sib_engine *eng)
{
	sib_link_flush(eng->link);
}

void sib_engine_quiesce(struct sib_engine *eng)
{
	pthread_rwlock_wrlock(&eng->qps_lock);
	pthread_rwlock_unlock(&eng->qps_lock);
}

void sib_engine_rx_lock(struct sib_engine *eng)
{
	pthread_rwlock_rdlock(&eng->qps_lock);
}

struct sib_qp *sib_engine_rx_find(struct sib_engine *eng, uint32_t qpn)
{
	struct sib_qp *qp = __atomic_load_n(&eng->rx_last, __ATOMIC_RELAXED);

	if (qp && qp->qp_num == qpn)
		return qp;
	qp = sib_numtab_lookup(eng->qpns, qpn);
	if (qp && qp->eng == eng)
		__atomic_store_n(&eng->rx_last, qp, __ATOMIC_RELAXED);
	return qp;
}

void sib_engine_rx_unlock(struct sib_engine *eng)
{
	pthread_rwlock_unlock(&eng->qps_lock);
}

struct sib_engine_counters *sib_engine_ctrs(struct sib_engine *eng)
{
	return &eng->ctrs;
}

void sib_engine_count(struct sib_engine *eng, uint64_t *counter)
{
	(void)eng;
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

void sib_engine_counters_get(struct sib_engine *eng, struct sib_engine_counters *out)
{
	const uint64_t *src = (const uint64_t *)&eng->ctrs;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void sib_engine_qp_attach(struct sib_engine *eng, struct sib_qp *qp)
{
	pthread_rwlock_wrlock(&eng->qps_lock);
	qp->eng_prev = NULL;
	qp->eng_next = eng->qps;
	if (eng->qps)
		eng->qps->eng_prev = qp;
	eng->qps = qp;
	pthread_rwlock_unlock(&eng->qps_lock);
}

void sib_engine_qp_detach(struct sib_engine *eng, struct sib_qp *qp)
{
	pthread_rwlock_wrlock(&eng->qps_lock);
	if (qp->eng_prev)
		qp->eng_prev->eng_next = qp->eng_next;
	else
		eng->qps = qp->eng_next;
	if (qp->eng_next)
		qp->eng_next->eng_prev = qp->eng_prev;
	qp->eng_next = qp->eng_prev = NULL;
	if (__atomic_load_n(&eng->rx_last, __ATOMIC_RELAXED) == qp)
		__atomic_store_n(&eng->rx_last, NULL, __ATOMIC_RELAXED);
	if (qp->req.busy) { /* leaves with requests in flight */
		qp->req.busy = false;
		sib_engine_rc_busy_add(eng, -1);
	}
	/* Out of its multicast groups, so a stale number is never delivered to. */
	if (qp->type == SIB_QPT_UD)
		sib_mcast_detach_all(eng->mcast, qp->qp_num);
	/* Unreachable for rx from here on (qp.c frees the number after us). */
	sib_numtab_free(qp->qpns, qp->qp_num);
	pthread_rwlock_unlock(&eng->qps_lock);
}

int sib_engine_resolve(struct sib_engine *eng, const struct sib_av *av, struct sib_endpoint *out)
{
	/* A multicast goes to the MLID's member ports, found at send time
	 * (mcast.h): nothing to ask the subnet. */
	if (sib_lid_is_multicast(av->DLID)) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (!eng->resolve)
		return -ENOSYS;
	return eng->resolve(eng->resolve_arg, av->DLID, av->is_global ? av->DGID : NULL, out);
}

int sib_engine_resolve_nowait(struct sib_engine *eng, const struct sib_av *av,
			      struct sib_endpoint *out)
{
	if (sib_lid_is_multicast(av->DLID)) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	return sib_engine_lookup(eng, av->DLID, false, out);
}

/*
 * A connected QP with work to send and no destination yet (the SA had not
 * answered by its modify_qp): what the SA client knows now, never waiting
 * (engine.h).  While the SA has not answered, the send queue waits and
 * looks again in a moment: the requests have not left, so no retry is
 * spent.  A LID no port has, they go nowhere, and the retries end it
 * (RETRY_EXC_ERR), as on a fabric.  Under qp->lock.
 */
static bool req_dest_known(struct sib_qp *qp)
{
	struct sib_endpoint dest;
	int err;

	if (qp->type == SIB_QPT_UD || qp->dest_valid || !qp->sq.count)
		return true;
	err = sib_engine_resolve_nowait(qp->eng, &qp->attr.ah_attr, &dest);
	if (!err) {
		qp->dest = dest;
		__atomic_store_n(&qp->dest_valid, true, __ATOMIC_RELEASE);
	}
	if (err != -EAGAIN)
		return true;
	qp->req.path_deadline = sib_engine_now(qp->eng) + SIB_PATH_POLL_NS;
	sib_engine_want_tick(qp->eng, qp->req.path_deadline);
	return false;
}

/* Send what the send queue allows: one function per transport. */
static void req_run(struct sib_qp *qp)
{
	enum sib_qp_state s = qp->attr.qp_state;

	if (s != SIB_QPS_RTS && s != SIB_QPS_SQD)
		return;
	qp->req.path_deadline = 0;
	if (!req_dest_known(qp))
		return;
	switch (qp->type) {
	case SIB_QPT_RC:
	case SIB_QPT_XRC_SEND:
		sib_rc_req_run(qp);
		break;
	case SIB_QPT_UC:
		sib_uc_req_run(qp);
		break;
	case SIB_QPT_UD:
		sib_ud_req_run(qp);
		break;
	default:
		break;
	}
	sib_qp_sqd_check(qp);
}

/*
 * A connected QP whose destination was unknown when it moved to RTR (the
 * SA had not answered yet) looks again before it sends: a sibling QP that
 * reaches the LID, else the SA client, never waiting (req_dest_known
 * holds the send queue until the answer).  Outside the QP lock, because
 * dest_of_sibling takes the other QPs' locks.
 */
/*
 * Another connected QP of this engine that already reaches the same LID
 * (from the SA or from the peer's own packets): an XRC initiator whose
 * target QP on the same node has heard from the peer, for example, while
 * the SA's "no such port" from before the peer came up is still cached.
 */
static bool dest_of_sibling(struct sib_engine *eng, struct sib_qp *self, uint16_t dlid,
			    struct sib_endpoint *out)
{
	bool found = false;

	if (!dlid)
		return false;
	pthread_rwlock_rdlock(&eng->qps_lock);
	for (struct sib_qp *qp = eng->qps; qp && !found; qp = qp->eng_next) {
		if (qp == self || qp->type == SIB_QPT_UD)
			continue;
		sib_qp_lock(qp);
		if (qp->dest_valid && qp->attr.ah_attr.DLID == dlid) {
			*out = qp->dest;
			found = true;
		}
		sib_qp_unlock(qp);
	}
	pthread_rwlock_unlock(&eng->qps_lock);
	return found;
}

static void resolve_late(struct sib_qp *qp)
{
	struct sib_endpoint dest;
	struct sib_av av;
	bool need;

	sib_qp_lock(qp);
	need = !qp->dest_valid && qp->type != SIB_QPT_UD &&
	       (qp->attr.qp_state == SIB_QPS_RTR || qp->attr.qp_state == SIB_QPS_RTS);
	av = qp->attr.ah_attr;
	sib_qp_unlock(qp);
	if (!need || (!dest_of_sibling(qp->eng, qp, av.DLID, &dest) &&
		      sib_engine_resolve_nowait(qp->eng, &av, &dest)))
		return;
	sib_qp_lock(qp);
	if (!qp->dest_valid) {
		qp->dest = dest;
		qp->dest_valid = true;
	}
	sib_qp_unlock(qp);
}

void sib_qp_kick(struct sib_qp *qp)
{
	if (!qp->eng)
		return;
	if (!__atomic_load_n(&qp->dest_valid, __ATOMIC_RELAXED))
		resolve_late(qp);
	sib_qp_lock(qp);
	req_run(qp);
	sib_qp_unlock(qp);
}

struct poll_ctx {
	struct sib_engine *eng;
};

static void poll_rx(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct poll_ctx *pc = arg;
	struct ib_packet pkt;
	enum ib_pkt_err err = ib_packet_decode(buf, len, &pkt);

	if (err != IB_PKT_OK) {
		sib_link_count_pkt_err(pc->eng->link, err);
		return;
	}
	if (pkt.bth.DestQP <= 1)
		return; /* management: the progress thread's, not ours */
	sib_engine_rx(pc->eng, &pkt, from);
}

int sib_engine_poll(struct sib_engine *eng, unsigned max)
{
	struct poll_ctx pc = { .eng = eng };
	int n = sib_link_poll(eng->link, max, poll_rx, &pc);

	sib_engine_flush(eng);
	return n;
}

static uint64_t qp_deadline(struct sib_qp *qp, uint64_t now)
{
	uint64_t d = 0;

	if (qp->req.rto_deadline)
		d = qp->req.rto_deadline;
	if (qp->req.rnr_wait && (!d || qp->req.rnr_deadline < d))
		d = qp->req.rnr_deadline;
	if (qp->req.path_deadline && (!d || qp->req.path_deadline < d))
		d = qp->req.path_deadline;
	/* Output waiting for room: due at once. */
	for (uint32_t i = 0; i < qp->resp.res_len; i++)
		if (qp->resp.res[i].sending)
			return now;
	if (qp->req.tx_blocked)
		return now;
	return d;
}

void sib_engine_want_tick(struct sib_engine *eng, uint64_t when)
{
	uint64_t cur;

	if (!eng->arm || !when)
		return;
	cur = __atomic_load_n(&eng->armed, __ATOMIC_ACQUIRE);
	if (cur && cur <= when)
		return;
	__atomic_store_n(&eng->armed, when, __ATOMIC_RELEASE);
	eng->arm(eng->arm_arg, when);
}

void sib_engine_tick(struct sib_engine *eng)
{
	uint64_t now = sib_engine_now(eng);

	__atomic_store_n(&eng->armed, 0, __ATOMIC_RELEASE);

	pthread_rwlock_rdlock(&eng->qps_lock);
	for (struct sib_qp *qp = eng->qps; qp; qp = qp->eng_next) {
		uint64_t wait = sib_rxq_deadline(&qp->rxq);

		sib_qp_lock(qp);
		if (qp->type == SIB_QPT_RC || qp->type == SIB_QPT_XRC_SEND ||
		    qp->type == SIB_QPT_XRC_RECV) {
			sib_rc_req_timer(qp, now);
			sib_rc_resp_run(qp);
		}
		req_run(qp);
		if (wait && wait <= now) /* a datagram's wait for its source is over */
			sib_rxq_wake(&qp->rxq);
		sib_qp_unlock(qp);
	}
	pthread_rwlock_unlock(&eng->qps_lock);
	sib_engine_flush(eng);
	if (eng->arm)
		sib_engine_want_tick(eng, sib_engine_next_deadline(eng));
}

uint64_t sib_engine_next_deadline(struct sib_engine *eng)
{
	uint64_t now = sib_engine_now(eng), best = 0;

	pthread_rwlock_rdlock(&eng->qps_lock);
	for (struct sib_qp *qp = eng->qps; qp; qp = qp->eng_next) {
		uint64_t w = sib_rxq_deadline(&qp->rxq), d;

		sib_qp_lock(qp);
		d = qp_deadline(qp, now);
		sib_qp_unlock(qp);
		if (w && (!d || w < d))
			d = w;
		if (d && (!best || d < best))
			best = d;
	}
	pthread_rwlock_unlock(&eng->qps_lock);
	return best;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SOFTIB_FAULTS: a link that drops, duplicates, reorders, corrupts and
 * delays the packets sent through it, decided by its own PRNG so that a
 * seed reproduces the same faults for the same sequence of packets.
 *
 * Faults apply on send.  Each process then damages what it puts on the
 * wire, so a pair of processes run with SOFTIB_FAULTS gets faults in both
 * directions, and the receive path keeps delivering straight from the
 * kernel's buffers (holding a received packet back would pin a receive
 * buffer).  Delayed and reordered packets wait in a small hold queue and
 * go out from a later commit, flush or poll: no threads.
 *
 * Per packet, in this order, with the rates of struct sib_fault_cfg:
 *   drop     the packet never leaves (nor does the drop_nth'th packet to a
 *            QP other than 0 and 1: one chosen loss a test can rely on,
 *            since the MADs before it vary with the subnet manager); the
 *            link below is told (sib_link_dropped), so a capture shows it;
 *   corrupt  one bit, anywhere in the datagram, is flipped;
 *   delay    held for delay_ns, then sent;
 *   reorder  held until a later packet has gone out (or reorder_ns passed),
 *            then sent right after it;
 *   dup      sent twice.
 * Exactly six random numbers are drawn per packet, whatever is decided, so
 * the faults of packet N depend only on the seed, the stream and N.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "link/link.h"
#include "base/log.h"

#define HOLD_MAX 64 /* held packets; when full, a packet to hold goes out unharmed */
#define DEFAULT_HOLD_NS 1000000u /* 1 ms */
#define DEFAULT_SEED 1

struct held {
	uint64_t due;
	bool reorder;
	uint32_t len;
	struct sib_endpoint dst;
	uint8_t data[SIB_LINK_MAX_DGRAM];
};

struct faults_link {
	struct sib_link link;
	struct sib_fault_cfg cfg;
	pthread_mutex_t lock; /* the PRNG and the hold queue, so faults follow commit order */
	uint64_t s[4];	      /* xoshiro256** */
	struct held *hold;    /* FIFO, oldest first */
	unsigned nheld;
	uint64_t data_sent;   /* packets to QPs other than 0 and 1, for drop_nth */
};

static struct faults_link *to_faults(struct sib_link *l)
{
	return (struct faults_link *)l;
}

/* ---------------------------------------------------------------- PRNG */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t next_u64(struct faults_link *f)
{
	uint64_t *s = f->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static double next_unit(struct faults_link *f)
{
	return (double)(next_u64(f) >> 11) * 0x1.0p-53; /* [0, 1) */
}

/* ---------------------------------------------------------------- parsing */

static const char *const key_names[SIB_FAULT_COUNT] = {
	[SIB_FAULT_DROP] = "drop",	 [SIB_FAULT_DUP] = "dup",     [SIB_FAULT_REORDER] = "reorder",
	[SIB_FAULT_CORRUPT] = "corrupt", [SIB_FAULT_DELAY] = "delay",
};

static int parse_time(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].scale;
			if (v > 60e9)
				return -EINVAL;
			*ns = (uint64_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_rate(const char *s, double *rate, const char **rest)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0 && v <= 1))
		return -EINVAL;
	*rate = v;
	*rest = end;
	return 0;
}

static int bad(const char *spec, const char *item, const char *why)
{
	sib_err("SOFTIB_FAULTS=\"%s\": %s in \"%s\" (expected e.g. "
		"drop=0.02,dup=0.01,reorder=0.02:1ms,corrupt=0.01,delay=0.01:200us,seed=42)",
		spec, why, item);
	return -EINVAL;
}

/* seed and drop_nth: an unsigned integer, decimal or 0x hex; drop_nth >= 1. */
static int parse_count(const char *val, uint64_t *out)
{
	char *end;

	if (*val == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(val, &end, 0);
	return errno || end == val || *end ? -EINVAL : 0;
}

int sib_fault_cfg_parse(const char *spec, struct sib_fault_cfg *cfg)
{
	enum { SEEN_SEED = SIB_FAULT_COUNT, SEEN_NTH, SEEN_COUNT };
	bool seen[SEEN_COUNT] = { false };
	char copy[512], *save = NULL, *item;

	memset(cfg, 0, sizeof(*cfg));
	cfg->delay_ns = DEFAULT_HOLD_NS;
	cfg->reorder_ns = DEFAULT_HOLD_NS;
	cfg->seed = DEFAULT_SEED;
	if (!spec || strlen(spec) >= sizeof(copy))
		return bad(spec ? spec : "", "", "too long or missing");
	strcpy(copy, spec);
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		const char *val, *rest;
		unsigned k;

		if (!eq)
			return bad(spec, item, "no '='");
		*eq = 0;
		val = eq + 1;
		if (!strcmp(item, "seed")) {
			if (seen[SEEN_SEED])
				return bad(spec, item, "given twice");
			seen[SEEN_SEED] = true;
			if (parse_count(val, &cfg->seed))
				return bad(spec, val, "seed is not an unsigned integer");
			continue;
		}
		if (!strcmp(item, "drop_nth")) {
			if (seen[SEEN_NTH])
				return bad(spec, item, "given twice");
			seen[SEEN_NTH] = true;
			if (parse_count(val, &cfg->drop_nth) || !cfg->drop_nth)
				return bad(spec, val, "drop_nth is not a packet number from 1");
			continue;
		}
		for (k = 0; k < SIB_FAULT_COUNT; k++)
			if (!strcmp(item, key_names[k]))
				break;
		if (k == SIB_FAULT_COUNT)
			return bad(spec, item,
				   "unknown key (known: drop, drop_nth, dup, reorder, corrupt, "
				   "delay, seed)");
		if (seen[k])
			return bad(spec, item, "given twice");
		seen[k] = true;
		if (parse_rate(val, &cfg->rate[k], &rest))
			return bad(spec, val, "rate is not a number from 0 to 1");
		if (*rest == ':' && (k == SIB_FAULT_DELAY || k == SIB_FAULT_REORDER)) {
			if (parse_time(rest + 1, k == SIB_FAULT_DELAY ? &cfg->delay_ns
								      : &cfg->reorder_ns))
				return bad(spec, rest + 1,
					   "time is not a number with ns, us, ms or s (at most 60s)");
		} else if (*rest) {
			return bad(spec, val, "trailing characters");
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- sending */

static void send_copy(struct faults_link *f, const uint8_t *data, size_t len,
		      const struct sib_endpoint *dst)
{
	sib_link_send(f->link.inner, data, len, dst);
}

/* Sends held packets that are due (or, after_successor, every reordered
 * one: a later packet has just gone out).  Under f->lock. */
static unsigned release(struct faults_link *f, uint64_t now, bool after_successor)
{
	unsigned kept = 0, sent = 0;

	for (unsigned i = 0; i < f->nheld; i++) {
		struct held *h = &f->hold[i];

		if (h->due <= now || (after_successor && h->reorder)) {
			send_copy(f, h->data, h->len, &h->dst);
			sent++;
		} else {
			if (kept != i)
				memcpy(&f->hold[kept], h, sizeof(*h));
			kept++;
		}
	}
	f->nheld = kept;
	return sent;
}

static bool hold(struct faults_link *f, const uint8_t *buf, size_t len,
		 const struct sib_endpoint *dst, uint64_t wait_ns, bool reorder)
{
	struct held *h;

	if (f->nheld == HOLD_MAX || len > SIB_LINK_MAX_DGRAM)
		return false;
	h = &f->hold[f->nheld++];
	h->due = sib_link_now_ns() + wait_ns;
	h->reorder = reorder;
	h->len = (uint32_t)len;
	h->dst = *dst;
	memcpy(h->data, buf, len);
	return true;
}

/* A packet to a QP other than QP0 and QP1: what drop_nth counts. */
static bool to_data_qp(const uint8_t *buf, size_t len)
{
	struct ib_lrh lrh;
	struct ib_bth bth;
	size_t off = IB_LRH_BYTES;

	if (len < IB_LRH_BYTES)
		return false;
	ib_lrh_decode(&lrh, buf);
	if (lrh.LNH == IB_LNH_IBA_GLOBAL)
		off += IB_GRH_BYTES;
	else if (lrh.LNH != IB_LNH_IBA_LOCAL)
		return false; /* raw: a fabric's cable packet */
	if (len < off + IB_BTH_BYTES)
		return false;
	ib_bth_decode(&bth, buf + off);
	return bth.DestQP > 1;
}

static void faults_tx_commit(struct sib_link *l, uint8_t *buf, size_t len,
			     const struct sib_endpoint *dst)
{
	struct faults_link *f = to_faults(l);
	struct sib_link *in = l->inner;
	double r[SIB_FAULT_COUNT];
	bool nth = false;
	uint64_t bit;

	pthread_mutex_lock(&f->lock);
	for (unsigned k = 0; k < SIB_FAULT_COUNT; k++)
		r[k] = next_unit(f);
	bit = next_u64(f);
	if (f->cfg.drop_nth && f->data_sent < f->cfg.drop_nth && to_data_qp(buf, len))
		nth = ++f->data_sent == f->cfg.drop_nth;

	if (nth || r[SIB_FAULT_DROP] < f->cfg.rate[SIB_FAULT_DROP]) {
		sib_link_count(&l->counters.fault[SIB_FAULT_DROP], 1);
		sib_link_dropped(in, buf, len);
		sib_link_tx_abort(in, buf);
		goto out;
	}
	if (len && r[SIB_FAULT_CORRUPT] < f->cfg.rate[SIB_FAULT_CORRUPT]) {
		bit %= (uint64_t)len * 8;
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		sib_link_count(&l->counters.fault[SIB_FAULT_CORRUPT], 1);
	}
	if (r[SIB_FAULT_DELAY] < f->cfg.rate[SIB_FAULT_DELAY] &&
	    hold(f, buf, len, dst, f->cfg.delay_ns, false)) {
		sib_link_count(&l->counters.fault[SIB_FAULT_DELAY], 1);
		sib_link_tx_abort(in, buf);
		goto out;
	}
	if (r[SIB_FAULT_REORDER] < f->cfg.rate[SIB_FAULT_REORDER] &&
	    hold(f, buf, len, dst, f->cfg.reorder_ns, true)) {
		sib_link_count(&l->counters.fault[SIB_FAULT_REORDER], 1);
		sib_link_tx_abort(in, buf);
		goto out;
	}
	if (r[SIB_FAULT_DUP] < f->cfg.rate[SIB_FAULT_DUP]) {
		sib_link_count(&l->counters.fault[SIB_FAULT_DUP], 1);
		send_copy(f, buf, len, dst);
	}
	sib_link_tx_commit(in, buf, len, dst);
	if (f->nheld)
		release(f, sib_link_now_ns(), true);
out:
	pthread_mutex_unlock(&f->lock);
}

static uint8_t *faults_tx_alloc(struct sib_link *l, size_t *cap)
{
	return sib_link_tx_alloc(l->inner, cap);
}

static void faults_tx_abort(struct sib_link *l, uint8_t *buf)
{
	sib_link_tx_abort(l->inner, buf);
}

static void release_due(struct faults_link *f)
{
	if (!__atomic_load_n(&f->nheld, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&f->lock);
	if (f->nheld)
		release(f, sib_link_now_ns(), false);
	pthread_mutex_unlock(&f->lock);
}

static int faults_flush(struct sib_link *l)
{
	release_due(to_faults(l));
	return sib_link_flush(l->inner);
}

static int faults_flush_wait(struct sib_link *l)
{
	release_due(to_faults(l));
	return sib_link_flush_wait(l->inner);
}

static int faults_poll(struct sib_link *l, unsigned max, sib_link_rx_fn rx, void *arg)
{
	struct faults_link *f = to_faults(l);
	int n = sib_link_poll(l->inner, max, rx, arg);

	if (__atomic_load_n(&f->nheld, __ATOMIC_RELAXED)) {
		release_due(f);
		sib_link_flush(l->inner);
	}
	return n;
}

static int faults_wait_fd(struct sib_link *l)
{
	return sib_link_wait_fd(l->inner);
}

static int faults_wait_arm(struct sib_link *l)
{
	return sib_link_wait_arm(l->inner);
}

static uint64_t faults_next_deadline(struct sib_link *l)
{
	struct faults_link *f = to_faults(l);
	uint64_t due = sib_link_next_deadline_ns(l->inner);

	pthread_mutex_lock(&f->lock);
	for (unsigned i = 0; i < f->nheld; i++)
		if (!due || f->hold[i].due < due)
			due = f->hold[i].due;
	pthread_mutex_unlock(&f->lock);
	return due;
}

static void faults_close(struct sib_link *l)
{
	struct faults_link *f = to_faults(l);

	sib_link_close(l->inner);
	pthread_mutex_destroy(&f->lock);
	free(f->hold);
	free(f);
}

static const struct sib_link_ops faults_ops = {
	.kind = "faults",
	.tx_alloc = faults_tx_alloc,
	.tx_commit = faults_tx_commit,
	.tx_abort = faults_tx_abort,
	.flush = faults_flush,
	.flush_wait = faults_flush_wait,
	.poll = faults_poll,
	.wait_fd = faults_wait_fd,
	.wait_arm = faults_wait_arm,
	.next_deadline_ns = faults_next_deadline,
	.close = faults_close,
};

int sib_link_faults_wrap(struct sib_link *inner, const struct sib_fault_cfg *cfg,
			 struct sib_link **out)
{
	struct faults_link *f = calloc(1, sizeof(*f));
	uint64_t x;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->hold = malloc(HOLD_MAX * sizeof(*f->hold));
	if (!f->hold) {
		free(f);
		return -ENOMEM;
	}
	f->cfg = *cfg;
	f->link.ops = &faults_ops;
	f->link.inner = inner;
	f->link.local = inner->local;
	f->link.mtu = inner->mtu;
	pthread_mutex_init(&f->lock, NULL);
	x = cfg->seed ^ splitmix64(&(uint64_t){ cfg->stream });
	for (unsigned i = 0; i < 4; i++)
		f->s[i] = splitmix64(&x);
	sib_info("link: SOFTIB_FAULTS drop=%g dup=%g reorder=%g corrupt=%g delay=%g seed=%llu "
		 "stream=%llu drop_nth=%llu",
		 cfg->rate[SIB_FAULT_DROP], cfg->rate[SIB_FAULT_DUP], cfg->rate[SIB_FAULT_REORDER],
		 cfg->rate[SIB_FAULT_CORRUPT], cfg->rate[SIB_FAULT_DELAY],
		 (unsigned long long)cfg->seed, (unsigned long long)cfg->stream,
		 (unsigned long long)cfg->drop_nth);
	*out = &f->link;
	return 0;
}

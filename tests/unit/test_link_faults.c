/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* SOFTIB_FAULTS over in-memory links: no sockets, and no time asserted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "link/link.h"
#include "base/log.h"
#include "wire/capture.h"

#define LEN 200
#define MAX_GOT 40000

struct got {
	bool in_order; /* compare packet i with what seq i was: a flip in the seq field shows */
	unsigned n;
	uint32_t seq[MAX_GOT];
	unsigned flipped_bits[MAX_GOT]; /* bits differing from what was sent */
	unsigned first_flip[MAX_GOT];
};

static void fill(uint8_t *buf, uint32_t seq)
{
	uint32_t x = seq * 2654435761u + 1;

	for (unsigned i = 0; i < LEN; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
	memcpy(buf, &seq, 4);
}

static void collect(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;
	uint8_t want[LEN];
	uint32_t seq;
	unsigned bits = 0, first = ~0u;

	(void)from;
	assert_int_equal(len, LEN);
	memcpy(&seq, pkt, 4);
	if (g->in_order)
		seq = g->n;
	fill(want, seq);
	for (unsigned i = 0; i < LEN; i++) {
		unsigned d = (unsigned)__builtin_popcount(pkt[i] ^ want[i]);

		if (d && first == ~0u)
			first = i * 8 + (unsigned)__builtin_ctz(pkt[i] ^ want[i]);
		bits += d;
	}
	if (g->n < MAX_GOT) {
		g->seq[g->n] = seq;
		g->flipped_bits[g->n] = bits;
		g->first_flip[g->n] = first;
	}
	g->n++;
}

struct rig {
	struct sib_mem_hub *hub;
	struct sib_link *f, *b; /* faults over a mem link -> plain mem link */
	struct got *got;
};

static void rig_open(struct rig *r, const char *spec, uint64_t stream)
{
	struct sib_fault_cfg cfg;
	struct sib_link *a;

	assert_int_equal(sib_fault_cfg_parse(spec, &cfg), 0);
	cfg.stream = stream;
	r->hub = sib_mem_hub_new();
	assert_non_null(r->hub);
	assert_int_equal(sib_link_mem_open(r->hub, 4096, &a), 0);
	assert_int_equal(sib_link_mem_open(r->hub, 4096, &r->b), 0);
	assert_int_equal(sib_link_faults_wrap(a, &cfg, &r->f), 0);
	r->got = calloc(1, sizeof(*r->got));
	assert_non_null(r->got);
}

static void rig_close(struct rig *r)
{
	sib_link_close(r->f);
	sib_link_close(r->b);
	sib_mem_hub_free(r->hub);
	free(r->got);
}

/* Sends n packets, draining the receiver as it goes (its queue is finite). */
static void rig_send(struct rig *r, uint32_t first, uint32_t n)
{
	for (uint32_t seq = first; seq < first + n; seq++) {
		size_t cap;
		uint8_t *buf = sib_link_tx_alloc(r->f, &cap);

		assert_non_null(buf);
		fill(buf, seq);
		sib_link_tx_commit(r->f, buf, LEN, &r->b->local);
		if (seq % 64 == 63)
			while (sib_link_poll(r->b, 64, collect, r->got) > 0)
				;
	}
	sib_link_flush(r->f);
	while (sib_link_poll(r->b, 64, collect, r->got) > 0)
		;
}

static void same_seed_and_stream_give_the_same_faults(void **state)
{
	/* Holds long enough that only packet order releases anything. */
	const char *spec = "drop=0.1,dup=0.1,reorder=0.1:60s,corrupt=0.1,delay=0.05:60s,seed=42";
	struct rig r1, r2, r3;
	struct sib_link_counters c1, c2, c3;

	(void)state;
	rig_open(&r1, spec, 0);
	rig_open(&r2, spec, 0);
	rig_open(&r3, spec, 1); /* another stream of the same seed */
	rig_send(&r1, 0, 3000);
	rig_send(&r2, 0, 3000);
	rig_send(&r3, 0, 3000);
	sib_link_counters_get(r1.f, &c1);
	sib_link_counters_get(r2.f, &c2);
	sib_link_counters_get(r3.f, &c3);
	assert_memory_equal(c1.fault, c2.fault, sizeof(c1.fault));
	assert_int_equal(r1.got->n, r2.got->n);
	assert_memory_equal(r1.got->seq, r2.got->seq, r1.got->n * sizeof(uint32_t));
	assert_memory_equal(r1.got->first_flip, r2.got->first_flip, r1.got->n * sizeof(unsigned));
	assert_true(memcmp(c1.fault, c3.fault, sizeof(c1.fault)) ||
		    memcmp(r1.got->seq, r3.got->seq, r1.got->n * sizeof(uint32_t)));
	for (unsigned k = 0; k < SIB_FAULT_COUNT; k++)
		assert_true(c1.fault[k] > 0);
	rig_close(&r1);
	rig_close(&r2);
	rig_close(&r3);
}

/* cmocka 1.1's assert_in_range is deprecated in 2.0 (-Werror), whose
 * assert_int_in_range 1.1 lacks: one check that reads the same in both. */
static void count_in_range(const char *what, uint64_t v, uint64_t lo, uint64_t hi)
{
	if (v < lo || v > hi)
		fail_msg("%s: %llu, outside [%llu, %llu]", what, (unsigned long long)v,
			 (unsigned long long)lo, (unsigned long long)hi);
}

static void rates_hold_over_many_packets(void **state)
{
	struct rig r;
	struct sib_link_counters c;
	const unsigned n = 20000;
	unsigned corrupted = 0;

	(void)state;
	rig_open(&r, "drop=0.1,dup=0.05,corrupt=0.2,seed=7", 0);
	rig_send(&r, 0, n);
	sib_link_counters_get(r.f, &c);
	/* Expected 2000, 1000, 4000 (x0.9 after drops): bounds are many
	 * standard deviations wide. */
	count_in_range("drops", c.fault[SIB_FAULT_DROP], 1700, 2300);
	count_in_range("duplicates", c.fault[SIB_FAULT_DUP], 700, 1100);
	count_in_range("corruptions", c.fault[SIB_FAULT_CORRUPT], 3200, 4000);
	assert_int_equal(c.fault[SIB_FAULT_REORDER], 0);
	assert_int_equal(c.fault[SIB_FAULT_DELAY], 0);
	assert_int_equal(r.got->n, n - c.fault[SIB_FAULT_DROP] + c.fault[SIB_FAULT_DUP]);
	assert_int_equal(c.tx_packets, r.got->n);
	for (unsigned i = 0; i < r.got->n; i++)
		corrupted += r.got->flipped_bits[i] != 0;
	/* A duplicate of a corrupted packet carries the same flip. */
	assert_true(corrupted >= c.fault[SIB_FAULT_CORRUPT]);
	rig_close(&r);
}

static void corrupt_flips_exactly_one_bit_anywhere(void **state)
{
	struct rig r;
	unsigned low = 0, high = 0;

	(void)state;
	rig_open(&r, "corrupt=1,seed=9", 0);
	r.got->in_order = true;
	rig_send(&r, 0, 2000);
	assert_int_equal(r.got->n, 2000);
	for (unsigned i = 0; i < r.got->n; i++) {
		assert_int_equal(r.got->flipped_bits[i], 1);
		if (r.got->first_flip[i] < LEN * 8 / 2)
			low++;
		else
			high++;
	}
	/* Positions spread over the whole datagram. */
	assert_true(low > 500 && high > 500);
	rig_close(&r);
}

static void drop_1_drops_everything(void **state)
{
	struct rig r;
	struct sib_link_counters c;

	(void)state;
	rig_open(&r, "drop=1", 0);
	rig_send(&r, 0, 500);
	sib_link_counters_get(r.f, &c);
	assert_int_equal(r.got->n, 0);
	assert_int_equal(c.fault[SIB_FAULT_DROP], 500);
	assert_int_equal(c.tx_packets, 0);
	rig_close(&r);
}

static void dup_1_delivers_everything_twice(void **state)
{
	struct rig r;

	(void)state;
	rig_open(&r, "dup=1", 0);
	rig_send(&r, 0, 100);
	assert_int_equal(r.got->n, 200);
	for (unsigned i = 0; i < 200; i++)
		assert_int_equal(r.got->seq[i], i / 2);
	rig_close(&r);
}

static void reorder_and_delay_eventually_deliver_everything(void **state)
{
	const unsigned n = 2000;
	struct rig r;
	struct sib_link_counters c;
	unsigned char *seen = calloc(n, 1);
	unsigned out_of_order = 0;

	(void)state;
	assert_non_null(seen);
	rig_open(&r, "reorder=0.2:100us,delay=0.02:200us,seed=5", 0);
	rig_send(&r, 0, n);
	/* Held packets go out from flush and poll once due: keep calling. */
	for (unsigned spins = 0; r.got->n < n && spins < 100000; spins++) {
		if (sib_link_next_deadline_ns(r.f))
			usleep(50);
		sib_link_flush(r.f);
		while (sib_link_poll(r.b, 64, collect, r.got) > 0)
			;
	}
	assert_int_equal(r.got->n, n);
	assert_int_equal(sib_link_next_deadline_ns(r.f), 0);
	for (unsigned i = 0; i < n; i++) {
		assert_true(r.got->seq[i] < n);
		assert_false(seen[r.got->seq[i]]);
		seen[r.got->seq[i]] = 1;
		if (i && r.got->seq[i] < r.got->seq[i - 1])
			out_of_order++;
	}
	sib_link_counters_get(r.f, &c);
	assert_true(c.fault[SIB_FAULT_REORDER] > 0);
	assert_true(c.fault[SIB_FAULT_DELAY] > 0);
	assert_true(out_of_order > 0);
	free(seen);
	rig_close(&r);
}

static void held_packet_sets_a_deadline(void **state)
{
	struct rig r;

	(void)state;
	rig_open(&r, "delay=1:30s", 0);
	assert_int_equal(sib_link_next_deadline_ns(r.f), 0);
	rig_send(&r, 0, 1);
	assert_int_equal(r.got->n, 0);
	assert_true(sib_link_next_deadline_ns(r.f) > sib_link_now_ns());
	rig_close(&r); /* closing with a held packet leaks nothing (ASan checks) */
}

/* A bare LRH + BTH (no CRCs: only the faults layer reads it) to dest_qp,
 * with a GRH when global; byte 60 carries tag. */
static size_t ib_like(uint8_t *buf, uint32_t dest_qp, bool global, uint8_t tag)
{
	struct ib_lrh lrh = { .LNH = global ? IB_LNH_IBA_GLOBAL : IB_LNH_IBA_LOCAL,
			      .DLID = 2, .SLID = 3 };
	struct ib_bth bth = { .OpCode = 0x04, .DestQP = dest_qp, .PSN = tag };
	size_t off = IB_LRH_BYTES + (global ? IB_GRH_BYTES : 0);

	memset(buf, 0, 128);
	ib_lrh_encode(&lrh, buf);
	ib_bth_encode(&bth, buf + off);
	buf[100] = tag;
	return 128;
}

static void tag_of(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct got *g = arg;

	(void)from;
	assert_int_equal(len, 128);
	g->seq[g->n++] = pkt[100];
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 16);

	assert_non_null(fp);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 16, fp);
	fclose(fp);
	return buf;
}

/* drop_nth=3 drops the third packet to a QP other than 0 and 1, and only
 * it: MADs (QP0, QP1) and raw packets are not counted.  A capture below
 * records it as dropped (ERF port 2), and every other packet as sent. */
static void drop_nth_drops_one_data_packet_and_capture_shows_it(void **state)
{
	/* tag: 1 MAD, 2 data, 3 MAD on QP1, 4 data (GRH), 5 raw, 6 data: dropped, 7 data */
	static const struct {
		uint32_t qp;
		bool global, raw;
	} pkts[] = { { 0, false, false }, { 2, false, false }, { 1, false, false },
		     { 5, true, false },  { 9, false, true },   { 2, false, false },
		     { 2, false, false } };
	char path[] = "/tmp/softib-faults-test-XXXXXX";
	struct sib_mem_hub *hub = sib_mem_hub_new();
	struct sib_link *a, *b, *cap, *f;
	struct sib_fault_cfg cfg;
	struct sib_link_counters c;
	struct ib_pcap_reader rd;
	struct ib_pcap_record rec;
	struct got *g = calloc(1, sizeof(*g));
	uint8_t buf[128], *file;
	size_t len;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(g);
	assert_int_equal(sib_fault_cfg_parse("drop_nth=3", &cfg), 0);
	assert_int_equal(cfg.drop_nth, 3);
	assert_int_equal(sib_link_mem_open(hub, 4096, &a), 0);
	assert_int_equal(sib_link_mem_open(hub, 4096, &b), 0);
	assert_int_equal(sib_link_capture_wrap(a, path, &cap), 0);
	assert_int_equal(sib_link_faults_wrap(cap, &cfg, &f), 0);
	for (unsigned i = 0; i < sizeof(pkts) / sizeof(pkts[0]); i++) {
		len = ib_like(buf, pkts[i].qp, pkts[i].global, (uint8_t)(i + 1));
		if (pkts[i].raw)
			buf[1] &= (uint8_t)~3; /* LNH 0: raw */
		assert_int_equal(sib_link_send(f, buf, len, &b->local), 0);
	}
	sib_link_flush(f);
	while (sib_link_poll(b, 64, tag_of, g) > 0)
		;
	assert_int_equal(g->n, 6);
	for (unsigned i = 0, want = 1; i < g->n; i++, want++) {
		if (want == 6)
			want++;
		assert_int_equal(g->seq[i], want);
	}
	sib_link_counters_get(f, &c);
	assert_int_equal(c.fault[SIB_FAULT_DROP], 1);
	sib_link_close(f); /* closes the capture and a, and flushes the file */
	sib_link_close(b);
	sib_mem_hub_free(hub);

	file = slurp(path, &len);
	assert_int_equal(ib_pcap_reader_init(&rd, file, len), 0);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(ib_pcap_next(&rd, &rec), 1);
		assert_int_equal(rec.pkt[100], i + 1);
		assert_int_equal(rec.port, i == 5 ? IB_PCAP_PORT_DROPPED : IB_PCAP_PORT_SENT);
	}
	assert_int_equal(ib_pcap_next(&rd, &rec), 0);
	free(file);
	free(g);
	unlink(path);
}

static void spec_parses_rates_times_and_seed(void **state)
{
	struct sib_fault_cfg cfg;

	(void)state;
	assert_int_equal(sib_fault_cfg_parse("drop=0.02,dup=0.01,reorder=0.02,corrupt=0.01,"
					     "delay=0.01:200us,seed=42",
					     &cfg),
			 0);
	assert_true(cfg.rate[SIB_FAULT_DROP] == 0.02);
	assert_true(cfg.rate[SIB_FAULT_DUP] == 0.01);
	assert_true(cfg.rate[SIB_FAULT_REORDER] == 0.02);
	assert_true(cfg.rate[SIB_FAULT_CORRUPT] == 0.01);
	assert_true(cfg.rate[SIB_FAULT_DELAY] == 0.01);
	assert_int_equal(cfg.delay_ns, 200000);
	assert_int_equal(cfg.seed, 42);
	assert_int_equal(sib_fault_cfg_parse("reorder=0.5:2ms,seed=0x10", &cfg), 0);
	assert_int_equal(cfg.reorder_ns, 2000000);
	assert_int_equal(cfg.seed, 16);
}

static void bad_spec_is_rejected_with_a_line(void **state)
{
	static const char *const bad[] = {
		"drop=2",	    "drop=-0.1",	  "drop=",	    "drop",
		"fly=0.1",	    "drop=0.1,drop=0.2", "drop=0.1x",	    "delay=0.1:5parsecs",
		"delay=0.1:",	    "corrupt=0.1:1ms",	  "seed=abc",	    "seed=-1",
		"drop=nan",	    "delay=0.1:61s",	  "seed=1,seed=2",  "drop=0.1;dup=0.1",
		"drop_nth=0",	    "drop_nth=-1",	  "drop_nth=x",	    "drop_nth=2,drop_nth=3",
		"drop_nth=",	    "drop_nth=1.5",
	};
	struct sib_fault_cfg cfg;
	char line[512];

	(void)state;
	sib_log_capture(line, sizeof(line));
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		line[0] = 0;
		if (sib_fault_cfg_parse(bad[i], &cfg) != -EINVAL)
			fail_msg("accepted SOFTIB_FAULTS=\"%s\"", bad[i]);
		assert_non_null(strstr(line, "SOFTIB_FAULTS"));
	}
	assert_int_equal(sib_fault_cfg_parse("fly=0.1", &cfg), -EINVAL);
	assert_non_null(strstr(line, "unknown key"));
	sib_log_capture(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_seed_and_stream_give_the_same_faults),
		cmocka_unit_test(rates_hold_over_many_packets),
		cmocka_unit_test(corrupt_flips_exactly_one_bit_anywhere),
		cmocka_unit_test(drop_1_drops_everything),
		cmocka_unit_test(dup_1_delivers_everything_twice),
		cmocka_unit_test(reorder_and_delay_eventually_deliver_everything),
		cmocka_unit_test(held_packet_sets_a_deadline),
		cmocka_unit_test(drop_nth_drops_one_data_packet_and_capture_shows_it),
		cmocka_unit_test(spec_parses_rates_times_and_seed),
		cmocka_unit_test(bad_spec_is_rejected_with_a_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

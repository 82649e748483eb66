/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * CRC throughput on one core over a sealed packet with a 4096-byte payload
 * (LRH + BTH + 4096 + ICRC + VCRC = 4122 bytes): ICRC alone, VCRC alone on
 * each CRC-16 implementation, both together, and zlib's crc32 as a
 * reference measured in the same run.  Prints GB/s of packet bytes; the
 * figures are for reading, nothing is asserted.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "wire/crc.h"
#include "wire/crc_impl.h"

enum { PAYLOAD = 4096, PKT_LEN = 8 + 12 + PAYLOAD + 4 + 2 };

static uint8_t pkt[PKT_LEN] __attribute__((aligned(64)));
static volatile uint32_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum what { ICRC, VCRC, BOTH, ZLIB };

static void run_once(enum what w, long iters)
{
	uint32_t acc = 0, ic;
	uint16_t vc;

	for (long i = 0; i < iters; i++) {
		switch (w) {
		case ICRC:
			acc += ib_icrc(pkt, PKT_LEN);
			break;
		case VCRC:
			acc += ib_vcrc(pkt, PKT_LEN);
			break;
		case BOTH:
			ib_crcs(pkt, PKT_LEN, &ic, &vc);
			acc += ic + vc;
			break;
		case ZLIB:
			acc += crc32(0, pkt, PKT_LEN - 6);
			break;
		}
		pkt[100] = (uint8_t)i; /* keep the calls from being hoisted */
	}
	sink = acc;
}

/* Best of five ~0.1 s runs, in GB/s of whole packets. */
static double measure(enum what w)
{
	long iters = 1000;
	double best = 0;

	for (;;) {
		double t0 = now();

		run_once(w, iters);
		if (now() - t0 > 0.02)
			break;
		iters *= 2;
	}
	iters *= 5;
	for (int r = 0; r < 5; r++) {
		double t0 = now(), dt;

		run_once(w, iters);
		dt = now() - t0;
		if ((double)iters * PKT_LEN / dt > best)
			best = (double)iters * PKT_LEN / dt;
	}
	return best / 1e9;
}

static void row(const char *what, const char *impl, double gbs)
{
	printf("  %-22s %-13s %8.2f GB/s  %7.1f ns/packet\n", what, impl, gbs, PKT_LEN / gbs);
}

int main(void)
{
	static const char *impls[] = { "pclmul-avx512", "pclmul-avx", "table" };
	uint32_t ic;
	uint16_t vc;

	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 131 + 7);
	pkt[1] = 0x02; /* LNH: IBA local */
	ib_crcs(pkt, PKT_LEN, &ic, &vc);
	ib_icrc_put(pkt, PKT_LEN, ic);
	ib_vcrc_put(pkt, PKT_LEN, vc);

	printf("  %d-byte packets (%d-byte payload), one core, best of 5\n", PKT_LEN, PAYLOAD);
	printf("  %-22s %-13s %13s  %17s\n", "CRC", "impl", "throughput", "time");
	row("ICRC (ISA-L crc32)", "isa-l", measure(ICRC));
	for (size_t i = 0; i < 3; i++) {
		if (ib_crc16_force_impl(impls[i]) != 0) {
			printf("  %-22s %-13s   (not supported on this CPU)\n", "VCRC", impls[i]);
			continue;
		}
		row("VCRC", impls[i], measure(VCRC));
	}
	ib_crc16_force_impl(NULL);
	row("ICRC+VCRC (ib_crcs)", ib_crc16_impl(), measure(BOTH));
	if (ib_crc16_force_impl("table") == 0 && strcmp(ib_crc16_impl(), "table") == 0) {
		row("ICRC+VCRC (ib_crcs)", "table", measure(BOTH));
		ib_crc16_force_impl(NULL);
	}
	row("zlib crc32 (reference)", "zlib", measure(ZLIB));
	return 0;
}

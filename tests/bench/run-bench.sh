#!/usr/bin/env bash
# make bench: throughput and latency figures, printed, never asserted.
# Usage: tests/bench/run-bench.sh BUILD_DIR
# Each section is one function; add a new one and list it in SECTIONS.
set -u
B=${1:-build}
B=$(cd "$B" && pwd)

section() {
	echo
	echo "== $1"
}

bench_crc() {
	section "CRC (ICRC+VCRC, 4096-byte packets)"
	if [ ! -x "$B/bench/bench_crc" ]; then
		echo "  skipped: $B/bench/bench_crc not built"
		return 1
	fi
	"$B/bench/bench_crc"
}

# The emulated link's own limit (issue 6 item 1): raw UDP over loopback,
# the denominator of softib's ratios.  Its last line is key=value pairs
# (best_goodput_MBps, half_rtt_median_us, half_rtt_p99_us) for later sections.
bench_udp_limit() {
	section "Link limit: raw UDP over 127.0.0.1 (4096-byte datagrams; 64-byte ping-pong)"
	if [ ! -x "$B/bench/udp_limit" ]; then
		echo "  skipped: $B/bench/udp_limit not built"
		return 1
	fi
	"$B/bench/udp_limit" -t "${UDP_LIMIT_SECONDS:-1}" -n "${UDP_LIMIT_ITERS:-20000}"
}

SECTIONS=(bench_crc bench_udp_limit)

status=0
for s in "${SECTIONS[@]}"; do
	"$s" || status=1
done
exit $status

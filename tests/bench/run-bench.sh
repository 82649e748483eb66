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

SECTIONS=(bench_crc)

status=0
for s in "${SECTIONS[@]}"; do
	"$s" || status=1
done
exit $status

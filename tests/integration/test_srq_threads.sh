#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Many threads on many RC QPs into one SRQ, between two processes
# (helpers/srq_threads.c; issue 36 item 8: under load, 32 threads sharing
# one SRQ once left QPs that never completed, with sequence NAKs and
# retransmits although nothing was dropped, and VCRC failures on loopback).
# Passes when every message of every QP arrived in order and completed,
# no packet on either side failed its VCRC or ICRC (there is no fault
# injection here: any such failure is softib's bug), and no sequence NAK
# was sent unless the socket itself dropped a datagram (its receive buffer
# overflowed: a loss, which a NAK rightly answers).
. "$(dirname "$0")/lib.sh"

sib_init srq_threads
sib_need_sm timeout
helper=$B/helpers/srq_threads
[ -x "$helper" ] || sib_skip "$helper is not built"

THREADS=${SRQ_THREADS:-32}
MSGS=${SRQ_MSGS:-200}
export SRQ_THREADS_LIMIT=${SRQ_THREADS_LIMIT:-240}

sib_run srq "$((SRQ_THREADS_LIMIT + 60))" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- "$helper" "$THREADS" "$MSGS"
rc=$?
out=$(sib_out srq)
grep -E '^srq_threads: ' "$out"
[ $rc -eq 0 ] || sib_fail "srq_threads exit $rc"

fail=0
for side in server client; do
	stats=$SIB_TMP/$side.stats
	sed -n "/^stats begin $side\$/,/^stats end $side\$/p" "$out" >"$stats"
	[ -s "$stats" ] || { echo "FAIL: the $side printed no counters"; fail=1; continue; }
	count() { awk -v k="port1.$1" '$1 == k { print $2 }' "$stats"; }
	vcrc=$(count drop.VCRC) icrc=$(count drop.ICRC) naks=$(count tx_seq_naks)
	full=$(count drop.rx_queue_full) rtx=$(count retransmits)
	echo "$side: VCRC failures ${vcrc:-?}, ICRC failures ${icrc:-?}, sequence NAKs sent ${naks:-?}," \
		"socket drops ${full:-?}, retransmits ${rtx:-?}"
	if [ -z "$vcrc" ] || [ -z "$icrc" ] || [ -z "$naks" ] || [ -z "$full" ]; then
		echo "FAIL: the $side's counters lack a line this test reads"; fail=1; continue
	fi
	[ "$vcrc" -eq 0 ] && [ "$icrc" -eq 0 ] ||
		{ echo "FAIL: $side: packets failed their CRCs with no fault injection"; fail=1; }
	[ "$naks" -eq 0 ] || [ "$full" -gt 0 ] ||
		{ echo "FAIL: $side: sequence NAKs sent although the socket dropped nothing (reordered inside softib)"; fail=1; }
done
[ $fail -eq 0 ] || sib_fail "counters"
echo "PASS: $THREADS threads x $MSGS messages through one SRQ, in order, CRCs clean"

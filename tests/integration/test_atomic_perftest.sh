#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# perftest's atomics between two processes on loopback under `softib run`
# (issue 5 item 7): ib_atomic_bw and ib_atomic_lat, each with
# -A CMP_AND_SWAP and -A FETCH_AND_ADD.  Both sides must exit 0; the client
# prints its table (one row: 8 bytes); the bw server prints the client's
# report, the lat server no table.  -F as in test_perftest.sh.
. "$(dirname "$0")/lib.sh"

sib_init atomic_perftest
sib_need ib_atomic_bw ib_atomic_lat ss timeout
sib_need_sm

ITERS=${PERFTEST_ITERS:-200}
LIMIT=${PERFTEST_LIMIT:-300}
BW_HEADER='^ #bytes +#iterations +BW peak\[(MB|Gb)/sec\]'
LAT_HEADER='^ #bytes +#iterations +t_min\[usec\]'
ROW8='^ +8 +[0-9]+ +[0-9]+\.[0-9]+'
failed=()

# run_case NAME SERVER_TABLE(yes|no) PROG ARGS...
run_case()
{
	local name=$1 stable=$2 prog=$3 header=$BW_HEADER port ok=1 side

	shift 2
	case $prog in *_lat) header=$LAT_HEADER ;; esac
	port=$(sib_free_port tcp) || exit 1
	if sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 "$@" -d softib0 -i 1 -F -n "$ITERS"; then
		for side in client server; do
			[ $side = server ] && [ "$stable" = no ] && continue
			sib_expect "$(sib_out "$name.$side")" "$header" "$name $side: table header" || ok=0
			sib_expect "$(sib_out "$name.$side")" "$ROW8" "$name $side: the 8-byte row" || ok=0
		done
		[ $ok -eq 1 ] || sib_show "$name.server" "$name.client"
	else
		ok=0
	fi
	if [ $ok -eq 1 ]; then
		echo "ok: $name"
	else
		failed+=("$name")
	fi
}

run_case atomic_bw_cas  yes ib_atomic_bw -A CMP_AND_SWAP
run_case atomic_bw_fadd yes ib_atomic_bw -A FETCH_AND_ADD
run_case atomic_lat_cas  no ib_atomic_lat -A CMP_AND_SWAP
run_case atomic_lat_fadd no ib_atomic_lat -A FETCH_AND_ADD

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: atomic perftest: ${failed[*]}"
	exit 1
fi
echo "atomic perftest: all cases passed"

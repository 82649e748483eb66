#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The ibverbs-utils ping-pong programs (rc, uc, ud, srq) between two
# processes under `softib run` on loopback: addressed by LID, with a GRH
# (-g 0), with completion events (-e), RC with 1 MiB messages, and RC on
# on-demand paging: an ODP MR (-o), an implicit ODP MR (-O), each with a
# prefetch (-P, ibv_advise_mr with IBV_ADVISE_MR_FLAG_FLUSH), and every
# other option the examples offer (below).  Each
# server and client must exit 0 and print both throughput lines
# ("N bytes in S seconds = R Mbit/sec", "N iters in S seconds = T usec/iter").
# The port's subnet manager is started by the first port (SOFTIB_SM points at
# a port of this test's own) and killed on exit.
. "$(dirname "$0")/lib.sh"

sib_init pingpong
sib_need ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ss timeout
sib_need_sm

# 100 round trips are enough to prove the data path; more only costs time.
ITERS=${PINGPONG_ITERS:-100}
LIMIT=${PINGPONG_LIMIT:-300}
failed=()

# run_case NAME ITERS PROG ARGS...: PROG ARGS -n ITERS on both sides.
run_case()
{
	local name=$1 iters=$2 port ok=1 side

	shift 2
	port=$(sib_free_port tcp) || exit 1
	if sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 "$@" -n "$iters"; then
		for side in server client; do
			sib_expect "$(sib_out "$name.$side")" \
				'^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' \
				"$name $side throughput" || ok=0
			sib_expect "$(sib_out "$name.$side")" \
				"^$iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" \
				"$name $side latency" || ok=0
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

for t in rc uc ud srq; do
	prog=ibv_${t}_pingpong
	run_case "${t}_lid" "$ITERS" "$prog" -d softib0 -i 1
	run_case "${t}_grh" "$ITERS" "$prog" -d softib0 -i 1 -g 0
	run_case "${t}_events" "$ITERS" "$prog" -d softib0 -i 1 -e
done
# Multi-packet messages: 1 MiB is 1024 packets at pingpong's MTU of 1024.
run_case rc_1MiB 20 ibv_rc_pingpong -d softib0 -i 1 -s 1048576
# On-demand paging: the program checks odp_caps before it registers.
run_case rc_odp "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -o
run_case rc_odp_prefetch "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -o -P
run_case rc_implicit_odp "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -O
run_case rc_implicit_odp_prefetch "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -O -P
# The rest of what the examples offer: buffers validated (-c), completion
# timestamps (-t, ibv_create_cq_ex), device memory (-j, ibv_alloc_dm), the
# ibv_wr_* API (-N), MTU, size, receive depth and SL; SRQ with ODP and 4
# QPs; UC and UD validated.
run_case rc_chk "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -c
run_case rc_ts "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -t
run_case rc_dm "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -j
run_case rc_new_send "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -N
run_case rc_new_send_ts_chk "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -N -t -c
run_case rc_odp_chk "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -o -c
run_case rc_mtu4096_s8192_r16_sl3 "$ITERS" ibv_rc_pingpong -d softib0 -i 1 -m 4096 -s 8192 -r 16 -l 3
run_case uc_chk "$ITERS" ibv_uc_pingpong -d softib0 -i 1 -c
run_case ud_chk "$ITERS" ibv_ud_pingpong -d softib0 -i 1 -c
run_case srq_odp_q4_chk "$ITERS" ibv_srq_pingpong -d softib0 -i 1 -o -q 4 -c

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: pingpong: ${failed[*]}"
	exit 1
fi
echo "pingpong: all cases passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Programs that wait for their data without polling a CQ (issue 21; the
# wake-up rule of hca/progress.h):
#   - qperf rc_rdma_write_poll_lat and uc_rdma_write_poll_lat: each side
#     spins on memory until the peer's RDMA WRITE lands, calling no verb
#     in between; both must finish and print a latency;
#   - qperf rc_lat in its default event mode: blocks in ibv_get_cq_event;
#   - ibv_rc_pingpong -e: blocks in ibv_get_cq_event too; its server's
#     `softib info --pid` must count messages and wake-ups of the thread
#     that waits for events (it drains the link itself: the wake-up rule),
#     and after a clean run both sides print their results.
# No figure is asserted: speed is make bench's.
. "$(dirname "$0")/lib.sh"

sib_init wait
sib_need qperf ibv_rc_pingpong ss timeout
sib_need_sm
LIMIT=180
failed=()

# ---- qperf: memory polling and event mode
port=$(sib_free_port tcp) || exit 1
sib_start qperf.server "$LIMIT" env ASAN_OPTIONS=detect_leaks=0:handle_segv=0 \
	"$SOFTIB" run -- qperf -lp "$port"
tests=(rc_rdma_write_poll_lat uc_rdma_write_poll_lat rc_lat)
if sib_wait_listen qperf.server "$port" &&
	sib_run qperf.client "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- qperf -lp "$port" \
		-t 1 127.0.0.1 "${tests[@]}"; then
	for t in "${tests[@]}"; do
		# "rc_lat:" then "    latency  =  14.2 us"
		if ! awk -v t="$t:" '$1 == t { f = 1; next }
			f && /^ +latency += +[0-9.]+ [mun]?s(ec)?$/ { ok = 1; exit }
			f && /:$/ { exit } END { exit !ok }' "$(sib_out qperf.client)"; then
			echo "FAIL: qperf $t printed no latency"
			failed+=("qperf $t")
		fi
	done
	[ ${#failed[@]} -eq 0 ] || sib_show qperf.client
else
	echo "FAIL: qperf client: $(sib_status_text "${SIB_RC[qperf.client]:-1}")"
	sib_show qperf.client qperf.server
	failed+=(qperf)
fi
kill "${SIB_PID[qperf.server]:-}" 2>/dev/null
sib_wait qperf.server

# ---- ibv_rc_pingpong -e: the waiting thread's own wake-ups, counted
port=$(sib_free_port tcp) || exit 1
iters=20000
sib_start pp.server "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- ibv_rc_pingpong -d softib0 \
	-e -s 8 -n "$iters" -p "$port"
if sib_wait_listen pp.server "$port"; then
	sib_start pp.client "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- ibv_rc_pingpong \
		-d softib0 -e -s 8 -n "$iters" -p "$port" 127.0.0.1
	# The server's counters while it runs: the process under timeout and
	# softib run (which execs the program).
	seen=
	for ((i = 0; i < 600; i++)); do
		pid=$(pgrep -P "${SIB_PID[pp.server]}" | head -1)
		line=$([ -n "$pid" ] && "$SOFTIB" info --pid "$pid" 2>/dev/null | grep 'wake-ups')
		# "wake-ups  M messages in, W thread wake-ups (progress thread T,
		#  application waiting for events A, events handed to it E)"
		if [ -n "$line" ] && echo "$line" | awk '{ exit !($2 > 0 && $15 + 0 > 0) }'; then
			seen=$line
			break
		fi
		kill -0 "${SIB_PID[pp.server]}" 2>/dev/null || break
		sleep 0.1
	done
	sib_wait pp.client
	rc=$?
	sib_wait pp.server
	rs=$?
	if [ -z "$seen" ]; then
		echo "FAIL: ibv_rc_pingpong -e: softib info --pid never showed messages and wake-ups" \
			"of a thread waiting for events (last: ${line:-none})"
		failed+=("pingpong counters")
	else
		echo "ibv_rc_pingpong -e server:$seen"
	fi
	if [ $rc -ne 0 ] || [ $rs -ne 0 ]; then
		echo "FAIL: ibv_rc_pingpong -e: server $(sib_status_text $rs), client $(sib_status_text $rc)"
		sib_show pp.server pp.client
		failed+=("pingpong -e")
	else
		for side in server client; do
			sib_expect "$(sib_out pp.$side)" "^$iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" \
				"pingpong -e $side: the iterations line" || failed+=("pingpong -e $side")
		done
	fi
else
	sib_show pp.server
	failed+=("pingpong -e server")
fi

if [ ${#failed[@]} -gt 0 ]; then
	sib_fail "failed: ${failed[*]}"
fi
echo "PASS: memory polling (qperf rc/uc_rdma_write_poll_lat), event mode (qperf rc_lat," \
	"ibv_rc_pingpong -e, its waiting thread's wake-ups counted)"

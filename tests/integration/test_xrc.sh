#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# XRC between processes on loopback under `softib run`:
#   ibv_xsrq_pingpong (an XRC domain shared through a file, an XRC SRQ, XRC
#   send and receive QPs): polling, with completion events, on ODP memory
#   with MTU 1024 (-o -m 1024), and one server
#   whose single XRC SRQ serves three clients at once;
#   perftest -c XRC: ib_send_bw (every size, -a), ib_write_bw, ib_read_bw,
#   ib_atomic_bw, ib_send_lat, ib_write_lat, ib_read_lat, ib_atomic_lat;
#   four XRC QPs into one SRQ (-q 4), and ibv_post_send instead of ibv_wr_*.
# Every process must exit 0; xsrq_pingpong prints "success" on both sides
# of a pair, perftest clients print a result row.
. "$(dirname "$0")/lib.sh"

sib_init xrc
sib_need ibv_xsrq_pingpong ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat \
	ib_write_lat ib_read_lat ib_atomic_lat ss timeout
sib_need_sm

ITERS=${XRC_ITERS:-100}
LIMIT=${XRC_LIMIT:-300}
ROW='^ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]+'
failed=()

# xsrq NAME ARGS...: a server and a client.
xsrq()
{
	local name=$1 port ok=1 side

	shift
	port=$(sib_free_port tcp) || exit 1
	if sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 ibv_xsrq_pingpong -d softib0 -i 1 "$@"; then
		for side in server client; do
			sib_expect "$(sib_out "$name.$side")" '^success$' "$name $side" || ok=0
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

# xsrq_clients NAME N: one server for N clients (-c N), the clients at once.
xsrq_clients()
{
	local name=$1 n=$2 port i ok=1 ids=()

	port=$(sib_free_port tcp) || exit 1
	sib_start "$name.server" "$LIMIT" "$SOFTIB" run -- ibv_xsrq_pingpong -d softib0 -i 1 \
		-c "$n" -n 50 -p "$port"
	if ! sib_wait_listen "$name.server" "$port"; then
		sib_show "$name.server"
		failed+=("$name")
		return
	fi
	for ((i = 0; i < n; i++)); do
		ids+=("$name.client$i")
		sib_start "$name.client$i" "$LIMIT" "$SOFTIB" run -- ibv_xsrq_pingpong -d softib0 \
			-i 1 -n 50 -p "$port" 127.0.0.1
	done
	for ((i = 0; i < n; i++)); do
		sib_wait "$name.client$i" || { echo "FAIL: $name: client $i exit ${SIB_RC[$name.client$i]}"; ok=0; }
	done
	[ $ok -eq 1 ] || kill "${SIB_PID[$name.server]}" 2>/dev/null
	sib_wait "$name.server" || { echo "FAIL: $name: server exit ${SIB_RC[$name.server]}"; ok=0; }
	if [ $ok -eq 1 ]; then
		echo "ok: $name"
	else
		sib_show "$name.server" "${ids[@]}"
		failed+=("$name")
	fi
}

# perf NAME PROG ARGS...: PROG -c XRC ARGS on both sides.
perf()
{
	local name=$1 port

	shift
	port=$(sib_free_port tcp) || exit 1
	if ! sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 "$@" -d softib0 -i 1 -F -c XRC; then
		failed+=("$name")
	elif ! sib_expect "$(sib_out "$name.client")" "$ROW" "$name client: a result row"; then
		sib_show "$name.server" "$name.client"
		failed+=("$name")
	else
		echo "ok: $name"
	fi
}

xsrq xsrq_pingpong -n 200
xsrq xsrq_pingpong_events -n 100 -s 8192 -e
xsrq xsrq_pingpong_odp_mtu1024 -n 100 -o -m 1024
xsrq_clients xsrq_pingpong_3_clients 3
perf xrc_send_bw_all ib_send_bw -a -n 10
perf xrc_send_bw_4qp ib_send_bw -q 4 -n "$ITERS"
perf xrc_write_bw    ib_write_bw -n "$ITERS"
perf xrc_write_bw_post_send ib_write_bw --use_old_post_send -n "$ITERS"
perf xrc_read_bw     ib_read_bw -n "$ITERS"
perf xrc_atomic_bw   ib_atomic_bw -n "$ITERS"
perf xrc_send_lat    ib_send_lat -n "$ITERS"
perf xrc_write_lat   ib_write_lat -n "$ITERS"
perf xrc_read_lat    ib_read_lat -n "$ITERS"
perf xrc_atomic_lat  ib_atomic_lat -n "$ITERS"

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: xrc: ${failed[*]}"
	exit 1
fi
echo "xrc: all cases passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# XRC between two processes on loopback under `softib run`:
#   ibv_xsrq_pingpong (XRC domain shared through a file, an XRC SRQ, XRC
#   send and receive QPs; once with completion events, once with a server
#   whose one SRQ serves three clients);
#   perftest -c XRC: ib_send_bw (every size, -a), ib_write_bw, ib_read_bw,
#   ib_atomic_bw, ib_send_lat, ib_write_lat, ib_read_lat, ib_atomic_lat.
# Both sides of every pair must exit 0; perftest clients must print a table
# row.  Self-contained (the conventions of the other pair tests): an SM port
# and TCP ports of its own, a time limit on every process, and everything it
# started is stopped on exit.
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
case "$B" in /*) ;; *) B=$top/$B ;; esac
SOFTIB=${SOFTIB:-$B/softib}
LIMIT=${XRC_LIMIT:-60}
ITERS=${XRC_ITERS:-100}

skip() { echo "skip: $*"; exit 77; }

[ -x "$SOFTIB" ] && [ -e "$B/libsoftib.so" ] || skip "$SOFTIB or libsoftib.so is not built (run make)"
[ -x "$B/softib-sm" ] || skip "$B/softib-sm is not built: no subnet manager, no data path"
for p in ibv_xsrq_pingpong ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat \
	ib_write_lat ib_read_lat ib_atomic_lat ss timeout; do
	command -v "$p" >/dev/null 2>&1 || skip "$p is not installed (make deps installs it)"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/softib-xrc.XXXXXX") || exit 1
PIDS=()
USED=" "
SM_PORT=

cleanup()
{
	local pid

	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	# The SM a port of this test started on our UDP port, found by its socket.
	if [ -n "$SM_PORT" ]; then
		for pid in $(ss -Hulnp "sport = :$SM_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' |
			cut -d= -f2 | sort -u); do
			[ "$(cat /proc/"$pid"/comm 2>/dev/null)" = softib-sm ] && kill "$pid" 2>/dev/null
		done
	fi
	[ -z "${SIB_KEEP:-}" ] && rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port nobody of that protocol uses now and this test has not handed out.
free_port()
{
	local flag=-tan p i

	[ "$1" = udp ] && flag=-uan
	p=$((20000 + (($$ * 7919 + RANDOM) % 40000)))
	for ((i = 0; i < 40000; i++)); do
		p=$((20000 + (p - 20000 + 1) % 40000))
		case "$USED" in *" $p "*) continue ;; esac
		if [ -z "$(ss -H $flag "sport = :$p" 2>/dev/null)" ]; then
			USED+="$p "
			echo "$p"
			return 0
		fi
	done
	return 1
}

SM_PORT=$(free_port udp) || exit 1
export SOFTIB_SM=127.0.0.1:$SM_PORT

show()
{
	local f

	for f in "$@"; do
		echo "----- $(basename "$f" .out)"
		tail -n 40 "$f"
	done
	echo "-----"
}

# pair NAME PROG ARGS...: server `PROG ARGS -p PORT`, then client
# `PROG ARGS -p PORT 127.0.0.1`; 0 when both exit 0.
pair()
{
	local name=$1 port s c spid rs rc i

	shift
	port=$(free_port tcp) || return 1
	s=$TMP/$name.server.out
	c=$TMP/$name.client.out
	timeout -k 5 "$LIMIT" "$SOFTIB" run -- "$@" -p "$port" >"$s" 2>&1 </dev/null &
	spid=$!
	PIDS+=("$spid")
	for ((i = 0; i < 300; i++)); do
		[ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	timeout -k 5 "$LIMIT" "$SOFTIB" run -- "$@" -p "$port" 127.0.0.1 >"$c" 2>&1 </dev/null
	rc=$?
	[ $rc -eq 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	rs=$?
	if [ $rs -ne 0 ] || [ $rc -ne 0 ]; then
		echo "FAIL: $name: server exit $rs, client exit $rc (124: timed out after ${LIMIT}s)"
		echo "  command: $* -p $port [127.0.0.1]"
		show "$s" "$c"
		return 1
	fi
	return 0
}

failed=()
ROW='^ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]+'

xsrq()
{
	local name=$1

	shift
	if pair "$name" ibv_xsrq_pingpong -d softib0 -i 1 "$@"; then
		echo "ok: $name"
	else
		failed+=("$name")
	fi
}

perf()
{
	local name=$1 c

	shift
	c=$TMP/$name.client.out
	if ! pair "$name" "$@" -d softib0 -i 1 -F -c XRC; then
		failed+=("$name")
	elif ! grep -Eq -- "$ROW" "$c"; then
		echo "FAIL: $name: the client printed no result row"
		show "$c"
		failed+=("$name")
	else
		echo "ok: $name"
	fi
}

# xsrq_clients NAME N: one server for N clients (-c N), the clients at once.
xsrq_clients()
{
	local name=$1 n=$2 port s spid rs i ok=1 cpids=() files=()

	port=$(free_port tcp) || return 1
	s=$TMP/$name.server.out
	timeout -k 5 "$LIMIT" "$SOFTIB" run -- ibv_xsrq_pingpong -d softib0 -i 1 -c "$n" -n 50 \
		-p "$port" >"$s" 2>&1 </dev/null &
	spid=$!
	PIDS+=("$spid")
	for ((i = 0; i < 300; i++)); do
		[ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	for ((i = 0; i < n; i++)); do
		files+=("$TMP/$name.client$i.out")
		timeout -k 5 "$LIMIT" "$SOFTIB" run -- ibv_xsrq_pingpong -d softib0 -i 1 -n 50 \
			-p "$port" 127.0.0.1 >"${files[$i]}" 2>&1 </dev/null &
		cpids+=($!)
		PIDS+=($!)
	done
	for ((i = 0; i < n; i++)); do
		wait "${cpids[$i]}" || { echo "FAIL: $name: client $i exit $?"; ok=0; }
	done
	[ $ok -eq 1 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	rs=$?
	[ $rs -eq 0 ] || { echo "FAIL: $name: server exit $rs"; ok=0; }
	if [ $ok -eq 1 ]; then
		echo "ok: $name"
	else
		show "$s" "${files[@]}"
		failed+=("$name")
	fi
}

xsrq xsrq_pingpong -n 200
xsrq_clients xsrq_pingpong_3_clients 3
xsrq xsrq_pingpong_events -n 100 -s 8192 -e
perf xrc_send_bw_all ib_send_bw -a -n 10
perf xrc_write_bw ib_write_bw -n "$ITERS"
perf xrc_read_bw ib_read_bw -n "$ITERS"
perf xrc_atomic_bw ib_atomic_bw -n "$ITERS"
perf xrc_send_lat ib_send_lat -n "$ITERS"
perf xrc_write_lat ib_write_lat -n "$ITERS"
perf xrc_read_lat ib_read_lat -n "$ITERS"
perf xrc_atomic_lat ib_atomic_lat -n "$ITERS"

if [ ${#failed[@]} -ne 0 ]; then
	echo "xrc: failed: ${failed[*]}"
	exit 1
fi
echo "xrc: all passed"

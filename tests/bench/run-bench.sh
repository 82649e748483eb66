#!/usr/bin/env bash
# make bench: throughput and latency figures, printed, never asserted.
# Usage: tests/bench/run-bench.sh BUILD_DIR
#
# One run measures, on this machine and at this moment (issue 6):
#   - the link's limit: raw UDP over loopback (udp_limit.c); the ratios use
#     the best of the three sender modes issue 6 names, and the table also
#     shows GSO to a UDP_GRO receiver, the way softib's link receives;
#   - a peer: ucx_perftest over UCX's tcp transport on loopback;
#   - softib: perftest between two processes, the CPU use of an idle softib
#     process and of the passive side of ib_write_bw;
#   - UCX over softib0's rc_verbs (issue 19): ucp_put_bw 64 KiB and tag_lat
#     8 B with UCX_TLS=rc_verbs,ud_verbs,self, each round right after the
#     peer (UCX tcp) with the same pinning, as ratios to it;
#   - the io_uring link against the socket link (issue 21 item 3):
#     ib_write_bw 64 KiB and ib_send_lat 8 B with each SOFTIB_LINK, in
#     rounds, and what one io_uring request costs against the system call
#     it replaces (uring_cost.c); in the table the "link" column of the
#     uring rows is the socket link's figure, or the system call's;
#   - programs that wait on memory or on a completion channel (issue 21,
#     bench_wait): qperf and ibv_rc_pingpong -e against a blocking UDP
#     ping-pong, and the thread wake-ups per message;
# then prints one table: each softib figure, its ratio to the link and to
# the peer, and the targets of issues 6 and 19 with pass/miss.  Figures move from
# run to run on a shared 2-core machine; the ratios of one run are what to
# compare.  The figures with targets are paired: each of the BENCH_REPEAT
# rounds measures the link and the peer again right before softib, and the
# table's ratio for them is the median of the rounds' ratios, so a slow
# minute of the machine moves a figure and its references together.
#
# Units: MB/s is 10^6 bytes per second everywhere (perftest and UCX report
# 2^20; converted here).  Latencies are medians (perftest's t_typical, UCX's
# 50th percentile, udp_limit's median half round trip), in microseconds.
# The table also shows udp_limit's request+ACK ping-pong (each hop two
# datagrams in one GSO message, as softib's RC ping-pong sends them), the
# kernel's own cost of an IBA-shaped hop; it has no target.  And softib's
# own share of a hop (bench_hop.c: two engines on the in-memory link, one
# thread, no system call): what ib_send_lat's hop costs beyond the kernel
# and the verbs layer; and the same on two UDP sockets, still one thread,
# which adds the UDP link and the kernel but no second core or wake-up.
# The link's half round trip is the lower of udp_limit's two medians,
# blocking recv and busy-polling recv (perftest busy-polls its CQ); the
# table's labels name which variant it was.
#
# Knobs: BENCH_SECONDS (per bandwidth run, default 3), BENCH_ITERS (per
# latency run, default 20000, as many as UCX's tag_lat run: a shorter run
# moved with the machine's state), UDP_LIMIT_SECONDS, UDP_LIMIT_ITERS,
# BENCH_SECTIONS (a subset of the SECTIONS below), BENCH_QUICK=1 (softib:
# only ib_write_bw and its passive side), BENCH_REPEAT (runs of each figure
# with a target, default 3: on two shared cores one run moves by 10% and
# more, so the table shows their median).
set -u
B=${1:-build}
B=$(cd "$B" && pwd)
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SOFTIB=$B/softib
SECS=${BENCH_SECONDS:-3}
REPEAT=${BENCH_REPEAT:-3}
ITERS=${BENCH_ITERS:-20000}
# Our own SM, away from the default and from other runs; stopped at exit.
export SOFTIB_SM=${SOFTIB_SM:-127.0.0.1:$((30000 + RANDOM % 20000))}
PORT=$((20000 + RANDOM % 8000))
TMP=$(mktemp -d)
trap 'for p in $(pgrep -f -- "softib-sm --daemon --listen $SOFTIB_SM\$" 2>/dev/null); do kill "$p"; done; rm -rf "$TMP"' EXIT

declare -A R # results: name -> number (empty: not measured)

section() {
	echo
	echo "== $1"
}

# awk arithmetic: calc EXPR -> prints the value
calc() {
	awk "BEGIN { printf \"%.6g\", $1 }"
}

bench_crc() {
	section "CRC (ICRC+VCRC, 4096-byte packets)"
	if [ ! -x "$B/bench/bench_crc" ]; then
		echo "  skipped: $B/bench/bench_crc not built"
		return 1
	fi
	"$B/bench/bench_crc" | tee "$TMP/crc.txt"
	R[crc]=$(awk '/ib_crcs/ && /pclmul/ { print $(NF-3) }' "$TMP/crc.txt")
}

# softib's own work per ping-pong hop, no kernel (bench_hop.c): the part of
# ib_send_lat's hop that is not sendmmsg/recvmmsg or the verbs layer
bench_engine() {
	section "softib engine alone: an RC SEND ping-pong hop in one thread (in-memory link; UDP)"
	if [ ! -x "$B/bench/bench_hop" ]; then
		echo "  skipped: $B/bench/bench_hop not built"
		return 1
	fi
	"$B/bench/bench_hop" | tee "$TMP/hop.txt"
	"$B/bench/bench_hop" -u | tee "$TMP/hop-udp.txt"
	R[engine_hop]=$(hop_us "$TMP/hop.txt")
	R[engine_hop_udp]=$(hop_us "$TMP/hop-udp.txt")
}

hop_us() {
	awk '/ns per hop/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ns") print $i / 1000 }' "$1"
}

# udp_limit once; its figures go to R[link_bw$1], R[link_lat$1]
udp_limit_run() {
	"$B/bench/udp_limit" -t "${UDP_LIMIT_SECONDS:-1}" -n "${UDP_LIMIT_ITERS:-20000}" \
		>"$TMP/udp$1.txt" 2>&1
	R[link_bw$1]=$(sed -n 's/.*best_goodput_MBps=\([0-9.]*\).*/\1/p' "$TMP/udp$1.txt")
	R[link_lat$1]=$(sed -n 's/.*half_rtt_median_us=\([0-9.]*\).*/\1/p' "$TMP/udp$1.txt")
	R[link_pair$1]=$(sed -n 's/.*half_rtt_pair_us=\([0-9.]*\).*/\1/p' "$TMP/udp$1.txt")
	[ "${R[link_pair$1]:-0}" = 0.00 ] && R[link_pair$1]=
	return 0
}

# The emulated link's own limit (issue 6 item 1): raw UDP over loopback,
# the denominator of softib's ratios.
bench_udp_limit() {
	section "Link limit: raw UDP over 127.0.0.1 (4096-byte datagrams; 64-byte ping-pong)"
	if [ ! -x "$B/bench/udp_limit" ]; then
		echo "  skipped: $B/bench/udp_limit not built"
		return 1
	fi
	udp_limit_run ""
	cat "$TMP/udp.txt"
	R[link_gro]=$(sed -n 's/.*gro_goodput_MBps=\([0-9.]*\).*/\1/p' "$TMP/udp.txt")
	R[link_pair]=$(sed -n 's/.*half_rtt_pair_us=\([0-9.]*\).*/\1/p' "$TMP/udp.txt")
	[ "${R[link_pair]:-0}" = 0.00 ] && R[link_pair]=
	# busy-poll or blocking: shortened to fit the table's labels
	case $(sed -n 's/.*half_rtt_variant=\([a-z-]*\).*/\1/p' "$TMP/udp.txt") in
	busy-poll) R[link_lat_variant]=poll ;;
	blocking) R[link_lat_variant]=block ;;
	esac
}

# ucx_perftest, server then client, over UCX's tcp transport on lo.
# ucx_run TEST SIZE ITERS -> the client's "Final:" line.  UCX_RUN (default
# none) goes in front of both, UCX_ENV (default the tcp transport on lo)
# sets UCX's environment.
ucx_run() {
	local port=$((PORT++)) out env=(${UCX_ENV:-UCX_TLS=tcp UCX_NET_DEVICES=lo})
	env "${env[@]}" timeout 60 ${UCX_RUN:-} ucx_perftest -c 0 -p "$port" >"$TMP/ucx-srv.txt" 2>&1 &
	local srv=$!
	sleep 1
	out=$(env "${env[@]}" timeout 60 ${UCX_RUN:-} ucx_perftest 127.0.0.1 -c 1 -p "$port" \
		-t "$1" -s "$2" -n "$3" 2>&1)
	wait "$srv" 2>/dev/null
	echo "$out" | grep '^Final:'
}

bench_peer() {
	section "Peer: ucx_perftest over UCX tcp on loopback (UCX_TLS=tcp UCX_NET_DEVICES=lo)"
	if ! command -v ucx_perftest >/dev/null; then
		echo "  skipped: ucx_perftest not installed (Debian package ucx-utils; make deps)"
		return 1
	fi
	peer_run "" verbose
	echo "  put_bw ${R[peer_bw]:-?} MB/s, tag_lat median ${R[peer_lat]:-?} us"
}

# ucp_put_bw and tag_lat once, to R[peer_bw$1], R[peer_lat$1]
peer_run() {
	local l
	# Final: iters  median avg overall(us)  bw-avg bw-overall(MiB/s)  rate-avg rate-overall
	l=$(ucx_run ucp_put_bw 65536 20000)
	[ -n "${2:-}" ] && echo "  ucp_put_bw 64 KiB: $l"
	[ -n "$l" ] && R[peer_bw$1]=$(calc "$(echo "$l" | awk '{ print $7 }') * 1.048576")
	l=$(ucx_run tag_lat 8 20000)
	[ -n "${2:-}" ] && echo "  tag_lat 8 B:       $l"
	[ -n "$l" ] && R[peer_lat$1]=$(echo "$l" | awk '{ print $3 }')
	return 0
}

# The references of round i (figures with targets): the first round uses
# the sections' own measurements, later ones measure again.
refs_round() {
	local i=$1 k
	if [ "$i" = 1 ]; then
		for k in link_bw link_lat link_pair peer_bw peer_lat; do
			R[${k}_r1]=${R[$k]:-}
		done
		return
	fi
	[ -x "$B/bench/udp_limit" ] && udp_limit_run "_r$i"
	command -v ucx_perftest >/dev/null && peer_run "_r$i"
	printf '  round %d references: link %s MB/s, %s us; peer %s MB/s, %s us\n' "$i" \
		"${R[link_bw_r$i]:-?}" "${R[link_lat_r$i]:-?}" "${R[peer_bw_r$i]:-?}" \
		"${R[peer_lat_r$i]:-?}"
}

# perftest between two softib processes.
# pt_run NAME KIND ARGS...: KIND bw or lat; sets R[NAME] (and R[NAME_rate]).
# While it runs, PT_HOOK (when set) is called with the server's pid.
pt_run() {
	local name=$1 kind=$2 port=$((PORT++))
	shift 2
	timeout 90 "$SOFTIB" run "$@" -d softib0 -p "$port" >"$TMP/pt-srv.txt" 2>&1 &
	local srv=$!
	sleep 1
	timeout 90 "$SOFTIB" run "$@" -d softib0 -p "$port" 127.0.0.1 >"$TMP/pt-cli.txt" 2>&1 &
	local cli=$!
	if [ -n "${PT_HOOK:-}" ]; then
		# the server itself is timeout's child (softib run execs perftest)
		"$PT_HOOK" "$(pgrep -P "$srv" | head -1)"
	fi
	wait "$cli" 2>/dev/null
	wait "$srv" 2>/dev/null
	local line
	# the first figures after the header (a header printed twice, or a
	# warning after it, is not a figure)
	line=$(awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print; exit }' "$TMP/pt-cli.txt")
	if [ -z "$line" ]; then
		printf '  %-28s FAILED:\n' "$name"
		tail -3 "$TMP/pt-cli.txt" | sed 's/^/    /'
		return 1
	fi
	if [ "$kind" = bw ]; then
		# #bytes #iterations BW-peak BW-average(MiB/s) MsgRate(Mpps)
		R[$name]=$(calc "$(echo "$line" | awk '{ print $4 }') * 1.048576")
		R[${name}_rate]=$(echo "$line" | awk '{ print $5 }')
		printf '  %-28s %10.1f MB/s  %8.3f Mpps\n' "$name" "${R[$name]}" "${R[${name}_rate]}"
	else
		# #bytes #iterations t_min t_max t_typical t_avg ...
		R[$name]=$(echo "$line" | awk '{ print $5 }')
		printf '  %-28s %10.2f us (median; avg %s us)\n' "$name" "${R[$name]}" \
			"$(echo "$line" | awk '{ print $6 }')"
	fi
}

# median_of NAME UNIT: R[NAME] = the median of R[NAME_r1..REPEAT] (those
# that ran), printed with them.
median_of() {
	local name=$1 unit=$2 i v vals=()
	for ((i = 1; i <= REPEAT; i++)); do
		v=${R[${name}_r$i]:-}
		[ -n "$v" ] && vals+=("$v")
	done
	[ ${#vals[@]} -gt 0 ] || return 0
	R[$name]=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	printf '  %-28s %10.2f %s (median of %s)\n' "$name" "${R[$name]}" "$unit" "${vals[*]}"
}

# ratio_of NAME REF: R[NAME_x_REF] = the median over the rounds of
# R[NAME_ri] / R[REF_ri] (the rounds where both were measured).
ratio_of() {
	local name=$1 ref=$2 i a b vals=()
	for ((i = 1; i <= REPEAT; i++)); do
		a=${R[${name}_r$i]:-} b=${R[${ref}_r$i]:-}
		[ -n "$a" ] && [ -n "$b" ] && vals+=("$(calc "$a / $b")")
	done
	[ ${#vals[@]} -gt 0 ] || return 0
	R[${name}_x_$ref]=$(printf '%s\n' "${vals[@]}" | sort -g |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	printf '  %-28s %10.2f (median of %s)\n' "$name / $ref" "${R[${name}_x_$ref]}" "${vals[*]}"
}

# CPU time (ns) of every thread of pid so far.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}

# The passive side of ib_write_bw: its CPU use over the middle of the run.
passive_cpu() {
	local a b t0 t1
	sleep 1.5
	a=$(cpu_ns "$1") t0=$(date +%s%N)
	sleep $((SECS > 3 ? SECS - 2 : 1))
	b=$(cpu_ns "$1") t1=$(date +%s%N)
	# b < a: a thread ended in between (the run was shorter than the window)
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -ge "$a" ] &&
		R[passive_cpu]=$(calc "($b - $a) / ($t1 - $t0)")
}

bench_softib() {
	section "softib: perftest between two processes over softib0"
	for t in ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat ib_read_lat \
		ib_atomic_lat; do
		if ! command -v $t >/dev/null; then
			echo "  skipped: $t not installed (Debian package perftest; make deps)"
			return 1
		fi
	done
	# The figures with targets, BENCH_REPEAT times each, -q 1 and -q 8
	# taking turns; the table shows their medians.
	local i
	for ((i = 1; i <= REPEAT; i++)); do
		[ -z "${BENCH_QUICK:-}" ] && refs_round "$i"
		if [ "$i" = 1 ]; then
			PT_HOOK=passive_cpu pt_run write_bw_r$i bw ib_write_bw -s 65536 -D "$SECS"
		else
			pt_run write_bw_r$i bw ib_write_bw -s 65536 -D "$SECS"
		fi
		[ -n "${BENCH_QUICK:-}" ] && continue
		pt_run write_bw_q8_r$i bw ib_write_bw -s 65536 -q 8 -D "$SECS"
		pt_run send_lat_r$i lat ib_send_lat -s 8 -n "$ITERS"
	done
	median_of write_bw MB/s
	[ -n "${BENCH_QUICK:-}" ] && return 0
	median_of write_bw_q8 MB/s
	median_of send_lat us
	ratio_of write_bw link_bw
	ratio_of write_bw peer_bw
	ratio_of write_bw_q8 write_bw
	ratio_of send_lat link_lat
	ratio_of send_lat peer_lat
	ratio_of send_lat link_pair
	pt_run read_bw bw ib_read_bw -s 65536 -D "$SECS"
	pt_run send_bw bw ib_send_bw -s 4096 -D "$SECS"
	pt_run send_bw_64 bw ib_send_bw -s 64 -D "$SECS"
	pt_run write_lat lat ib_write_lat -s 8 -n "$ITERS"
	pt_run read_lat lat ib_read_lat -s 8 -n "$ITERS"
	pt_run atomic_lat lat ib_atomic_lat -n "$ITERS"
	[ -n "${R[passive_cpu]:-}" ] &&
		printf '  %-28s %10.3f cores\n' "ib_write_bw passive side" "${R[passive_cpu]}"
}

# UCX over softib0's rc_verbs against UCX over tcp (issue 19 item 8):
# ucp_put_bw 64 KiB and tag_lat 8 B, BENCH_REPEAT rounds, each measuring
# the peer again right before softib (same pinning, -c 0 / -c 1), the
# ratios the medians of the rounds' ratios.  rc_verbs needs ud_verbs beside
# it for UCX's wireup, as on hardware.
bench_ucx() {
	section "UCX over softib0 (UCX_TLS=rc_verbs,ud_verbs,self) against UCX tcp"
	if ! command -v ucx_perftest >/dev/null; then
		echo "  skipped: ucx_perftest not installed (Debian package ucx-utils; make deps)"
		return 1
	fi
	local i l
	for ((i = 1; i <= REPEAT; i++)); do
		peer_run "_u_r$i"
		l=$(UCX_RUN="$SOFTIB run" UCX_ENV="UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=softib0:1" \
			ucx_run ucp_put_bw 65536 20000)
		[ -n "$l" ] && R[ucx_bw_r$i]=$(calc "$(echo "$l" | awk '{ print $7 }') * 1.048576")
		l=$(UCX_RUN="$SOFTIB run" UCX_ENV="UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=softib0:1" \
			ucx_run tag_lat 8 20000)
		[ -n "$l" ] && R[ucx_lat_r$i]=$(echo "$l" | awk '{ print $3 }')
		printf '  round %d: UCX tcp %s MB/s, %s us; UCX rc_verbs on softib0 %s MB/s, %s us\n' \
			"$i" "${R[peer_bw_u_r$i]:-?}" "${R[peer_lat_u_r$i]:-?}" "${R[ucx_bw_r$i]:-?}" \
			"${R[ucx_lat_r$i]:-?}"
	done
	median_of ucx_bw MB/s
	median_of ucx_lat us
	ratio_of ucx_bw peer_bw_u
	ratio_of ucx_lat peer_lat_u
	[ -n "${R[ucx_bw]:-}" ] && [ -n "${R[ucx_lat]:-}" ]
}

# The two UDP link backends (SOFTIB_LINK, man softib-performance(7)) side by side
# (issue 21 item 3): BENCH_REPEAT rounds, each measuring the socket link
# and then the io_uring link, the first to go taking turns; the ratios are
# the medians of the rounds' ratios.  The io_uring link is the default
# when it holds both targets (link/link.c).
bench_backends() {
	section "softib: ib_write_bw and ib_send_lat per link backend (SOFTIB_LINK)"
	command -v ib_write_bw >/dev/null && command -v ib_send_lat >/dev/null || {
		echo "  skipped: perftest not installed (Debian package perftest; make deps)"
		return 1
	}
	local i b order
	for ((i = 1; i <= REPEAT; i++)); do
		order="socket uring"
		[ $((i % 2)) = 0 ] && order="uring socket"
		for b in $order; do
			SOFTIB_LINK=$b pt_run "write_bw_$b""_r$i" bw ib_write_bw -s 65536 -D "$SECS"
			SOFTIB_LINK=$b pt_run "send_lat_$b""_r$i" lat ib_send_lat -s 8 -n "$ITERS"
			if grep -q 'io_uring is unavailable' "$TMP/pt-cli.txt"; then
				echo "  ($b: io_uring is unavailable here; those were the socket link)"
				R[uring_missing]=1
			fi
		done
	done
	for b in socket uring; do
		median_of "write_bw_$b" MB/s
		median_of "send_lat_$b" us
	done
	[ -n "${R[uring_missing]:-}" ] && return 0
	ratio_of write_bw_uring write_bw_socket
	ratio_of send_lat_uring send_lat_socket
}

# What one io_uring request costs against the system call it replaces
# (uring_cost.c): why the io_uring link's ib_send_lat cannot come within
# 1.05 x the socket link's, whose every hop is empty polls, one receive
# and one send, each a system call there and a request here.
bench_uring_cost() {
	section "io_uring request against system call (thread CPU time, one datagram at a time)"
	if [ ! -x "$B/bench/uring_cost" ]; then
		echo "  skipped: $B/bench/uring_cost not built"
		return 1
	fi
	"$B/bench/uring_cost" >"$TMP/uring_cost.txt" 2>&1
	cat "$TMP/uring_cost.txt"
	local k
	for k in empty_poll_syscall empty_poll_uring echo_syscall echo_uring; do
		R[$k]=$(sed -n "s/.*${k}_ns=\([0-9.]*\).*/\1/p" "$TMP/uring_cost.txt")
	done
}

# Programs that wait on memory or on a completion channel (issue 21):
# qperf's rc_rdma_write_poll_lat (the target spins on memory until the
# WRITE lands) against its rc_rdma_write_lat (event mode) in the same
# client run; qperf rc_lat (event mode, its default) and ibv_rc_pingpong
# -e -s 8 against a blocking UDP ping-pong of the same shape (udp_limit
# -L: a request and an ACK per hop, both ends in a blocking recv; qperf
# reports half a round trip, ibv_rc_pingpong a whole one).  Each round
# measures the reference right before; the ratios are the rounds' medians.
# Then the thread wake-ups per message received (softib info --pid, two
# samples a second apart in the middle of a long run) of an event-mode and
# a polling ibv_rc_pingpong server; a blocking UDP receiver has one.

# qperf's "latency = 14.2 us" (or ns, ms) -> microseconds
qperf_us() {
	awk -v t="$2:" '$1 == t { f = 1; next }
		f && $1 == "latency" { v = $3; u = $4
			if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "sec" || u == "s") v *= 1e6
			print v; exit }' "$1"
}

# wakes_per_msg NAME ARGS...: ibv_rc_pingpong ARGS, server sampled
wakes_per_msg() {
	local name=$1 port=$((PORT++)) srv cli pid a b
	shift
	timeout 60 "$SOFTIB" run ibv_rc_pingpong -d softib0 "$@" -n 10000000 -p "$port" \
		>"$TMP/wk-srv.txt" 2>&1 &
	srv=$!
	sleep 1
	timeout 60 "$SOFTIB" run ibv_rc_pingpong -d softib0 "$@" -n 10000000 -p "$port" 127.0.0.1 \
		>"$TMP/wk-cli.txt" 2>&1 &
	cli=$!
	sleep 2
	pid=$(pgrep -P "$srv" | head -1)
	a=$("$SOFTIB" info --pid "${pid:-$srv}" 2>/dev/null | grep 'wake-ups')
	sleep 1
	b=$("$SOFTIB" info --pid "${pid:-$srv}" 2>/dev/null | grep 'wake-ups')
	kill "$cli" "$srv" 2>/dev/null
	wait "$cli" "$srv" 2>/dev/null
	# "  wake-ups  M messages in, W thread wake-ups (progress thread T, ... waiting for events A, ... to it E)"
	if [ -z "$a" ] || [ -z "$b" ]; then
		printf '  %-28s FAILED (no counters)\n' "$name"
		return 1
	fi
	local ma wa mb wb
	ma=$(echo "$a" | awk '{ print $2 }') wa=$(echo "$a" | awk '{ print $5 }')
	mb=$(echo "$b" | awk '{ print $2 }') wb=$(echo "$b" | awk '{ print $5 }')
	[ "$mb" -gt "$ma" ] || { printf '  %-28s FAILED (no messages)\n' "$name"; return 1; }
	R[$name]=$(calc "($wb - $wa) / ($mb - $ma)")
	printf '  %-28s %10.3f wake-ups per message (%d messages; at the end:%s)\n' "$name" \
		"${R[$name]}" $((mb - ma)) "$(echo "$b" | sed 's/.*thread wake-ups//')"
}

bench_wait() {
	section "softib: programs that wait on memory and on completion channels"
	local t
	for t in qperf ibv_rc_pingpong; do
		if ! command -v $t >/dev/null; then
			echo "  skipped: $t not installed (make deps)"
			return 1
		fi
	done
	[ -x "$B/bench/udp_limit" ] || { echo "  skipped: $B/bench/udp_limit not built"; return 1; }
	local qport=$((PORT++)) qsrv i line qs=${BENCH_QPERF_SECONDS:-2}
	timeout 600 "$SOFTIB" run qperf -lp "$qport" >"$TMP/qperf-srv.txt" 2>&1 &
	qsrv=$!
	sleep 1
	for ((i = 1; i <= REPEAT; i++)); do
		"$B/bench/udp_limit" -L -n "${UDP_LIMIT_ITERS:-20000}" >"$TMP/udpw.txt" 2>&1
		R[ublock_r$i]=$(sed -n 's/.*half_rtt_blocking_us=\([0-9.]*\).*/\1/p' "$TMP/udpw.txt")
		R[upblock_r$i]=$(sed -n 's/.*half_rtt_pair_blocking_us=\([0-9.]*\).*/\1/p' "$TMP/udpw.txt")
		[ "${R[upblock_r$i]:-0}" = 0.00 ] && R[upblock_r$i]=
		[ -n "${R[upblock_r$i]:-}" ] && R[upblock2_r$i]=$(calc "2 * ${R[upblock_r$i]}")
		timeout 120 "$SOFTIB" run qperf -lp "$qport" -t "$qs" 127.0.0.1 rc_rdma_write_lat \
			rc_rdma_write_poll_lat rc_lat >"$TMP/qperf.txt" 2>&1
		R[q_wlat_r$i]=$(qperf_us "$TMP/qperf.txt" rc_rdma_write_lat)
		R[q_wpoll_r$i]=$(qperf_us "$TMP/qperf.txt" rc_rdma_write_poll_lat)
		R[q_rclat_r$i]=$(qperf_us "$TMP/qperf.txt" rc_lat)
		local port=$((PORT++))
		timeout 90 "$SOFTIB" run ibv_rc_pingpong -d softib0 -e -s 8 -n "$ITERS" -p "$port" \
			>"$TMP/ppe-srv.txt" 2>&1 &
		local srv=$!
		sleep 1
		timeout 90 "$SOFTIB" run ibv_rc_pingpong -d softib0 -e -s 8 -n "$ITERS" -p "$port" \
			127.0.0.1 >"$TMP/ppe-cli.txt" 2>&1
		wait "$srv" 2>/dev/null
		R[pp_e_r$i]=$(awk '/usec\/iter/ { print $(NF-1) }' "$TMP/ppe-cli.txt")
		printf '  round %d: UDP blocking half RTT %s us (req+ACK %s us); qperf rc_rdma_write_lat %s us, rc_rdma_write_poll_lat %s us, rc_lat %s us; ibv_rc_pingpong -e %s us per round trip\n' \
			"$i" "${R[ublock_r$i]:-?}" "${R[upblock_r$i]:-?}" "${R[q_wlat_r$i]:-?}" \
			"${R[q_wpoll_r$i]:-?}" "${R[q_rclat_r$i]:-?}" "${R[pp_e_r$i]:-?}"
	done
	kill "$qsrv" 2>/dev/null
	wait "$qsrv" 2>/dev/null
	median_of upblock us
	median_of ublock us
	median_of q_wlat us
	median_of q_wpoll us
	median_of q_rclat us
	median_of pp_e us
	ratio_of q_wpoll q_wlat
	ratio_of q_rclat upblock
	ratio_of pp_e upblock2
	wakes_per_msg wakes_event -e -s 8
	wakes_per_msg wakes_poll -s 8
	return 0
}

# An idle softib process: device open, two RC QPs connected, no traffic.
bench_idle() {
	section "softib: an idle process (device open, QPs connected, no traffic)"
	local helper=$B/helpers/verbs_idle a b t0 t1
	if [ ! -x "$helper" ]; then
		echo "  skipped: $helper not built"
		return 1
	fi
	"$SOFTIB" run "$helper" 10 >"$TMP/idle.txt" 2>&1 &
	local pid=$!
	for _ in $(seq 50); do
		grep -q ready "$TMP/idle.txt" && break
		sleep 0.1
	done
	if ! grep -q ready "$TMP/idle.txt"; then
		echo "  FAILED:"
		sed 's/^/    /' "$TMP/idle.txt"
		kill "$pid" 2>/dev/null
		return 1
	fi
	sleep 0.5
	a=$(cpu_ns $pid) t0=$(date +%s%N)
	sleep 4
	b=$(cpu_ns $pid) t1=$(date +%s%N)
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	R[idle_cpu]=$(calc "($b - $a) / ($t1 - $t0)")
	printf '  %-28s %10.4f cores\n' "idle process" "${R[idle_cpu]}"
}

# ---------------------------------------------------------------- the table

# a number with two decimals, or "-"
num() {
	if [ -z "$1" ] || [ "$1" = - ]; then echo -; else printf '%.2f' "$1"; fi
}

# rounds_median NAME: the median of R[NAME_r1..REPEAT], or nothing
rounds_median() {
	local i v vals=()
	for ((i = 1; i <= REPEAT; i++)); do
		v=${R[${1}_r$i]:-}
		[ -n "$v" ] && vals+=("$v")
	done
	[ ${#vals[@]} -gt 0 ] || return 0
	printf '%s\n' "${vals[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# row LABEL VALUE UNIT LINK PEER HIGHER_IS_BETTER TARGET_TEXT VERDICT [XLINK XPEER]
# XLINK/XPEER, when given, are the paired ratios (ratio_of) to show.
row() {
	local label=$1 v=$2 unit=$3 link=$4 peer=$5 hib=$6 target=$7 verdict=$8 rl=- rp=-
	if [ -z "$v" ]; then
		printf '%-26s %10s %-5s %8s %8s %8s %8s  %-22s %s\n' "$label" "n/a" "$unit" - - - - \
			"$target" "${verdict:+-}"
		return
	fi
	# ratios as softib / reference, so >1 is more (bandwidth: better;
	# latency: slower)
	[ -n "$link" ] && [ "$link" != - ] && rl=$(calc "$v / $link")
	[ -n "$peer" ] && [ "$peer" != - ] && rp=$(calc "$v / $peer")
	[ -n "${9:-}" ] && rl=$9
	[ -n "${10:-}" ] && rp=${10}
	printf '%-26s %10.2f %-5s %8s %8s %8s %8s  %-22s %s\n' "$label" "$v" "$unit" \
		"$(num "$link")" "$(num "$rl")" "$(num "$peer")" "$(num "$rp")" "$target" "$verdict"
}

# verdict COND... : "pass" when every awk condition holds, "MISS" else,
# empty when a figure is missing.
verdict() {
	local c
	for c in "$@"; do
		if ! awk "BEGIN { exit !($c) }" 2>/dev/null; then
			echo MISS
			return
		fi
	done
	echo pass
}

table() {
	local lb=${R[link_bw]:-} ll=${R[link_lat]:-} pb=${R[peer_bw]:-} pl=${R[peer_lat]:-}
	local wb=${R[write_bw]:-} sl=${R[send_lat]:-} q8=${R[write_bw_q8]:-}
	local v1= v2= v3= v4= v5= lv=${R[link_lat_variant]:-?}
	# The figures with targets against their paired references (the
	# rounds' medians; ratios are the medians of the rounds' ratios).
	local rlb rll rpb rpl
	rlb=$(rounds_median link_bw) rll=$(rounds_median link_lat)
	rpb=$(rounds_median peer_bw) rpl=$(rounds_median peer_lat)
	local xwl=${R[write_bw_x_link_bw]:-} xwp=${R[write_bw_x_peer_bw]:-}
	local xsl=${R[send_lat_x_link_lat]:-} xsp=${R[send_lat_x_peer_lat]:-}
	local xq8=${R[write_bw_q8_x_write_bw]:-}
	local ub=${R[ucx_bw]:-} ul=${R[ucx_lat]:-} v6= v7=
	local upb upl xub=${R[ucx_bw_x_peer_bw_u]:-} xul=${R[ucx_lat_x_peer_lat_u]:-}
	upb=$(rounds_median peer_bw_u) upl=$(rounds_median peer_lat_u)
	# the io_uring link against the socket link (issue 21 item 3); "link"
	# is the socket link's figure there
	local xwu=${R[write_bw_uring_x_write_bw_socket]:-} xsu=${R[send_lat_uring_x_send_lat_socket]:-}
	local v8= v9=
	[ -n "$xwu" ] && v8=$(verdict "$xwu >= 0.95")
	[ -n "$xsu" ] && v9=$(verdict "$xsu <= 1.05")
	[ -n "$xub" ] && v6=$(verdict "$xub >= 1.5")
	[ -n "$xul" ] && v7=$(verdict "$xul <= 1")
	# without rounds (BENCH_QUICK): the single ratios
	[ -z "$rlb" ] && rlb=$lb
	[ -z "$rpb" ] && rpb=$pb
	[ -z "$xwl" ] && [ -n "$wb" ] && [ -n "$lb" ] && xwl=$(calc "$wb / $lb")
	[ -z "$xwp" ] && [ -n "$wb" ] && [ -n "$pb" ] && xwp=$(calc "$wb / $pb")
	[ -n "$xwl" ] && [ -n "$xwp" ] && v1=$(verdict "$xwl >= 0.7" "$xwp >= 1.5")
	[ -n "$xsl" ] && [ -n "$xsp" ] && v2=$(verdict "$xsl <= 1.25" "$xsp <= 1")
	[ -n "$xq8" ] && v3=$(verdict "$xq8 >= 1")
	[ -n "${R[idle_cpu]:-}" ] && v4=$(verdict "${R[idle_cpu]} < 0.01")
	[ -n "${R[passive_cpu]:-}" ] && v5=$(verdict "${R[passive_cpu]} <= 1")

	section "Summary (MB/s = 10^6 B/s; us = median; ratio = softib / reference)"
	printf '%-26s %10s %-5s %8s %8s %8s %8s  %-22s %s\n' "figure" "softib" "unit" "link" \
		"x link" "peer" "x peer" "target (issue 6,19,21)" "result"
	row "link: raw UDP goodput" "$lb" "MB/s" - - 1 "" ""
	row "link: UDP GSO to GRO" "${R[link_gro]:-}" "MB/s" - - 1 "" ""
	row "link: UDP half RTT, $lv" "$ll" "us" - - 0 "" ""
	row "link: req+ACK half RTT" "${R[link_pair]:-}" "us" - - 0 "" ""
	row "peer: UCX tcp put_bw 64K" "$pb" "MB/s" - - 1 "" ""
	row "peer: UCX tcp tag_lat 8" "$pl" "us" - - 0 "" ""
	row "ib_write_bw 64 KiB" "$wb" "MB/s" "$rlb" "$rpb" 1 ">=0.7 link, >=1.5 peer" "$v1" \
		"$xwl" "$xwp"
	row "ib_write_bw 64 KiB vs GRO" "$wb" "MB/s" "${R[link_gro]:-}" "$pb" 1 "" ""
	row "ib_write_bw 64 KiB -q 8" "$q8" "MB/s" "$rlb" "$rpb" 1 ">= -q 1 (x$(num "$xq8"))" "$v3"
	row "ib_read_bw 64 KiB" "${R[read_bw]:-}" "MB/s" "$lb" "$pb" 1 "" ""
	row "ib_send_bw 4 KiB" "${R[send_bw]:-}" "MB/s" "$lb" "$pb" 1 "" ""
	row "ib_send_bw 64 B (Mpps)" "${R[send_bw_64_rate]:-}" "Mpps" - - 1 "" ""
	row "ib_send_lat 8 B (vs $lv)" "$sl" "us" "$rll" "$rpl" 0 "<=1.25 link, <=1 peer" "$v2" \
		"$xsl" "$xsp"
	local xsa=${R[send_lat_x_link_pair]:-} vsa=
	[ -n "$xsa" ] && vsa=$(verdict "$xsa <= 1.25")
	row "ib_send_lat 8 B vs req+ACK" "$sl" "us" "$(rounds_median link_pair)" "$rpl" 0 \
		"<=1.25 req+ACK (21)" "$vsa" "$xsa"
	row "engine hop, no kernel" "${R[engine_hop]:-}" "us" - - 0 "" ""
	row "engine hop, UDP, 1 thread" "${R[engine_hop_udp]:-}" "us" - - 0 "" ""
	row "ib_write_lat 8 B" "${R[write_lat]:-}" "us" "$ll" "$pl" 0 "" ""
	row "ib_read_lat 8 B" "${R[read_lat]:-}" "us" "$ll" "$pl" 0 "" ""
	row "ib_atomic_lat" "${R[atomic_lat]:-}" "us" "$ll" "$pl" 0 "" ""
	row "ib_write_bw 64K, socket" "${R[write_bw_socket]:-}" "MB/s" "$rlb" "$rpb" 1 "" ""
	row "ib_write_bw 64K, uring" "${R[write_bw_uring]:-}" "MB/s" "${R[write_bw_socket]:-}" - 1 \
		">=0.95 socket (21)" "$v8" "$xwu"
	row "ib_send_lat 8 B, socket" "${R[send_lat_socket]:-}" "us" "$rll" "$rpl" 0 "" ""
	row "ib_send_lat 8 B, uring" "${R[send_lat_uring]:-}" "us" "${R[send_lat_socket]:-}" - 0 \
		"<=1.05 socket (21)" "$v9" "$xsu"
	row "empty poll, io_uring" "${R[empty_poll_uring]:-}" "ns" "${R[empty_poll_syscall]:-}" - 0 \
		"" ""
	row "64 B out and in, io_uring" "${R[echo_uring]:-}" "ns" "${R[echo_syscall]:-}" - 0 "" ""
	row "UCX rc_verbs put_bw 64K" "$ub" "MB/s" - "$upb" 1 ">=1.5 UCX tcp (19)" "$v6" "" "$xub"
	row "UCX rc_verbs tag_lat 8" "$ul" "us" - "$upl" 0 "<=1 UCX tcp (19)" "$v7" "" "$xul"
	# issue 21: waiting on memory and on completion channels ("link" is
	# the reference named in each label)
	local xwp=${R[q_wpoll_x_q_wlat]:-} xrc=${R[q_rclat_x_upblock]:-} xpe=${R[pp_e_x_upblock2]:-}
	row "qperf rc_rdma_write_lat" "${R[q_wlat]:-}" "us" - - 0 "" ""
	row "write_poll_lat vs ^" "${R[q_wpoll]:-}" "us" "${R[q_wlat]:-}" - 0 "<=1.5 write_lat (21)" \
		"$([ -n "$xwp" ] && verdict "$xwp <= 1.5")" "$xwp"
	row "UDP blocking half RTT" "${R[ublock]:-}" "us" - - 0 "" ""
	row "UDP blocking req+ACK" "${R[upblock]:-}" "us" - - 0 "" ""
	row "qperf rc_lat (events)" "${R[q_rclat]:-}" "us" "${R[upblock]:-}" - 0 "<=1 UDP blocking (21)" \
		"$([ -n "$xrc" ] && verdict "$xrc <= 1")" "$xrc"
	row "rc_pingpong -e RTT" "${R[pp_e]:-}" "us" "$([ -n "${R[upblock]:-}" ] && calc "2 * ${R[upblock]}")" \
		- 0 "<=1 UDP blocking (21)" "$([ -n "$xpe" ] && verdict "$xpe <= 1")" "$xpe"
	row "wake-ups/msg, events" "${R[wakes_event]:-}" "" 1 - 0 "" ""
	row "wake-ups/msg, polling" "${R[wakes_poll]:-}" "" - - 0 "" ""
	row "idle process CPU" "${R[idle_cpu]:-}" "cores" - - 0 "< 0.01 core" "$v4"
	row "ib_write_bw passive CPU" "${R[passive_cpu]:-}" "cores" - - 0 "<= 1 core" "$v5"
	row "CRC ICRC+VCRC" "${R[crc]:-}" "GB/s" - - 1 ">= 4 GB/s" \
		"$([ -n "${R[crc]:-}" ] && verdict "${R[crc]} >= 4")"
}

SECTIONS=(bench_crc bench_engine bench_udp_limit bench_peer bench_softib bench_ucx bench_backends
	bench_uring_cost bench_wait bench_idle)
# BENCH_SECTIONS="bench_softib ..." runs a subset (while working on one figure)
[ -n "${BENCH_SECTIONS:-}" ] && read -r -a SECTIONS <<<"$BENCH_SECTIONS"

status=0
for s in "${SECTIONS[@]}"; do
	"$s" || status=1
done
table
exit $status

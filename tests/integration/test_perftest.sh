#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# perftest between two processes on loopback under `softib run`:
#   RC, every size (-a, 2 B to 8 MiB): ib_send_bw, ib_send_lat, ib_write_bw,
#       ib_write_lat, ib_read_bw, ib_read_lat;
#   UC: ib_send_bw, ib_write_bw;  UD: ib_send_bw, ib_send_lat;
#   ib_write_bw under SOFTIB_RATE (the transmit scheduler holds to a rate).
# -F because a container's /proc/cpuinfo may have no usable "cpu MHz"; -n
# small so that the 8 MiB rows stay quick (UC relies on it too: UC has no
# RNR retry, and with no more iterations than perftest's receive depth every
# receive is posted before the first send).
#
# Both sides must exit 0.  The client must print its result table: the
# header line and one row per size.  Servers print what perftest makes them
# print: send_bw, send_lat and write_lat servers the same rows as their
# client; write_bw and read_bw servers one row (the client's report, sent
# back at the end); the read_lat server no table at all.
. "$(dirname "$0")/lib.sh"

sib_init perftest
sib_need ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat ss timeout
sib_need_sm

ITERS=${PERFTEST_ITERS:-10}
LIMIT=${PERFTEST_LIMIT:-300}
BW_HEADER='^ #bytes +#iterations +BW peak\[(MB|Gb)/sec\]'
LAT_HEADER='^ #bytes +#iterations +t_min\[usec\]'
ROW='^ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]+'
ALL_SIZES=$(for ((i = 1; i < 24; i++)); do echo $((1 << i)); done | tr '\n' ' ')
failed=()

# The first column of every table row in FILE, space-separated.
row_sizes()
{
	grep -E -- "$ROW" "$1" | awk '{ printf "%s ", $1 }'
}

# check_table FILE HEADER_RE WANT WHO: WANT is "all" (one row per size of
# -a), "one" (at least one row) or "none" (no table).
check_table()
{
	local file=$1 header=$2 want=$3 who=$4 sizes n

	[ "$want" = none ] && return 0
	sib_expect "$file" "$header" "$who: table header" || return 1
	sizes=$(row_sizes "$file")
	n=$(wc -w <<<"$sizes")
	case $want in
	all)
		if [ "$sizes" != "$ALL_SIZES" ]; then
			echo "FAIL: $who: table rows for sizes '$sizes', expected '$ALL_SIZES'"
			return 1
		fi ;;
	one)
		if [ "$n" -lt 1 ]; then
			echo "FAIL: $who: no table row"
			return 1
		fi ;;
	esac
	return 0
}

# run_case NAME CLIENT_ROWS SERVER_ROWS PROG ARGS...
run_case()
{
	local name=$1 crows=$2 srows=$3 prog=$4 header=$BW_HEADER port ok=1

	shift 3
	case $prog in *_lat) header=$LAT_HEADER ;; esac
	port=$(sib_free_port tcp) || exit 1
	if sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 "$@" -d softib0 -i 1 -F -n "$ITERS"; then
		check_table "$(sib_out "$name.client")" "$header" "$crows" "$name client" || ok=0
		check_table "$(sib_out "$name.server")" "$header" "$srows" "$name server" || ok=0
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

run_case rc_send_bw   all all  ib_send_bw -a
run_case rc_send_lat  all all  ib_send_lat -a
run_case rc_write_bw  all one  ib_write_bw -a
run_case rc_write_lat all all  ib_write_lat -a
run_case rc_read_bw   all one  ib_read_bw -a
run_case rc_read_lat  all none ib_read_lat -a
run_case uc_send_bw   one one  ib_send_bw -c UC
run_case uc_write_bw  one one  ib_write_bw -c UC
run_case ud_send_bw   one one  ib_send_bw -c UD
run_case ud_send_lat  one one  ib_send_lat -c UD

# The port's transmit scheduler holds packets to a rate (SOFTIB_RATE,
# docs/architecture.md, the transmit rule): at 100 Mb/s, 64 KiB RDMA WRITEs
# (headers and ACKs included in the rate) move at most 100e6 / 8 bytes a
# second, 11.9 MiB/s as perftest counts; without it, hundreds of times
# more.  Only the upper bound is checked: a loaded machine moves less.
rate_case()
{
	local name=rate_write_bw port bw

	port=$(sib_free_port tcp) || exit 1
	if ! SOFTIB_RATE=100M sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 ib_write_bw -d softib0 \
		-i 1 -F -s 65536 -n 300; then
		failed+=("$name")
		return
	fi
	bw=$(grep -E -- "$ROW" "$(sib_out "$name.client")" | awk '{ print $4; exit }')
	if [ -z "$bw" ] || ! awk -v bw="$bw" 'BEGIN { exit !(bw > 0 && bw <= 12.5) }'; then
		echo "FAIL: $name: SOFTIB_RATE=100M moved ${bw:-?} MB/s; at most 11.9 expected"
		sib_show "$name.client"
		failed+=("$name")
		return
	fi
	echo "ok: $name ($bw MB/s under SOFTIB_RATE=100M)"
}
rate_case

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: perftest: ${failed[*]}"
	exit 1
fi
echo "perftest: all cases passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Both UDP link backends carry real traffic: ibv_rc_pingpong and
# ibv_ud_pingpong between two processes, once with SOFTIB_LINK=socket and
# once with SOFTIB_LINK=uring.  SOFTIB_LOG=info makes each port say which
# backend it opened ("link: UDP ... (sockets)" or "(io_uring)"), so a
# silent fallback cannot pass as uring.  Where io_uring cannot be set up
# the uring cases are skipped (with the reason) and the socket ones still run.
. "$(dirname "$0")/lib.sh"

sib_init link_backends
sib_need ibv_rc_pingpong ibv_ud_pingpong ss timeout
sib_need_sm

ITERS=${PINGPONG_ITERS:-100}
LIMIT=${PINGPONG_LIMIT:-300}
failed=()
ran=0

# run_case BACKEND NAME PROG ARGS...
run_case()
{
	local backend=$1 name=$2 port ok=1 side tag

	shift 2
	[ "$backend" = uring ] && tag='\(io_uring\)' || tag='\(sockets\)'
	port=$(sib_free_port tcp) || exit 1
	if SOFTIB_LINK=$backend SOFTIB_LOG=info \
		sib_pair "$name" "$LIMIT" "$port" 127.0.0.1 "$@" -n "$ITERS"; then
		for side in server client; do
			if [ "$backend" = uring ] &&
				grep -q 'io_uring is unavailable here' "$(sib_out "$name.$side")"; then
				echo "skip: $name: $(grep -m1 'io_uring is unavailable' \
					"$(sib_out "$name.$side")")"
				return 0
			fi
			sib_expect "$(sib_out "$name.$side")" "link: UDP .* $tag, active MTU" \
				"$name $side on the $backend link" || ok=0
			sib_expect "$(sib_out "$name.$side")" \
				"^$ITERS iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" \
				"$name $side latency" || ok=0
		done
		[ $ok -eq 1 ] || sib_show "$name.server" "$name.client"
	else
		ok=0
	fi
	if [ $ok -eq 1 ]; then
		echo "ok: $name"
		ran=$((ran + 1))
	else
		failed+=("$name")
	fi
}

for backend in socket uring; do
	run_case "$backend" "${backend}_rc" ibv_rc_pingpong -d softib0 -i 1
	run_case "$backend" "${backend}_ud" ibv_ud_pingpong -d softib0 -i 1
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: link_backends: ${failed[*]}"
	exit 1
fi
echo "link_backends: $ran cases passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Once a program opens /dev/infiniband/rdma_cm, softib hooks SIGTERM,
# SIGINT, SIGHUP and the crash signals where the program left them at
# their default action, to send its goodbyes (provider/ucma.c).  The
# program must not see it (tests/helpers/ucma_signals.c):
#  - SIGTERM and SIGHUP end a program waiting in poll by their default
#    action: the same status as without softib (143, 129), and the program
#    never sees EINTR;
#  - SIGINT likewise (130), and one the program inherited as ignored stays
#    ignored;
#  - the program's own SIGTERM handler runs, installed before or after the
#    open, and one that chains to the handler it replaced goes on running;
#  - a program that blocks SIGTERM and takes it with sigwait gets it
#    (softib's own threads never take a signal).
. "$(dirname "$0")/lib.sh"

sib_init ucma_signals
sib_need_sm
helper=$B/helpers/ucma_signals
[ -x "$helper" ] || sib_fail "$helper not built"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The program's own pid under timeout(1) (softib run execs the program).
prog_pid()
{
	local i p

	for ((i = 0; i < 600; i++)); do
		p=$(pgrep -P "${SIB_PID[$1]}" | head -n1)
		[ -n "$p" ] && grep -q '^ready$' "$(sib_out "$1")" && { echo "$p"; return 0; }
		kill -0 "${SIB_PID[$1]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# default_case SIG STATUS: the signal ends the waiting program by its
# default action.
default_case()
{
	local sig=$1 want=$2 id=default.$1 pid

	sib_start "$id" 120 "$SOFTIB" run -- "$helper" default
	if ! pid=$(prog_pid "$id"); then
		sib_wait "$id"
		bad "$sig: the program never got ready (exit ${SIB_RC[$id]})"
		sib_show "$id"
		return
	fi
	kill -s "$sig" "$pid"
	sib_wait "$id"
	if [ "${SIB_RC[$id]}" -ne "$want" ] || grep -q EINTR "$(sib_out "$id")"; then
		bad "$sig: exit ${SIB_RC[$id]} (want $want, the default action's)"
		sib_show "$id"
	else
		echo "ok: $sig ends the program with status $want, no EINTR"
	fi
}
default_case TERM 143
default_case HUP 129

# SIGINT: one the program inherited as ignored (a background job's) stays
# ignored; otherwise it ends the program with status 130.
sib_start int 120 "$SOFTIB" run -- "$helper" default
if pid=$(prog_pid int); then
	ign=$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$pid/status")
	kill -s INT "$pid"
	if (((0x$ign >> 1) & 1)); then
		sleep 1
		if kill -0 "$pid" 2>/dev/null; then
			echo "ok: an ignored SIGINT stays ignored"
		else
			bad "the program died of a SIGINT it ignores"
		fi
		kill -s TERM "$pid" 2>/dev/null
		sib_wait int
	else
		sib_wait int
		if [ "${SIB_RC[int]}" -ne 130 ] || grep -q EINTR "$(sib_out int)"; then
			bad "INT: exit ${SIB_RC[int]} (want 130, the default action's)"
			sib_show int
		else
			echo "ok: INT ends the program with status 130, no EINTR"
		fi
	fi
else
	sib_wait int
	bad "INT: the program never got ready"
fi

for mode in own late chain; do
	sib_run "$mode" 120 "$SOFTIB" run -- "$helper" "$mode"
	rc=${SIB_RC[$mode]}
	want='own handler ran'
	[ "$mode" = chain ] && want='still running'
	if [ "$rc" -eq 0 ] && grep -qx "$want" "$(sib_out "$mode")"; then
		echo "ok: $mode: $want"
	else
		bad "$mode: exit $rc"
		sib_show "$mode"
	fi
done

sib_start sigwait 120 "$SOFTIB" run -- "$helper" sigwait
if pid=$(prog_pid sigwait); then
	kill -s TERM "$pid"
	sib_wait sigwait
	if [ "${SIB_RC[sigwait]}" -eq 0 ] && grep -qx 'sigwait got 15' "$(sib_out sigwait)"; then
		echo "ok: sigwait gets the SIGTERM"
	else
		bad "sigwait: exit ${SIB_RC[sigwait]}"
		sib_show sigwait
	fi
else
	sib_wait sigwait
	bad "sigwait: the program never got ready"
	sib_show sigwait
fi

[ $fail -eq 0 ] || exit 1
echo "ucma_signals: all cases passed"

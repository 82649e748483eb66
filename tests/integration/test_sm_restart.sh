#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What used to fail: restarting the SM renumbered every port, and RC
# connections died with RETRY_EXC_ERR.  Now a port traps again when its SM
# has been silent for 8 s, reporting its LID, and the restarted SM (same
# key file) gives every port back the LID it had: an ib_write_bw that runs
# across `kill -9` of the SM and its restart completes, and the restarted
# SM's joins pair each port GUID with the LID the first SM gave it; a port
# that joins right after the restart gets a LID none of them had.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init sm_restart
sib_need ib_write_bw ss timeout pgrep
st_setup

DURATION=${SM_RESTART_SECONDS:-20}
# -u 18: a local ACK timeout of about 1 s (8 s with the retries) instead of
# 67 ms.  What this test checks is the SM's restart, not how long a QP
# bears being starved of CPU on a loaded machine (an intermittent
# RETRY_EXC_ERR there is a separate issue); a renumbered port still fails
# it, since its peer's packets never match its new LID.
QP_TIMEOUT=18
st_sm sm1 "$SOFTIB_SM"
# A port that comes and goes first: the perftest ports get LIDs a fresh
# count would not give them (a restarted SM that renumbered would show).
st_hold filler
st_release filler
port=$(sib_free_port tcp)
sib_start server $((DURATION + 60)) "$SOFTIB" run -- ib_write_bw -F -u "$QP_TIMEOUT" -D "$DURATION" -p "$port"
sib_wait_listen server "$port" || sib_fail "the server never listened"
sib_start client $((DURATION + 60)) "$SOFTIB" run -- ib_write_bw -F -u "$QP_TIMEOUT" -D "$DURATION" -p "$port" 127.0.0.1
sleep 3
# "GUID:LID" of the ports that joined FILE's SM (the last LID of each),
# sorted; with skip, all but the first port (the filler).
joins()
{
	awk -v skip="${2:-0}" '/ joined: LID / { if (!($3 in lid)) n[$3] = k++; lid[$3] = $6 }
		END { for (g in lid) if (n[g] >= skip) print g ":" lid[g] }' "$1" | sort | tr '\n' ' '
}
before=$(joins "$(sib_out sm1)" 1)
[ "$(wc -w <<<"$before")" -eq 2 ] || sib_fail "the first SM's perftest joins '$before', want two"
sib_log "the first SM gave (GUID:LID) $before; kill -9 it under traffic"
smpid=$(pgrep -P "${SIB_PID[sm1]}" | head -1)
kill -KILL "$smpid" 2>/dev/null
{ sib_wait sm1; } 2>/dev/null
sleep 1
st_sm sm2 "$SOFTIB_SM"
# A port that joins before the others have trapped again must not take one
# of their LIDs (the SM's LID cache keeps them).
st_hold newcomer
newcomer=$(st_info "${ST_PID[newcomer]}" LID | awk '{ print $1 }')
for gl in $before; do
	[ "${gl#*:}" != "$newcomer" ] || sib_fail "a port that joined after the restart took LID $newcomer"
done
# The ports notice the silence (8 s) and trap; the SM gives their LIDs back.
for ((i = 0; i < 125; i++)); do
	[ "$(grep -c 'joined: LID' "$(sib_out sm2)")" -ge 3 ] && break
	sleep 0.2
done
after=$(awk -v n="$newcomer" '/ joined: LID / && $6 != n { print $3 ":" $6 }' "$(sib_out sm2)" |
	sort -u | tr '\n' ' ')
sib_log "the restarted SM gave $after"
sib_wait client
rc=$?
sib_wait server
rs=$?
[ $rc -eq 0 ] && [ $rs -eq 0 ] || sib_fail "ib_write_bw: client $(sib_status_text $rc), server $(sib_status_text $rs)"
sib_expect "$(sib_out client)" '^ +65536 +[0-9]+ +[0-9.]+ +[0-9.]+' "the client's result row" || sib_fail "no result"
[ "$after" = "$before" ] || sib_fail "LIDs before the restart '$before', after '$after'"
st_release newcomer
echo "sm_restart: ib_write_bw ran through the restart; the ports kept their LIDs"

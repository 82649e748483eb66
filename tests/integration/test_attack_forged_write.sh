#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: an RDMA WRITE with a sniffed R_Key and PSN
# (and the peer's SLID), sent from an unrelated socket, landed in memory.
# Now a connected QP takes packets only from the endpoint its destination
# resolved to: the forged WRITE is dropped and counted (wrong_endpoint),
# the buffer stays as it was, and the real peer's next WRITE lands.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_forged_write
sib_need timeout pgrep
st_setup
[ -x "$B/helpers/verbs_write_target" ] || sib_skip "verbs_write_target is not built"

st_sm sm "$SOFTIB_SM"
fifo=$SIB_TMP/target.in
mkfifo "$fifo"
timeout -k 5 60 "$SOFTIB" run "$B/helpers/verbs_write_target" <"$fifo" >"$(sib_out target)" 2>&1 &
SIB_PID[target]=$!
exec {go}>"$fifo"
st_wait_for "$(sib_out target)" '^target lid' 15 || sib_fail "the target did not start"
read -r _ _ lid _ qpn _ psn _ va _ rkey _ len <"$(sib_out target)"
pid=$(pgrep -P "${SIB_PID[target]}" | head -1)
ep=$(st_info "$pid" endpoint)
sib_log "target: LID $lid QP $qpn expects PSN $psn; buffer $va R_Key $rkey; at $ep"

sib_run attack 10 "$ATTACKER" forge-write "$ep" "$lid" "$lid" "$qpn" "$psn" "$va" "$rkey" "$len" ||
	sib_fail "the attacker failed"
for ((i = 0; i < 50; i++)); do
	st_info "$pid" dropped | grep -q 'wrong_endpoint=1' && break
	sleep 0.1
done
dropped=$(st_info "$pid" dropped)
echo "dropped: $dropped"
grep -q 'wrong_endpoint=1' <<<"$dropped" || sib_fail "the forged WRITE was not counted as from the wrong endpoint"
echo go >&"$go"
exec {go}>&-
sib_wait target
rc=$?
cat "$(sib_out target)"
sib_expect "$(sib_out target)" '^buffer intact$' "the target's memory" || sib_fail "the forged WRITE landed"
sib_expect "$(sib_out target)" '^legit write ok$' "the real peer's WRITE" || sib_fail "the real WRITE did not land"
[ $rc -eq 0 ] || sib_fail "the target exited $rc"
echo "attack_forged_write: dropped and counted; the memory is intact"

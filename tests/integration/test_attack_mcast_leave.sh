#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The forged multicast leave that used to work: any process made itself a
# port, learned a receiver's GID from the SA and asked the SA to end the
# receiver's membership, claiming the receiver's LID as its SLID; the SA
# believed it and the receiver heard nothing more.  Now an SA request
# counts only from where its SLID lives (softib-sm(8)): the forged leave
# is dropped unanswered and counted, the attacker's own attempt is denied,
# and the receiver gets every message.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_mcast_leave
sib_need mckey timeout pgrep
st_setup

GROUP=239.1.2.9
MGID=ff12:4001:ffff::f01:209 # as the kernel's rdma_cm maps it (test_mcast.sh)
st_sm sm "$SOFTIB_SM"
sib_start recv 60 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- mckey -m $GROUP -b 127.0.0.1 -C 5
st_mc_member $GROUP
lid=$ST_MC_LID
[ -n "$lid" ] || sib_fail "the receiver never attached to the group"
sib_log "receiver: pid $ST_MC_PID, LID $lid, group $MGID"

sib_run attack 30 "$ATTACKER" sa-leave "$SOFTIB_SM" "$lid" "$MGID" || sib_fail "the attacker failed"
cat "$(sib_out attack)"
sib_expect "$(sib_out attack)" '^as itself: 0x0' "the attacker's own leave for another port refused" ||
	sib_fail "the SA did not answer the attacker as itself"
grep -q '^as itself: 0x0000$' "$(sib_out attack)" && sib_fail "the SA took a leave for another port's membership"
sib_expect "$(sib_out attack)" '^as the victim: no answer$' "the forged leave dropped" ||
	sib_fail "the SA answered a leave with a forged SLID"
sib_expect "$(sib_out sm)" "an SA request with SLID $(printf '0x%04x' "$lid") came from .*, not from where that LID lives" \
	"the SM's log" || sib_fail "the SM did not log the forged leave"

sib_run send 60 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- mckey -m $GROUP -b 127.0.0.1 -s -C 5 ||
	sib_fail "the sender failed"
sib_wait recv || sib_fail "the receiver did not get its 5 messages"
sib_expect "$(sib_out recv)" '^data transfers complete' "the receiver got every message" ||
	sib_fail "the receiver's transfers did not complete"
echo "attack_mcast_leave: the forged leave was dropped and logged; the receiver stayed a member"

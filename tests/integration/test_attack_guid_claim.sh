#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: a process that answered the SM's NodeInfo
# with a live port's GUID took its place (the victim's LID stopped
# resolving, and it came back later with another LID).  Now the SM keeps a
# GUID where it found it until that port fails a sweep: the claim is
# refused and logged, and the victim's LID still resolves to the victim.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_guid_claim
sib_need timeout pgrep
st_setup

st_sm sm "$SOFTIB_SM" --sweep 0.5
st_hold victim
pid=${ST_PID[victim]}
lid=$(st_info "$pid" LID | awk '{ print $1 }')
ep=$(st_info "$pid" endpoint)
guid=$(st_info "$pid" "port GUID")
guid=0x${guid//:/}
sib_log "victim: LID $lid, port GUID $guid, at $ep"

sib_run before 10 "$ATTACKER" sa-lookup "$SOFTIB_SM" "$lid"
sib_expect "$(sib_out before)" "^endpoint $ep\$" "the SA before the attack" || sib_fail "the SA does not know the victim"
sib_run attack 30 "$ATTACKER" claim-guid "$SOFTIB_SM" "$guid" 3 || sib_fail "the attacker failed"
cat "$(sib_out attack)"
sib_expect "$(sib_out attack)" '^not configured$' "the claimant" || sib_fail "the SM configured the claimant"
sib_expect "$(sib_out sm)" "claims GUID $guid, which the live port LID $lid at $ep holds; refused" \
	"the SM's log" || sib_fail "the SM did not refuse the claim"
sleep 2 # several sweeps, and the challenge the claim caused
sib_run after 10 "$ATTACKER" sa-lookup "$SOFTIB_SM" "$lid"
sib_expect "$(sib_out after)" "^endpoint $ep\$" "the SA after the attack" || sib_fail "the victim's LID moved"
now=$(st_info "$pid" LID | awk '{ print $1 }')
[ "$now" = "$lid" ] || sib_fail "the victim's LID is $now, was $lid"
if grep -q " left: LID $lid " "$(sib_out sm)"; then
	sib_fail "the SM dropped the victim"
fi
st_release victim
echo "attack_guid_claim: the claim was refused; the victim kept its LID"

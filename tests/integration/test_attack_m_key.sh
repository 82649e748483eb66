#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: any local process sent SubnSet(PortInfo) to
# a port and changed its LID (or held it DOWN).  Now the SM keys every port
# (IBA 14.2.4): the attacker's Sets, with no M_Key, get no answer and change
# nothing; the port counts the violations, shows its M_Key as 0 at
# protection level 1, and tells the SM with trap 256.  A tool that holds
# the subnet's key (softib-sm --show-keys) reads the real M_Key.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_m_key
sib_need timeout pgrep
st_setup

st_sm sm "$SOFTIB_SM"
st_hold victim
pid=${ST_PID[victim]}
lid=$(st_info "$pid" LID | awk '{ print $1 }')
ep=$(st_info "$pid" endpoint)
[[ "$lid" =~ ^[0-9]+$ ]] && [ -n "$ep" ] || sib_fail "no LID or endpoint for the victim: '$lid' '$ep'"
sib_log "victim process $pid: LID $lid at $ep"

# 20 Sets (10 LID-routed, 10 directed-route) to LID 777 / state DOWN.
sib_run attack 30 "$ATTACKER" set-lid "$ep" 777 10 || sib_fail "the attacker failed"
cat "$(sib_out attack)"
sib_expect "$(sib_out attack)" '^set answered: 0 of 20$' "the Sets without the M_Key" || sib_fail "a Set was answered"
sib_expect "$(sib_out attack)" "^get: LID $lid M_Key 0x0000000000000000 ProtectBits 1 M_KeyViolations 20\$" \
	"the port's PortInfo" || sib_fail "the port did not keep its LID, hide its key or count"
now=$(st_info "$pid" LID | awk '{ print $1 }')
[ "$now" = "$lid" ] || sib_fail "the victim's LID is $now, was $lid"
st_info "$pid" M_Key | grep -q 'protection level 1, 20 violations' || sib_fail "softib info shows no violations"
st_wait_for "$(sib_out sm)" "reports a bad M_Key: Set\(PortInfo\)" 5 || sib_fail "no trap 256 reached the SM"

# The operator hands a tool the key.
keys=$(SOFTIB_SM=$SOFTIB_SM "$B/softib-sm" --show-keys) || sib_fail "softib-sm --show-keys failed"
key=$(awk '$1 == "m_key" { print $2 }' <<<"$keys")
[ -n "$key" ] || sib_fail "no m_key in: $keys"
sib_run keyed 30 "$ATTACKER" set-lid "$ep" "$lid" 0 --m-key "$key" || sib_fail "the keyed Get failed"
sib_expect "$(sib_out keyed)" "^get: LID $lid M_Key $key ProtectBits 1" "a Get with the key" ||
	sib_fail "the port does not show its M_Key to the key's holder"
st_release victim
echo "attack_m_key: the Sets were refused and counted"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: any SMP made its sender the port's SM, so
# the port then asked the attacker where LIDs live and sent an unmodified
# ibv_rc_pingpong's RC traffic to it.  Now a port's SM is the SOFTIB_SM
# address that answers SMInfo as MASTER (and shows the port's M_Key): the
# attacker, claiming SM-ness the whole time, gets no SA query and no data
# packet, and the ping-pong completes.
#
# That proves something only if the attack reached the port.  The victim's
# own counters say so: before the attacker starts, and again while it
# claims (the server exits with the ping-pong), `softib info` counts the
# SMPs the port refused (smp_refused) and its M_Key violations (the SM
# keyed the port; the forged SMPs carry M_Key 0, IBA 14.2.4).  Both must
# climb by what the attacker's rounds forge, no further than it sent, and
# the server's log must name the attacker's socket as the source of what
# it discarded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_sm_claim
sib_need ibv_rc_pingpong ss timeout pgrep
st_setup

# Each round of the attacker's forges three SMPs the M_Key check discards
# (SubnSet(PortInfo) LID-routed and directed-route, a TrapRepress) and an
# SMInfo answer the port never asked for: four refusals, three of them
# violations.  Three rounds must have been refused before the client starts.
ROUNDS=3

st_sm sm "$SOFTIB_SM"
port=$(sib_free_port tcp)
sib_start server 60 "$SOFTIB" run -- ibv_rc_pingpong -p "$port"
sib_wait_listen server "$port" || sib_fail "the server never listened"
pid=$(pgrep -P "${SIB_PID[server]}" | head -1)
ep=$(st_info "$pid" endpoint)
[ -n "$ep" ] || sib_fail "no endpoint for the server"
refused0=$(st_counter "$pid" smp_refused) && viol0=$(st_counter "$pid" M_KeyViolations) &&
	[ -n "$refused0" ] && [ -n "$viol0" ] ||
	sib_fail "softib info --pid $pid shows no smp_refused or M_KeyViolations counter"
sib_log "server process $pid at $ep; before the attack it refused $refused0 SMPs" \
	"($viol0 M_Key violations); the attacker claims to be its SM"
sib_start attack 60 "$ATTACKER" claim-sm "$ep" 6
# The attack arrives and is refused: the victim's counts climb (5 s
# allow for a loaded machine; the attacker forges a round every 50 ms).
for ((i = 0; i < 50; i++)); do
	refused=$(st_counter "$pid" smp_refused) && viol=$(st_counter "$pid" M_KeyViolations) ||
		sib_fail "the server's counters could not be read during the attack"
	((refused >= refused0 + 4 * ROUNDS && viol >= viol0 + 3 * ROUNDS)) && break
	sleep 0.1
done
((refused >= refused0 + 4 * ROUNDS && viol >= viol0 + 3 * ROUNDS)) ||
	sib_fail "the forged SMPs did not reach the server, or it did not refuse them:" \
		"smp_refused $refused0 -> $refused, M_KeyViolations $viol0 -> $viol" \
		"(want at least +$((4 * ROUNDS)) and +$((3 * ROUNDS)), $ROUNDS rounds)"
sib_log "during the attack the server refused $refused SMPs ($viol M_Key violations)"
sib_run client 60 "$SOFTIB" run -- ibv_rc_pingpong -p "$port" 127.0.0.1
rc=$?
sib_wait server
rs=$?
sib_wait attack
cat "$(sib_out attack)"
[ $rc -eq 0 ] && [ $rs -eq 0 ] || sib_fail "ping-pong: client $(sib_status_text $rc), server $(sib_status_text $rs)"
sib_expect "$(sib_out client)" 'iters in' "client result" || sib_fail "no result line"
# What the attacker sent covers what the server refused: the refusals were
# its SMPs, not anyone else's.
sent=$(sed -n 's/^forged SMPs sent: \([0-9][0-9]*\)$/\1/p' "$(sib_out attack)")
from=$(sed -n 's/^from \(.*\)$/\1/p' "$(sib_out attack)")
[ -n "$sent" ] && [ -n "$from" ] || sib_fail "the attacker did not say what it sent, or from where"
((sent > 0 && sent >= refused - refused0)) ||
	sib_fail "the server refused more SMPs ($((refused - refused0))) than the attacker sent ($sent)"
sib_expect "$(sib_out server)" "from ${from//./\\.} .*discarded: wrong M_Key" \
	"the server's log of the attacker's forged Set" ||
	sib_fail "the server's log does not name the attacker's SMPs as discarded"
sib_expect "$(sib_out attack)" '^sa queries: 0$' "SA queries to the attacker" || sib_fail "the port asked the attacker"
sib_expect "$(sib_out attack)" '^data packets: 0$' "data to the attacker" || sib_fail "traffic went to the attacker"
echo "attack_sm_claim: the attacker sent $sent forged SMPs; the port refused them" \
	"($((refused - refused0)) counted while it was watched) and kept its SM; nothing reached the attacker"

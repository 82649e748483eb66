#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: any SMP made its sender the port's SM, so
# the port then asked the attacker where LIDs live and sent an unmodified
# ibv_rc_pingpong's RC traffic to it.  Now a port's SM is the SOFTIB_SM
# address that answers SMInfo as MASTER (and shows the port's M_Key): the
# attacker, claiming SM-ness the whole time, gets no SA query and no data
# packet, and the ping-pong completes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_sm_claim
sib_need ibv_rc_pingpong ss timeout pgrep
st_setup

st_sm sm "$SOFTIB_SM"
port=$(sib_free_port tcp)
sib_start server 60 "$SOFTIB" run -- ibv_rc_pingpong -p "$port"
sib_wait_listen server "$port" || sib_fail "the server never listened"
pid=$(pgrep -P "${SIB_PID[server]}" | head -1)
ep=$(st_info "$pid" endpoint)
[ -n "$ep" ] || sib_fail "no endpoint for the server"
sib_log "server process $pid at $ep; the attacker claims to be its SM"
sib_start attack 60 "$ATTACKER" claim-sm "$ep" 6
sleep 1
sib_run client 60 "$SOFTIB" run -- ibv_rc_pingpong -p "$port" 127.0.0.1
rc=$?
sib_wait server
rs=$?
sib_wait attack
cat "$(sib_out attack)"
[ $rc -eq 0 ] && [ $rs -eq 0 ] || sib_fail "ping-pong: client $(sib_status_text $rc), server $(sib_status_text $rs)"
sib_expect "$(sib_out client)" 'iters in' "client result" || sib_fail "no result line"
sib_expect "$(sib_out attack)" '^sa queries: 0$' "SA queries to the attacker" || sib_fail "the port asked the attacker"
sib_expect "$(sib_out attack)" '^data packets: 0$' "data to the attacker" || sib_fail "traffic went to the attacker"
echo "attack_sm_claim: the port kept its SM; nothing reached the attacker"

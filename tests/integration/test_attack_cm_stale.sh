#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: the blind stale-connection REQ.  Knowing only
# what the SA tells anyone (a client's LID and CA GUID) and guessing its QP
# number, a plain UDP socket sent the server REQs "from" the client: the
# server's CM took the one naming the client's connected QP as stale
# (IBA 12.4.1), rejected it and ended the real connection.  Now a REQ
# counts only from where its SLID lives (mgmt/cm.h, softib(7)): every
# forged REQ is dropped and counted, none is answered, and the rping pair
# keeps pinging.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_cm_stale
sib_need timeout pgrep rping ss
st_setup

pings() { grep -c '^ping data: ' "$(sib_out client)" 2>/dev/null || true; }

st_sm sm "$SOFTIB_SM"
port=$(sib_free_port tcp) || exit 1
sid=$(printf '0x%016x' $((0x0000000001060000 | port))) # RDMA IP CM, TCP (IBA A11)
sib_start server 120 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$port" -C 1000000 -v
sib_wait_listen server "$port" || sib_fail "rping did not listen"
sib_start client 120 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 1000000 -v
for ((i = 0; i < 300; i++)); do
	[ "$(pings)" -ge 10 ] && break
	sleep 0.1
done
[ "$(pings)" -ge 10 ] || sib_fail "the rping pair did not start pinging"
spid=$(pgrep -P "${SIB_PID[server]}" | head -1)
cpid=$(pgrep -P "${SIB_PID[client]}" | head -1)
sep=$(st_info "$spid" endpoint)
slid=$(st_info "$spid" LID | awk '{ print $1 }')
clid=$(st_info "$cpid" LID | awk '{ print $1 }')
cguid=$(st_info "$cpid" "node GUID")
cguid=0x${cguid//:/}
[ -n "$sep" ] && [ -n "$slid" ] && [ -n "$clid" ] && [ "$cguid" != 0x ] ||
	sib_fail "the pair's LIDs, GUID or endpoint cannot be read"
sib_log "server LID $slid at $sep; client LID $clid, CA GUID $cguid"

sib_run attack 60 "$ATTACKER" cm-stale "$sep" "$clid" "$slid" "$cguid" "$sid" 2 64 ||
	sib_fail "the attacker failed"
cat "$(sib_out attack)"
before=$(pings)
sleep 1
after=$(pings)
# "CM sources: H requests waited ...; dropped W from the wrong endpoint and U from ..."
sources=$(st_info "$spid" "CM sources")
kill -TERM "${SIB_PID[server]}" "${SIB_PID[client]}" 2>/dev/null
{ sib_wait server; sib_wait client; } 2>/dev/null
echo "pings: $before when the attack ended, $after a second later"
echo "server's CM sources: $sources"
dropped=$(sed -n 's/.*dropped \([0-9]*\) from the wrong endpoint and \([0-9]*\) from .*/\1 \2/p' <<<"$sources")
read -r wrong unknown <<<"$dropped"
[ -n "$wrong" ] && [ $((wrong + unknown)) -ge 63 ] ||
	sib_fail "the server did not count the forged REQs as dropped"
sib_expect "$(sib_out attack)" '^sent: 63$' "63 forged REQs sent" || sib_fail "the attacker could not send"
sib_expect "$(sib_out attack)" '^rejected as stale: 0$' "no stale REJ" ||
	sib_fail "the server's CM took a forged REQ as stale"
sib_expect "$(sib_out attack)" '^other answers: 0$' "no answer at all" ||
	sib_fail "the server's CM answered a forged REQ"
[ "$after" -gt "$before" ] || sib_fail "the connection stopped after the attack"
echo "attack_cm_stale: 63 forged REQs dropped; the connection lived on"

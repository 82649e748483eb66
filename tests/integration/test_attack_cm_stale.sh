#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: the blind stale-connection REQ.  Knowing only
# what the SA tells anyone (a client's LID and CA GUID) and guessing its QP
# number, a plain UDP socket sent the server REQs "from" the client: the
# server's CM took the one naming the client's connected QP as stale
# (IBA 12.4.1), rejected it and ended the real connection.  Now a REQ
# counts only from where its SLID lives (mgmt/cm.h, softib-subnet(7)): every
# forged REQ is dropped and counted, none is answered, and the rping pair
# keeps pinging.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_cm_stale
sib_need timeout pgrep rping ss
st_setup

st_rping_pair
sid=$ST_SID sep=$ST_SEP spid=$ST_SPID cpid=$ST_CPID slid=$ST_SLID clid=$ST_CLID cguid=$ST_CGUID

sib_run attack 60 "$ATTACKER" cm-stale "$sep" "$clid" "$slid" "$cguid" "$sid" 2 64 ||
	sib_fail "the attacker failed"
cat "$(sib_out attack)"
before=$(st_pings)
sleep 1
after=$(st_pings)
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

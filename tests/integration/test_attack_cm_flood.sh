#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A forged REQ flood at a busy listener: a plain UDP socket sends the
# server of a live rping pair 50000 REQs a second for its ServiceID, half of
# them "from" the pair's client, half from random LIDs, each with a fresh
# comm ID.  Each used to become a connection request for rping; now none
# counts (mgmt/cm.h: a REQ only from where its SLID lives), unknown LIDs
# cost one SA lookup each at most 8 at a time with a negative cache
# (mgmt/sa_client.h), and at most 16 wait for an answer.  The pair keeps
# pinging through the flood, and the server counts what it dropped.
# The rate is fixed (RATE=0: as fast as the socket takes them) because a
# socket that sends faster than the port can read costs the port its data
# packets in the kernel, whatever the CM does (softib-subnet(7), "The
# source check"): under AddressSanitizer in a fresh chroot an unpaced flood stopped
# the pair for the whole flood.  The CM before the source check answered
# these REQs, and this test fails there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_cm_flood
sib_need timeout pgrep rping ss
st_setup

secs=8
st_rping_pair

sib_start attack $((secs + 30)) "$ATTACKER" cm-flood "$ST_SEP" "$ST_CLID" "$ST_SLID" "$ST_SID" "$secs" "${RATE:-50000}"
sleep 1
before=$(st_pings)
sleep $((secs - 2))
during=$(st_pings)
sib_wait attack || sib_fail "the attacker failed"
cat "$(sib_out attack)"
sleep 1
after=$(st_pings)
sources=$(st_info "$ST_SPID" "CM sources")
kill -TERM "${SIB_PID[server]}" "${SIB_PID[client]}" 2>/dev/null
{ sib_wait server; sib_wait client; } 2>/dev/null
echo "pings: $before a second into the flood, $during $((secs - 2)) s later, $after after it"
echo "server's CM sources: $sources"
sent=$(sed -n 's/^sent: //p' "$(sib_out attack)")
[ -n "$sent" ] && [ "$sent" -ge 100000 ] || sib_fail "the attacker sent only ${sent:-nothing}: no flood"
sib_expect "$(sib_out attack)" '^answers: 0$' "no forged REQ answered" ||
	sib_fail "the server's CM answered a forged REQ"
read -r wrong unknown <<<"$(sed -n 's/.*dropped \([0-9]*\) from the wrong endpoint and \([0-9]*\) from .*/\1 \2/p' <<<"$sources")"
[ -n "$wrong" ] && [ "$wrong" -gt 0 ] && [ "$unknown" -gt 0 ] ||
	sib_fail "the server did not count the forged REQs as dropped"
[ "$during" -ge $((before + 10)) ] || sib_fail "the pair stalled during the flood ($before -> $during pings)"
[ "$after" -gt "$during" ] || sib_fail "the connection stopped after the flood"
echo "attack_cm_flood: $sent forged REQs; the pair pinged $((during - before)) times during the flood and lived on"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A cable cut under traffic (issue 31's link cut; the IBA modelling seed's
# reconfiguration): two switches joined by two cables
# (tests/fabric/two-switches-2-links.topo), softib-sm sweeping only every
# 30 s, ib_write_bw -D 10 from H1 (on S1) to H3 (on S2).  Three seconds in,
# `softib fabric unlink` cuts the cable S1's LFT sends the traffic over;
# the switches' trap 128 makes the SM sweep at once, find the fabric
# without it and route everything over the other cable, the RC connection retries across the gap and
# ib_write_bw finishes; the other cable carries the traffic from then on.
# `softib fabric relink` puts the cable back and the SM makes both ends
# ACTIVE again.  `softib info --switch` shows the LFT and the ports.
. "$(dirname "$0")/lib.sh"

sib_init fabric_reroute
sib_need ib_write_bw timeout
sib_fabric_switch two-switches-2-links.topo
# A sweep every 30 s: what the SM learns sooner, it learns from traps.
sib_start sm 300 env SOFTIB_NODE=H2 SOFTIB_LOG=info "$SM" --sweep 30

# packets out of S1's port P, from softib info --switch
out_of()
{
	"$SOFTIB" info --switch |
		awk -v p="$1" '/^switch /{s=$2} s == "S1:" && $1 == "port" && $2 == p {print $6; exit}'
}
s1_lft() { "$SOFTIB" info --switch | awk '/^switch /{s=$2} s == "S1:" && $1 == "LFT:"'; }

port=$(sib_free_port tcp) || exit 1
sib_start server 120 env SOFTIB_NODE=H3 "$SOFTIB" run -- ib_write_bw -D 10 -u 18 -p "$port"
sib_wait_listen server "$port" || { sib_show server sm; sib_fail "ib_write_bw did not listen"; }
sib_start client 120 env SOFTIB_NODE=H1 "$SOFTIB" run -- ib_write_bw -D 10 -u 18 -p "$port" 127.0.0.1
sleep 3
a=$(out_of 7)
b=$(out_of 8)
[ -n "$a" ] && [ -n "$b" ] || { "$SOFTIB" info --switch; sib_fail "softib info --switch shows no S1 ports"; }
if [ "$a" -gt "$b" ]; then busy=7 other=8; else busy=8 other=7; fi
echo "before the cut: S1 sent $a packets out of port 7, $b out of port 8; cutting port $busy"
"$SOFTIB" fabric unlink S1 "$busy" || sib_fail "softib fabric unlink failed"
before=$(out_of "$other")
sleep 1.5
lft=$(s1_lft)
echo "S1 after the cut: $lft"
grep -q ">$busy\( \|$\)" <<<"$lft" && sib_fail "S1's LFT still uses the cut port $busy: no reroute"
after=$(out_of "$other")
[ "$after" -gt $((before + 100)) ] ||
	sib_fail "port $other carried $((after - before)) packets in the 1.5 s after the cut"
sib_wait client
rc=$?
sib_wait server
rs=$?
[ $rc -eq 0 ] && [ $rs -eq 0 ] ||
	{ sib_show client server sm; sib_fail "ib_write_bw: client $(sib_status_text $rc), server $(sib_status_text $rs)"; }
sib_expect "$(sib_out client)" '^ *65536 +[0-9]+ ' "the client's result" || sib_fail "no result line"

# The cable back: both ends come up, and the SM makes them ACTIVE.
"$SOFTIB" fabric relink S1 "$busy" || sib_fail "softib fabric relink failed"
for ((i = 0; i < 100; i++)); do
	"$SOFTIB" info --switch | grep -Eq "^  port $busy +ACTIVE to S2" && break
	sleep 0.1
done
"$SOFTIB" info --switch | grep -E "^switch S1|^  port +[78] "
"$SOFTIB" info --switch | grep -Eq "^  port $busy +ACTIVE to S2" ||
	sib_fail "port $busy did not come back ACTIVE"
"$SOFTIB" fabric unlink S9 1 >/dev/null 2>&1 && sib_fail "unlink of a switch that is not there passed"
kill -TERM "${SIB_PID[sm]}" "${SIB_PID[switch]}"
sib_wait sm
sib_wait switch
sib_expect "$(sib_out sm)" 'trap 128 from LID [0-9]+: a link changed; sweeping now' \
	"the SM swept on a trap" || { sib_show sm; sib_fail "the SM heard no trap 128"; }
echo "fabric_reroute: ib_write_bw lived through a cable cut; the SM routed around it and back"

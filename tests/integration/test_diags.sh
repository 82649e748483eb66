#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# infiniband-diags, unmodified, on a switched fabric: softib-switch hosts
# tests/fabric/fat-tree-4x2.topo, softib-sm (CA H1) routes it, and each
# tool runs as CA H3 under `softib run`, reaching the port through
# libibumad and /dev/infiniband/umad31 (provider/umad.h):
#   smpquery (directed route to its own port and one hop out, LID-routed
#   to a switch), sminfo (the SM's own port answers SMInfo), ibnetdiscover
#   (every switch and both CAs found hop by hop), ibroute (a leaf's LFT
#   names the SM's port and H3), ibtracert (H3 to the SM across three
#   switches), perfquery (H3's own PMA and a switch port's), iblinkinfo,
#   ibping (a server on H5 answering H3),
#   and a query to a LID nobody has, which times out as the kernel's umad
#   makes it (the request comes back with ETIMEDOUT) instead of hanging.
. "$(dirname "$0")/lib.sh"

sib_init diags
sib_need smpquery sminfo ibnetdiscover ibroute ibtracert perfquery iblinkinfo ibping timeout
sib_fabric_switch fat-tree-4x2.topo
sib_start sm 300 env SOFTIB_NODE=H1 SOFTIB_LOG=info "$SM" --routing updn --sweep 0.5

# diag ID ARGS...: one tool as CA H3; fails the test when it fails.
diag()
{
	local id=$1

	shift
	sib_run "$id" 60 env SOFTIB_NODE=H3 "$SOFTIB" run -- "$@" ||
		{ sib_show "$id" sm; sib_fail "$* as H3 failed"; }
}

# The port is up once the SM has swept (ibstat waits for nothing).
for ((i = 0; i < 100; i++)); do
	sib_run ibstat 30 env SOFTIB_NODE=H3 "$SOFTIB" run -- ibstat softib0
	grep -q 'State: Active' "$(sib_out ibstat)" && break
	sleep 0.2
done
sib_expect "$(sib_out ibstat)" 'State: Active' "H3 ACTIVE" || { sib_show ibstat sm; sib_fail "H3 never came up"; }
my_lid=$(sed -n 's/^[[:space:]]*Base lid: *//p' "$(sib_out ibstat)")

diag smp_self smpquery -D nodeinfo 0
sib_expect "$(sib_out smp_self)" '^NodeType:\.+Channel Adapter' "its own NodeInfo" || sib_fail "smpquery -D 0"
diag smp_hop smpquery -D nodedesc 0,1
sib_expect "$(sib_out smp_hop)" 'leaf 2' "the leaf's NodeDescription" || sib_fail "smpquery -D 0,1"

diag sminfo sminfo
sib_expect "$(sib_out sminfo)" '^sminfo: sm lid 1 .*SMINFO_MASTER' "the master SM" || sib_fail "sminfo"

diag discover ibnetdiscover
sib_expect "$(sib_out discover)" '# "softib-sm"' "the SM's CA" || sib_fail "ibnetdiscover missed the SM"
sib_expect "$(sib_out discover)" '^\[1\].*"H-0200000100000300"\[1\]' "H3 on leaf 2's port 1" ||
	sib_fail "ibnetdiscover missed H3"
n=$(grep -c '^Switch' "$(sib_out discover)")
[ "$n" -eq 6 ] || { sib_show discover; sib_fail "ibnetdiscover found $n switches, not 6"; }
leaf1=$(sed -n 's/^Switch.*# "leaf 1" base port 0 lid \([0-9]*\) .*/\1/p' "$(sib_out discover)")
[ -n "$leaf1" ] || sib_fail "ibnetdiscover gave leaf 1 no LID"

diag smp_lid smpquery nodeinfo "$leaf1"
sib_expect "$(sib_out smp_lid)" '^NodeType:\.+Switch' "leaf 1's NodeInfo by LID" || sib_fail "smpquery by LID"

diag route ibroute "$leaf1"
sib_expect "$(sib_out route)" "^0x0001 001 : \(Channel Adapter .*'softib-sm'\)" "the SM's LID on port 1" ||
	sib_fail "ibroute: leaf 1 does not route LID 1 to the SM"
sib_expect "$(sib_out route)" "$(printf '^0x%04x' "$my_lid") 00[78] : \(Channel Adapter" "H3's LID up to a spine" ||
	sib_fail "ibroute: leaf 1 has no route to H3"

diag trace ibtracert "$my_lid" 1
sib_expect "$(sib_out trace)" '^To ca .* lid 1-1 "softib-sm"' "the trace's end" || sib_fail "ibtracert"
n=$(grep -c -- '-> switch port' "$(sib_out trace)")
[ "$n" -eq 3 ] || { sib_show trace; sib_fail "ibtracert crossed $n switches, not 3 (leaf, spine, leaf)"; }

diag perf_self perfquery
sib_expect "$(sib_out perf_self)" "^# Port counters: Lid $my_lid port 1" "H3's counters" || sib_fail "perfquery"
diag perf_switch perfquery "$leaf1" 7
sib_expect "$(sib_out perf_switch)" '^PortSelect:\.+7$' "a switch port's counters" || sib_fail "perfquery of a switch"

diag links iblinkinfo
sib_expect "$(sib_out links)" '"spine 1"' "the spines" || sib_fail "iblinkinfo"

# ibping: a server on H5 (its agent serves the vendor class's requests,
# registered with a method mask and an OUI) answers a client on H3.
sib_start ping.server 60 env SOFTIB_NODE=H5 SOFTIB_LOG=debug "$SOFTIB" run -- ibping -S
for ((i = 0; i < 300; i++)); do
	grep -q 'port 1 ACTIVE: LID' "$(sib_out ping.server)" && break
	sleep 0.1
done
ping_lid=$(sed -n 's/.*port 1 ACTIVE: LID \([0-9]*\).*/\1/p' "$(sib_out ping.server)" | head -1)
[ -n "$ping_lid" ] || { sib_show ping.server; sib_fail "the ibping server never came up"; }
sleep 0.5 # its agent registers after the port is up
diag ping ibping -c 3 "$ping_lid"
sib_expect "$(sib_out ping)" '3 packets transmitted, 3 received' "three pongs" ||
	{ sib_show ping ping.server; sib_fail "ibping across the fabric lost pings"; }
kill "${SIB_PID[ping.server]}" 2>/dev/null
{ sib_wait ping.server; } 2>/dev/null

# Nobody has LID 99: the query times out (libibmad's retries), it does not hang.
t0=$(date +%s)
sib_run nobody 60 env SOFTIB_NODE=H3 "$SOFTIB" run -- smpquery -t 200 nodeinfo 99
[ "${SIB_RC[nobody]}" -ne 0 ] && [ "${SIB_RC[nobody]}" -ne 124 ] ||
	{ sib_show nobody; sib_fail "smpquery to LID 99 exited $(sib_status_text "${SIB_RC[nobody]}")"; }
sib_expect "$(sib_out nobody)" 'timed out|failed' "the timeout" || sib_fail "no timeout reported"
echo "diags: LID 99 timed out in $(($(date +%s) - t0)) s"

kill -TERM "${SIB_PID[sm]}" "${SIB_PID[switch]}"
sib_wait sm
sib_wait switch
echo "diags: smpquery, sminfo, ibnetdiscover, ibroute, ibtracert, perfquery, iblinkinfo and ibping read the fabric"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Partitions (IBA 10.9), set by softib-sm from an OpenSM partitions.conf:
# four ports come up in the default partition; the test writes
#	Default=0x7fff : ALL=full ;
#	red=0x0011 : A=full, B, C ;      (B and C limited)
#	blue=0x0022 : D=full ;
# with their port GUIDs and sends softib-sm SIGHUP; the SM sets every
# port's P_Key table again (SubnSet(P_KeyTable)).  Each port
# (tests/helpers/pkey_peer) then sends UD datagrams on its partition's
# P_Key to all the others and checks, in both directions, who gets through:
# A <-> B and A <-> C (full and limited), never B <-> C (limited and
# limited) nor D <-> anyone (another partition); the ports count the drops
# (bad_pkey_cntr: A 1, B 2, C 2, D 3 at least) and the SM hears of them
# through trap 257.  A's capture decodes (softib decode, tshark): the
# P_KeyTable Set and the trap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init partitions
sib_need timeout pgrep
sib_need_sm
[ -x "$B/helpers/verbs_hold" ] || sib_skip "$B/helpers/verbs_hold is not built"
peer=$B/helpers/pkey_peer
[ -x "$peer" ] || sib_skip "$peer is not built"

conf=$SIB_TMP/partitions.conf
echo 'Default=0x7fff : ALL=full ;' >"$conf"
st_sm sm "$SOFTIB_SM" --partitions "$conf"
sm_pid=$(pgrep -P "${SIB_PID[sm]}" softib-sm | head -1)
[ -n "$sm_pid" ] || sib_fail "no softib-sm under timeout"

steps=$SIB_TMP/steps
mkdir -p "$steps"
export PKEY_PEERS=ABCD
start_peer() # ROLE PKEY FROM VIOLATIONS
{
	sib_start "peer.$1" 120 env SOFTIB_CAPTURE="$SIB_TMP/$1.pcap" "${SIB_LINEBUF[@]}" \
		"$SOFTIB" run -- "$peer" "$steps" "$@"
}
start_peer A 0x8011 BC 1
start_peer B 0x0011 A 2
start_peer C 0x0011 A 2
start_peer D 0x8022 '' 3
# E only holds a port, in red with both memberships: softib info --pid
# shows its table.
st_hold E
G_E=0x$(st_info "${ST_PID[E]}" "port GUID" | tr -d :)
[[ "$G_E" =~ ^0x[0-9a-f]+$ ]] || sib_fail "no port GUID for E: '$G_E'"
for r in A B C D; do
	st_wait_for "$steps/$r.guid" '^0x' 60 || { sib_show "peer.$r"; sib_fail "peer $r never came up"; }
	eval "G_$r=$(cat "$steps/$r.guid")"
done
cat >"$conf.new" <<EOC
# written by test_partitions.sh
Default=0x7fff : ALL=full ;
red=0x0011, ipoib : $G_A=full, $G_B, $G_C, $G_E=both ;  # B and C: limited (the default)
blue=0x0022 : $G_D=full ;
EOC
mv "$conf.new" "$conf"
kill -HUP "$sm_pid"
st_wait_for "$(sib_out sm)" 'partitions read again' 10 || sib_fail "softib-sm did not read the file again"

ok=1
for r in A B C D; do
	sib_wait "peer.$r"
	rc=$?
	[ $rc = 77 ] && sib_skip "softib0 is not visible"
	[ $rc = 0 ] || { echo "FAIL: peer $r: $(sib_status_text $rc)"; ok=0; }
done
expect_peer() # ROLE REGEX WHAT
{
	sib_expect "$(sib_out "peer.$1")" "$2" "$3" || ok=0
}
expect_peer A '^A: P_Key 0x8011 at index 1$' "A is a full member of red"
expect_peer B '^B: P_Key 0x0011 at index 1$' "B is a limited member of red"
expect_peer D '^D: P_Key 0x8022 at index 1$' "D is a full member of blue"
expect_peer A '^A received from BC, bad_pkey_cntr ([1-9]|[1-9][0-9]+)$' "A got B and C, dropped D"
expect_peer B '^B received from A, bad_pkey_cntr ([2-9]|[1-9][0-9]+)$' "B got A only"
expect_peer C '^C received from A, bad_pkey_cntr ([2-9]|[1-9][0-9]+)$' "C got A only"
expect_peer D '^D received from nobody, bad_pkey_cntr ([3-9]|[1-9][0-9]+)$' "D got nobody"
# E's table, as softib info reads it from the process.
for ((i = 0; i < 100; i++)); do
	t=$(st_info "${ST_PID[E]}" "P_Key table")
	[ "$t" = "0:0xffff 1:0x8011 2:0x0011" ] && break
	sleep 0.1
done
[ "$t" = "0:0xffff 1:0x8011 2:0x0011" ] ||
	{ echo "FAIL: softib info --pid shows E's P_Key table as '$t'"; ok=0; }
st_release E
# Trap 257 reached the SM (each port sends at most one a second).
st_wait_for "$(sib_out sm)" 'reports a bad P_Key: P_Key 0x(0011|8011|8022) .*\(trap 257\)' 10 ||
	{ echo "FAIL: no trap 257 reached the SM"; ok=0; }
# What A's port saw and sent decodes, in softib decode and tshark: the
# SM's SubnSet(P_KeyTable) and A's trap 257 about D's datagrams.
cap=$SIB_TMP/A.pcap
"$SOFTIB" decode "$cap" >"$cap.txt" 2>&1
"$SOFTIB" decode -v "$cap" >"$cap.v" 2>&1
last=$(tail -n 1 "$cap.txt")
if [[ $last =~ ^packets:\ ([0-9]+)\ ok:\ ([0-9]+)\ bad:\ 0$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
	n=${BASH_REMATCH[1]}
	sib_expect "$cap.txt" 'SubnMgt\(directed-route\) Set\(P_KeyTable\)' "A's capture: the SM sets its P_Key table" || ok=0
	sib_expect "$cap.txt" 'SubnMgt\(LID-routed\) Trap\(Notice\)' "A's capture: its trap" || ok=0
	sib_expect "$cap.v" 'Notice +IsGeneric=1 Type=2 ProducerType=1 TrapNumber=257 ' "decode -v: trap 257" || ok=0
	sib_expect "$cap.v" 'BadP_Key +LID1=0x[0-9a-f]{4} LID2=0x[0-9a-f]{4} Key=0x00008022 ' "decode -v: D's P_Key" || ok=0
	if command -v tshark >/dev/null 2>&1; then
		tn=$(tshark -r "$cap" 2>/dev/null | wc -l)
		[ "$tn" = "$n" ] || { echo "FAIL: tshark shows $tn packets of A's capture, softib decode $n"; ok=0; }
		[ -z "$(tshark -r "$cap" -Y _ws.malformed 2>/dev/null)" ] ||
			{ echo "FAIL: tshark finds malformed packets in A's capture"; ok=0; }
		tshark -r "$cap" -Y 'infiniband.notice.trapnumberdeviceid == 257' 2>/dev/null | grep -q . ||
			{ echo "FAIL: tshark finds no trap 257 in A's capture"; ok=0; }
		tshark -r "$cap" -T fields -e infiniband.p_keytable.p_keybase \
			-Y 'infiniband.mad.attributeid == 0x0016' 2>/dev/null | tr ',' '\n' |
			grep -Eqi '^(0x)?0*11$' ||
			{ echo "FAIL: tshark shows no P_Key 0x0011 in A's P_KeyTable Sets"; ok=0; }
	fi
else
	echo "FAIL: softib decode of A's capture: $last"
	ok=0
fi
if [ $ok = 1 ]; then
	echo "ok: partitions isolate both ways, limited members do not talk, drops counted and trapped"
	exit 0
fi
sib_show sm peer.A peer.B peer.C peer.D
exit 1

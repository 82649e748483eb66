#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# UD multicast across processes, each under `softib run`, on one subnet
# (softib-sm's MCMemberRecord, the ports it programs, rdma_join_multicast):
#   - mckey: two receivers, then one sender (-s), 5 messages: all three
#     exit 0, report the same MGID (239.1.2.3 as the kernel's rdma_cm maps
#     it: ff12:4001:ffff::f01:203) and MLID, and finish their transfers;
#     the sender's capture decodes in softib decode and tshark (MCMemberRecord
#     Set/Delete, SoftibMulticastPorts, the datagrams to the MLID);
#   - tests/helpers/mcast_members: three processes join, send, leave and
#     rejoin one group, and each checks what it received (A and B: 1 2 3,
#     C, which left during 2: 1 3); while they are joined, softib info
#     --pid shows A's group (MGID, MLID, QPs, member ports) and P_Key table.
. "$(dirname "$0")/lib.sh"

sib_init mcast
sib_need mckey timeout
sib_need_sm
"$SOFTIB" run -- test -c /dev/infiniband/rdma_cm ||
	sib_skip "softib run shows no /dev/infiniband/rdma_cm"
members=$B/helpers/mcast_members
[ -x "$members" ] || sib_skip "$members is not built"

LIMIT=${MCAST_LIMIT:-120}
failed=()

# wait_line ID REGEX: until background ID prints REGEX (fails when it exits first).
wait_line()
{
	local id=$1 re=$2 i

	for ((i = 0; i < 1200; i++)); do
		grep -Eq -- "$re" "$(sib_out "$id")" 2>/dev/null && return 0
		kill -0 "${SIB_PID[$id]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ---- mckey: one sender, two receivers
GROUP=239.1.2.3
MGID_RE='ff12:4001:ffff::f01:203'
ok=1
for r in r1 r2; do
	sib_start "mckey.$r" "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
		mckey -m $GROUP -b 127.0.0.1 -C 5
done
# A receiver is ready once its QP is attached: softib info --pid shows the
# group (its own output may sit in a buffer until it exits).
wait_attached()
{
	local id=$1 pid i

	for ((i = 0; i < 1200; i++)); do
		pid=$(pgrep -P "${SIB_PID[$id]}" | head -1)
		[ -n "$pid" ] && "$SOFTIB" info --pid "$pid" 2>/dev/null |
			grep -Eq '^ +mcast groups +1$' && return 0
		kill -0 "${SIB_PID[$id]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
for r in r1 r2; do
	wait_attached "mckey.$r" || { echo "FAIL: mckey.$r never attached to the group"; ok=0; }
done
if [ $ok = 1 ]; then
	sib_run mckey.s "$LIMIT" env SOFTIB_CAPTURE="$SIB_TMP/mckey.pcap" "${SIB_LINEBUF[@]}" \
		"$SOFTIB" run -- mckey -m $GROUP -b 127.0.0.1 -s -C 5 || ok=0
fi
for r in r1 r2; do
	sib_wait "mckey.$r" || ok=0
done
for id in mckey.r1 mckey.r2 mckey.s; do
	out=$(sib_out "$id")
	sib_expect "$out" "joined dgid: $MGID_RE mlid 0xc[0-9a-f]{3} sl 0" "$id joined" || ok=0
	sib_expect "$out" '^data transfers complete' "$id transfers" || ok=0
	sib_expect "$out" '^return status 0' "$id status" || ok=0
done
mlids=$(grep -ho 'mlid 0x[0-9a-f]*' "$(sib_out mckey.r1)" "$(sib_out mckey.r2)" \
	"$(sib_out mckey.s)" | sort -u | wc -l)
[ "$mlids" = 1 ] || { echo "FAIL: mckey: the three saw $mlids different MLIDs"; ok=0; }
# The sender's capture: the join and leave at the SA, the SM programming
# its port, the multicast datagrams; in softib decode and tshark.
cap=$SIB_TMP/mckey.pcap
"$SOFTIB" decode "$cap" >"$cap.txt" 2>&1
"$SOFTIB" decode -v "$cap" >"$cap.v" 2>&1
last=$(tail -n 1 "$cap.txt")
if [[ $last =~ ^packets:\ ([0-9]+)\ ok:\ ([0-9]+)\ bad:\ 0$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
	n=${BASH_REMATCH[1]}
	for m in 'Set\(MCMemberRecord\)' 'GetResp\(MCMemberRecord\)' 'Delete\(MCMemberRecord\)' \
		'DeleteResp\(MCMemberRecord\)' 'Set\(SoftibMulticastPorts\)' 'GetResp\(SoftibMulticastPorts\)' \
		"-> 4915[3-9] .*GRH .* -> $MGID_RE +QP 0xffffff"; do
		sib_expect "$cap.txt" "$m" "mckey capture: $m" || ok=0
	done
	sib_expect "$cap.v" "MCMemberRecord MGID=$MGID_RE PortGID=fe80::.* Q_Key=0x01234567.* JoinState=1 " \
		"decode -v: the join's MCMemberRecord" || ok=0
	sib_expect "$cap.v" 'SoftibMulticastPorts MLID=0xc[0-9a-f]{3} Block=[0-9]+ Generation=[0-9]+ NumPorts=[1-9][0-9]* Installed=1 Port=127\.0\.0\.1:' \
		"decode -v: the port's list, installed" || ok=0
	if command -v tshark >/dev/null 2>&1; then
		tn=$(tshark -r "$cap" 2>/dev/null | wc -l)
		[ "$tn" = "$n" ] || { echo "FAIL: tshark shows $tn packets of the capture, softib decode $n"; ok=0; }
		[ -z "$(tshark -r "$cap" -Y _ws.malformed 2>/dev/null)" ] ||
			{ echo "FAIL: tshark finds malformed packets in the mckey capture"; ok=0; }
		tshark -r "$cap" -T fields -e infiniband.mcmemberrecord.mgid \
			-Y 'infiniband.mad.attributeid == 0x0038' 2>/dev/null | grep -q "^$MGID_RE\$" ||
			{ echo "FAIL: tshark shows no MCMemberRecord with MGID $MGID_RE"; ok=0; }
	fi
else
	echo "FAIL: softib decode of the mckey capture: $last"
	ok=0
fi
if [ $ok = 1 ]; then
	echo "ok: mckey, one sender and two receivers"
else
	failed+=(mckey)
	sib_show mckey.r1 mckey.r2 mckey.s
fi

# ---- three members: join, send, leave, rejoin
steps=$SIB_TMP/steps
mkdir -p "$steps"
ok=1
export MCAST_MEMBERS_PAUSE=1
for role in A B C; do
	sib_start "members.$role" "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
		"$members" $role "$steps" 239.1.2.4 127.0.0.1
done
# While A waits, softib info shows its group (through its counters socket).
if wait_line members.A '^A pid [0-9]+ attached'; then
	apid=$(sed -n 's/^A pid \([0-9]*\) attached$/\1/p' "$(sib_out members.A)")
	"$SOFTIB" info --pid "$apid" >"$SIB_TMP/info.A" 2>&1
	sib_expect "$SIB_TMP/info.A" \
		'group +ff12:4001:ffff:0000:0000:0000:0f01:0204 MLID 0xc[0-9a-f]{3}, 1 QPs attached, 3 member ports' \
		"softib info --pid shows A's group" || { ok=0; cat "$SIB_TMP/info.A"; }
	sib_expect "$SIB_TMP/info.A" 'P_Key table +0:0xffff$' "softib info --pid shows A's P_Key table" ||
		ok=0
else
	echo "FAIL: members.A never paused"
	ok=0
fi
touch "$steps/info.T"
for role in A B C; do
	sib_wait "members.$role"
	rc=$?
	[ $rc = 77 ] && sib_skip "mcast_members: softib0 or the group is not there"
	[ $rc = 0 ] || { echo "FAIL: members.$role: $(sib_status_text $rc)"; ok=0; }
done
sib_expect "$(sib_out members.A)" '^A received: 123$' "A got 1, 2 and 3" || ok=0
sib_expect "$(sib_out members.B)" '^B received: 123$' "B got 1, 2 and 3" || ok=0
sib_expect "$(sib_out members.C)" '^C received: 13$' "C got 1 and 3, not 2" || ok=0
sib_expect "$(sib_out members.C)" '^C left$' "C left" || ok=0
[ "$(grep -c '^C joined' "$(sib_out members.C)")" = 2 ] ||
	{ echo "FAIL: C did not join twice"; ok=0; }
if [ $ok = 1 ]; then
	echo "ok: three members join, send, leave and rejoin"
else
	failed+=(members)
	sib_show members.A members.B members.C
fi

if [ ${#failed[@]} -ne 0 ]; then
	echo "FAILED: ${failed[*]}"
	exit 1
fi
exit 0

# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# infiniband-diags against tests/fabric/fat-tree-4x2.topo, whichever SM
# manages it (test_diags.sh: softib-sm; test_opensm.sh: OpenSM).  Source it
# after lib.sh, with the switch and the SM running (SOFTIB_FABRIC set).
#
#   dg_diag ID ARGS...   one tool as CA H5 (leaf 3); fails the test when
#                        it fails
#   dg_up CA             waits until CA's port is ACTIVE; its LID in DG_LID
#   dg_traffic_start     rping between H3 (leaf 2) and H7 (leaf 4), without
#                        end, so that counters move while the tools run
#   dg_traffic_stop
#   dg_all SMDESC        with that traffic flowing (and an ibping server on
#                        H2), every diagnostic of the fabric, as H5, checked
#                        against the topology file and the traffic:
#                        sminfo, ibnetdiscover (equal to the topology file,
#                        tests/helpers/topo_compare), ibswitches, ibhosts,
#                        iblinkinfo, ibroute, ibtracert, smpquery (nodeinfo,
#                        portinfo, switchinfo, pkeys, sl2vl, vlarb,
#                        nodedesc, and by directed route), perfquery
#                        (PortCounters and PortCountersExtended of an HCA
#                        and of a switch port, which grow with the
#                        traffic), saquery (the SM's IsSM PortInfoRecord,
#                        NodeRecords, every PathRecord), ibqueryerrors,
#                        ibping; SMDESC is the
#                        SM's NodeDescription, a regular expression; leaf
#                        2's LID in DG_LEAF2 then

DG_TOPO=$SIB_TOP/tests/fabric/fat-tree-4x2.topo
DG_CA=H5

dg_diag()
{
	local id=$1

	shift
	sib_run "$id" 60 env SOFTIB_NODE=$DG_CA "$SOFTIB" run -- "$@" && return 0
	# Every tool is a port plugged in: a busy SM (OpenSM sweeping and
	# timing out on ports that left, on a loaded machine) may not speak to
	# it within the 8 s a port waits.  Once more then, said; twice fails.
	if grep -q 'is not ACTIVE: no subnet manager' "$(sib_out "$id")"; then
		echo "note: $DG_CA's port for '$*' was not configured within 8 s: once more"
		sib_run "$id" 60 env SOFTIB_NODE=$DG_CA "$SOFTIB" run -- "$@" && return 0
	fi
	sib_show "$id"
	sib_fail "$* as $DG_CA failed"
}

dg_up()
{
	local ca=$1 i

	for ((i = 0; i < 100; i++)); do
		sib_run "ibstat.$ca" 30 env SOFTIB_NODE="$ca" "$SOFTIB" run -- ibstat softib0
		grep -q 'State: Active' "$(sib_out "ibstat.$ca")" && break
		sleep 0.2
	done
	sib_expect "$(sib_out "ibstat.$ca")" 'State: Active' "$ca ACTIVE" ||
		{ sib_show "ibstat.$ca"; sib_fail "$ca never came up"; }
	DG_LID=$(sed -n 's/^[[:space:]]*Base lid: *//p' "$(sib_out "ibstat.$ca")")
}

dg_traffic_start()
{
	DG_PORT=$(sib_free_port tcp) || exit 1
	sib_start traffic.server 300 env SOFTIB_NODE=H3 "$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$DG_PORT"
	sib_wait_listen traffic.server "$DG_PORT" || { sib_show traffic.server; sib_fail "rping -s did not listen"; }
	sib_start traffic.client 300 env SOFTIB_NODE=H7 "$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$DG_PORT"
}

dg_traffic_stop()
{
	kill "${SIB_PID[traffic.client]}" "${SIB_PID[traffic.server]}" 2>/dev/null
	{ sib_wait traffic.client; sib_wait traffic.server; } 2>/dev/null
}

# The value of a perfquery field ("PortXmitPkts") in the output of id.
dg_field()
{
	sed -n "s/^$2:\.*\([0-9]*\)$/\1/p" "$(sib_out "$1")"
}

dg_all()
{
	local smdesc=$1 n leaf1 leaf2 h2 h3 before after i

	# A CA is one process at a time: the LIDs of H3 and H2 first, before
	# rping and the ibping server take them (the SM keeps a GUID's LID).
	dg_up H3
	h3=$DG_LID
	dg_up H2
	h2=$DG_LID
	dg_up "$DG_CA"
	local my_lid=$DG_LID
	dg_traffic_start

	dg_diag sminfo sminfo
	sib_expect "$(sib_out sminfo)" '^sminfo: sm lid 1 .*SMINFO_MASTER' "the master SM" || sib_fail "sminfo"

	# The fabric as discovered equals the topology file: every switch and
	# cable, and the CAs that are attached (H1, H3, H5, H7).
	dg_diag discover ibnetdiscover "$SIB_TMP/discovered.topo"
	sib_run compare 10 "$B/helpers/topo_compare" "$DG_TOPO" "$SIB_TMP/discovered.topo"
	cat "$(sib_out compare)"
	sib_expect "$(sib_out compare)" '^equal: 6 switches, [4-8] CAs, 1[2-6] cables$' \
		"ibnetdiscover equals the topology file" ||
		{ sib_show discover; sib_fail "ibnetdiscover differs from $DG_TOPO"; }
	sib_expect "$SIB_TMP/discovered.topo" "# \"$smdesc\"" "the SM's CA" || sib_fail "ibnetdiscover missed the SM"
	leaf1=$(sed -n 's/^Switch.*# "leaf 1" base port 0 lid \([0-9]*\) .*/\1/p' "$SIB_TMP/discovered.topo")
	leaf2=$(sed -n 's/^Switch.*# "leaf 2" base port 0 lid \([0-9]*\) .*/\1/p' "$SIB_TMP/discovered.topo")
	[ -n "$leaf1" ] && [ -n "$leaf2" ] || sib_fail "ibnetdiscover gave leaf 1 or leaf 2 no LID"
	DG_LEAF2=$leaf2

	dg_diag switches ibswitches
	n=$(grep -c '^Switch' "$(sib_out switches)")
	[ "$n" -eq 6 ] || { sib_show switches; sib_fail "ibswitches listed $n switches, not 6"; }
	dg_diag hosts ibhosts
	n=$(grep -c '^Ca' "$(sib_out hosts)")
	[ "$n" -ge 4 ] || { sib_show hosts; sib_fail "ibhosts listed $n CAs, not H1, H3, H5 and H7"; }
	dg_diag links iblinkinfo
	n=$(grep -c 'Active/  LinkUp.*"spine [12]"' "$(sib_out links)")
	[ "$n" -eq 8 ] || { sib_show links; sib_fail "iblinkinfo shows $n active leaf-to-spine links, not 8"; }

	dg_diag route ibroute "$leaf1"
	sib_expect "$(sib_out route)" "^0x0001 001 : \(Channel Adapter .*'$smdesc'\)" "the SM's LID on port 1" ||
		sib_fail "ibroute: leaf 1 does not route LID 1 to the SM"
	sib_expect "$(sib_out route)" "$(printf '^0x%04x' "$my_lid") 00[78] : \(Channel Adapter" \
		"$DG_CA's LID up to a spine" || sib_fail "ibroute: leaf 1 has no route to $DG_CA"
	dg_diag trace ibtracert "$my_lid" 1
	sib_expect "$(sib_out trace)" "^To ca .* lid 1-1 \"$smdesc\"" "the trace's end" || sib_fail "ibtracert"
	n=$(grep -c -- '-> switch port' "$(sib_out trace)")
	[ "$n" -eq 3 ] || { sib_show trace; sib_fail "ibtracert crossed $n switches, not 3 (leaf, spine, leaf)"; }

	dg_diag smp_self smpquery -D nodeinfo 0
	sib_expect "$(sib_out smp_self)" '^NodeType:\.+Channel Adapter' "its own NodeInfo" || sib_fail "smpquery -D 0"
	dg_diag smp_hop smpquery -D nodedesc 0,1
	sib_expect "$(sib_out smp_hop)" 'leaf 3' "its leaf's NodeDescription by directed route" ||
		sib_fail "smpquery -D 0,1"
	dg_diag smp_node smpquery nodeinfo "$leaf1"
	sib_expect "$(sib_out smp_node)" '^NodeType:\.+Switch' "leaf 1's NodeInfo" || sib_fail "smpquery nodeinfo"
	dg_diag smp_desc smpquery nodedesc "$leaf1"
	sib_expect "$(sib_out smp_desc)" 'leaf 1$' "leaf 1's NodeDescription" || sib_fail "smpquery nodedesc"
	dg_diag smp_port smpquery portinfo "$h3"
	sib_expect "$(sib_out smp_port)" '^LinkState:\.+Active$' "H3's PortInfo" || sib_fail "smpquery portinfo"
	sib_expect "$(sib_out smp_port)" "^Lid:\.+$h3$" "H3's LID" || sib_fail "smpquery portinfo: the LID"
	dg_diag smp_switch smpquery switchinfo "$leaf1"
	n=$(sed -n 's/^LinearFdbTop:\.*\([0-9]*\)$/\1/p' "$(sib_out smp_switch)")
	[ -n "$n" ] && [ "$n" -ge "$my_lid" ] ||
		{ sib_show smp_switch; sib_fail "smpquery switchinfo: LinearFdbTop ${n:-none} below LID $my_lid"; }
	dg_diag smp_pkeys smpquery pkeys "$h3"
	sib_expect "$(sib_out smp_pkeys)" '^ +0: 0xffff' "the default P_Key" || sib_fail "smpquery pkeys"
	dg_diag smp_sl2vl smpquery sl2vl "$leaf1"
	n=$(grep -Ec '^ports: in +[0-9]+, out +[0-9]+:' "$(sib_out smp_sl2vl)")
	[ "$n" -eq 9 ] || { sib_show smp_sl2vl; sib_fail "smpquery sl2vl: $n rows, not 9 (ports 0..8 in)"; }
	dg_diag smp_vlarb smpquery vlarb "$h3"
	sib_expect "$(sib_out smp_vlarb)" '^# Low priority VL Arbitration Table' "H3's VLArbitrationTable" ||
		sib_fail "smpquery vlarb"

	# Counters: this port's, H3's, and leaf 2's port to H3, whose
	# 64-bit counters grow with the rping between H3 and H7.
	dg_diag perf_self perfquery
	sib_expect "$(sib_out perf_self)" "^# Port counters: Lid $my_lid port 1" "$DG_CA's counters" || sib_fail "perfquery"
	dg_diag perf_h3 perfquery -x "$h3" 1
	[ "$(dg_field perf_h3 PortXmitPkts)" -gt 0 ] || { sib_show perf_h3; sib_fail "perfquery -x: H3 sent nothing"; }
	dg_diag perf_switch perfquery "$leaf2" 1
	sib_expect "$(sib_out perf_switch)" '^PortSelect:\.+1$' "a switch port's counters" || sib_fail "perfquery of a switch"
	dg_diag perf_ext1 perfquery -x "$leaf2" 1
	before=$(dg_field perf_ext1 PortXmitPkts)
	sleep 1
	dg_diag perf_ext2 perfquery -x "$leaf2" 1
	after=$(dg_field perf_ext2 PortXmitPkts)
	echo "diags: leaf 2 port 1 (to H3) sent $before, then $after packets"
	[ -n "$before" ] && [ -n "$after" ] && [ "$after" -gt "$before" ] ||
		{ sib_show perf_ext1 perf_ext2; sib_fail "perfquery -x: leaf 2's port to H3 did not count the traffic"; }

	dg_diag sa_sm saquery -s
	n=$(grep -c 'PortInfoRecord dump' "$(sib_out sa_sm)")
	[ "$n" -eq 1 ] || { sib_show sa_sm; sib_fail "saquery -s: $n PortInfoRecords, not the SM's one"; }
	sib_expect "$(sib_out sa_sm)" 'EndPortLid\.+1$' "the SM's port" || sib_fail "saquery -s"

	# The SA's tables, several RMPP segments each: a NodeRecord per node
	# (the six switches among them), and the paths between every two ports.
	dg_diag sa_nodes saquery
	n=$(grep -Ec 'NodeDescription\.+(spine|leaf) [0-9]$' "$(sib_out sa_nodes)")
	[ "$n" -eq 6 ] || { sib_show sa_nodes; sib_fail "saquery: $n NodeRecords of switches, not 6"; }
	dg_diag sa_paths saquery -p
	n=$(grep -c 'PathRecord dump' "$(sib_out sa_paths)")
	[ "$n" -ge 9 ] || { sib_show sa_paths; sib_fail "saquery -p: $n PathRecords, not 3 x 3 at least (H3, H5, H7)"; }

	# Errors: every node read (6 switches and the attached CAs).
	sib_run errors 60 env SOFTIB_NODE=$DG_CA "$SOFTIB" run -- ibqueryerrors
	sib_expect "$(sib_out errors)" '^## Summary: [0-9]+ nodes checked' "ibqueryerrors' summary" ||
		{ sib_show errors; sib_fail "ibqueryerrors"; }
	n=$(sed -n 's/^## Summary: \([0-9]*\) nodes checked.*/\1/p' "$(sib_out errors)")
	[ "$n" -ge 10 ] || { sib_show errors; sib_fail "ibqueryerrors checked $n nodes, not 6 switches and 4 CAs"; }

	# ibping: a server on H2 (its agent serves the vendor class's
	# requests, registered with a method mask and an OUI).
	sib_start ping.server 60 env SOFTIB_NODE=H2 SOFTIB_LOG=debug "$SOFTIB" run -- ibping -S
	for ((i = 0; i < 300; i++)); do
		grep -q 'port 1 ACTIVE: LID' "$(sib_out ping.server)" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5 # its agent registers after the port is up
	dg_diag ping ibping -c 3 "$h2"
	sib_expect "$(sib_out ping)" '3 packets transmitted, 3 received' "three pongs" ||
		{ sib_show ping ping.server; sib_fail "ibping across the fabric lost pings"; }
	kill "${SIB_PID[ping.server]}" 2>/dev/null
	{ sib_wait ping.server; } 2>/dev/null
	dg_traffic_stop
}

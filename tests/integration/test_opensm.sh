#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# OpenSM, unmodified, is the subnet manager of a softib fabric: it runs as
# CA H1 under `softib run`, reaching its port through libibumad and
# /dev/infiniband/umad31 and issm31 (provider/umad.h): it discovers the
# switches by directed route, assigns LIDs, writes the LFTs, brings every
# port ACTIVE ("SUBNET UP"), answers SMInfo, and is the SA.  The HCAs accept
# the SM's Sets from the cable, and the SM's own port from itself (the
# 0-hop directed route a local SM configures its port with).
#
# First tests/fabric/two-switches-2-links.topo, every port keyed by OpenSM
# (M_Key at protection level 2): without the key smpquery and ibnetdiscover
# read nothing and the port counts the violations; with it (-y) what
# ibnetdiscover finds equals the topology file (tests/helpers/topo_compare);
# ibv_rc_pingpong passes from H2 on one switch to H4 on the other; OpenSM's
# partitions.conf isolates them as it says (tests/helpers/pkey_peer); and
# OpenSM restarted gives the ports the LIDs they had (guid2lid).  Then
# tests/fabric/fat-tree-4x2.topo: every diagnostic of diags_lib.sh, as under
# softib-sm in test_diags.sh, with rping running between H3 and H7 (saquery
# reads OpenSM's NodeRecord, PortInfoRecord and PathRecord tables, RMPP
# answers of several segments); ibv_rc_pingpong and rping, which needs
# PathRecords and the RDMA CM's ServiceRecords, from leaf 2 to leaf 4
# (H4 to H8), and mckey from H4 to H6 through the MFTs OpenSM writes.
# OpenSM's performance manager (--perfmgr) reads every port's counters
# meanwhile, rping's packets among them (its console says).
# Last, a second OpenSM on H2 becomes STANDBY, the master is killed while
# rping runs between H3 and H7, the standby takes over (sminfo names it),
# and rping's connection lives on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/diags_lib.sh"

sib_init opensm
sib_need opensm rping mckey ibv_rc_pingpong smpquery sminfo ibnetdiscover ibswitches ibhosts ibroute \
	ibtracert perfquery iblinkinfo ibping ibqueryerrors saquery timeout
[ -x "$B/helpers/topo_compare" ] || sib_skip "$B/helpers/topo_compare is not built (run make)"

# OpenSM frees a request's buffer when its answer comes, and here the
# answer can come before write(2) has returned; AddressSanitizer, which an
# ASan build of libsoftib brings into OpenSM, checks the buffer after the
# call and reports that as a use after free in OpenSM.  So under ASan
# OpenSM runs on the plain build (the HCAs below stay on the ASan one).
osm_softib=$SOFTIB
if ldd "$SOFTIB" 2>/dev/null | grep -q libasan; then
	osm_softib=$SIB_TOP/build/softib
	[ -x "$osm_softib" ] ||
		sib_skip "an AddressSanitizer build, and no plain build/softib to run OpenSM on"
	echo "opensm: OpenSM on $osm_softib (AddressSanitizer would flag its own buffer reuse)"
fi

# osm_up TOPO [ARGS]: softib-switch hosting tests/fabric/TOPO and OpenSM
# (with ARGS, and the options file OSM_CONF if set) as its H1,
# until OpenSM says SUBNET UP; its log is $osm/opensm.log.  It sweeps every
# second (-s 1): every tool below is a port plugged in, and a trap 128 that
# comes while a sweep is under way can wait for the next periodic one
# (10 s by default), longer than a port waits for its SM (8 s).
osm_up()
{
	local i topo=$1

	shift
	osm=$SIB_TMP/osm.${topo%.topo}
	mkdir -p "$osm"
	sib_fabric_switch "$topo"
	sib_start opensm 300 env SOFTIB_NODE=H1 OSM_TMP_DIR="$osm" OSM_CACHE_DIR="$osm" \
		"$osm_softib" run -- opensm -d2 -s 1 -F "${OSM_CONF:-/dev/null}" -f "$osm/opensm.log" "$@"
	for ((i = 0; i < 600; i++)); do
		grep -q 'SUBNET UP' "$osm/opensm.log" 2>/dev/null && break
		kill -0 "${SIB_PID[opensm]}" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q 'SUBNET UP' "$osm/opensm.log" 2>/dev/null; then
		sib_show opensm switch
		tail -30 "$osm/opensm.log" 2>/dev/null
		sib_fail "OpenSM did not bring $topo up"
	fi
	echo "opensm: $topo: SUBNET UP after $((i / 10)).$((i % 10)) s"
}

# osm_down: OpenSM and the switch stop, and osm_errors judges its log.
osm_down()
{
	kill -TERM "${SIB_PID[opensm]}" "${SIB_PID[switch]}"
	sib_wait opensm
	sib_wait switch
	osm_errors "$osm/opensm.log"
}

# osm_errors LOG: OpenSM logged no error but those a CA whose program came
# and went mid-sweep causes, as a port that goes down
# on hardware does (each tool above is a process, and a CA is cabled only
# while a process has it open): ERR 3111, an SMP answered with an error
# status (0x1C: a PortInfo Set for a state the port cannot take), the
# timeouts of SMPs to a port that left (5411, 3113, 3119, 3120), a light
# sweep's port whose far end came after the last heavy sweep (3315), the
# MADs still out when OpenSM is told to exit (5401), and its performance
# manager's queries to ports that left (5410) and its reports of what the
# coming and going does (perfmgr_*: ERR 54xx): links down, relay errors of
# packets to ports that left, counters reset by a CA's next process, nodes
# gone.
osm_errors()
{
	local errors ok=' ERR (3111|5411|5410|3113|3119|3120|3315|5401): | perfmgr_[a-z_]*: (PerfMgr: )?ERR 54'

	errors=$(grep ' ERR ' "$1" | grep -Evc "$ok")
	echo "opensm: $(grep -c ' ERR ' "$1") ERR lines in its log, $errors of other kinds"
	[ "$errors" -eq 0 ] || { grep ' ERR ' "$1" | grep -Ev "$ok" | head -20; sib_fail "OpenSM logged errors"; }
}

# osm_rc ID SERVER CLIENT: ibv_rc_pingpong between two CAs, under OpenSM.
osm_rc()
{
	local port

	SIB_SERVER_WRAP=(env SOFTIB_NODE="$2")
	SIB_CLIENT_WRAP=(env SOFTIB_NODE="$3")
	port=$(sib_free_port tcp) || exit 1
	sib_pair "$1" 120 "$port" 127.0.0.1 ibv_rc_pingpong -d softib0 -i 1 -n 100 ||
		{ tail -20 "$osm/opensm.log"; sib_fail "ibv_rc_pingpong from $2 to $3 under OpenSM failed"; }
	sib_expect "$(sib_out "$1.client")" '^100 iters in' "the ping-pong from $2 to $3" ||
		sib_fail "no ping-pong result"
}

# --- two switches, two cables between them, every port keyed by OpenSM
# (M_Key 0xa5 at protection level 2, IBA 14.2.4.1: without the key a Get
# is not answered either, and the port counts the violation), and its
# partitions.conf (the port GUIDs are the topology's): H2 a full and H3 a
# limited member of red, H4 alone in blue.
printf 'm_key 0x00000000000000a5\nm_key_protection_level 2\nm_key_lease_period 0\nsm_key 0x00000000000000b6\n' \
	>"$SIB_TMP/keys.conf"
cat >"$SIB_TMP/partitions.conf" <<'EOC'
Default=0x7fff : ALL=full ;
red=0x0011 : 0x0200000100000201=full, 0x0200000100000301 ;
blue=0x0022 : 0x0200000100000401=full ;
EOC
OSM_CONF=$SIB_TMP/keys.conf osm_up two-switches-2-links.topo -P "$SIB_TMP/partitions.conf"
dg_up H2
# OpenSM's own port (LID 1) is keyed too: read it without and with the key.
sib_run nokey 60 env SOFTIB_NODE=H2 "$SOFTIB" run -- smpquery -t 300 portinfo 1
[ "${SIB_RC[nokey]}" -ne 0 ] && [ "${SIB_RC[nokey]}" -ne 124 ] ||
	{ sib_show nokey; sib_fail "smpquery read a port's PortInfo without its M_Key"; }
sib_run nokey_discover 60 env SOFTIB_NODE=H2 "$SOFTIB" run -- ibnetdiscover -t 300
grep -q '^Switch' "$(sib_out nokey_discover)" &&
	{ sib_show nokey_discover; sib_fail "ibnetdiscover read the switches without the M_Key"; }
sib_run key 60 env SOFTIB_NODE=H2 "$SOFTIB" run -- smpquery -t 300 -y 0xa5 portinfo 1 ||
	{ sib_show key; sib_fail "smpquery with the M_Key failed"; }
sib_expect "$(sib_out key)" '^ProtectBits:\.+2$' "OpenSM's protection level" || sib_fail "the port is not keyed"
n=$(sed -n 's/^MkeyViolations:\.*\([0-9]*\)$/\1/p' "$(sib_out key)")
[ "${n:-0}" -ge 1 ] || { sib_show key; sib_fail "the port did not count the Get without its M_Key"; }
echo "opensm: without OpenSM's M_Key smpquery and ibnetdiscover read nothing; the port counted $n violations"
sib_run discover2 60 env SOFTIB_NODE=H2 "$SOFTIB" run -- ibnetdiscover -y 0xa5 "$SIB_TMP/two.topo" ||
	{ sib_show discover2; sib_fail "ibnetdiscover under OpenSM failed"; }
sib_run compare2 10 "$B/helpers/topo_compare" "$SIB_TOP/tests/fabric/two-switches-2-links.topo" "$SIB_TMP/two.topo"
cat "$(sib_out compare2)"
sib_expect "$(sib_out compare2)" '^equal: 2 switches, 2 CAs, 4 cables$' "ibnetdiscover equals the topology file" ||
	sib_fail "ibnetdiscover differs from two-switches-2-links.topo"
osm_rc rc2 H2 H4

# The partitions (tests/helpers/pkey_peer, as test_partitions.sh): UD
# datagrams on each port's P_Key reach H2 from H3 and H3 from H2 (full and
# limited), and nobody from H4 or H4 from anybody; the drops are counted.
peers=$SIB_TMP/peers
mkdir -p "$peers"
for p in "A H2 0x8011 B 1" "B H3 0x0011 A 1" "D H4 0x8022 '' 2"; do
	eval "set -- $p"
	sib_start "peer.$1" 120 env PKEY_PEERS=ABD SOFTIB_NODE="$2" "${SIB_LINEBUF[@]}" \
		"$SOFTIB" run -- "$B/helpers/pkey_peer" "$peers" "$1" "$3" "$4" "$5"
done
for r in A B D; do
	sib_wait "peer.$r" || { sib_show "peer.$r"; sib_fail "partition peer $r failed under OpenSM"; }
done
sib_expect "$(sib_out peer.A)" '^A received from B, bad_pkey_cntr [1-9]' "H2 got H3, dropped H4" || sib_fail "partitions"
sib_expect "$(sib_out peer.B)" '^B received from A, bad_pkey_cntr [1-9]' "H3 got H2, dropped H4" || sib_fail "partitions"
sib_expect "$(sib_out peer.D)" '^D received from nobody, bad_pkey_cntr ([2-9]|[1-9][0-9]+)$' "H4 got nobody" ||
	sib_fail "partitions"

# OpenSM restarts and gives every port the LID it had (its guid2lid file,
# in OSM_CACHE_DIR): H2's and H4's are the same after it.
dg_up H2
lid2=$DG_LID
dg_up H4
lid4=$DG_LID
kill -TERM "${SIB_PID[opensm]}"
sib_wait opensm
mv "$osm/opensm.log" "$osm/opensm.first.log"
sib_start opensm 300 env SOFTIB_NODE=H1 OSM_TMP_DIR="$osm" OSM_CACHE_DIR="$osm" \
	"$osm_softib" run -- opensm -d2 -s 1 -F "$SIB_TMP/keys.conf" -f "$osm/opensm.log" \
	-P "$SIB_TMP/partitions.conf"
for ((i = 0; i < 600; i++)); do
	grep -q 'SUBNET UP' "$osm/opensm.log" 2>/dev/null && break
	sleep 0.1
done
grep -q 'SUBNET UP' "$osm/opensm.log" || { tail -20 "$osm/opensm.log"; sib_fail "OpenSM did not come back"; }
# H4 first now: numbering afresh would give it H2's old LID.
dg_up H4
[ "$DG_LID" = "$lid4" ] || sib_fail "H4 had LID $lid4 and got $DG_LID from OpenSM restarted"
dg_up H2
[ "$DG_LID" = "$lid2" ] || sib_fail "H2 had LID $lid2 and got $DG_LID from OpenSM restarted"
echo "opensm: restarted, it gave H2 LID $lid2 and H4 LID $lid4 again"
osm_errors "$osm/opensm.first.log"
osm_down

# --- the fat tree: every diagnostic, then the RDMA CM across it
cport=$(sib_free_port tcp) || exit 1
osm_up fat-tree-4x2.topo --perfmgr --perfmgr_sweep_time_s 1 --console loopback --console-port "$cport"
dg_all 'softib0 port 1 pid [0-9]+ [^"]*'

# OpenSM's performance manager has read every switch's counters, those of
# leaf 2's port to H3 with rping's packets (its console, on loopback).
exec {con}<>"/dev/tcp/127.0.0.1/$cport" || sib_fail "OpenSM's console does not answer on $cport"
# (a line at a time: it reads one command a read)
sleep 0.5
printf 'perfmgr print_counters\r\n' >&"$con"
sleep 1
printf 'quit\r\n' >&"$con"
timeout 10 cat <&"$con" | tr -d '\r' >"$SIB_TMP/perfmgr.out"
exec {con}>&-
n=$(grep -oE '^"(spine|leaf) [0-9]" 0x[0-9a-f]+ active TRUE' "$SIB_TMP/perfmgr.out" | sort -u | wc -l)
[ "$n" -eq 6 ] || { head -40 "$SIB_TMP/perfmgr.out"; sib_fail "OpenSM's PerfMgr read $n switches, not 6"; }
n=$(sed -n '/^"leaf 2" .* port 1$/,/^"/s/^ *xmit_pkts *: \([0-9]*\).*/\1/p' "$SIB_TMP/perfmgr.out" | head -1)
echo "opensm: PerfMgr read 6 switches; leaf 2's port to H3 sent ${n:-nothing}"
[ "${n:-0}" -gt 100 ] || { head -60 "$SIB_TMP/perfmgr.out"; sib_fail "PerfMgr: leaf 2's port to H3 counted no traffic"; }

# H4 and H8: rping's H3 and H7 stay taken until the switch hears nothing
# from them for 5 s (a program killed by a signal says no goodbye).
osm_rc rc H4 H8

port=$(sib_free_port tcp) || exit 1
sib_start rping.server 60 env SOFTIB_NODE=H4 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	rping -s -a 127.0.0.1 -p "$port" -C 5 -v
sib_wait_listen rping.server "$port" || { sib_show rping.server; sib_fail "rping -s did not listen"; }
sib_run rping.client 60 env SOFTIB_NODE=H8 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	rping -c -a 127.0.0.1 -p "$port" -C 5 -v
sib_wait rping.server
if [ "${SIB_RC[rping.client]}" -ne 0 ] || [ "${SIB_RC[rping.server]}" -ne 0 ]; then
	sib_show rping.server rping.client
	tail -30 "$osm/opensm.log"
	sib_fail "rping under OpenSM: client $(sib_status_text "${SIB_RC[rping.client]}"), server $(sib_status_text "${SIB_RC[rping.server]}")"
fi
sib_expect "$(sib_out rping.client)" '^ping data: rdma-ping-4: ' "rping's 5th ping" || sib_fail "rping"

# Multicast through the MFTs OpenSM writes (it sets each switch's
# MulticastFDBTop, which port 0 says it has): mckey from leaf 2 to leaf 3.
sib_start mc.recv 60 env SOFTIB_NODE=H6 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	mckey -m 239.1.2.11 -b 127.0.0.1 -C 5
for ((i = 0; i < 300; i++)); do
	grep -q '^receiving data transfers' "$(sib_out mc.recv)" 2>/dev/null && break
	sleep 0.1
done
sleep 1 # OpenSM writes the group's MFT blocks after it answered the join
sib_run mc.send 60 env SOFTIB_NODE=H4 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	mckey -m 239.1.2.11 -b 127.0.0.1 -s -C 5 || { sib_show mc.send; sib_fail "mckey's sender failed"; }
sib_wait mc.recv ||
	{ sib_show mc.recv; grep -i mcast "$osm/opensm.log" | tail; sib_fail "mckey's receiver under OpenSM got nothing"; }
sib_expect "$(sib_out mc.recv)" '^data transfers complete' "the receiver's 5 messages" || sib_fail "mckey"

# A second OpenSM (H2, polling the master and sweeping every second)
# becomes STANDBY;
# the master is killed under rping between H3 and H7; the standby takes
# over, and the connection and its LIDs live on, as on hardware.
mkdir -p "$osm/2"
printf 'sminfo_polling_timeout 1000\npolling_retry_number 2\nsweep_interval 1\n' >"$osm/2/opensm.conf"
sib_start opensm2 300 env SOFTIB_NODE=H2 OSM_TMP_DIR="$osm/2" OSM_CACHE_DIR="$osm/2" \
	"$osm_softib" run -- opensm -d2 -F "$osm/2/opensm.conf" -f "$osm/2/opensm.log"
for ((i = 0; i < 600; i++)); do
	grep -q 'Entering STANDBY state' "$osm/2/opensm.log" 2>/dev/null && break
	sleep 0.1
done
grep -q 'Entering STANDBY state' "$osm/2/opensm.log" 2>/dev/null ||
	{ sib_show opensm2; tail -20 "$osm/2/opensm.log"; sib_fail "the second OpenSM did not become STANDBY"; }
dg_traffic_start
# rping is connected once leaf 2's port to H3 carries its packets.
for ((i = 0; i < 30; i++)); do
	dg_diag perf_0 perfquery -x "$DG_LEAF2" 1
	sleep 0.5
	dg_diag perf_1 perfquery -x "$DG_LEAF2" 1
	[ "$(dg_field perf_1 PortXmitPkts)" -gt $(($(dg_field perf_0 PortXmitPkts) + 100)) ] && break
done
dg_diag sm_before sminfo
sib_expect "$(sib_out sm_before)" '^sminfo: sm lid 1 .*SMINFO_MASTER' "H1's OpenSM the master" || sib_fail "sminfo"
kill -TERM "${SIB_PID[opensm]}"
sib_wait opensm
for ((i = 0; i < 600; i++)); do
	grep -q 'Entering MASTER state' "$osm/2/opensm.log" && break
	sleep 0.1
done
grep -q 'Entering MASTER state' "$osm/2/opensm.log" ||
	{ tail -20 "$osm/2/opensm.log"; sib_fail "the standby OpenSM did not take over"; }
echo "opensm: the standby took over $((i / 10)).$((i % 10)) s after the master was killed"
dg_diag sm_after sminfo
sib_expect "$(sib_out sm_after)" '^sminfo: sm lid [0-9]+ sm guid 0x200000100000201, .*SMINFO_MASTER' \
	"H2's OpenSM the master" || sib_fail "sminfo after the takeover"
dg_diag perf_a perfquery -x "$DG_LEAF2" 1
sleep 1
dg_diag perf_b perfquery -x "$DG_LEAF2" 1
[ "$(dg_field perf_b PortXmitPkts)" -gt "$(dg_field perf_a PortXmitPkts)" ] ||
	{ sib_show perf_a perf_b; sib_fail "rping stopped when the standby took over"; }
kill -0 "${SIB_PID[traffic.client]}" 2>/dev/null && kill -0 "${SIB_PID[traffic.server]}" 2>/dev/null ||
	{ sib_show traffic.client traffic.server; sib_fail "rping ended when the master went"; }
dg_traffic_stop
kill -TERM "${SIB_PID[opensm2]}" "${SIB_PID[switch]}"
sib_wait opensm2
sib_wait switch
osm_errors "$osm/opensm.log"
osm_errors "$osm/2/opensm.log"
echo "opensm: OpenSM brought up two switches and the fat tree; every diagnostic, ibv_rc_pingpong, rping and mckey ran under it, and a standby took over under rping"

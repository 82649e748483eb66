#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# OpenSM, unmodified, is the subnet manager of a softib fabric: it runs as
# CA H1 of tests/fabric/fat-tree-4x2.topo under `softib run`, reaching its
# port through libibumad and /dev/infiniband/umad31 and issm31
# (provider/umad.h): it discovers the six switches by directed route,
# assigns LIDs, writes the LFTs, brings every port ACTIVE ("SUBNET UP"),
# answers SMInfo (sminfo), and is the SA: rping, which needs PathRecords
# and the RDMA CM's ServiceRecords, connects H3 on leaf 2 and H7 on leaf 4,
# and ibv_rc_pingpong passes between them.  The HCAs accept the SM's Sets
# from the cable, and the SM's own port from itself (the 0-hop directed
# route a local SM configures its port with).  saquery reads OpenSM's
# NodeRecord and PathRecord tables, RMPP answers of several segments.
. "$(dirname "$0")/lib.sh"

sib_init opensm
sib_need opensm rping ibv_rc_pingpong sminfo ibnetdiscover saquery timeout
sib_fabric_switch fat-tree-4x2.topo

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
osm=$SIB_TMP/osm
mkdir -p "$osm"
sib_start opensm 300 env SOFTIB_NODE=H1 OSM_TMP_DIR="$osm" OSM_CACHE_DIR="$osm" \
	"$osm_softib" run -- opensm -d2 -F /dev/null -f "$osm/opensm.log"
for ((i = 0; i < 600; i++)); do
	grep -q 'SUBNET UP' "$osm/opensm.log" 2>/dev/null && break
	kill -0 "${SIB_PID[opensm]}" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q 'SUBNET UP' "$osm/opensm.log" 2>/dev/null; then
	sib_show opensm switch
	tail -30 "$osm/opensm.log" 2>/dev/null
	sib_fail "OpenSM did not bring the fabric up"
fi
echo "opensm: SUBNET UP after $((i / 10)).$((i % 10)) s"

# diag ID ARGS...: a program as CA H5 (leaf 3).
diag()
{
	local id=$1

	shift
	sib_run "$id" 60 env SOFTIB_NODE=H5 "$SOFTIB" run -- "$@" ||
		{ sib_show "$id"; tail -20 "$osm/opensm.log"; sib_fail "$* failed under OpenSM"; }
}
# OpenSM sweeps a CA that attaches (the switch's trap 128): wait for H5.
for ((i = 0; i < 100; i++)); do
	sib_run ibstat 30 env SOFTIB_NODE=H5 "$SOFTIB" run -- ibstat softib0
	grep -q 'State: Active' "$(sib_out ibstat)" && break
	sleep 0.2
done
sib_expect "$(sib_out ibstat)" 'SM lid: 1' "OpenSM's LID" || { sib_show ibstat; sib_fail "H5 has no SM"; }

diag sminfo sminfo
sib_expect "$(sib_out sminfo)" 'SMINFO_MASTER' "OpenSM as master" || sib_fail "sminfo"
diag discover ibnetdiscover
n=$(grep -c '^Switch' "$(sib_out discover)")
[ "$n" -eq 6 ] || { sib_show discover; sib_fail "ibnetdiscover found $n switches under OpenSM, not 6"; }
# OpenSM's SA tables travel by RMPP, several segments each: OpenSM writes
# one whole answer, the umad device cuts it into segments, and saquery's
# reads them back put together (provider/umad.c).
# (The umad device sends an SM's multi-segment answer at once and does not
# resend on the requester's ACKs: a lost segment costs saquery a timeout,
# 1 run in about 8 here.  Once more then, said; a second loss fails.)
if ! sib_run nodes 60 env SOFTIB_NODE=H5 "$SOFTIB" run -- saquery; then
	echo "note: saquery timed out once (a lost RMPP segment is not resent yet): once more"
	diag nodes saquery
fi
n=$(grep -c 'NodeRecord dump' "$(sib_out nodes)")
[ "$n" -eq 8 ] || { sib_show nodes; sib_fail "saquery: $n NodeRecords, not 8 (6 switches, H1, H5)"; }
diag paths saquery -p
n=$(grep -c 'PathRecord dump' "$(sib_out paths)")
[ "$n" -ge 64 ] || { sib_show paths; sib_fail "saquery -p: $n PathRecords, not 8 x 8"; }

# Data and the RDMA CM between two leaves, routed and served by OpenSM.
SIB_SERVER_WRAP=(env SOFTIB_NODE=H3)
SIB_CLIENT_WRAP=(env SOFTIB_NODE=H7)
port=$(sib_free_port tcp) || exit 1
sib_pair rc 120 "$port" 127.0.0.1 ibv_rc_pingpong -d softib0 -i 1 -n 100 ||
	{ tail -20 "$osm/opensm.log"; sib_fail "ibv_rc_pingpong under OpenSM failed"; }
sib_expect "$(sib_out rc.client)" '^100 iters in' "the ping-pong" || sib_fail "no ping-pong result"

port=$(sib_free_port tcp) || exit 1
sib_start rping.server 60 env SOFTIB_NODE=H3 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	rping -s -a 127.0.0.1 -p "$port" -C 5 -v
sib_wait_listen rping.server "$port" || { sib_show rping.server; sib_fail "rping -s did not listen"; }
sib_run rping.client 60 env SOFTIB_NODE=H7 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	rping -c -a 127.0.0.1 -p "$port" -C 5 -v
sib_wait rping.server
if [ "${SIB_RC[rping.client]}" -ne 0 ] || [ "${SIB_RC[rping.server]}" -ne 0 ]; then
	sib_show rping.server rping.client
	tail -30 "$osm/opensm.log"
	sib_fail "rping under OpenSM: client $(sib_status_text "${SIB_RC[rping.client]}"), server $(sib_status_text "${SIB_RC[rping.server]}")"
fi
sib_expect "$(sib_out rping.client)" '^ping data: rdma-ping-4: ' "rping's 5th ping" || sib_fail "rping"

# OpenSM's errors: none but ERR 3111, an SMP answered with an error status
# (0x1C: a PortInfo Set for a state the port cannot take), which a CA whose
# program came and went mid-sweep (the ibstat loop above) may cause, as a
# port that goes down on hardware does.
errors=$(grep ' ERR ' "$osm/opensm.log" | grep -vc ' ERR 3111: ')
kill -TERM "${SIB_PID[opensm]}" "${SIB_PID[switch]}"
sib_wait opensm
sib_wait switch
echo "opensm: $(grep -c ' ERR ' "$osm/opensm.log") ERR lines in its log, $errors other than 3111"
[ "$errors" -eq 0 ] || { grep ' ERR ' "$osm/opensm.log" | head -20; sib_fail "OpenSM logged errors"; }
echo "opensm: OpenSM brought the fat tree up and served the SA; sminfo, ibnetdiscover, saquery, ibv_rc_pingpong and rping ran under it"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A switched fabric: softib-switch hosts tests/fabric/fat-tree-4x2.topo (4
# leaves, 2 spines) with --data switched; softib-sm attaches as its CA H1,
# discovers it with directed-route SMPs and routes it (updn); HCAs attach as
# H3 (leaf 2) and H7 (leaf 4) with SOFTIB_FABRIC and SOFTIB_NODE.  An HCA
# is ACTIVE with the LID the SM gave it; ibv_rc_pingpong, ibv_ud_pingpong
# and perftest (ib_write_bw, ib_read_lat, ib_send_bw -c UD) pass between
# the two leaves, every packet through three switches, and so do
# ucx_perftest over rc_verbs and an Open MPI allreduce with a rank on each
# leaf; a port asking to be
# a CA already taken is refused and its program cannot open softib0; a
# datagram from a socket that attached to nothing is dropped and counted;
# the switch's capture (SOFTIB_CAPTURE) decodes, directed-route SMPs and
# all.  The RDMA CM works through softib-sm's SA (rping, ib_send_bw -R),
# and multicast through the MFTs it writes (mckey, leaf to leaf).
. "$(dirname "$0")/lib.sh"

sib_init fabric
sib_need ibv_rc_pingpong ibv_ud_pingpong ibv_devinfo ib_write_bw ib_read_lat ib_send_bw rping timeout
sib_fabric_switch fat-tree-4x2.topo SOFTIB_CAPTURE="$SIB_TMP/switch.pcap"
# Sweeps every half second: a port that attaches is configured soon.
sib_start sm 300 env SOFTIB_NODE=H1 SOFTIB_LOG=info "$SM" --routing updn --sweep 0.5

# H3 comes up with the LID the SM gave it.
sib_run devinfo 60 env SOFTIB_NODE=H3 "$SOFTIB" run -- ibv_devinfo -v ||
	{ sib_show devinfo sm switch; sib_fail "ibv_devinfo as H3 failed"; }
sib_expect "$(sib_out devinfo)" 'state:[[:space:]]+PORT_ACTIVE' "H3 ACTIVE" ||
	{ sib_show devinfo sm; sib_fail "H3's port is not ACTIVE"; }
sib_expect "$(sib_out devinfo)" 'sm_lid:[[:space:]]+1$' "the SM's LID" || sib_fail "no SM LID"
sib_expect "$(sib_out devinfo)" 'port_lid:[[:space:]]+[1-9][0-9]*$' "a LID" || sib_fail "no LID"

# Between leaf 2 and leaf 4: leaf, spine, leaf.
SIB_SERVER_WRAP=(env SOFTIB_NODE=H3)
SIB_CLIENT_WRAP=(env SOFTIB_NODE=H7)
for t in rc ud; do
	port=$(sib_free_port tcp) || exit 1
	sib_pair "$t" 120 "$port" 127.0.0.1 "ibv_${t}_pingpong" -d softib0 -i 1 -n 100 ||
		{ sib_show sm; sib_fail "ibv_${t}_pingpong across the fabric failed"; }
	sib_expect "$(sib_out "$t.client")" '^100 iters in' "$t client" || sib_fail "$t: no result"
done
# perftest: RC bandwidth, READ latency, UD sends
while read -r id prog args; do
	port=$(sib_free_port tcp) || exit 1
	# shellcheck disable=SC2086 # args are words
	sib_pair "$id" 120 "$port" 127.0.0.1 "$prog" -d softib0 -i 1 $args ||
		{ sib_show sm; sib_fail "$prog $args across the fabric failed"; }
	sib_expect "$(sib_out "$id.client")" '^ *[0-9]+ +200 ' "$id's result" ||
		{ sib_show "$id.client"; sib_fail "$prog printed no result line"; }
done <<'CASES'
write_bw ib_write_bw -n 200
read_lat ib_read_lat -n 200
ud_send_bw ib_send_bw -c UD -n 200
CASES

# UCX over rc_verbs and ud_verbs, leaf 2 to leaf 4.
if command -v ucx_perftest >/dev/null; then
	port=$(sib_free_port tcp) || exit 1
	SIB_SERVER_WRAP=(env SOFTIB_NODE=H3 UCX_TLS=rc_verbs,ud_verbs,self)
	SIB_CLIENT_WRAP=(env SOFTIB_NODE=H7 UCX_TLS=rc_verbs,ud_verbs,self)
	sib_pair ucx 120 "$port" 127.0.0.1 ucx_perftest -t tag_lat -n 200 -w 10 ||
		{ sib_show sm; sib_fail "ucx_perftest across the fabric failed"; }
	sib_expect "$(sib_out ucx.client)" '^Final: +200 ' "ucx_perftest's result" ||
		sib_fail "ucx_perftest printed no Final line"
else
	echo "fabric: skipped ucx_perftest (not installed)"
fi
# Open MPI with pml ucx, one rank on each leaf (H2, H4, H6, H8).
if command -v mpirun >/dev/null && [ -x "$B/mpi/mpi_allreduce" ]; then
	sib_run mpi 180 "$SOFTIB" run -- mpirun --allow-run-as-root --oversubscribe -np 4 \
		--mca pml ucx -x UCX_TLS=rc_verbs,ud_verbs,self -x SOFTIB_FABRIC \
		sh -c 'SOFTIB_NODE=H$((2 * OMPI_COMM_WORLD_RANK + 2)) exec "$0"' "$B/mpi/mpi_allreduce" ||
		{ sib_show mpi sm; sib_fail "mpirun -np 4 across the fabric failed"; }
	sib_expect "$(sib_out mpi)" '^mpi_allreduce: OK$' "mpi_allreduce's OK" ||
		{ sib_show mpi; sib_fail "mpi_allreduce did not check out"; }
else
	echo "fabric: skipped mpirun (Open MPI or tests/mpi not built)"
fi

# The RDMA CM through the fabric's SA (softib-sm answers on QP1 for the
# ports its sweeps found): rping, leaf 2 to leaf 4, and perftest's -R.
port=$(sib_free_port tcp) || exit 1
sib_start rping.server 60 env SOFTIB_NODE=H3 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	rping -s -a 127.0.0.1 -p "$port" -C 10 -v
sib_wait_listen rping.server "$port" || { sib_show sm; sib_fail "rping -s on H3 did not listen"; }
sib_run rping.client 60 env SOFTIB_NODE=H7 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	rping -c -a 127.0.0.1 -p "$port" -C 10 -v
sib_wait rping.server
if [ "${SIB_RC[rping.client]}" -ne 0 ] || [ "${SIB_RC[rping.server]}" -ne 0 ]; then
	sib_show rping.server rping.client sm
	sib_fail "rping across the fabric: client $(sib_status_text "${SIB_RC[rping.client]}"), server $(sib_status_text "${SIB_RC[rping.server]}")"
fi
sib_expect "$(sib_out rping.client)" '^ping data: rdma-ping-9: ' "rping's 10th ping" ||
	sib_fail "rping across the fabric did not ping 10 times"
SIB_SERVER_WRAP=(env SOFTIB_NODE=H3)
SIB_CLIENT_WRAP=(env SOFTIB_NODE=H7)
port=$(sib_free_port tcp) || exit 1
sib_pair send_bw_R 120 "$port" 127.0.0.1 ib_send_bw -d softib0 -i 1 -R -n 200 ||
	{ sib_show sm; sib_fail "ib_send_bw -R across the fabric failed"; }
sib_expect "$(sib_out send_bw_R.client)" '^ *[0-9]+ +200 ' "ib_send_bw -R's result" ||
	{ sib_show send_bw_R.client; sib_fail "ib_send_bw -R printed no result line"; }
# Multicast through the switches' MFTs, which softib-sm writes when a port
# joins: a receiver on leaf 2 gets 5 datagrams a sender on leaf 4 sends to
# the group.  (mckey exits 0 even after a failed join: its output says.)
if command -v mckey >/dev/null; then
	sib_start mckey.recv 60 env SOFTIB_NODE=H3 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
		mckey -m 239.1.2.3 -b 127.0.0.1 -C 5
	for ((i = 0; i < 300; i++)); do
		grep -q 'receiving data transfers' "$(sib_out mckey.recv)" && break
		kill -0 "${SIB_PID[mckey.recv]}" 2>/dev/null || break
		sleep 0.1
	done
	sib_run mckey.send 60 env SOFTIB_NODE=H7 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
		mckey -m 239.1.2.3 -b 127.0.0.1 -s -C 5
	sib_wait mckey.recv
	if [ "${SIB_RC[mckey.recv]}" -ne 0 ] ||
		! sib_expect "$(sib_out mckey.recv)" '^data transfers complete' "the receiver's 5 datagrams"; then
		sib_show mckey.recv mckey.send sm
		sib_fail "multicast across the fabric: the receiver got nothing"
	fi
fi

# H3 again while another process is H3: refused, no device.
sib_start holder 60 env SOFTIB_NODE=H3 "$SOFTIB" run -- ibv_rc_pingpong -p "$(sib_free_port tcp)"
sleep 2
sib_run taken 30 env SOFTIB_NODE=H3 "$SOFTIB" run -- ibv_devinfo
sib_expect "$(sib_out taken)" 'another live port is already that CA' "the refusal" ||
	{ sib_show taken; sib_fail "a second H3 was not refused"; }
kill "${SIB_PID[holder]}" 2>/dev/null
sib_wait holder

# A datagram from a socket cabled to nothing.
exec 3<>/dev/udp/127.0.0.1/"${SOFTIB_FABRIC##*:}" && echo -n "not a packet from a port" >&3 && exec 3>&-
sleep 0.5
kill -TERM "${SIB_PID[sm]}" "${SIB_PID[switch]}"
sib_wait sm
sib_wait switch
cat "$(sib_out switch)"
sib_expect "$(sib_out switch)" 'dropped [1-9][0-9]* from no port' "the stray datagram counted" ||
	sib_fail "the switch did not count a datagram from no port"
sib_expect "$(sib_out switch)" '[1-9][0-9]* packets forwarded' "packets forwarded" ||
	sib_fail "the switch forwarded nothing"
sib_expect "$(sib_out sm)" 'sweep: [0-9]+ nodes \(6 switches' "the SM found six switches" ||
	{ sib_show sm; sib_fail "the SM did not find the fabric"; }
sib_expect "$(sib_out sm)" '[1-9][0-9]* SA requests \(0 from a LID no sweep found\)' "the SA's requests" ||
	{ sib_show sm; sib_fail "softib-sm served no SA request"; }
if command -v mckey >/dev/null; then
	sib_expect "$(sib_out sm)" 'multicast: [1-9][0-9]* MFT blocks written for [1-9][0-9]* groups, 0 failed' \
		"the MFT blocks" || sib_fail "softib-sm wrote no multicast forwarding table"
fi
# The switch's capture: the SM's discovery by directed route, decoded
# (it comes first: the first frames in full are enough), then every frame
# in one line each.
"$SOFTIB" decode -v "$SIB_TMP/switch.pcap" 2>&1 | head -n 3000 >"$SIB_TMP/decode.head"
"$SOFTIB" decode "$SIB_TMP/switch.pcap" >"$SIB_TMP/decode.out" 2>&1
grep -m2 -E 'directed-route\) Get\(NodeInfo\)|HopPointer' "$SIB_TMP/decode.head"
sib_expect "$SIB_TMP/decode.head" 'directed-route\) Get\(NodeInfo\)' "a NodeInfo Get in the capture" ||
	sib_fail "the switch's capture shows no discovery"
sib_expect "$SIB_TMP/decode.head" 'DirectedRoute D=1 HopPointer=[0-9]+ HopCount=[0-9]+ .*InitialPath=1,[0-9]' \
	"a response's route" ||
	{ head -40 "$SIB_TMP/decode.head"; sib_fail "softib decode shows no directed-route fields"; }
# every packet decodes but the stray datagram above (cable packets too)
sib_expect "$SIB_TMP/decode.out" '^packets: [0-9]+ ok: [0-9]+ bad: 1$' "one bad packet" ||
	{ grep BAD "$SIB_TMP/decode.out" | head; tail -1 "$SIB_TMP/decode.out"
	  sib_fail "the capture has packets softib decode calls bad"; }
sib_expect "$SIB_TMP/decode.out" 'cable +raw, EtherType 0x88b5  ATTACHED "H3"' "H3's attach" ||
	sib_fail "softib decode shows no cable packets"
echo "fabric: ibv_rc/ud_pingpong, perftest, UCX, MPI, the RDMA CM (rping, ib_send_bw -R) and multicast (mckey) ran through softib-switch, routed by softib-sm and its SA"

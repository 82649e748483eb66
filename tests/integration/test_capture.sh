#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# SOFTIB_CAPTURE on both sides of an ibv_rc_pingpong run.  Each capture must
#  - decode with `softib decode`, every packet's ICRC and VCRC correct:
#    its last line is "packets: N ok: N bad: 0" with N > 0;
#  - decode in tshark (an independent dissector) with no malformed packet,
#    and tshark must count the same N packets;
#  - hold the RC SEND FIRST, MIDDLE and LAST packets of pingpong's 4096-byte
#    messages at an MTU of 1024 (IBA 9.4.1: 4 packets each) and RC
#    Acknowledges (opcode 17), in both directions.
# The SM's MADs on QP0/QP1 are in the captures too and must decode as well.
. "$(dirname "$0")/lib.sh"

sib_init capture
sib_need ibv_rc_pingpong ss timeout
sib_need_sm

# Payload heuristics off: RPC-over-RDMA's throws on short payloads and cuts
# the dissection short (tshark 4.0: the rpcrdma heuristic reads past them).
HS=()
for h in rpcrdma_infiniband smcr_infiniband smb_direct_infiniband nvme_rdma lnet_ib \
	iser_infiniband eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband; do
	HS+=(--disable-heuristic "$h")
done

# IBA 9.2 Table 38: RC SEND First, Middle, Last; RC Acknowledge.
declare -A OPNAME=([0]="RC SEND First" [1]="RC SEND Middle" [2]="RC SEND Last" [17]="RC Acknowledge")

# check_capture FILE WHO: prints what is wrong and returns 1, or returns 0.
check_capture()
{
	local file=$1 who=$2 last n ok bad tn malformed op ops

	if [ ! -s "$file" ]; then
		echo "FAIL: $who: no capture written to $file"
		return 1
	fi
	"$SOFTIB" decode "$file" >"$file.decode" 2>&1
	last=$(tail -n 1 "$file.decode")
	if ! [[ $last =~ ^packets:\ ([0-9]+)\ ok:\ ([0-9]+)\ bad:\ ([0-9]+)$ ]]; then
		echo "FAIL: $who: softib decode did not end with its packet count:"
		tail -n 20 "$file.decode"
		return 1
	fi
	n=${BASH_REMATCH[1]} ok=${BASH_REMATCH[2]} bad=${BASH_REMATCH[3]}
	if [ "$n" -eq 0 ] || [ "$ok" -ne "$n" ] || [ "$bad" -ne 0 ]; then
		echo "FAIL: $who: softib decode says: $last"
		grep -n 'BAD' "$file.decode" | head -n 20
		return 1
	fi
	echo "$who: softib decode: $last"

	command -v tshark >/dev/null 2>&1 || {
		echo "note: tshark is not installed; $who capture not checked with tshark"
		return 0
	}
	if ! tshark -r "$file" "${HS[@]}" -T fields -e frame.number -e infiniband.bth.opcode \
		>"$file.tshark" 2>"$file.tshark.err"; then
		echo "FAIL: $who: tshark could not read the capture:"
		cat "$file.tshark.err"
		return 1
	fi
	tn=$(wc -l <"$file.tshark")
	if [ "$tn" -ne "$n" ]; then
		echo "FAIL: $who: tshark shows $tn packets, softib decode $n"
		return 1
	fi
	malformed=$(tshark -r "$file" "${HS[@]}" -Y _ws.malformed 2>/dev/null)
	if [ -n "$malformed" ]; then
		echo "FAIL: $who: tshark finds malformed packets:"
		head -n 20 <<<"$malformed"
		return 1
	fi
	ops=" $(cut -f2 "$file.tshark" | tr ',' '\n' | sort -un | tr '\n' ' ') "
	for op in 0 1 2 17; do
		case "$ops" in
		*" $op "*) ;;
		*)
			echo "FAIL: $who: no ${OPNAME[$op]} (opcode $op) packet; opcodes seen:$ops"
			return 1 ;;
		esac
	done
	echo "$who: tshark: $tn packets, none malformed, opcodes:$ops"
	return 0
}

port=$(sib_free_port tcp) || exit 1
SIB_SERVER_WRAP=(env SOFTIB_CAPTURE="$SIB_TMP/server.pcap")
SIB_CLIENT_WRAP=(env SOFTIB_CAPTURE="$SIB_TMP/client.pcap")
sib_pair rc_capture 300 "$port" 127.0.0.1 ibv_rc_pingpong -d softib0 -i 1 -n 20 -s 4096 -m 1024 ||
	exit 1

ok=1
check_capture "$SIB_TMP/server.pcap" server || ok=0
check_capture "$SIB_TMP/client.pcap" client || ok=0
if [ $ok -ne 1 ]; then
	SIB_KEEP=1
	echo "captures kept in $SIB_TMP"
	sib_show rc_capture.server rc_capture.client
	exit 1
fi
echo "capture: both sides decode clean"

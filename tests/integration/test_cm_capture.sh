#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The IB CM's MADs on the wire, as SOFTIB_CAPTURE records them: rping -C 10
# (REQ, REP, RTU, DREQ, and the server's DREP), rping to a port nobody listens on (REJ
# reason 8) and udaddy (SIDR_REQ, SIDR_REP).  Each capture must
#  - decode with `softib decode`, every CRC correct ("bad: 0"), and name
#    the CM messages expected; `softib decode -v` shows their fields;
#  - decode in tshark with no malformed packet and the same packet count;
#  - show in tshark's CM fields what was sent: the REQ's ServiceID carries
#    the RDMA IP CM Service's TCP port space and rping's port, its
#    private data the IP header (Annex A11) with both addresses; the REJ
#    says reason 8.
. "$(dirname "$0")/lib.sh"

sib_init cm_capture
sib_need rping udaddy ss timeout
sib_need_sm

HS=()
for h in rpcrdma_infiniband smcr_infiniband smb_direct_infiniband nvme_rdma lnet_ib \
	iser_infiniband eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband; do
	HS+=(--disable-heuristic "$h")
done
have_tshark=0
command -v tshark >/dev/null 2>&1 && have_tshark=1
[ $have_tshark -eq 1 ] || echo "note: tshark is not installed; captures checked with softib decode only"

failed=()

# check_capture FILE WHO MESSAGE...: softib decode and tshark agree, nothing
# bad or malformed, and each CM MESSAGE (softib decode's attribute name) is
# in the capture.
check_capture()
{
	local file=$1 who=$2 last n tn malformed m

	shift 2
	if [ ! -s "$file" ]; then
		echo "FAIL: $who: no capture written to $file"
		return 1
	fi
	"$SOFTIB" decode "$file" >"$file.decode" 2>&1
	last=$(tail -n 1 "$file.decode")
	if ! [[ $last =~ ^packets:\ ([0-9]+)\ ok:\ ([0-9]+)\ bad:\ 0$ ]] ||
		[ "${BASH_REMATCH[1]}" -eq 0 ] || [ "${BASH_REMATCH[1]}" -ne "${BASH_REMATCH[2]}" ]; then
		echo "FAIL: $who: softib decode says: $last"
		grep -n 'BAD' "$file.decode" | head -n 20
		return 1
	fi
	n=${BASH_REMATCH[1]}
	for m in "$@"; do
		if ! grep -q "MAD CM [A-Za-z]*($m)" "$file.decode"; then
			echo "FAIL: $who: no CM $m in the capture; its CM MADs:"
			grep -o 'MAD CM .*' "$file.decode" | sort | uniq -c
			return 1
		fi
	done
	"$SOFTIB" decode -v "$file" >"$file.decode_v" 2>&1
	for m in "$@"; do
		case $m in
		ConnectRequest) m='CM REQ +LocalCommID=.* ServiceID=0x0000000001' ;;
		ConnectReply) m='CM REP +LocalCommID=.* RemoteCommID=.* LocalQPN=' ;;
		ConnectReject) m='CM REJ +LocalCommID=.* Reason=0x0008' ;;
		ServiceIDResReq) m='CM SIDR_REQ +RequestID=.* ServiceID=0x0000000001' ;;
		ServiceIDResReqResp) m='CM SIDR_REP +RequestID=.* Status=0x00 .*Q_Key=0x01234567' ;;
		*) continue ;;
		esac
		if ! grep -Eq "^ +$m" "$file.decode_v"; then
			echo "FAIL: $who: softib decode -v shows no line like '$m'"
			return 1
		fi
	done
	echo "$who: softib decode: $last; CM: $(grep -o 'MAD CM [A-Za-z]*([A-Za-z]*)' \
		"$file.decode" | sed 's/MAD CM //' | sort -u | tr '\n' ' ')"
	[ $have_tshark -eq 1 ] || return 0
	tn=$(tshark -r "$file" "${HS[@]}" 2>/dev/null | wc -l)
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
	echo "$who: tshark: $tn packets, none malformed"
}

# tshark_field FILE FILTER FIELD: the field's values in the packets FILTER
# selects, one a line.
tshark_field()
{
	tshark -r "$1" "${HS[@]}" -Y "$2" -T fields -e "$3" 2>/dev/null | tr ',' '\n' | sort -u
}

# num VALUE: a number tshark shows (hex with or without 0x, or decimal) in
# decimal; anything else as it is.
num()
{
	case "$1" in
	0x*) echo $(("$1")) ;;
	*[!0-9]* | "") echo "$1" ;;
	*) echo $((10#$1)) ;;
	esac
}

# ---- rping: the whole handshake and the disconnection
port=$(sib_free_port tcp) || exit 1
sib_start rping.server 60 env SOFTIB_CAPTURE="$SIB_TMP/server.pcap" \
	"$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$port" -C 10 -v
v=fail
if sib_wait_listen rping.server "$port"; then
	sib_run rping.client 60 env SOFTIB_CAPTURE="$SIB_TMP/client.pcap" \
		"$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 10 -v
	sib_wait rping.server
	if [ "${SIB_RC[rping.client]}" -ne 0 ] || [ "${SIB_RC[rping.server]}" -ne 0 ]; then
		echo "FAIL: rping: server $(sib_status_text "${SIB_RC[rping.server]}")," \
			"client $(sib_status_text "${SIB_RC[rping.client]}")"
		sib_show rping.server rping.client
	# The client disconnects and exits without waiting for DISCONNECTED
	# (rping's client never reads it, with the kernel neither): the DREP
	# may arrive after it is gone, so only the server's capture, which
	# received the DREQ and answered it before its DISCONNECTED, must
	# show the DREP.
	elif check_capture "$SIB_TMP/client.pcap" "rping client" ConnectRequest ConnectReply \
		ReadyToUse DisconnectRequest &&
		check_capture "$SIB_TMP/server.pcap" "rping server" ConnectRequest ConnectReply \
			ReadyToUse DisconnectRequest DisconnectReply; then
		v=ok
		if [ $have_tshark -eq 1 ]; then
			# Annex A11: ServiceID 0x0000000001 | port space 0x06 | port.
			f=$SIB_TMP/client.pcap req='infiniband.mad.attributeid == 0x0010'
			got=""
			for x in serviceid.prefix serviceid.protocol serviceid.dport ip_cm.ipv \
				ip_cm.sip4 ip_cm.dip4; do
				got+=" $(num "$(tshark_field "$f" "$req" infiniband.cm.req.$x)")"
			done
			want=" 1 6 $port 4 127.0.0.1 127.0.0.1"
			if [ "$got" != "$want" ]; then
				echo "FAIL: rping client: the REQ in tshark (ServiceID prefix," \
					"port space, port; IP version, addresses):$got, not$want"
				v=fail
			else
				echo "rping client: the REQ in tshark: ServiceID prefix, port space," \
					"port; IP version, addresses:$got"
			fi
		fi
	fi
fi
[ $v = ok ] || failed+=(rping)

# ---- refused: REJ with reason 8
port=$(sib_free_port tcp) || exit 1
v=fail
sib_run refused 60 env SOFTIB_CAPTURE="$SIB_TMP/refused.pcap" \
	"$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 1 -v
if sib_expect "$(sib_out refused)" 'RDMA_CM_EVENT_REJECTED, error 8' "REJECTED with reason 8" &&
	check_capture "$SIB_TMP/refused.pcap" refused ConnectRequest ConnectReject; then
	v=ok
	if [ $have_tshark -eq 1 ]; then
		got=$(num "$(tshark_field "$SIB_TMP/refused.pcap" 'infiniband.mad.attributeid == 0x0012' \
			infiniband.cm.rej.reason)")
		if [ "$got" != 8 ]; then
			echo "FAIL: refused: tshark shows REJ reason '$got', not 8"
			v=fail
		else
			echo "refused: REJ reason in tshark: $got"
		fi
	fi
fi
[ $v = ok ] || failed+=(refused)

# ---- udaddy: SIDR (its port is fixed, 7174: an address of 127/8 of its own)
udaddr=127.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
v=fail
sib_start udaddy.server 60 env SOFTIB_CAPTURE="$SIB_TMP/ud_server.pcap" \
	"$SOFTIB" run -- udaddy -b "$udaddr" -c 1 -C 5
for ((i = 0; i < 300; i++)); do
	sib_cm_listens 7174 "$udaddr" && break
	kill -0 "${SIB_PID[udaddy.server]}" 2>/dev/null || break
	sleep 0.1
done
if sib_run udaddy.client 60 env SOFTIB_CAPTURE="$SIB_TMP/ud_client.pcap" \
	"$SOFTIB" run -- udaddy -s "$udaddr" -c 1 -C 5 && sib_wait udaddy.server &&
	check_capture "$SIB_TMP/ud_client.pcap" "udaddy client" ServiceIDResReq ServiceIDResReqResp &&
	check_capture "$SIB_TMP/ud_server.pcap" "udaddy server" ServiceIDResReq ServiceIDResReqResp; then
	v=ok
else
	sib_show udaddy.server udaddy.client
fi
[ $v = ok ] || failed+=(udaddy)

if [ ${#failed[@]} -gt 0 ]; then
	SIB_KEEP=1
	echo "FAIL: cm_capture: ${failed[*]} (captures kept in $SIB_TMP)"
	exit 1
fi
echo "cm_capture: every CM capture decodes clean"

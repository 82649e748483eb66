#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The forged teardown that used to work: whoever sniffed a connection's
# REQ and REP (here: the client's own capture) knows both comm IDs, and a
# DREQ or a REJ with them, sent from any UDP socket "from" the client's
# LID, ended the connection.  Now every CM message but a REQ counts only
# from its connection's peer (mgmt/cm.h, softib-subnet(7)): the forged DREQs and
# REJs are dropped and counted, none is answered, and the pair keeps
# pinging.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_cm_teardown
sib_need timeout pgrep rping ss
st_setup

cap=$SIB_TMP/client.pcap
ST_CLIENT_ENV=(SOFTIB_CAPTURE="$cap")
st_rping_pair
# What a sniffer learns: the client's comm ID from its REQ, the server's
# comm ID and QP number from the REP (the capture reaches its file within
# a flush interval).
for ((i = 0; i < 50; i++)); do
	"$SOFTIB" decode -v "$cap" >"$SIB_TMP/decode" 2>&1
	ccomm=$(sed -n 's/.*CM REQ *LocalCommID=\(0x[0-9a-f]*\).*/\1/p' "$SIB_TMP/decode" | head -1)
	read -r scomm sqpn <<<"$(sed -n 's/.*CM REP *LocalCommID=\(0x[0-9a-f]*\).* LocalQPN=\(0x[0-9a-f]*\).*/\1 \2/p' "$SIB_TMP/decode" | head -1)"
	[ -n "$ccomm" ] && [ -n "$scomm" ] && break
	sleep 0.2
done
[ -n "$ccomm" ] && [ -n "$scomm" ] && [ -n "$sqpn" ] ||
	{ grep -m 4 'CM RE[QP]' "$SIB_TMP/decode"; sib_fail "the capture does not show the REQ and REP"; }
sib_log "client comm ID $ccomm; server comm ID $scomm, QP $sqpn"

sib_run attack 60 "$ATTACKER" cm-teardown "$ST_SEP" "$ST_CLID" "$ST_SLID" "$ccomm" "$scomm" "$sqpn" 10 ||
	sib_fail "the attacker failed"
cat "$(sib_out attack)"
before=$(st_pings)
sleep 1
after=$(st_pings)
sources=$(st_info "$ST_SPID" "CM sources")
disconnected=$(grep -l 'DISCONNECT' "$(sib_out server)" "$(sib_out client)")
kill -TERM "${SIB_PID[server]}" "${SIB_PID[client]}" 2>/dev/null
{ sib_wait server; sib_wait client; } 2>/dev/null
echo "pings: $before when the attack ended, $after a second later"
echo "server's CM sources: $sources"
wrong=$(sed -n 's/.*dropped \([0-9]*\) from the wrong endpoint .*/\1/p' <<<"$sources")
sib_expect "$(sib_out attack)" '^sent: 20$' "10 DREQs and 10 REJs sent" || sib_fail "the attacker could not send"
sib_expect "$(sib_out attack)" '^answers: 0$' "no answer" || sib_fail "the server's CM answered a forged message"
[ -n "$wrong" ] && [ "$wrong" -ge 20 ] || sib_fail "the server did not count the forged messages (${wrong:-nothing})"
sib_expect "$(sib_out server)" 'CM: (DREQ|REJ) for comm ID .* not from its peer .*: dropped \(1 so far\)' \
	"the server's log" || sib_fail "the server did not log the forged messages"
[ -z "$disconnected" ] || sib_fail "the pair was disconnected ($disconnected)"
[ "$after" -gt "$before" ] || sib_fail "the connection stopped after the attack"
echo "attack_cm_teardown: 10 forged DREQs and 10 REJs with both comm IDs dropped; the connection lived on"

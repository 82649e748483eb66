#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A GetTable flood that used to make softib-sm grow without bound: a port
# registers ServiceRecords until the SA refuses one, then asks for the
# table of them every millisecond and never ACKs a segment.  Each answer
# longer than one MAD is an RMPP transfer the SM keeps until it is ACKed
# or times out; nothing bounded how many.  Now at most 4 wait for one
# requester and 16 MiB for all (softib-sm(8)): the rest are refused with
# ERR_NO_RESOURCES and counted, and the SM's memory stays flat.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_table_flood
sib_need timeout pgrep
st_setup

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# What the SM holds for GetTable answers on their way: "N B" from softib info --sm.
held() {
	"$SOFTIB" info --sm "$SOFTIB_SM" 2>/dev/null |
		sed -n 's/^ *GetTable *\([0-9]*\) answers on their way (\([0-9]*\) bytes).*/\1 \2/p'
}
# Under AddressSanitizer freed memory waits in a quarantine of up to 256 MiB,
# so the SM's RSS says nothing there; its own count still does.
sanitized=0
ldd "$B/softib-sm" 2>/dev/null | grep -q libasan && sanitized=1

secs=8
st_sm sm "$SOFTIB_SM"
smpid=$(pgrep -P "${SIB_PID[sm]}" | head -1)
[ -n "$smpid" ] || sib_fail "no softib-sm process"
sib_start flood $((secs + 60)) "$ATTACKER" table-flood "$SOFTIB_SM" "$secs"
st_wait_for "$(sib_out flood)" '^records: ' 60 || sib_fail "the attacker registered nothing"
before=$(rss "$smpid")
peak=$before most=0 most_bytes=0
while kill -0 "${SIB_PID[flood]}" 2>/dev/null; do
	now=$(rss "$smpid")
	[ -n "$now" ] && [ "$now" -gt "$peak" ] && peak=$now
	read -r n bytes <<<"$(held)"
	[ -n "$n" ] && [ "$n" -gt "$most" ] && most=$n
	[ -n "$bytes" ] && [ "$bytes" -gt "$most_bytes" ] && most_bytes=$bytes
	sleep 0.2
done
sib_wait flood || sib_fail "the attacker failed"
cat "$(sib_out flood)"
sib_run smcounters 10 "$SOFTIB" info --sm "$SOFTIB_SM" || sib_fail "softib info --sm failed"
cat "$(sib_out smcounters)"
records=$(sed -n 's/^records: //p' "$(sib_out flood)")
asked=$(sed -n 's/^asked: //p' "$(sib_out flood)")
refused=$(sed -n 's/^refused: //p' "$(sib_out flood)")
grew=$((peak - before))
echo "softib-sm RSS: ${before} KiB before the flood, ${peak} KiB at most during it (+${grew} KiB)"
echo "GetTable answers the SM held during the flood: at most $most ($most_bytes bytes)"
[ -n "$records" ] && [ "$records" -ge 16 ] || sib_fail "only ${records:-no} records: the table fits one MAD"
[ -n "$asked" ] && [ "$asked" -ge $((secs * 200)) ] || sib_fail "the attacker asked only ${asked:-nothing}: no flood"
[ -n "$refused" ] && [ "$refused" -gt 0 ] || sib_fail "no GetTable was refused"
sib_expect "$(sib_out smcounters)" 'GetTable +[0-9]+ answers on their way \([0-9]+ bytes\); [1-9][0-9]* refused at the limits' \
	"softib info --sm counts the refused GetTables" || sib_fail "the SM did not count the refused GetTables"
sib_expect "$(sib_out smcounters)" 'ServiceRecords .* [1-9][0-9]* Sets refused at the limits' \
	"softib info --sm counts the refused record" || sib_fail "the SM did not count the refused ServiceRecord"
sib_expect "$(sib_out sm)" 'softib-sm: GetTable from .* refused: 4 answers to it on their way already' \
	"the SM's log" || sib_fail "softib-sm did not log the refused GetTables"
# 4 transfers of the table are some 50 KiB; before the limits the SM kept
# every answer until its timeout, and grew by more than 10 MiB here.
[ "$most" -ge 1 ] && [ "$most" -le 4 ] || sib_fail "the SM held $most GetTable answers for one port"
[ "$most_bytes" -le $((4 * records * 176)) ] || sib_fail "the SM held $most_bytes bytes of answers"
if [ $sanitized -eq 0 ]; then
	[ "$grew" -lt 4096 ] || sib_fail "softib-sm grew by $grew KiB during the flood"
else
	echo "note: AddressSanitizer build: softib-sm's RSS not judged (its quarantine keeps freed memory)"
fi
echo "attack_table_flood: $asked GetTables of $records records, $refused refused; the SM held at most $most answers ($most_bytes bytes) and grew by $grew KiB"

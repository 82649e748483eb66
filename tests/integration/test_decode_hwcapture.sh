#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# softib decode on the capture from real InfiniBand hardware: all 43 packets
# decode with both CRCs right; a flipped payload byte and a flipped VCRC byte
# are each caught and named on the frame's line; -v names the fields; a
# missing, truncated or non-IB file is a clear error (exit 2), not a crash.
set -u
SOFTIB=${SOFTIB:-build/softib}
cap=${SOFTIB_SHARED_DIR:-../shared}/data/ib-hw-capture.pcap

if [ ! -r "$cap" ]; then
	echo "$cap not found (no ../shared in this checkout): skipping"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Runs softib decode, keeping stdout, stderr and the exit status.
decode() {
	"$SOFTIB" decode "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	last=$(tail -n 1 "$tmp/out")
}

# Byte offset, in the pcap, of the first byte of frame $1's IB packet.
frame_offset() {
	local off=24 n=1 incl
	while [ "$n" -lt "$1" ]; do
		incl=$(od -An -t u4 -j $((off + 8)) -N 4 "$cap" | tr -d ' ')
		off=$((off + 16 + incl))
		n=$((n + 1))
	done
	echo $((off + 16 + 16)) # pcap record header, ERF header
}

# Writes a copy of the capture with the byte at offset $2 inverted to $1.
flip_byte() {
	local byte
	cp "$cap" "$1"
	byte=$(od -An -t u1 -j "$2" -N 1 "$cap" | tr -d ' ')
	printf "$(printf '\\%03o' $((byte ^ 0xff)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# 1. The real capture: every packet ok.
decode "$cap"
[ "$last" = "packets: 43 ok: 43 bad: 0" ] || fail "clean capture: last line is '$last'"
[ "$rc" -eq 0 ] || fail "clean capture: exit status $rc, want 0"
grep -q '^ *11 .*RC Acknowledge.* 1 -> 4 .*QP 0x870408 PSN 13896277.*ACK.*MSN 1.*icrc ok vcrc ok' \
	"$tmp/out" || fail "frame 11 line does not show the RC ACK: $(grep '^ *11 ' "$tmp/out")"

# 2. A payload byte of frame 5 (UD, GRH; payload starts 68 bytes in) flipped:
#    both CRCs now disagree and the line says so.
f5=$(frame_offset 5)
flip_byte "$tmp/payload.pcap" $((f5 + 80))
decode "$tmp/payload.pcap"
[ "$last" = "packets: 43 ok: 42 bad: 1" ] || fail "flipped payload: last line is '$last'"
[ "$rc" -eq 1 ] || fail "flipped payload: exit status $rc, want 1"
line=$(grep '^ *5 ' "$tmp/out")
case $line in
*"ICRC BAD (carried 0xa8d66bbd computed 0x"*BAD:*) ;;
*) fail "flipped payload: frame 5 line does not name the ICRC: $line" ;;
esac

# 2b. The same payload flip with the VCRC made right again (the value
#     decode computed above, stored LSB first): only the ICRC is wrong, and
#     the decoder must say ICRC, not VCRC.
vcrc=$(sed -n 's/.*VCRC BAD (carried 0x8388 computed 0x\([0-9a-f]\{4\}\)).*/\1/p' <<<"$line")
if [ -z "$vcrc" ]; then
	fail "flipped payload: no computed VCRC on frame 5's line"
else
	cp "$tmp/payload.pcap" "$tmp/icrc.pcap"
	printf "$(printf '\\x%s\\x%s' "${vcrc:2:2}" "${vcrc:0:2}")" |
		dd of="$tmp/icrc.pcap" bs=1 seek=$((f5 + 132)) conv=notrunc status=none
	decode "$tmp/icrc.pcap"
	[ "$last" = "packets: 43 ok: 42 bad: 1" ] || fail "ICRC only: last line is '$last'"
	line=$(grep '^ *5 ' "$tmp/out")
	case $line in
	*"ICRC BAD (carried 0xa8d66bbd computed 0x"*"vcrc ok"*"BAD: "*ICRC*) ;;
	*) fail "ICRC only: frame 5 line does not blame the ICRC: $line" ;;
	esac
fi

# 3. Frame 5's last VCRC byte flipped: ICRC fine, VCRC named.
flip_byte "$tmp/vcrc.pcap" $((f5 + 133))
decode "$tmp/vcrc.pcap"
[ "$last" = "packets: 43 ok: 42 bad: 1" ] || fail "flipped VCRC: last line is '$last'"
line=$(grep '^ *5 ' "$tmp/out")
case $line in
*"icrc ok VCRC BAD (carried 0x"*"computed 0x8388)"*"BAD: "*) ;;
*) fail "flipped VCRC: frame 5 line does not name the VCRC: $line" ;;
esac

# 4. -v prints every header field by name.
decode -v "$cap"
[ "$last" = "packets: 43 ok: 43 bad: 0" ] || fail "-v: last line is '$last'"
for f in DLID= SLID= PktLen= PSN= P_Key= DestQP= Q_Key= SrcQP= Syndrome= MSN= \
	SGID=fe80::2:c902:24:f636 DGID=ff12:401b:ffff::ffff:ffff; do
	grep -q -- "$f" "$tmp/out" || fail "-v output has no '$f'"
done

# 5. Files that are not a usable capture: exit 2, a message naming the file.
decode "$tmp/does-not-exist.pcap"
[ "$rc" -eq 2 ] && grep -q 'does-not-exist.pcap' "$tmp/err" ||
	fail "missing file: exit $rc, stderr '$(cat "$tmp/err")'"
head -c 1000 "$cap" >"$tmp/truncated.pcap"
decode "$tmp/truncated.pcap"
[ "$rc" -eq 2 ] && grep -q 'truncated' "$tmp/err" ||
	fail "truncated file: exit $rc, stderr '$(cat "$tmp/err")'"
cp "$cap" "$tmp/ethernet.pcap"
printf '\001\000' | dd of="$tmp/ethernet.pcap" bs=1 seek=20 conv=notrunc status=none
decode "$tmp/ethernet.pcap"
[ "$rc" -eq 2 ] && grep -q 'link type' "$tmp/err" ||
	fail "wrong link type: exit $rc, stderr '$(cat "$tmp/err")'"
head -c 10 "$cap" >"$tmp/tiny.pcap"
decode "$tmp/tiny.pcap"
[ "$rc" -eq 2 ] || fail "10-byte file: exit $rc, want 2"
decode
[ "$rc" -eq 2 ] || fail "no FILE: exit $rc, want 2"

[ "$fails" -eq 0 ] || exit 1
echo "softib decode: hardware capture 43/43, corruptions caught, bad files refused"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# softib decode --svg: the ladder diagram of a capture with a forced drop.
# ibv_rc_pingpong's client runs with SOFTIB_FAULTS=drop_nth=1 (its first
# data packet, the SEND First of its first 4096-byte message at MTU 1024,
# is dropped; the server NAKs the next one and the client goes back and
# sends the message again) and SOFTIB_CAPTURE.  Then
#  - softib decode marks exactly that record "DROPPED by SOFTIB_FAULTS"
#    and counts it "dropped: 1", not bad;
#  - the SVG is well-formed XML with exactly one arrow of class "dropped",
#    carrying the dropped PSN, an arrow of class "retransmit" with the same
#    PSN, ACK arrows and the NAK;
#  - rsvg-convert renders it to a PNG of the size the SVG declares, not
#    blank;
#  - a packet corrupted in the file is drawn as "corrupt";
#  - garbage and a truncated file end with an error line, not a crash.
. "$(dirname "$0")/lib.sh"

sib_init ladder
sib_need ibv_rc_pingpong ss timeout python3 rsvg-convert
sib_need_sm

cap=$SIB_TMP/client.pcap
port=$(sib_free_port tcp) || exit 1
SIB_CLIENT_WRAP=(env SOFTIB_FAULTS=drop_nth=1 SOFTIB_CAPTURE="$cap")
sib_pair ladder_pp 300 "$port" 127.0.0.1 ibv_rc_pingpong -d softib0 -i 1 -n 5 -s 4096 -m 1024 ||
	exit 1

# The text decode: one dropped record, its PSN, and no bad packet.
"$SOFTIB" decode "$cap" >"$SIB_TMP/decode.txt" 2>&1
last=$(tail -n 1 "$SIB_TMP/decode.txt")
[[ $last =~ ^packets:\ ([0-9]+)\ ok:\ ([0-9]+)\ bad:\ 0\ dropped:\ 1$ ]] ||
	sib_fail "softib decode ends '$last', not 'packets: N ok: N bad: 0 dropped: 1'"
dropped=$(grep 'DROPPED by SOFTIB_FAULTS' "$SIB_TMP/decode.txt")
[ "$(grep -c . <<<"$dropped")" -eq 1 ] || sib_fail "not one DROPPED line: $dropped"
[[ $dropped =~ RC\ SEND\ First\ .*\ PSN\ ([0-9]+)\  ]] ||
	sib_fail "the dropped packet is not the first SEND First: $dropped"
psn=${BASH_REMATCH[1]}
sib_log "decode: $last; dropped: RC SEND First PSN $psn"

# The drawing.
"$SOFTIB" decode --svg "$cap" >"$SIB_TMP/ladder.svg" 2>"$SIB_TMP/svg.err" ||
	sib_fail "softib decode --svg failed: $(cat "$SIB_TMP/svg.err")"
rsvg-convert "$SIB_TMP/ladder.svg" -o "$SIB_TMP/ladder.png" 2>"$SIB_TMP/rsvg.err" ||
	sib_fail "rsvg-convert cannot render the SVG: $(cat "$SIB_TMP/rsvg.err")"

# check_svg SVG [PNG]: prints what it found, or FAIL lines (exit 1).
check_svg()
{
	python3 - "$@" <<'EOF'
import struct, sys, xml.dom.minidom, zlib

svg = xml.dom.minidom.parse(sys.argv[1])          # raises on malformed XML
root = svg.documentElement
w, h = int(root.getAttribute("width")), int(root.getAttribute("height"))
by = {}
for g in svg.getElementsByTagName("g"):
    cls = g.getAttribute("class").split()
    if cls[:1] != ["pkt"]:
        continue
    t = g.getElementsByTagName("title")
    if len(t) != 1 or not t[0].firstChild or not t[0].firstChild.data.strip():
        print("FAIL: an arrow without its decode line as <title>")
        sys.exit(1)
    for c in cls[1:]:
        by.setdefault(c, []).append((g.getAttribute("data-psn"), t[0].firstChild.data))
print("svg %dx%d:" % (w, h), " ".join("%s=%d" % (c, len(v)) for c, v in sorted(by.items())))
if len(sys.argv) > 2:
    png = open(sys.argv[2], "rb").read()
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        print("FAIL: rsvg-convert did not write a PNG")
        sys.exit(1)
    pw, ph = struct.unpack(">II", png[16:24])
    if (pw, ph) != (w, h) or w < 600 or h < 600:
        print("FAIL: PNG is %dx%d, the SVG declares %dx%d" % (pw, ph, w, h))
        sys.exit(1)
    # Not blank: some pixels are not white.
    data, off = b"", 8
    while off < len(png):
        n, kind = struct.unpack(">I4s", png[off:off + 8])
        if kind == b"IDAT":
            data += png[off + 8:off + 8 + n]
        off += 12 + n
    raw = zlib.decompress(data)
    dark = sum(1 for b in raw[::7] if b < 0x80)
    if dark * 7 < len(raw) // 200:
        print("FAIL: the PNG is (nearly) blank: %d dark samples" % dark)
        sys.exit(1)
    print("png %dx%d, not blank" % (pw, ph))
with open(sys.argv[1] + ".classes", "w") as f:
    for c, v in sorted(by.items()):
        for psn, title in v:
            f.write("%s %s %s\n" % (c, psn or "-", title.replace("\n", " ")))
EOF
}

check_svg "$SIB_TMP/ladder.svg" "$SIB_TMP/ladder.png" || sib_fail "the ladder is not what was expected"
classes=$SIB_TMP/ladder.svg.classes
n_dropped=$(grep -c '^dropped ' "$classes")
[ "$n_dropped" -eq 1 ] || sib_fail "$n_dropped arrows of class dropped, not 1: $(grep '^dropped ' "$classes")"
grep -q "^dropped $psn .*RC SEND First .*PSN $psn .*DROPPED" "$classes" ||
	sib_fail "the dropped arrow is not PSN $psn's SEND First: $(grep '^dropped ' "$classes")"
grep -q "^retransmit $psn .*RC SEND First .*PSN $psn " "$classes" ||
	sib_fail "no retransmit arrow for PSN $psn; retransmits: $(grep '^retransmit ' "$classes")"
grep -q '^ack ' "$classes" || sib_fail "no ACK arrow"
grep -q '^nak .*NAK PSN sequence error' "$classes" || sib_fail "no NAK arrow for the gap the drop left"
grep -q '^mad ' "$classes" || sib_fail "no MAD arrow (the SM's, the SA's)"

# A packet damaged in the file: drawn as corrupt (bad ICRC).  The last
# 30-byte packet (an ACK: LRH, BTH, AETH, ICRC, VCRC) gets a bit of its
# AETH's MSN flipped.
python3 - "$cap" "$SIB_TMP/corrupt.pcap" <<'EOF' || sib_fail "cannot make the corrupted copy"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, at = 24, None
while off + 16 <= len(b):
    incl = struct.unpack("<I", b[off + 8:off + 12])[0]
    if incl == 16 + 30:
        at = off + 16 + 16 + 22
    off += 16 + incl
if at is None:
    sys.exit("no 30-byte packet in the capture")
b[at] ^= 0x40
open(sys.argv[2], "wb").write(b)
EOF
"$SOFTIB" decode --svg "$SIB_TMP/corrupt.pcap" >"$SIB_TMP/corrupt.svg" 2>"$SIB_TMP/corrupt.err" ||
	sib_fail "softib decode --svg of a capture with a bad ICRC failed: $(cat "$SIB_TMP/corrupt.err")"
check_svg "$SIB_TMP/corrupt.svg" || sib_fail "the corrupted capture's SVG is malformed"
n=$(grep -c '^corrupt .*ICRC BAD' "$SIB_TMP/corrupt.svg.classes")
[ "$n" -eq 1 ] || sib_fail "$n arrows of class corrupt with ICRC BAD, not 1"

# Garbage and a truncated capture: an error line and exit 2, never a crash.
head -c 3000 /dev/urandom >"$SIB_TMP/garbage.pcap"
"$SOFTIB" decode --svg "$SIB_TMP/garbage.pcap" >"$SIB_TMP/garbage.svg" 2>"$SIB_TMP/garbage.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'not a pcap file' "$SIB_TMP/garbage.err" && [ ! -s "$SIB_TMP/garbage.svg" ] ||
	sib_fail "garbage: exit $rc (want 2), stderr '$(cat "$SIB_TMP/garbage.err")'"
size=$(stat -c %s "$cap")
head -c $((size - 700)) "$cap" >"$SIB_TMP/truncated.pcap"
"$SOFTIB" decode --svg "$SIB_TMP/truncated.pcap" >"$SIB_TMP/truncated.svg" 2>"$SIB_TMP/truncated.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'truncated pcap record' "$SIB_TMP/truncated.err" ||
	sib_fail "truncated: exit $rc (want 2), stderr '$(cat "$SIB_TMP/truncated.err")'"
# What came before the damage is still drawn, and well-formed.
check_svg "$SIB_TMP/truncated.svg" || sib_fail "the truncated capture's SVG is malformed"
grep -q 'the file is damaged' "$SIB_TMP/truncated.svg" || sib_fail "the truncated SVG does not say so"
sib_log "garbage and truncated files: exit 2 with '$(head -c 80 "$SIB_TMP/truncated.err")...'"
echo "ladder: PSN $psn dropped and retransmitted, drawn and rendered"

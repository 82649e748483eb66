#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# tshark as an independent oracle for our packet encoder and capture writer:
# gen_every_opcode writes one packet of every RC, UC, UD, XRC and CNP opcode
# plus the field values tshark should show; tshark decodes the capture and
# every field must agree.  tshark does not check CRCs (it only shows them),
# so this checks field layout, LRH.PktLen, PadCnt, the payload bytes and
# where the CRCs sit; the CRC values themselves are checked against real
# hardware in test_wire_capture and test_decode_hwcapture.
#
# tshark 4.0.17 has no XRCETH field (tshark -G fields | grep -i xrc finds
# none) and does not know the XRC or CNP opcodes: for those it decodes LRH,
# GRH and BTH and shows the rest as infiniband.vendor, which the expected
# file spells out byte by byte.  A tshark that does decode XRC gets those
# rows checked up to the BTH only.
set -u
B=${B:-build}
gen=$B/helpers/gen_every_opcode

if ! command -v tshark >/dev/null 2>&1; then
	echo "tshark is not installed (apt-get install tshark): skipping"
	exit 77
fi
if [ ! -x "$gen" ]; then
	echo "FAIL: $gen not built"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" "$tmp/every.pcap" "$tmp/every.expected" || { echo "FAIL: $gen failed"; exit 1; }

# Payload heuristics off: the RPC-over-RDMA one throws on short payloads and
# aborts the dissection before the CRCs (tshark 4.0).
HS=()
for h in rpcrdma_infiniband smcr_infiniband smb_direct_infiniband nvme_rdma lnet_ib \
	iser_infiniband eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband; do
	HS+=(--disable-heuristic "$h")
done

header=$(head -n 1 "$tmp/every.expected")
IFS='|' read -r -a cols <<<"${header#\#}"
fields=()
for c in "${cols[@]}"; do fields+=(-e "${c%@last}"); done

late_tshark=0
if tshark -G fields 2>/dev/null | awk -F'\t' '$5 == "infiniband"' | grep -qi xrceth; then
	echo "note: this tshark decodes XRCETH; XRC/CNP rows are checked up to the BTH only"
	late_tshark=1
fi

# All occurrences (ImmDt and IETH are added twice, vendor data too); the
# comparison below picks the first, or the last for columns marked @last.
if ! tshark -r "$tmp/every.pcap" "${HS[@]}" -T fields -E separator='|' -E occurrence=a \
	"${fields[@]}" >"$tmp/tshark.out" 2>"$tmp/tshark.err"; then
	echo "FAIL: tshark could not read the capture:"
	cat "$tmp/tshark.err"
	exit 1
fi

tail -n +2 "$tmp/every.expected" >"$tmp/expected.rows"
awk -F'|' -v header="${header#\#}" -v late="$late_tshark" '
function norm(v) {
	v = tolower(v)
	if (v == "true") return "1"
	if (v == "false") return "0"
	if (v ~ /^0x[0-9a-f]+$/) {
		sub(/^0x0*/, "", v)
		return "0x" (v == "" ? "0" : v)
	}
	return v
}
BEGIN { ncol = split(header, name, "|"); bad = 0 }
NR == FNR { want[FNR] = $0; nwant = FNR; next }
{
	ngot = FNR
	if (!(FNR in want)) next
	split(want[FNR], e, "|")
	n = split($0, g, "|")
	vendor_row = 0
	for (c = 1; c <= ncol; c++)
		if (name[c] ~ /vendor/ && e[c] != "") vendor_row = 1
	for (c = 1; c <= ncol; c++) {
		if (late && vendor_row && name[c] !~ /^(frame|infiniband\.(lrh|grh|bth))\./) continue
		k = split(g[c], occ, ",")
		got = k ? (name[c] ~ /@last$/ ? occ[k] : occ[1]) : ""
		if (norm(got) != norm(e[c])) {
			if (bad < 60)
				printf "  frame %s: %s: expected \"%s\", tshark shows \"%s\"\n", \
					e[1], name[c], e[c], got
			bad++
		}
	}
}
END {
	if (ngot != nwant) {
		printf "  tshark shows %d packets, the generator wrote %d\n", ngot, nwant
		bad++
	}
	if (bad) { printf "FAIL: %d field mismatches between tshark and the expected values\n", bad; exit 1 }
	printf "tshark agrees on every field of %d packets (%d columns)\n", nwant, ncol
}' "$tmp/expected.rows" "$tmp/tshark.out"

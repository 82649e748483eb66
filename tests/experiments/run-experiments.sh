#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make experiments: the seeds' experiments softib can run so far, each
# printed beside what the seed reports and drawn with gnuplot into
# BUILD/experiments/*.png.
#
#   E6 (IBA modelling seed, Fig. 27; ../shared/research/fabric.md): random
#   irregular fabrics of 8, 16, 24 and 32 switches (tests/fabric/irregular.sh,
#   7 CAs per 8 switches), discovered from one CA and configured by
#   softib-sm's engines (fabric/sm_discover.h, fabric/sm_configure.h):
#   discovery SMPs, route computation time (minhop, updn), and the
#   LinearForwardingTable SubnSets of a first configuration beside OpenSM's
#   count, one Set per 64-LID block per switch.
#   E5, in part (Fig. 26): the same figures for the 16-switch, 14-CA fabric
#   beside the seed's.  Detection time and lost data packets need HCAs
#   attached to softib-switch, which they cannot yet: not measured.
set -euo pipefail
B=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$B/experiments
mkdir -p "$out"
tools=("$top/tools/deps.sh" all gnuplot-nox)
"${tools[@]}" >/dev/null 2>&1 || true
have_gnuplot=1
command -v gnuplot >/dev/null || have_gnuplot=0

echo "=== E6: discovery and first configuration of irregular fabrics (seed: Fig. 27)"
data=$out/e6.dat
: >"$data"
for sw in 8 16 24 32; do
	f=$out/irregular-$sw.topo
	"$top/tests/fabric/irregular.sh" "$sw" $((sw * 7 / 8)) >"$f"
	"$B/experiments/reconfig" "$f" >>"$data"
done
printf '%8s %5s %6s %10s %11s %9s %9s %12s\n' switches CAs nodes disc-SMPs minhop-us updn-us LFT-Sets OpenSM-Sets
while read -r sw ca nodes smps minhop updn lft opensm; do
	printf '%8s %5s %6s %10s %11s %9s %9s %12s\n' "$sw" "$ca" "$nodes" "$smps" "$minhop" "$updn" "$lft" "$opensm"
	[ "$lft" = "$opensm" ] || echo "  MISMATCH: $lft LFT Sets where OpenSM sends $opensm"
done <"$data"
echo "seed (Fig. 27): LFT-distribution SMPs and time grow with the number of switches;"
echo "softib's count is OpenSM's rule, one Set per 64-LID block per switch, linear in size"

echo
echo "=== E5 (in part): reconfiguration of the 16-switch, 14-CA fabric (seed: Fig. 26)"
read -r sw ca nodes smps minhop updn lft opensm < <("$B/experiments/reconfig" "$top/tests/fabric/irregular-16x14.topo")
printf '%-34s %14s %14s\n' "" softib seed
printf '%-34s %14s %14s\n' "time to detect the change" "not measured" "~0.17 s"
printf '%-34s %14s %14s\n' "discovery SMPs" "$smps" "~200"
printf '%-34s %14s %14s\n' "route computation (updn)" "$updn us" ">0.1 s"
printf '%-34s %14s %14s\n' "LFT SMPs" "$lft" "360"
printf '%-34s %14s %14s\n' "data packets lost" "not measured" ">600"
echo "(softib's discovery and routing run without the fabric's latency: the SMPs answer"
echo " from the topology; detection and loss need HCAs attached to softib-switch)"

if [ "$have_gnuplot" = 1 ]; then
	gnuplot <<EOF
set terminal pngcairo size 900,420 noenhanced
set output "$out/e6-smps.png"
set multiplot layout 1,2 title "E6: discovery and first configuration of irregular fabrics (softib-sm's engines)"
set xlabel "switches"
set ylabel "SMPs"
set key top left
set xtics (8,16,24,32)
plot "$data" using 1:4 with linespoints title "discovery SMPs", \
     "$data" using 1:7 with linespoints title "LFT SubnSets", \
     "$data" using 1:8 with points pointtype 6 pointsize 2 title "OpenSM's LFT count"
set ylabel "microseconds"
plot "$data" using 1:5 with linespoints title "route computation, minhop", \
     "$data" using 1:6 with linespoints title "route computation, updn"
unset multiplot
EOF
	echo
	echo "plot: $out/e6-smps.png"
else
	echo "gnuplot is not installed (apt-get install gnuplot-nox): no plot drawn"
fi

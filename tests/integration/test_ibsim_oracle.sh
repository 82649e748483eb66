#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# ibsim as an oracle (issue 32, item 4).  For each topology of tests/fabric/
# (one switch, two switches, the fat tree, 16 irregular switches with 14
# CAs), OpenSM sweeps once (opensm -o) as CA H1
# on ibsim (ibsim-utils, OpenSM through libumad2sim) and on softib (every
# other CA held open by a verbs_hold, so that both fabrics have every
# node), with its minhop routing engine and, on the fat tree, with updn and
# ftree too, and the two runs are compared field by field, from OpenSM's
# own dumps (-D 0x43 writes them after the sweep):
#   - the LID of every port (opensm-subnet.lst),
#   - every cable, end to end (ditto),
#   - every switch's LFT, LID by LID (opensm-lfts.dump),
# and softib's switches are read back (softib fabric show): each holds the
# LFT OpenSM computed for it.  The node GUIDs of both are the ones softib
# gives the topology's nodes (tests/helpers/topo_netfile writes them into
# ibsim's netfile).  ibnetdiscover on ibsim prints the topology file
# (tests/helpers/topo_compare), as it does on softib in test_opensm.sh.
#
# Not compared, because the two differ on purpose (the test prints both):
# the link speed (ibsim says SDR, softib QDR), node descriptions, and the
# SLtoVL and VLArbitration tables: ibsim's ports have 8 data VLs and
# softib's one until virtual lanes come (issue 33), so OpenSM programs
# different tables.  Multi-record SA answers are not compared either: ibsim
# has no RMPP (opensm-umad.md).
. "$(dirname "$0")/lib.sh"

sib_init ibsim_oracle
sib_need opensm ibsim ibnetdiscover unshare timeout ss
umad2sim=$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -1)
[ -n "$umad2sim" ] || sib_skip "libumad2sim0 is not installed (make deps installs it)"
for h in topo_netfile topo_compare verbs_hold; do
	[ -x "$B/helpers/$h" ] || sib_skip "$B/helpers/$h is not built (run make)"
done
# ibsim and its clients talk over abstract Unix sockets ("sim:ctl"), one
# set per network namespace: ibsim runs in a namespace of its own.
unshare -n true 2>/dev/null ||
	sib_skip "ibsim needs a network namespace of its own (unshare -n: root)"
# OpenSM under an AddressSanitizer build of libsoftib: see test_opensm.sh.
osm_softib=$SOFTIB
if ldd "$SOFTIB" 2>/dev/null | grep -q libasan; then
	osm_softib=$SIB_TOP/build/softib
	[ -x "$osm_softib" ] ||
		sib_skip "an AddressSanitizer build, and no plain build/softib to run OpenSM on"
fi

# "port-GUID LID" of every port OpenSM numbered, from opensm-subnet.lst.
lids_of()
{
	grep -o 'PortGUID:[0-9A-Fa-f]* [^}]*} LID:[0-9A-Fa-f]*' "$1" |
		sed 's/PortGUID:\([0-9A-Fa-f]*\) .* LID:\([0-9A-Fa-f]*\)/\1 \2/' | tr A-F a-f | sort -u
}

# "GUID:port GUID:port" of every cable, from opensm-subnet.lst.
cables_of()
{
	sed -n 's/.*NodeGUID:\([0-9A-Fa-f]*\) .* PN:\([0-9]*\) } { .*NodeGUID:\([0-9A-Fa-f]*\) .* PN:\([0-9]*\) }.*/\1:\2 \3:\4/p' "$1" |
		tr A-F a-f | sort -u
}

# "switch-GUID LID port" of every LFT entry, from opensm-lfts.dump.
lfts_of()
{
	local line g lid port

	while read -r line; do
		case $line in
		"Unicast lids"*) g=${line##* guid 0x}; g=${g%% *} ;;
		0x*) read -r lid port _ <<<"$line"; echo "${g,,} $((lid)) $((10#$port))" ;;
		esac
	done <"$1" | sort
}

# The same from softib fabric show: what the switches hold.
lfts_held()
{
	awk '/^switch / { g = $0; sub(/.*GUID 0x/, "", g); sub(/,.*/, "", g) }
	     /^  LFT:/ { for (i = 2; i <= NF; i++) { split($i, e, ">"); printf "%s %d %d\n", tolower(g), e[1], e[2] } }' "$1" | sort
}

# same WHAT A B: the two lists equal, or the test fails showing the
# difference ($where says which topology and engine).
same()
{
	local what=$1 n

	n=$(wc -l <"$2")
	if ! diff -u "$2" "$3" >"$SIB_TMP/diff"; then
		head -40 "$SIB_TMP/diff"
		sib_fail "$where: $what differ between ibsim and softib"
	fi
	[ "$n" -gt 0 ] || sib_fail "$what: none to compare"
	echo "oracle: $where: $what: $n equal"
}

# --- ibsim: OpenSM once with each routing engine of ENGINES, and
# ibnetdiscover, in a namespace of its own.
ibsim_run()
{
	local dir=$1

	unshare -n -- bash -c '
		cd "$1" || exit 1
		ibsim -s -n net >ibsim.out 2>&1 &
		sim=$!
		for ((i = 0; i < 100; i++)); do
			ss -xlH 2>/dev/null | grep -q "@sim:ctl" && break
			sleep 0.1
		done
		rc=0
		for e in $3; do
			mkdir -p "$e"
			SIM_HOST=H1 OSM_TMP_DIR=$PWD OSM_CACHE_DIR=$PWD LD_PRELOAD=$2 \
				timeout 120 opensm -o -R "$e" -D 0x43 --dump_files_dir "$PWD/$e" \
				-F /dev/null -f "$PWD/$e/opensm.log" >"$e/opensm.out" 2>&1 || rc=1
		done
		SIM_HOST=H2 LD_PRELOAD=$2 timeout 60 ibnetdiscover "$PWD/discovered.topo" \
			>ibnetdiscover.out 2>&1 || rc=1
		kill $sim
		wait $sim 2>/dev/null
		exit $rc' ibsim "$dir" "$umad2sim" "$2"
}

for topo in one-switch-8.topo two-switches-2-links.topo fat-tree-4x2.topo irregular-16x14.topo; do
	dir=$SIB_TMP/${topo%.topo}
	engines=minhop
	[ "$topo" = fat-tree-4x2.topo ] && engines="minhop updn ftree"
	mkdir -p "$dir/ibsim" "$dir/softib"
	"$B/helpers/topo_netfile" "$SIB_TOP/tests/fabric/$topo" >"$dir/ibsim/net" ||
		sib_fail "topo_netfile $topo failed"
	if ! ibsim_run "$dir/ibsim" "$engines"; then
		tail -20 "$dir/ibsim/ibsim.out" "$dir"/ibsim/*/opensm.out "$dir"/ibsim/*/opensm.log 2>/dev/null
		sib_fail "OpenSM or ibnetdiscover on ibsim failed ($topo)"
	fi
	sib_run compare.$topo 10 "$B/helpers/topo_compare" "$SIB_TOP/tests/fabric/$topo" \
		"$dir/ibsim/discovered.topo"
	sib_expect "$(sib_out compare.$topo)" '^equal: ' "ibnetdiscover on ibsim equals $topo" ||
		sib_fail "ibnetdiscover on ibsim differs from $topo"

	# --- softib: every CA but H1 held, then OpenSM once as H1.
	sib_fabric_switch "$topo"
	cas=$(sed -n 's/^Hca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$SIB_TOP/tests/fabric/$topo" |
		grep -vx H1)
	fds=()
	for ca in $cas; do
		mkfifo "$dir/softib/$ca.in"
		timeout -k 5 300 env SOFTIB_NODE="$ca" "$SOFTIB" run "$B/helpers/verbs_hold" 300 \
			<"$dir/softib/$ca.in" >"$(sib_out "hold.$topo.$ca")" 2>&1 &
		SIB_PID[hold.$topo.$ca]=$!
		exec {fd}>"$dir/softib/$ca.in"
		fds+=("$fd")
	done
	want=$(echo "$cas" | wc -w)
	for ((i = 0; i < 300; i++)); do
		"$SOFTIB" fabric show >"$dir/softib/show" 2>&1
		[ "$(grep -c '^CA ' "$dir/softib/show")" -ge "$want" ] && break
		sleep 0.1
	done
	[ "$(grep -c '^CA ' "$dir/softib/show")" -ge "$want" ] ||
		{ cat "$dir/softib/show"; sib_fail "$topo: not all of $want CAs attached"; }
	for e in $engines; do
		o=$dir/softib/$e
		mkdir -p "$o"
		sib_run "opensm.$topo.$e" 180 env SOFTIB_NODE=H1 OSM_TMP_DIR="$dir/softib" \
			OSM_CACHE_DIR="$dir/softib" "$osm_softib" run -- opensm -o -R "$e" -D 0x43 \
			--dump_files_dir "$o" -F /dev/null -f "$o/opensm.log" ||
			{ sib_show "opensm.$topo.$e"; tail -20 "$o/opensm.log"; sib_fail "OpenSM -o -R $e on softib failed ($topo)"; }
		grep -q "$e tables configured on all switches" "$o/opensm.log" ||
			{ grep -E 'ERR|routing|tables' "$o/opensm.log" | head; sib_fail "$topo: OpenSM did not route with $e"; }
		"$SOFTIB" fabric show >"$o/show" 2>&1 || sib_fail "softib fabric show failed"
		i=$dir/ibsim/$e
		where="$topo, $e"

		lids_of "$i/opensm-subnet.lst" >"$i.lids"
		lids_of "$o/opensm-subnet.lst" >"$o.lids"
		same "the LIDs of the ports" "$i.lids" "$o.lids"
		cables_of "$i/opensm-subnet.lst" >"$i.cables"
		cables_of "$o/opensm-subnet.lst" >"$o.cables"
		same "the cable ends" "$i.cables" "$o.cables"
		lfts_of "$i/opensm-lfts.dump" >"$i.lfts"
		lfts_of "$o/opensm-lfts.dump" >"$o.lfts"
		same "the LFT entries OpenSM computed" "$i.lfts" "$o.lfts"
		lfts_held "$o/show" >"$o.held"
		same "the LFT entries the switches hold (softib fabric show, against ibsim's)" \
			"$i.lfts" "$o.held"
	done
	echo "oracle: $topo: not compared: speeds (ibsim $(grep -o 'SPD=[0-9.]*' "$i/opensm-subnet.lst" | sort -u | tr '\n' ' ')," \
		"softib $(grep -o 'SPD=[0-9.]*' "$o/opensm-subnet.lst" | sort -u | tr '\n' ' ')), SLtoVL and VLArbitration tables (8 VLs against 1)"

	for fd in "${fds[@]}"; do
		exec {fd}>&-
	done
	for ca in $cas; do
		sib_wait "hold.$topo.$ca"
	done
	kill -TERM "${SIB_PID[switch]}"
	sib_wait switch
done
echo "ibsim_oracle: OpenSM's LIDs, cables and LFTs on softib equal those on ibsim for every topology"

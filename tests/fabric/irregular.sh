#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# irregular.sh SWITCHES HOSTS [SEED] [PORTS]: prints an irregular fabric in
# the topology file format (fabric/topology.h), as the IBA modelling seed
# builds its networks: 8-port switches (PORTS) joined at random into one
# connected whole, a spanning tree first and then SWITCHES/2 more links
# between random pairs, and HOSTS single-port HCAs on random free switch
# ports.  The same arguments always print the same file (SEED, 1 by
# default, drives an LCG of its own: not $RANDOM, not awk's rand()).
# irregular-16x14.topo is `irregular.sh 16 14`.
set -eu
[ $# -ge 2 ] || { echo "usage: irregular.sh SWITCHES HOSTS [SEED] [PORTS]" >&2; exit 2; }
awk -v ns="$1" -v nh="$2" -v seed="${3:-1}" -v np="${4:-8}" '
function rnd(n) { state = (state * 16807) % 2147483647; return state % n } # exact in doubles
function free_port(s,   p) { for (p = 1; p <= np; p++) if (!((s, p) in peer)) return p; return 0 }
function cable(a, b,   pa, pb) {
	pa = free_port(a); pb = free_port(b)
	if (!pa || !pb || a == b || ((a, b) in linked)) return 0
	peer[a, pa] = "\"S" b "\"[" pb "]"; peer[b, pb] = "\"S" a "\"[" pa "]"
	linked[a, b] = linked[b, a] = 1
	return 1
}
BEGIN {
	if (ns < 1 || nh < 0 || np < 2 || nh > ns * np) { print "irregular.sh: no room" > "/dev/stderr"; exit 2 }
	state = seed % 2147483647; if (state <= 0) state = 1
	for (s = 2; s <= ns; s++)
		for (tries = 0; tries < 1000 && !cable(s, 1 + rnd(s - 1)); tries++) ;
	for (e = 0; e < int(ns / 2); e++)
		for (tries = 0; tries < 1000 && !cable(1 + rnd(ns), 1 + rnd(ns)); tries++) ;
	for (h = 1; h <= nh; h++) {
		for (tries = 0; tries < 1000; tries++) {
			s = 1 + rnd(ns); p = free_port(s)
			if (p) break
		}
		if (!p) for (s = 1; s <= ns && !(p = free_port(s)); s++) ;
		peer[s, p] = "\"H" h "\"[1]"; host[h] = "\"S" s "\"[" p "]"
	}
	printf "# An irregular fabric of %d switches and %d HCAs: tests/fabric/irregular.sh %d %d %d %d\n", ns, nh, ns, nh, seed, np
	for (s = 1; s <= ns; s++) {
		printf "\nSwitch\t%d \"S%d\"\t# \"switch %d\"\n", np, s, s
		for (p = 1; p <= np; p++) if ((s, p) in peer) printf "[%d]\t%s\n", p, peer[s, p]
	}
	for (h = 1; h <= nh; h++) printf "\nHca\t1 \"H%d\"\n[1]\t%s\n", h, host[h]
}'

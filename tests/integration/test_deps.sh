#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# tools/deps.sh on machines this one only pretends to be.  PATH is a
# directory of stand-ins written here, then a directory of links to the
# real tools deps.sh may use (each case leaves some out); nothing is
# written anywhere but into fresh directories of our own, and nothing is
# installed:
#   - apt, a package missing, not root and no sudo: exit 1 and the exact
#     apt-get line to run, naming only the missing package;
#   - apt, everything present: exit 0, nothing installed, nothing printed;
#   - Fedora (dnf, no dpkg), a header missing: exit 1 and the dnf line
#     naming its package; the same for Arch (pacman);
#   - Fedora with every need present: the build goes ahead (exit 0), and
#     for the tests it lists what to install by hand;
#   - no make and no apt (a fresh Fedora): only apt is automated, exit 1.
. "$(dirname "$0")/lib.sh"
sib_init deps
deps=$SIB_TOP/tools/deps.sh
failed=0
bad() { echo "FAIL: $*"; failed=1; }

# A fresh case: prints "STUBS:TOOLS" (two new directories) for PATH.  TOOLS
# holds links to the real tools named, STUBS is empty.
new_case() # NAME TOOL...
{
	local dir=$SIB_TMP/$1 t real

	shift
	mkdir "$dir" "$dir/stubs" "$dir/tools" || exit 1
	for t in "$@"; do
		real=$(command -v "$t") && ln -s "$real" "$dir/tools/$t"
	done
	echo "$dir/stubs:$dir/tools"
}

# Writes stand-in NAME, from stdin, into the stubs directory of PATH.
stub() # PATH NAME
{
	local f=${1%%:*}/$2

	[ ! -e "$f" ] && [ ! -L "$f" ] || { echo "stub: $f exists"; exit 1; }
	cat >"$f" && chmod +x "$f"
}

base_tools=(bash sh env cat grep awk sed sort comm tr dirname head wc readelf pkg-config)
not_root='#!/bin/sh
[ "$1" = -u ] && { echo 1000; exit 0; }
exec '"$(command -v id)"' "$@"'
# A cc that cannot find isa-l/crc.h and finds every other header.
no_isal='#!/bin/sh
input=$(cat)
case "$input" in *isa-l/crc.h*) exit 1 ;; esac
printf "%s\n" "$input" | exec '"$(readlink -f "$(command -v cc)")"' "$@"'

# apt: dpkg-query reports every package installed except "missing-pkg".
P=$(new_case apt "${base_tools[@]}" make cc)
echo "$not_root" | stub "$P" id
printf '#!/bin/sh\nshift 2\nfor p in "$@"; do [ "$p" = missing-pkg ] || echo "$p ii "; done\n' |
	stub "$P" dpkg-query
printf '#!/bin/sh\necho "apt-get must not run" >&2\nexit 3\n' | stub "$P" apt-get
out=$(PATH=$P "$deps" build gcc missing-pkg make 2>&1); rc=$?
sib_log "apt, one missing, no root: $out"
[ $rc -eq 1 ] || bad "apt, one missing, no root: exit $rc, want 1"
grep -qF 'run as root:  apt-get update && apt-get install -y --no-install-recommends missing-pkg' <<<"$out" ||
	bad "apt: the install line is not the one to run: $out"
grep -q 'apt-get must not run' <<<"$out" && bad "apt: apt-get ran without root"
out=$(PATH=$P "$deps" build gcc make 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] || bad "apt, all present: exit $rc, output '$out'"

# Fedora: dnf, no dpkg; cc cannot find isa-l/crc.h.
P=$(new_case dnf "${base_tools[@]}" make)
echo "$not_root" | stub "$P" id
printf '#!/bin/sh\nexit 0\n' | stub "$P" dnf
echo "$no_isal" | stub "$P" cc
out=$(PATH=$P "$deps" build gcc make 2>&1); rc=$?
sib_log "dnf, isa-l missing: $out"
[ $rc -eq 1 ] || bad "dnf, isa-l missing: exit $rc, want 1"
grep -qF 'missing isa-l/crc.h; only apt is automated, so install by hand:  dnf install isa-l-devel' <<<"$out" ||
	bad "dnf: the line does not name the package: $out"

# Arch: pacman, the same missing header.
P=$(new_case pacman "${base_tools[@]}" make)
echo "$not_root" | stub "$P" id
printf '#!/bin/sh\nexit 0\n' | stub "$P" pacman
echo "$no_isal" | stub "$P" cc
out=$(PATH=$P "$deps" build gcc make 2>&1); rc=$?
sib_log "pacman, isa-l missing: $out"
[ $rc -eq 1 ] && grep -qF 'pacman -S --needed isa-l' <<<"$out" || bad "pacman: exit $rc, $out"

# Fedora with everything the build needs (this machine's headers).
P=$(new_case dnf-ok "${base_tools[@]}" make cc)
echo "$not_root" | stub "$P" id
printf '#!/bin/sh\nexit 0\n' | stub "$P" dnf
out=$(PATH=$P "$deps" build gcc make 2>&1); rc=$?
[ $rc -eq 0 ] || bad "dnf, all present: exit $rc: $out"
out=$(PATH=$P "$deps" all gcc make 2>&1); rc=$?
sib_log "dnf, all present, make test: $out"
[ $rc -eq 0 ] && grep -qF 'for every test install by hand:  dnf install' <<<"$out" ||
	bad "dnf, make test: exit $rc, $out"

# No make, no apt.
P=$(new_case nomake "${base_tools[@]}" cc)
echo "$not_root" | stub "$P" id
printf '#!/bin/sh\nexit 0\n' | stub "$P" dnf
out=$(PATH=$P "$deps" 2>&1); rc=$?
sib_log "no make: $out"
[ $rc -eq 1 ] && grep -qF 'only apt is automated: install make' <<<"$out" || bad "no make: exit $rc, $out"

[ $failed -eq 0 ] || exit 1
echo "deps: all cases passed"

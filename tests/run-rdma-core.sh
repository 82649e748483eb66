#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# softib compiled against the rdma-core of each Debian release (make test):
#
#   tests/run-rdma-core.sh [SUITE...]     default: bookworm trixie sid
#
# For each suite: `apt-get download` its libibverbs1 and libibverbs-dev
# (through a private apt configuration: the system's sources are not
# touched), unpack them with `dpkg -x` under build/rdma-core/SUITE, and
# build libsoftib.so with `make RDMA_CORE=build/rdma-core/SUITE
# B=build/rdma-core/SUITE.build`.  Then check that
#   - tools/abi-check.sh chose the layout the package's version calls for
#     (the version string is the oracle here, never the probe's input);
#   - the library links no private libibverbs symbol (they are looked up
#     at run time) and interposes ibv_query_gid_type at the suite's node;
#   - loaded into this machine's libibverbs, it lists softib0 if that is the
#     same rdma-core, and otherwise refuses with exactly one line and lists
#     nothing, exit status 0 (ibv_devices).
# The .debs and apt's lists are cached in $SOFTIB_CACHE (default
# ~/.cache/softib) under apt/SUITE; a run that cannot reach the archive uses
# what is cached, and skips a suite with nothing cached.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SOFTIB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/softib}
mirror=${SOFTIB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie sid)
results=() fail=0

# rdma-core version -> provider ABI layout (provider/verbs_abi.h).
layout_for() {
	local major=${1%%.*}
	if [ "$major" -le 43 ]; then echo 39
	elif [ "$major" -eq 44 ]; then echo 44
	elif [ "$major" -le 56 ]; then echo 45
	elif [ "$major" -le 58 ]; then echo 57
	elif [ "$major" -le 61 ]; then echo 59
	elif [ "$major" -le 63 ]; then echo 62
	else echo "$major"
	fi
}

# apt-get with its own sources, lists and archives for one suite (a mirror
# serving a snapshot older than a Release file's week of validity still
# does: we only read two packages' files from it).
apt_for() {
	local dir=$cache/apt/$1

	shift
	apt-get -q -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State="$dir/state" -o Dir::Cache="$dir/cache" \
		-o APT::Sandbox::User=root -o Acquire::Check-Valid-Until=false "$@"
}

fetch_debs() { # suite -> the .debs in $cache/apt/SUITE/debs
	local suite=$1 dir=$cache/apt/$1

	mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
	exec {lock}>"$dir/lock"
	flock "$lock" # two runs at once (two clones) take turns
	echo "deb [signed-by=$keyring] $mirror $suite main" >"$dir/sources.list"
	if apt_for "$suite" update >"$dir/update.log" 2>&1; then
		local new
		new=$(mktemp -d "$dir/dl.XXXX")
		if (cd "$new" && apt_for "$suite" download libibverbs1 libibverbs-dev) \
			>"$dir/download.log" 2>&1; then
			rm -f "$dir"/debs/*.deb
			mv "$new"/*.deb "$dir/debs/"
		fi
		rm -rf "$new"
	fi
	exec {lock}>&-
	ls "$dir"/debs/libibverbs1_*.deb "$dir"/debs/libibverbs-dev_*.deb >/dev/null 2>&1
}

host_version=$(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null)
command -v ibv_devices >/dev/null || echo "rdma-core: ibv_devices not installed; the load checks are skipped"

for suite in "${suites[@]}"; do
	echo "=== rdma-core of Debian $suite"
	if ! fetch_debs "$suite"; then
		echo "skip: cannot download $suite's libibverbs packages ($mirror) and none are cached"
		tail -2 "$cache/apt/$suite/update.log" 2>/dev/null
		results+=("rdma-core of $suite: SKIP (no packages)")
		continue
	fi
	debs=("$cache/apt/$suite"/debs/*.deb)
	version=$(dpkg-deb -f "$cache/apt/$suite"/debs/libibverbs1_*.deb Version)
	root=$top/build/rdma-core/$suite
	rm -rf "$root"
	mkdir -p "$root"
	for d in "${debs[@]}"; do dpkg -x "$d" "$root"; done
	B=$top/build/rdma-core/$suite.build # kept: the next run rebuilds what changed
	want=$(layout_for "$version")
	if ! make -C "$top" --no-print-directory -j2 RDMA_CORE="$root" B="$B" "$B/libsoftib.so" \
		>"$root/build.log" 2>&1; then
		grep -E 'abi-check|error' "$root/build.log" | head -5
		results+=("rdma-core $version ($suite): FAIL (build; $root/build.log)")
		fail=1
		continue
	fi
	got=$(awk '$2 == "SIB_ABI_LAYOUT" { print $3 }' "$B/abi/verbs_abi_layout.h")
	node=$(awk '$2 == "SIB_ABI_PRIVATE_NODE" { gsub(/"/, "", $3); print $3 }' "$B/abi/verbs_abi_layout.h")
	why=
	[ "$got" = "$want" ] || why="layout $got, but rdma-core $version is layout $want"
	if readelf -V -W "$B/libsoftib.so" |
		awk '/^Version needs/ { n = 1 } /^Version (definition|symbols)/ { n = 0 } n' |
		grep -q 'Name: IBVERBS_PRIVATE'; then
		why="${why:+$why; }libsoftib.so needs a private libibverbs node (ld.so would stop programs)"
	fi
	readelf --dyn-syms -W "$B/libsoftib.so" | grep -q "ibv_query_gid_type@@$node" ||
		why="${why:+$why; }ibv_query_gid_type is not interposed at $node"
	load=
	if [ -z "$why" ] && command -v ibv_devices >/dev/null; then
		out=$(LD_PRELOAD="$B/libsoftib.so" SOFTIB_SM=none ibv_devices 2>&1)
		rc=$?
		lines=$(grep -c '^softib: ' <<<"$out")
		if [ "$version" = "$host_version" ]; then
			if [ $rc -eq 0 ] && grep -qE "^[[:space:]]+softib0[[:space:]]" <<<"$out" && [ "$lines" -eq 0 ]; then
				load="; loaded into this machine's $host_version: softib0 listed"
			else
				why="loaded into the same rdma-core ($host_version), softib0 is not listed (exit $rc): $out"
			fi
		elif [ $rc -eq 0 ] && ! grep -qE "^[[:space:]]+softib0[[:space:]]" <<<"$out" && [ "$lines" -eq 1 ] &&
			grep -q 'softib0 is not listed' <<<"$out"; then
			load="; refused by this machine's $host_version in one line"
			echo "$(grep '^softib: ' <<<"$out")"
		else
			why="loaded into this machine's rdma-core $host_version: exit $rc, $lines softib lines, output: $out"
		fi
	fi
	if [ -z "$why" ]; then
		results+=("rdma-core $version ($suite): PASS (compiled, layout $got, $node$load)")
	else
		results+=("rdma-core $version ($suite): FAIL ($why)")
		fail=1
	fi
	echo "${results[-1]}"
done
echo "--- rdma-core versions compiled against:"
printf '  %s\n' "${results[@]}"
exit $fail

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# softib built and run against rdma-core releases that Debian does not ship
# (Ubuntu 22.04's 39, Ubuntu 24.04's 50, the ABIs between), built here from
# their source tags.  Not part of make test: it needs an rdma-core git
# repository (no network access of its own), cmake and ninja.
#
#   tests/run-rdma-core-src.sh RDMA_CORE_GIT TAG...
#       e.g. tests/run-rdma-core-src.sh ~/src/rdma-core v39.0 v50.0
#
# For each TAG: `git archive` it into $SOFTIB_CACHE/src/TAG (default
# ~/.cache/softib), build its libibverbs, ibv_devinfo and ibv_rc_pingpong
# with cmake, make an RDMA_CORE tree of the headers rdma-core installs and
# the library, build softib with `make RDMA_CORE=...`, then run, with that
# libibverbs: the tag's `ibv_devinfo -v -d softib0` (port ACTIVE) and its
# ibv_rc_pingpong, and this machine's ib_write_bw when perftest is there and
# the tag has this machine's private node (perftest's mlx5 and efa
# providers need it).  Then this machine's build of libsoftib.so in the
# tag's libibverbs and the tag's build in this machine's libibverbs: each
# lists softib0 where the two layouts are one, and otherwise refuses in
# one line (ibv_devices exits 0).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
repo=${1:?usage: tests/run-rdma-core-src.sh RDMA_CORE_GIT TAG...}
shift
[ $# -gt 0 ] || { echo "usage: tests/run-rdma-core-src.sh RDMA_CORE_GIT TAG..." >&2; exit 2; }
cache=${SOFTIB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/softib}
for p in cmake ninja; do command -v $p >/dev/null || { echo "skip: $p not installed"; exit 77; }; done
. "$top/tests/integration/lib.sh" # sib_free_port
triplet=$(cc -print-multiarch 2>/dev/null)
host_node=$(readelf -V -W "$(readlink -f "$(cc -print-file-name=libibverbs.so)")" 2>/dev/null |
	grep -oE 'IBVERBS_PRIVATE_[0-9]+' | sort -u | tail -1)
results=() fail=0

run_pair() { # NAME TIMEOUT SERVER-CMD... -- CLIENT-CMD...
	local name=$1 secs=$2 srv=() cli=() spid rc_s rc_c

	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout "$secs" "${srv[@]}" >"$work/$name.server" 2>&1 &
	spid=$!
	sleep 1
	timeout "$secs" "${cli[@]}" >"$work/$name.client" 2>&1
	rc_c=$?
	wait $spid
	rc_s=$?
	[ $rc_s -eq 0 ] && [ $rc_c -eq 0 ]
}

for tag in "$@"; do
	echo "=== rdma-core $tag, built from source"
	src=$cache/src/$tag
	if [ ! -e "$src/b/bin/ibv_devices" ]; then
		rm -rf "$src" && mkdir -p "$src"
		git -C "$repo" archive --prefix=s/ "$tag" | tar x -C "$src" ||
			{ results+=("rdma-core $tag: FAIL (no tag $tag in $repo)"); fail=1; continue; }
		mkdir -p "$src/b"
		if ! (cd "$src/b" && cmake -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 \
			-DENABLE_RESOLVE_NEIGH=0 -DCMAKE_BUILD_TYPE=Release ../s &&
			ninja ibverbs ibv_devices ibv_devinfo ibv_rc_pingpong) >"$src/build.log" 2>&1; then
			tail -5 "$src/build.log"
			results+=("rdma-core $tag: FAIL (its own build; $src/build.log)"); fail=1; continue
		fi
	fi
	# What rdma-core installs for users: the published headers, the library.
	tree=$src/tree
	rm -rf "$tree"
	mkdir -p "$tree/usr/include/infiniband" "$tree/usr/lib/$triplet"
	for h in verbs.h verbs_api.h tm_types.h arch.h opcode.h sa.h sa-kern-abi.h ib_user_ioctl_verbs.h; do
		[ -e "$src/b/include/infiniband/$h" ] && cp -L "$src/b/include/infiniband/$h" "$tree/usr/include/infiniband/"
	done
	cp -a "$src"/b/lib/libibverbs.so* "$tree/usr/lib/$triplet/"
	B=$top/build/rdma-core/src-$tag
	if ! make -C "$top" --no-print-directory -j2 RDMA_CORE="$tree" B="$B" "$B/libsoftib.so" \
		"$B/softib" "$B/softib-sm" >"$src/softib-build.log" 2>&1; then
		grep -E 'abi-check|error' "$src/softib-build.log" | head -5
		results+=("rdma-core $tag: FAIL (softib's build; $src/softib-build.log)"); fail=1; continue
	fi
	layout=$(awk '$2 == "SIB_ABI_LAYOUT" { print $3 }' "$B/abi/verbs_abi_layout.h")
	work=$(mktemp -d)
	export LD_LIBRARY_PATH=$tree/usr/lib/$triplet
	export SOFTIB_SM=127.0.0.1:$(sib_free_port udp)
	why=
	out=$("$B/softib" run "$src/b/bin/ibv_devinfo" -v -d softib0 2>&1)
	grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$out" || why="ibv_devinfo -v -d softib0: $(tail -3 <<<"$out")"
	port=$(sib_free_port tcp)
	run_pair pingpong 60 "$B/softib" run "$src/b/bin/ibv_rc_pingpong" -d softib0 -p "$port" -- \
		"$B/softib" run "$src/b/bin/ibv_rc_pingpong" -d softib0 -p "$port" 127.0.0.1 &&
		grep -q 'bytes in' "$work/pingpong.client" ||
		why="${why:+$why; }ibv_rc_pingpong: $(tail -2 "$work/pingpong.client")"
	ran="ibv_devinfo, ibv_rc_pingpong"
	node=$(awk '$2 == "SIB_ABI_PRIVATE_NODE" { gsub(/"/, "", $3); print $3 }' "$B/abi/verbs_abi_layout.h")
	# This machine's perftest loads its rdma-core's mlx5 and efa providers,
	# which need that release's private node.
	if command -v ib_write_bw >/dev/null && [ "$node" = "$host_node" ]; then
		port=$(sib_free_port tcp)
		run_pair write_bw 120 "$B/softib" run ib_write_bw -d softib0 -F -p "$port" -- \
			"$B/softib" run ib_write_bw -d softib0 -F -p "$port" 127.0.0.1 &&
			grep -qE '^ *65536 ' "$work/write_bw.client" ||
			why="${why:+$why; }ib_write_bw: $(tail -2 "$work/write_bw.client")"
		ran="$ran, ib_write_bw"
	fi
	# The libsoftib.so of this machine's normal build in the tag's
	# libibverbs, and the tag's in this machine's: listed where the layouts
	# are one, else refused in one line (and never a crash).
	host_so=$top/build/libsoftib.so
	host_layout=$(awk '$2 == "SIB_ABI_LAYOUT" { print $3 }' "$top/build/abi/verbs_abi_layout.h" 2>/dev/null)
	if [ -e "$host_so" ] && [ -n "$host_layout" ]; then
		for cross in "tag:$src/b/bin/ibv_devices:$host_so" "host:ibv_devices:$B/libsoftib.so"; do
			IFS=: read -r where prog so <<<"$cross"
			if [ "$where" = host ]; then
				out=$(env -u LD_LIBRARY_PATH LD_PRELOAD="$so" SOFTIB_SM=none $prog 2>&1)
			else
				out=$(LD_PRELOAD="$so" SOFTIB_SM=none $prog 2>&1)
			fi
			rc=$?
			n=$(grep -c '^softib: ' <<<"$out")
			listed=$(grep -cE '^[[:space:]]+softib0[[:space:]]' <<<"$out")
			if [ "$layout" = "$host_layout" ]; then
				[ $rc -eq 0 ] && [ "$listed" -eq 1 ] && [ "$n" -eq 0 ] ||
					why="${why:+$why; }same layout, $where library: not listed (exit $rc): $out"
			else
				[ $rc -eq 0 ] && [ "$listed" -eq 0 ] && [ "$n" -eq 1 ] ||
					why="${why:+$why; }layouts $layout and $host_layout, $where library: exit $rc, $n lines: $out"
			fi
		done
		ran="$ran; this machine's libsoftib.so in its libibverbs and its libsoftib.so in this machine's: $([ "$layout" = "$host_layout" ] && echo listed || echo refused)"
	fi
	for p in $(pgrep -f -- "softib-sm --daemon --listen $SOFTIB_SM\$"); do kill "$p"; done
	unset LD_LIBRARY_PATH
	if [ -z "$why" ]; then
		results+=("rdma-core $tag (source): PASS (layout $layout; ran $ran)")
	else
		results+=("rdma-core $tag (source): FAIL ($why)"); fail=1
	fi
	echo "${results[-1]}"
	rm -rf "$work"
done
echo "--- rdma-core versions built from source and run against:"
printf '  %s\n' "${results[@]}"
exit $fail

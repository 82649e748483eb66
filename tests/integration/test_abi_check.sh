#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# tools/abi-check.sh picks the provider ABI from what it probes, and refuses
# in one line what it does not know.  Each case is an rdma-core tree made
# here (RDMA_CORE=DIR): this machine's headers beside a stand-in
# libibverbs.so.1 whose only content is the version nodes a release
# defines, so the probe meets exactly the nodes each case needs.
#   - the nodes of this machine's rdma-core: the layout the build uses;
#   - IBVERBS_PRIVATE_66 and IBVERBS_1.19 (a release softib does not know):
#     exit 1, one line naming what it found and what softib supports, and
#     make stops there, before it compiles anything;
#   - rdma-core 65's nodes with this machine's (older) headers: exit 1, one
#     line saying the headers do not belong to the library;
#   - a directory without a library: exit 1, one line saying what to unpack.
. "$(dirname "$0")/lib.sh"
sib_init abi_check
sib_need readelf cc

check=$SIB_TOP/tools/abi-check.sh
[ -e /usr/include/infiniband/verbs.h ] || sib_skip "no <infiniband/verbs.h> on this machine"
triplet=$(cc -print-multiarch 2>/dev/null)
libdir=usr/lib${triplet:+/$triplet}

# A tree with this machine's headers and a libibverbs.so.1 defining NODES.
fake_tree()
{
	local dir=$SIB_TMP/$1 private=$2 public=$3 map n

	mkdir -p "$dir/usr/include" "$dir/$libdir"
	ln -s /usr/include/infiniband "$dir/usr/include/infiniband"
	map="IBVERBS_1.0 { global: ibv_fake_1_0; local: *; };"
	for ((n = 1; n <= ${public#1.}; n++)); do
		map="$map IBVERBS_1.$n { global: ibv_fake_1_$n; } IBVERBS_1.$((n - 1));"
	done
	[ -n "$private" ] && map="$map IBVERBS_PRIVATE_$private { global: verbs_set_ops; };"
	{
		echo "void ibv_fake_1_0(void) {}"
		for ((n = 1; n <= ${public#1.}; n++)); do echo "void ibv_fake_1_$n(void) {}"; done
		echo "void verbs_set_ops(void) {}"
	} >"$dir/fake.c"
	echo "$map" >"$dir/fake.map"
	cc -shared -fPIC -Wl,--version-script="$dir/fake.map" -Wl,-soname,libibverbs.so.1 \
		-o "$dir/$libdir/libibverbs.so.1" "$dir/fake.c" || sib_fail "cannot build the stand-in library"
}

# The installed library's nodes, as the release that made it defines them.
sys_lib=$(readlink -f "$(cc -print-file-name=libibverbs.so)")
sys_nodes=$(readelf -V -W "$sys_lib" | grep -oE 'IBVERBS_(PRIVATE_[0-9]+|1\.[0-9]+)' | sort -u)
sys_private=$(grep -oE 'PRIVATE_[0-9]+' <<<"$sys_nodes" | sed 's/PRIVATE_//' | tail -1)
sys_public=$(grep -oE '1\.[0-9]+' <<<"$sys_nodes" | sort -t. -k2 -n | tail -1)
[ -n "$sys_private" ] && [ -n "$sys_public" ] || sib_skip "cannot read this machine's libibverbs nodes"

failed=0
bad() { echo "FAIL: $*"; failed=1; }

fake_tree same "$sys_private" "$sys_public"
out=$(CC=cc RDMA_CORE=$SIB_TMP/same "$check" "$SIB_TMP/out-same" 2>&1); rc=$?
sib_log "this machine's nodes: $out"
if [ $rc -ne 0 ]; then
	bad "this machine's nodes and headers were refused: $out"
else
	want=$(awk '$2 == "SIB_ABI_LAYOUT" { print $3 }' "$B/abi/verbs_abi_layout.h" 2>/dev/null)
	got=$(awk '$2 == "SIB_ABI_LAYOUT" { print $3 }' "$SIB_TMP/out-same/verbs_abi_layout.h")
	[ -n "$got" ] && [ "$got" = "${want:-$got}" ] || bad "layout $got, the build's is $want"
	grep -q "^IBVERBS_PRIVATE_$sys_private {" "$SIB_TMP/out-same/softib.map" ||
		bad "softib.map does not name IBVERBS_PRIVATE_$sys_private"
fi

# one line, exit 1, and the line holds each of the words given
refused() # NAME OUT RC WORDS...
{
	local name=$1 out=$2 rc=$3 w

	shift 3
	sib_log "$name: $out"
	[ "$rc" -eq 1 ] || bad "$name: exit $rc, want 1"
	[ "$(wc -l <<<"$out")" -eq 1 ] || bad "$name: $(wc -l <<<"$out") lines, want 1"
	for w in "$@"; do grep -qF -- "$w" <<<"$out" || bad "$name: the line does not say '$w'"; done
}

fake_tree future 66 1.19
out=$(CC=cc RDMA_CORE=$SIB_TMP/future "$check" "$SIB_TMP/out-future" 2>&1)
refused "an unknown ABI" "$out" $? "IBVERBS_PRIVATE_66" "IBVERBS_1.19" "unknown provider ABI" \
	"softib supports IBVERBS_PRIVATE_34" "_65 (65)"
[ -e "$SIB_TMP/out-future/verbs_abi_layout.h" ] && bad "an unknown ABI still wrote a layout"
# make runs the check before it compiles anything.
out=$(make -C "$SIB_TOP" --no-print-directory RDMA_CORE="$SIB_TMP/future" B="$SIB_TMP/b-future" 2>&1)
rc=$?
[ $rc -ne 0 ] || bad "make with an unknown ABI exited 0"
grep -q '^abi-check: unknown provider ABI' <<<"$out" || bad "make did not print the check's line: $out"
[ ! -d "$SIB_TMP/b-future/obj" ] || bad "make compiled before the check refused: $(ls -R "$SIB_TMP/b-future/obj" | head -3)"

if [ "$sys_private" != 65 ]; then
	fake_tree mixed 65 1.18
	out=$(CC=cc RDMA_CORE=$SIB_TMP/mixed "$check" "$SIB_TMP/out-mixed" 2>&1)
	refused "headers of another release" "$out" $? "IBVERBS_PRIVATE_65" \
		"headers do not belong to this libibverbs"
fi

mkdir -p "$SIB_TMP/empty"
out=$(CC=cc RDMA_CORE=$SIB_TMP/empty "$check" "$SIB_TMP/out-empty" 2>&1)
refused "no library" "$out" $? "libibverbs.so.1" "unpack libibverbs1"

[ $failed -eq 0 ] || exit 1
echo "abi_check: all cases passed"

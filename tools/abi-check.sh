#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Which rdma-core provider ABI softib is built for, found before anything
# compiles, by probing what is installed rather than trusting a version
# string: the version nodes the libibverbs library defines (readelf) and
# two sizes a small probe measures against the headers.
#
#   tools/abi-check.sh OUTDIR
#     CC         the compiler (default cc)
#     RDMA_CORE  an rdma-core unpacked under this directory (its usr/include
#                and usr/lib/<triplet>, usr/lib64 or usr/lib); empty: the
#                system's
#
# Writes OUTDIR/verbs_abi_layout.h (SIB_ABI_LAYOUT and what it was found
# from; provider/verbs_abi.h declares each layout) and OUTDIR/softib.map
# (provider/softib.map.in with the private node filled in), each only when
# its content changes, and prints one line when the layout is new.  Exit 1
# with one line for an ABI softib does not know or headers that do not
# belong to the library.
#
# The layouts (provider/verbs_abi.h asserts the same figures):
#   layout  private node  newest public  verbs_context  ibv_qp_ex  rdma-core
#   39      34            1.14           320 + ctx      184 + qp   39 to 43
#   44      34            1.14           320            192        44
#   45      34            1.14           320            200        45 to 56
#   57      57            1.14           320            200        57 to 58
#   59      59            1.15           344            200        59 to 61
#   62      59            1.16           352            200        62 to 63
#   64      64            1.17           368            200        64
#   65      65            1.18           368            200        65
# ("320 + ctx": the bytes in front of the ibv_context that ends struct
# verbs_context; "184 + qp": the bytes ibv_qp_ex adds to struct ibv_qp.
# Both count pointers and integers only, so they hold on every LP64 ABI.)
set -u
out=${1:?usage: tools/abi-check.sh OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-cc}
rc_dir=${RDMA_CORE:-}
SUPPORTED="IBVERBS_PRIVATE_34 (rdma-core 39 to 56), _57 (57 to 58), _59 (59 to 63), _64 (64), _65 (65)"

die() { echo "abi-check: $*" >&2; exit 1; }

# ---- the library
if [ -n "$rc_dir" ]; then
	[ -d "$rc_dir" ] || die "RDMA_CORE=$rc_dir is not a directory"
	rc_dir=$(cd "$rc_dir" && pwd)
	triplet=$($cc -print-multiarch 2>/dev/null)
	lib=
	for d in ${triplet:+usr/lib/$triplet} usr/lib64 usr/lib; do
		[ -e "$rc_dir/$d/libibverbs.so.1" ] && { lib=$rc_dir/$d/libibverbs.so.1; break; }
	done
	[ -n "$lib" ] || die "RDMA_CORE=$rc_dir has no usr/lib/${triplet:-<triplet>}/libibverbs.so.1 (unpack libibverbs1 and libibverbs-dev there)"
	inc=$rc_dir/usr/include
	[ -e "$inc/infiniband/verbs.h" ] || die "RDMA_CORE=$rc_dir has no usr/include/infiniband/verbs.h (unpack libibverbs-dev there)"
	incflag=(-I "$inc")
else
	# The library the linker will use for -libverbs.
	lib=$($cc -print-file-name=libibverbs.so 2>/dev/null)
	[ -e "$lib" ] || lib=$(ldconfig -p 2>/dev/null | awk '/libibverbs\.so\.1 /{print $NF; exit}')
	[ -n "$lib" ] && [ -e "$lib" ] || die "no libibverbs found; install rdma-core's development files (make deps)"
	lib=$(readlink -f "$lib")
	inc="the system headers"
	incflag=()
fi
command -v readelf >/dev/null || die "readelf not found (binutils)"
nodes=$(readelf -V -W "$lib" 2>/dev/null | grep -oE 'IBVERBS_(PRIVATE_[0-9]+|1\.[0-9]+)' | sort -u)
private=$(grep -oE 'PRIVATE_[0-9]+' <<<"$nodes" | sed 's/PRIVATE_//' | sort -n | tail -1)
public=$(grep -oE '1\.[0-9]+' <<<"$nodes" | sort -t. -k2 -n | tail -1)
[ -n "$public" ] || die "$lib defines no IBVERBS_1.x version node; is it libibverbs?"

# ---- the headers: two sizes, measured
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/probe.c" <<'EOF'
#include <stddef.h>
#include <stdio.h>
#include <infiniband/verbs.h>
int main(void)
{
	printf("%zu %zu\n", offsetof(struct verbs_context, context),
	       sizeof(struct ibv_qp_ex) - sizeof(struct ibv_qp));
	return 0;
}
EOF
if ! $cc "${incflag[@]}" -o "$tmp/probe" "$tmp/probe.c" 2>"$tmp/err"; then
	head -3 "$tmp/err" >&2
	die "cannot compile against <infiniband/verbs.h> from $inc; install rdma-core's development files (make deps)"
fi
read -r vctx qpex < <("$tmp/probe") || die "the header probe did not run"

# ---- the layout these make
found="$lib: IBVERBS_PRIVATE_${private:-none}, IBVERBS_$public; $inc: verbs_context $vctx + ctx, ibv_qp_ex $qpex + qp"
layout=
case "${private:-none}/$public/$vctx/$qpex" in
34/1.14/320/184) layout=39 range="39 to 43" ;;
34/1.14/320/192) layout=44 range="44" ;;
34/1.14/320/200) layout=45 range="45 to 56" ;;
57/1.14/320/200) layout=57 range="57 to 58" ;;
59/1.15/344/200) layout=59 range="59 to 61" ;;
59/1.16/352/200) layout=62 range="62 to 63" ;;
64/1.17/368/200) layout=64 range="64" ;;
65/1.18/368/200) layout=65 range="65" ;;
esac
if [ -z "$layout" ]; then
	case "${private:-none}/$public" in
	34/1.14 | 57/1.14 | 59/1.15 | 59/1.16 | 64/1.17 | 65/1.18)
		die "the headers do not belong to this libibverbs ($found); install the -dev package of the same rdma-core, or point RDMA_CORE at one" ;;
	*)
		die "unknown provider ABI ($found); softib supports $SUPPORTED" ;;
	esac
fi

# ---- the outputs, rewritten only when they change (no needless rebuilds)
mkdir -p "$out"
cat >"$tmp/h" <<EOF
/* Generated by tools/abi-check.sh: the rdma-core provider ABI this build
 * declares (provider/verbs_abi.h).  Found from $lib
 * and the headers in ${inc}. */
#define SIB_ABI_LAYOUT $layout
#define SIB_ABI_RDMA_CORE "$range"
#define SIB_ABI_PRIVATE_NODE "IBVERBS_PRIVATE_$private"
#define SIB_ABI_PUBLIC_NODE "IBVERBS_$public"
EOF
sed "s/@PRIVATE_NODE@/IBVERBS_PRIVATE_$private/" "$top/provider/softib.map.in" >"$tmp/map"
changed=0
for f in verbs_abi_layout.h:h softib.map:map; do
	if ! cmp -s "$tmp/${f#*:}" "$out/${f%%:*}"; then
		cp "$tmp/${f#*:}" "$out/${f%%:*}"
		changed=1
	fi
done
[ $changed -eq 0 ] || echo "abi-check: rdma-core $range provider ABI (IBVERBS_PRIVATE_$private, IBVERBS_$public) from $lib"
exit 0

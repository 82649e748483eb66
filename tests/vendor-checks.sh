#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What tests/run-distros.sh runs inside an Ubuntu-like chroot (liburing and
# rdma-core of an Ubuntu release, built from source into /usr), from the
# top of a copy of the tree:
#
#   tests/vendor-checks.sh NAME FIRST_COMMAND
#
#   FIRST_COMMAND   the README's first command (deps, make, ibv_devinfo):
#                   softib0 ACTIVE, built against the liburing and
#                   rdma-core in /usr (tools/deps.sh takes them for their
#                   packages; nothing may bring Debian's libibverbs)
#   make unit       every cmocka test
#   integration     the tests rdma-core's own programs allow: the
#                   pingpongs, rping, ucmatose, udaddy, rdma_server and
#                   rdma_client, rstream and riostream (test_rdma_cm with
#                   RDMA_CM_ONLY_RDMA_CORE=1), and the tests whose programs
#                   are softib's own helpers, built against that rdma-core
#
# The last line is "vendor: NAME liburing X rdma-core Y: N passed, N failed".
set -u
name=${1:?usage: tests/vendor-checks.sh NAME FIRST_COMMAND}
first=${2:?usage: tests/vendor-checks.sh NAME FIRST_COMMAND}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
pass=0 fail=0
result() # WHAT OK [DETAIL]
{
	if [ "$2" -eq 1 ]; then
		pass=$((pass + 1)); echo "vendor: $1: PASS${3:+ ($3)}"
	else
		fail=$((fail + 1)); echo "vendor: $1: FAIL${3:+ ($3)}"
	fi
}
# The release of a library as its file name gives it (libfoo.so.1.2.39.0: 39.0).
lib_release() # SONAME
{
	readlink -f "$(ldconfig -p | awk -v l="$1" '$1 == l { print $NF; exit }')" |
		sed -nE 's/.*\.so\.[0-9]+\.[0-9]+\.([0-9]+\.[0-9]+)$/\1/p; s/.*liburing\.so\.([0-9.]+)$/\1/p'
}
uring=$(lib_release liburing.so.2) rdma=$(lib_release libibverbs.so.1)
echo "vendor: $name: liburing ${uring:-?}, rdma-core ${rdma:-?} in /usr"

ok=0
if bash -c "$first" >build.log 2>&1 && grep -q 'hca_id:[[:space:]]*softib0' build.log &&
	grep -q 'state:[[:space:]]*PORT_ACTIVE' build.log; then
	ok=1
else
	tail -30 build.log
fi
grep -E '^(deps|abi-check):' build.log
# Debian's packages must not have replaced what was built from source.
for p in libibverbs1 librdmacm1 liburing2; do
	if dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii'; then
		echo "vendor: Debian's $p was installed over the source build"
		ok=0
	fi
done
result "README's first command" $ok "$(grep -m1 -o 'port_lid:[[:space:]]*[0-9]*' build.log | tr -s '\t ' ' ')"
[ $ok -eq 1 ] || { echo "vendor: $name liburing ${uring:-?} rdma-core ${rdma:-?}: $pass passed, $((fail + 1)) failed"; exit 1; }
# Which system calls the link makes (io_uring with liburing 2.1 too).
link=$(SOFTIB_LOG=info build/softib run ibv_devinfo -d softib0 2>&1 | grep -m1 -o 'link: UDP.*')
echo "vendor: ${link:-no link line from SOFTIB_LOG=info}"

out=$(make unit 2>&1)
rc=$?
grep -E '^unit \(' <<<"$out"
[ $rc -eq 0 ] || grep -E 'FAIL|failed' <<<"$out" | head -20
result "make unit" $((rc == 0)) "$(grep -m1 -oE '[0-9]+ programs passed, [0-9]+ failed' <<<"$out")"

out=$(RDMA_CM_ONLY_RDMA_CORE=1 B=build tests/run-integration.sh test_pingpong test_rdma_cm \
	test_qp_rules test_device_rules test_verbs_mr_rules test_rc_errors test_ucma_signals \
	test_link_backends test_link_uring_faults 2>&1)
rc=$?
grep -E '^(--- test_|skip:|rping:|FAIL|integration \()' <<<"$out"
[ $rc -eq 0 ] || awk '/^--- why /{ p = 1 } p' <<<"$out" | head -60
result "integration tests of rdma-core's programs and softib's helpers" $((rc == 0)) \
	"$(grep -oE '[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' <<<"$out" | tail -1)"

echo "vendor: $name liburing ${uring:-?} rdma-core ${rdma:-?}: $pass passed, $fail failed"
[ $fail -eq 0 ]

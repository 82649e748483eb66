#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What tests/run-distros.sh runs inside each distribution's chroot, from the
# top of a copy of the tree: build softib (`tools/deps.sh && make`, as the
# README's first command: make installs the build's packages itself),
# install the programs below, then run each against
# softib0 and print one result line per check:
#   ibv_devinfo -v -d softib0    the port ACTIVE with an SM-given LID
#   ibv_rc_pingpong              server and client exit 0 with both lines
#   ib_write_bw                  server and client exit 0, a 65536-byte row
#   pyverbs                      test_device, test_pd, test_mr, test_cq and
#                                test_qp of that release's own suite, 0
#                                failures and 0 errors
#   dpkg-buildpackage -b -us -uc the Debian package (debian/) builds
# The last line is "distro: RELEASE rdma-core VERSION: N passed, N failed".
# Exit 0 iff every check passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
release=$(. /etc/os-release && echo "${PRETTY_NAME:-$ID}")

if ! tools/deps.sh >build.log 2>&1 || ! make -j2 >>build.log 2>&1; then
	tail -20 build.log
	echo "distro: $release: FAIL (make)"
	exit 1
fi
grep '^abi-check:' build.log
tools/deps.sh all ibverbs-utils perftest python3-pyverbs rdma-core procps iproute2 || exit 1
version=$(dpkg-query -W -f='${Version}' libibverbs1)

. tests/integration/lib.sh
sib_init distro
sib_need_sm
pass=0 fail=0
result() # NAME OK [DETAIL]
{
	if [ "$2" -eq 1 ]; then
		pass=$((pass + 1)); echo "distro: $1: PASS${3:+ ($3)}"
	else
		fail=$((fail + 1)); echo "distro: $1: FAIL${3:+ ($3)}"
	fi
}

sib_run devinfo 60 "$SOFTIB" run ibv_devinfo -v -d softib0
ok=0
grep -q 'hca_id:[[:space:]]*softib0' "$(sib_out devinfo)" &&
	grep -q 'state:[[:space:]]*PORT_ACTIVE' "$(sib_out devinfo)" && ok=1
[ $ok -eq 1 ] || sib_show devinfo
result "ibv_devinfo -v -d softib0" $ok "$(grep -m1 -o 'port_lid:[[:space:]]*[0-9]*' "$(sib_out devinfo)" | tr -s '\t ' ' ')"

ok=0
port=$(sib_free_port tcp)
if sib_pair rc 120 "$port" 127.0.0.1 ibv_rc_pingpong -d softib0 -i 1 -n 100; then
	sib_expect "$(sib_out rc.client)" '^100 iters in [0-9.]+ seconds' "ibv_rc_pingpong client" && ok=1
fi
result ibv_rc_pingpong $ok

ok=0
port=$(sib_free_port tcp)
if sib_pair bw 180 "$port" 127.0.0.1 ib_write_bw -d softib0 -i 1 -F -s 65536 -n 500; then
	sib_expect "$(sib_out bw.client)" '^ *65536 +500 ' "ib_write_bw client" && ok=1
fi
result ib_write_bw $ok "$(grep -E '^ *65536 ' "$(sib_out bw.client)" 2>/dev/null | tr -s ' ')"

ok=0
out=$(bash tests/integration/test_pyverbs.sh --modules test_device test_pd test_mr test_cq test_qp 2>&1)
rc=$?
grep -E '^(test_[a-z]+: |pyverbs: )' <<<"$out"
[ $rc -eq 0 ] && ok=1
[ $ok -eq 1 ] || tail -40 <<<"$out"
result "pyverbs device, PD, MR, CQ, QP" $ok "$(grep '^pyverbs: ' <<<"$out" | tail -1)"

# Last, since its clean step removes build/: the Debian package builds here
# (run-distros.sh's package case installs and lints bookworm's).
ok=0
rm -f ../softib_*.deb
if apt-get build-dep -y -q ./ >pkg.log 2>&1 && dpkg-buildpackage -b -us -uc >>pkg.log 2>&1 &&
	ls ../softib_*.deb >/dev/null 2>&1; then
	ok=1
else
	tail -20 pkg.log
fi
result "dpkg-buildpackage -b -us -uc" $ok "$(cd .. && ls softib_*.deb 2>/dev/null)"

echo "distro: $release rdma-core $version: $pass passed, $fail failed"
[ $fail -eq 0 ]

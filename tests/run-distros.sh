#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# softib on other Debian releases and on a fresh machine (make test-distros):
#
#   tests/run-distros.sh [CASE...]     default: trixie sid ubuntu-22.04
#                                      ubuntu-24.04 package fresh-bookworm
#
#   trixie, sid      a debootstrap (minbase) chroot of the release; a copy of
#                    this tree (its tracked files) is built there and
#                    tests/distro-checks.sh runs ibv_devinfo -v, ibv_rc_pingpong,
#                    ib_write_bw and pyverbs' device, PD, MR, CQ and QP
#                    modules against that release's rdma-core
#   fresh-bookworm   a minimal bookworm with only git and ca-certificates
#                    added: a `git clone` of this tree's HEAD, then the
#                    README's first command (it must build softib and print
#                    softib0 ACTIVE from ibv_devinfo -v) and its second
#                    (make test) as the README writes them, limited to make
#                    test's deps and check stages: they prove a minimal
#                    system gets every dependency and passes every test;
#                    the ASan, fuzz and rdma-core stages build the same
#                    tests differently and run in CI's own make test on
#                    bookworm (run twice, they would cost 20 of CI's 75
#                    minutes)
#   ubuntu-22.04, ubuntu-24.04
#                    what those releases give softib, where their archives
#                    cannot be reached: a bookworm chroot whose liburing and
#                    rdma-core are the ones they ship (2.1 and 39.0; 2.5 and
#                    50.0), built from the upstream sources in
#                    ../shared/vendor and installed into /usr as their
#                    packages are; then tests/vendor-checks.sh: the README's
#                    first command, the unit tests and the integration tests
#                    rdma-core's own programs allow.  Skipped, saying so,
#                    when ../shared is not beside the tree.
#   package          dpkg-buildpackage -b -us -uc in a minimal bookworm with
#                    only the Build-Depends added, lintian (no errors), then
#                    `apt install ./softib_*.deb` into another minimal
#                    bookworm: softib0 ACTIVE and `man softib` there (trixie
#                    and sid build the package in their own cases)
#
# Needs root (debootstrap, chroot, mounts in a private mount namespace that
# vanish with it) and debootstrap (installed when missing).  The chroots and
# the .debs they were made of are cached in $SOFTIB_CACHE (default
# ~/.cache/softib) under chroot/ and debs/: a second run reuses them (the
# fresh case copies its cached base each time, so it stays fresh).  A
# chroot is made again when its base is older than SOFTIB_CHROOT_DAYS
# (default 7).  Prints one result line per case; exit 0 iff all passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SOFTIB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/softib}
mirror=${SOFTIB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
max_days=${SOFTIB_CHROOT_DAYS:-7}
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(trixie sid ubuntu-22.04 ubuntu-24.04 package fresh-bookworm)
vendor=${SOFTIB_SHARED_DIR:-$top/../shared}/vendor
results=() fail=0

if [ "$(id -u)" != 0 ]; then
	echo "skip: make test-distros needs root (debootstrap, chroot)"
	exit 77
fi
"$top/tools/deps.sh" all debootstrap >/dev/null || exit 1
. "$top/tests/integration/lib.sh" # sib_free_port

stamp() { date +%s; }
t_start=$(stamp)

# A cached chroot of SUITE with PACKAGES (comma list) added: made when
# missing or stale, under an flock so two runs never build one at once.
base_chroot() # DIR SUITE [PACKAGES]
{
	local dir=$1 suite=$2 include=${3:-} lock age

	mkdir -p "$cache/chroot" "$cache/debs/$suite"
	exec {lock}>"$dir.lock"
	flock "$lock"
	if [ -e "$dir/.softib-base" ]; then
		age=$(( ($(stamp) - $(stat -c %Y "$dir/.softib-base")) / 86400 ))
		[ "$age" -lt "$max_days" ] || { echo "$dir is $age days old: made again"; rm -rf "$dir"; }
	fi
	if [ ! -e "$dir/.softib-base" ]; then
		rm -rf "$dir"
		echo "debootstrap $suite into $dir${include:+ (with $include)}"
		if ! debootstrap --variant=minbase ${include:+--include="$include"} \
			--cache-dir="$cache/debs/$suite" "$suite" "$dir" "$mirror" >"$dir.log" 2>&1; then
			tail -5 "$dir.log"
			exec {lock}>&-
			return 1
		fi
		# Services never start in a chroot (rdma-core's postinst would try).
		printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
		chmod 755 "$dir/usr/sbin/policy-rc.d"
		touch "$dir/.softib-base"
	fi
	exec {lock}>&-
}

# Runs COMMAND as root in chroot DIR with /proc, /sys, /dev and a fresh /tmp
# and /run, in a mount namespace of its own (the mounts vanish with it);
# apt's downloads land in the suite's cache.
# SOFTIB_SM is a free port of its own: the chroot shares this machine's
# network, where the default SM port may be someone else's.
in_chroot() # DIR SUITE COMMAND
{
	local dir=$1 suite=$2 cmd=$3 rc

	cp /etc/resolv.conf "$dir/etc/resolv.conf"
	# debootstrap writes no /etc/hosts, which every installed Debian has
	# (the installer writes localhost and the host's name).  Without it
	# "localhost" does not resolve, and libfabric's verbs provider finds no
	# address for its MSG endpoints, as on any machine so broken.
	[ -e "$dir/etc/hosts" ] ||
		printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
			"$(hostname)" >"$dir/etc/hosts"
	mkdir -p "$cache/debs/$suite/partial"
	unshare --mount --propagation private -- bash -c '
		set -e
		d=$1
		mount --bind "$d" "$d" # a mount point, as / is (ip netns wants one)
		mount -t proc proc "$d/proc"
		mount -t sysfs sysfs "$d/sys"
		mount --rbind /dev "$d/dev"
		mount -t tmpfs tmpfs "$d/tmp"
		mount -t tmpfs tmpfs "$d/run"
		mount --bind "$2" "$d/var/cache/apt/archives"
		exec chroot "$d" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			SOFTIB_SM="127.0.0.1:$4" bash -c "$3"
	' _ "$dir" "$cache/debs/$suite" "$cmd" "$(sib_free_port udp)"
	rc=$?
	kill_chroot_procs "$dir"
	return $rc
}

# What is left running inside DIR (an auto-started SM that has not yet
# reached its idle exit): ours, found by its root directory.
kill_chroot_procs() # DIR
{
	local p root

	for p in /proc/[0-9]*; do
		root=$(readlink "$p/root" 2>/dev/null) || continue
		[ "$root" = "$1" ] && kill "${p#/proc/}" 2>/dev/null
	done
	return 0
}

# The tracked files of this tree, as they are now, into DIR.
copy_tree() # DIR
{
	rm -rf "$1" && mkdir -p "$1"
	git -C "$top" ls-files -z | (cd "$top" && tar --null -T - -cf -) | tar -xf - -C "$1"
}

run_release() # SUITE
{
	local suite=$1 dir=$cache/chroot/$1 t0 line
	t0=$(stamp)
	echo "=== $suite: softib built and run in a chroot"
	if ! base_chroot "$dir" "$suite" ca-certificates; then
		results+=("$suite: FAIL (debootstrap; $dir.log)"); fail=1; return
	fi
	# trixie's and sid's Release files expire within a week; a mirror that
	# serves a snapshot must still do for a test.
	echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99softib-test"
	copy_tree "$dir/root/softib"
	in_chroot "$dir" "$suite" 'cd /root/softib && bash tests/distro-checks.sh' 2>&1 |
		tee "$dir.run.log" | grep --line-buffered -vE '^(ok:|  |\[)'
	line=$(grep '^distro: .* passed, .* failed$' "$dir.run.log" | tail -1)
	if grep -q ', 0 failed$' <<<"$line"; then
		results+=("$suite: PASS (${line#distro: }; $(( $(stamp) - t0 )) s)")
	else
		results+=("$suite: FAIL (${line:-no summary line}; $(( $(stamp) - t0 )) s)"); fail=1
	fi
}

# The README's first two commands, as written in its first sh block.
readme_commands()
{
	awk '/^```sh$/ { on = 1; next } on && /^```$/ { exit } on' "$top/README.md" |
		sed 's/[[:space:]]*#.*$//' | grep -v '^[[:space:]]*$' | head -2
}

# make test's stages the fresh case runs (see the top of this file).
fresh_stages="TEST_STAGES=\"'deps:deps' 'check:check'\""

run_fresh() # SUITE (bookworm)
{
	local suite=${1#fresh-} base=$cache/chroot/${1#fresh-}-fresh-base work t0 first second rc log
	t0=$(stamp)
	echo "=== fresh $suite: the README's first two commands on a minimal $suite"
	mapfile -t cmds < <(readme_commands)
	first=${cmds[0]:-} second=${cmds[1]:-}
	if [ -z "$first" ] || [ -z "$second" ]; then
		results+=("fresh $suite: FAIL (README.md has no first sh block with two commands)"); fail=1; return
	fi
	if ! base_chroot "$base" "$suite" git,ca-certificates; then
		results+=("fresh $suite: FAIL (debootstrap; $base.log)"); fail=1; return
	fi
	work=$cache/chroot/$suite-fresh.run
	rm -rf "$work"
	cp -a "$base" "$work"
	git -C "$top" bundle create "$work/root/softib.bundle" HEAD >/dev/null 2>&1 ||
		{ results+=("fresh $suite: FAIL (git bundle of HEAD)"); fail=1; return; }
	log=$cache/chroot/$suite-fresh
	echo "\$ $first"
	in_chroot "$work" "$suite" "cd /root && git clone -q softib.bundle softib && cd softib && $first" \
		>"$log.first.log" 2>&1
	rc=$?
	grep -E '^(deps|abi-check):' "$log.first.log"
	tail -n 12 "$log.first.log"
	if [ $rc -ne 0 ] || ! grep -q 'hca_id:[[:space:]]*softib0' "$log.first.log" ||
		! grep -q 'state:[[:space:]]*PORT_ACTIVE' "$log.first.log"; then
		results+=("fresh $suite: FAIL (first command exit $rc, no ACTIVE softib0; $log.first.log)"); fail=1
		rm -rf "$work"; return
	fi
	echo "\$ $second $fresh_stages"
	in_chroot "$work" "$suite" "cd /root/softib && $second $fresh_stages" 2>&1 | tee "$log.second.log" |
		grep --line-buffered -E '^(unit|integration) \(|^--- (test_.*: (FAIL|SKIP)|stage|why )|^(FAIL|note):|^failed|^make test:|^  rdma-core|^(deps|skip):'
	rc=${PIPESTATUS[0]}
	if [ $rc -ne 0 ]; then
		# Why each failed program failed, ahead of the tail: the tail alone
		# is the last stages' output, not the failure.
		awk '/^--- why /{ p = 1 } /^(failed |unit \(|integration \()/{ p = 0 } p' \
			"$log.second.log" | head -n 120
		tail -n 30 "$log.second.log"
	fi
	if [ $rc -eq 0 ] && grep -q '^make test: all stages passed' "$log.second.log"; then
		results+=("fresh $suite: PASS ('$first' printed softib0 ACTIVE; '$second' passed its deps and check stages; $(( $(stamp) - t0 )) s)")
	else
		results+=("fresh $suite: FAIL ('$second' exit $rc; $(( $(stamp) - t0 )) s)"); fail=1
	fi
	rm -rf "$work"
}

# The upstream sources an Ubuntu release's packages are built from.
ubuntu_sources() # CASE: prints "LIBURING RDMA_CORE" (tarball names)
{
	case $1 in
	ubuntu-22.04) echo "liburing-2.1 rdma-core-39.0" ;;
	ubuntu-24.04) echo "liburing-2.5 rdma-core-50.0" ;;
	esac
}

# A cached chroot DIR: bookworm with a compiler, cmake and what softib's
# build takes from Debian (not rdma-core or liburing), then liburing and
# rdma-core built from SOURCES and installed into /usr.  Made again when
# the base is, or the tarballs change.
ubuntu_chroot() # DIR LIBURING RDMA_CORE
{
	local dir=$1 uring=$2 rdma=$3 base=$cache/chroot/bookworm-build want lock rc

	base_chroot "$base" bookworm "ca-certificates,gcc,libc6-dev,make,cmake,ninja-build,pkg-config,python3,binutils,xz-utils,libnl-3-dev,libnl-route-3-dev,libudev-dev,libcmocka-dev,libisal-dev,zlib1g-dev,iproute2,procps" ||
		return 1
	want="$(stat -c %Y "$base/.softib-base") $(cd "$vendor" && sha256sum "$uring.tar.xz" "$rdma.tar.xz" | awk '{ printf "%s ", $1 }')"
	exec {lock}>"$dir.lock"
	flock "$lock"
	if [ "$(cat "$dir/.softib-vendor" 2>/dev/null)" != "$want" ]; then
		echo "building $uring and $rdma into $dir (cached for the next run)"
		rm -rf "$dir" && cp -a "$base" "$dir" && mkdir -p "$dir/root/src" &&
			tar -xJf "$vendor/$uring.tar.xz" -C "$dir/root/src" &&
			tar -xJf "$vendor/$rdma.tar.xz" -C "$dir/root/src" || { exec {lock}>&-; return 1; }
		in_chroot "$dir" bookworm "set -e; t=\$(gcc -print-multiarch)
			cd /root/src/$uring
			./configure --prefix=/usr --libdir=/usr/lib/\$t --libdevdir=/usr/lib/\$t
			make -C src -j2 && make -C src install
			mkdir /root/src/$rdma/build && cd /root/src/$rdma/build
			cmake -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DCMAKE_INSTALL_PREFIX=/usr \
				-DCMAKE_INSTALL_LIBDIR=lib/\$t -DCMAKE_INSTALL_SYSCONFDIR=/etc \
				-DCMAKE_INSTALL_RUNDIR=/run ..
			ninja install && ldconfig
			rm -rf /root/src" >"$dir.build.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			tail -20 "$dir.build.log"
			exec {lock}>&-
			return 1
		fi
		echo "$want" >"$dir/.softib-vendor"
	fi
	exec {lock}>&-
}

run_ubuntu() # CASE
{
	local name=$1 dir=$cache/chroot/$1 t0 uring rdma first line
	t0=$(stamp)
	read -r uring rdma <<<"$(ubuntu_sources "$name")"
	echo "=== $name: bookworm with Ubuntu ${name#ubuntu-}'s $uring and $rdma, from source"
	if [ ! -e "$vendor/$uring.tar.xz" ] || [ ! -e "$vendor/$rdma.tar.xz" ]; then
		echo "skip: $name: $vendor/$uring.tar.xz or $rdma.tar.xz is absent (../shared is not beside this tree)"
		results+=("$name: SKIP (no $vendor)"); return
	fi
	if ! ubuntu_chroot "$dir" "$uring" "$rdma"; then
		results+=("$name: FAIL (building $uring and $rdma; $dir.build.log)"); fail=1; return
	fi
	mapfile -t cmds < <(readme_commands)
	first=${cmds[0]:-}
	copy_tree "$dir/root/softib"
	in_chroot "$dir" bookworm "cd /root/softib && bash tests/vendor-checks.sh '$name' $(printf %q "$first")" 2>&1 |
		tee "$dir.run.log" | grep --line-buffered -E '^(vendor|deps|abi-check|rping|skip|unit \(|integration \(|--- test_|FAIL)'
	line=$(grep '^vendor: .* passed, .* failed$' "$dir.run.log" | tail -1)
	if grep -q ', 0 failed$' <<<"$line"; then
		results+=("$name: PASS (${line#vendor: }; $(( $(stamp) - t0 )) s)")
	else
		results+=("$name: FAIL (${line:-no summary line}; $dir.run.log; $(( $(stamp) - t0 )) s)"); fail=1
	fi
}

# The Debian package as a user meets it: built with dpkg-buildpackage in a
# minimal bookworm that has only its Build-Depends added, checked by
# lintian, then installed with apt into another minimal bookworm, where
# softib0 must be ACTIVE and `man softib` must show the page.
run_package()
{
	local base=$cache/chroot/bookworm-fresh-base work=$cache/chroot/bookworm-package.run t0 deb log=$cache/chroot/bookworm-package
	t0=$(stamp)
	echo "=== package: dpkg-buildpackage, lintian, and apt install ./softib_*.deb on a minimal bookworm"
	if ! base_chroot "$base" bookworm git,ca-certificates; then
		results+=("package: FAIL (debootstrap; $base.log)"); fail=1; return
	fi
	rm -rf "$work" && cp -a "$base" "$work"
	copy_tree "$work/root/softib"
	in_chroot "$work" bookworm 'set -e; cd /root/softib
		apt-get update -q >/dev/null
		apt-get build-dep -y -q ./ >/dev/null
		apt-get install -y -q --no-install-recommends lintian >/dev/null
		dpkg-buildpackage -b -us -uc >../build.log 2>&1 || { tail -30 ../build.log; exit 1; }
		cd .. && ls softib_*.deb && echo "lintian: $(lintian --version)" &&
		lintian --fail-on error softib_*.deb; echo "lintian: exit $?"' >"$log.build.log" 2>&1
	grep -E '^(softib_|lintian|[EWIN]: )' "$log.build.log"
	deb=$(ls "$work"/root/softib_*.deb 2>/dev/null | head -1)
	if [ -z "$deb" ] || ! grep -q '^lintian: exit 0$' "$log.build.log"; then
		tail -30 "$log.build.log"
		results+=("package: FAIL (no .deb, or lintian found errors; $log.build.log)"); fail=1
		rm -rf "$work"; return
	fi
	cp "$deb" "$cache/chroot/" && deb=$cache/chroot/$(basename "$deb")
	rm -rf "$work" && cp -a "$base" "$work" && mv "$deb" "$work/root/"
	in_chroot "$work" bookworm "set -e; cd /root
		apt-get update -q >/dev/null
		apt-get install -y -q ./$(basename "$deb") man-db >/dev/null
		dpkg -L softib | grep -E 'bin/|\.so\$|man'
		softib run ibv_devinfo -d softib0
		MANPAGER=cat MANWIDTH=80 man softib | head -5" >"$log.install.log" 2>&1
	grep -E 'usr/|hca_id|state:|^SOFTIB|NAME' "$log.install.log"
	if grep -q 'hca_id:[[:space:]]*softib0' "$log.install.log" &&
		grep -q 'state:[[:space:]]*PORT_ACTIVE' "$log.install.log" &&
		grep -q '^SOFTIB(1)' "$log.install.log"; then
		results+=("package: PASS ($(basename "$deb") built, lintian clean of errors, installed: softib0 ACTIVE, man softib; $(( $(stamp) - t0 )) s)")
	else
		tail -30 "$log.install.log"
		results+=("package: FAIL (installed package: no ACTIVE softib0 or no man page; $log.install.log)"); fail=1
	fi
	rm -rf "$work"
}

for c in "${cases[@]}"; do
	case $c in
	fresh-*) run_fresh "$c" ;;
	package) run_package ;;
	ubuntu-*) run_ubuntu "$c" ;;
	*) run_release "$c" ;;
	esac
done
echo "--- test-distros ($(( $(stamp) - t_start )) s):"
printf '  %s\n' "${results[@]}"
exit $fail

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Installs the packages softib needs, or says exactly what to install.
#
#   tools/deps.sh                      no make yet (a fresh machine): installs
#                                      make, then runs `make deps-build`
#   tools/deps.sh build|all DEB...     (the Makefile) the Debian packages DEB
#                                      that `make` (build) or `make test`
#                                      (all) needs
#
# With apt (Debian, Ubuntu): what dpkg says is missing is installed with
# apt-get, as root or through passwordless sudo; otherwise it stops with the
# line to run.  rdma-core's and liburing's headers and commands installed
# without their packages (built from source) count as present.  Elsewhere only apt is automated: for the build it checks
# the headers and commands themselves and, when one is missing, names the
# dnf or pacman packages to install by hand; for `make test` it lists what
# to install and carries on (tests skip what is missing).
set -u
mode=${1:-bootstrap}
[ $# -gt 0 ] && shift
debs=("$@")

# The build's needs where there is no dpkg: what to look for, and the
# Fedora (dnf) and Arch (pacman) packages that provide it.
build_needs=(
	"cmd:cc            gcc                 gcc"
	"cmd:make          make                make"
	"cmd:pkg-config    pkgconf-pkg-config  pkgconf"
	"cmd:readelf       binutils            binutils"
	"h:infiniband/verbs.h libibverbs-devel rdma-core"
	"h:liburing.h      liburing-devel      liburing"
	"h:netlink/route/link.h libnl3-devel   libnl"
	"h:cmocka.h        libcmocka-devel     cmocka"
	"h:isa-l/crc.h     isa-l-devel         isa-l"
	"h:zlib.h          zlib-devel          zlib"
)
test_rpms="clang compiler-rt libibverbs-utils perftest python3-pyverbs wireshark-cli librsvg2-tools iproute procps-ng ucx groff-base man-db scsi-target-utils infiniband-diags opensm ibsim"
test_pacman="clang compiler-rt rdma-core wireshark-cli librsvg iproute2 procps-ng groff man-db (perftest and ucx: AUR)"

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		sudo "$@"
	else
		return 126
	fi
}

apt_install() { # packages...
	local line="apt-get update && apt-get install -y --no-install-recommends $*"

	echo "deps: installing $*"
	if ! as_root true 2>/dev/null; then
		echo "deps: not root and no passwordless sudo; run as root:  $line" >&2
		return 1
	fi
	as_root apt-get update -q >/dev/null &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "$@" >/dev/null ||
		{ echo "deps: apt-get failed; run as root:  $line" >&2; return 1; }
	echo "deps: done"
}

have_header() {
	local h=$1 cc

	cc=$(command -v cc || command -v gcc) || return 1
	echo "#include <$h>" | "$cc" -E -x c - $(pkg-config --cflags libnl-3.0 2>/dev/null) \
		-I/usr/include/libnl3 >/dev/null 2>&1
}

# ---- a fresh machine: make first, then the Makefile knows the rest
if [ "$mode" = bootstrap ]; then
	if ! command -v make >/dev/null; then
		if command -v apt-get >/dev/null; then
			apt_install make || exit 1
		else
			echo "deps: make is not installed; only apt is automated: install make (dnf install make / pacman -S make) and rerun" >&2
			exit 1
		fi
	fi
	exec make -C "$(dirname "$0")/.." deps-build
fi

# ---- apt
if command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
	missing=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${debs[@]}" 2>/dev/null |
		awk '$2 == "ii" { ok[$1] = 1 } END { for (p in ok) print p }' |
		sort | comm -13 - <(printf '%s\n' "${debs[@]}" | sort -u) | tr '\n' ' ')
	missing=${missing% }
	# rdma-core and liburing built from source and installed (make
	# test-distros' Ubuntu-like chroots, a user's newer rdma-core): the
	# header or command is there without its package, and installing the
	# package would put Debian's over it.
	kept=()
	for p in $missing; do
		case $p in
		libibverbs-dev) have_header infiniband/verbs.h && what=infiniband/verbs.h ;;
		librdmacm-dev) have_header rdma/rdma_cma.h && what=rdma/rdma_cma.h ;;
		liburing-dev) have_header liburing.h && what=liburing.h ;;
		ibverbs-utils) command -v ibv_devinfo >/dev/null && what=ibv_devinfo ;;
		rdmacm-utils) command -v rping >/dev/null && what=rping ;;
		*) false ;;
		esac && { echo "deps: $p is not installed, but $what is (built from source?): using it"; continue; }
		kept+=("$p")
	done
	missing=${kept[*]}
	if [ -z "$missing" ]; then
		[ "$mode" = all ] && echo "deps: all ${#debs[@]} packages present"
		exit 0
	fi
	# shellcheck disable=SC2086
	apt_install $missing
	exit
fi

# ---- no apt: check, and name the packages
pm=none
command -v dnf >/dev/null && pm=dnf
command -v pacman >/dev/null && pm=pacman
miss_rpm=() miss_pac=() miss_what=()
for n in "${build_needs[@]}"; do
	read -r what rpm pac <<<"$n"
	case $what in
	cmd:*) command -v "${what#cmd:}" >/dev/null && continue ;;
	h:*) have_header "${what#h:}" && continue ;;
	esac
	miss_what+=("${what#*:}") miss_rpm+=("$rpm") miss_pac+=("$pac")
done
case $pm in
dnf) line="dnf install ${miss_rpm[*]}" tline="dnf install $test_rpms" ;;
pacman) line="pacman -S --needed ${miss_pac[*]}" tline="pacman -S --needed $test_pacman" ;;
*) line="(Fedora) dnf install ${miss_rpm[*]}; (Arch) pacman -S ${miss_pac[*]}"
   tline="(Fedora) dnf install $test_rpms; (Arch) pacman -S $test_pacman" ;;
esac
if [ ${#miss_what[@]} -gt 0 ]; then
	echo "deps: missing ${miss_what[*]}; only apt is automated, so install by hand:  $line" >&2
	exit 1
fi
if [ "$mode" = all ]; then
	echo "deps: the build's needs are present; only apt is automated, so for every test install by hand:  $tline"
	echo "deps: (tests whose programs are missing say so and skip)"
fi
exit 0

# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Shared helpers for the integration tests that run verbs programs in pairs
# (a server and a client) under `softib run`.  Source it, then call
# sib_init.  Every process a test starts goes through sib_start or sib_run,
# so it has a time limit and is killed and waited for on exit; every test
# gets its own subnet manager port (SOFTIB_SM) and its own TCP ports, so
# tests never share an SM or a port with each other or with a user.
#
#   sib_init NAME            temp dir, traps, SOFTIB_SM on a free UDP port,
#                            SOFTIB_RUN_DIR inside the temp dir
#   sib_need PROG...         skip (exit 77) when a program is not installed
#   sib_need_sm              skip when softib-sm is not built
#   sib_skip MSG / sib_fail MSG
#   sib_free_port tcp|udp    print a port nobody listens on (not reused)
#   sib_start ID SECS CMD... start CMD in the background, output in $(sib_out ID)
#   sib_run ID SECS CMD...   run CMD in the foreground, output in $(sib_out ID)
#   sib_wait ID              wait for a background ID; returns its status
#   sib_wait_listen ID PORT  wait until ID listens on TCP PORT, or has an
#                            rdma_cm id listening on PORT (any port space)
#   sib_cm_listens PORT [ADDR]  an rdma_cm id listens on PORT (at ADDR)
#   sib_pair ID SECS PORT HOST PROG ARGS...
#                            PROG ARGS -p PORT as server, and the same plus
#                            HOST as client; both must exit 0
#   sib_pair_done CLIENT SERVER WHAT
#                            waits for background SERVER; fails the test
#                            (saying WHAT) unless it and CLIENT exited 0
#   sib_two_hosts NS_A NS_B ADDR_A ADDR_B
#                            two "hosts": network namespaces joined by a veth
#                            pair, ADDR_A/24 and ADDR_B/24 (gone on exit)
#   sib_ns_sm NS ID ADDR:PORT  softib-sm --listen ADDR:PORT inside NS, as ID;
#                            returns once it is bound
#
# Exit statuses: 0 pass, 77 skip, anything else fail (tests/run-integration.sh).

set -u

SIB_TOP=${SOFTIB_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
B=${B:-$SIB_TOP/build}
case "$B" in /*) ;; *) B=$SIB_TOP/$B ;; esac
SOFTIB=${SOFTIB:-$B/softib}

SIB_NAME=
SIB_TMP=
SIB_SM_PORT=
SIB_USED_PORTS=" "
SIB_NETNS=()			# namespaces to delete on exit
declare -A SIB_PID=()		# ID -> pid of a background process
declare -A SIB_RC=()		# ID -> exit status once waited for
declare -A SIB_NS_OF=()		# ID -> namespace it runs in ("" = this one)

# Commands put in front of the server's and the client's command line by
# sib_pair (for example `ip netns exec ns env SOFTIB_ADDR=...`), and the
# namespace whose sockets sib_wait_listen looks at.
SIB_SERVER_WRAP=()
SIB_CLIENT_WRAP=()
SIB_SERVER_NETNS=

# Line-buffered output, so that a program killed at its time limit still
# shows how far it got (stdio buffers a file fully otherwise).  Not with an
# AddressSanitizer build: stdbuf preloads its library ahead of the ASan
# runtime, which ASan refuses.
SIB_LINEBUF=()
if command -v stdbuf >/dev/null 2>&1 && ! ldd "$SOFTIB" 2>/dev/null | grep -q libasan; then
	SIB_LINEBUF=(stdbuf -oL -eL)
fi

sib_log() { echo "$SIB_NAME: $*"; }

sib_skip()
{
	echo "skip: $*"
	exit 77
}

sib_out() { echo "$SIB_TMP/$1.out"; }

# Prints the output of every process the test started (or of the IDs given),
# each under a header, so a failure shows both sides.
sib_show()
{
	local id ids=("$@")

	[ ${#ids[@]} -gt 0 ] || ids=($(cd "$SIB_TMP" 2>/dev/null && ls -tr -- *.out 2>/dev/null | sed 's/\.out$//'))
	for id in "${ids[@]}"; do
		echo "----- output of $id${SIB_RC[$id]+ (exit ${SIB_RC[$id]})}"
		if [ -s "$(sib_out "$id")" ]; then
			tail -n 60 "$(sib_out "$id")"
		else
			echo "(nothing)"
		fi
	done
	echo "-----"
}

sib_fail()
{
	echo "FAIL: $SIB_NAME: $*"
	sib_show
	exit 1
}

sib_need()
{
	local p

	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 ||
			sib_skip "$p is not installed (make deps installs it)"
	done
}

# Runs a command inside namespace NS, or here when NS is empty.
sib_in_ns()
{
	local ns=$1

	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# A port that no socket of that protocol uses now (in this namespace), that
# this test has not handed out before, and that lies outside the kernel's
# ephemeral range (ip_local_port_range): a socket bound to port 0 (a link,
# a client's connect) could otherwise take it before the program it is for
# binds it -- a rank's link once sat on a test's SM port, and the SM it
# started could not listen.  Ports are only reserved by binding them, so
# two tests could still pick the same one; starting from a pid-dependent
# point makes that unlikely.  Handed-out ports are kept in the test's temp
# dir as well, since callers take the port in a subshell: $(sib_free_port).
sib_free_port()
{
	local proto=${1:-tcp} flag=-tan p i lo=10000 n=50000 elo=32768 ehi=60999 used

	[ "$proto" = udp ] && flag=-uan
	read -r elo ehi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
	if ((elo - lo >= 2000)); then
		n=$((elo - lo)) # below the ephemeral range
	elif ((65535 - ehi >= 2000)); then
		lo=$((ehi + 1)) n=$((65535 - ehi)) # the range starts low: above it
	fi
	used=$SIB_USED_PORTS
	[ -n "$SIB_TMP" ] && [ -f "$SIB_TMP/ports.used" ] && used+=" $(tr '\n' ' ' <"$SIB_TMP/ports.used")"
	p=$((lo + (($$ * 7919 + RANDOM) % n)))
	for ((i = 0; i < n; i++)); do
		p=$((lo + (p - lo + 1) % n))
		# 18754: the default SM address, a user's own SM.
		case "$used " in *" $p "*) continue ;; esac
		[ "$p" -eq 18754 ] && continue
		if [ -z "$(ss -H $flag "sport = :$p" 2>/dev/null)" ]; then
			SIB_USED_PORTS+="$p "
			[ -n "$SIB_TMP" ] && echo "$p" >>"$SIB_TMP/ports.used"
			echo "$p"
			return 0
		fi
	done
	echo "sib_free_port: no free $proto port" >&2
	return 1
}

# sib_start ID SECS CMD...: CMD in the background, stdout and stderr into
# $(sib_out ID), killed after SECS seconds (and KILLed 5 s later).
sib_start()
{
	local id=$1 secs=$2

	shift 2
	timeout -k 5 "$secs" "$@" >"$(sib_out "$id")" 2>&1 </dev/null &
	SIB_PID[$id]=$!
	unset "SIB_RC[$id]"
}

# Like sib_start but inside network namespace NS.
sib_start_ns()
{
	local ns=$1 id=$2 secs=$3

	shift 3
	ip netns exec "$ns" timeout -k 5 "$secs" "$@" >"$(sib_out "$id")" 2>&1 </dev/null &
	SIB_PID[$id]=$!
	SIB_NS_OF[$id]=$ns
	unset "SIB_RC[$id]"
}

# Waits for background ID (bounded by its own timeout); returns and records
# its exit status.
sib_wait()
{
	local id=$1 rc

	if [ -z "${SIB_PID[$id]:-}" ]; then
		return "${SIB_RC[$id]:-127}"
	fi
	wait "${SIB_PID[$id]}"
	rc=$?
	unset "SIB_PID[$id]"
	SIB_RC[$id]=$rc
	return $rc
}

# sib_run ID SECS CMD...: CMD in the foreground with a time limit.
sib_run()
{
	local id=$1 secs=$2 rc

	shift 2
	timeout -k 5 "$secs" "$@" >"$(sib_out "$id")" 2>&1 </dev/null
	rc=$?
	SIB_RC[$id]=$rc
	return $rc
}

# Whether an rdma_cm id listens on PORT (at ADDR, when given) in namespace
# NS: its reservation, an abstract AF_UNIX socket named
# softib-rdma_cm/SPACE/PORT/FAMILY/ADDR/..., listens (provider/cma_port.c).
sib_cm_listens()
{
	local port=$1 addr=${2:-[^/]*} ns=${3:-}

	sib_in_ns "$ns" ss -Hxln 2>/dev/null | grep -q "@softib-rdma_cm/[a-z]*/$port/[a-z0-9]*/$addr/"
}

# Waits until background ID listens on TCP PORT, or has an rdma_cm id
# listening on PORT (in namespace SIB_NS_OF[ID]).  Fails early when ID
# exits first; the 120 s only turn a hang into a failure (a loaded machine
# starts programs slowly).
sib_wait_listen()
{
	local id=$1 port=$2 ns=${SIB_NS_OF[$1]:-} i

	for ((i = 0; i < 1200; i++)); do
		if [ -n "$(sib_in_ns "$ns" ss -Htln "sport = :$port" 2>/dev/null)" ] ||
			sib_cm_listens "$port" "" "$ns"; then
			return 0
		fi
		if ! kill -0 "${SIB_PID[$id]}" 2>/dev/null; then
			sib_wait "$id"
			echo "$id exited (status ${SIB_RC[$id]}) before listening on port $port"
			return 1
		fi
		sleep 0.1
	done
	echo "$id did not listen on TCP or rdma_cm port $port within 120 s"
	return 1
}

sib_status_text()
{
	case $1 in
	0) echo "exit 0" ;;
	124) echo "timed out" ;;
	137) echo "killed after timing out" ;;
	*) echo "exit $1" ;;
	esac
}

# sib_pair ID SECS PORT HOST PROG ARGS...
# Server: [SIB_SERVER_WRAP] softib run -- PROG ARGS -p PORT
# Client: [SIB_CLIENT_WRAP] softib run -- PROG ARGS -p PORT HOST
# Output in $(sib_out ID.server) and $(sib_out ID.client).  Returns 0 when
# both exit 0; otherwise prints why with both sides' output and returns 1.
sib_pair()
{
	local id=$1 secs=$2 port=$3 host=$4 s c rs rc

	shift 4
	s=$id.server c=$id.client
	timeout -k 5 "$secs" "${SIB_SERVER_WRAP[@]}" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- "$@" -p "$port" \
		>"$(sib_out "$s")" 2>&1 </dev/null &
	SIB_PID[$s]=$!
	SIB_NS_OF[$s]=$SIB_SERVER_NETNS
	unset "SIB_RC[$s]"
	if ! sib_wait_listen "$s" "$port"; then
		[ -n "${SIB_PID[$s]:-}" ] && kill "${SIB_PID[$s]}" 2>/dev/null
		sib_wait "$s"
		echo "FAIL: $id: the server never listened"
		sib_show "$s"
		return 1
	fi
	timeout -k 5 "$secs" "${SIB_CLIENT_WRAP[@]}" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- "$@" -p "$port" "$host" \
		>"$(sib_out "$c")" 2>&1 </dev/null
	rc=$?
	SIB_RC[$c]=$rc
	# A client that failed leaves the server waiting for it: stop it.
	[ $rc -eq 0 ] || kill "${SIB_PID[$s]:-}" 2>/dev/null
	sib_wait "$s"
	rs=$?
	if [ $rs -ne 0 ] || [ $rc -ne 0 ]; then
		echo "FAIL: $id: server $(sib_status_text $rs), client $(sib_status_text $rc)" \
			"(limit ${secs}s each)"
		echo "  server: $* -p $port"
		echo "  client: $* -p $port $host"
		sib_show "$s" "$c"
		return 1
	fi
	return 0
}

# sib_fabric_switch TOPO [VAR=VALUE ...]: softib-switch (background ID
# "switch", with those variables) hosting tests/fabric/TOPO with switched
# data on a free UDP port of 127.0.0.1, which SOFTIB_FABRIC names from now
# on (SOFTIB_SM is unset: the SM is the fabric's); returns once the switch
# listens.  Skips when softib-switch or softib-sm is not built; sets SWITCH
# and SM to their paths.
sib_fabric_switch()
{
	local topo=$1 fport i

	shift
	SWITCH=$B/softib-switch
	SM=$B/softib-sm
	[ -x "$SWITCH" ] && [ -x "$SM" ] || sib_skip "$SWITCH or $SM is not built (run make)"
	sib_need ss
	fport=$(sib_free_port udp) || exit 1
	export SOFTIB_FABRIC=127.0.0.1:$fport
	unset SOFTIB_SM
	sib_start switch 300 env "$@" "$SWITCH" --topology "$SIB_TOP/tests/fabric/$topo" \
		--listen "$SOFTIB_FABRIC" --data switched
	for ((i = 0; i < 100; i++)); do
		[ -n "$(ss -Hulnp "sport = :$fport" 2>/dev/null)" ] && return 0
		kill -0 "${SIB_PID[switch]}" 2>/dev/null || break
		sleep 0.1
	done
	sib_show switch
	sib_fail "softib-switch did not listen on $SOFTIB_FABRIC"
}

# Kills the softib-sm serving UDP PORT in namespace NS (started by a port of
# this test, or by the test itself), found by its socket so that no other SM
# is touched.
sib_kill_sm()
{
	local port=$1 ns=${2:-} pid

	[ -n "$port" ] || return 0
	for pid in $(sib_in_ns "$ns" ss -Hulnp "sport = :$port" 2>/dev/null |
		grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
		[ "$(cat /proc/"$pid"/comm 2>/dev/null)" = softib-sm ] && kill "$pid" 2>/dev/null
	done
	return 0
}

sib_cleanup()
{
	local id pid ns

	trap - EXIT INT TERM
	for id in "${!SIB_PID[@]}"; do
		kill "${SIB_PID[$id]}" 2>/dev/null
	done
	for id in "${!SIB_PID[@]}"; do
		wait "${SIB_PID[$id]}" 2>/dev/null
	done
	sib_kill_sm "$SIB_SM_PORT"
	for ns in "${SIB_NETNS[@]}"; do
		# Whatever still runs in our namespace was started by this test.
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill "$pid" 2>/dev/null
		done
		sleep 0.2
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "$SIB_TMP" ] && [ -z "${SIB_KEEP:-}" ] && rm -rf "$SIB_TMP"
}

# sib_init NAME: checks the build, makes the temp dir, installs the cleanup
# trap and points SOFTIB_SM at a UDP port of this test's own.
sib_init()
{
	SIB_NAME=$1
	if [ ! -x "$SOFTIB" ] || [ ! -e "$(dirname "$SOFTIB")/libsoftib.so" ]; then
		sib_skip "$SOFTIB or libsoftib.so beside it is not built (run make)"
	fi
	SIB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/softib-$SIB_NAME.XXXXXX") || exit 1
	trap sib_cleanup EXIT
	trap 'exit 130' INT TERM
	SIB_SM_PORT=$(sib_free_port udp) || exit 1
	export SOFTIB_SM=127.0.0.1:$SIB_SM_PORT
	# softib's per-user directory (subnet key files, counters sockets):
	# the test's own, gone with it.
	export SOFTIB_RUN_DIR=$SIB_TMP/run
	mkdir -m 700 -p "$SOFTIB_RUN_DIR"
}

# Skips when this build has no subnet manager (fabric/ not merged yet): no
# port becomes ACTIVE with a LID, so no data can move.
sib_need_sm()
{
	[ -x "$(dirname "$SOFTIB")/softib-sm" ] ||
		sib_skip "$(dirname "$SOFTIB")/softib-sm is not built: no subnet manager, no data path"
}

# Greps FILE for an extended regular expression; on a miss says what was
# missing and returns 1.
sib_expect()
{
	local file=$1 re=$2 what=$3

	if grep -Eq -- "$re" "$file"; then
		return 0
	fi
	echo "FAIL: $what: no line matching /$re/ in $(basename "$file" .out)"
	# What it printed instead, so that a CI log says why.
	tail -n 6 -- "$file" 2>/dev/null | sed 's/^/note: /'
	return 1
}

# Two "hosts" (test_two_hosts.sh, the attacks from another host): network
# namespaces NS_A and NS_B joined by a veth pair created inside them, with
# ADDR_A/24 and ADDR_B/24 (private addresses that exist only there: no
# packet leaves them), deleted on exit with whatever runs in them.  Needs
# root; skips when namespaces cannot be made.
sib_two_hosts()
{
	local a=$1 b=$2 addr_a=$3 addr_b=$4 err

	[ "$(id -u)" = 0 ] || sib_skip "needs root to create network namespaces"
	sib_need ip
	if ! err=$(ip netns add "$a" 2>&1); then
		sib_skip "cannot create a network namespace here: $err"
	fi
	SIB_NETNS+=("$a")
	ip netns add "$b" || sib_fail "ip netns add $b failed"
	SIB_NETNS+=("$b")
	ip link add "v$a" netns "$a" type veth peer name "v$b" netns "$b" ||
		sib_fail "cannot create a veth pair"
	ip -n "$a" addr add "$addr_a/24" dev "v$a" &&
		ip -n "$b" addr add "$addr_b/24" dev "v$b" &&
		ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
		ip -n "$a" link set "v$a" up && ip -n "$b" link set "v$b" up ||
		sib_fail "cannot configure the veth pair"
}

# softib-sm --listen ADDR:PORT inside namespace NS, as background ID;
# returns once it is bound (fails the test when it exits or takes 10 s).
sib_ns_sm()
{
	local ns=$1 id=$2 at=$3 i

	sib_start_ns "$ns" "$id" 240 "$(dirname "$SOFTIB")/softib-sm" --listen "$at"
	for ((i = 0; i < 100; i++)); do
		[ -n "$(ip netns exec "$ns" ss -Huln "sport = :${at##*:}")" ] && return 0
		kill -0 "${SIB_PID[$id]}" 2>/dev/null || sib_fail "softib-sm --listen $at exited"
		sleep 0.1
	done
	sib_fail "softib-sm did not bind $at within 10 s"
}

sib_pair_done()
{
	local c=$1 srv=$2 what=$3

	sib_wait "$srv"
	[ "${SIB_RC[$c]}" -eq 0 ] && [ "${SIB_RC[$srv]}" -eq 0 ] ||
		sib_fail "$what: $c exited $(sib_status_text "${SIB_RC[$c]}"), $srv $(sib_status_text "${SIB_RC[$srv]}")"
}

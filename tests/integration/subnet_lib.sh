# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What the subnet attack tests share (test_attack_*.sh, test_sm_restart.sh,
# test_two_sms.sh), on top of lib.sh.  Source it after lib.sh and sib_init.
#
#   st_setup            needs softib-sm and the helpers (skips without);
#                       sib_init already put SOFTIB_RUN_DIR in the temp dir
#   st_sm ID ADDR ARGS  softib-sm --listen ADDR ARGS in the background, output
#                       in $(sib_out ID); waits for its "listening" line
#   st_hold ID          a long-lived port (verbs_hold) with the environment as
#                       it is; waits until it printed its LID; its pid in
#                       ST_PID[ID]
#   st_release ID       lets it exit and waits for it
#   st_info PID KEY     a field of `softib info --pid PID` ("LID", "endpoint",
#                       "subnet manager", "state", ...)
#   st_counter PID NAME a counter of `softib info --pid PID`: a drop by the
#                       name its "dropped" line gives it ("smp_refused",
#                       "wrong_endpoint", ...; 0 when not shown), or
#                       "M_KeyViolations"; nothing when PID cannot be read
#   st_wait_for FILE RE SECS   waits until FILE has a line matching RE
#   st_rping_pair       an rping pair pinging without end (ids server and
#                       client) under a fresh SM; waits for 10 pings and
#                       sets ST_SID (the ServiceID), ST_SEP (the server's
#                       endpoint), ST_SPID/ST_CPID, ST_SLID/ST_CLID and
#                       ST_CGUID (the client's node GUID, 0x...); the
#                       client runs with the variables in ST_CLIENT_ENV
#   st_pings            how many pings the client printed
#   st_mc_member GROUP  waits until the mckey receiving GROUP (-m GROUP)
#                       has joined (softib info --pid: 1 mcast group); sets
#                       ST_MC_PID and ST_MC_LID (empty when it never did)

declare -A ST_PID=() ST_FD=()
ST_CLIENT_ENV=()
ATTACKER=$B/helpers/attacker

st_setup()
{
	sib_need_sm
	for f in "$ATTACKER" "$B/helpers/verbs_hold"; do
		[ -x "$f" ] || sib_skip "$f is not built (run make)"
	done
}

st_wait_for()
{
	local file=$1 re=$2 secs=$3 i

	for ((i = 0; i < secs * 10; i++)); do
		grep -Eq -- "$re" "$file" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

st_sm()
{
	local id=$1 addr=$2

	shift 2
	sib_start "$id" 300 "$B/softib-sm" --listen "$addr" "$@"
	st_wait_for "$(sib_out "$id")" 'listening on' 10 || sib_fail "$id did not start"
}

st_hold()
{
	local id=$1 fifo=$SIB_TMP/$1.in fd

	mkfifo "$fifo"
	timeout -k 5 120 "$SOFTIB" run "$B/helpers/verbs_hold" 120 <"$fifo" >"$(sib_out "$id")" 2>&1 &
	SIB_PID[$id]=$!
	exec {fd}>"$fifo"
	ST_FD[$id]=$fd
	st_wait_for "$(sib_out "$id")" '^lid ' 15 || sib_fail "$id never printed its LID"
	ST_PID[$id]=$(pgrep -P "${SIB_PID[$id]}" | head -1)
	[ -n "${ST_PID[$id]}" ] || sib_fail "$id: no verbs_hold process under timeout"
}

st_release()
{
	local id=$1

	exec {ST_FD[$id]}>&-
	sib_wait "$id"
}

st_info()
{
	"$SOFTIB" info --pid "$1" 2>/dev/null |
		awk -v k="$2" '{ line = $0; sub(/^ +/, "", line) }
			index(line, k " ") == 1 { v = substr(line, length(k) + 1); sub(/^ +/, "", v); print v; exit }'
}

st_counter()
{
	local pid=$1 name=$2 v

	if [ "$name" = M_KeyViolations ]; then
		# "protection level 1, 20 violations"
		v=$(st_info "$pid" M_Key)
		[ -n "$v" ] || return 1
		sed -n 's/.*, \([0-9][0-9]*\) violations$/\1/p' <<<"$v"
		return 0
	fi
	v=$(st_info "$pid" dropped)
	[ -n "$v" ] || return 1
	v=$(grep -o "\(^\| \)$name=[0-9]*" <<<"$v" | cut -d= -f2)
	echo "${v:-0}"
}

st_pings()
{
	local n

	n=$(grep -c '^ping data: ' "$(sib_out client)" 2>/dev/null)
	echo "${n:-0}"
}

st_rping_pair()
{
	local port i

	st_sm sm "$SOFTIB_SM"
	port=$(sib_free_port tcp) || exit 1
	ST_SID=$(printf '0x%016x' $((0x0000000001060000 | port))) # RDMA IP CM, TCP (IBA A11)
	sib_start server 120 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$port" -C 1000000 -v
	sib_wait_listen server "$port" || sib_fail "rping did not listen"
	sib_start client 120 env "${ST_CLIENT_ENV[@]}" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 1000000 -v
	for ((i = 0; i < 300; i++)); do
		[ "$(st_pings)" -ge 10 ] && break
		sleep 0.1
	done
	[ "$(st_pings)" -ge 10 ] || sib_fail "the rping pair did not start pinging"
	ST_SPID=$(pgrep -P "${SIB_PID[server]}" | head -1)
	ST_CPID=$(pgrep -P "${SIB_PID[client]}" | head -1)
	ST_SEP=$(st_info "$ST_SPID" endpoint)
	ST_SLID=$(st_info "$ST_SPID" LID | awk '{ print $1 }')
	ST_CLID=$(st_info "$ST_CPID" LID | awk '{ print $1 }')
	ST_CGUID=$(st_info "$ST_CPID" "node GUID")
	ST_CGUID=0x${ST_CGUID//:/}
	[ -n "$ST_SEP" ] && [ -n "$ST_SLID" ] && [ -n "$ST_CLID" ] && [ "$ST_CGUID" != 0x ] ||
		sib_fail "the pair's LIDs, GUID or endpoint cannot be read"
	sib_log "server LID $ST_SLID at $ST_SEP; client LID $ST_CLID, CA GUID $ST_CGUID"
}

st_mc_member()
{
	local i

	ST_MC_PID= ST_MC_LID=
	for ((i = 0; i < 300; i++)); do
		ST_MC_PID=$(pgrep -n -f "mckey -m $1 ")
		[ -n "$ST_MC_PID" ] && "$SOFTIB" info --pid "$ST_MC_PID" 2>/dev/null |
			grep -Eq '^ +mcast groups +1$' && break
		sleep 0.1
	done
	[ -n "$ST_MC_PID" ] && ST_MC_LID=$(st_info "$ST_MC_PID" LID | awk '{ print $1 }')
	return 0
}

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# rdma_cm port spaces as the kernel keeps them (drivers/infiniband/core/
# cma.c, cma_ps_alloc): apart from the host's TCP ports and from each
# other, per network namespace, across processes (provider/cma_port.c).
# Ids are held by tests/helpers/cm_port, each its own process:
#   - a TCP listener of the host and an rdma_cm listener on one port both
#     listen, and rping connects through that port (address and route
#     resolution find the rdma_cm listener, not the TCP one);
#   - TCP-, UDP- and IB-space ids on one address and port all bind;
#   - a second TCP-space id on that address and port: EADDRINUSE; on the
#     wildcard: EADDRNOTAVAIL (a wildcard takes the port on every address);
#   - two REUSEADDR ids share an address until one listens;
#   - the holder killed by SIGKILL: the port is free at once.
. "$(dirname "$0")/lib.sh"

sib_init rdma_cm_ports
sib_need rping python3 ss timeout
sib_need_sm
helper=$B/helpers/cm_port
[ -x "$helper" ] || sib_fail "$helper not built"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# hold ID ARGS...: cm_port ARGS in the background; waits for "ready" (or
# its exit).  Returns 0 when it holds the id.
hold()
{
	local id=$1 i

	shift
	sib_start "$id" 120 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- "$helper" "$@"
	for ((i = 0; i < 600; i++)); do
		grep -q '^ready$' "$(sib_out "$id")" 2>/dev/null && return 0
		kill -0 "${SIB_PID[$id]}" 2>/dev/null || { sib_wait "$id"; return 1; }
		sleep 0.1
	done
	return 1
}

# refused ID WANT ARGS...: cm_port ARGS must fail saying WANT.
refused()
{
	local id=$1 want=$2

	shift 2
	sib_run "$id" 60 "$SOFTIB" run -- "$helper" "$@"
	[ "${SIB_RC[$id]}" -eq 1 ] && grep -q -- "$want" "$(sib_out "$id")" ||
		{ bad "$id: cm_port $* exited ${SIB_RC[$id]}, want \"$want\""; sib_show "$id"; }
}

# ---- a host TCP listener and an rdma_cm listener on one port
port=$(sib_free_port tcp) || exit 1
sib_start tcp.listener 120 python3 -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', $port)); s.listen(1)
print('listening', flush=True); time.sleep(120)"
for ((i = 0; i < 100; i++)); do
	[ -n "$(ss -Htln "sport = :$port")" ] && break
	sleep 0.1
done
[ -n "$(ss -Htln "sport = :$port")" ] || sib_fail "python3 did not listen on TCP port $port"
sib_start both.server 60 "$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$port" -C 3 -v
for ((i = 0; i < 600; i++)); do
	sib_cm_listens "$port" 127.0.0.1 && break
	kill -0 "${SIB_PID[both.server]}" 2>/dev/null || break
	sleep 0.1
done
if sib_cm_listens "$port" 127.0.0.1; then
	sib_run both.client 60 "$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 3 -v
	sib_wait both.server
	if [ "${SIB_RC[both.client]}" -eq 0 ] && [ "${SIB_RC[both.server]}" -eq 0 ] &&
		sib_expect "$(sib_out both.client)" '^ping data: rdma-ping-2: ' "the 3rd ping"; then
		echo "ok: a TCP listener of the host and rping's rdma_cm listener on port $port"
	else
		bad "rping beside a TCP listener: server ${SIB_RC[both.server]}, client ${SIB_RC[both.client]}"
		sib_show both.server both.client
	fi
else
	sib_wait both.server
	bad "rping could not listen on port $port beside a TCP listener"
	sib_show both.server
fi
kill "${SIB_PID[tcp.listener]}" 2>/dev/null
{ sib_wait tcp.listener; } 2>/dev/null

# ---- one port, three port spaces; conflicts inside one
port=$(sib_free_port tcp) || exit 1
hold tcp.a tcp 127.0.0.1 "$port" listen || { sib_show tcp.a; sib_fail "a TCP-space id could not listen on $port"; }
if hold udp.a udp 127.0.0.1 "$port" listen && hold ib.a ib 127.0.0.1 "$port"; then
	echo "ok: TCP-, UDP- and IB-space ids on 127.0.0.1:$port"
else
	bad "a UDP- or IB-space id could not bind 127.0.0.1:$port beside a TCP-space one"
	sib_show udp.a ib.a
fi
refused tcp.b 'rdma_bind_addr: Address already in use' tcp 127.0.0.1 "$port"
refused tcp.any 'rdma_bind_addr: Cannot assign requested address' tcp 0.0.0.0 "$port"
refused udp.any 'rdma_bind_addr: Cannot assign requested address' udp 0.0.0.0 "$port"
hold tcp.other tcp 127.0.0.2 "$port" listen || bad "127.0.0.2:$port is another address: it binds"
[ $fail -eq 0 ] && echo "ok: one id an address and port in a space, across processes; a wildcard takes every address"

# ---- the holder killed: its port is free at once
for pid in $(pgrep -P "${SIB_PID[tcp.a]}"); do
	kill -KILL "$pid"
done
{ sib_wait tcp.a; } 2>/dev/null
if hold tcp.again tcp 127.0.0.1 "$port" listen; then
	echo "ok: the port of a process killed by SIGKILL is free"
else
	bad "the port of a process killed by SIGKILL stayed taken"
	sib_show tcp.again
fi

# ---- REUSEADDR: shared until one listens (the kernel's rdma_listen)
port=$(sib_free_port tcp) || exit 1
hold reuse.a tcp 127.0.0.1 "$port" reuse || bad "a REUSEADDR id could not bind"
hold reuse.b tcp 127.0.0.1 "$port" reuse || bad "a second REUSEADDR id could not share the address"
refused reuse.c 'rdma_listen: Address already in use' tcp 127.0.0.1 "$port" reuse listen

[ $fail -eq 0 ] || sib_fail "port spaces"
echo "rdma_cm_ports: all cases passed"

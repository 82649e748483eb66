#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Two "hosts": two network namespaces joined by a veth pair, 10.77.0.1/24
# and 10.77.0.2/24 (private addresses that exist only inside the two
# namespaces; no packet leaves them).  softib-sm --listen runs in the first;
# every port on both sides points SOFTIB_SM at it and binds its own veth
# address with SOFTIB_ADDR.  ibv_rc_pingpong and ib_write_bw then run with
# the server in one namespace and the client in the other, and so do the
# rdma_cm programs rping and ib_send_bw -R: the client finds the server's
# port by its IP address through the SA (man softib-rdma-cm, Addresses).
# The veth MTU of 1500 gives an active MTU of 1024 (man softib-subnet,
# SOFTIB_NETDEV).
#
# Needs root (namespaces) and ip(8); skips otherwise.  The namespaces, and
# everything still running in them, go away on exit.
. "$(dirname "$0")/lib.sh"

sib_init two_hosts
sib_need ibv_rc_pingpong ib_write_bw ib_send_bw rping ss timeout
sib_need_sm

A=sibA$$ B_NS=sibB$$
ADDR_A=10.77.0.1 ADDR_B=10.77.0.2
sib_two_hosts "$A" "$B_NS" $ADDR_A $ADDR_B

# The subnet manager, serving both namespaces from A's address.
SM_PORT=$(sib_free_port udp) || exit 1
sib_ns_sm "$A" sm $ADDR_A:$SM_PORT

SIB_SERVER_WRAP=(ip netns exec "$A" env SOFTIB_SM=$ADDR_A:$SM_PORT SOFTIB_ADDR=$ADDR_A)
SIB_CLIENT_WRAP=(ip netns exec "$B_NS" env SOFTIB_SM=$ADDR_A:$SM_PORT SOFTIB_ADDR=$ADDR_B)
SIB_SERVER_NETNS=$A
failed=()

# The active MTU follows the interface the port binds: 1500 gives 1024.
if sib_run devinfo 120 "${SIB_CLIENT_WRAP[@]}" "$SOFTIB" run -- ibv_devinfo -d softib0 &&
	sib_expect "$(sib_out devinfo)" 'active_mtu:[[:space:]]+1024 ' "active MTU over a 1500-byte veth"; then
	echo "ok: active_mtu 1024 over the veth"
else
	sib_show devinfo
	failed+=(active_mtu)
fi

port=$(sib_free_port tcp) || exit 1
if sib_pair rc_pingpong 300 "$port" $ADDR_A ibv_rc_pingpong -d softib0 -i 1 -n 100 &&
	sib_expect "$(sib_out rc_pingpong.server)" '^[0-9]+ bytes in [0-9.]+ seconds' "server throughput" &&
	sib_expect "$(sib_out rc_pingpong.client)" '^[0-9]+ bytes in [0-9.]+ seconds' "client throughput"; then
	echo "ok: ibv_rc_pingpong across namespaces"
else
	failed+=(rc_pingpong)
fi

port=$(sib_free_port tcp) || exit 1
if sib_pair write_bw 300 "$port" $ADDR_A ib_write_bw -d softib0 -i 1 -F -n 100 &&
	sib_expect "$(sib_out write_bw.client)" '^ #bytes +#iterations +BW peak' "client table header" &&
	sib_expect "$(sib_out write_bw.client)" '^ 65536 +100 +[0-9]+\.[0-9]+' "client table row"; then
	echo "ok: ib_write_bw across namespaces"
else
	failed+=(write_bw)
fi

# rdma_cm: the server listens on its veth address; the client, in the
# other namespace, resolves that address to the server's port.
port=$(sib_free_port tcp) || exit 1
sib_start_ns "$A" rping.server 60 env SOFTIB_SM=$ADDR_A:$SM_PORT SOFTIB_ADDR=$ADDR_A \
	"$SOFTIB" run -- rping -s -a $ADDR_A -p "$port" -C 20 -v
if sib_wait_listen rping.server "$port"; then
	sib_run rping.client 60 "${SIB_CLIENT_WRAP[@]}" "$SOFTIB" run -- \
		rping -c -a $ADDR_A -p "$port" -C 20 -v
	sib_wait rping.server
	if [ "${SIB_RC[rping.client]}" -eq 0 ] && [ "${SIB_RC[rping.server]}" -eq 0 ] &&
		[ "$(grep -c '^ping data: rdma-ping-' "$(sib_out rping.client)")" -eq 20 ]; then
		echo "ok: rping across namespaces"
	else
		echo "FAIL: rping: server $(sib_status_text "${SIB_RC[rping.server]}")," \
			"client $(sib_status_text "${SIB_RC[rping.client]}")"
		sib_show rping.server rping.client
		failed+=(rping)
	fi
else
	failed+=(rping)
fi

port=$(sib_free_port tcp) || exit 1
if sib_pair send_bw_R 90 "$port" $ADDR_A ib_send_bw -R -d softib0 -F -n 100 &&
	sib_expect "$(sib_out send_bw_R.client)" '^ 65536 +100 +[0-9]+\.[0-9]+' "client table row"; then
	echo "ok: ib_send_bw -R across namespaces"
else
	failed+=(send_bw_R)
fi

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: two_hosts: ${failed[*]}"
	sib_show sm
	exit 1
fi
echo "two_hosts: all cases passed"

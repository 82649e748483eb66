#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: the connection hijack.  A port on another
# host read the victim host's key from the SA (it handed every record's
# ServiceKey to anyone), then registered an address record for the
# victim's IP address and a newer rdma_cm listener record for its port,
# both under that key: a client connecting to the real server was sent to
# the attacker's port instead.  Now the SA tells a key to its owner only,
# keeps an address to one host, and a client takes a listener on another
# host only from a port that holds the address's record (softib-rdma-cm(7),
# Addresses; softib-sm(8)): the claim is refused and logged, and the client
# reaches the real server.
#
# Two "hosts": network namespaces joined by a veth pair, as in
# test_two_hosts.sh (10.78.0.1/24 and 10.78.0.2/24, inside the namespaces
# only).  Needs root; skips otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_listener_hijack
sib_need rping ss timeout
st_setup

A=sibhA$$ B_NS=sibhB$$
ADDR_A=10.78.0.1 ADDR_B=10.78.0.2
sib_two_hosts "$A" "$B_NS" $ADDR_A $ADDR_B
SM_PORT=$(sib_free_port udp) || exit 1
SM_AT=$ADDR_A:$SM_PORT
sib_ns_sm "$A" sm "$SM_AT"

port=$(sib_free_port tcp) || exit 1
sib_start_ns "$A" server 120 env SOFTIB_SM="$SM_AT" SOFTIB_ADDR=$ADDR_A \
	"$SOFTIB" run -- rping -s -a $ADDR_A -p "$port" -C 1 -v
sib_wait_listen server "$port" || sib_fail "rping did not listen"

# The attacker, on the other host, claims the server's address and port
# and stays a port of the subnet while the client connects.
sib_start_ns "$B_NS" attack 90 env SOFTIB_ADDR=$ADDR_B \
	"$ATTACKER" sa-claim-listener "$SM_AT" $ADDR_A "$port" 60
st_wait_for "$(sib_out attack)" '^(listener record|not configured)' 30 ||
	sib_fail "the attacker did not get as far as the listener record"
cat "$(sib_out attack)"
sib_expect "$(sib_out attack)" '^key: blank$' "the SA keeps the host's key to its owners" ||
	sib_fail "the SA told another host's key"
sib_expect "$(sib_out attack)" '^address record: 0x0700$' "the address claim refused" ||
	sib_fail "the SA let another host claim the server's address"
sib_expect "$(sib_out sm)" 'claims address record 0x[0-9a-f]+, which a port of another host holds; refused' \
	"the SM's log" || sib_fail "the SM did not log the claim"

# A client on the attacker's host connects to the server's address; short
# CM timeouts, so that a REQ sent to the attacker fails in seconds.
sib_run client 60 ip netns exec "$B_NS" env SOFTIB_SM="$SM_AT" SOFTIB_ADDR=$ADDR_B \
	SOFTIB_CM_RESPONSE_TIMEOUT=16 SOFTIB_CM_MAX_RETRIES=2 \
	"$SOFTIB" run -- rping -c -a $ADDR_A -p "$port" -C 1 -v
sib_pair_done client server "rping to the server's address"
sib_expect "$(sib_out client)" '^ping data: rdma-ping-0: ' "the real server's ping" ||
	sib_fail "the client did not reach the server"
echo "attack_listener_hijack: the claim was refused; the client reached the real server"

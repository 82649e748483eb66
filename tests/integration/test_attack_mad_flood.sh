#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A MAD flood that used to starve the subnet: a port of its own sends
# softib-sm every SA and SMInfo request its socket takes.  softib-sm read
# while anything was there before doing anything else, so its resends,
# sweeps and timeouts stopped and new ports waited.  Now one pass reads
# at most one budget, and one endpoint gets at most 2000 MADs a second
# through (fabric/sm_admit.h, softib-sm(8) "Under flood"): the excess is
# dropped unparsed, counted and logged, and during the flood new ports
# come up and an rdma_cm pair resolves, connects and pings.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_mad_flood
sib_need timeout pgrep rping ss
st_setup

secs=25
st_sm sm "$SOFTIB_SM"
sib_start flood $((secs + 30)) "$ATTACKER" mad-flood "$SOFTIB_SM" "$secs"
st_wait_for "$(sib_out flood)" '^port: LID ' 15 || sib_fail "the attacker did not become a port"
sleep 2 # the flood is on
start=$(date +%s.%N)
port=$(sib_free_port tcp) || exit 1
sib_start server 60 "$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$port" -C 5 -v
sib_wait_listen server "$port" || sib_fail "rping did not listen during the flood"
sib_run client 60 "$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 5 -v
sib_pair_done client server "rping during the flood"
took=$(echo "$(date +%s.%N) - $start" | bc)
sib_expect "$(sib_out client)" '^ping data: rdma-ping-4: ' "the fifth ping" ||
	sib_fail "the pair did not get its pings through"
# Still flooding when the pair was done: the pair did not just wait it out.
grep -q '^sent: ' "$(sib_out flood)" && sib_fail "the flood ended before the pair was done (${took}s)"
sib_run smcounters 10 "$SOFTIB" info --sm "$SOFTIB_SM" || sib_fail "softib info --sm failed"
sib_wait flood || sib_fail "the attacker failed"
cat "$(sib_out flood)" "$(sib_out smcounters)"
sent=$(sed -n 's/^sent: //p' "$(sib_out flood)")
over=$(sed -n 's/.* \([0-9]*\) MADs dropped from endpoints over .*/\1/p' "$(sib_out smcounters)")
[ -n "$sent" ] && [ "$sent" -ge $((secs * 2000 * 4)) ] ||
	sib_fail "the attacker sent only ${sent:-nothing}: no flood"
[ -n "$over" ] && [ "$over" -gt 0 ] || sib_fail "softib-sm counted no MAD over the rate"
sib_expect "$(sib_out sm)" 'sends more than 2000 MADs a second: dropped one' "the SM's log" ||
	sib_fail "softib-sm did not log the flood"
echo "attack_mad_flood: $sent MADs in ${secs}s, $over dropped over the rate; a new pair connected and pinged in ${took}s"

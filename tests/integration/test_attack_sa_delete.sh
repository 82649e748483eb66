#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: any process made itself a port of the
# subnet, read a live rdma_cm listener's ServiceRecord from the SA (its key
# included) and asked the SA to delete it, claiming the listener's LID as
# its SLID: the SA believed the SLID, the record went, and clients were
# refused for as long as the listener lived.  Now an SA request counts only
# from where its SLID lives (softib-sm(8)): the forged Delete is dropped and
# logged, the record stays, and a client connects.  Asked as itself, the
# attacker is refused as before (the record is not its own).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_sa_delete
sib_need timeout pgrep rping ss
st_setup

st_sm sm "$SOFTIB_SM"
port=$(sib_free_port tcp) || exit 1
sid=$(printf '0x%016x' $((0x0000000001060000 | port))) # RDMA IP CM, TCP (IBA A11)
sib_start server 60 "$SOFTIB" run -- rping -s -a 127.0.0.1 -p "$port" -C 3 -v
sib_wait_listen server "$port" || sib_fail "rping did not listen"
pid=$(pgrep -P "${SIB_PID[server]}" | head -1)
lid=$(st_info "$pid" LID | awk '{ print $1 }')
[ -n "$lid" ] || sib_fail "the listener's LID cannot be read"
sib_log "listener: rping pid $pid, LID $lid, ServiceID $sid"

# The record is registered right after listen(2); ask until the SA has it.
for ((i = 0; i < 20; i++)); do
	sib_run attack 30 "$ATTACKER" sa-delete "$SOFTIB_SM" "$lid" "$sid" ||
		sib_fail "the attacker failed"
	grep -q '^record: found$' "$(sib_out attack)" && break
	sleep 0.2
done
cat "$(sib_out attack)"
sib_expect "$(sib_out attack)" '^record: found$' "the attacker reads the record" ||
	sib_fail "the attacker never found the listener's record"
sib_expect "$(sib_out attack)" '^as itself: 0x0700$' "REQ_DENIED for another port's record" ||
	sib_fail "the SA did not refuse the attacker's own Delete"
sib_expect "$(sib_out attack)" '^as the victim: no answer$' "the forged Delete dropped" ||
	sib_fail "the SA answered a Delete with a forged SLID"
sib_expect "$(sib_out sm)" "an SA request with SLID $(printf '0x%04x' "$lid") came from .*, not from where that LID lives" \
	"the SM's log" || sib_fail "the SM did not log the forged request"

# The SM's counters say the same (softib info --sm).
sib_run smcounters 10 "$SOFTIB" info --sm "$SOFTIB_SM" || sib_fail "softib info --sm failed"
cat "$(sib_out smcounters)"
sib_expect "$(sib_out smcounters)" 'dropped [1-9][0-9]* not from where their SLID lives' \
	"the SM counted the forged request" || sib_fail "softib info --sm shows no drop"

sib_run client 60 "$SOFTIB" run -- rping -c -a 127.0.0.1 -p "$port" -C 3 -v
sib_pair_done client server "rping after the attack"
sib_expect "$(sib_out client)" '^ping data: rdma-ping-2: ' "the third ping" ||
	sib_fail "the client did not get its pings through"
echo "attack_sa_delete: the forged Delete was dropped and logged; the listener kept its record"

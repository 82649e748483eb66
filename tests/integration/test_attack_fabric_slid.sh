#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The forged multicast leave of test_attack_mcast_leave, on a switched
# fabric.  There every packet reaches softib-sm's SA through its cable to
# the switch, so the SA cannot tell ports apart by UDP endpoint; what stands
# in the way is the switch's edge check (softib-switch(8)): a packet from a
# CA's port whose SLID does not live behind that port is dropped and
# counted.  Any process can take a free cable, so the attacker plugs into
# the switch as CA H3, lets the SM configure it, and asks the SA to end the
# membership of an mckey receiver on H2: as itself (refused: not its own
# membership) and with H2's LID as its SLID (dropped by the switch: slid=1).
# The receiver stays in the group's tree and gets every message a sender on
# H4 sends.  With the edge check taken out of fabric/switch.c, the SA takes
# the leave and the receiver hears nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init attack_fabric_slid
sib_need mckey timeout pgrep
st_setup
sib_fabric_switch one-switch-8.topo
sib_start sm 300 env SOFTIB_NODE=H1 "$SM" --sweep 0.5

GROUP=239.1.2.10
MGID=ff12:4001:ffff::f01:20a # as the kernel's rdma_cm maps it (test_mcast.sh)
sib_start recv 90 env SOFTIB_NODE=H2 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	mckey -m $GROUP -b 127.0.0.1 -C 5
st_mc_member $GROUP
lid=$ST_MC_LID
[ -n "$lid" ] || { sib_show recv sm; sib_fail "the receiver never attached to the group"; }
sib_log "receiver: mckey pid $ST_MC_PID on H2, LID $lid, group $MGID"

sib_run attack 60 env ATTACKER_NODE=H3 "$ATTACKER" sa-leave "$SOFTIB_FABRIC" "$lid" "$MGID" ||
	{ sib_show attack sm; sib_fail "the attacker failed"; }
cat "$(sib_out attack)"
sib_expect "$(sib_out attack)" '^cable: H3, switch port 3$' "the attacker on H3's cable" ||
	sib_fail "the attacker did not get a cable"
sib_expect "$(sib_out attack)" '^as itself: 0x0' "the attacker's own leave for another port refused" ||
	{ sib_show sm; sib_fail "the SA did not answer the attacker as itself"; }
grep -q '^as itself: 0x0000$' "$(sib_out attack)" && sib_fail "the SA took a leave for another port's membership"
# The SA answers a request's SLID, so the forged leave's answer, had there
# been one, would have gone to H2: what tells is the receiver, and the switch.
sleep 1.5 # three sweeps: a leave the SA took would be out of the MFT by now
sib_run send 60 env SOFTIB_NODE=H4 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- \
	mckey -m $GROUP -b 127.0.0.1 -s -C 5 || sib_fail "the sender failed"
sib_wait recv || { sib_show recv; sib_fail "the receiver did not get its 5 messages"; }
sib_expect "$(sib_out recv)" '^data transfers complete' "the receiver got every message" ||
	sib_fail "the receiver's transfers did not complete"

# The switch counted the forged packet where it dropped it.
kill -TERM "${SIB_PID[sm]}" "${SIB_PID[switch]}"
sib_wait sm
sib_wait switch
cat "$(sib_out switch)"
sib_expect "$(sib_out switch)" 'slid=[1-9]' "the switch counted the forged SLID" ||
	sib_fail "the switch did not count a packet with a forged SLID"
echo "attack_fabric_slid: the switch dropped the forged leave; the receiver stayed a member"

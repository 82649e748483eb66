#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Two SMs on one host.
#
# 1. What used to happen: a process of SM C's subnet ended, a process of SM
#    D's subnet got its UDP port, and C, still sweeping that endpoint,
#    reconfigured the new port with its own LID; D set it back; the LID
#    flipped every sweep, forever.  Now C sees another GUID at the endpoint
#    and drops its old port, and could not have changed the new one anyway
#    (D keyed it): the new port keeps D's LID through many of C's sweeps.
# 2. Two SMs of one subnet (SOFTIB_SM lists both; one key file): the second
#    finds the first through SMInfo and stands by -- it configures nothing
#    while the master runs -- and takes over when the master is killed; the
#    port follows it and keeps its LID.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/subnet_lib.sh"

sib_init two_sms
sib_need timeout pgrep ss
st_setup

lid_of() { st_info "$1" LID | awk '{ print $1 }'; }

# ---- 1. a reused endpoint between two subnets
C=127.0.0.1:$(sib_free_port udp)
D=127.0.0.1:$(sib_free_port udp)
X=$(sib_free_port udp)
st_sm smc "$C" --sweep 0.5
st_sm smd "$D" --sweep 0.5
# D's first LIDs go to other ports, so that D gives the new port another
# LID than C would (C keeps the old port's LID aside and would give the
# next one).
SOFTIB_SM=$D st_hold filler1
SOFTIB_SM=$D st_hold filler2
SOFTIB_SM=$C SOFTIB_ADDR=127.0.0.1:$X st_hold old
old_lid=$(lid_of "${ST_PID[old]}")
kill -KILL "${ST_PID[old]}"
{ sib_wait old; } 2>/dev/null
SOFTIB_SM=$D SOFTIB_ADDR=127.0.0.1:$X st_hold new
new_lid=$(lid_of "${ST_PID[new]}")
sib_log "C's port had LID $old_lid at 127.0.0.1:$X; D's port there now has LID $new_lid"
[ "$old_lid" != "$new_lid" ] || sib_fail "the test needs the two LIDs to differ ($old_lid)"
for ((i = 0; i < 16; i++)); do # 4 s: 8 of C's sweeps
	sleep 0.25
	l=$(lid_of "${ST_PID[new]}")
	[ "$l" = "$new_lid" ] || sib_fail "D's port changed LID: $new_lid -> $l (after $i looks)"
done
[ "$(st_info "${ST_PID[new]}" "subnet manager")" = "$D" ] || sib_fail "D's port follows another SM"
st_wait_for "$(sib_out smc)" "left: LID $old_lid at 127.0.0.1:$X \(its endpoint now answers with another GUID\)" 5 ||
	sib_fail "C did not notice that its port left"
guid=$(st_info "${ST_PID[new]}" "port GUID")
if grep -q "port 0x${guid//:/} joined" "$(sib_out smc)"; then
	sib_fail "C configured D's port"
fi
[ "$(grep -c " joined: LID $new_lid at 127.0.0.1:$X" "$(sib_out smd)")" -eq 1 ] ||
	sib_fail "D configured its port more than once"
st_release new
st_release filler1
st_release filler2

# ---- 2. a master and its standby
A=127.0.0.1:$(sib_free_port udp)
S=127.0.0.1:$(sib_free_port udp)
export SOFTIB_SM=$A,$S
st_sm master "$A" --sweep 0.5 --priority 1 # the one to be master (IBA 14.4.1.1)
st_sm standby "$S" --sweep 0.5
st_wait_for "$(sib_out standby)" '^softib-sm: STANDBY ' 10 ||
	sib_fail "the second SM did not stand by"
st_hold port
pid=${ST_PID[port]}
lid=$(lid_of "$pid")
sleep 2 # four sweeps of the master
[ "$(st_info "$pid" "subnet manager")" = "$A" ] || sib_fail "the port does not follow the master"
if grep -q ' joined: ' "$(sib_out standby)"; then
	sib_fail "the standby configured a port while the master ran"
fi
sib_log "the port has LID $lid from the master; kill -9 the master"
kill -KILL "$(pgrep -P "${SIB_PID[master]}" | head -1)"
{ sib_wait master; } 2>/dev/null
st_wait_for "$(sib_out standby)" 'MASTER \(the master stopped answering\)' 15 ||
	sib_fail "the standby did not take over"
# The port notices the silence (8 s), traps to both, follows the new master.
st_wait_for "$(sib_out standby)" " joined: LID $lid " 25 || sib_fail "the port did not rejoin with LID $lid"
for ((i = 0; i < 50; i++)); do
	[ "$(st_info "$pid" "subnet manager")" = "$S" ] && break
	sleep 0.2
done
[ "$(st_info "$pid" "subnet manager")" = "$S" ] || sib_fail "the port still follows the dead master"
[ "$(lid_of "$pid")" = "$lid" ] || sib_fail "the port's LID changed in the takeover"
cat "$(sib_out standby)"
st_release port
echo "two_sms: no fight over a reused endpoint; the standby took over with the LIDs"

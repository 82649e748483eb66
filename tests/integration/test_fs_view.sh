#!/usr/bin/env bash
# softib0 where programs look for hardware (provider/fs_view.c):
#  - the view through libc in one process (tests/helpers/fs_view_calls.c):
#    every file against verbs, listings, errors, other paths, the cdev hook;
#  - ibstat and ibstatus show softib0, its state, LID, SM LID, rate and
#    GUIDs, as ibv_devinfo -v does (separate processes, so each is its own
#    node: compared are the values the subnet and the device share -- state,
#    SM LID, rate, link layer, formats -- and within one process the GUIDs);
#  - ucx_info -d lists softib0 with rc_verbs and ud_verbs;
#  - libibverbs still lists exactly one softib0, with no warning;
#  - a shell can cd into the tree and its children (cat, ls, python) read it;
#  - without softib, none of it exists.
set -u
. "$(dirname "$0")/lib.sh"
sib_init fs_view
sib_need ibv_devinfo ibv_devices
helper=$B/helpers/fs_view_calls
[ -x "$helper" ] || sib_fail "$helper not built"
unset SOFTIB_ADDR SOFTIB_NETDEV
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# --- the calls, in one process
sib_run calls 120 "$SOFTIB" run "$helper"; rc=$?
cat "$(sib_out calls)"
[ $rc -eq 0 ] || bad "fs_view_calls exited $rc"
grep -q '^PASS: 0 failures$' "$(sib_out calls)" || bad "fs_view_calls did not pass"
for g in files_agree_with_verbs file_descriptors_behave_like_sysfs bad_calls_get_sysfs_errors \
	directories_list_what_they_hold working_directory_can_be_the_views \
	other_paths_are_the_kernels cdev_hook_works_through_libc descriptor_table_stays_true; do
	grep -qx "ok $g" "$(sib_out calls)" || bad "fs_view_calls: no 'ok $g'"
done

# --- ibv_devinfo, the reference
sib_run devinfo 60 "$SOFTIB" run ibv_devinfo -v || bad "ibv_devinfo -v exited ${SIB_RC[devinfo]}"
dv=$(cat "$(sib_out devinfo)")
dv_smlid=$(awk '$1 == "sm_lid:" { print $2; exit }' <<<"$dv")
grep -q 'state:[[:space:]]*PORT_ACTIVE (4)' <<<"$dv" || bad "ibv_devinfo: port not ACTIVE"
grep -q 'phys_state:[[:space:]]*LINK_UP (5)' <<<"$dv" || bad "ibv_devinfo: phys_state"
grep -q 'active_width:[[:space:]]*4X (2)' <<<"$dv" || bad "ibv_devinfo: active_width is not 4X"
grep -q 'active_speed:[[:space:]]*10.0 Gbps (4)' <<<"$dv" || bad "ibv_devinfo: active_speed is not QDR"
grep -q 'board_id:[[:space:]]*softib' <<<"$dv" || bad "ibv_devinfo reads no board_id from sysfs"
[[ "$dv_smlid" =~ ^[0-9]+$ ]] && [ "$dv_smlid" -ge 1 ] || bad "ibv_devinfo: sm_lid '$dv_smlid'"
echo "ibv_devinfo: ACTIVE, 4X QDR, sm_lid $dv_smlid"

# --- ibstat (libibumad's sysfs reader)
if command -v ibstat >/dev/null; then
	sib_run ibstat 60 "$SOFTIB" run ibstat || bad "ibstat exited ${SIB_RC[ibstat]}"
	st=$(cat "$(sib_out ibstat)")
	echo "$st"
	grep -qx "CA 'softib0'" <<<"$st" || bad "ibstat: no CA 'softib0'"
	val() { sed -n "s/^[[:space:]]*$1: //p" <<<"$st" | head -n 1; }
	[ "$(val 'CA type')" = softib ] || bad "ibstat: CA type '$(val 'CA type')'"
	[ "$(val 'Number of ports')" = 1 ] || bad "ibstat: number of ports"
	[ "$(val 'Firmware version')" = "$(awk '$1 == "fw_ver:" { print $2 }' <<<"$dv")" ] ||
		bad "ibstat: firmware version differs from ibv_devinfo"
	[ "$(val State)" = Active ] || bad "ibstat: State '$(val State)'"
	[ "$(val 'Physical state')" = LinkUp ] || bad "ibstat: Physical state"
	[ "$(val Rate)" = 40 ] || bad "ibstat: Rate '$(val Rate)' (4X QDR is 40)"
	[ "$(val 'SM lid')" = "$dv_smlid" ] || bad "ibstat: SM lid '$(val 'SM lid')', ibv_devinfo says $dv_smlid"
	lid=$(val 'Base lid')
	[[ "$lid" =~ ^[0-9]+$ ]] && [ "$lid" -ge 1 ] && [ "$lid" -le 49151 ] || bad "ibstat: Base lid '$lid'"
	[ "$(val 'Link layer')" = InfiniBand ] || bad "ibstat: Link layer"
	ng=$(val 'Node GUID'); pg=$(val 'Port GUID'); sg=$(val 'System image GUID')
	[[ "$ng" =~ ^0x[0-9a-f]{16}$ ]] && [ "$ng" != 0x0000000000000000 ] || bad "ibstat: Node GUID '$ng'"
	[ "$sg" = "$ng" ] || bad "ibstat: System image GUID '$sg' is not the node GUID"
	[ -n "$pg" ] && [ $((pg)) -eq $((ng + 1)) ] || bad "ibstat: Port GUID '$pg' is not node GUID + 1"
	# The same GUID through ibv_devinfo's format: 4 groups of 4 digits.
	dvg=$(awk '$1 == "node_guid:" { print $2 }' <<<"$dv")
	[[ "$dvg" =~ ^[0-9a-f]{4}(:[0-9a-f]{4}){3}$ ]] || bad "ibv_devinfo node_guid '$dvg'"

	out=$("$SOFTIB" run ibstat -l 2>&1) && [ "$out" = softib0 ] || bad "ibstat -l: '$out'"
	out=$("$SOFTIB" run ibstat -p 2>&1) && [[ "$out" =~ ^0x[0-9a-f]{16}$ ]] || bad "ibstat -p: '$out'"
	out=$("$SOFTIB" run ibstat softib0 1 2>&1) && grep -q 'State: Active' <<<"$out" || bad "ibstat softib0 1: '$out'"
else
	bad "ibstat is not installed (make deps installs infiniband-diags)"
fi

# --- ibstatus (a shell script: cd, glob, [ -r ], cat)
if command -v ibstatus >/dev/null; then
	sib_run ibstatus 120 "$SOFTIB" run ibstatus || bad "ibstatus exited ${SIB_RC[ibstatus]}"
	ss=$(cat "$(sib_out ibstatus)")
	echo "$ss"
	sval() { sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" <<<"$ss" | head -n 1; }
	grep -qx "Infiniband device 'softib0' port 1 status:" <<<"$ss" || bad "ibstatus: no softib0 port 1"
	[[ "$(sval 'default gid')" =~ ^fe80:0000:0000:0000(:[0-9a-f]{4}){4}$ ]] || bad "ibstatus: default gid '$(sval 'default gid')'"
	blid=$(sval 'base lid')
	[[ "$blid" =~ ^0x[0-9a-f]+$ ]] && [ $((blid)) -ge 1 ] && [ $((blid)) -le 49151 ] || bad "ibstatus: base lid '$blid'"
	slid=$(sval 'sm lid')
	[[ "$slid" =~ ^0x[0-9a-f]+$ ]] && [ $((slid)) -eq "$dv_smlid" ] || bad "ibstatus: sm lid '$slid', ibv_devinfo says $dv_smlid"
	[ "$(sval state)" = "4: ACTIVE" ] || bad "ibstatus: state '$(sval state)'"
	[ "$(sval 'phys state')" = "5: LinkUp" ] || bad "ibstatus: phys state"
	[ "$(sval rate)" = "40 Gb/sec (4X QDR)" ] || bad "ibstatus: rate '$(sval rate)'"
	[ "$(sval link_layer)" = InfiniBand ] || bad "ibstatus: link_layer"
	out=$("$SOFTIB" run ibstatus softib0:1 2>&1) && grep -q '4: ACTIVE' <<<"$out" || bad "ibstatus softib0:1"
else
	bad "ibstatus is not installed (make deps installs infiniband-diags)"
fi

# --- UCX keeps softib0 once /dev/infiniband/<dev_name> is a usable device
if command -v ucx_info >/dev/null; then
	sib_run ucx 120 "$SOFTIB" run ucx_info -d || bad "ucx_info -d exited ${SIB_RC[ucx]}"
	awk '/Memory domain: softib0/ { on = 1 } on && /Transport:|Device:/ { print } /Memory domain:/ && !/softib0/ { on = 0 }' \
		"$(sib_out ucx)" >"$SIB_TMP/ucx.md"
	cat "$SIB_TMP/ucx.md"
	grep -A1 'Transport: rc_verbs' "$SIB_TMP/ucx.md" | grep -q 'Device: softib0:1' || bad "ucx_info -d: no rc_verbs on softib0:1"
	grep -A1 'Transport: ud_verbs' "$SIB_TMP/ucx.md" | grep -q 'Device: softib0:1' || bad "ucx_info -d: no ud_verbs on softib0:1"
else
	bad "ucx_info is not installed (make deps installs ucx-utils)"
fi

# --- libibverbs: one softib0, no new warning (its sysfs discovery now finds
# /sys/class/infiniband_verbs, with nothing in it to load a driver for)
out=$(IBV_SHOW_WARNINGS=1 "$SOFTIB" run ibv_devices 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || bad "ibv_devices exited $rc"
[ "$(grep -c softib0 <<<"$out")" = 1 ] || bad "ibv_devices lists softib0 $(grep -c softib0 <<<"$out") times"
! grep -qi warning <<<"$out" || bad "ibv_devices warns: $out"

# --- a shell in the tree; its children start there too
out=$("$SOFTIB" run sh -c 'cd /sys/class/infiniband/softib0/ports/1 && pwd && cat state && ls gids | wc -l && cd ../.. && ls' 2>&1)
echo "$out"
[ "$(sed -n 1p <<<"$out")" = /sys/class/infiniband/softib0/ports/1 ] || bad "sh: pwd in the tree"
[ "$(sed -n 2p <<<"$out")" = "4: ACTIVE" ] || bad "sh: cat state from inside the tree"
[ "$(sed -n 3p <<<"$out")" = 8 ] || bad "sh: ls gids from inside the tree"
grep -qx node_guid <<<"$out" || bad "sh: ls of softib0 after cd ../.."

# --- python, as pyverbs' tests look for the port's netdev (base.py _get_ip_mac)
if [ -x /usr/bin/python3 ]; then
	out=$("$SOFTIB" run /usr/bin/python3 -c '
import os, subprocess
d = "/sys/class/infiniband/softib0/device/net/"
print(os.path.exists(d), os.listdir(d), subprocess.check_output(["ls", d]).decode().split())
print(sorted(os.listdir("/sys/class/infiniband/softib0/ports/1")) == sorted(e.name for e in os.scandir("/sys/class/infiniband/softib0/ports/1")))
print(open("/sys/class/infiniband/softib0/ports/1/link_layer").read().strip())
' 2>&1)
	echo "$out"
	[ "$(sed -n 1p <<<"$out")" = "True ['lo'] ['lo']" ] || bad "python: device/net"
	[ "$(sed -n 2p <<<"$out")" = True ] || bad "python: listdir and scandir differ"
	[ "$(sed -n 3p <<<"$out")" = InfiniBand ] || bad "python: open().read()"
fi

# --- without softib: nothing of it (and no crash)
out=$(env -u LD_PRELOAD ls /sys/class/infiniband/softib0 /dev/infiniband/softib0 2>&1); rc=$?
[ $rc -ne 0 ] && ! grep -q node_guid <<<"$out" || bad "without softib the tree exists: $out"

[ $fail -eq 0 ] || sib_show
exit $fail

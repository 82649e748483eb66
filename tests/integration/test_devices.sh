#!/usr/bin/env bash
# softib0 through unmodified ibverbs-utils: `softib run ibv_devices` lists it
# with a nonzero GUID, `softib run ibv_devinfo -v` shows an ACTIVE port with
# a LID and GID[0] = fe80::<port GUID>, `softib info` agrees with itself, and
# programs started without softib are left alone.
set -u
for p in ibv_devices ibv_devinfo; do
  command -v $p >/dev/null || { echo "skip: $p not installed (Debian: ibverbs-utils)"; exit 77; }
done
[ -x "$SOFTIB" ] || { echo "FAIL: $SOFTIB not built"; exit 1; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

out=$("$SOFTIB" run ibv_devices 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || bad "softib run ibv_devices exited $rc"
guid=$(awk '$1 == "softib0" { print $2 }' <<<"$out")
[[ "$guid" =~ ^[0-9a-f]{16}$ ]] || bad "ibv_devices: no softib0 line with a 16-digit GUID"
[ "$guid" != 0000000000000000 ] || bad "ibv_devices: softib0 GUID is zero"

out=$("$SOFTIB" run ibv_devinfo -v 2>&1); rc=$?
[ $rc -eq 0 ] || bad "softib run ibv_devinfo -v exited $rc"
grep -E 'hca_id:|state:|port_lid:|sm_lid:|GID\[|link_layer:|node_guid:|max_qp:|max_cqe:|atomic_cap:' <<<"$out"
grep -q 'hca_id:[[:space:]]*softib0' <<<"$out" || bad "ibv_devinfo: no hca_id softib0"
grep -q 'transport:[[:space:]]*InfiniBand (0)' <<<"$out" || bad "ibv_devinfo: transport is not InfiniBand"
grep -q 'state:[[:space:]]*PORT_ACTIVE (4)' <<<"$out" || bad "ibv_devinfo: port is not PORT_ACTIVE"
grep -q 'phys_state:[[:space:]]*LINK_UP (5)' <<<"$out" || bad "ibv_devinfo: phys_state is not LINK_UP"
grep -q 'link_layer:[[:space:]]*InfiniBand' <<<"$out" || bad "ibv_devinfo: link_layer is not InfiniBand"
grep -q 'active_mtu:[[:space:]]*4096 (5)' <<<"$out" || bad "ibv_devinfo: active_mtu is not 4096"
lid=$(awk '$1 == "port_lid:" { print $2 }' <<<"$out")
[[ "$lid" =~ ^[0-9]+$ ]] && [ "$lid" -ge 1 ] && [ "$lid" -le 49151 ] || bad "ibv_devinfo: port_lid '$lid' is not a unicast LID"
node=$(awk '$1 == "node_guid:" { print $2 }' <<<"$out")
[[ "$node" =~ ^[0-9a-f]{4}(:[0-9a-f]{4}){3}$ ]] && [ "$node" != 0000:0000:0000:0000 ] || bad "ibv_devinfo: node_guid '$node'"
gid=$(awk '$1 == "GID[" && $2 == "0]:" { print $3 }' <<<"$out")
[[ "$gid" =~ ^fe80:0000:0000:0000:[0-9a-f]{4}(:[0-9a-f]{4}){3}$ ]] || bad "ibv_devinfo: GID[0] '$gid' is not fe80::<GUID>"
for f in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd max_srq max_ah max_pkeys; do
  v=$(awk -v f="$f:" '$1 == f { print $2 }' <<<"$out")
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || bad "ibv_devinfo: $f is '$v'"
done
grep -q 'atomic_cap:[[:space:]]*ATOMIC_HCA' <<<"$out" || bad "ibv_devinfo: atomic_cap is not ATOMIC_HCA"

# softib info: this process's view (each process is its own node, so it is
# checked for consistency with itself, not for equal GUIDs).
out=$("$SOFTIB" info 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || bad "softib info exited $rc"
grep -q 'state[[:space:]]*ACTIVE' <<<"$out" || bad "softib info: port not ACTIVE"
ilid=$(awk '$1 == "LID" { print $2 }' <<<"$out")
[[ "$ilid" =~ ^[0-9]+$ ]] && [ "$ilid" -ge 1 ] && [ "$ilid" -le 49151 ] || bad "softib info: LID '$ilid'"
pguid=$(awk '$1 == "port" && $2 == "GUID" { print $3 }' <<<"$out")
nguid=$(awk '$1 == "node" && $2 == "GUID" { print $3 }' <<<"$out")
igid=$(awk '$1 == "GID[0]" { print $2 }' <<<"$out")
[ -n "$pguid" ] && [ "$igid" = "fe80:0000:0000:0000:$pguid" ] || bad "softib info: GID[0] '$igid' is not fe80::<port GUID $pguid>"
[ -n "$nguid" ] && [ "$nguid" != 0000:0000:0000:0000 ] || bad "softib info: node GUID '$nguid'"
grep -q 'P_Key\[0\][[:space:]]*0xffff' <<<"$out" || bad "softib info: P_Key[0] is not 0xffff"

# Without softib, programs see what they saw before: no softib0, no crash.
out=$(env -u LD_PRELOAD ibv_devices 2>&1); rc=$?
echo "without softib: ibv_devices exited $rc: $out"
[ $rc -lt 128 ] || bad "ibv_devices without softib died (exit $rc)"
! grep -q softib0 <<<"$out" || bad "ibv_devices without softib lists softib0"

exit $fail

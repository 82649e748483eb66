#!/usr/bin/env bash
# UD multicast on one port through the system libibverbs (helper
# verbs_mcast_loopback): limits, attach/detach and their refusals, loopback
# to every attached QP of the sending port, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
# destroy_qp refusing an attached QP.  The helper checks the results; this
# script checks its exit status, its output and the log line of each refusal.
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}
helper=$B/helpers/verbs_mcast_loopback

[ -x "$helper" ] || { echo "skip: $helper is not built"; exit 77; }
[ -e "$B/libsoftib.so" ] || { echo "skip: $B/libsoftib.so is not built"; exit 77; }
if "$SOFTIB" run -- true 2>/dev/null; then
  run=("$SOFTIB" run --)
else
  run=(env LD_PRELOAD="$B/libsoftib.so")
fi

out=$(mktemp); err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
SOFTIB_SM=none SOFTIB_LOG=warn "${run[@]}" "$helper" >"$out" 2>"$err"
rc=$?
[ $rc -eq 77 ] && exit 77
fail=0
[ $rc -eq 0 ] || { echo "helper failed (exit $rc)"; fail=1; }
grep -q '^all passed$' "$out" || { echo "FAIL: helper did not pass every check"; fail=1; }
grep -q '^max_mcast_grp [1-9][0-9]* max_mcast_qp_attach [1-9][0-9]* ' "$out" ||
  { echo "FAIL: limits not printed"; fail=1; }

expect() {
  if grep -qE "$1" "$err"; then echo "ok log: $1"; else echo "FAIL log missing: $1"; fail=1; fi
}
expect '^softib: create_qp_ex: IBV_QP_CREATE_BLOCK_SELF_MCAST_LB is for UD QPs only$'
expect '^softib: attach_mcast on QP 0x[0-9a-f]{6}: only UD QPs join multicast groups, this one is RC$'
expect '^softib: attach_mcast on QP 0x[0-9a-f]{6}: fe80(:0000){7} is not a multicast GID \(IBA 4\.1\.1'
expect '^softib: attach_mcast on QP 0x[0-9a-f]{6}: LID 0x[0-9a-f]{4} is not a multicast LID \(IBA 4\.1\.3'
expect '^softib: destroy_qp on QP 0x[0-9a-f]{6}: still attached to 1 multicast group\(s\)'
expect '^softib: detach_mcast on QP 0x[0-9a-f]{6}: the QP is not attached to that group and MLID$'
n=$(grep -c '^softib:' "$err")
[ "$n" -eq 6 ] || { echo "FAIL: $n log lines, expected 6 (one per refusal)"; fail=1; }
if [ $fail -ne 0 ]; then echo "--- stdout:"; cat "$out"; echo "--- stderr:"; cat "$err"; fi
exit $fail

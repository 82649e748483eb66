#!/usr/bin/env bash
# QP, CQ and posting rules through the system libibverbs: each rejected verb
# returns the documented errno (checked by the helper) and logs one line
# naming the rule (checked here) -- at warn for misuse, at info only for a
# capability probe (a create asking for more than softib0 offers).
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}
helper=$B/helpers/verbs_qp_rules

[ -x "$helper" ] || { echo "skip: $helper is not built"; exit 77; }
[ -e "$B/libsoftib.so" ] || { echo "skip: $B/libsoftib.so is not built"; exit 77; }
if "$SOFTIB" run -- true 2>/dev/null; then
  run=("$SOFTIB" run --)
else
  run=(env LD_PRELOAD="$B/libsoftib.so") # same effect as softib run
fi

err=$(mktemp) info=$(mktemp) dbg=$(mktemp)
trap 'rm -f "$err" "$info" "$dbg"' EXIT
SOFTIB_LOG=warn "${run[@]}" "$helper" 2>"$err"
rc=$?
[ $rc -eq 77 ] && exit 77
fail=0
[ $rc -eq 0 ] || { echo "helper failed (exit $rc)"; fail=1; }
# Again at info: the capability probes (provider/softib.h, softib_refused)
# must show there and only there.
SOFTIB_LOG=info "${run[@]}" "$helper" >/dev/null 2>"$info" ||
  { echo "helper failed at SOFTIB_LOG=info"; fail=1; }
# And at debug: back-pressure (a full queue) shows there and only there.
SOFTIB_LOG=debug "${run[@]}" "$helper" >/dev/null 2>"$dbg" ||
  { echo "helper failed at SOFTIB_LOG=debug"; fail=1; }

expect() {
  if grep -qE "$1" "$err"; then echo "ok log: $1"; else echo "FAIL log missing: $1"; fail=1; fi
}
# A probe: logged at info, never at the default warn.
probe() {
  if grep -qE "$1" "$err"; then echo "FAIL probe logged at warn: $1"; fail=1
  elif grep -qE "$1" "$info"; then echo "ok probe at info only: $1"
  else echo "FAIL probe missing at info: $1"; fail=1; fi
}
# Back-pressure a program relies on: at debug, never at warn or info.
quiet() {
  if grep -qE "$1" "$err" "$info"; then echo "FAIL back-pressure logged above debug: $1"; fail=1
  elif grep -qE "$1" "$dbg"; then echo "ok back-pressure at debug only: $1"
  else echo "FAIL back-pressure missing at debug: $1"; fail=1; fi
}
probe '^softib: create_cq: cqe [1-9][0-9]* is out of range 1\.\.[0-9]+ \(max_cqe\)$'
expect '^softib: create_cq: cqe 0 is out of range 1\.\.[0-9]+ \(max_cqe\)$'
probe '^softib: create_qp: max_send_wr 4294967295 exceeds max_qp_wr [0-9]+$'
probe '^softib: create_qp: max_inline_data [0-9]+ exceeds [0-9]+$'
expect '^softib: create_qp: RC QP needs a send CQ$'
expect '^softib: destroy_cq: the CQ is still used by a QP or SRQ$'
expect '^softib: modify_qp on QP 0x[0-9a-f]{6}: RESET->INIT requires IBV_QP_PKEY_INDEX$'
expect '^softib: modify_qp on QP 0x[0-9a-f]{6}: RESET->RTS is not a legal transition$'
expect '^softib: modify_qp on QP 0x[0-9a-f]{6}: INIT->RTR on UD does not allow IBV_QP_AV$'
expect '^softib: modify_qp on QP 0x[0-9a-f]{6}: ah_attr.grh.sgid_index 2 names an empty GID table entry$'
expect '^softib: post_recv on QP 0x[0-9a-f]{6}: QP is in RESET$'
expect '^softib: post_send on QP 0x[0-9a-f]{6}: QP is in INIT, must be RTS$'
expect '^softib: post_recv on QP 0x[0-9a-f]{6}: num_sge 2 exceeds max_recv_sge 1$'
quiet '^softib: post_recv on QP 0x[0-9a-f]{6}: receive queue is full \(4 WQEs\)$'
expect '^softib: create_srq: srq_limit 9 exceeds max_wr 8$'
expect '^softib: open_xrcd: no XRC domain for this file yet and no O_CREAT$'
expect '^softib: open_xrcd: O_EXCL, but the file already has an XRC domain$'
expect '^softib: close_xrcd: XRC SRQs or XRC_RECV QPs still use the domain$'
# TSO (0x400), which softib lacks (verbs_qp_rules.c)
probe '^softib: create_qp_ex: send_ops_flags 0x400 are not supported$'
expect '^softib: wr_complete on QP 0x[0-9a-f]{6}: QP is in RESET, must be RTS$'
if [ $fail -ne 0 ]; then echo "--- stderr at warn:"; cat "$err"; fi
exit $fail

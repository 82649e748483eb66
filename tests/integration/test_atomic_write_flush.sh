#!/usr/bin/env bash
# IBA 1.5 ATOMIC WRITE and FLUSH through the system libibverbs on a loopback
# RC pair (helpers/verbs_atomic_write_flush.c checks the data and each
# completion status; ibv_wr_flush needs rdma-core 45, and the helper says
# when it skipped it); here, the log line naming each refusal's rule, and
# softib decode naming the packets of a capture.
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}
helper=$B/helpers/verbs_atomic_write_flush

[ -x "$helper" ] || { echo "skip: $helper is not built"; exit 77; }
[ -e "$B/libsoftib.so" ] || { echo "skip: $B/libsoftib.so is not built"; exit 77; }
if "$SOFTIB" run -- true 2>/dev/null; then
  run=("$SOFTIB" run --)
else
  run=(env LD_PRELOAD="$B/libsoftib.so") # same effect as softib run
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SOFTIB_LOG=warn SOFTIB_CAPTURE=$tmp/c.pcap timeout 120 "${run[@]}" "$helper" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
[ $rc -eq 77 ] && exit 77
fail=0
[ $rc -eq 0 ] || { echo "helper failed (exit $rc)"; fail=1; }

expect() { # file, ERE
  if grep -qE "$2" "$1"; then echo "ok: $2"; else echo "FAIL missing: $2"; fail=1; fi
}
expect "$tmp/err" '^softib: reg_mr on PD 0x[0-9a-f]{6}: access 0x[0-9a-f]+: FLUSH_PERSISTENT needs persistent memory \(softib has none\)$'
if grep -q '^ok ibv_wr_atomic_write' "$tmp/out"; then
  expect "$tmp/err" '^softib: responder QP 0x[0-9a-f]{6}: PSN 0x[0-9a-f]{6} RC ATOMIC WRITE: ATOMIC WRITE VA not 8-byte aligned \(IBA 1\.5 oA19-28\); NAK and QP to error$'
  expect "$tmp/err" '^softib: incoming ATOMIC WRITE on QP 0x[0-9a-f]{6}: rkey 0x[0-9a-f]{6}: '
  "$SOFTIB" decode "$tmp/c.pcap" >"$tmp/decode"
  expect "$tmp/decode" 'RC ATOMIC WRITE .* payload 8 .* DMALen 8 '
  expect "$tmp/decode" 'RC RDMA READ Response Only .* payload 0 '
  expect "$tmp/decode" '^packets: ([0-9]+) ok: \1 bad: 0$'
fi
if grep -q '^ok ibv_wr_flush' "$tmp/out"; then
  expect "$tmp/err" '^softib: incoming FLUSH on QP 0x[0-9a-f]{6}: rkey 0x[0-9a-f]{6}: '
  expect "$tmp/decode" 'RC FLUSH .* SEL [01] \((range|region)\) PLT 0x1 \(global\)'
fi
if [ $fail -ne 0 ]; then echo "--- stderr:"; cat "$tmp/err"; fi
exit $fail

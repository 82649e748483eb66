#!/usr/bin/env bash
# MR and MW rules through the public verbs: each rejection returns the
# documented errno (checked by the helper) and logs one line naming its rule
# (checked here).
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}
helper=$B/helpers/verbs_mr_rules

if [ ! -e "$B/libsoftib.so" ] || [ ! -x "$helper" ]; then
  echo "skip: $B/libsoftib.so or $helper is not built"; exit 77
fi
# `softib run` when it works; LD_PRELOAD is what it does.
if "$SOFTIB" run -- true 2>/dev/null; then
  run=("$SOFTIB" run --)
else
  run=(env LD_PRELOAD="$B/libsoftib.so")
fi

log=$(mktemp) out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
SOFTIB_LOG=warn SOFTIB_LOG_FILE="$log" "${run[@]}" "$helper" >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "verbs_mr_rules exited $rc"; exit 1; }
# Some builds log to stderr whatever SOFTIB_LOG_FILE says: look in both.
cat "$out" >>"$log"

fail=0
want() {
  if grep -qF -- "$1" "$log"; then echo "ok: log has: $1"
  else echo "FAIL: no log line: $1"; fail=1; fi
}
want "reg_mr on PD 0x000001: access 0x2: REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE"
want "access 0xc: REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE"
want "advise_mr: advice 7: softib knows PREFETCH, PREFETCH_WRITE and PREFETCH_NO_FAULT"
want "advise_mr: flags 0x20: only IBV_ADVISE_MR_FLAG_FLUSH is defined"
want "advise_mr: an empty scatter list (num_sge 0)"
want "is not an on-demand (ODP) MR: nothing to prefetch"
want "advise_mr: lkey 0x"
want "va 0x1000 len 64: no page is mapped there (on-demand region)"
want "implicit ODP MR with iova 0x1000: its iova is its address, 0"
want "need one or more of CHANGE_TRANSLATION, CHANGE_PD, CHANGE_ACCESS"
want "dereg_mr: 0x"
want "is not a live object of this process"
want "alloc_mw on PD 0x000001: type 3 is not a memory window type (1 or 2)"
exit $fail

#!/usr/bin/env bash
# Reliability under SOFTIB_FAULTS (issue 5 item 7): two processes move data
# over 4 RC QPs in mixed SEND / WRITE / READ / CmpSwap / FetchAdd with drops,
# duplicates, reorders and corruptions, verifying every byte and every
# atomic result (tests/helpers/stress_rc.c); then UD under the same faults
# must never deliver a corrupted datagram (tests/helpers/stress_ud.c).
#
# make test: 1 GiB on a clean link, 1 GiB at 1% of each fault (seed 1) and
# 256 MiB at 2% with seeds 2 and 3; the AddressSanitizer build moves a
# quarter of that.  make soak (SOFTIB_SOAK=1): 1 GiB for each of seeds 1..10
# at 2% each.  A rate of 0 means no SOFTIB_FAULTS at all.
# STRESS_BYTES / STRESS_SEEDS override volume and seeds.
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}
rc_helper=$B/helpers/stress_rc
ud_helper=$B/helpers/stress_ud

for h in "$rc_helper" "$ud_helper"; do
  [ -x "$h" ] || { echo "skip: $h is not built"; exit 77; }
done
[ -e "$B/libsoftib.so" ] || { echo "skip: $B/libsoftib.so is not built"; exit 77; }
if "$SOFTIB" run -- true 2>/dev/null; then
  run=("$SOFTIB" run --)
else
  run=(env LD_PRELOAD="$B/libsoftib.so")
fi

san=0
case "$B" in *build-san*) san=1 ;; esac
# seed:bytes:rate for each RC run
if [ -n "${STRESS_SEEDS:-}" ]; then
  runs=()
  for s in $STRESS_SEEDS; do runs+=("$s:${STRESS_BYTES:-256M}:0.02"); done
elif [ "${SOFTIB_SOAK:-0}" = 1 ]; then
  runs=()
  for s in 1 2 3 4 5 6 7 8 9 10; do runs+=("$s:${STRESS_BYTES:-1G}:0.02"); done
elif [ $san = 1 ]; then
  runs=("1:256M:0" "1:256M:0.01" "2:64M:0.02" "3:64M:0.02")
else
  runs=("1:1G:0" "1:1G:0.01" "2:256M:0.02" "3:256M:0.02")
fi

fail=0
for r in "${runs[@]}"; do
  IFS=: read -r seed bytes rate <<<"$r"
  faults=
  [ "$rate" = 0 ] || faults="drop=$rate,dup=$rate,reorder=$rate,corrupt=$rate,seed=$seed"
  echo "--- RC stress: $bytes, SOFTIB_FAULTS=${faults:-(none)}"
  out=$(SOFTIB_LOG=error SOFTIB_FAULTS=$faults "${run[@]}" "$rc_helper" --bytes "$bytes" \
        --seed "$seed" --watchdog 600 2>&1)
  st=$?
  echo "$out" | grep -E 'MiB in|OK:|link:' | sed 's/^/    /'
  if [ $st -ne 0 ]; then
    echo "FAIL: stress_rc seed $seed (exit $st)"; echo "$out" | tail -20; fail=1
  elif [ -n "$faults" ] && ! echo "$out" | grep -q 'injected drop=[1-9]'; then
    echo "FAIL: stress_rc seed $seed: no fault was injected"; fail=1
  fi
done

for seed in 1 2; do
  faults="drop=0.02,dup=0.02,reorder=0.02,corrupt=0.05,seed=$seed"
  echo "--- UD stress: SOFTIB_FAULTS=$faults"
  out=$(SOFTIB_LOG=error SOFTIB_FAULTS=$faults "${run[@]}" "$ud_helper" --count 20000 \
        --seed "$seed" 2>&1)
  st=$?
  echo "$out" | grep -E 'delivered' | sed 's/^/    /'
  if [ $st -ne 0 ]; then
    echo "FAIL: stress_ud seed $seed (exit $st)"; echo "$out" | tail -20; fail=1
  fi
done
exit $fail

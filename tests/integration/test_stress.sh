#!/usr/bin/env bash
# Reliability under SOFTIB_FAULTS (issue 5 item 7): two processes move data
# over 4 RC QPs in mixed SEND / WRITE / READ / CmpSwap / FetchAdd with drops,
# duplicates, reorders and corruptions, verifying every byte and every
# atomic result (tests/helpers/stress_rc.c); then UD under the same faults
# must never deliver a corrupted datagram (tests/helpers/stress_ud.c).
#
# make test: 1 GiB on a clean link, 1 GiB at 1% of each fault (seed 1) and
# 256 MiB at 2% with seeds 2 and 3, and a clean link for 5 s in rounds on
# the same QPs; the AddressSanitizer build moves a quarter of that.
# make soak (SOFTIB_SOAK=1): 1 GiB for each of seeds 1..10 at 2% each, then
# the long verified transfer on a clean link (issue 17 item 7):
# SOAK_LONG_RUNS runs (30) of SOAK_LONG_SECONDS seconds (120) each, rounds
# of 1 GiB on the same four connections, every other run against
# SOAK_LONG_BUSY busy loops (2) that this script starts and stops.
# A rate of 0 means no SOFTIB_FAULTS at all.  STRESS_BYTES / STRESS_SEEDS
# override volume and seeds of the fault runs.
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
# seed:bytes:rate[:seconds] for each RC run (seconds: rounds on the same QPs)
if [ -n "${STRESS_SEEDS:-}" ]; then
  runs=()
  for s in $STRESS_SEEDS; do runs+=("$s:${STRESS_BYTES:-256M}:0.02"); done
elif [ "${SOFTIB_SOAK:-0}" = 1 ]; then
  runs=()
  for s in 1 2 3 4 5 6 7 8 9 10; do runs+=("$s:${STRESS_BYTES:-1G}:0.02"); done
elif [ $san = 1 ]; then
  runs=("1:256M:0" "1:256M:0.01" "2:64M:0.02" "3:64M:0.02" "4:64M:0:5")
else
  runs=("1:1G:0" "1:1G:0.01" "2:256M:0.02" "3:256M:0.02" "4:256M:0:5")
fi

fail=0
# rc_run SEED BYTES RATE SECONDS: one stress_rc pair; 0 when it passed.
rc_run()
{
  local seed=$1 bytes=$2 rate=$3 secs=${4:-0} faults= out st
  local args=(--bytes "$bytes" --seed "$seed" --watchdog $((secs + 600)))

  [ "$rate" = 0 ] || faults="drop=$rate,dup=$rate,reorder=$rate,corrupt=$rate,seed=$seed"
  [ "$secs" = 0 ] || args+=(--seconds "$secs")
  out=$(SOFTIB_LOG=error SOFTIB_FAULTS=$faults "${run[@]}" "$rc_helper" "${args[@]}" 2>&1)
  st=$?
  echo "$out" | grep -E 'MiB in|OK:|link:' | sed 's/^/    /'
  if [ $st -ne 0 ]; then
    echo "FAIL: stress_rc seed $seed (exit $st)"; echo "$out" | tail -20; return 1
  elif [ -n "$faults" ] && ! echo "$out" | grep -q 'injected drop=[1-9]'; then
    echo "FAIL: stress_rc seed $seed: no fault was injected"; return 1
  elif [ "$secs" != 0 ] && ! echo "$out" | grep -Eq ' [0-9]+ rounds? on the same QPs'; then
    echo "FAIL: stress_rc seed $seed: no count of rounds"; return 1
  fi
  return 0
}

for r in "${runs[@]}"; do
  IFS=: read -r seed bytes rate secs <<<"$r"
  secs=${secs:-0}
  echo "--- RC stress: $bytes$([ "$secs" = 0 ] || echo " rounds for ${secs}s"), SOFTIB_FAULTS=$(
    [ "$rate" = 0 ] && echo "(none)" || echo "drop=$rate,dup=$rate,reorder=$rate,corrupt=$rate,seed=$seed")"
  rc_run "$seed" "$bytes" "$rate" "$secs" || fail=1
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

# The long verified transfer of make soak: clean connections that live for
# minutes, some of them on a machine made busy on purpose.
busy=()
stop_busy()
{
  local p

  for p in "${busy[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  busy=()
}
trap stop_busy EXIT
if [ "${SOFTIB_SOAK:-0}" = 1 ]; then
  n=${SOAK_LONG_RUNS:-30} secs=${SOAK_LONG_SECONDS:-120} nbusy=${SOAK_LONG_BUSY:-2} long_fail=0
  for ((i = 1; i <= n; i++)); do
    if ((i % 2 == 0)); then
      for ((j = 0; j < nbusy; j++)); do
        (while :; do :; done) &
        busy+=($!)
      done
    fi
    echo "--- RC long run $i/$n: ${secs}s in rounds of 1G on a clean link, ${#busy[@]} busy loops"
    rc_run "$((100 + i))" 1G 0 "$secs" || long_fail=$((long_fail + 1))
    stop_busy
  done
  echo "RC long runs: $((n - long_fail)) of $n passed"
  [ $long_fail -eq 0 ] || fail=1
fi
exit $fail

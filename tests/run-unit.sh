#!/usr/bin/env bash
# Runs every cmocka program in $1/tests (one per module) and prints a summary.
# Programs find ../shared through SOFTIB_SHARED_DIR and skip what needs it
# when it is absent (a user's fresh clone has no ../shared).
set -u
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
export SOFTIB_SHARED_DIR=${SOFTIB_SHARED_DIR:-$top/../shared}
export SOFTIB_TOP=$top
# Unit tests are hermetic: an HCA made through sib_hca_get() runs without a
# subnet manager (a subnet of one).  Tests of the SM build their own over
# the in-memory link.
export SOFTIB_SM=${SOFTIB_SM:-none}
pass=0 fail=0 failed=()
for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  echo "=== $(basename "$t")"
  if timeout 300 "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$(basename "$t")"); fi
done
[ $fail -eq 0 ] || echo "failed programs: ${failed[*]}"
echo "unit ($B): $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

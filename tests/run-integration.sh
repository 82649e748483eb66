#!/usr/bin/env bash
# Runs tests/integration/test_*.sh.  Each test exits 0 (pass), 77 (skip, after
# printing why) or anything else (fail).  B names the build directory.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export B=${B:-build}
case "$B" in /*) ;; *) B=$top/$B ;; esac
export SOFTIB_TOP=$top
export SOFTIB_SHARED_DIR=${SOFTIB_SHARED_DIR:-$top/../shared}
export SOFTIB="$B/softib"
# One SM address for this run, away from the default a user's own SM uses;
# the SM a test auto-starts there is stopped at the end (tests that need
# their own use their own addresses).
if [ -z "${SOFTIB_SM:-}" ]; then
  export SOFTIB_SM=127.0.0.1:$((30000 + RANDOM % 20000))
  trap 'for p in $(pgrep -f -- "softib-sm --daemon --listen $SOFTIB_SM\$" 2>/dev/null); do kill "$p"; done' EXIT
fi
pass=0 fail=0 skip=0 failed=()
for t in "$top"/tests/integration/test_*.sh; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  echo "=== $name"
  timeout 900 bash "$t"; rc=$?
  case $rc in
    0) pass=$((pass + 1)); echo "--- $name: PASS" ;;
    77) skip=$((skip + 1)); echo "--- $name: SKIP" ;;
    *) fail=$((fail + 1)); failed+=("$name"); echo "--- $name: FAIL (exit $rc)" ;;
  esac
done
[ $fail -eq 0 ] || echo "failed tests: ${failed[*]}"
echo "integration ($(basename "$B")): $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Runs tests/integration/test_*.sh, or only the tests named (test_pingpong
# test_rdma_cm ...).  Each test exits 0 (pass), 77 (skip, after printing
# why) or anything else (fail).  B names the build directory.
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
at_exit=()
kill_run_sm() { for p in $(pgrep -f -- "softib-sm --daemon --listen $SOFTIB_SM\$" 2>/dev/null); do kill "$p"; done; }
if [ -z "${SOFTIB_SM:-}" ]; then
  # (a port outside the kernel's ephemeral range: lib.sh's sib_free_port)
  export SOFTIB_SM=127.0.0.1:$(. "$top/tests/integration/lib.sh"; sib_free_port udp)
  at_exit+=(kill_run_sm)
fi
# softib's per-user directory (subnet key files, counters sockets) for the
# tests that do not make their own (lib.sh's sib_init does): not the user's.
remove_run_dir() { rm -rf "$SOFTIB_RUN_DIR"; }
if [ -z "${SOFTIB_RUN_DIR:-}" ]; then
  export SOFTIB_RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/softib-run.XXXXXX")
  at_exit+=(remove_run_dir)
fi
trap 'for f in "${at_exit[@]}"; do "$f"; done' EXIT
# Each test's output is shown when it ends and kept until the run ends,
# where a failed test's FAIL and note lines are printed again: a CI log cut
# to its tail still says why.
outs=$(mktemp -d "${TMPDIR:-/tmp}/softib-integration.XXXXXX")
remove_outs() { rm -rf "$outs"; }
at_exit+=(remove_outs)
pass=0 fail=0 skip=0 failed=()
tests=("$top"/tests/integration/test_*.sh)
[ $# -eq 0 ] || tests=("${@/#/$top/tests/integration/}") tests=("${tests[@]/%/.sh}")
for t in "${tests[@]}"; do
  [ -e "$t" ] || { echo "no such test: $t"; exit 2; }
  name=$(basename "$t" .sh)
  echo "=== $name"
  # To a file, not through a pipe: a daemon a test starts keeps its output
  # descriptor, and a pipe's reader would wait for it to exit.
  timeout 900 bash "$t" > "$outs/$name" 2>&1; rc=$?
  cat "$outs/$name"
  case $rc in
    0) pass=$((pass + 1)); echo "--- $name: PASS" ;;
    77) skip=$((skip + 1)); echo "--- $name: SKIP" ;;
    *) fail=$((fail + 1)); failed+=("$name"); echo "--- $name: FAIL (exit $rc)" ;;
  esac
done
for name in "${failed[@]}"; do
  echo "--- why $name failed (its FAIL and note lines, the first 30):"
  grep -E '^(FAIL|note)' "$outs/$name" | head -30
done
[ $fail -eq 0 ] || echo "failed tests: ${failed[*]}"
echo "integration ($(basename "$B")): $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

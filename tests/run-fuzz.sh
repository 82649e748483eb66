#!/usr/bin/env bash
# Runs each libFuzzer binary for $1 seconds (split evenly); any crash or
# sanitizer report fails the run.  The corpus is kept in build-fuzz/corpus.
set -u
secs=$1; shift
[ $# -gt 0 ] || { echo "fuzz: no harnesses"; exit 1; }
per=$(( secs / $# )); [ $per -ge 5 ] || per=5
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0
for f in "$@"; do
  name=$(basename "$f")
  corpus=$top/build-fuzz/corpus/$name; mkdir -p "$corpus"
  seeds=$top/tests/fuzz/seeds/$name
  echo "=== fuzz $name for ${per}s"
  if "$f" -max_total_time=$per -print_final_stats=1 -max_len=8192 \
      -artifact_prefix="$top/build-fuzz/$name-" "$corpus" $( [ -d "$seeds" ] && echo "$seeds" ) \
      > "$top/build-fuzz/$name.log" 2>&1; then
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$top/build-fuzz/$name.log" | tail -1
    echo "--- fuzz $name: PASS"
  else
    tail -40 "$top/build-fuzz/$name.log"; echo "--- fuzz $name: FAIL"; rc=1
  fi
done
exit $rc

#!/usr/bin/env bash
# Runs every cmocka program in $1/tests (one per module) and prints a summary:
# programs passed and failed, and every test skipped with its reason.
# Programs find ../shared through SOFTIB_SHARED_DIR and skip what needs it
# when it is absent (a user's fresh clone has no ../shared); a test that
# skips prints "skipped: <why>" before cmocka's "[  SKIPPED ] <test>"
# (tests/unit/skip.h).
set -u
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
export SOFTIB_SHARED_DIR=${SOFTIB_SHARED_DIR:-$top/../shared}
export SOFTIB_TOP=$top
# Unit tests are hermetic: an HCA made through sib_hca_get() runs without a
# subnet manager (a subnet of one).  Tests of the SM build their own over
# the in-memory link.
export SOFTIB_SM=${SOFTIB_SM:-none}
outs=$(mktemp -d "${TMPDIR:-/tmp}/softib-unit.XXXXXX")
trap 'rm -rf "$outs"' EXIT

# The tests of one program's output that cmocka skipped, one a line:
# "<test>: <why>", the reason from the "skipped:" line before the test's
# first "[  SKIPPED ]" (cmocka lists the skipped again at the end).
skipped_in() {
  awk '
    /^skipped: / { why = substr($0, 10); next }
    /^\[  SKIPPED \] [0-9]+ test\(s\), listed below:$/ { listing = 1; next }
    /^\[  SKIPPED \] / {
      t = substr($0, 14)
      if (listing) print t ": " (t in reason ? reason[t] : "(no reason given)")
      else if (!(t in reason)) reason[t] = why
      why = "(no reason given)"
      next
    }
    { listing = 0 }
    BEGIN { why = "(no reason given)" }
  ' "$1"
}

# stdbuf: cmocka writes results to stdout and failures to stderr; line
# buffering keeps them in order in the file.  Not for an AddressSanitizer
# build: stdbuf preloads its library ahead of the ASan runtime, which ASan
# refuses (as in tests/integration/lib.sh).
have_stdbuf=false
command -v stdbuf >/dev/null && have_stdbuf=true
pass=0 fail=0 failed=() skipped=()
for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  echo "=== $name"
  buf=()
  $have_stdbuf && ! ldd "$t" 2>/dev/null | grep -q libasan && buf=(stdbuf -oL -eL)
  # To a file, then shown: its skipped tests are read from it.
  timeout 300 "${buf[@]}" "$t" > "$outs/$name" 2>&1; rc=$?
  cat "$outs/$name"
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$name"); fi
  while IFS= read -r line; do skipped+=("$name.$line"); done < <(skipped_in "$outs/$name")
done
names=()
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped tests, and why:"
  for s in "${skipped[@]}"; do
    echo "  $s"
    names+=("${s%%: *}")
  done
fi
# A failed program's failing tests, each with the lines it printed from its
# "[ RUN      ]" to its "[  FAILED  ]" (cmocka's message), and the test a
# crash or timeout cut short with what it printed (a sanitizer's report):
# what a log cut to its tail (make test-distros) still shows.
for name in "${failed[@]}"; do
  echo "--- why $name failed (its failing tests' lines, the first 40):"
  awk '/^\[ RUN      \] / { n = 0; open = 1 }
       { block[n++] = $0 }
       /^\[       OK \] / { open = 0 }
       /^\[  FAILED  \] / && open { for (i = 0; i < n; i++) print block[i]; open = 0 }
       END { if (open) for (i = 0; i < n; i++) print block[i] }' "$outs/$name" | head -40
done
[ $fail -eq 0 ] || echo "failed programs: ${failed[*]}"
list=
[ ${#names[@]} -eq 0 ] || list=": $(IFS=,; echo "${names[*]}" | sed 's/,/, /g')"
echo "unit ($B): $pass programs passed, $fail failed; ${#skipped[@]} tests skipped$list"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

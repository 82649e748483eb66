#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Runs make targets as named stages, each timed, and ends with one summary
# line per stage (make test, .ci/run).
#
#   tests/run-stages.sh 'NAME:MAKE ARGS' ...
#
# Every stage runs even when an earlier one failed (a CI log then shows all
# that is wrong at once), except after the stage named "deps": without the
# packages nothing else can pass.  With SOFTIB_STAGE_LOG set, each summary
# line is also appended to that file, so that an outer run (.ci/run) can
# print the stages of an inner one (make test) in its own summary.
# Exit 0 iff every stage passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
lines=() fail=0

hms() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

for stage in "$@"; do
	name=${stage%%:*}
	read -r -a args <<<"${stage#*:}"
	echo "=== stage $name (make ${args[*]})"
	t0=$(date +%s)
	make -C "$top" --no-print-directory "${args[@]}"
	rc=$?
	dt=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		line="stage $name: PASS in $(hms $dt)"
	else
		line="stage $name: FAIL (exit $rc) after $(hms $dt)"
		fail=1
	fi
	echo "--- $line"
	lines+=("$line")
	[ -n "${SOFTIB_STAGE_LOG:-}" ] && echo "$line" >>"$SOFTIB_STAGE_LOG"
	if [ $rc -ne 0 ] && [ "$name" = deps ]; then
		echo "--- the packages are missing: the other stages cannot run"
		break
	fi
done
echo "=== stages"
printf '%s\n' "${lines[@]}"
exit $fail

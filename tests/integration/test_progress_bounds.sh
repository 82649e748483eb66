#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What the speed-ups of the progress engine must not break
# (man/softib-performance.7):
#   - back-to-back posts from a polling thread are left queued and go out
#     together; a program that then waits on memory without calling verbs
#     still sees them land (post_tail: the progress thread sends the tail);
#   - SOFTIB_SPIN_US=0 (no spinning after traffic) still moves data, and a
#     bad SOFTIB_SPIN_US gets one line naming the knob and the default.
. "$(dirname "$0")/lib.sh"

sib_init progress_bounds
sib_need timeout
sib_need_sm
HELPER=$B/helpers/post_tail
[ -x "$HELPER" ] || sib_fail "$HELPER is not built"
failed=()

check()
{
	local name=$1

	shift
	if sib_run "$name" 180 env "$@" "$SOFTIB" run "$HELPER" 200 &&
		sib_expect "$(sib_out "$name")" '^post_tail: 200 rounds, every burst landed' \
			"$name: every burst's tail landed"; then
		grep -h '^post_tail:' "$(sib_out "$name")"
	else
		sib_show "$name"
		failed+=("$name")
	fi
}

check tail_default SOFTIB_LOG=warn
check tail_nospin SOFTIB_SPIN_US=0
check tail_badspin SOFTIB_SPIN_US=lots
sib_expect "$(sib_out tail_badspin)" 'SOFTIB_SPIN_US=lots: want microseconds 0\.\.1000000; using 50' \
	"a bad SOFTIB_SPIN_US is named with the rule and the default" || failed+=(badspin_line)
if grep -q 'SOFTIB_SPIN_US' "$(sib_out tail_nospin)"; then
	echo "FAIL: SOFTIB_SPIN_US=0 is valid but was warned about"
	failed+=(nospin_line)
fi

if [ ${#failed[@]} -gt 0 ]; then
	echo "progress_bounds: failed: ${failed[*]}"
	exit 1
fi
echo "progress_bounds: all cases passed"

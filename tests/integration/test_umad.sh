#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The user-MAD device's rules through raw system calls
# (tests/helpers/umad_rules.c, provider/umad.h): bad ioctls and writes
# refused with the kernel's errno and nothing sent, an answer routed back
# by TID, an unanswered request back with ETIMEDOUT, a buffer too small
# refused with the MAD kept, issm31 making the port IsSM while held and
# refusing a second holder.
. "$(dirname "$0")/lib.sh"

sib_init umad
sib_need_sm
helper=$B/helpers/umad_rules
[ -x "$helper" ] || sib_fail "$helper not built"
sib_run rules 120 "$SOFTIB" run "$helper"
cat "$(sib_out rules)"
[ "${SIB_RC[rules]}" -eq 0 ] || sib_fail "umad_rules exited $(sib_status_text "${SIB_RC[rules]}")"
for g in device_and_agents bad_writes answer_by_tid timeout_returns_the_request issm unregister; do
	grep -qx "ok $g" "$(sib_out rules)" || sib_fail "umad_rules: no 'ok $g'"
done
sib_expect "$(sib_out rules)" '^PASS: 0 failures$' "the verdict" || sib_fail "umad_rules did not pass"
echo "umad: all rules held"

#!/usr/bin/env bash
# Device, port, GID, P_Key, AH and PD rules on softib0: each rejected verb
# returns the documented errno and logs one line naming the rule
# (tests/helpers/verbs_device_rules.c does the checking).
set -u
helper=$B/helpers/verbs_device_rules
[ -x "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SOFTIB_LOG=warn SOFTIB_LOG_FILE=$tmp/log "$SOFTIB" run "$helper"

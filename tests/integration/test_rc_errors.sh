#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# RC error paths and rules between two processes (tests/helpers/rc_errors.c
# says what each case checks): remote access errors (bad R_Key, out of
# bounds, each missing remote right), invalid request and remote operation
# NAKs, no responder resources, a misaligned atomic, a vanished peer
# (RETRY_EXC_ERR after the time timeout and retry_cnt imply), no receive
# with a finite rnr_retry, solicited events, fence, atomics racing the
# target CPU's own, and zero-length RDMA with no valid R_Key (IBA C9-88).  Each case checks the completion statuses and QP states
# on both sides; the error cases also need softib's log line naming the
# key, address or rule.
. "$(dirname "$0")/lib.sh"

sib_init rc_errors
sib_need ss timeout
sib_need_sm
helper=$B/helpers/rc_errors
[ -x "$helper" ] || sib_skip "$helper is not built"

failed=()

# run_case NAME [ERE the log must show]
run_case()
{
	local name=$1 re=${2:-} out

	out=$(sib_out "$name")
	if ! sib_run "$name" 300 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- "$helper" "$name"; then
		echo "FAIL: $name (exit ${SIB_RC[$name]})"
		sib_show "$name"
		failed+=("$name")
		return
	fi
	if [ -n "$re" ] && ! sib_expect "$out" "$re" "$name log line"; then
		sib_show "$name"
		failed+=("$name")
		return
	fi
	echo "ok: $name$(grep -Eo '(RETRY_EXC_ERR|RNR_RETRY_EXC_ERR|CPU:) .*' "$out" | head -1 | sed 's/^/: /')"
}

key='rkey 0x[0-9a-f]{6}'
run_case bad_rkey "incoming RDMA WRITE on QP 0x[0-9a-f]+: $key: .*stale key"
run_case bad_rkey_read "incoming RDMA READ on QP 0x[0-9a-f]+: $key"
run_case bad_rkey_imm "incoming RDMA WRITE on QP 0x[0-9a-f]+: $key: .*stale key"
run_case out_of_bounds "incoming RDMA WRITE on QP 0x[0-9a-f]+: $key: va 0x[0-9a-f]+ len 64 outside"
run_case out_of_bounds_read "incoming RDMA READ on QP 0x[0-9a-f]+: $key: va 0x[0-9a-f]+ len 8 outside"
run_case no_remote_write "incoming RDMA WRITE on QP 0x[0-9a-f]+: $key: needs access"
run_case no_remote_read "incoming RDMA READ on QP 0x[0-9a-f]+: $key: needs access"
run_case no_remote_atomic "incoming atomic on QP 0x[0-9a-f]+: $key: needs access"
run_case send_too_long "invalid request \(IBA 9\.7\.5\.2\.2\)"
run_case recv_bad_lkey "incoming SEND on QP 0x[0-9a-f]+: lkey 0x[0-9a-f]{6}"
run_case no_rd_resources "max_dest_rd_atomic 0; NAK and QP to error"
run_case misaligned_atomic "atomic VA not 8-byte aligned \(IBA 9\.4\.5\)"
run_case peer_gone "no response after retry_cnt retries"
run_case rnr "no receive WQE after rnr_retry retries"
run_case solicited
run_case fence
run_case atomic_glob
run_case zero_length

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: rc_errors: ${failed[*]}"
	exit 1
fi
exit 0

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The programs in examples/ run under `softib run`, exit 0 and print what
# their comments promise.
. "$(dirname "$0")/lib.sh"

sib_init examples
sib_need timeout
sib_need_sm
EX=$B/examples
for e in rc_send_recv rdma_write_read atomics ud_send; do
	[ -x "$EX/$e" ] || sib_fail "$EX/$e is not built (make builds examples/*.c)"
done

failed=()

# run_example NAME REGEX...: NAME must exit 0 and print a line matching
# each REGEX and "NAME: OK".  NAME may carry one option ("rc_send_recv
# --stop-at-rtr"): the examples' deliberate mistakes, which print no OK.
run_example()
{
	local name=$1 prog=${1%% *} re ok=1 opt=() ok_re=("^$1: OK\$")

	shift
	if [ "$prog" != "$name" ]; then
		opt=("${name#* }")
		ok_re=()
	fi
	if ! sib_run "$name" 120 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- "$EX/$prog" "${opt[@]}"; then
		echo "FAIL: $name: $(sib_status_text "${SIB_RC[$name]}")"
		ok=0
	fi
	for re in "$@" "${ok_re[@]}"; do
		[ $ok -eq 1 ] || break
		sib_expect "$(sib_out "$name")" "$re" "$name" || ok=0
	done
	if [ $ok -eq 1 ]; then
		echo "ok: $name"
	else
		sib_show "$name"
		failed+=("$name")
	fi
}

run_example rc_send_recv \
	'^rc_send_recv: A: SEND complete$' \
	'^rc_send_recv: B: received 32 bytes: "Hello from QP A to QP B over RC"$'
run_example rdma_write_read \
	'^rdma_write_read: RDMA WRITE placed 65536 bytes in B.s memory' \
	'^rdma_write_read: RDMA READ brought back 65536 bytes starting "changed by B"$'
run_example 'rc_send_recv --stop-at-rtr' \
	'^softib: post_send on QP 0x[0-9a-f]{6}: QP is in RTR, must be RTS$' \
	'^rc_send_recv: ibv_post_send on QP A \(left in RTR\) returned 22: Invalid argument$' \
	'^rc_send_recv: --stop-at-rtr: the SEND was refused, as it must be$'
run_example 'rdma_write_read --bad-rkey' \
	'^rdma_write_read: RDMA WRITE with rkey 0x[0-9a-f]+ \(B.s is 0x[0-9a-f]+\): remote access error$' \
	'^rdma_write_read: B.s buffer is untouched; QP A is now in ERR$' \
	'^rdma_write_read: --bad-rkey: the WRITE was refused, as it must be$'
run_example atomics \
	'^atomics: FETCH_AND_ADD 5: old value 100, B.s word now 105$' \
	'^atomics: COMPARE_AND_SWAP 105 -> 7: old value 105 \(equal: swapped\), B.s word now 7$' \
	'^atomics: COMPARE_AND_SWAP 105 -> 1: old value 7 \(not equal: unchanged\), B.s word now 7$'
run_example ud_send \
	'^ud_send: B received 296 bytes \(40 of GRH area \+ 256 of payload\) from QP 0x[0-9a-f]{6} at LID 0x[0-9a-f]{4}, GRH absent: "datagram addressed by LID"$' \
	'^ud_send: B received 296 bytes \(40 of GRH area \+ 256 of payload\) from QP 0x[0-9a-f]{6} at LID 0x[0-9a-f]{4}, GRH present: "datagram addressed by GID"$'

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: examples: ${failed[*]}"
	exit 1
fi
echo "examples: all passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# UCX over softib0 (UCX 1.13 in Debian 12), two processes on loopback:
#  - ucx_info -d lists softib0:1 with rc_verbs and ud_verbs, and rc_verbs
#    with 64-bit device atomics (atomic_cap IBV_ATOMIC_HCA, man softib-device.7, Atomics);
#  - ucx_perftest runs ucp_put_bw, ucp_get (bandwidth), tag_lat, tag_bw
#    and ucp_am_lat over the default transport selection (only the device
#    chosen: UCX_NET_DEVICES=softib0:1, shared memory stays in the mix) and
#    over UCX_TLS=rc_verbs,ud_verbs,self (everything through softib0);
#  - the UCT tests am_lat over rc_verbs and ud_verbs, and fadd over
#    rc_verbs (softib's atomics, not UCX's emulation).
# Each pair: both sides exit 0, the client prints its "Final:" line with the
# iterations asked for, the endpoint UCX built uses rc_verbs on softib0:1
# (UCX_LOG_LEVEL=info prints it; with UCX_TLS, nothing else but self), and
# neither side prints a softib line (a refused verb, a NAKed flush) or a
# UCX error.  The 64 KiB runs take UCX's zero-copy paths (RDMA WRITE for
# put, RDMA READ for get and the tag rendezvous) and its endpoint flush, a
# zero-length RDMA WRITE with R_Key 0 (IBA C9-88).
. "$(dirname "$0")/lib.sh"

sib_init ucx
sib_need ucx_info ucx_perftest ss timeout
sib_need_sm

LIMIT=${UCX_TEST_LIMIT:-120}
failed=()

# --- ucx_info -d: the softib0 memory domain and its transports
if sib_run info 60 "$SOFTIB" run ucx_info -d; then
	md=$(sed -n '/^# Memory domain: softib0$/,/^# Memory domain: [^s]/p' "$(sib_out info)")
	for tl in rc_verbs ud_verbs; do
		if grep -A1 -x "#      Transport: $tl" <<<"$md" | grep -qx '#         Device: softib0:1'; then
			echo "ok: ucx_info -d: $tl on softib0:1"
		else
			echo "FAIL: ucx_info -d: no $tl on softib0:1"
			failed+=("ucx_info:$tl")
		fi
	done
	rc_part=$(sed -n '/Transport: rc_verbs$/,/Transport: ud_verbs$/p' <<<"$md")
	if grep -q 'atomic_fadd: 64 bit' <<<"$rc_part" && grep -q 'atomic_cswap: 64 bit' <<<"$rc_part"; then
		echo "ok: ucx_info -d: rc_verbs on softib0:1 has 64-bit device atomics"
	else
		echo "FAIL: ucx_info -d: rc_verbs on softib0:1 lists no device atomics"
		failed+=("ucx_info:atomics")
	fi
	[ -n "$md" ] || sib_show info
else
	echo "FAIL: ucx_info -d exited ${SIB_RC[info]}"
	sib_show info
	failed+=(ucx_info)
fi

# perf ID MODE ITERS ARGS...: one ucx_perftest pair.  MODE is "default"
# (only the device chosen), "tls" (UCX_TLS=rc_verbs,ud_verbs,self) or "uct"
# (a UCT test: -x and -d in ARGS choose the transport and device).
perf()
{
	local id=$1 mode=$2 iters=$3 port env c s final

	shift 3
	env=(UCX_LOG_LEVEL=info)
	case $mode in
	default) env+=(UCX_NET_DEVICES=softib0:1) ;;
	tls) env+=(UCX_TLS=rc_verbs,ud_verbs,self) ;;
	esac
	SIB_SERVER_WRAP=(env "${env[@]}")
	SIB_CLIENT_WRAP=(env "${env[@]}")
	port=$(sib_free_port tcp) || return 1
	c=$(sib_out "$id.client") s=$(sib_out "$id.server")
	if ! sib_pair "$id" "$LIMIT" "$port" 127.0.0.1 ucx_perftest "$@" -n "$iters" -w 10; then
		failed+=("$id")
		return
	fi
	final=$(grep -E '^Final:' "$c")
	if ! [[ "$final" =~ ^Final:\ +$iters\  ]]; then
		echo "FAIL: $id: no 'Final: $iters' line"
		sib_show "$id.client"
		failed+=("$id")
		return
	fi
	case $mode in
	default | tls)
		if ! grep -Eq 'ep_cfg\[[0-9]+\]: .*rc_verbs/softib0:1' "$c"; then
			echo "FAIL: $id: UCX's endpoint does not use rc_verbs on softib0:1"
			grep ep_cfg "$c"
			failed+=("$id")
			return
		fi ;;
	esac
	if [ "$mode" = tls ] && grep -E 'ep_cfg\[[0-9]+\]:' "$c" | grep -Eq '(sysv|posix|cma|tcp)/'; then
		echo "FAIL: $id: UCX_TLS=rc_verbs,ud_verbs,self, yet the endpoint uses another transport"
		grep ep_cfg "$c"
		failed+=("$id")
		return
	fi
	if grep -Eh '^softib: |UCX  ERROR' "$c" "$s"; then
		echo "FAIL: $id: softib or UCX complained (above)"
		failed+=("$id")
		return
	fi
	echo "ok: $id: $(sed -E 's/ +/ /g' <<<"$final")"
}

for mode in default tls; do
	perf "$mode.ucp_put_bw" $mode 200 -t ucp_put_bw -s 65536
	perf "$mode.ucp_get_bw" $mode 200 -t ucp_get -s 65536
	perf "$mode.tag_lat" $mode 1000 -t tag_lat -s 8
	perf "$mode.tag_bw" $mode 200 -t tag_bw -s 65536
	perf "$mode.am_lat" $mode 1000 -t ucp_am_lat -s 8
done
perf uct.rc_verbs.am_lat uct 1000 -t am_lat -x rc_verbs -d softib0:1
perf uct.ud_verbs.am_lat uct 1000 -t am_lat -x ud_verbs -d softib0:1
perf uct.rc_verbs.fadd uct 1000 -t fadd -x rc_verbs -d softib0:1

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ucx: ${failed[*]}"
	exit 1
fi
exit 0

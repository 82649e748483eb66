#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# libfabric 1.17 over softib0:
#  - fi_info -p verbs lists softib0 (MSG, DGRAM, and verbs;ofi_rxd RDM) and
#    prints nothing from softib at the default log level, although the
#    verbs provider probes max_inline_data by creating QPs it expects to be
#    refused: those refusals show at SOFTIB_LOG=info only (man
#    softib-device.7, Errors);
#  - fi_pingpong between two processes over verbs;ofi_rxd (-e rdm), with
#    MSG and tagged transfers, its default sizes (64 B to 1 MiB) and
#    fi_pingpong's data checks (-c): both exit 0, and the client's table
#    has every size with as many completions as sends.
#  - the same over verbs;ofi_rxm (-e rdm) and the verbs MSG endpoint, which
#    connect through the RDMA CM, and over the verbs DGRAM endpoint (UD),
#    whose sizes stop at one MTU.  An ofi_rxm run whose every size passed
#    but whose final exchange ofi_rxm's own shutdown race lost (see
#    pingpong_once) runs again, up to three runs, and fails if all three
#    lose it.
. "$(dirname "$0")/lib.sh"

sib_init libfabric
sib_need fi_info fi_pingpong ss timeout
sib_need_sm

LIMIT=${LIBFABRIC_TEST_LIMIT:-120}
ITERS=20
failed=()

# --- fi_info: quiet, and softib0 in every verbs flavour
if sib_run info 60 "$SOFTIB" run fi_info -p verbs; then
	out=$(sib_out info)
	for re in 'provider: verbs$' 'domain: softib0$' 'type: FI_EP_MSG$' 'domain: softib0-dgram$' \
		'type: FI_EP_DGRAM$' 'provider: verbs;ofi_rxd$' 'type: FI_EP_RDM$'; do
		sib_expect "$out" "$re" "fi_info -p verbs" || failed+=("fi_info:$re")
	done
	if grep '^softib: ' "$out"; then
		echo "FAIL: fi_info -p verbs: softib printed the lines above at the default log level"
		failed+=(fi_info:quiet)
	else
		echo "ok: fi_info -p verbs lists softib0 and softib prints nothing"
	fi
else
	echo "FAIL: fi_info -p verbs exited ${SIB_RC[info]}"
	sib_show info
	failed+=(fi_info)
fi
# The probes happened and were refused at info.
if SOFTIB_LOG=info sib_run info_log 60 "$SOFTIB" run fi_info -p verbs &&
	grep -Eq '^softib: create_qp: max_inline_data [0-9]+ exceeds [0-9]+$' "$(sib_out info_log)"; then
	echo "ok: fi_info's inline probes are refused at SOFTIB_LOG=info" \
		"($(grep -c 'max_inline_data' "$(sib_out info_log)") lines)"
else
	echo "FAIL: at SOFTIB_LOG=info, fi_info shows no refused inline probe"
	sib_show info_log
	failed+=(fi_info:probes)
fi

# pingpong_once ID SIZES ARGS...: fi_pingpong server and client with ARGS;
# the client's table must have a row for each of SIZES.  Returns 0 (ok),
# 1 (failed, recorded) or 2: every size passed and only fi_pingpong's
# final exchange was lost to ofi_rxm's shutdown race (below).
pingpong_once()
{
	local id=$1 want=$2 port s c rows i

	shift 2
	port=$(sib_free_port tcp) || return 1
	s=$id.server c=$id.client
	sib_start "$s" "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- fi_pingpong "$@" -I "$ITERS" \
		-c -B "$port"
	if ! sib_wait_listen "$s" "$port"; then
		sib_show "$s"
		failed+=("$id")
		return 1
	fi
	sib_run "$c" "$LIMIT" "${SIB_LINEBUF[@]}" "$SOFTIB" run -- fi_pingpong "$@" -I "$ITERS" \
		-c -P "$port" 127.0.0.1
	[ "${SIB_RC[$c]}" -eq 0 ] || kill "${SIB_PID[$s]:-}" 2>/dev/null
	# A server still waiting for the final exchange long after its client
	# left is not going to get it (the race below): not a hang to wait out.
	for ((i = 0; i < 300; i++)); do
		kill -0 "${SIB_PID[$s]:-}" 2>/dev/null || break
		sleep 0.1
	done
	kill "${SIB_PID[$s]:-}" 2>/dev/null
	sib_wait "$s"
	# bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
	rows=$(awk -v n="$ITERS" '$2 == n && $3 == "=" n { printf "%s ", $1 }' "$(sib_out "$c")")
	if [ "${SIB_RC[$s]}" -ne 0 ] || [ "${SIB_RC[$c]}" -ne 0 ]; then
		# libfabric 1.17's ofi_rxm closes a connection as soon as it
		# reads the peer's DISCONNECTED, and it reads its CM events
		# after a CQ poll that found nothing: a process that loses the
		# CPU between the two finds the last completions gone with the
		# QP (fi_pingpong's "fin" exchange, after every size passed).
		# Real HCAs see it too (libfabric PR 5228); it is retried.  The
		# other side of the same race: the server got the client's fin
		# and closed before its own fin left, and the client waits for
		# it until its time runs out (CI's fresh bookworm, two suites
		# on 2 cores).
		if [ "$rows" = "$want " ] && [[ "$id" == rxm.* ]] &&
			{ [ "${SIB_RC[$c]}" -eq 0 ] ||
				{ [ "${SIB_RC[$c]}" -eq 124 ] && [ "${SIB_RC[$s]}" -eq 0 ]; } ||
				grep -q 'cq_readerr: Work Request Flushed Error' "$(sib_out "$c")"; }; then
			echo "note: $id: every size passed; the final exchange was lost to ofi_rxm's" \
				"shutdown race (server $(sib_status_text "${SIB_RC[$s]}")," \
				"client $(sib_status_text "${SIB_RC[$c]}")): once more"
			return 2
		fi
		echo "FAIL: $id: server $(sib_status_text "${SIB_RC[$s]}"), client $(sib_status_text "${SIB_RC[$c]}")"
		sib_show "$s" "$c"
		failed+=("$id")
		return 1
	fi
	if [ "$rows" != "$want " ]; then
		echo "FAIL: $id: rows with $ITERS sends and $ITERS completions for sizes '$rows'," \
			"expected '$want '"
		sib_show "$c"
		failed+=("$id")
		return 1
	fi
	if grep -h '^softib: ' "$(sib_out "$s")" "$(sib_out "$c")"; then
		echo "FAIL: $id: softib complained (above)"
		failed+=("$id")
		return 1
	fi
	echo "ok: $id: $(awk -v s="${want##* }" '$1 == s' "$(sib_out "$c")" | sed -E 's/ +/ /g')"
}

# pingpong ID SIZES ARGS...: pingpong_once, and up to twice more after the
# race (a loaded 2-core machine loses the CPU there often enough that once
# more was not always enough in CI); a third loss fails.
pingpong()
{
	local try

	for try in 1 2 3; do
		pingpong_once "$@"
		[ $? -eq 2 ] || return
	done
	echo "FAIL: $1: the final exchange was lost in all three runs"
	failed+=("$1")
}

ALL="64 256 1k 4k 64k 1m"
pingpong rxd.rdm.msg "$ALL" -p "verbs;ofi_rxd" -e rdm -m msg
pingpong rxd.rdm.tagged "$ALL" -p "verbs;ofi_rxd" -e rdm -m tagged
# Through the RDMA CM (/dev/infiniband/rdma_cm).
sib_expect "$(sib_out info)" 'provider: verbs;ofi_rxm$' "fi_info -p verbs" || failed+=("fi_info:ofi_rxm")
pingpong rxm.rdm.msg "$ALL" -p "verbs;ofi_rxm" -e rdm -m msg
pingpong rxm.rdm.tagged "$ALL" -p "verbs;ofi_rxm" -e rdm -m tagged
pingpong verbs.msg "$ALL" -p verbs -e msg
# XRC (FI_VERBS_PREFER_XRC): libfabric's verbs provider binds the id of a
# connection's other direction in the UDP port space, on the port of its
# TCP-space id; the kernel's port spaces are apart (provider/cma_port.c).
FI_VERBS_PREFER_XRC=1 pingpong rxm.xrc.msg "$ALL" -p "verbs;ofi_rxm" -e rdm -m msg
FI_VERBS_PREFER_XRC=1 pingpong verbs.xrc.msg "$ALL" -p verbs -e msg
# A datagram holds one path MTU (4096 on softib0), so fi_pingpong skips
# the larger sizes, as on any IB HCA.
pingpong verbs.dgram "64 256 1k 4k" -p verbs -e dgram

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: libfabric: ${failed[*]}"
	exit 1
fi
exit 0

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Open MPI 4.1 with pml ucx over softib0, under `softib run mpirun`: the
# programs of tests/mpi (a ping-pong, an allreduce and an alltoall, each
# checking every byte it receives) with -np 2 and -np 4 (oversubscribed on
# two cores), with UCX_TLS=rc_verbs,ud_verbs,self so that every message
# between ranks crosses softib0, and with -np 2 over UCX's default
# selection (only the device chosen; shared memory stays in the mix).
# Each run: mpirun exits 0, rank 0 prints a line per size and the
# program's OK, UCX's endpoints use rc_verbs on softib0:1, and no softib
# line and no UCX error appear.
. "$(dirname "$0")/lib.sh"

sib_init mpi
sib_need mpirun ss timeout
sib_need_sm
for p in mpi_pingpong mpi_allreduce mpi_alltoall; do
	[ -x "$B/mpi/$p" ] || sib_skip "$B/mpi/$p is not built (make builds it once mpicc is installed)"
done

LIMIT=${MPI_TEST_LIMIT:-300}
failed=()

# mpi ID NP MODE PROGRAM LINES: LINES is how many per-size lines rank 0
# prints.  MODE tls or default, as in test_ucx.sh.
mpi()
{
	local id=$1 np=$2 mode=$3 prog=$4 lines=$5 out n env=(-x UCX_LOG_LEVEL=info)

	case $mode in
	tls) env+=(-x UCX_TLS=rc_verbs,ud_verbs,self) ;;
	default) env+=(-x UCX_NET_DEVICES=softib0:1) ;;
	esac
	out=$(sib_out "$id")
	if ! sib_run "$id" "$LIMIT" "$SOFTIB" run -- mpirun --allow-run-as-root --oversubscribe \
		-np "$np" --mca pml ucx "${env[@]}" "$B/mpi/$prog"; then
		echo "FAIL: $id: mpirun $(sib_status_text "${SIB_RC[$id]}")"
		sib_show "$id"
		failed+=("$id")
		return
	fi
	n=$(grep -c "^$prog: $np " "$out")
	if ! grep -qx "$prog: OK" "$out" || [ "$n" -ne "$lines" ]; then
		echo "FAIL: $id: $n of $lines result lines, or no '$prog: OK'"
		sib_show "$id"
		failed+=("$id")
		return
	fi
	if ! grep -Eq 'ep_cfg\[[0-9]+\]: .*rc_verbs/softib0:1' "$out"; then
		echo "FAIL: $id: no UCX endpoint uses rc_verbs on softib0:1"
		grep ep_cfg "$out"
		failed+=("$id")
		return
	fi
	if [ "$mode" = tls ] && grep -E 'ep_cfg\[[0-9]+\]:' "$out" | grep -Eq '(sysv|posix|cma|tcp)/'; then
		echo "FAIL: $id: UCX_TLS=rc_verbs,ud_verbs,self, yet an endpoint uses another transport"
		grep ep_cfg "$out"
		failed+=("$id")
		return
	fi
	if grep -E '^softib: |UCX  ERROR' "$out"; then
		echo "FAIL: $id: softib or UCX complained (above)"
		failed+=("$id")
		return
	fi
	echo "ok: $id: $(grep "^$prog: $np " "$out" | tail -1)"
}

for np in 2 4; do
	mpi "np$np.pingpong" "$np" tls mpi_pingpong 11
	mpi "np$np.allreduce" "$np" tls mpi_allreduce 7
	mpi "np$np.alltoall" "$np" tls mpi_alltoall 6
done
mpi np2.default.pingpong 2 default mpi_pingpong 11
mpi np2.default.allreduce 2 default mpi_allreduce 7
mpi np2.default.alltoall 2 default mpi_alltoall 6

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: mpi: ${failed[*]}"
	exit 1
fi
exit 0

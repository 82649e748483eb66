#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The io_uring link under SOFTIB_FAULTS (issue 21 item 6): the verified RC
# stress (tests/helpers/stress_rc.c: SEND, WRITE, READ and atomics over 4
# QPs, every byte and every atomic result checked) and the UD stress
# (stress_ud.c: no corrupted datagram is ever delivered) with
# SOFTIB_LINK=uring and drops, duplicates, reorders, corruptions and
# delays.  SOFTIB_LOG=info makes each port say which backend it opened, so
# a silent fallback to sockets cannot pass as io_uring; where io_uring
# cannot be set up the test is skipped with the reason.  No time is
# asserted.
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}
rc_helper=$B/helpers/stress_rc
ud_helper=$B/helpers/stress_ud

for h in "$rc_helper" "$ud_helper"; do
	[ -x "$h" ] || { echo "skip: $h is not built"; exit 77; }
done
[ -e "$B/libsoftib.so" ] || { echo "skip: $B/libsoftib.so is not built"; exit 77; }
if "$SOFTIB" run -- true 2>/dev/null; then
	run=("$SOFTIB" run --)
else
	run=(env LD_PRELOAD="$B/libsoftib.so")
fi
bytes=64M
case "$B" in *build-san*) bytes=16M ;; esac

fail=0
# opened_uring OUTPUT NAME: every port said "(io_uring)", none "(sockets)"
opened_uring()
{
	if echo "$1" | grep -q 'io_uring is unavailable here'; then
		echo "skip: $(echo "$1" | grep -m1 'io_uring is unavailable here')"
		exit 77
	fi
	if ! echo "$1" | grep -Eq 'link: UDP .* \(io_uring\), active MTU' ||
		echo "$1" | grep -Eq 'link: UDP .* \(sockets\), active MTU'; then
		echo "FAIL: $2: not on the io_uring link:"
		echo "$1" | grep 'link: ' | head -5
		return 1
	fi
}

for seed in 5 6; do
	faults="drop=0.02,dup=0.02,reorder=0.02,corrupt=0.02,delay=0.01:200us,seed=$seed"
	echo "--- RC stress on the io_uring link: $bytes, SOFTIB_FAULTS=$faults"
	out=$(SOFTIB_LINK=uring SOFTIB_LOG=info SOFTIB_FAULTS=$faults "${run[@]}" "$rc_helper" \
		--bytes "$bytes" --seed "$seed" --watchdog 600 2>&1)
	st=$?
	echo "$out" | grep -E 'MiB in|OK:|stress_rc.*link:' | sed 's/^/    /'
	opened_uring "$out" "stress_rc seed $seed" || fail=1
	if [ $st -ne 0 ]; then
		echo "FAIL: stress_rc seed $seed (exit $st)"
		echo "$out" | tail -20
		fail=1
	elif [ "$(echo "$out" | grep -c 'OK: .* verified')" != 2 ]; then
		echo "FAIL: stress_rc seed $seed: both sides did not verify their data"
		fail=1
	elif ! echo "$out" | grep -Eq 'injected drop=[1-9][0-9]* dup=[1-9][0-9]* reorder=[1-9][0-9]* corrupt=[1-9][0-9]* delay=[1-9]'; then
		echo "FAIL: stress_rc seed $seed: not every kind of fault was injected"
		echo "$out" | grep 'injected'
		fail=1
	fi
done

faults="drop=0.02,dup=0.02,reorder=0.02,corrupt=0.05,seed=3"
echo "--- UD stress on the io_uring link: SOFTIB_FAULTS=$faults"
out=$(SOFTIB_LINK=uring SOFTIB_LOG=info SOFTIB_FAULTS=$faults "${run[@]}" "$ud_helper" \
	--count 20000 --seed 3 2>&1)
st=$?
echo "$out" | grep -E 'delivered' | sed 's/^/    /'
opened_uring "$out" "stress_ud" || fail=1
if [ $st -ne 0 ]; then
	echo "FAIL: stress_ud (exit $st)"
	echo "$out" | tail -20
	fail=1
elif ! echo "$out" | grep -q 'delivered'; then
	echo "FAIL: stress_ud: no count of delivered datagrams"
	fail=1
fi

[ $fail = 0 ] && echo "link_uring_faults: RC and UD verified on the io_uring link under faults"
exit $fail

#!/usr/bin/env bash
# softib-sm and the port bring-up between real processes on 127.0.0.1, each
# case on its own random port so nothing meets a user's SM or another test:
#   - a foreground `softib-sm --listen` prints a line per port that joins,
#     and ibv_devinfo shows PORT_ACTIVE with its LID and the SM's LID;
#   - with no SM, the first process starts one (`--daemon`); two concurrent
#     processes and a longer-lived one get three distinct LIDs from it;
#   - the daemon does not hold the caller's stdout: $(softib run ...)
#     returns while the SM still runs;
#   - several SMs started at once on one address end as exactly one;
#   - the daemon exits after --idle-exit seconds without ports;
#   - with SOFTIB_CAPTURE, a bring-up's SMPs decode as all ok (and in tshark
#     as SubnGet(NodeInfo) / SubnSet(PortInfo) when tshark is there).
set -u
command -v ibv_devinfo >/dev/null || { echo "skip: ibv_devinfo not installed (Debian: ibverbs-utils)"; exit 77; }
SM=$B/softib-sm
HOLD=$B/helpers/verbs_hold
for f in "$SOFTIB" "$SM" "$HOLD"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
tmp=$(mktemp -d)
export SOFTIB_RUN_DIR=$tmp/run # the SMs' key files: this test's own
mkdir -m 700 "$SOFTIB_RUN_DIR"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ports_used=()
sm_pids() { pgrep -f -- "softib-sm .*--listen 127.0.0.1:$1( |\$)"; }
cleanup() {
  for p in "${ports_used[@]}"; do
    for pid in $(sm_pids "$p"); do kill "$pid" 2>/dev/null; done
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh" # sib_free_port: not in the kernel's ephemeral range
# P: a UDP port of this test's own (in this shell, so that cleanup sees it).
new_port() { P=$(sib_free_port udp) || exit 1; ports_used+=("$P"); }
lid_of() { awk '$1 == "port_lid:" { print $2 }' <<<"$1"; }

# 1. Foreground SM: joins are printed, the port is ACTIVE with SM-given LIDs.
new_port
"$SM" --listen 127.0.0.1:$P >"$tmp/fg.out" 2>&1 &
fg=$!
for _ in $(seq 300); do grep -q listening "$tmp/fg.out" && break; sleep 0.1; done
out=$(SOFTIB_SM=127.0.0.1:$P "$SOFTIB" run ibv_devinfo 2>&1)
grep -q 'state:[[:space:]]*PORT_ACTIVE (4)' <<<"$out" || bad "foreground SM: port not ACTIVE: $out"
grep -q 'sm_lid:[[:space:]]*1$' <<<"$out" || bad "foreground SM: sm_lid is not 1"
lid=$(lid_of "$out")
for _ in $(seq 100); do grep -q "joined: LID $lid " "$tmp/fg.out" && break; sleep 0.1; done
cat "$tmp/fg.out"
grep -q "joined: LID $lid at 127.0.0.1:" "$tmp/fg.out" || bad "foreground SM printed no join line for LID $lid"
kill $fg; wait $fg 2>/dev/null

# 2. Auto-started SM: distinct LIDs for two concurrent processes and a
#    longer-lived one.
new_port
export SOFTIB_SM=127.0.0.1:$P
mkfifo "$tmp/hold.in"
"$SOFTIB" run "$HOLD" 60 <"$tmp/hold.in" >"$tmp/hold.out" 2>&1 &
holder=$!
exec 6>"$tmp/hold.in"
for _ in $(seq 100); do [ -s "$tmp/hold.out" ] && break; sleep 0.1; done
"$SOFTIB" run ibv_devinfo >"$tmp/a.out" 2>&1 &
a=$!
"$SOFTIB" run ibv_devinfo >"$tmp/b.out" 2>&1 &
b=$!
wait $a; wait $b
hold_lid=$(awk '{ print $2 }' "$tmp/hold.out")
la=$(lid_of "$(cat "$tmp/a.out")"); lb=$(lid_of "$(cat "$tmp/b.out")")
echo "auto-started SM: LIDs $hold_lid (long-lived), $la, $lb"
grep -q 'state 4 sm_lid 1' "$tmp/hold.out" || bad "long-lived process not ACTIVE: $(cat "$tmp/hold.out")"
for l in "$hold_lid" "$la" "$lb"; do
  [[ "$l" =~ ^[0-9]+$ ]] && [ "$l" -ge 2 ] || bad "LID '$l' is not an SM-assigned LID"
done
[ "$la" != "$lb" ] && [ "$la" != "$hold_lid" ] && [ "$lb" != "$hold_lid" ] || bad "LIDs not distinct: $hold_lid $la $lb"
n=$(sm_pids "$P" | wc -l)
[ "$n" -eq 1 ] || bad "$n SM processes on port $P, want 1"

# 3. $(...) returns although the SM it started keeps running.
new_port
out=$(SOFTIB_SM=127.0.0.1:$P "$SOFTIB" run ibv_devinfo 2>&1)
grep -q 'state:[[:space:]]*PORT_ACTIVE (4)' <<<"$out" || bad "command substitution: port not ACTIVE"
n=$(sm_pids "$P" | wc -l)
[ "$n" -eq 1 ] || bad "command substitution returned but $n SMs run on $P (want 1 still running)"
exec 6>&-; wait $holder
unset SOFTIB_SM

# 4. SMs racing for one address: exactly one remains; it exits when idle.
#    Each first process returns only once its detached SM has bound the
#    address or found it taken, so after `wait` the count is final, with
#    no sleep however slow the machine.
new_port
for i in 1 2 3 4; do "$SM" --daemon --listen 127.0.0.1:$P --idle-exit 2 & done
wait
n=$(sm_pids "$P" | wc -l)
[ "$n" -eq 1 ] || bad "$n SMs after a race on port $P, want 1"
for _ in $(seq 300); do [ -z "$(sm_pids "$P")" ] && break; sleep 0.1; done
[ -z "$(sm_pids "$P")" ] || bad "daemon with --idle-exit 2 still runs after 30 s"

# 5. Capture of a bring-up.
new_port
"$SM" --listen 127.0.0.1:$P >"$tmp/cap-sm.out" 2>&1 &
capsm=$!
for _ in $(seq 300); do grep -q listening "$tmp/cap-sm.out" && break; sleep 0.1; done
SOFTIB_SM=127.0.0.1:$P SOFTIB_CAPTURE="$tmp/bringup.pcap" "$SOFTIB" run ibv_devinfo >/dev/null 2>&1
kill $capsm; wait $capsm 2>/dev/null
dec=$("$SOFTIB" decode "$tmp/bringup.pcap" 2>&1); rc=$?
tail -3 <<<"$dec"
[ $rc -eq 0 ] || bad "softib decode of the bring-up capture exited $rc"
if command -v tshark >/dev/null; then
  ts=$(tshark -r "$tmp/bringup.pcap" -T fields -e infiniband.mad.method -e infiniband.mad.attributeid 2>/dev/null | sort -u)
  echo "tshark: $(tr '\n' ' ' <<<"$ts")"
  grep -qi '0x01[[:space:]]*0x0011' <<<"$ts" || bad "tshark sees no SubnGet(NodeInfo)"
  grep -qi '0x02[[:space:]]*0x0015' <<<"$ts" || bad "tshark sees no SubnSet(PortInfo)"
fi
[ $fail -eq 0 ] && echo "softib-sm: all checks passed"
exit $fail

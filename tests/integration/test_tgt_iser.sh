#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# tgtd (Debian's tgt, built with iSER) under softib run, with its default
# portals: iSCSI over TCP and iSER through rdma_cm, both on port 3260 of
# every address.  That needs rdma_cm's TCP port space apart from the host's
# TCP ports, as the kernel keeps it (provider/cma_port.c); before, iSER's
# bind failed ("iser_add_portal: rdma_bind_addr: Address already in use").
# Checks: tgtd's TCP listener and its rdma_cm listener on 3260, tgtadm
# lists an iSER portal, and tgtd said nothing of a failed bind.  No iSER
# initiator runs: Linux's is a kernel module (ib_iser).
. "$(dirname "$0")/lib.sh"

sib_init tgt_iser
sib_need tgtd tgtadm ss timeout
sib_need_sm
# tgtd keeps its control socket in /var/run/tgtd, which is root's.
[ "$(id -u)" = 0 ] || sib_skip "tgtd needs root: its control socket lives in /var/run/tgtd"
[ -z "$(ss -Htln "sport = :3260")" ] || sib_skip "TCP port 3260 is in use here (another iSCSI target?)"
sib_cm_listens 3260 && sib_skip "an rdma_cm id already listens on port 3260"
ldd "$(command -v tgtd)" | grep -q librdmacm || sib_skip "this tgtd is built without iSER (no librdmacm)"

ctl=$(sib_free_port tcp) || exit 1 # a control port nobody's tgtd uses
sib_start tgtd 120 "${SIB_LINEBUF[@]}" "$SOFTIB" run -- tgtd -f -C "$ctl"
for ((i = 0; i < 600; i++)); do
	[ -n "$(ss -Htln "sport = :3260")" ] && sib_cm_listens 3260 && break
	kill -0 "${SIB_PID[tgtd]}" 2>/dev/null || break
	sleep 0.1
done
fail=0
[ -n "$(ss -Htln "sport = :3260")" ] || { echo "FAIL: tgtd has no iSCSI (TCP) listener on 3260"; fail=1; }
sib_cm_listens 3260 || { echo "FAIL: tgtd has no iSER (rdma_cm) listener on 3260"; fail=1; }
portals=$(timeout 10 tgtadm -C "$ctl" --lld iser --op show --mode portal 2>&1)
echo "tgtadm --lld iser: $portals"
echo "$portals" | grep -q '^Portal: .*:3260,' || { echo "FAIL: tgtadm lists no iSER portal"; fail=1; }
if grep -q 'Address already in use' "$(sib_out tgtd)"; then
	echo "FAIL: tgtd could not bind a portal"
	fail=1
fi
ss -Hxl | grep -o '@softib-rdma_cm/[a-z]*/3260/[^ ]*' | sed 's/^/rdma_cm listener: /'
# tgtd ignores SIGTERM; it leaves when told to.
timeout 10 tgtadm -C "$ctl" --op delete --mode system >/dev/null 2>&1 ||
	for pid in $(pgrep -P "${SIB_PID[tgtd]}"); do kill -KILL "$pid"; done
{ sib_wait tgtd; } 2>/dev/null
[ $fail -eq 0 ] || sib_fail "tgtd with iSCSI and iSER on port 3260"
echo "tgt_iser: iSCSI over TCP and iSER through rdma_cm both on port 3260"

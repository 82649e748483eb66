#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# infiniband-diags, unmodified, on a switched fabric that softib-sm
# manages: softib-switch hosts tests/fabric/fat-tree-4x2.topo, softib-sm
# (CA H1) routes it, and each tool runs as CA H5 under `softib run`,
# reaching the port through libibumad and /dev/infiniband/umad31
# (provider/umad.h), while rping runs between H3 and H7: the whole set of
# diags_lib.sh (sminfo; ibnetdiscover, equal to the topology file;
# ibswitches, ibhosts, iblinkinfo, ibroute, ibtracert; smpquery nodeinfo,
# nodedesc, portinfo, switchinfo, pkeys, sl2vl, vlarb, by LID and by
# directed route; perfquery and perfquery -x of HCAs and switch ports, with
# counters that grow with the traffic; saquery -s; ibqueryerrors; ibping),
# and a query to a LID nobody has, which times out as the kernel's umad
# makes it (the request comes back with ETIMEDOUT) instead of hanging.
# test_opensm.sh runs the same set under OpenSM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/diags_lib.sh"

sib_init diags
sib_need smpquery sminfo ibnetdiscover ibswitches ibhosts ibroute ibtracert perfquery iblinkinfo \
	ibping ibqueryerrors saquery rping timeout
[ -x "$B/helpers/topo_compare" ] || sib_skip "$B/helpers/topo_compare is not built (run make)"
sib_fabric_switch fat-tree-4x2.topo
sib_start sm 300 env SOFTIB_NODE=H1 SOFTIB_LOG=info "$SM" --routing updn --sweep 0.5

dg_all softib-sm

# Nobody has LID 99: the query times out (libibmad's retries), it does not hang.
t0=$(date +%s)
sib_run nobody 60 env SOFTIB_NODE=H5 "$SOFTIB" run -- smpquery -t 200 nodeinfo 99
[ "${SIB_RC[nobody]}" -ne 0 ] && [ "${SIB_RC[nobody]}" -ne 124 ] ||
	{ sib_show nobody; sib_fail "smpquery to LID 99 exited $(sib_status_text "${SIB_RC[nobody]}")"; }
sib_expect "$(sib_out nobody)" 'timed out|failed' "the timeout" || sib_fail "no timeout reported"
echo "diags: LID 99 timed out in $(($(date +%s) - t0)) s"

kill -TERM "${SIB_PID[sm]}" "${SIB_PID[switch]}"
sib_wait sm
sib_wait switch
echo "diags: every diagnostic read the fabric softib-sm manages"

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * User MADs (the kernel's ib_umad, Documentation/infiniband/user_mad.rst):
 * /dev/infiniband/umad31 and issm31 for softib0 port 1, and their sysfs
 * directories under /sys/class/infiniband_mad, so that libibumad, and
 * through it infiniband-diags, reach the port as they reach hardware.
 *
 * A descriptor of umad31 holds up to UMAD_MAX_AGENTS agents (the ioctls
 * IB_USER_MAD_REGISTER_AGENT, UNREGISTER_AGENT, ENABLE_PKEY).  write(2) of
 * a 64-byte struct ib_user_mad header and a MAD sends it from the port
 * through the node's MAD layer (mgmt/mad_send.h); a request with a timeout
 * gets its TID's upper half from the layer, is sent again `retries` times,
 * and comes back on read(2) either as the response or, with status
 * ETIMEDOUT, as itself.  A directed-route SMP leaves as IBA C14-9:1 says.
 * read(2) returns one queued MAD with its header; the descriptor is
 * readable (poll) while any is queued.
 *
 * An agent with a method mask hears the requests of its class that
 * softib's own agents do not serve (the SMA hands it SMInfo and traps:
 * mgmt/node.h, user_sm), so OpenSM runs as a fabric's SM; issm31 held open
 * makes the port IsSM.  An SA response with RMPP active is cut into
 * segments and sent at once; a multi-segment SA answer is put together
 * (segments ACKed) before an RMPP agent reads it, ENOSPC for a buffer too
 * small.  Not yet: RMPP of other classes, the GRH.  Index 31, as
 * softib's uverbs node, keeps clear of the umad devices a host numbers
 * from 0 (libibumad finds a device by reading umadN/ibdev for N < 64).
 */
#ifndef SIB_PROVIDER_UMAD_H
#define SIB_PROVIDER_UMAD_H

#include "provider/fs_view.h"

#define SIB_UMAD_NAME "umad31"
#define SIB_ISSM_NAME "issm31"
#define SIB_UMAD_MAJOR 231
#define SIB_UMAD_MINOR 31
#define SIB_ISSM_MINOR (64 + 31)
#define SIB_UMAD_PORT 1

extern const struct softib_cdev_ops sib_umad_cdev, sib_issm_cdev;

#endif

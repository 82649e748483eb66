/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What one softib HCA offers.  These are the values query_device reports
 * and the values every create verb enforces: one place, so the two cannot
 * disagree.  They are sized for what the engine can honour in memory, not
 * copied from a hardware datasheet.
 */
#ifndef SIB_TRANSPORT_CAPS_H
#define SIB_TRANSPORT_CAPS_H

#define SIB_VENDOR_ID 0x5e1b0d      /* not 0x02c9 (mlx) or 0x1d0f (EFA): no vendor paths */
#define SIB_VENDOR_PART_ID 0x5131   /* not a ConnectX/BlueField/EFA part number */
#define SIB_HW_VER 1
#define SIB_FW_VER "0.1.0"
#define SIB_NUM_PORTS 1
#define SIB_PHYS_PORT 1

#define SIB_MAX_QP (1 << 16)
#define SIB_MAX_QP_WR 16384
#define SIB_MAX_SGE 32
#define SIB_MAX_SGE_RD 32
#define SIB_MAX_INLINE_DATA 1024
#define SIB_MAX_CQ (1 << 16)
#define SIB_MAX_CQE ((1 << 20) - 1)  /* CQ rings grow on demand, so this is honest */
#define SIB_MAX_MR (1 << 20)
#define SIB_MAX_MW (1 << 20)
#define SIB_MAX_PD (1 << 20)
#define SIB_MAX_AH (1 << 20)
#define SIB_MAX_SRQ (1 << 16)
#define SIB_MAX_SRQ_WR 16384
#define SIB_MAX_SRQ_SGE 32
#define SIB_MAX_QP_RD_ATOM 16       /* responder resources (max_dest_rd_atomic) */
#define SIB_MAX_QP_INIT_RD_ATOM 16  /* initiator depth (max_rd_atomic) */
#define SIB_MAX_XRCD (1 << 16)
/* Device memory (provider/dm.c): what all of a process's DMs may hold, as a
 * ConnectX's on-chip memory (MEMIC) bounds its DMs; the alignment a DM may
 * ask for, as 2^log_align_req bytes (a page). */
#define SIB_MAX_DM_SIZE (256u << 10)
/* device_cap_flags_ex bits of IBA 1.5 (the kernel's IB_UVERBS_DEVICE_*,
 * which rdma-core does not name): FLUSH to global visibility, ATOMIC WRITE. */
#define SIB_DEVICE_FLUSH_GLOBAL (1ull << 38)
#define SIB_DEVICE_ATOMIC_WRITE (1ull << 40)
#define SIB_MAX_DM_LOG_ALIGN 12
/* Multicast (transport/mcast.h): groups a port's QPs attach to, QPs per
 * group, attachments in all.  The tables are searched linearly, so they
 * are kept to sizes where that costs nothing next to a packet. */
#define SIB_MAX_MCAST_GRP 1024
#define SIB_MAX_MCAST_QP_ATTACH 64
#define SIB_MAX_TOTAL_MCAST_QP_ATTACH 8192
/* The P_Key table (PortInfo / NodeInfo:PartitionCap): index 0 = 0xffff, full
 * member of the default partition, until the SM Sets it (softib-sm -P). */
#define SIB_MAX_PKEYS 16
/* GID[0] = fe80::<port GUID>; 1..7 are alias GUID slots (GUIDCap, IBA
 * 14.2.5.5) that no SM fills here, so they stay empty, as on hardware whose
 * table is larger than what is in use (pyverbs probes an empty index). */
#define SIB_GID_TBL_LEN 8
#define SIB_MAX_MSG_SZ (1u << 31)
#define SIB_MAX_MR_SIZE (1ull << 46)
#define SIB_LOCAL_CA_ACK_DELAY 15
#define SIB_NUM_COMP_VECTORS 1
#define SIB_HCA_CORE_CLOCK_KHZ 1000000 /* completion timestamps count nanoseconds */

/* 24-bit key/QP spaces (IBA 9.x: QPN, and 10.6 for L_Key/R_Key). */
#define SIB_QPN_MASK 0xffffffu

#endif

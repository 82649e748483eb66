/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One HCA port as the subnet sees it: state, LID, SM LID, GID and P_Key
 * tables, MTU, counters (IBA Vol 1 14.2.5.6 PortInfo).  Pure bookkeeping:
 * no I/O here; the link and the subnet management agent drive it.
 */
#ifndef SIB_TRANSPORT_PORT_H
#define SIB_TRANSPORT_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/caps.h"

/* PortInfo:PortState (IBA 14.2.5.6). */
enum sib_port_state {
	SIB_PORT_DOWN = 1,
	SIB_PORT_INIT = 2,
	SIB_PORT_ARMED = 3,
	SIB_PORT_ACTIVE = 4,
};

/* MTU encodings (IBA 14.2.5.6 NeighborMTU): 1=256 ... 5=4096. */
enum sib_mtu {
	SIB_MTU_256 = 1,
	SIB_MTU_512 = 2,
	SIB_MTU_1024 = 3,
	SIB_MTU_2048 = 4,
	SIB_MTU_4096 = 5,
};

#define SIB_LID_UNICAST_MAX 0xbfff /* IBA 4.1.3: unicast LIDs 0x0001..0xBFFF */
#define SIB_PKEY_DEFAULT 0xffff    /* full member of the default partition */

/* PortCounters (IBA 16.1.3.5); filled by the link from the next issue on. */
struct sib_port_counters {
	uint64_t PortXmitData;
	uint64_t PortRcvData;
	uint64_t PortXmitPkts;
	uint64_t PortRcvPkts;
	uint64_t PortRcvErrors;
	uint64_t PortXmitDiscards;
	uint64_t SymbolErrorCounter;
};

struct sib_port {
	uint8_t port_num; /* 1-based, as verbs number ports */
	enum sib_port_state state;
	uint16_t LID;
	uint16_t SMLID;
	uint8_t LMC;
	uint8_t SMSL;
	uint8_t SubnetTimeOut; /* PortInfo:SubnetTimeOut, as the SM set it */
	uint64_t port_guid;
	uint8_t GID[SIB_GID_TBL_LEN][16]; /* network byte order */
	uint16_t P_Key[SIB_MAX_PKEYS];
	enum sib_mtu max_mtu;
	enum sib_mtu active_mtu;
	struct sib_port_counters counters;
};

/* A port with no LID yet: DOWN, GID[0] = fe80::<port_guid>, P_Key[0] = 0xffff. */
void sib_port_init(struct sib_port *port, uint8_t port_num, uint64_t port_guid);

/* Record the LID the SM assigned; the port becomes ACTIVE.  Returns true when
 * this was a transition into ACTIVE (the caller raises PORT_ACTIVE). */
bool sib_port_set_lid(struct sib_port *port, uint16_t lid, uint16_t sm_lid);

/*
 * With SOFTIB_SM=none (no subnet manager) a process is its own subnet of one
 * and takes a LID derived from its pid, in 1..0xBFFF.  Two processes whose
 * pids are equal modulo 0xBFFF get the same LID: only the SM makes LIDs
 * unique.
 */
uint16_t sib_port_local_lid(pid_t pid);

/* GID/P_Key table reads; -1 when index is outside the table.  An empty GID
 * slot reads as all zeros. */
int sib_port_gid(const struct sib_port *port, unsigned index, uint8_t gid[16]);
/* True when index is inside the GID table and the slot holds a GID. */
bool sib_port_gid_valid(const struct sib_port *port, unsigned index);
int sib_port_pkey(const struct sib_port *port, unsigned index, uint16_t *pkey);

/* MTU encoding to bytes (0 for an invalid encoding). */
unsigned sib_mtu_bytes(enum sib_mtu mtu);

#endif

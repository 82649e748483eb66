/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fabric/: the programs that make a subnet -- softib-sm (sm.c, sa.c,
 * sm_main.c).  fabric/ may use base/, wire/, link/, transport/ (the port
 * record's encodings) and mgmt/ (MAD framing), never an HCA.
 *
 * softib-sm's engine: a subnet manager (IBA 14.4) and subnet administrator
 * (IBA 15) for a fabric without switches, where every port is one UDP
 * endpoint and the SM is one too (DESIGN.md section 5, softib-sm(8)).
 *
 * Discovery.  A port whose link comes up sends a trap (Notice 128) to the
 * SM's endpoint.  The SM represses it and configures the port, one request
 * at a time, each retried SIB_SM_RETRIES times after SIB_SM_TIMEOUT_NS:
 *   DR SubnGet(NodeInfo)    -> port GUID; the LID is chosen
 *   DR SubnGet(PortInfo)    -> MTUCap
 *   DR SubnSet(PortInfo)    LID, MasterSMLID, SubnetTimeOut, PortState ARMED
 *   LID-routed SubnSet(PortInfo)  PortState ACTIVE
 * Directed-route SMPs travel with permissive LIDs, HopCount 1 (the SM's
 * port is cabled straight to the port's).  Sweep: every sweep interval a
 * LID-routed SubnGet(PortInfo) to each ACTIVE port; a port that misses
 * SIB_SM_MAX_MISSED sweeps in a row is dropped and its LID freed (kept
 * aside for its GUID while unused, so a port that comes back gets it back).
 *
 * Time is whatever the caller passes to sib_sm_step(): the engine reads no
 * clock, so tests can run sweeps without waiting.
 */
#ifndef SIB_FABRIC_SM_H
#define SIB_FABRIC_SM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"
#include "transport/port.h"

struct sib_sa_state;

#define SIB_SM_TIMEOUT_NS (200ull * 1000000ull)
#define SIB_SM_RETRIES 3
#define SIB_SM_MAX_MISSED 3
#define SIB_SM_SWEEP_NS_DEFAULT (2000ull * 1000000ull)
#define SIB_SM_SUBNET_TIMEOUT 18 /* 4.096 us * 2^18 = 1 s, IBA 14.2.5.6 */
#define SIB_SM_PACKET_LIFE_TIME 14 /* PathRecord: 4.096 us * 2^14 = 67 ms */
#define SIB_SM_RATE 7		   /* PathRecord Rate: 40 Gb/s, 4X QDR as ports report */

enum sib_sm_port_state {
	SIB_SMP_FREE = 0,
	SIB_SMP_GET_NODE_INFO,
	SIB_SMP_GET_PORT_INFO,
	SIB_SMP_SET_ARMED,
	SIB_SMP_SET_ACTIVE,
	SIB_SMP_ACTIVE,
};

struct sib_sm_port {
	enum sib_sm_port_state state;
	struct sib_endpoint ep;
	uint64_t guid; /* port GUID; 0 until NodeInfo came back */
	uint64_t node_guid;
	uint16_t lid;
	uint8_t mtu_cap; /* enum ib_mtu_code */
	/* the one outstanding request */
	uint64_t tid;
	uint64_t deadline_ns;
	unsigned tries;
	unsigned missed; /* sweeps in a row without an answer */
	bool sweep_pending;
};

/* A GUID's last LID, kept for reuse. */
struct sib_sm_lid_memory {
	uint64_t guid;
	uint16_t lid;
};

struct sib_sm {
	struct sib_link *link;
	uint16_t lid;
	uint64_t guid;
	uint64_t sweep_ns;
	uint64_t now_ns;
	uint64_t next_sweep_ns;
	uint64_t tid_next;
	struct sib_sm_port *ports;
	unsigned nports, cap;
	struct sib_sm_lid_memory *memory;
	unsigned nmemory, memory_cap;
	uint8_t lid_used[(SIB_LID_UNICAST_MAX + 1 + 7) / 8];
	uint16_t next_lid;
	FILE *out; /* a line per port joined or left; NULL: silent */
	struct sib_sa_state *sa; /* ServiceRecords, RMPP transfers (fabric/sa.h) */
	/* counters */
	uint64_t joins, leaves, sa_queries, dropped;
};

int sib_sm_init(struct sib_sm *sm, struct sib_link *link, uint64_t guid, uint64_t now_ns);
void sib_sm_fini(struct sib_sm *sm); /* does not close the link */

/* Drains the link, then runs timeouts and the sweep due at now_ns.
 * Returns how many packets it handled. */
int sib_sm_step(struct sib_sm *sm, uint64_t now_ns);
/* When sib_sm_step should run next at the latest (absolute ns). */
uint64_t sib_sm_next_deadline(const struct sib_sm *sm);

/* The one datagram handler (tests feed it directly). */
void sib_sm_rx(struct sib_sm *sm, const uint8_t *buf, size_t len, const struct sib_endpoint *from);

/* Ports in state ACTIVE / known at all. */
unsigned sib_sm_active_ports(const struct sib_sm *sm);
unsigned sib_sm_known_ports(const struct sib_sm *sm);
/* Lookups (NULL when none). */
struct sib_sm_port *sib_sm_port_by_lid(struct sib_sm *sm, uint16_t lid);
struct sib_sm_port *sib_sm_port_by_guid(struct sib_sm *sm, uint64_t guid);

/* The SA (fabric/sa.c): answers one QP1 request. */
void sib_sa_serve(struct sib_sm *sm, const struct sib_mad_addr *a, const uint8_t *mad,
		  const struct sib_endpoint *from);

/* The port's GID[0]: fe80::<port GUID>. */
void sib_sm_port_gid(const struct sib_sm_port *p, uint8_t gid[16]);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fabric/: the programs that make a subnet -- softib-sm (sm.c, sa.c,
 * sm_main.c).  fabric/ may use base/, wire/, link/, transport/ (the port
 * record's encodings) and mgmt/ (MAD framing), never an HCA.
 *
 * softib-sm's engine: a subnet manager (IBA 14.4) and subnet administrator
 * (IBA 15) for a fabric without switches, where every port is one UDP
 * endpoint and the SM is one too (docs/architecture.md section 5, softib-sm(8)).
 *
 * Discovery.  A port whose link comes up sends a trap (Notice 128) to the
 * SM's endpoint.  The SM represses it and configures the port, one request
 * at a time, each sent at most SIB_SM_RETRIES times, SIB_SM_TIMEOUT_NS
 * apart, with one TID (sends of the SM's MAD layer, mgmt/mad_send.h):
 *   DR SubnGet(NodeInfo)    -> port GUID
 *   DR SubnGet(PortInfo)    -> MTUCap, the port's LID; the LID is chosen
 *   DR SubnSet(P_KeyTable)  the port's partitions (partitions.h)
 *   DR SubnSet(PortInfo)    LID, MasterSMLID, SubnetTimeOut, M_Key,
 *                           M_KeyProtectBits, M_KeyLeasePeriod, ARMED
 *   LID-routed SubnSet(PortInfo)  PortState ACTIVE
 * Directed-route SMPs travel with permissive LIDs, HopCount 1 (the SM's
 * port is cabled straight to the port's).  Every SMP carries the subnet's
 * M_Key.  Sweep: every sweep interval a LID-routed SubnGet(PortInfo) to
 * each ACTIVE port; a port that misses SIB_SM_MAX_MISSED sweeps in a row
 * is dropped and its LID freed (kept aside for its GUID while unused, so a
 * port that comes back gets it back).
 *
 * What the SM believes (IBA 14.4, the rules that keep a subnet from being
 * hijacked):
 *   - a response counts only when its TID is that of a request still out
 *     and it comes from the endpoint the request went to (the MAD layer's
 *     rule; anything else counts in resp_misrouted);
 *   - a port GUID stays bound to the endpoint the SM first learned it at
 *     until that port is gone (it fails a sweep, or a probe the SM sends
 *     when the GUID is claimed from elsewhere); a claim of a live port's
 *     GUID from another endpoint is refused and logged;
 *   - an SA request counts only when it comes from the endpoint of the
 *     port its SLID names, so the requester the SA acts for (whose records
 *     it may change, whose multicast memberships it may end) is the checked
 *     source, never a field a stranger can write (sa.c; counted in
 *     sa_wrong_source);
 *   - a port keeps the LID it reports (PortInfo:LID, as after an SM
 *     restart) when no other live port holds it, else gets its GUID's old
 *     LID, else a fresh one (OpenSM's guid2lid does the same).
 *
 * Several SMs (SMInfo, IBA 14.4.1): the other SM addresses of the subnet
 * (peers) are asked for SMInfo with our SM_Key as M_Key (a round: each
 * asked as a port's request is, until it answers or gives up); one that answers
 * with the same SM_Key is of this subnet.  An SM that finds a MASTER, or a
 * peer of higher precedence (Priority, then the lower GUID), stands by:
 * it configures nothing and answers SMInfo STANDBY; when no master has
 * answered for SIB_SM_MAX_MISSED sweeps it becomes MASTER.  A master that
 * finds another master of higher precedence steps down.
 *
 * Time is whatever the caller passes to sib_sm_step(): the engine reads no
 * clock and no file (sm_main.c keeps the keys and the LID cache), so tests
 * can run sweeps without waiting.  The MAD layer runs on that time too: its
 * timeouts run in sib_sm_step, its next one is in sib_sm_next_deadline.
 */
#ifndef SIB_FABRIC_SM_H
#define SIB_FABRIC_SM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fabric/sm_admit.h"
#include "link/link.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_packet.h"
#include "mgmt/mad_send.h"
#include "transport/port.h"

struct sib_sa_state;
struct sib_partitions;

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
	SIB_SMP_SET_PKEYS, /* SubnSet(P_KeyTable): its partitions (partitions.h) */
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
	uint64_t port_m_key; /* the M_Key the port holds, when not ours (read at
			      * ProtectBits 0 after its lease ran out) */
	uint64_t tid;	 /* the one request out (mad_send.h); 0: none */
	unsigned missed; /* sweeps in a row without an answer */
	bool challenged; /* its GUID was claimed elsewhere: one miss drops it */
	uint16_t joined_lid; /* the LID its "joined" line said */
	bool was_active;     /* ACTIVE when the SM found it (its SM restarted) */
	bool seen;	     /* on a fabric: found by the sweep under way */
};

/* Another SM address of the subnet (SMInfo polling). */
#define SIB_SM_MAX_PEERS 4
struct sib_sm_peer {
	struct sib_endpoint ep;
	bool asking;	/* its SMInfo query of this round is out */
	bool answered;	/* this round */
	bool same_subnet; /* it answered with our SM_Key */
	uint8_t state;	/* enum ib_sm_state, as it answered */
	uint8_t priority;
	uint64_t guid;
	bool foreign_logged;
};

/* A GUID's last LID, kept for reuse; at most SIB_SM_MEMORY_MAX of them. */
#define SIB_SM_MEMORY_MAX 4096
struct sib_sm_lid_memory {
	uint64_t guid;
	uint16_t lid;
};

struct sib_sm {
	struct sib_link *link;
	uint16_t lid;
	uint64_t guid;
	/* The subnet's keys (sm_main.c keeps them in a file, softib-sm(8)). */
	uint64_t sm_key;      /* SMInfo:SM_Key */
	uint64_t m_key;	      /* the M_Key every port gets; 0: none */
	uint8_t protect_bits; /* M_KeyProtectBits */
	uint16_t lease_period; /* M_KeyLeasePeriod, seconds */
	uint8_t priority;     /* SMInfo:Priority, 0..15 */
	uint8_t state;	      /* enum ib_sm_state: MASTER, STANDBY, DISCOVERING */
	uint32_t act_count;   /* SMInfo:ActCount: SMPs sent */
	struct sib_sm_peer peers[SIB_SM_MAX_PEERS];
	unsigned npeers;
	unsigned master_missed; /* standby: polls in a row no master answered */
	bool polling;		/* a round of SMInfo polls is out */
	uint64_t sweep_ns;
	uint64_t now_ns;
	uint64_t next_sweep_ns;
	struct sib_mad_layer mads; /* the SM's agents and its requests out */
	struct sib_sm_port *ports;
	unsigned nports, cap;
	struct sib_sm_lid_memory *memory;
	unsigned nmemory, memory_cap;
	uint8_t lid_used[(SIB_LID_UNICAST_MAX + 1 + 7) / 8];
	uint16_t next_lid;
	FILE *out; /* a line per port joined or left; NULL: silent */
	uint64_t lid_changes; /* GUID -> LID bindings changed (the LID cache saves them) */
	struct sib_sa_state *sa; /* ServiceRecords, RMPP transfers (fabric/sa.h) */
	const struct sib_partitions *partitions; /* NULL: the default (partitions.h) */
	uint64_t bad_p_key_traps;		 /* trap 257 from ports */
	/* counters */
	uint64_t joins, leaves, sa_queries, dropped;
	uint64_t sa_wrong_source; /* SA requests not from where their SLID lives (sa.c) */
	uint64_t resp_misrouted;  /* responses no request took: unknown TID, wrong endpoint */
	uint64_t claims_refused;  /* NodeInfo claiming a live port's GUID */
	uint64_t bad_m_key_traps; /* trap 256 from ports */
	struct sib_sm_admit admit; /* how much the SM takes from whom (sm_admit.h) */
	/* On a fabric (sm_fabric.c) the sweeps find the ports and this SM
	 * only serves the SA for them: every port's endpoint is the switch,
	 * whose CA ports check the SLID, and the sweeps write the switches'
	 * multicast forwarding tables (mft_plan.h), not the ports' lists. */
	bool fabric;
};

int sib_sm_init(struct sib_sm *sm, struct sib_link *link, uint64_t guid, uint64_t now_ns);
void sib_sm_fini(struct sib_sm *sm); /* does not close the link */

/* Another SM address of this subnet (before the first step): the SM starts
 * DISCOVERING and asks it.  -ENOSPC beyond SIB_SM_MAX_PEERS. */
int sib_sm_add_peer(struct sib_sm *sm, const struct sib_endpoint *ep);

/* The LID cache (sm_main.c's file): a GUID's LID to give back when that
 * port comes; and every binding the SM knows, live ports first. */
void sib_sm_remember_lid(struct sib_sm *sm, uint64_t guid, uint16_t lid);
typedef void (*sib_sm_lid_fn)(void *arg, uint64_t guid, uint16_t lid);
void sib_sm_lids_foreach(const struct sib_sm *sm, sib_sm_lid_fn fn, void *arg);

/* "MASTER", "STANDBY", "DISCOVERING", "NOT_ACTIVE". */
const char *sib_sm_state_str(uint8_t state);

/* Drains the link, then runs timeouts and the sweep due at now_ns.
 * Returns how many packets it handled. */
int sib_sm_step(struct sib_sm *sm, uint64_t now_ns);
/* Every ACTIVE port is configured again (its P_Key table too): after the
 * partitions changed.  LIDs stay. */
void sib_sm_reconfigure(struct sib_sm *sm);
/* When sib_sm_step should run next at the latest (absolute ns). */
uint64_t sib_sm_next_deadline(struct sib_sm *sm);

/* Sends an SMP of the SM's (mad, with address a) to dst through its MAD
 * layer, under the agent of the SMP's class: each wait SIB_SM_TIMEOUT_NS,
 * sent again up to retries times; fn hears the answer or the end
 * (mgmt/mad_send.h).  sib_mad_post's result; *tid (may be NULL) its TID. */
int sib_sm_post(struct sib_sm *sm, const struct sib_mad_addr *a, const struct sib_endpoint *dst,
		const uint8_t *mad, unsigned retries, sib_mad_send_fn fn, void *context,
		uint64_t *tid);

/* The one datagram handler (tests feed it directly). */
void sib_sm_rx(struct sib_sm *sm, const uint8_t *buf, size_t len, const struct sib_endpoint *from);

/* Ports in state ACTIVE / known at all. */
unsigned sib_sm_active_ports(const struct sib_sm *sm);
unsigned sib_sm_known_ports(const struct sib_sm *sm);
/* Lookups (NULL when none). */
struct sib_sm_port *sib_sm_port_by_lid(struct sib_sm *sm, uint16_t lid);
struct sib_sm_port *sib_sm_port_by_guid(struct sib_sm *sm, uint64_t guid);

/*
 * Ports a fabric's sweep found (sm_fabric.c): the SA answers for them as
 * ACTIVE ports at endpoint ep, and this SM neither configures nor sweeps
 * them.  sib_sm_port_found marks one found by the sweep under way (new, or
 * with its LID changed); sib_sm_sweep_end forgets, with their SA records,
 * the ports not found by SIB_SM_MAX_MISSED sweeps in a row (as a direct
 * SM forgets ports that miss its sweeps).  -ENOSPC when the table is full.
 */
int sib_sm_port_found(struct sib_sm *sm, uint64_t guid, uint64_t node_guid, uint16_t lid,
		      uint8_t mtu_cap, const struct sib_endpoint *ep);
void sib_sm_sweep_end(struct sib_sm *sm);

/* The SA (fabric/sa.c): answers one QP1 request. */
void sib_sa_serve(struct sib_sm *sm, const struct sib_mad_addr *a, const uint8_t *mad,
		  const struct sib_endpoint *from);

/* The partitions in force: the file's, or the default (partitions.h). */
const struct sib_partitions *sib_sm_partitions(const struct sib_sm *sm);

/* The port's GID[0]: fe80::<port GUID>. */
void sib_sm_port_gid(const struct sib_sm_port *p, uint8_t gid[16]);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's multicast groups: the SA's MCMemberRecord (IBA 15.2.5.17),
 * sa_mcast.c.  A port joins a group with SubnAdmSet, leaves with
 * SubnAdmDelete, and anyone queries with SubnAdmGet / SubnAdmGetTable.
 *
 * The rules kept here (IBA 15.2.5.17; OpenSM's osm_sa_mcmember_record.c
 * applies the same component rules):
 *   - a join names MGID, PortGID and JoinState in its ComponentMask, else
 *     ERR_REQ_INSUFFICIENT_COMPONENTS; PortGID is the requester's own port
 *     (ProxyJoin is not offered), else ERR_REQ_DENIED;
 *   - JoinState is one or more of FullMember (1), NonMember (2),
 *     SendOnlyNonMember (4); a port joining again adds bits, a Delete
 *     takes away the bits it names, and a port with no bits left is no
 *     member;
 *   - a join to an MGID nobody created creates the group; the creator must
 *     be a FullMember and give Q_Key, TClass, P_Key, FlowLabel and SL
 *     (else ERR_REQ_INSUFFICIENT_COMPONENTS); MGID 0 asks the SA to choose
 *     one; MTU and Rate follow their selectors; the SA gives the MLID;
 *   - a join to an existing group must agree with it in every component
 *     it names (selectors for MTU, Rate, PacketLifeTime), else
 *     ERR_REQ_INVALID;
 *   - rights: FullMember and NonMember ports receive the group's packets;
 *     a SendOnlyNonMember only sends; every member may send;
 *   - a group is deleted when its last member leaves, except the IPoIB
 *     broadcast group ff12:401b:ffff::ffff:ffff (RFC 4391 section 4: the
 *     IPv4 broadcast group of the default partition, link-local scope),
 *     which the SA keeps from the start, with Q_Key 0x0B1B and MTU 2048,
 *     as OpenSM does for IPoIB partitions;
 *   - a port joins only groups of a partition it is in (its P_Key table
 *     as partitions.h computes it), else ERR_REQ_INVALID; each partition
 *     flagged ipoib has its broadcast group too (ff12:401b:<P_Key>::ffff:ffff);
 *   - a port the SM drops leaves every group (sib_sa_mcast_port_gone);
 *   - a join or leave is answered once every live member port has
 *     installed the group's new port list (sm_mcast.c programs them), or
 *     after SIB_SA_MCAST_WAIT_NS: a program that hears it joined
 *     can send to every member at once, and be reached by them.
 */
#ifndef SIB_FABRIC_SA_MCAST_H
#define SIB_FABRIC_SA_MCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/sa.h"

#define SIB_SA_MCAST_GROUPS_MAX 1024 /* MLIDs 0xC000.. as the HCAs' max_mcast_grp */
#define SIB_SA_MCAST_MEMBERS_MAX 4096
/* One port's memberships (groups it created included): no port can take
 * the subnet's groups or memberships for itself. */
#define SIB_SA_MCAST_MEMBERS_PER_PORT 256
#define SIB_IPOIB_QKEY 0x0b1bu

struct sib_sa_mcmember {
	uint64_t port_guid;
	uint8_t PortGID[16];
	uint8_t JoinState;
	/* sm_mcast.c: the group generation the port has installed, the one
	 * its Sets carry while they are out (0: none), and where they went. */
	uint64_t programmed_gen, pending_gen;
	struct sib_endpoint ep;
};

/* A port that left a group: the SM tells it the MLID is gone (sent: the
 * Set is out, to ep). */
struct sib_sa_mcast_departed {
	uint64_t port_guid;
	uint16_t mlid;
	bool sent;
	struct sib_endpoint ep;
};

struct sib_sa_mgroup {
	struct ib_mcmember_record rec; /* the group's parameters; PortGID, JoinState 0 */
	bool well_known;	       /* kept without members */
	struct sib_sa_mcmember *members;
	unsigned nmembers, cap;
	uint64_t generation; /* changes with the member ports (sm_mcast.c programs them) */
};

/* A join or leave answered once the member ports installed its change;
 * a port on a loaded machine may take long to, and the SM sends the list
 * again every SIB_SM_TIMEOUT_NS meanwhile: within the SA client's retries
 * (mgmt/sa_client.h), it waits up to 3 s. */
#define SIB_SA_MCAST_WAITS_MAX 256
#define SIB_SA_MCAST_WAIT_NS (3000ull * 1000000ull)
struct sib_sa_mcast_wait {
	struct sib_mad_addr a;
	struct sib_endpoint from;
	struct ib_sa_mad m;
	uint8_t method;
	struct ib_mcmember_record rec;
	uint64_t gen, deadline_ns;
};

struct sib_sa_mcast {
	struct sib_sa_mgroup *groups;
	unsigned ngroups, cap;
	uint32_t next_mgid; /* SA-chosen MGIDs */
	uint64_t generation;
	uint64_t joins, leaves, refused; /* refused: any error status */
	uint64_t no_room; /* joins refused for SIB_SA_MCAST_MEMBERS_PER_PORT or _MAX */
	struct sib_sa_mcast_departed *departed;
	unsigned ndeparted, departed_cap;
	uint64_t programmed, program_sets; /* ports that installed a list; Sets sent */
	struct sib_sa_mcast_wait *waits;
	unsigned nwaits, waits_cap;
};

/* The groups, made (with the IPoIB broadcast group) on first use. */
struct sib_sa_mcast *sib_sa_mcast(struct sib_sm *sm);
void sib_sa_mcast_free(struct sib_sm *sm);

/* An MCMemberRecord request (Set, Delete, Get, GetTable). */
void sib_sa_mcmember_record(struct sib_sm *sm, const struct sib_mad_addr *a,
			    const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method);
/* The port leaves every group (the SM dropped it). */
void sib_sa_mcast_port_gone(struct sib_sm *sm, uint64_t port_guid);
/*
 * sm_mcast.c: the SM programs SoftibMulticastPorts (mgmt/mcast_ports.h)
 * into every member port whose list is older than its group's, with the
 * ports that receive (FullMember, NonMember); a Set not answered with
 * Installed is sent again after SIB_SM_TIMEOUT_NS while the port lives
 * (sends of the SM's MAD layer; a newer list ends the older one's).  A
 * port that left hears that the MLID is gone (up to SIB_SM_RETRIES).
 */
void sib_sm_mcast_program(struct sib_sm *sm);
/* When a held join or leave is next due an answer anyway (0: never). */
uint64_t sib_sm_mcast_next_deadline(const struct sib_sm *sm);
/* sa_mcast.c: a port left mlid (not gone from the subnet): tell it. */
void sib_sa_mcast_departed_add(struct sib_sa_mcast *mc, uint64_t port_guid, uint16_t mlid);

/* Answers the joins and leaves whose change every member installed (or
 * whose wait ran out). */
void sib_sa_mcast_answer_waiting(struct sib_sm *sm);

/* The group of MLID mlid, or NULL. */
struct sib_sa_mgroup *sib_sa_mcast_by_mlid(struct sib_sm *sm, uint16_t mlid);

#endif

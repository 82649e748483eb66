/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mgmt/: the agents on QP0 and QP1 of a node's ports (IBA Vol 1 chapters
 * 13 to 15).  The subnet management agent (sma.c), the SA client
 * (sa_client.c) and port bring-up (port_up.c) are peers that never name
 * each other's packets: each registers for its management classes with
 * the MAD layer (mad_agent.c), which hands it what arrives, and sends its
 * requests through the layer's send side (mad_send.c: TIDs, timeouts,
 * retries, the answer matched); mad_packet.c frames MADs into packets, for
 * the ports and for softib-sm alike.  The connection manager and multicast
 * membership come here too.
 *
 * mgmt/ may use base/, wire/, link/ and transport/.  It knows nothing of
 * the HCA that composes it (hca/): what it needs from it (timers, port
 * events, a progress pass) comes through struct sib_node_ops.
 *
 * This header: one IBA node as its management agents see it.  The node's
 * GUIDs and its ports (the PortInfo the SMA serves, the link each port
 * sends MADs on, what each port knows of its subnet manager), the lock
 * that guards them, and the SA client's state.  The HCA embeds one.
 */
#ifndef SIB_MGMT_NODE_H
#define SIB_MGMT_NODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/timer.h"
#include "link/link.h"
#include "mgmt/mad_agent.h"
#include "mgmt/mad_wait.h"
#include "mgmt/sa_client.h"
#include "transport/caps.h"
#include "transport/events.h"
#include "transport/port.h"
#include "wire/smp.h"

struct sib_node;
struct sib_cm;
struct sib_mcast_stages;

/* How many SM addresses SOFTIB_SM may list (a master and its standbys). */
#define SIB_SM_MAX_ADDRS 4

/*
 * A port's management side (sma.c, port_up.c): its link, its M_Key, and
 * what it knows of the subnet manager.  Guarded by the node's lock.
 *
 * The SM a port obeys for traps and SA queries (sm_ep) is one of the
 * addresses it was configured with (sm_addr, from SOFTIB_SM), never the
 * sender of some SMP: it is the one that answers SubnGet(SMInfo) from its
 * own address as MASTER and, once the port holds an M_Key, has shown that
 * M_Key in an SMP (port_up.h).
 */
struct sib_port_mgmt {
	struct sib_node *node;
	unsigned port_num;
	struct sib_link *link;	   /* the port's emulated link; NULL: none could be opened */
	struct sib_endpoint sm_addr[SIB_SM_MAX_ADDRS]; /* SOFTIB_SM, in order */
	unsigned n_sm_addr;
	bool sm_keyed[SIB_SM_MAX_ADDRS]; /* sm_addr[i] sent us an SMP with our M_Key */
	struct sib_endpoint sm_ep; /* the verified SM (sm_addr[sm_index]); family 0: none yet */
	unsigned sm_index;
	bool sm_none;		   /* SOFTIB_SM=none: no SM, a subnet of one */
	bool fabric;		   /* cabled to a softib-switch (SOFTIB_FABRIC): every
				    * packet goes to, and comes from, the cable's far
				    * end, and the SM is behind it (mgmt/cable_port.h) */
	struct sib_endpoint cable; /* the switch, when fabric (both set at creation,
				    * never changed: read without the lock) */
	bool sm_heard;		   /* sm_ep is set: an SM verified itself */
	bool sm_silent;		   /* ... and has not spoken for SIB_PORT_SM_SILENCE_NS */
	uint64_t sminfo_tid[SIB_SM_MAX_ADDRS]; /* our SubnGet(SMInfo) out to sm_addr[i]; 0: none */
	uint16_t notice_count;	   /* Notice:NoticeCount of our traps */
	uint64_t up_since_ns;	   /* when bring-up started */
	uint64_t last_smp_ns;	   /* when the verified SM last spoke to us */
	struct sib_timer trap_timer;
	char node_desc[64];	   /* NodeDescription, NUL-padded */
	/* As the SM set them; VL0 is the only data VL, so nothing reads them
	 * yet (virtual lanes come with their own issue). */
	uint8_t sl2vl[IB_SL2VL_BYTES];
	uint8_t vl_arb[IB_VL_ARB_BLOCKS][IB_VL_ARB_BLOCK_BYTES];

	/* M_Key protection (IBA 14.2.4), as the SM set it with SubnSet(PortInfo). */
	uint64_t M_Key;		   /* 0: no protection yet */
	uint8_t M_KeyProtectBits;
	uint16_t M_KeyLeasePeriod; /* seconds; 0: the lease never runs out */
	uint16_t M_KeyViolations;  /* saturates at 0xffff */
	uint64_t mkey_lease_end_ns; /* a violation started the lease; 0: not running */
	uint64_t mkey_warn_ns;	   /* the last violation that was logged at warn */
	uint64_t mkey_trap_ns;	   /* the last trap 256 sent */
	uint64_t pkey_trap_ns;	   /* the last trap 257 sent */
	uint64_t smp_refused;	   /* SMPs the SMA discarded (bad M_Key, Set from a stranger) */
	struct sib_mcast_stages *mcast_stages; /* SoftibMulticastPorts (mcast_ports.c) */
};

/* What a port has counted, for PortInfo's violation counters and PerfMgt
 * (IBA 14.2.5.6, 16.1.3.5); the owner fills it from its link and data path. */
struct sib_node_counters {
	uint64_t xmit_bytes, rcv_bytes, xmit_pkts, rcv_pkts;
	uint64_t mcast_xmit_pkts, mcast_rcv_pkts; /* of those, multicast */
	uint64_t rcv_errors;	   /* malformed or corrupted packets dropped */
	uint64_t xmit_discards;	   /* packets the link could not send */
	uint64_t P_KeyViolations, Q_KeyViolations;
	uint64_t vl15_dropped;	   /* SMPs discarded */
};

/* What the owner of the node (the HCA) does for its agents. */
struct sib_node_ops {
	/* A port event (PORT_ACTIVE, LID_CHANGE, PORT_ERR) for whoever
	 * listens; called with the node's lock held. */
	void (*port_event)(struct sib_node *node, unsigned port_num, enum sib_event ev);
	/* Whether a progress thread serves the node.  Without one, an agent
	 * that waits for an answer drives the node itself with poll. */
	bool (*threaded)(struct sib_node *node);
	int (*poll)(struct sib_node *node);
	/* True on the thread that delivers MADs (waiting there for a MAD
	 * would deadlock). */
	bool (*on_thread)(struct sib_node *node);
	/* The port's counters; NULL: all zero.  Called without the lock. */
	void (*counters)(struct sib_node *node, unsigned port_num, struct sib_node_counters *out);
	/* The SM programmed the ports that receive MLID mlid (mcast_ports.h):
	 * n endpoints, 0 = none.  0 or an errno.  NULL: ignored. */
	int (*mcast_ports)(struct sib_node *node, unsigned port_num, uint16_t mlid,
			   const struct sib_endpoint *eps, unsigned n);
	/* The SA client cached an answer for LID lid (where it lives, or that
	 * no port has it), from a resolve or a background lookup: whatever
	 * waited for the LID may go on.  Called with no lock of the node or
	 * the SA client held.  NULL: ignored. */
	void (*lid_resolved)(struct sib_node *node, unsigned port_num, uint16_t lid);
};

struct sib_node {
	pthread_mutex_t lock;	  /* guards ports, mgmt and the owner's port listeners */
	pthread_cond_t port_cond; /* signalled (under lock) when a port's state changes */
	uint64_t node_guid;	  /* NodeInfo:NodeGUID */
	uint64_t sys_image_guid;  /* NodeInfo:SystemImageGUID */
	struct sib_port ports[SIB_NUM_PORTS];	  /* ports[i] is verbs port i + 1 */
	struct sib_port_mgmt mgmt[SIB_NUM_PORTS]; /* mgmt[i] belongs to ports[i] */
	struct sib_sa_client sa;
	struct sib_mad_layer mads;	  /* agents and their sends (mad_agent.h, mad_send.h) */
	struct sib_timer mad_timer;	  /* runs the sends' timeouts (sib_mad_tick) */
	struct sib_mad_waits waits;	  /* blocking sends (mad_wait.h) */
	struct sib_cm *cm;		  /* the communication manager (cm.c) */
	struct sib_timers *timers;	  /* where agents arm their timers */
	const struct sib_node_ops *ops;
	/* A subnet manager running on this node through user MADs
	 * (provider/umad.c, OpenSM): the SM-class requests an HCA's own SMA
	 * does not answer -- SMInfo, traps -- go to it when it takes them
	 * (sma.c), and while it holds issm the port says IsSM (IBA 14.2.5.6).
	 * Set by the provider, read without the lock. */
	bool (*user_sm)(struct sib_node *node, const struct sib_mad_recv *r);
	bool is_sm;
};

/* Ports DOWN with no link, GID[0] from the port GUIDs (node GUID + port
 * number).  0, or a negative errno. */
int sib_node_init(struct sib_node *node, uint64_t node_guid, struct sib_timers *timers,
		  const struct sib_node_ops *ops);
/* Ends every send and unregisters every agent; nothing may deliver MADs
 * or run timers any more. */
void sib_node_fini(struct sib_node *node);

/* Port by verbs number (1-based); NULL when there is no such port. */
struct sib_port *sib_node_port(struct sib_node *node, unsigned port_num);

/* The SM (or the local stand-in) gives a port its LID: the port becomes
 * ACTIVE and listeners get PORT_ACTIVE (first time) or LID_CHANGE. */
void sib_node_port_set_lid(struct sib_node *node, unsigned port_num, uint16_t lid,
			   uint16_t sm_lid);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One InfiniBand switch (IBA chapter 18 and 14.2.5): its forwarding
 * decision and its management port 0.  No I/O and no threads: whoever
 * hosts the switch (softib-switch) hands it each packet with the port it
 * entered by and sends what it says where it says.
 *
 * Forwarding (IBA 18.2.4): a packet to the switch's own LID, or a
 * directed-route SMP whose path ends here, goes to port 0; a multicast
 * DLID goes out every port of its MulticastForwardingTable entry but the
 * one it came in by; any other DLID out the port its
 * LinearForwardingTable entry names.  What cannot be forwarded (no entry,
 * back out its own port, a port not Active for data, a bad directed
 * route) is dropped and counted on the input port as
 * PortRcvSwitchRelayErrors, with the reason kept for softib info.
 *
 * A packet that enters by a port facing a CA (edge) must carry an SLID
 * that lives behind that port, as the SM routed it: the LFT sends that
 * SLID back out of the same port (DESIGN: a port speaks only for itself;
 * with the permissive SLID only a directed-route SMP may come in).  So no
 * CA can claim another's LID, whatever it writes in its LRH.
 *
 * Port 0 answers SMPs (NodeInfo, NodeDescription, SwitchInfo, PortInfo of
 * every port, P_KeyTable, LinearForwardingTable and
 * MulticastForwardingTable blocks) and PerfMgt PortCounters of every port,
 * and checks the M_Key of port 0 (IBA 14.2.4).
 */
#ifndef SIB_FABRIC_SWITCH_H
#define SIB_FABRIC_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/topology.h"
#include "wire/packet.h"
#include "wire/perfmgt.h"
#include "wire/smp.h"

enum {
	SIB_SWITCH_LFT_CAP = 0xc000,  /* LinearFDBCap: every unicast LID */
	SIB_SWITCH_MFT_CAP = 1024,    /* MulticastFDBCap: MLIDs 0xc000..0xc3ff */
	SIB_SWITCH_LIFETIME = 0x12,   /* SwitchInfo.LifeTimeValue: 4.096 us * 2^18, about 1 s */
};

/* Why a packet went nowhere (counted per reason, named in softib info). */
enum sib_switch_drop {
	SIB_DROP_NO_ROUTE,	/* no LFT or MFT entry for the DLID */
	SIB_DROP_LOOP,		/* the LFT sends it back out its input port */
	SIB_DROP_PORT_STATE,	/* a data packet in or out of a port not Active */
	SIB_DROP_DR,		/* a directed-route SMP the path rules refuse */
	SIB_DROP_MALFORMED,	/* not a packet a switch can route (VL15 that is not an SMP) */
	SIB_DROP_M_KEY,		/* an SMP to port 0 without the M_Key it needs */
	SIB_DROP_SLID,		/* from a CA's port, an SLID that does not live behind it */
	SIB_DROP_COUNT
};

struct sib_switch_port {
	struct ib_port_info pi; /* what SubnGet(PortInfo) of this port answers */
	struct ib_port_counters pc;
	uint64_t xmit_data, rcv_data, xmit_pkts, rcv_pkts; /* PortCountersExtended */
	uint64_t mcast_xmit_pkts, mcast_rcv_pkts;	   /* to a multicast DLID */
	/* SLtoVLMappingTable of packets leaving by this port, from any input
	 * port (one VL yet: nothing reads it). */
	uint8_t sl2vl[IB_SL2VL_BYTES];
	bool cabled;	/* something is attached at the far end */
	bool edge;	/* a CA is at the far end: its SLIDs are checked */
	bool cut;	/* the cable was cut by command (softib fabric unlink) */
};

struct sib_switch {
	const struct sib_topo_node *node;
	unsigned nports;
	struct ib_switch_info si;
	uint8_t lft[SIB_SWITCH_LFT_CAP];
	uint16_t (*mft)[IB_MFT_PORTS_PER_MASK]; /* [MLID - 0xc000][Position] */
	unsigned mft_positions;			 /* masks per MLID: (nports + 16) / 16 */
	struct sib_switch_port *port;		 /* [0..nports]; [0] is the management port */
	uint16_t p_keys[IB_P_KEY_TABLE_BLOCK];	 /* one block, shared by every port */
	uint64_t drops[SIB_DROP_COUNT];
	const char *last_drop; /* the rule of the last drop, for the log */
	/* Trap 128 (a port's link state changed) until the SM represses it */
	bool trap_repressed;
	uint16_t notice_count;
	uint64_t trap_sent_ns;
	uint64_t traps_sent;
};

/* A switch as the topology describes it: every port DOWN (no cable up
 * yet), LFT and MFT empty, LID 0.  0, or -ENOMEM. */
int sib_switch_init(struct sib_switch *sw, const struct sib_topo_node *node);
void sib_switch_free(struct sib_switch *sw);

/* The far end of port p came up (true) or went away (false): PortState
 * INIT or DOWN, and SwitchInfo.PortStateChange set (IBA 14.2.5.4). */
void sib_switch_link(struct sib_switch *sw, unsigned p, bool up);

/* Where a packet goes. */
struct sib_switch_out {
	bool to_port0;	/* for the switch's own management port */
	bool rewritten; /* send buf[0..len), not the input */
	size_t len;
	unsigned nports;		  /* 0: dropped, or to port 0 */
	uint8_t port[SIB_TOPO_MAX_PORTS]; /* output ports (last: not cleared) */
};

/*
 * Route one packet of len bytes (already decoded: ib_packet_decode said
 * OK) that came in by port in_port (1..nports; 0 for one port 0 itself
 * sends).  A directed-route SMP is rewritten (HopPointer, ReturnPath,
 * CRCs) into buf (IB_MAX_PACKET bytes, not the packet's own buffer); any
 * other packet leaves as it came.  Counts the input port's receive
 * counters.
 */
void sib_switch_route(struct sib_switch *sw, unsigned in_port, const struct ib_packet *pkt,
		      size_t len, uint8_t *buf, struct sib_switch_out *out);

/*
 * Port 0 answers a management packet route() gave it.  The answer, if
 * any, is built into buf (out->rewritten, out->len) and routed like a
 * packet port 0 sends: *out says where it goes.  False when there is nothing to send (a response, a trap,
 * an SMP refused for its M_Key).
 */
bool sib_switch_mgmt(struct sib_switch *sw, unsigned in_port, const struct ib_packet *pkt,
		     uint8_t *buf, struct sib_switch_out *out);

/*
 * Trap 128 (IBA 14.2.5.1: the link state of a port changed), LID-routed
 * from port 0 to its SM (PortInfo:MasterSMLID of port 0), once the switch
 * has a LID and knows its SM: when PortStateChange is set, again every
 * second until the SM sends TrapRepress (or clears PortStateChange).
 * Built into buf and routed as port 0 sends it (*out); false when none is
 * due.
 */
bool sib_switch_trap(struct sib_switch *sw, uint64_t now_ns, uint8_t *buf,
		     struct sib_switch_out *out);

/* A packet (pkt, len bytes, LRH first) left by port p: its transmit
 * counters. */
void sib_switch_sent(struct sib_switch *sw, unsigned p, const uint8_t *pkt, size_t len);

const char *sib_switch_drop_name(enum sib_switch_drop d);

#endif

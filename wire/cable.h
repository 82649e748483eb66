/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The cable between a port and the switch port it is plugged into.  On
 * copper the two ends train the link (IBA 5.6, chapter 6) before any
 * packet passes; over UDP a port says which CA of the topology it is
 * (ATTACH), the switch answers which one it got (ATTACHED) or why not
 * (REFUSED), the port keeps the link up with KEEPALIVEs and takes it down
 * with DETACH.  A link whose port stays silent for SIB_CABLE_DEAD_MS is
 * down, as a cable pulled out.
 *
 * These are IBA raw packets (LRH.LNH 0: LRH, the raw header RWH, payload,
 * VCRC; IBA 5.3, 7.7), EtherType 0x88B5 (IEEE 802 local experimental), so
 * they never pass for transport packets and Wireshark shows them as raw
 * IB with an experimental EtherType.  Payload, big-endian:
 *   0  "SIBC" magic, 4 version (1), 5 type, 6-7 reason (REFUSED)
 *   8  node id (64 bytes, NUL-padded: the topology's "nodeid", or empty
 *      on ATTACH for any free CA)
 *   72 NodeGUID, 80 SystemImageGUID (ATTACHED)
 *   88 the CA's port on this cable, 89 its NumPorts, 90 data mode
 *   (0 direct, 1 switched), 91 the switch port, 92 the switch's NodeGUID
 */
#ifndef SIB_WIRE_CABLE_H
#define SIB_WIRE_CABLE_H

#include <stddef.h>
#include <stdint.h>

enum {
	SIB_CABLE_ETHERTYPE = 0x88b5,
	SIB_CABLE_PAYLOAD = 100,
	SIB_CABLE_BYTES = 8 + 4 + SIB_CABLE_PAYLOAD + 2, /* LRH, RWH, payload, VCRC */
	SIB_CABLE_KEEPALIVE_MS = 1000,
	SIB_CABLE_DEAD_MS = 5000,
	SIB_CABLE_ID_MAX = 64,
};

enum sib_cable_type {
	SIB_CABLE_ATTACH = 1,
	SIB_CABLE_ATTACHED = 2,
	SIB_CABLE_REFUSED = 3,
	SIB_CABLE_KEEPALIVE = 4,
	SIB_CABLE_DETACH = 5,
};

enum sib_cable_reason {
	SIB_CABLE_NO_SUCH_NODE = 1, /* the topology has no CA of that name here */
	SIB_CABLE_TAKEN = 2,	    /* another live port is that CA */
	SIB_CABLE_FULL = 3,	    /* no free CA left */
	SIB_CABLE_NOT_ATTACHED = 4, /* a KEEPALIVE from a port the switch does not know */
	SIB_CABLE_CUT = 5,	    /* the cable is cut (softib fabric unlink) */
};

enum sib_data_mode { SIB_DATA_DIRECT = 0, SIB_DATA_SWITCHED = 1 };

struct sib_cable_msg {
	uint8_t type;
	uint16_t reason;
	char id[SIB_CABLE_ID_MAX + 1];
	uint64_t node_guid, sys_image_guid, switch_guid;
	uint8_t port, nports, data_mode, switch_port;
};

/* Builds the raw packet into buf (SIB_CABLE_BYTES); returns its length. */
size_t sib_cable_encode(const struct sib_cable_msg *m, uint8_t *buf);

/* True when pkt is a cable packet at all (a raw packet with our
 * EtherType), whatever its state; then sib_cable_decode judges it. */
int sib_cable_is(const uint8_t *pkt, size_t len);

/* 0, or -1 when it is malformed (length, magic, version, VCRC, type). */
int sib_cable_decode(const uint8_t *pkt, size_t len, struct sib_cable_msg *m);

const char *sib_cable_type_name(uint8_t type);
const char *sib_cable_reason_str(uint16_t reason);

#endif

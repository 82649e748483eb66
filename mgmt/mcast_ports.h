/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SoftibMulticastPorts, a vendor SMP attribute (0xFF20, IBA 14.2.5: the
 * vendor range): how softib-sm programs multicast forwarding into the
 * ports.  On a real subnet the SM Sets each switch's
 * MulticastForwardingTable (IBA 14.2.5.12) and the switches fan a
 * multicast packet out; a softib subnet has no switches, so the SM Sets,
 * on every member port of an MLID, the UDP endpoints of the ports that
 * receive it, and the sending port does the fan-out (transport/mcast.h).
 * Like every Set it needs the subnet's M_Key and the port's verified SM
 * (mgmt/sma.c).
 *
 * AttributeModifier: bits 0-15 the MLID, bits 16-31 the block.  SMPData
 * (64 bytes, big-endian):
 *	bytes  0-3   Generation: the SM's version of the MLID's port list
 *	bytes  4-5   NumPorts: ports in the whole list (0: the MLID is gone)
 *	byte   6     Installed (responses): 1 when every block of this
 *	             Generation has arrived and the list is in use
 *	byte   7     reserved
 *	bytes  8-27  endpoint 2*block:   AddressFamily (4/6), reserved,
 *	             UDPPort (2 bytes), Address (16: IPv4 in the first 4)
 *	bytes 28-47  endpoint 2*block+1, the same
 *	bytes 48-63  reserved
 * A list of N ports takes ceil(N/2) blocks; the port installs it when it
 * has them all, and answers each Set with Installed.
 */
#ifndef SIB_MGMT_MCAST_PORTS_H
#define SIB_MGMT_MCAST_PORTS_H

#include <stdint.h>

#include "link/link.h"

struct sib_node;

enum {
	SIB_SMP_ATTR_MULTICAST_PORTS = 0xff20,
	SIB_MCAST_PORTS_PER_BLOCK = 2,
	SIB_MCAST_PORTS_MAX = 1024, /* ports one MLID may list */
};

struct sib_mcast_ports {
	uint32_t Generation;
	uint16_t NumPorts;
	uint8_t Installed;
	struct sib_endpoint ep[SIB_MCAST_PORTS_PER_BLOCK]; /* family 0: none */
};

void sib_mcast_ports_encode(const struct sib_mcast_ports *b, uint8_t *p);
void sib_mcast_ports_decode(struct sib_mcast_ports *b, const uint8_t *p);

static inline uint32_t sib_mcast_ports_mod(uint16_t mlid, uint16_t block)
{
	return (uint32_t)block << 16 | mlid;
}

/* The SMA's part (after its M_Key check): a Get or Set of the attribute
 * on port port_num; fills out and returns the MAD status. */
uint16_t sib_sma_mcast_ports(struct sib_node *node, unsigned port_num, bool set, uint32_t mod,
			     const uint8_t *in, uint8_t *out);
/* Frees what the SMA assembled (node teardown). */
void sib_sma_mcast_ports_fini(struct sib_node *node);

#endif

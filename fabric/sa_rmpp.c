/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The sending side of RMPP (IBA 13.6) for SA GetTable answers longer than
 * one MAD.  Segment 1 goes out alone (the initial window is one segment,
 * 13.6.3.2); each ACK the requester sends moves the window to its
 * NewWindowLast and the segments up to it follow; an ACK that repeats the
 * last one acknowledged names a gap, and the segments after it go again.
 * Without an ACK for SIB_SA_RMPP_TIMEOUT_NS the unacknowledged segments go
 * again, SIB_SA_RMPP_TRIES times, then the transfer is dropped (the
 * requester asks anew).  The ACK of the last segment ends it.  At most
 * SIB_SA_TRANSFERS_PER_SOURCE transfers to one requester (its endpoint and
 * its LID: on a fabric every port's endpoint is the switch's), and
 * SIB_SA_TRANSFER_BYTES_MAX bytes in all, are on their way at once; a
 * GetTable beyond is answered ERR_NO_RESOURCES.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fabric/sa.h"

static void send_segment(struct sib_sm *sm, struct sib_sa_transfer *t, uint32_t seg)
{
	struct ib_sa_mad m = t->hdr;
	uint32_t off = (seg - 1) * IB_SA_DATA_BYTES;
	uint32_t n = t->len - off < IB_SA_DATA_BYTES ? t->len - off : IB_SA_DATA_BYTES;
	uint8_t out[IB_MAD_BYTES];

	memset(&m.rmpp, 0, sizeof(m.rmpp));
	m.rmpp.RMPPVersion = IB_RMPP_VERSION;
	m.rmpp.RMPPType = IB_RMPP_TYPE_DATA;
	m.rmpp.RRespTime = 0x1f;
	m.rmpp.RMPPFlags = ib_sa_rmpp_flags(t->len, seg);
	m.rmpp.Data1 = seg;
	m.rmpp.Data2 = ib_sa_rmpp_payload_length(t->len, seg);
	memset(m.SubnAdmData, 0, sizeof(m.SubnAdmData));
	memcpy(m.SubnAdmData, t->data + off, n);
	ib_sa_mad_encode(&m, out);
	sib_mgmt_send(sm->link, &t->a, out, &t->to);
	if (seg > t->sent)
		t->sent = seg;
}

static void send_range(struct sib_sm *sm, struct sib_sa_transfer *t, uint32_t from, uint32_t to)
{
	for (uint32_t s = from; s <= to && s <= t->nseg; s++)
		send_segment(sm, t, s);
	t->deadline_ns = sm->now_ns + SIB_SA_RMPP_TIMEOUT_NS;
}

static void transfer_drop(struct sib_sa_state *s, unsigned i)
{
	s->transfer_bytes -= s->transfers[i].len;
	free(s->transfers[i].data);
	s->transfers[i] = s->transfers[--s->ntransfers];
}

static bool transfer_to(const struct sib_sa_transfer *t, const struct sib_endpoint *to,
			uint16_t lid)
{
	return t->a.DLID == lid && sib_endpoint_equal(&t->to, to);
}

/* Room for a transfer of len bytes to the requester at LID lid behind
 * endpoint to (sa.h's limits)? */
static bool transfer_room(const struct sib_sa_state *s, const struct sib_endpoint *to,
			  uint16_t lid, uint32_t len)
{
	unsigned mine = 0;

	for (unsigned i = 0; i < s->ntransfers; i++)
		mine += transfer_to(&s->transfers[i], to, lid);
	return mine < SIB_SA_TRANSFERS_PER_SOURCE &&
	       s->transfer_bytes + len <= SIB_SA_TRANSFER_BYTES_MAX;
}

static struct sib_sa_transfer *transfer_find(struct sib_sa_state *s, uint64_t tid,
					      const struct sib_endpoint *ep, uint16_t lid,
					      unsigned *idx)
{
	for (unsigned i = 0; i < s->ntransfers; i++)
		if (s->transfers[i].tid == tid && transfer_to(&s->transfers[i], ep, lid)) {
			if (idx)
				*idx = i;
			return &s->transfers[i];
		}
	return NULL;
}

void sib_sa_send_table(struct sib_sm *sm, const struct sib_mad_addr *a,
		       const struct sib_endpoint *to, const struct ib_sa_mad *m,
		       const uint8_t *records, unsigned rec_bytes, unsigned nrec)
{
	uint32_t len = rec_bytes * nrec;
	struct sib_sa_state *s;
	struct sib_sa_transfer *t;
	struct ib_sa_mad req = *m;
	unsigned idx;

	if (ib_sa_rmpp_segments(len) == 1) {
		sib_sa_respond(sm, a, to, &req, IB_MAD_METHOD_GET_TABLE_RESP, 0, records, rec_bytes,
			       nrec);
		return;
	}
	s = sib_sa_state(sm);
	if (s && (t = transfer_find(s, m->hdr.TransactionID, to, a->SLID, &idx)))
		transfer_drop(s, idx); /* the requester asked again: start over */
	if (s && !transfer_room(s, to, a->SLID, len)) {
		char e[SIB_ENDPOINT_STRLEN];

		s->transfers_refused++;
		sib_log(sib_log_nth(s->transfers_refused),
			"softib-sm: GetTable from %s refused: %u answers to it on their way "
			"already, or %u MiB to all (ERR_NO_RESOURCES; %llu so far)",
			sib_endpoint_str(to, e), SIB_SA_TRANSFERS_PER_SOURCE,
			SIB_SA_TRANSFER_BYTES_MAX >> 20, (unsigned long long)s->transfers_refused);
		sib_sa_respond(sm, a, to, &req, IB_MAD_METHOD_GET_TABLE_RESP,
			       IB_SA_STATUS_NO_RESOURCES, NULL, 0, 0);
		return;
	}
	if (s && s->ntransfers == s->transfers_cap) {
		unsigned cap = s->transfers_cap ? s->transfers_cap * 2 : 8;
		struct sib_sa_transfer *n = realloc(s->transfers, cap * sizeof(*n));

		if (n) {
			s->transfers = n;
			s->transfers_cap = cap;
		}
	}
	if (!s || s->ntransfers == s->transfers_cap) {
		sib_sa_respond(sm, a, to, &req, IB_MAD_METHOD_GET_TABLE_RESP,
			       IB_SA_STATUS_NO_RESOURCES, NULL, 0, 0);
		return;
	}
	t = &s->transfers[s->ntransfers];
	memset(t, 0, sizeof(*t));
	t->data = malloc(len);
	if (!t->data) {
		sib_sa_respond(sm, a, to, &req, IB_MAD_METHOD_GET_TABLE_RESP,
			       IB_SA_STATUS_NO_RESOURCES, NULL, 0, 0);
		return;
	}
	s->ntransfers++;
	s->transfer_bytes += len;
	memcpy(t->data, records, len);
	t->len = len;
	t->nseg = ib_sa_rmpp_segments(len);
	t->tid = m->hdr.TransactionID;
	t->to = *to;
	sib_mad_addr_reply(a, sm->lid, &t->a);
	t->hdr = *m;
	ib_mad_set_method(&t->hdr.hdr, IB_MAD_METHOD_GET_TABLE_RESP);
	t->hdr.hdr.Status = 0;
	t->hdr.AttributeOffset = ib_sa_attribute_offset(rec_bytes);
	t->window_last = 1;
	t->tries = SIB_SA_RMPP_TRIES;
	send_range(sm, t, 1, 1);
}

void sib_sa_rmpp_rx(struct sib_sm *sm, const struct ib_sa_mad *m, uint16_t slid,
		    const struct sib_endpoint *from)
{
	struct sib_sa_state *s = sm->sa;
	struct sib_sa_transfer *t;
	unsigned idx;
	uint32_t seg;

	if (!s || !(t = transfer_find(s, m->hdr.TransactionID, from, slid, &idx)))
		return;
	if (m->rmpp.RMPPType == IB_RMPP_TYPE_STOP || m->rmpp.RMPPType == IB_RMPP_TYPE_ABORT) {
		transfer_drop(s, idx);
		return;
	}
	if (m->rmpp.RMPPType != IB_RMPP_TYPE_ACK)
		return;
	seg = m->rmpp.Data1;
	if (seg >= t->nseg) {
		transfer_drop(s, idx); /* all there */
		return;
	}
	t->tries = SIB_SA_RMPP_TRIES;
	if (m->rmpp.Data2 > t->window_last)
		t->window_last = m->rmpp.Data2 < t->nseg ? m->rmpp.Data2 : t->nseg;
	if (seg <= t->acked) {
		/* The same ACK again: something after it was lost. */
		send_range(sm, t, seg + 1, t->sent);
		return;
	}
	t->acked = seg;
	if (t->sent < t->window_last)
		send_range(sm, t, t->sent + 1, t->window_last);
	else
		t->deadline_ns = sm->now_ns + SIB_SA_RMPP_TIMEOUT_NS;
}

void sib_sa_step(struct sib_sm *sm)
{
	struct sib_sa_state *s = sm->sa;

	if (!s)
		return;
	sib_sa_services_expire(sm);
	for (unsigned i = 0; i < s->ntransfers;) {
		struct sib_sa_transfer *t = &s->transfers[i];

		if (t->deadline_ns > sm->now_ns) {
			i++;
			continue;
		}
		if (!t->tries--) {
			sib_dbg("softib-sm: RMPP transfer 0x%016llx got no ACK; dropped",
				(unsigned long long)t->tid);
			transfer_drop(s, i);
			continue;
		}
		send_range(sm, t, t->acked + 1, t->sent);
		i++;
	}
}

uint64_t sib_sa_next_deadline(const struct sib_sm *sm)
{
	const struct sib_sa_state *s = sm->sa;
	uint64_t d;

	if (!s)
		return 0;
	d = sib_sa_services_next_expiry(sm);
	for (unsigned i = 0; i < s->ntransfers; i++)
		if (!d || s->transfers[i].deadline_ns < d)
			d = s->transfers[i].deadline_ns;
	return d;
}

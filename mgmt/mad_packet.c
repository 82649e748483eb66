/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <string.h>

#include "mgmt/mad_packet.h"

#include "wire/bitfield.h"
#include "wire/mad.h"
#include "wire/smp.h"

void sib_mad_addr_init(struct sib_mad_addr *a, uint32_t qp, uint16_t dlid, uint16_t slid)
{
	memset(a, 0, sizeof(*a));
	a->DLID = dlid;
	a->SLID = slid;
	a->P_Key = 0xffff;
	a->DestQP = qp;
	a->SrcQP = qp;
	/* IBA 13.5.4.3: QP1 takes the well-known Q_Key; QP0 ignores it. */
	a->Q_Key = qp == SIB_QP1 ? SIB_GSI_Q_KEY : 0;
}

void sib_mad_addr_reply(const struct sib_mad_addr *req, uint16_t my_lid, struct sib_mad_addr *out)
{
	struct sib_mad_addr r = *req;

	r.DLID = req->SLID;
	r.SLID = my_lid;
	r.DestQP = req->SrcQP;
	r.SrcQP = req->DestQP;
	r.Q_Key = req->DestQP == SIB_QP1 ? SIB_GSI_Q_KEY : 0;
	*out = r;
}

size_t sib_mgmt_build(const struct sib_mad_addr *a, const uint8_t *mad, uint8_t *buf, size_t cap)
{
	struct ib_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	/* IBA 7.6.4: SMPs use VL15 only; GMPs any data VL (VL0 here). */
	pkt.lrh.VL = a->DestQP == SIB_QP0 ? 15 : 0;
	pkt.lrh.SL = a->SL;
	pkt.lrh.LNH = IB_LNH_IBA_LOCAL;
	pkt.lrh.DLID = a->DLID;
	pkt.lrh.SLID = a->SLID;
	pkt.bth.OpCode = IB_OPCODE(IB_TRANSPORT_UD, IB_OP_SEND_ONLY);
	pkt.bth.P_Key = a->P_Key;
	pkt.bth.DestQP = a->DestQP;
	pkt.deth.Q_Key = a->Q_Key;
	pkt.deth.SrcQP = a->SrcQP;
	return ib_packet_encode(&pkt, mad, IB_MAD_BYTES, buf, cap);
}

size_t sib_dr_smp_build(uint8_t method, uint16_t attr, uint32_t mod, const uint8_t *path,
			unsigned hops, const uint8_t *data, uint64_t m_key, uint64_t tid,
			uint8_t *buf, size_t cap, unsigned *out_port)
{
	struct ib_dr_smp dr;
	struct sib_mad_addr a;
	uint8_t mad[IB_MAD_BYTES];
	const char *why;

	if (hops == 0 || hops > IB_SMP_MAX_HOPS)
		return 0;
	memset(&dr, 0, sizeof(dr));
	dr.BaseVersion = IB_MAD_BASE_VERSION;
	dr.MgmtClass = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	dr.ClassVersion = IB_SMP_CLASS_VERSION;
	dr.Method = method & 0x7f;
	dr.TransactionID = tid;
	dr.AttributeID = attr;
	dr.AttributeModifier = mod;
	dr.M_Key = m_key;
	dr.DrSLID = dr.DrDLID = SIB_LID_PERMISSIVE;
	dr.HopCount = (uint8_t)hops;
	memcpy(&dr.InitialPath[1], &path[1], hops);
	if (data)
		memcpy(dr.SMPData, data, IB_SMP_DATA_BYTES);
	if (ib_dr_smp_depart(&dr, out_port, &why) != IB_DR_FORWARD)
		return 0;
	memset(mad, 0, sizeof(mad));
	ib_dr_smp_encode(&dr, mad);
	sib_mad_addr_init(&a, SIB_QP0, SIB_LID_PERMISSIVE, SIB_LID_PERMISSIVE);
	return sib_mgmt_build(&a, mad, buf, cap);
}

const uint8_t *sib_mgmt_parse(const struct ib_packet *pkt, struct sib_mad_addr *a)
{
	if (pkt->bth.OpCode != IB_OPCODE(IB_TRANSPORT_UD, IB_OP_SEND_ONLY) ||
	    !(pkt->headers & IB_HDRBIT(IB_HDR_DETH)) || !pkt->payload ||
	    pkt->payload_len != IB_MAD_BYTES)
		return NULL;
	if (pkt->bth.DestQP > SIB_QP1)
		return NULL;
	/* IBA 13.5.1: QP0 traffic on VL15 only, QP1 never on VL15. */
	if ((pkt->bth.DestQP == SIB_QP0) != (pkt->lrh.VL == 15))
		return NULL;
	a->DLID = pkt->lrh.DLID;
	a->SLID = pkt->lrh.SLID;
	a->SL = pkt->lrh.SL;
	a->P_Key = pkt->bth.P_Key;
	a->DestQP = pkt->bth.DestQP;
	a->SrcQP = pkt->deth.SrcQP;
	a->Q_Key = pkt->deth.Q_Key;
	return pkt->payload;
}

int sib_mgmt_send(struct sib_link *l, const struct sib_mad_addr *a, const uint8_t *mad,
		  const struct sib_endpoint *dst)
{
	uint8_t buf[IB_MAD_BYTES + 128];
	size_t len = sib_mgmt_build(a, mad, buf, sizeof(buf));
	int rc;

	if (!len)
		return -EMSGSIZE;
	rc = sib_link_send(l, buf, len, dst);
	if (rc)
		return rc;
	/* A MAD has left when this returns (a leave, a DREQ at exit). */
	return sib_link_flush_wait(l);
}

void ib_notice_encode(const struct ib_notice *n, uint8_t *p)
{
	memset(p, 0, 64);
	ib_bits_put(p, 0, 1, n->IsGeneric);
	ib_bits_put(p, 1, 7, n->Type);
	ib_bits_put(p, 8, 24, n->ProducerType);
	ib_bits_put(p, 32, 16, n->TrapNumber);
	ib_bits_put(p, 48, 16, n->IssuerLID);
	ib_bits_put(p, 64, 1, n->NoticeToggle);
	ib_bits_put(p, 65, 15, n->NoticeCount);
	memcpy(p + 10, n->DataDetails, sizeof(n->DataDetails));
}

void ib_notice_decode(struct ib_notice *n, const uint8_t *p)
{
	n->IsGeneric = (uint8_t)ib_bits_get(p, 0, 1);
	n->Type = (uint8_t)ib_bits_get(p, 1, 7);
	n->ProducerType = (uint32_t)ib_bits_get(p, 8, 24);
	n->TrapNumber = (uint16_t)ib_bits_get(p, 32, 16);
	n->IssuerLID = (uint16_t)ib_bits_get(p, 48, 16);
	n->NoticeToggle = (uint8_t)ib_bits_get(p, 64, 1);
	n->NoticeCount = (uint16_t)ib_bits_get(p, 65, 15);
	memcpy(n->DataDetails, p + 10, sizeof(n->DataDetails));
}

void ib_notice_bad_m_key_encode(const struct ib_notice_bad_m_key *d, uint8_t details[54])
{
	memset(details, 0, 54);
	ib_bits_put(details, 16, 16, d->LIDADDR);
	details[4] = d->Method;
	ib_bits_put(details, 48, 16, d->AttributeID);
	ib_bits_put(details, 64, 32, d->AttributeModifier);
	ib_bits_put(details, 96, 64, d->M_Key);
	ib_bits_put(details, 160, 1, d->DRNotice);
	ib_bits_put(details, 161, 1, d->DRPathTruncated);
	ib_bits_put(details, 162, 6, d->DRHopCount);
	memcpy(details + 21, d->DRNoticeReturnPath, sizeof(d->DRNoticeReturnPath));
}

void ib_notice_bad_m_key_decode(struct ib_notice_bad_m_key *d, const uint8_t details[54])
{
	d->LIDADDR = (uint16_t)ib_bits_get(details, 16, 16);
	d->Method = details[4];
	d->AttributeID = (uint16_t)ib_bits_get(details, 48, 16);
	d->AttributeModifier = (uint32_t)ib_bits_get(details, 64, 32);
	d->M_Key = ib_bits_get(details, 96, 64);
	d->DRNotice = (uint8_t)ib_bits_get(details, 160, 1);
	d->DRPathTruncated = (uint8_t)ib_bits_get(details, 161, 1);
	d->DRHopCount = (uint8_t)ib_bits_get(details, 162, 6);
	memcpy(d->DRNoticeReturnPath, details + 21, sizeof(d->DRNoticeReturnPath));
}

void ib_notice_bad_key_encode(const struct ib_notice_bad_key *d, uint8_t details[54])
{
	memset(details, 0, 54);
	ib_bits_put(details, 16, 16, d->LID1);
	ib_bits_put(details, 32, 16, d->LID2);
	ib_bits_put(details, 48, 32, d->Key);
	ib_bits_put(details, 80, 4, d->SL);
	ib_bits_put(details, 88, 24, d->QP1);
	ib_bits_put(details, 120, 24, d->QP2);
	memcpy(details + 18, d->GID1, 16);
	memcpy(details + 34, d->GID2, 16);
}

void ib_notice_bad_key_decode(struct ib_notice_bad_key *d, const uint8_t details[54])
{
	d->LID1 = (uint16_t)ib_bits_get(details, 16, 16);
	d->LID2 = (uint16_t)ib_bits_get(details, 32, 16);
	d->Key = (uint32_t)ib_bits_get(details, 48, 32);
	d->SL = (uint8_t)ib_bits_get(details, 80, 4);
	d->QP1 = (uint32_t)ib_bits_get(details, 88, 24);
	d->QP2 = (uint32_t)ib_bits_get(details, 120, 24);
	memcpy(d->GID1, details + 18, 16);
	memcpy(d->GID2, details + 34, 16);
}

void sib_endpoint_record_encode(const struct sib_endpoint_record *r, uint8_t *p)
{
	memset(p, 0, SIB_ENDPOINT_RECORD_BYTES);
	ib_bits_put(p, 0, 16, r->LID);
	memcpy(p + 4, r->GID, 16);
	p[20] = r->ep.family;
	ib_bits_put(p, 22 * 8, 16, r->ep.port);
	memcpy(p + 24, r->ep.addr, r->ep.family == SIB_AF_INET ? 4 : 16);
}

int sib_endpoint_record_decode(struct sib_endpoint_record *r, const uint8_t *p)
{
	memset(r, 0, sizeof(*r));
	r->LID = (uint16_t)ib_bits_get(p, 0, 16);
	memcpy(r->GID, p + 4, 16);
	r->ep.family = p[20];
	r->ep.port = (uint16_t)ib_bits_get(p, 22 * 8, 16);
	if (r->ep.family == SIB_AF_INET)
		memcpy(r->ep.addr, p + 24, 4);
	else if (r->ep.family == SIB_AF_INET6)
		memcpy(r->ep.addr, p + 24, 16);
	else {
		r->ep.family = 0;
		return -1;
	}
	return 0;
}

void sib_mad_request_hdr(struct ib_mad_hdr *h, uint8_t mgmt_class, uint8_t class_version,
			 uint8_t method, uint16_t attr, uint32_t mod)
{
	memset(h, 0, sizeof(*h));
	h->BaseVersion = IB_MAD_BASE_VERSION;
	h->MgmtClass = mgmt_class;
	h->ClassVersion = class_version;
	ib_mad_set_method(h, method);
	h->AttributeID = attr;
	h->AttributeModifier = mod;
}

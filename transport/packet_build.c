/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Building packets straight into link buffers: headers from the QP's path
 * (LRH, GRH when the address vector is global, BTH with the QP's P_Key),
 * payload gathered from the SGEs' host addresses into the buffer, then
 * sealed (ICRC, VCRC) and committed.  No packet is built twice or copied.
 */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "transport/qp_impl.h"

unsigned sib_qp_mtu(const struct sib_qp *qp)
{
	unsigned mtu = sib_mtu_bytes(qp->attr.path_mtu);
	unsigned link_mtu = sib_engine_link(qp->eng)->mtu;

	if (qp->type == SIB_QPT_UD || !mtu)
		mtu = link_mtu; /* UD: the port's MTU (IBA 9.8.2) */
	if (link_mtu && mtu > link_mtu)
		mtu = link_mtu;
	return mtu ? mtu : 256;
}

void sib_tx_headers(struct sib_qp *qp, const struct sib_av *av, struct ib_packet *pkt)
{
	struct sib_port *port = sib_engine_port(qp->eng);
	uint16_t pkey = SIB_PKEY_DEFAULT;

	memset(pkt, 0, sizeof(*pkt));
	sib_port_pkey(port, qp->attr.pkey_index, &pkey);
	/* One data VL: SL maps to VL0 (the SL2VL table of a one-VL port, IBA 7.6.6). */
	pkt->lrh.VL = 0;
	pkt->lrh.SL = av->SL & 0xf;
	pkt->lrh.DLID = av->DLID;
	pkt->lrh.SLID = port->LID | av->src_path_bits;
	if (av->is_global) {
		pkt->lrh.LNH = IB_LNH_IBA_GLOBAL;
		pkt->has_grh = true;
		pkt->grh.TClass = av->traffic_class;
		pkt->grh.FlowLabel = av->flow_label & 0xfffff;
		pkt->grh.HopLmt = av->hop_limit;
		sib_port_gid(port, av->sgid_index, pkt->grh.SGID.raw);
		memcpy(pkt->grh.DGID.raw, av->DGID, 16);
	} else {
		pkt->lrh.LNH = IB_LNH_IBA_LOCAL;
	}
	pkt->bth.P_Key = pkey;
	pkt->bth.DestQP = qp->attr.dest_qp_num & SIB_QPN_MASK;
}

uint8_t *sib_tx_alloc(struct sib_qp *qp, struct ib_packet *pkt, uint32_t payload_len,
		      uint8_t **payload, size_t *hdr_len)
{
	struct sib_link *link = sib_engine_link(qp->eng);
	size_t cap;
	uint8_t *buf = sib_link_tx_alloc(link, &cap);

	if (!buf)
		return NULL;
	*hdr_len = ib_packet_encode_headers(pkt, payload_len, buf, cap);
	if (!*hdr_len || ib_packet_len(*hdr_len, payload_len) > cap) {
		sib_link_tx_abort(link, buf);
		return NULL;
	}
	*payload = buf + *hdr_len;
	return buf;
}

void sib_tx_commit(struct sib_qp *qp, uint8_t *buf, size_t hdr_len, uint32_t payload_len,
		   const struct sib_endpoint *dst)
{
	struct sib_link *link = sib_engine_link(qp->eng);
	size_t len = ib_packet_seal(buf, hdr_len, payload_len);

	sib_link_tx_commit(link, buf, len, dst);
}

struct split_hold {
	struct memreg_table *t;
	struct memreg_grant g;
};
_Static_assert(sizeof(struct split_hold) <= sizeof(((struct sib_link_hold *)0)->ctx),
	       "a grant fits in a link hold");

/* The hold's bytes are copied in and out (memcpy): the link keeps them as
 * plain words. */
static void split_release(void *ctx)
{
	struct split_hold h;

	memcpy(&h, ctx, sizeof(h));
	memreg_release(h.t, &h.g);
}

void sib_tx_commit_split(struct sib_qp *qp, uint8_t *buf, size_t hdr_len, uint32_t payload_len,
			 const struct sib_endpoint *dst, const struct memreg_grant *g)
{
	struct sib_link_hold hold = { .release = split_release };
	struct split_hold h = { .t = sib_engine_memreg(qp->eng), .g = *g };
	size_t trailer = ib_packet_seal_split(buf, hdr_len, g->host, payload_len);

	memcpy(hold.ctx, &h, sizeof(h));
	sib_link_tx_commit_split(sib_engine_link(qp->eng), buf, hdr_len, g->host, payload_len,
				 trailer, dst, &hold);
}

int sib_tx_send_hdr(struct sib_qp *qp, struct ib_packet *pkt, const struct sib_endpoint *dst)
{
	uint8_t *payload;
	size_t hdr_len;
	uint8_t *buf = sib_tx_alloc(qp, pkt, 0, &payload, &hdr_len);

	if (!buf)
		return -ENOBUFS;
	sib_tx_commit(qp, buf, hdr_len, 0, dst);
	return 0;
}

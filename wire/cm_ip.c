/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <string.h>

#include "wire/bitfield.h"
#include "wire/cm_ip.h"

#define IH(name, bit, bits) IB_FIELD(struct ib_cm_ip_hdr, #name, name, bit, bits)
static const struct ib_field_desc cm_ip_hdr_fields[] = {
	IH(MajV, 0, 4),
	IH(MinV, 4, 4),
	IH(IPV, 8, 4),
	/* 4 reserved bits */
	IH(SrcPort, 16, 16),
	IH(SrcIP, 32, 128),
	IH(DstIP, 160, 128),
};

const struct ib_header_desc ib_cm_ip_hdr_desc =
	IB_DESC("CM IP header", IB_CM_IP_HDR_BYTES, cm_ip_hdr_fields);

void ib_cm_ip_hdr_encode(const struct ib_cm_ip_hdr *h, uint8_t *p)
{
	ib_desc_encode(&ib_cm_ip_hdr_desc, h, p);
}

void ib_cm_ip_hdr_decode(struct ib_cm_ip_hdr *h, const uint8_t *p)
{
	ib_desc_decode(&ib_cm_ip_hdr_desc, h, p);
}

static bool v4_padding_zero(const uint8_t *a)
{
	static const uint8_t zero[12];

	return !memcmp(a, zero, sizeof(zero));
}

const char *ib_cm_ip_hdr_check(const struct ib_cm_ip_hdr *h)
{
	if (h->MajV != IB_CM_IP_MAJV || h->MinV != IB_CM_IP_MINV)
		return "the IP addressing header's version is not 0.0 (IBA Annex A11)";
	if (h->IPV != 4 && h->IPV != 6)
		return "the IP addressing header's IPV is neither 4 nor 6 (IBA Annex A11)";
	if (h->IPV == 4 && (!v4_padding_zero(h->SrcIP) || !v4_padding_zero(h->DstIP)))
		return "an IPv4 address in the IP addressing header has nonzero padding";
	return NULL;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Cable packets (cable.h): raw IBA packets carrying link bring-up.
 */
#include "wire/cable.h"

#include <string.h>

#include "wire/bitfield.h"
#include "wire/crc.h"
#include "wire/headers.h"

static const uint8_t magic[4] = { 'S', 'I', 'B', 'C' };

size_t sib_cable_encode(const struct sib_cable_msg *m, uint8_t *buf)
{
	struct ib_lrh lrh = {
		.VL = 15, /* link management, like an SMP: never held behind data */
		.LNH = IB_LNH_RAW,
		.DLID = 0xffff,
		/* LRH through the payload, in words; the VCRC follows (IBA 7.7.8) */
		.PktLen = (SIB_CABLE_BYTES - 2) / 4,
	};
	uint8_t *p = buf + IB_LRH_BYTES + 4;

	memset(buf, 0, SIB_CABLE_BYTES);
	ib_lrh_encode(&lrh, buf);
	ib_bits_put(buf + IB_LRH_BYTES, 16, 16, SIB_CABLE_ETHERTYPE);
	memcpy(p, magic, sizeof(magic));
	p[4] = 1;
	p[5] = m->type;
	ib_bits_put(p, 48, 16, m->reason);
	memcpy(p + 8, m->id, strnlen(m->id, SIB_CABLE_ID_MAX));
	ib_bits_put(p, 72 * 8, 64, m->node_guid);
	ib_bits_put(p, 80 * 8, 64, m->sys_image_guid);
	p[88] = m->port;
	p[89] = m->nports;
	p[90] = m->data_mode;
	p[91] = m->switch_port;
	ib_bits_put(p, 92 * 8, 64, m->switch_guid);
	ib_vcrc_put(buf, SIB_CABLE_BYTES, ib_vcrc(buf, SIB_CABLE_BYTES));
	return SIB_CABLE_BYTES;
}

int sib_cable_is(const uint8_t *pkt, size_t len)
{
	return len >= IB_LRH_BYTES + 4 && (pkt[1] & 3) == IB_LNH_RAW &&
	       ib_bits_get(pkt + IB_LRH_BYTES, 16, 16) == SIB_CABLE_ETHERTYPE;
}

int sib_cable_decode(const uint8_t *pkt, size_t len, struct sib_cable_msg *m)
{
	const uint8_t *p = pkt + IB_LRH_BYTES + 4;

	memset(m, 0, sizeof(*m));
	if (len != SIB_CABLE_BYTES || !sib_cable_is(pkt, len) ||
	    ib_vcrc_get(pkt, len) != ib_vcrc(pkt, len) || memcmp(p, magic, sizeof(magic)) ||
	    p[4] != 1 || p[5] < SIB_CABLE_ATTACH || p[5] > SIB_CABLE_DETACH)
		return -1;
	m->type = p[5];
	m->reason = (uint16_t)ib_bits_get(p, 48, 16);
	memcpy(m->id, p + 8, SIB_CABLE_ID_MAX);
	m->id[SIB_CABLE_ID_MAX] = 0;
	m->node_guid = ib_bits_get(p, 72 * 8, 64);
	m->sys_image_guid = ib_bits_get(p, 80 * 8, 64);
	m->port = p[88];
	m->nports = p[89];
	m->data_mode = p[90];
	m->switch_port = p[91];
	m->switch_guid = ib_bits_get(p, 92 * 8, 64);
	return 0;
}

const char *sib_cable_type_name(uint8_t type)
{
	static const char *const names[] = { "?", "ATTACH", "ATTACHED", "REFUSED", "KEEPALIVE",
					     "DETACH" };

	return type <= SIB_CABLE_DETACH ? names[type] : "?";
}

const char *sib_cable_reason_str(uint16_t reason)
{
	switch (reason) {
	case SIB_CABLE_NO_SUCH_NODE:
		return "the topology has no CA of that name on this switch process";
	case SIB_CABLE_TAKEN:
		return "another live port is already that CA";
	case SIB_CABLE_FULL:
		return "every CA of the topology is taken";
	case SIB_CABLE_CUT:
		return "its cable is cut (softib fabric relink restores it)";
	case SIB_CABLE_NOT_ATTACHED:
		return "the switch does not know this port (it restarted?): attach again";
	default:
		return "unknown reason";
	}
}

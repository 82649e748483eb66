/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <string.h>

#include "base/log.h"
#include "mgmt/mad_agent.h"
#include "mgmt/node.h"
#include "mgmt/perf_agent.h"
#include "wire/perfmgt.h"

static uint16_t sat16(uint64_t v)
{
	return v > 0xffff ? 0xffff : (uint16_t)v;
}

static uint32_t sat32(uint64_t v)
{
	return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

static uint16_t class_port_info(uint8_t *data)
{
	struct ib_class_port_info cpi = {
		.BaseVersion = IB_MAD_BASE_VERSION,
		.ClassVersion = IB_PERF_CLASS_VERSION,
		.CapabilityMask = IB_PERF_CAP_EXT_WIDTH,
		.RespTimeValue = 8, /* 4.096 us * 2^8 = 1 ms, as PortInfo says */
	};

	ib_class_port_info_encode(&cpi, data);
	return 0;
}

/* IBA 16.1.3.5: data counters count 4-byte words, and every counter stops
 * at its largest value rather than wrapping. */
static uint16_t port_counters(const struct sib_node_counters *c, uint8_t port_select,
			      uint8_t *data)
{
	struct ib_port_counters pc = {
		.PortSelect = port_select,
		.PortRcvErrors = sat16(c->rcv_errors),
		.PortXmitDiscards = sat16(c->xmit_discards),
		.VL15Dropped = sat16(c->vl15_dropped),
		.PortXmitData = sat32(c->xmit_bytes / 4),
		.PortRcvData = sat32(c->rcv_bytes / 4),
		.PortXmitPkts = sat32(c->xmit_pkts),
		.PortRcvPkts = sat32(c->rcv_pkts),
	};

	ib_port_counters_encode(&pc, data);
	return 0;
}

/* IBA 16.1.4.11: 64 bits; the multicast packets are the data path's
 * (a copy per member port sent), the rest unicast. */
static uint16_t port_counters_ext(const struct sib_node_counters *c, uint8_t port_select,
				  uint8_t *data)
{
	struct ib_port_counters_ext x = {
		.PortSelect = port_select,
		.PortXmitData = c->xmit_bytes / 4,
		.PortRcvData = c->rcv_bytes / 4,
		.PortXmitPkts = c->xmit_pkts,
		.PortRcvPkts = c->rcv_pkts,
		.PortUnicastXmitPkts = c->xmit_pkts - (c->mcast_xmit_pkts < c->xmit_pkts
							      ? c->mcast_xmit_pkts : c->xmit_pkts),
		.PortUnicastRcvPkts = c->rcv_pkts - (c->mcast_rcv_pkts < c->rcv_pkts
							     ? c->mcast_rcv_pkts : c->rcv_pkts),
		.PortMulticastXmitPkts = c->mcast_xmit_pkts,
		.PortMulticastRcvPkts = c->mcast_rcv_pkts,
	};

	ib_port_counters_ext_encode(&x, data);
	return 0;
}

bool sib_perf_process(struct sib_node *node, unsigned port_num, const uint8_t *in, uint8_t *out)
{
	uint8_t *data = out + IB_PERF_DATA_OFFSET;
	struct sib_node_counters c;
	struct ib_mad_hdr h;
	uint8_t method, port_select;
	uint16_t status;

	if (!sib_node_port(node, port_num) || in[0] != IB_MAD_BASE_VERSION ||
	    (in[3] & IB_MAD_METHOD_RESP))
		return false;
	ib_mad_hdr_decode(&h, in);
	method = ib_mad_method(&h);
	if (method == IB_MAD_METHOD_TRAP || method == IB_MAD_METHOD_SEND ||
	    method == IB_MAD_METHOD_REPORT || method == IB_MAD_METHOD_TRAP_REPRESS)
		return false; /* no response is defined for these (IBA 13.4.5) */
	memcpy(out, in, IB_MAD_BYTES);
	memset(out + IB_MAD_HDR_BYTES, 0, IB_MAD_BYTES - IB_MAD_HDR_BYTES);
	port_select = in[IB_PERF_DATA_OFFSET + 1];
	memset(&c, 0, sizeof(c));
	if (node->ops->counters)
		node->ops->counters(node, port_num, &c);

	if (h.ClassVersion != IB_PERF_CLASS_VERSION)
		status = IB_MAD_STATUS_BAD_VERSION;
	else if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
		status = IB_MAD_STATUS_UNSUP_METHOD;
	else if (h.AttributeID == IB_PERF_ATTR_CLASS_PORT_INFO)
		status = method == IB_MAD_METHOD_GET ? class_port_info(data)
						     : IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	else if (h.AttributeID != IB_PERF_ATTR_PORT_COUNTERS &&
		 h.AttributeID != IB_PERF_ATTR_PORT_COUNTERS_EXT)
		status = IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	else if (method == IB_MAD_METHOD_SET)
		status = IB_MAD_STATUS_UNSUP_METHOD_ATTR; /* counters are not the caller's to clear */
	else if (port_select != port_num && port_select != 0)
		status = IB_MAD_STATUS_INVALID_FIELD; /* 0: the port it came in by, as perfquery
						       * asks a LID without a port */
	else if (h.AttributeID == IB_PERF_ATTR_PORT_COUNTERS)
		status = port_counters(&c, port_select, data);
	else
		status = port_counters_ext(&c, port_select, data);

	ib_mad_set_method(&h, IB_MAD_METHOD_GET_RESP);
	h.Status = status;
	ib_mad_hdr_encode(&h, out);
	if (status)
		sib_dbg("PerfMgt %s(%s) on port %u: status 0x%04x", ib_mad_method_str(method),
			ib_mad_attr_str(IB_MGMT_CLASS_PERF, h.AttributeID), port_num, status);
	return true;
}

/* QP1: answered to where the request came from, to its QP. */
static bool perf_rx(void *owner, const struct sib_mad_recv *r)
{
	struct sib_node *node = owner;
	unsigned port_num = r->port_num;
	const struct sib_mad_addr *a = r->a;
	const uint8_t *mad = r->mad;
	const struct sib_endpoint *from = r->from;
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	uint8_t out[IB_MAD_BYTES];
	struct sib_mad_addr ra;
	uint16_t my_lid;

	if (!sib_perf_process(node, port_num, mad, out))
		return true;
	pthread_mutex_lock(&node->lock);
	my_lid = node->ports[port_num - 1].LID;
	pthread_mutex_unlock(&node->lock);
	sib_mad_addr_reply(a, my_lid ? my_lid : SIB_LID_PERMISSIVE, &ra);
	if (pm->link && from)
		sib_mgmt_send(pm->link, &ra, out, from);
	return true;
}

/* Every version and method: the agent answers what it does not serve
 * with the status IBA 13.4.7 gives (perf_agent.h). */
static const struct sib_mad_agent perf_agent = {
	.name = "PerfMgt agent",
	.qp = SIB_QP1,
	.mgmt_class = IB_MGMT_CLASS_PERF,
	.methods = SIB_MAD_METHODS_ALL,
	.rx = perf_rx,
};

int sib_perf_agent_register(struct sib_node *node)
{
	return sib_mad_agent_register(node, &perf_agent);
}

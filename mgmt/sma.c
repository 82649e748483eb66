/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stdio.h>
#include <string.h>

#include "mgmt/mad_agent.h"
#include "mgmt/mcast_ports.h"
#include "mgmt/node.h"
#include "base/log.h"
#include "mgmt/port_up.h"
#include "mgmt/sma.h"
#include "mgmt/sa_client.h"
#include "wire/bitfield.h"
#include "wire/smp.h"

/* PortInfo:LinkWidth/LinkSpeed encodings (IBA 14.2.5.6): 4X at QDR, the
 * figure query_port reports too. */
enum {
	LINK_WIDTH_1X_4X = 3,
	LINK_WIDTH_4X = 2,
	LINK_SPEED_SDR_DDR_QDR = 7,
	LINK_SPEED_QDR = 4,
};

static const uint64_t gid_prefix_link_local = 0xfe80000000000000ull;

static uint16_t sat16(uint64_t v)
{
	return v > 0xffff ? 0xffff : (uint16_t)v;
}

void sib_sma_port_info(struct sib_node *node, unsigned port_num, struct ib_port_info *pi,
		       const struct sib_node_counters *c)
{
	struct sib_port *port = sib_node_port(node, port_num);
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	bool link_up = pm->link != NULL;

	memset(pi, 0, sizeof(*pi));
	pi->M_Key = pm->M_Key;
	pi->M_KeyProtectBits = pm->M_KeyProtectBits;
	pi->M_KeyLeasePeriod = pm->M_KeyLeasePeriod;
	pi->M_KeyViolations = pm->M_KeyViolations;
	if (c) {
		pi->P_KeyViolations = sat16(c->P_KeyViolations);
		pi->Q_KeyViolations = sat16(c->Q_KeyViolations);
	}
	pi->GidPrefix = gid_prefix_link_local;
	pi->LID = port->LID;
	pi->MasterSMLID = port->SMLID;
	pi->CapabilityMask = IB_PORT_CAP_IS_TRAP_SUP | IB_PORT_CAP_IS_SYS_IMAGE_GUID_SUP |
			     IB_PORT_CAP_IS_CLIENT_REREG_SUP |
			     (__atomic_load_n(&node->is_sm, __ATOMIC_RELAXED) ? IB_PORT_CAP_IS_SM : 0);
	pi->LocalPortNum = (uint8_t)port_num;
	pi->LinkWidthEnabled = LINK_WIDTH_1X_4X;
	pi->LinkWidthSupported = LINK_WIDTH_1X_4X;
	pi->LinkWidthActive = LINK_WIDTH_4X;
	pi->LinkSpeedSupported = LINK_SPEED_SDR_DDR_QDR;
	pi->PortState = (uint8_t)port->state;
	pi->PortPhysicalState = link_up ? IB_PORT_PHYS_LINK_UP : IB_PORT_PHYS_DISABLED;
	pi->LinkDownDefaultState = IB_PORT_PHYS_POLLING;
	pi->LMC = port->LMC;
	pi->LinkSpeedActive = LINK_SPEED_QDR;
	pi->LinkSpeedEnabled = LINK_SPEED_SDR_DDR_QDR;
	pi->NeighborMTU = (uint8_t)port->active_mtu;
	pi->MasterSMSL = port->SMSL;
	pi->VLCap = 1; /* VL0 only (plus VL15) */
	pi->VLArbitrationHighCap = 1;
	pi->VLArbitrationLowCap = 1;
	pi->MTUCap = (uint8_t)port->max_mtu;
	pi->HOQLife = 0x1f; /* infinite: the link never discards for head-of-queue age */
	pi->OperationalVLs = 1;
	pi->PartitionEnforcementInbound = 1;
	pi->PartitionEnforcementOutbound = 1;
	pi->GUIDCap = SIB_GID_TBL_LEN;
	pi->SubnetTimeOut = port->SubnetTimeOut;
	pi->RespTimeValue = 8; /* 4.096 us * 2^8 = 1 ms, IBA 13.4.6.2 */
}

/* SubnSet(PortInfo) (IBA 14.2.5.6, state transitions 7.2): validate all,
 * then apply; on error nothing changes. */
static uint16_t port_info_set(struct sib_node *node, unsigned port_num, const uint8_t *data)
{
	struct sib_port *port = sib_node_port(node, port_num);
	struct ib_port_info pi;
	enum sib_port_state cur, next;
	bool activate, deactivate;
	uint16_t lid;

	ib_port_info_decode(&pi, data);
	pthread_mutex_lock(&node->lock);
	cur = port->state;
	next = cur;
	switch (pi.PortState) {
	case IB_PORT_STATE_NOP:
		break;
	case IB_PORT_STATE_DOWN:
		/* The link retrains and comes back in INIT (IBA 7.2). */
		next = SIB_PORT_INIT;
		break;
	case IB_PORT_STATE_ARMED:
		if (cur != SIB_PORT_INIT && cur != SIB_PORT_ARMED)
			goto invalid;
		next = SIB_PORT_ARMED;
		break;
	case IB_PORT_STATE_ACTIVE:
		if (cur != SIB_PORT_ARMED && cur != SIB_PORT_ACTIVE)
			goto invalid;
		next = SIB_PORT_ACTIVE;
		break;
	default:
		goto invalid;
	}
	lid = pi.LID;
	if (lid > SIB_LID_UNICAST_MAX || pi.MasterSMLID > SIB_LID_UNICAST_MAX)
		goto invalid;
	if (lid == 0 && (next == SIB_PORT_ARMED || next == SIB_PORT_ACTIVE))
		goto invalid;
	if (pi.LMC != 0) /* one LID per port: LMC 0 only */
		goto invalid;

	port->SMSL = pi.MasterSMSL;
	port->SubnetTimeOut = pi.SubnetTimeOut;
	/* IBA 14.2.4: the M_Key, its protection level and lease are the SM's
	 * to set (the Set passed the M_Key check to get here).  A new key:
	 * no SM has shown it yet (port_up.h). */
	if (pi.M_Key != node->mgmt[port_num - 1].M_Key)
		memset(node->mgmt[port_num - 1].sm_keyed, 0, sizeof(node->mgmt[0].sm_keyed));
	node->mgmt[port_num - 1].M_Key = pi.M_Key;
	node->mgmt[port_num - 1].M_KeyProtectBits = pi.M_KeyProtectBits;
	node->mgmt[port_num - 1].M_KeyLeasePeriod = pi.M_KeyLeasePeriod;
	activate = next == SIB_PORT_ACTIVE;
	deactivate = next == SIB_PORT_INIT && cur != SIB_PORT_INIT;
	if (!activate) {
		port->LID = lid;
		port->SMLID = pi.MasterSMLID;
		port->state = next;
	}
	pthread_cond_broadcast(&node->port_cond);
	pthread_mutex_unlock(&node->lock);

	if (activate) {
		/* Raises PORT_ACTIVE the first time, LID_CHANGE on a new LID. */
		sib_node_port_set_lid(node, port_num, lid, pi.MasterSMLID);
		sib_info("port %u ACTIVE: LID %u, SM LID %u", port_num, lid, pi.MasterSMLID);
		/* IBA 14.4.11: the SA lost what this port registered; its
		 * clients register it again (CLIENT_REREGISTER). */
		if (pi.ClientReregister) {
			pthread_mutex_lock(&node->lock);
			node->ops->port_event(node, port_num, SIB_EV_CLIENT_REREGISTER);
			pthread_mutex_unlock(&node->lock);
		}
	} else if (deactivate && cur == SIB_PORT_ACTIVE) {
		pthread_mutex_lock(&node->lock);
		node->ops->port_event(node, port_num, SIB_EV_PORT_ERR);
		pthread_mutex_unlock(&node->lock);
		sib_sa_flush_cache(node);
	}
	return 0;

invalid:
	pthread_mutex_unlock(&node->lock);
	sib_dbg("SubnSet(PortInfo) on port %u refused: PortState %u from %u, LID 0x%x, LMC %u",
		port_num, pi.PortState, cur, pi.LID, pi.LMC);
	return IB_MAD_STATUS_INVALID_FIELD;
}

/* One attribute: fills out (SMP Data) and returns the MAD status. */
static uint16_t sma_attr(struct sib_node *node, unsigned port_num, uint8_t method, uint16_t attr,
			 uint32_t mod, bool hide_key, const uint8_t *in, uint8_t *out)
{
	struct sib_port *port = sib_node_port(node, port_num);
	bool set = method == IB_MAD_METHOD_SET;
	uint16_t status = 0;

	switch (attr) {
	case IB_SMP_ATTR_NODE_DESCRIPTION: {
		struct ib_node_description nd;

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR; /* read-only, IBA 14.2.5.2 */
		memcpy(nd.NodeString, node->mgmt[port_num - 1].node_desc, sizeof(nd.NodeString));
		ib_node_description_encode(&nd, out);
		return 0;
	}
	case IB_SMP_ATTR_NODE_INFO: {
		struct ib_node_info ni = {
			.BaseVersion = IB_MAD_BASE_VERSION,
			.ClassVersion = IB_SMP_CLASS_VERSION,
			.NodeType = IB_NODE_TYPE_CA,
			.NumPorts = SIB_NUM_PORTS,
			.SystemImageGUID = node->sys_image_guid,
			.NodeGUID = node->node_guid,
			.PortGUID = port->port_guid,
			.PartitionCap = SIB_MAX_PKEYS,
			.DeviceID = SIB_VENDOR_PART_ID,
			.Revision = SIB_HW_VER,
			.LocalPortNum = (uint8_t)port_num,
			.VendorID = SIB_VENDOR_ID,
		};

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		ib_node_info_encode(&ni, out);
		return 0;
	}
	case IB_SMP_ATTR_GUID_INFO: {
		struct ib_guid_info gi;

		/* Block 0: the port GUID, then empty alias slots; read-only. */
		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		if (mod != 0)
			return IB_MAD_STATUS_INVALID_FIELD;
		memset(&gi, 0, sizeof(gi));
		gi.GUIDBlock[0] = port->port_guid;
		ib_guid_info_encode(&gi, out);
		return 0;
	}
	case IB_SMP_ATTR_PORT_INFO: {
		struct sib_node_counters c;
		struct ib_port_info pi;

		/* IBA 14.2.5.6: on a CA the modifier is the port number, 0
		 * meaning the port the SMP came in on. */
		if (mod != 0 && mod != port_num)
			return IB_MAD_STATUS_INVALID_FIELD;
		if (set)
			status = port_info_set(node, port_num, in);
		memset(&c, 0, sizeof(c));
		if (node->ops->counters)
			node->ops->counters(node, port_num, &c);
		pthread_mutex_lock(&node->lock);
		sib_sma_port_info(node, port_num, &pi, &c);
		pthread_mutex_unlock(&node->lock);
		/* IBA 14.2.4.1: at protection level 1 a Get without the key
		 * reads M_Key as 0. */
		if (hide_key)
			pi.M_Key = 0;
		ib_port_info_encode(&pi, out);
		return status;
	}
	case IB_SMP_ATTR_P_KEY_TABLE: {
		struct ib_p_key_table pt;

		/* PartitionCap SIB_MAX_PKEYS (<= 32): one block, block 0.  The
		 * SM programs the partitions (IBA 14.2.5.7, 10.9.2); a Set gets
		 * here only with the M_Key, from the port's SM (admit). */
		if ((mod & 0xffff) != 0)
			return IB_MAD_STATUS_INVALID_FIELD;
		pthread_mutex_lock(&node->lock);
		if (set) {
			bool changed = false;

			ib_p_key_table_decode(&pt, in);
			for (unsigned i = 0; i < SIB_MAX_PKEYS; i++) {
				changed |= port->P_Key[i] != pt.P_KeyTableBlock[i];
				port->P_Key[i] = pt.P_KeyTableBlock[i];
			}
			/* Programs hear of it (IBV_EVENT_PKEY_CHANGE), as from
			 * the kernel when an SM changes the table. */
			if (changed && node->ops && node->ops->port_event)
				node->ops->port_event(node, port_num, SIB_EV_PKEY_CHANGE);
		}
		memset(&pt, 0, sizeof(pt));
		for (unsigned i = 0; i < SIB_MAX_PKEYS; i++)
			pt.P_KeyTableBlock[i] = port->P_Key[i];
		pthread_mutex_unlock(&node->lock);
		ib_p_key_table_encode(&pt, out);
		return 0;
	}
	case IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE:
	case IB_SMP_ATTR_VL_ARBITRATION_TABLE: {
		struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
		unsigned block = mod >> 16;
		uint8_t *t;
		size_t len;

		/* On a CA the port is the one the SMP came in on (the
		 * modifier's port bits, if any, must name it). */
		if (attr == IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE) {
			if (mod != 0 && mod != port_num)
				return IB_MAD_STATUS_INVALID_FIELD;
			t = pm->sl2vl;
			len = IB_SL2VL_BYTES;
		} else {
			if (block < 1 || block > IB_VL_ARB_BLOCKS ||
			    ((mod & 0xffff) != 0 && (mod & 0xffff) != port_num))
				return IB_MAD_STATUS_INVALID_FIELD;
			t = pm->vl_arb[block - 1];
			len = IB_VL_ARB_BLOCK_BYTES;
		}
		pthread_mutex_lock(&node->lock);
		if (set)
			memcpy(t, in, len);
		memcpy(out, t, len);
		pthread_mutex_unlock(&node->lock);
		return 0;
	}
	case IB_SMP_ATTR_SM_INFO: {
		/* No SM runs on a softib port: SMInfo says so (IBA 14.4.1). */
		struct ib_sm_info si = {
			.GUID = port->port_guid,
			.SMState = IB_SM_STATE_NOT_ACTIVE,
		};

		if (set)
			return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
		ib_sm_info_encode(&si, out);
		return 0;
	}
	case SIB_SMP_ATTR_MULTICAST_PORTS:
		return sib_sma_mcast_ports(node, port_num, set, mod, in, out);
	default:
		return IB_MAD_STATUS_UNSUP_METHOD_ATTR;
	}
}

/* An SMP request as the SMA sees it. */
struct sma_req {
	uint8_t mclass, method;
	uint16_t attr;
	uint32_t mod;
	uint64_t tid;
	uint64_t M_Key;		   /* the one the SMP carries */
	uint16_t slid;		   /* the requester's LID, for trap 256 */
	const struct ib_dr_smp *dr; /* directed route: the SMP */
};

/*
 * The M_Key check (IBA 14.2.4), under the node's lock.  A port whose
 * M_Key is 0 is not protected; otherwise an SMP carrying another key is
 *   a Get:       answered at ProtectBits 0, answered with PortInfo:M_Key
 *                read as 0 at 1, discarded at 2 and 3;
 *   a Set or a TrapRepress: discarded at every level.
 * Every discard counts in M_KeyViolations and starts the M_Key lease
 * (14.2.4.2) unless it runs already: when M_KeyLeasePeriod seconds pass
 * without an SMP that carries the key, ProtectBits fall to 0, so that a
 * new SM can read the key and take over.  An SMP with the right key stops
 * the lease.  (Levels 2 and 3 act alike, as in Linux's software SMAs,
 * qib and hfi1.)
 */
enum mkey_verdict { MKEY_OK, MKEY_OK_HIDE_KEY, MKEY_DISCARD };

static enum mkey_verdict mkey_check(struct sib_port_mgmt *pm, uint8_t method, uint64_t key,
				    uint64_t now)
{
	bool checked = method == IB_MAD_METHOD_GET || method == IB_MAD_METHOD_SET ||
		       method == IB_MAD_METHOD_TRAP_REPRESS;

	if (pm->mkey_lease_end_ns && now >= pm->mkey_lease_end_ns) {
		pm->M_KeyProtectBits = 0;
		pm->mkey_lease_end_ns = 0;
	}
	if (!checked)
		return MKEY_OK; /* the SMA answers these with a status, or drops them */
	if (!pm->M_Key || key == pm->M_Key) {
		pm->mkey_lease_end_ns = 0;
		return MKEY_OK;
	}
	if (method == IB_MAD_METHOD_GET && pm->M_KeyProtectBits < 2)
		return pm->M_KeyProtectBits == 1 ? MKEY_OK_HIDE_KEY : MKEY_OK;
	if (pm->M_KeyViolations != 0xffff)
		pm->M_KeyViolations++;
	if (!pm->mkey_lease_end_ns && pm->M_KeyLeasePeriod)
		pm->mkey_lease_end_ns = now + pm->M_KeyLeasePeriod * 1000000000ull;
	return MKEY_DISCARD;
}

/* At most one warning a second per port: a flood of bad SMPs is one line. */
static bool refusal_warns(struct sib_port_mgmt *pm, uint64_t now)
{
	if (pm->mkey_warn_ns && now - pm->mkey_warn_ns < 1000000000ull)
		return false;
	pm->mkey_warn_ns = now;
	return true;
}

/* Trap 256 (IBA 14.2.4.1), at most one a second: the SM hears of the
 * attack, the attacker gets no amplifier. */
static void bad_m_key_trap(struct sib_node *node, unsigned port_num, const struct sma_req *r)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	struct ib_notice_bad_m_key d;
	uint64_t now = sib_link_now_ns();
	bool send;

	pthread_mutex_lock(&node->lock);
	send = !pm->mkey_trap_ns || now - pm->mkey_trap_ns >= 1000000000ull;
	if (send)
		pm->mkey_trap_ns = now;
	pthread_mutex_unlock(&node->lock);
	if (!send)
		return;
	memset(&d, 0, sizeof(d));
	d.LIDADDR = r->slid;
	d.Method = r->method;
	d.AttributeID = r->attr;
	d.AttributeModifier = r->mod;
	d.M_Key = r->M_Key;
	if (r->dr) {
		unsigned hops = r->dr->HopCount;

		d.DRNotice = 1;
		if (hops > sizeof(d.DRNoticeReturnPath)) {
			d.DRPathTruncated = 1;
			hops = sizeof(d.DRNoticeReturnPath);
		}
		d.DRHopCount = (uint8_t)hops;
		memcpy(d.DRNoticeReturnPath, r->dr->ReturnPath, hops);
	}
	sib_port_trap_bad_m_key(node, port_num, &d);
}

/*
 * Whether the SMA may act on the request: the M_Key check, and softib's
 * stand-in for cabling: before any SM has given the port an M_Key, only
 * the SM addresses it was configured with may Set it (IBA leaves an
 * unkeyed port open to any SMP; here any local process could reach it).
 * from NULL: the request comes from the port's own owner (tests).
 */
static enum mkey_verdict admit(struct sib_node *node, unsigned port_num, const struct sma_req *r,
			       const struct sib_endpoint *from)
{
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	char e[SIB_ENDPOINT_STRLEN];
	uint64_t now = sib_link_now_ns();
	enum mkey_verdict v;
	bool stranger, warn = false;
	uint16_t violations;

	pthread_mutex_lock(&node->lock);
	v = mkey_check(pm, r->method, r->M_Key, now);
	/* ... and from this port itself when an SM runs here (node.h:
	 * is_sm): it configures its own port by a 0-hop directed route, and
	 * only this process's socket sends from its endpoint. */
	stranger = v != MKEY_DISCARD && !pm->M_Key && r->method == IB_MAD_METHOD_SET && from &&
		   !pm->sm_none && sib_port_sm_addr_index(pm, from) < 0 &&
		   !(__atomic_load_n(&node->is_sm, __ATOMIC_RELAXED) && pm->link &&
		     sib_endpoint_equal(from, &pm->link->local));
	if (v == MKEY_DISCARD || stranger) {
		pm->smp_refused++;
		warn = refusal_warns(pm, now);
	}
	violations = pm->M_KeyViolations;
	pthread_mutex_unlock(&node->lock);

	if (from)
		sib_endpoint_str(from, e);
	else
		snprintf(e, sizeof(e), "this process");
	if (stranger) {
		if (warn)
			sib_warn("port %u: SubnSet(%s) from %s refused: the port has no M_Key yet and "
				 "takes Sets only from its SM (SOFTIB_SM)",
				 port_num, ib_mad_attr_str(r->mclass, r->attr), e);
		return MKEY_DISCARD;
	}
	if (v == MKEY_DISCARD) {
		if (warn)
			sib_warn("port %u: %s(%s) from %s (LID %u) discarded: wrong M_Key (IBA 14.2.4, "
				 "%u violations so far)",
				 port_num, ib_mad_method_str(r->method),
				 ib_mad_attr_str(r->mclass, r->attr), e, r->slid, violations);
		else
			sib_dbg("port %u: %s(%s) from %s discarded: wrong M_Key", port_num,
				ib_mad_method_str(r->method), ib_mad_attr_str(r->mclass, r->attr), e);
		bad_m_key_trap(node, port_num, r);
	}
	return v;
}

/* The request decoded: LID-routed or directed-route alike. */
static bool sma_decode(const uint8_t *in, const struct sib_mad_addr *a, struct sma_req *r,
		       struct ib_smp *smp, struct ib_dr_smp *dr, uint8_t *data)
{
	memset(r, 0, sizeof(*r));
	r->mclass = in[1];
	r->slid = a ? a->SLID : 0;
	if (r->mclass == IB_MGMT_CLASS_SUBN_LID_ROUTED) {
		ib_smp_decode(smp, in);
		r->method = ib_mad_method(&smp->hdr);
		r->attr = smp->hdr.AttributeID;
		r->mod = smp->hdr.AttributeModifier;
		r->tid = smp->hdr.TransactionID;
		r->M_Key = smp->M_Key;
		memcpy(data, smp->SMPData, IB_SMP_DATA_BYTES);
		return true;
	}
	if (r->mclass != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return false;
	ib_dr_smp_decode(dr, in);
	r->method = (uint8_t)(dr->R << 7 | dr->Method);
	r->attr = dr->AttributeID;
	r->mod = dr->AttributeModifier;
	r->tid = dr->TransactionID;
	r->M_Key = dr->M_Key;
	r->dr = dr;
	if (dr->DrSLID != SIB_LID_PERMISSIVE)
		r->slid = dr->DrSLID;
	/* IBA 14.2.2.2: a CA is the end of an outbound path (D=0) when
	 * HopPointer has reached HopCount (or HopCount is 0); anything
	 * else would need forwarding, which a CA cannot do. */
	if (dr->D || dr->HopCount > IB_SMP_MAX_HOPS ||
	    (dr->HopCount != 0 && dr->HopPointer != dr->HopCount))
		return false;
	memcpy(data, dr->SMPData, IB_SMP_DATA_BYTES);
	return true;
}

/*
 * What every SMP the SMA acts on passes: decoded, a request with a defined
 * response or a TrapRepress, and admitted (the M_Key check, a Set from a
 * stranger); the SM's word counts against its silence (port_up.h).
 * MKEY_DISCARD: nothing to act on.
 */
static enum mkey_verdict sma_accept(struct sib_node *node, unsigned port_num,
				    const struct sib_mad_addr *a, const uint8_t *in,
				    const struct sib_endpoint *from, struct sma_req *r,
				    struct ib_smp *smp, struct ib_dr_smp *dr, uint8_t *data)
{
	struct sib_port_mgmt *pm;
	enum mkey_verdict v;
	bool keyed;

	if (!sib_node_port(node, port_num) || in[0] != IB_MAD_BASE_VERSION)
		return MKEY_DISCARD; /* IBA 13.4.4.1: unknown BaseVersion is discarded */
	pm = &node->mgmt[port_num - 1];
	if (!sma_decode(in, a, r, smp, dr, data))
		return MKEY_DISCARD;
	if (r->method & IB_MAD_METHOD_RESP)
		return MKEY_DISCARD;
	if (r->method == IB_MAD_METHOD_TRAP || r->method == IB_MAD_METHOD_SEND ||
	    r->method == IB_MAD_METHOD_REPORT)
		return MKEY_DISCARD; /* no response is defined for these (IBA 13.4.5) */
	v = admit(node, port_num, r, from);
	if (v == MKEY_DISCARD)
		return v;
	if (from) {
		pthread_mutex_lock(&node->lock);
		keyed = pm->M_Key && r->M_Key == pm->M_Key;
		pthread_mutex_unlock(&node->lock);
		sib_port_sm_smp_seen(node, port_num, from, keyed);
	}
	return v;
}

bool sib_sma_repress_admitted(struct sib_node *node, const struct sib_mad_recv *rcv)
{
	uint8_t data[IB_SMP_DATA_BYTES];
	struct sma_req r;
	struct ib_dr_smp dr;
	struct ib_smp smp;

	return sma_accept(node, rcv->port_num, rcv->a, rcv->mad, rcv->from, &r, &smp, &dr, data) !=
		       MKEY_DISCARD &&
	       r.method == IB_MAD_METHOD_TRAP_REPRESS;
}

bool sib_sma_handle(struct sib_node *node, unsigned port_num, const struct sib_mad_addr *a,
		    const uint8_t *in, const struct sib_endpoint *from, uint8_t *out)
{
	uint8_t data[IB_SMP_DATA_BYTES];
	uint8_t resp_data[IB_SMP_DATA_BYTES];
	enum mkey_verdict v;
	struct sma_req r;
	struct ib_dr_smp dr;
	struct ib_smp smp;
	uint16_t status;

	v = sma_accept(node, port_num, a, in, from, &r, &smp, &dr, data);
	/* A TrapRepress answers one of our traps (port_up.c takes it through
	 * the MAD layer); here it gets the M_Key check and no answer. */
	if (v == MKEY_DISCARD || r.method == IB_MAD_METHOD_TRAP_REPRESS)
		return false;

	memset(resp_data, 0, sizeof(resp_data));
	if (in[2] != IB_SMP_CLASS_VERSION)
		status = IB_MAD_STATUS_BAD_VERSION;
	else if (r.method != IB_MAD_METHOD_GET && r.method != IB_MAD_METHOD_SET)
		status = IB_MAD_STATUS_UNSUP_METHOD;
	else
		status = sma_attr(node, port_num, r.method, r.attr, r.mod, v == MKEY_OK_HIDE_KEY,
				  data, resp_data);

	/* The response keeps the request's header, with R set and the
	 * method GetResp (IBA 13.4.5, also for a Set). */
	if (r.mclass == IB_MGMT_CLASS_SUBN_LID_ROUTED) {
		ib_mad_set_method(&smp.hdr, IB_MAD_METHOD_GET_RESP);
		smp.hdr.Status = status;
		memcpy(smp.SMPData, resp_data, sizeof(resp_data));
		ib_smp_encode(&smp, out);
	} else {
		ib_dr_smp_to_response(&dr, status);
		/* IBA 14.2.2.2: the responder records the port it received on
		 * in ReturnPath at HopPointer. */
		if (dr.HopCount)
			dr.ReturnPath[dr.HopPointer] = (uint8_t)port_num;
		memcpy(dr.SMPData, resp_data, sizeof(resp_data));
		ib_dr_smp_encode(&dr, out);
	}
	if (status)
		sib_dbg("SMP %s(%s) mod 0x%x on port %u: status 0x%04x",
			ib_mad_method_str(r.method), ib_mad_attr_str(r.mclass, r.attr), r.mod,
			port_num, status);
	return true;
}

bool sib_sma_process(struct sib_node *node, unsigned port_num, const uint8_t *in, uint8_t *out)
{
	return sib_sma_handle(node, port_num, NULL, in, NULL, out);
}

/* The QP0 receive path: requests are processed and answered to `from`;
 * a response here answered none of the port's sends (mad_send.h). */
static bool sma_rx(void *owner, const struct sib_mad_recv *rcv)
{
	struct sib_node *node = owner;
	unsigned port_num = rcv->port_num;
	const struct sib_mad_addr *a = rcv->a;
	const uint8_t *mad = rcv->mad;
	const struct sib_endpoint *from = rcv->from;
	struct sib_port_mgmt *pm = &node->mgmt[port_num - 1];
	uint8_t out[IB_MAD_BYTES];
	struct sib_mad_addr ra;
	uint16_t my_lid;
	bool (*user_sm)(struct sib_node *, const struct sib_mad_recv *) =
		__atomic_load_n(&node->user_sm, __ATOMIC_ACQUIRE);

	if (mad[3] & IB_MAD_METHOD_RESP) {
		pthread_mutex_lock(&node->lock);
		pm->smp_refused++;
		pthread_mutex_unlock(&node->lock);
		return true;
	}
	/* What a real HCA's SMA leaves to the SM running on the node. */
	if (user_sm && (ib_bits_get(mad, 128, 16) == IB_SMP_ATTR_SM_INFO ||
			mad[3] == IB_MAD_METHOD_TRAP) &&
	    user_sm(node, rcv))
		return true;
	if (!sib_sma_handle(node, port_num, a, mad, from, out))
		return true;
	pthread_mutex_lock(&node->lock);
	my_lid = node->ports[port_num - 1].LID;
	pthread_mutex_unlock(&node->lock);
	sib_mad_addr_reply(a, my_lid ? my_lid : SIB_LID_PERMISSIVE, &ra);
	/* IBA 14.2.2: directed-route responses travel with permissive LIDs
	 * until the end of the path -- the SLID too: the answer to the Set
	 * that gave this port its LID leaves before any switch's LFT knows
	 * that LID, and a switch drops a CA's packet whose SLID it does not
	 * route back to it (OpenSM writes LFTs only after every LID Set). */
	if (mad[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		ra.DLID = SIB_LID_PERMISSIVE;
		ra.SLID = SIB_LID_PERMISSIVE;
	}
	if (pm->link)
		sib_mgmt_send(pm->link, &ra, out, from);
	return true;
}

/* SMPs come LID-routed and directed-route: two classes, one agent, for
 * every version and method (it answers what it does not serve with the
 * status IBA 13.4.7 gives, sma.h). */
static const struct sib_mad_agent sma_lid_routed = {
	.name = "SMA",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED,
	.methods = SIB_MAD_METHODS_ALL,
	.rx = sma_rx,
};
static const struct sib_mad_agent sma_directed_route = {
	.name = "SMA",
	.qp = SIB_QP0,
	.mgmt_class = IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
	.methods = SIB_MAD_METHODS_ALL,
	.rx = sma_rx,
};

int sib_sma_register(struct sib_node *node)
{
	int rc = sib_mad_agent_register(node, &sma_lid_routed);

	if (!rc)
		rc = sib_mad_agent_register(node, &sma_directed_route);
	/* Port bring-up sends on QP0 too; the SMA stays the class's first
	 * agent, which hears the responses nothing sent here asked for. */
	return rc ? rc : sib_port_up_register(node);
}

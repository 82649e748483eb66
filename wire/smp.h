/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Subnet management packets (IBA Vol 1 14.2.1) and the SMP attributes the
 * subnet manager and the port's agent exchange (14.2.5).  SMP Data sits at
 * MAD byte 64 in both the LID-routed and the directed-route form; attribute
 * layouts are relative to it.
 */
#ifndef SIB_WIRE_SMP_H
#define SIB_WIRE_SMP_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/mad.h"

enum {
	IB_SMP_BYTES = 256,
	IB_DR_SMP_BYTES = 256,
	IB_SMP_DATA_OFFSET = 64,
	IB_SMP_DATA_BYTES = 64,
	IB_SMP_PATH_BYTES = 64, /* InitialPath, ReturnPath */
	IB_SMP_MAX_HOPS = 63,	/* IBA 14.2.2: path holds hops 1..63 */

	IB_NODE_DESCRIPTION_BYTES = 64,
	IB_NODE_INFO_BYTES = 40,
	IB_PORT_INFO_BYTES = 64,
	IB_P_KEY_TABLE_BYTES = 64,
	IB_P_KEY_TABLE_BLOCK = 32, /* P_Keys per block */
	IB_GUID_INFO_BYTES = 64,
	IB_GUID_INFO_BLOCK = 8, /* GUIDs per block */
	IB_SM_INFO_BYTES = 21,
	IB_SWITCH_INFO_BYTES = 20,
	IB_LFT_BLOCK = 64,	       /* ports per LinearForwardingTable block */
	IB_LFT_BLOCKS = 768,	       /* blocks 0..767 cover unicast LIDs 0..0xbfff */
	IB_MFT_BLOCK = 32,	       /* PortMasks per MulticastForwardingTable block */
	IB_MFT_BLOCKS = 512,	       /* blocks 0..511 cover MLIDs 0xc000..0xffff */
	IB_MFT_PORTS_PER_MASK = 16,    /* a PortMask covers 16 ports: Position 0..15 */
	IB_LFT_PORT_NONE = 0xff,       /* IBA 14.2.5.10: no port, drop */
};

/* SMP AttributeIDs (IBA 14.2.5 Table 145). */
enum {
	IB_SMP_ATTR_NOTICE = 0x0002,
	IB_SMP_ATTR_NODE_DESCRIPTION = 0x0010,
	IB_SMP_ATTR_NODE_INFO = 0x0011,
	IB_SMP_ATTR_SWITCH_INFO = 0x0012,
	IB_SMP_ATTR_GUID_INFO = 0x0014,
	IB_SMP_ATTR_PORT_INFO = 0x0015,
	IB_SMP_ATTR_P_KEY_TABLE = 0x0016,
	IB_SMP_ATTR_SL_TO_VL_MAPPING_TABLE = 0x0017,
	IB_SMP_ATTR_VL_ARBITRATION_TABLE = 0x0018,
	IB_SMP_ATTR_LINEAR_FORWARDING_TABLE = 0x0019,
	IB_SMP_ATTR_RANDOM_FORWARDING_TABLE = 0x001a,
	IB_SMP_ATTR_MULTICAST_FORWARDING_TABLE = 0x001b,
	IB_SMP_ATTR_SM_INFO = 0x0020,
	IB_SMP_ATTR_VENDOR_DIAG = 0x0030,
	IB_SMP_ATTR_LED_INFO = 0x0031,
};

/*
 * SLtoVLMappingTable (IBA 14.2.5.8): 16 SLs' VLs, 4 bits each, SL 0 in
 * the high nibble of byte 0.  VLArbitrationTable (14.2.5.9): blocks 1..4
 * (the modifier's bits 31:16: low priority entries 0-31 and 32-63, high
 * priority 0-31 and 32-63) of 32 entries, each a VL (low 4 bits of its
 * first byte) and a weight.
 */
enum {
	IB_SL2VL_BYTES = 8,
	IB_VL_ARB_BLOCKS = 4,
	IB_VL_ARB_BLOCK_BYTES = 64,
};

/* Bit 15 of a directed-route SMP's raw Status word is the D bit (IBA 14.2.1.2). */
enum { IB_DR_SMP_STATUS_D = 0x8000 };

/* LID-routed SMP (IBA 14.2.1.1). */
struct ib_smp {
	struct ib_mad_hdr hdr;
	uint64_t M_Key;
	uint8_t SMPData[IB_SMP_DATA_BYTES];
};

/*
 * Directed-route SMP (IBA 14.2.1.2): the common header's Status is D plus a
 * 15-bit status, ClassSpecific is HopPointer and HopCount.
 */
struct ib_dr_smp {
	uint8_t BaseVersion;
	uint8_t MgmtClass;
	uint8_t ClassVersion;
	uint8_t R;	/* 1 bit */
	uint8_t Method; /* 7 bits */
	uint8_t D;	/* 1 bit: direction, 1 on the return trip */
	uint16_t Status; /* 15 bits */
	uint8_t HopPointer;
	uint8_t HopCount;
	uint64_t TransactionID;
	uint16_t AttributeID;
	uint32_t AttributeModifier;
	uint64_t M_Key;
	uint16_t DrSLID;
	uint16_t DrDLID;
	uint8_t SMPData[IB_SMP_DATA_BYTES];
	uint8_t InitialPath[IB_SMP_PATH_BYTES];
	uint8_t ReturnPath[IB_SMP_PATH_BYTES];
};

/* NodeType (IBA 14.2.5.3). */
enum { IB_NODE_TYPE_CA = 1, IB_NODE_TYPE_SWITCH = 2, IB_NODE_TYPE_ROUTER = 3 };

struct ib_node_info {
	uint8_t BaseVersion;
	uint8_t ClassVersion;
	uint8_t NodeType;
	uint8_t NumPorts;
	uint64_t SystemImageGUID;
	uint64_t NodeGUID;
	uint64_t PortGUID;
	uint16_t PartitionCap;
	uint16_t DeviceID;
	uint32_t Revision;
	uint8_t LocalPortNum;
	uint32_t VendorID; /* 24 bits */
};

/* NodeDescription (IBA 14.2.5.2): UTF-8, NUL-padded, not NUL-terminated when full. */
struct ib_node_description {
	uint8_t NodeString[IB_NODE_DESCRIPTION_BYTES];
};

/* PortInfo.PortState, PortPhysicalState (IBA 14.2.5.6 Table 148). */
enum ib_port_state {
	IB_PORT_STATE_NOP = 0,
	IB_PORT_STATE_DOWN = 1,
	IB_PORT_STATE_INIT = 2,
	IB_PORT_STATE_ARMED = 3,
	IB_PORT_STATE_ACTIVE = 4,
};
enum ib_port_phys_state {
	IB_PORT_PHYS_SLEEP = 1,
	IB_PORT_PHYS_POLLING = 2,
	IB_PORT_PHYS_DISABLED = 3,
	IB_PORT_PHYS_TRAINING = 4,
	IB_PORT_PHYS_LINK_UP = 5,
	IB_PORT_PHYS_ERROR_RECOVERY = 6,
	IB_PORT_PHYS_PHY_TEST = 7,
};

/* PortInfo.CapabilityMask bits (IBA 14.2.5.6). */
enum {
	IB_PORT_CAP_IS_SM = 1u << 1,
	IB_PORT_CAP_IS_NOTICE_SUP = 1u << 2,
	IB_PORT_CAP_IS_TRAP_SUP = 1u << 3,
	IB_PORT_CAP_IS_AUTO_MIGR_SUP = 1u << 5,
	IB_PORT_CAP_IS_SL_MAP_SUP = 1u << 6,
	IB_PORT_CAP_IS_SM_DISABLED = 1u << 10,
	IB_PORT_CAP_IS_SYS_IMAGE_GUID_SUP = 1u << 11,
	IB_PORT_CAP_IS_CM_SUP = 1u << 16,
	IB_PORT_CAP_IS_DEVICE_MGMT_SUP = 1u << 19,
	IB_PORT_CAP_IS_VENDOR_CLASS_SUP = 1u << 20,
	IB_PORT_CAP_IS_CLIENT_REREG_SUP = 1u << 25,
	IB_PORT_CAP_IS_MCAST_FDB_TOP_SUP = 1u << 30, /* a switch's SwitchInfo:MulticastFDBTop */
};

struct ib_port_info {
	uint64_t M_Key;
	uint64_t GidPrefix;
	uint16_t LID;
	uint16_t MasterSMLID;
	uint32_t CapabilityMask;
	uint16_t DiagCode;
	uint16_t M_KeyLeasePeriod;
	uint8_t LocalPortNum;
	uint8_t LinkWidthEnabled;
	uint8_t LinkWidthSupported;
	uint8_t LinkWidthActive;
	uint8_t LinkSpeedSupported;   /* 4 bits */
	uint8_t PortState;	      /* 4 bits */
	uint8_t PortPhysicalState;    /* 4 bits */
	uint8_t LinkDownDefaultState; /* 4 bits */
	uint8_t M_KeyProtectBits;     /* 2 bits */
	uint8_t LMC;		      /* 3 bits */
	uint8_t LinkSpeedActive;      /* 4 bits */
	uint8_t LinkSpeedEnabled;     /* 4 bits */
	uint8_t NeighborMTU;	      /* 4 bits */
	uint8_t MasterSMSL;	      /* 4 bits */
	uint8_t VLCap;		      /* 4 bits */
	uint8_t InitType;	      /* 4 bits */
	uint8_t VLHighLimit;
	uint8_t VLArbitrationHighCap;
	uint8_t VLArbitrationLowCap;
	uint8_t InitTypeReply;	/* 4 bits */
	uint8_t MTUCap;		/* 4 bits */
	uint8_t VLStallCount;	/* 3 bits */
	uint8_t HOQLife;	/* 5 bits */
	uint8_t OperationalVLs; /* 4 bits */
	uint8_t PartitionEnforcementInbound;  /* 1 bit */
	uint8_t PartitionEnforcementOutbound; /* 1 bit */
	uint8_t FilterRawInbound;	      /* 1 bit */
	uint8_t FilterRawOutbound;	      /* 1 bit */
	uint16_t M_KeyViolations;
	uint16_t P_KeyViolations;
	uint16_t Q_KeyViolations;
	uint8_t GUIDCap;
	uint8_t ClientReregister;		     /* 1 bit */
	uint8_t MulticastPKeyTrapSuppressionEnabled; /* 2 bits */
	uint8_t SubnetTimeOut;			     /* 5 bits */
	uint8_t RespTimeValue;			     /* 5 bits */
	uint8_t LocalPhyErrors;			     /* 4 bits */
	uint8_t OverrunErrors;			     /* 4 bits */
	uint16_t MaxCreditHint;
	uint32_t LinkRoundTripLatency; /* 24 bits */
	uint16_t CapabilityMask2;
	uint8_t LinkSpeedExtActive;    /* 4 bits */
	uint8_t LinkSpeedExtSupported; /* 4 bits */
	uint8_t LinkSpeedExtEnabled;   /* 5 bits */
};

/* One block of 32 P_Keys (IBA 14.2.5.7); AttributeModifier is the block number. */
struct ib_p_key_table {
	uint16_t P_KeyTableBlock[IB_P_KEY_TABLE_BLOCK]; /* bit 15 is the membership type */
};

/* One block of 8 port GUIDs (IBA 14.2.5.5). */
struct ib_guid_info {
	uint64_t GUIDBlock[IB_GUID_INFO_BLOCK];
};

/* SwitchInfo (IBA 14.2.5.4). */
struct ib_switch_info {
	uint16_t LinearFDBCap;
	uint16_t RandomFDBCap;
	uint16_t MulticastFDBCap;
	uint16_t LinearFDBTop;
	uint8_t DefaultPort;
	uint8_t DefaultMulticastPrimaryPort;
	uint8_t DefaultMulticastNotPrimaryPort;
	uint8_t LifeTimeValue;			   /* 5 bits */
	uint8_t PortStateChange;		   /* 1 bit; a Set of 1 clears it */
	uint8_t OptimizedSLtoVLMappingProgramming; /* 2 bits */
	uint16_t LIDsPerPort;
	uint16_t PartitionEnforcementCap;
	uint8_t InboundEnforcementCap;	/* 1 bit */
	uint8_t OutboundEnforcementCap; /* 1 bit */
	uint8_t FilterRawInboundCap;	/* 1 bit */
	uint8_t FilterRawOutboundCap;	/* 1 bit */
	uint8_t EnhancedPort0;		/* 1 bit */
	uint16_t MulticastFDBTop;
};

/* One LinearForwardingTable block (IBA 14.2.5.10): the output port of LIDs
 * 64*block .. 64*block+63; AttributeModifier is the block. */
struct ib_lft_block {
	uint8_t Port[IB_LFT_BLOCK];
};

/* One MulticastForwardingTable block (IBA 14.2.5.12): the PortMask (ports
 * 16*Position .. +15, bit i for port 16*Position+i) of MLIDs
 * 0xc000 + 32*block .. +31.  AttributeModifier: Position in bits 31:28,
 * the block in bits 8:0. */
struct ib_mft_block {
	uint16_t PortMask[IB_MFT_BLOCK];
};

/* SMInfo.SMState (IBA 14.2.5.13). */
enum ib_sm_state {
	IB_SM_STATE_NOT_ACTIVE = 0,
	IB_SM_STATE_DISCOVERING = 1,
	IB_SM_STATE_STANDBY = 2,
	IB_SM_STATE_MASTER = 3,
};

struct ib_sm_info {
	uint64_t GUID;
	uint64_t SM_Key;
	uint32_t ActCount;
	uint8_t Priority; /* 4 bits */
	uint8_t SMState;  /* 4 bits */
};

#define IB_SMP_OPS(name)                                                                           \
	void ib_##name##_encode(const struct ib_##name *h, uint8_t *p);                           \
	void ib_##name##_decode(struct ib_##name *h, const uint8_t *p);

IB_SMP_OPS(smp)
IB_SMP_OPS(dr_smp)
IB_SMP_OPS(node_info)
IB_SMP_OPS(node_description)
IB_SMP_OPS(port_info)
IB_SMP_OPS(p_key_table)
IB_SMP_OPS(guid_info)
IB_SMP_OPS(sm_info)
IB_SMP_OPS(switch_info)
IB_SMP_OPS(lft_block)
IB_SMP_OPS(mft_block)
#undef IB_SMP_OPS

extern const struct ib_header_desc ib_smp_desc, ib_dr_smp_desc, ib_node_info_desc,
	ib_node_description_desc, ib_port_info_desc, ib_p_key_table_desc, ib_guid_info_desc,
	ib_sm_info_desc, ib_switch_info_desc, ib_lft_block_desc, ib_mft_block_desc;

/* The MulticastForwardingTable AttributeModifier's two parts. */
static inline unsigned ib_mft_mod_position(uint32_t mod)
{
	return mod >> 28;
}
static inline unsigned ib_mft_mod_block(uint32_t mod)
{
	return mod & 0x1ff;
}

/* A DR SMP request turned into its response (IBA 13.4.5, 14.2.2.2): R
 * set, method GetResp (for a Set too), D set, the 15-bit status. */
static inline void ib_dr_smp_to_response(struct ib_dr_smp *dr, uint16_t status)
{
	dr->R = 1;
	dr->Method = IB_MAD_METHOD_GET_RESP & 0x7f;
	dr->D = 1;
	dr->Status = status & 0x7fff;
}

/*
 * Directed-route SMPs hop by hop (IBA 14.2.2).  A DR SMP travels its
 * InitialPath outbound (D = 0) and its ReturnPath back (D = 1); every node
 * on the way applies one of these rules, which move HopPointer and record
 * the arrival port in ReturnPath.  A CA only sends, answers and receives;
 * only a switch forwards.  The first and last segments may be LID-routed
 * when DrSLID or DrDLID is not the permissive LID; that form is refused
 * here (IB_DR_DROP with a reason), as nothing softib runs sends it.
 */
enum ib_dr_action {
	IB_DR_DROP,	/* *why says which rule */
	IB_DR_DELIVER,	/* to this node's SMA (D = 0) or to the SM at this node (D = 1) */
	IB_DR_FORWARD,	/* out *out_port, a switch's port 1..NumPorts */
};

/*
 * A DR SMP arrived at a node on `in_port` (a CA's port, or a switch's
 * external port 1..num_ports): C14-9:2..5 outbound, C14-13:2..4 on return.
 * Updates HopPointer and ReturnPath as the rule says.
 */
enum ib_dr_action ib_dr_smp_arrive(struct ib_dr_smp *dr, bool is_switch, unsigned num_ports,
				   unsigned in_port, unsigned *out_port, const char **why);

/*
 * The node that originates a DR SMP, a request (D = 0, HopPointer 0:
 * C14-9:1) or the response it answers with (D = 1, HopPointer
 * HopCount + 1 as delivery left it: C14-13:1), is about to send it.
 * FORWARD names the port it leaves by; DELIVER means HopCount is 0 and the
 * SMP stays in this node (an SM asking its own port).
 */
enum ib_dr_action ib_dr_smp_depart(struct ib_dr_smp *dr, unsigned *out_port, const char **why);

#endif

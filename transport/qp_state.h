/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The QP state machine (IBA Vol 1 10.3.1 and 11.2.5.2): which transitions
 * exist, and for each transition and QP type which attributes a Modify QP
 * must carry and which it may carry.  The same facts the Linux kernel keeps
 * in ib_modify_qp_is_ok(), written as our own table.  Plus the value checks
 * (ranges, port, P_Key index, MTU) that apply to the attributes themselves.
 *
 * Enum values equal the libibverbs ones (IBV_QPS_*, IBV_QP_*, IBV_MTU_*) so
 * the provider passes them through; it static_asserts the equality.
 */
#ifndef SIB_TRANSPORT_QP_STATE_H
#define SIB_TRANSPORT_QP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/port.h" /* enum sib_mtu */

enum sib_qp_type {
	SIB_QPT_RC,
	SIB_QPT_UC,
	SIB_QPT_UD,
	SIB_QPT_XRC_SEND, /* XRC initiator (IBA 9.8.4) */
	SIB_QPT_XRC_RECV, /* XRC target: no send queue, receives into XRC SRQs */
	SIB_QPT_NUM
};

enum sib_qp_state {
	SIB_QPS_RESET,
	SIB_QPS_INIT,
	SIB_QPS_RTR,
	SIB_QPS_RTS,
	SIB_QPS_SQD,
	SIB_QPS_SQE,
	SIB_QPS_ERR,
	SIB_QPS_NUM
};

/* Modify QP attribute mask bits: the IBV_QP_* values. */
enum sib_qp_attr_mask {
	SIB_QP_STATE = 1u << 0,
	SIB_QP_CUR_STATE = 1u << 1,
	SIB_QP_EN_SQD_ASYNC_NOTIFY = 1u << 2,
	SIB_QP_ACCESS_FLAGS = 1u << 3,
	SIB_QP_PKEY_INDEX = 1u << 4,
	SIB_QP_PORT = 1u << 5,
	SIB_QP_QKEY = 1u << 6,
	SIB_QP_AV = 1u << 7,
	SIB_QP_PATH_MTU = 1u << 8,
	SIB_QP_TIMEOUT = 1u << 9,
	SIB_QP_RETRY_CNT = 1u << 10,
	SIB_QP_RNR_RETRY = 1u << 11,
	SIB_QP_RQ_PSN = 1u << 12,
	SIB_QP_MAX_QP_RD_ATOMIC = 1u << 13,
	SIB_QP_ALT_PATH = 1u << 14,
	SIB_QP_MIN_RNR_TIMER = 1u << 15,
	SIB_QP_SQ_PSN = 1u << 16,
	SIB_QP_MAX_DEST_RD_ATOMIC = 1u << 17,
	SIB_QP_PATH_MIG_STATE = 1u << 18,
	SIB_QP_CAP = 1u << 19,
	SIB_QP_DEST_QPN = 1u << 20,
	SIB_QP_RATE_LIMIT = 1u << 25,
};

/* Every bit libibverbs 44 defines (21..24 are Ethernet-only and private). */
#define SIB_QP_ATTR_ALL (((1u << 21) - 1) | SIB_QP_RATE_LIMIT)

enum sib_mig_state { SIB_MIG_MIGRATED, SIB_MIG_REARM, SIB_MIG_ARMED };

/* An address vector (IBA 17.2.3 / ibv_ah_attr), transport-side. */
struct sib_av {
	uint8_t DGID[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint16_t DLID;
	uint8_t SL;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct sib_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/* Everything Modify QP can set and Query QP returns (ibv_qp_attr). */
struct sib_qp_attr {
	enum sib_qp_state qp_state;
	enum sib_qp_state cur_qp_state;
	enum sib_mtu path_mtu;
	enum sib_mig_state path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned qp_access_flags;
	struct sib_qp_cap cap;
	struct sib_av ah_attr;
	struct sib_av alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

/* What the port offers, for the value checks. */
struct sib_qp_limits {
	enum sib_mtu active_mtu;
	uint16_t pkey_tbl_len;
	uint16_t gid_tbl_len;
	uint8_t phys_port_cnt;
	bool privileged; /* may give a QP a controlled Q_Key (Linux: CAP_NET_RAW) */
};

const char *sib_qp_state_name(enum sib_qp_state s); /* "RESET", ... "?" */
const char *sib_qp_type_name(enum sib_qp_type t);   /* "RC", ... "XRC_RECV" */
/* "IBV_QP_PKEY_INDEX" for one bit, "IBV_QP_?" for an unknown one. */
const char *sib_qp_attr_name(uint32_t bit);

/* Is cur -> next a transition IBA defines for this QP type? */
bool sib_qp_transition_legal(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next);
/* Attributes the transition requires / may carry besides IBV_QP_STATE. */
uint32_t sib_qp_attr_required(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next);
uint32_t sib_qp_attr_optional(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next);

/*
 * The mask check of a Modify QP from cur to next (next == cur when the mask
 * has no IBV_QP_STATE).  0, or EINVAL with the reason in why, e.g.
 * "RESET->INIT requires IBV_QP_PKEY_INDEX",
 * "INIT->RTR on UD does not allow IBV_QP_AV",
 * "RTS->INIT is not a legal transition".
 */
int sib_qp_modify_check(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next,
			uint32_t attr_mask, char *why, size_t why_len);

/*
 * The value check of the attributes named in attr_mask (call after the mask
 * check): 0 or EINVAL with the reason, e.g. "path_mtu 4096 exceeds the port's
 * active MTU 1024", "max_rd_atomic 17 exceeds 16", "port_num 2 does not exist".
 */
int sib_qp_attr_check(enum sib_qp_type t, enum sib_qp_state cur, const struct sib_qp_attr *attr,
		      uint32_t attr_mask, const struct sib_qp_limits *lim, char *why,
		      size_t why_len);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdio.h>

#include "transport/caps.h"
#include "transport/qp_state.h"

#define T(x) (1u << SIB_QPT_##x)
#define ALL_TYPES (T(RC) | T(UC) | T(UD) | T(XRC_SEND) | T(XRC_RECV))

/* Short names for the table below. */
#define CUR SIB_QP_CUR_STATE
#define SQDN SIB_QP_EN_SQD_ASYNC_NOTIFY
#define ACC SIB_QP_ACCESS_FLAGS
#define PKEY SIB_QP_PKEY_INDEX
#define PORT SIB_QP_PORT
#define QKEY SIB_QP_QKEY
#define AV SIB_QP_AV
#define MTU SIB_QP_PATH_MTU
#define TMO SIB_QP_TIMEOUT
#define RETRY SIB_QP_RETRY_CNT
#define RNR SIB_QP_RNR_RETRY
#define RQPSN SIB_QP_RQ_PSN
#define RDAT SIB_QP_MAX_QP_RD_ATOMIC
#define ALT SIB_QP_ALT_PATH
#define MINRNR SIB_QP_MIN_RNR_TIMER
#define SQPSN SIB_QP_SQ_PSN
#define DRDAT SIB_QP_MAX_DEST_RD_ATOMIC
#define MIG SIB_QP_PATH_MIG_STATE
#define DQPN SIB_QP_DEST_QPN

struct transition {
	unsigned types; /* QP types for which the transition exists */
	uint32_t req[SIB_QPT_NUM];
	uint32_t opt[SIB_QPT_NUM];
};

/*
 * IBA Vol 1 11.2.5.2 (Modify QP) and 10.3.1 (QP state diagram).  Any state
 * may go to RESET or ERR with no other attribute.  SQE exists only for UC
 * and UD (an RC send error takes the QP to ERR, 10.8.3), so SQE->RTS is
 * defined for those two only.  XRC initiators are RC without a receive side
 * and XRC targets RC without a send side (9.8.4), which is why the target
 * needs no retry counts.
 */
#define TO_RESET_OR_ERR                                                                            \
	[SIB_QPS_RESET] = { .types = ALL_TYPES }, [SIB_QPS_ERR] = { .types = ALL_TYPES }

#define RTS_OPT_UC (CUR | ALT | ACC | MIG)
#define RTS_OPT_RC (CUR | ALT | ACC | MINRNR | MIG)

static const struct transition table[SIB_QPS_NUM][SIB_QPS_NUM] = {
	[SIB_QPS_RESET] = {
		TO_RESET_OR_ERR,
		[SIB_QPS_INIT] = {
			.types = ALL_TYPES,
			.req = {
				[SIB_QPT_RC] = PKEY | PORT | ACC,
				[SIB_QPT_UC] = PKEY | PORT | ACC,
				[SIB_QPT_UD] = PKEY | PORT | QKEY,
				[SIB_QPT_XRC_SEND] = PKEY | PORT | ACC,
				[SIB_QPT_XRC_RECV] = PKEY | PORT | ACC,
			},
		},
	},
	[SIB_QPS_INIT] = {
		TO_RESET_OR_ERR,
		[SIB_QPS_INIT] = {
			.types = ALL_TYPES,
			.opt = {
				[SIB_QPT_RC] = PKEY | PORT | ACC,
				[SIB_QPT_UC] = PKEY | PORT | ACC,
				[SIB_QPT_UD] = PKEY | PORT | QKEY,
				[SIB_QPT_XRC_SEND] = PKEY | PORT | ACC,
				[SIB_QPT_XRC_RECV] = PKEY | PORT | ACC,
			},
		},
		[SIB_QPS_RTR] = {
			.types = ALL_TYPES,
			.req = {
				[SIB_QPT_RC] = AV | MTU | DQPN | RQPSN | DRDAT | MINRNR,
				[SIB_QPT_UC] = AV | MTU | DQPN | RQPSN,
				[SIB_QPT_XRC_SEND] = AV | MTU | DQPN | RQPSN,
				[SIB_QPT_XRC_RECV] = AV | MTU | DQPN | RQPSN | DRDAT | MINRNR,
			},
			.opt = {
				[SIB_QPT_RC] = ALT | ACC | PKEY,
				[SIB_QPT_UC] = ALT | ACC | PKEY,
				[SIB_QPT_UD] = PKEY | QKEY,
				[SIB_QPT_XRC_SEND] = ALT | ACC | PKEY,
				[SIB_QPT_XRC_RECV] = ALT | ACC | PKEY,
			},
		},
	},
	[SIB_QPS_RTR] = {
		TO_RESET_OR_ERR,
		[SIB_QPS_RTS] = {
			.types = ALL_TYPES,
			.req = {
				[SIB_QPT_RC] = TMO | RETRY | RNR | SQPSN | RDAT,
				[SIB_QPT_UC] = SQPSN,
				[SIB_QPT_UD] = SQPSN,
				[SIB_QPT_XRC_SEND] = TMO | RETRY | RNR | SQPSN | RDAT,
				[SIB_QPT_XRC_RECV] = TMO | SQPSN,
			},
			.opt = {
				[SIB_QPT_RC] = RTS_OPT_RC,
				[SIB_QPT_UC] = RTS_OPT_UC,
				[SIB_QPT_UD] = CUR | QKEY,
				[SIB_QPT_XRC_SEND] = RTS_OPT_UC,
				[SIB_QPT_XRC_RECV] = RTS_OPT_RC,
			},
		},
	},
	[SIB_QPS_RTS] = {
		TO_RESET_OR_ERR,
		[SIB_QPS_RTS] = {
			.types = ALL_TYPES,
			.opt = {
				[SIB_QPT_RC] = RTS_OPT_RC,
				[SIB_QPT_UC] = RTS_OPT_UC,
				[SIB_QPT_UD] = CUR | QKEY,
				[SIB_QPT_XRC_SEND] = RTS_OPT_UC,
				[SIB_QPT_XRC_RECV] = RTS_OPT_RC,
			},
		},
		[SIB_QPS_SQD] = {
			.types = ALL_TYPES,
			.opt = {
				[SIB_QPT_RC] = SQDN,
				[SIB_QPT_UC] = SQDN,
				[SIB_QPT_UD] = SQDN,
				[SIB_QPT_XRC_SEND] = SQDN,
				[SIB_QPT_XRC_RECV] = SQDN,
			},
		},
	},
	[SIB_QPS_SQD] = {
		TO_RESET_OR_ERR,
		[SIB_QPS_RTS] = {
			.types = ALL_TYPES,
			.opt = {
				[SIB_QPT_RC] = RTS_OPT_RC,
				[SIB_QPT_UC] = RTS_OPT_UC,
				[SIB_QPT_UD] = CUR | QKEY,
				[SIB_QPT_XRC_SEND] = RTS_OPT_UC,
				[SIB_QPT_XRC_RECV] = RTS_OPT_RC,
			},
		},
		/* Changing the path while drained (IBA 10.3.1.4, SQD). */
		[SIB_QPS_SQD] = {
			.types = ALL_TYPES,
			.opt = {
				[SIB_QPT_RC] = PORT | AV | TMO | RETRY | RNR | RDAT | DRDAT | ALT | ACC |
					       PKEY | MINRNR | MIG,
				[SIB_QPT_UC] = AV | ALT | ACC | PKEY | MIG,
				[SIB_QPT_UD] = PKEY | QKEY,
				[SIB_QPT_XRC_SEND] = PORT | AV | TMO | RETRY | RNR | RDAT | ALT | ACC |
						     PKEY | MIG,
				[SIB_QPT_XRC_RECV] = PORT | AV | TMO | DRDAT | ALT | ACC | PKEY |
						     MINRNR | MIG,
			},
		},
	},
	[SIB_QPS_SQE] = {
		TO_RESET_OR_ERR,
		[SIB_QPS_RTS] = {
			.types = T(UC) | T(UD),
			.opt = {
				[SIB_QPT_UC] = CUR | ACC,
				[SIB_QPT_UD] = CUR | QKEY,
			},
		},
	},
	[SIB_QPS_ERR] = {
		TO_RESET_OR_ERR,
	},
};

static const char *const state_names[SIB_QPS_NUM] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

static const char *const type_names[SIB_QPT_NUM] = {
	"RC", "UC", "UD", "XRC_SEND", "XRC_RECV",
};

static const char *const attr_names[32] = {
	[0] = "IBV_QP_STATE",
	[1] = "IBV_QP_CUR_STATE",
	[2] = "IBV_QP_EN_SQD_ASYNC_NOTIFY",
	[3] = "IBV_QP_ACCESS_FLAGS",
	[4] = "IBV_QP_PKEY_INDEX",
	[5] = "IBV_QP_PORT",
	[6] = "IBV_QP_QKEY",
	[7] = "IBV_QP_AV",
	[8] = "IBV_QP_PATH_MTU",
	[9] = "IBV_QP_TIMEOUT",
	[10] = "IBV_QP_RETRY_CNT",
	[11] = "IBV_QP_RNR_RETRY",
	[12] = "IBV_QP_RQ_PSN",
	[13] = "IBV_QP_MAX_QP_RD_ATOMIC",
	[14] = "IBV_QP_ALT_PATH",
	[15] = "IBV_QP_MIN_RNR_TIMER",
	[16] = "IBV_QP_SQ_PSN",
	[17] = "IBV_QP_MAX_DEST_RD_ATOMIC",
	[18] = "IBV_QP_PATH_MIG_STATE",
	[19] = "IBV_QP_CAP",
	[20] = "IBV_QP_DEST_QPN",
	[25] = "IBV_QP_RATE_LIMIT",
};

const char *sib_qp_state_name(enum sib_qp_state s)
{
	return (unsigned)s < SIB_QPS_NUM ? state_names[s] : "?";
}

const char *sib_qp_type_name(enum sib_qp_type t)
{
	return (unsigned)t < SIB_QPT_NUM ? type_names[t] : "?";
}

const char *sib_qp_attr_name(uint32_t bit)
{
	if (bit == 0 || (bit & (bit - 1)))
		return "IBV_QP_?";
	const char *n = attr_names[__builtin_ctz(bit)];
	return n ? n : "IBV_QP_?";
}

static bool valid_args(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next)
{
	return (unsigned)t < SIB_QPT_NUM && (unsigned)cur < SIB_QPS_NUM &&
	       (unsigned)next < SIB_QPS_NUM;
}

bool sib_qp_transition_legal(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next)
{
	return valid_args(t, cur, next) && (table[cur][next].types & (1u << t));
}

uint32_t sib_qp_attr_required(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next)
{
	if (!sib_qp_transition_legal(t, cur, next))
		return 0;
	return table[cur][next].req[t];
}

uint32_t sib_qp_attr_optional(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next)
{
	if (!sib_qp_transition_legal(t, cur, next))
		return 0;
	return table[cur][next].opt[t];
}

static uint32_t lowest_bit(uint32_t m)
{
	return m & -m;
}

int sib_qp_modify_check(enum sib_qp_type t, enum sib_qp_state cur, enum sib_qp_state next,
			uint32_t attr_mask, char *why, size_t why_len)
{
	if ((unsigned)t >= SIB_QPT_NUM) {
		snprintf(why, why_len, "unknown QP type %d", (int)t);
		return EINVAL;
	}
	if ((unsigned)cur >= SIB_QPS_NUM || (unsigned)next >= SIB_QPS_NUM) {
		snprintf(why, why_len, "unknown QP state %d",
			 (unsigned)cur >= SIB_QPS_NUM ? (int)cur : (int)next);
		return EINVAL;
	}
	if (attr_mask & ~SIB_QP_ATTR_ALL) {
		snprintf(why, why_len, "attribute mask 0x%x has unknown bits 0x%x", attr_mask,
			 attr_mask & ~SIB_QP_ATTR_ALL);
		return EINVAL;
	}
	if (!table[cur][next].types) {
		snprintf(why, why_len, "%s->%s is not a legal transition", state_names[cur],
			 state_names[next]);
		return EINVAL;
	}
	if (!(table[cur][next].types & (1u << t))) {
		snprintf(why, why_len, "%s->%s is not a legal transition for %s", state_names[cur],
			 state_names[next], type_names[t]);
		return EINVAL;
	}
	uint32_t req = table[cur][next].req[t];
	uint32_t opt = table[cur][next].opt[t];
	uint32_t missing = req & ~attr_mask;
	uint32_t extra = attr_mask & ~(req | opt | SIB_QP_STATE);

	if (missing) {
		snprintf(why, why_len, "%s->%s requires %s", state_names[cur], state_names[next],
			 sib_qp_attr_name(lowest_bit(missing)));
		return EINVAL;
	}
	if (extra) {
		snprintf(why, why_len, "%s->%s on %s does not allow %s", state_names[cur],
			 state_names[next], type_names[t], sib_qp_attr_name(lowest_bit(extra)));
		return EINVAL;
	}
	return 0;
}

static int av_check(const struct sib_av *av, const char *name, const struct sib_qp_limits *lim,
		    char *why, size_t why_len)
{
	if (av->SL > 15) {
		snprintf(why, why_len, "%s.sl %u is out of range 0..15", name, av->SL);
		return EINVAL;
	}
	if (av->port_num > lim->phys_port_cnt) {
		snprintf(why, why_len, "%s.port_num %u does not exist", name, av->port_num);
		return EINVAL;
	}
	if (av->is_global && av->sgid_index >= lim->gid_tbl_len) {
		snprintf(why, why_len, "%s.grh.sgid_index %u is beyond the GID table (%u entries)",
			 name, av->sgid_index, lim->gid_tbl_len);
		return EINVAL;
	}
	return 0;
}

static int range(unsigned v, unsigned max, const char *name, char *why, size_t why_len)
{
	if (v <= max)
		return 0;
	snprintf(why, why_len, "%s %u is out of range 0..%u", name, v, max);
	return EINVAL;
}

int sib_qp_attr_check(enum sib_qp_type t, enum sib_qp_state cur, const struct sib_qp_attr *a,
		      uint32_t m, const struct sib_qp_limits *lim, char *why, size_t why_len)
{
	(void)t;
	if ((m & SIB_QP_CUR_STATE) && a->cur_qp_state != cur) {
		snprintf(why, why_len, "cur_qp_state %s does not match the QP's state %s",
			 sib_qp_state_name(a->cur_qp_state), sib_qp_state_name(cur));
		return EINVAL;
	}
	if (m & SIB_QP_PATH_MTU) {
		unsigned bytes = sib_mtu_bytes(a->path_mtu);

		if (!bytes) {
			snprintf(why, why_len, "path_mtu code %d is not a valid MTU", (int)a->path_mtu);
			return EINVAL;
		}
		if (a->path_mtu > lim->active_mtu) {
			snprintf(why, why_len, "path_mtu %u exceeds the port's active MTU %u", bytes,
				 sib_mtu_bytes(lim->active_mtu));
			return EINVAL;
		}
	}
	if ((m & SIB_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > SIB_MAX_QP_INIT_RD_ATOM) {
		snprintf(why, why_len, "max_rd_atomic %u exceeds max_qp_init_rd_atom %u",
			 a->max_rd_atomic, SIB_MAX_QP_INIT_RD_ATOM);
		return EINVAL;
	}
	if ((m & SIB_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > SIB_MAX_QP_RD_ATOM) {
		snprintf(why, why_len, "max_dest_rd_atomic %u exceeds max_qp_rd_atom %u",
			 a->max_dest_rd_atomic, SIB_MAX_QP_RD_ATOM);
		return EINVAL;
	}
	/* Field widths: timeouts 5 bits (IBA 9.7.6.1.3 / 11.2.4.2), retry counts 3 bits. */
	if ((m & SIB_QP_TIMEOUT) && range(a->timeout, 31, "timeout", why, why_len))
		return EINVAL;
	if ((m & SIB_QP_RETRY_CNT) && range(a->retry_cnt, 7, "retry_cnt", why, why_len))
		return EINVAL;
	if ((m & SIB_QP_RNR_RETRY) && range(a->rnr_retry, 7, "rnr_retry", why, why_len))
		return EINVAL;
	if ((m & SIB_QP_MIN_RNR_TIMER) && range(a->min_rnr_timer, 31, "min_rnr_timer", why, why_len))
		return EINVAL;
	if ((m & SIB_QP_PATH_MIG_STATE) &&
	    range(a->path_mig_state, SIB_MIG_ARMED, "path_mig_state", why, why_len))
		return EINVAL;
	/* IBA 3.5.3 / 10.2.5: a Q_Key with the high bit set is a controlled
	 * Q_Key, which a consumer may not give its QP; Linux refuses it to
	 * unprivileged processes with EPERM (uverbs modify_qp, "RDMA/uverbs:
	 * Restrict usage of privileged QKEYs"): those without CAP_NET_RAW. */
	if ((m & SIB_QP_QKEY) && (a->qkey & 0x80000000u) && !lim->privileged) {
		snprintf(why, why_len,
			 "qkey 0x%08x is a controlled Q_Key (high bit set, IBA 10.2.5): not for "
			 "a QP of a process without CAP_NET_RAW",
			 a->qkey);
		return EPERM;
	}
	if ((m & SIB_QP_PKEY_INDEX) && a->pkey_index >= lim->pkey_tbl_len) {
		snprintf(why, why_len, "pkey_index %u is beyond the P_Key table (%u entries)",
			 a->pkey_index, lim->pkey_tbl_len);
		return EINVAL;
	}
	if ((m & SIB_QP_PORT) && (a->port_num < 1 || a->port_num > lim->phys_port_cnt)) {
		snprintf(why, why_len, "port_num %u does not exist", a->port_num);
		return EINVAL;
	}
	if ((m & SIB_QP_DEST_QPN) && a->dest_qp_num > SIB_QPN_MASK) {
		snprintf(why, why_len, "dest_qp_num 0x%x is wider than 24 bits", a->dest_qp_num);
		return EINVAL;
	}
	if ((m & SIB_QP_AV) && av_check(&a->ah_attr, "ah_attr", lim, why, why_len))
		return EINVAL;
	if (m & SIB_QP_ALT_PATH) {
		if (av_check(&a->alt_ah_attr, "alt_ah_attr", lim, why, why_len))
			return EINVAL;
		if (a->alt_port_num < 1 || a->alt_port_num > lim->phys_port_cnt) {
			snprintf(why, why_len, "alt_port_num %u does not exist", a->alt_port_num);
			return EINVAL;
		}
		if (a->alt_pkey_index >= lim->pkey_tbl_len) {
			snprintf(why, why_len,
				 "alt_pkey_index %u is beyond the P_Key table (%u entries)",
				 a->alt_pkey_index, lim->pkey_tbl_len);
			return EINVAL;
		}
		if (range(a->alt_timeout, 31, "alt_timeout", why, why_len))
			return EINVAL;
	}
	return 0;
}

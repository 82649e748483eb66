/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The QP state machine table, checked against an independent transcription
 * of IBA Vol 1 11.2.5.2 (the attributes each Modify QP requires and allows),
 * for every QP type x current state x next state x attribute bit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "transport/caps.h"
#include "transport/qp_state.h"

#define RC (1u << SIB_QPT_RC)
#define UC (1u << SIB_QPT_UC)
#define UD (1u << SIB_QPT_UD)
#define XI (1u << SIB_QPT_XRC_SEND)
#define XT (1u << SIB_QPT_XRC_RECV)
#define ANY (RC | UC | UD | XI | XT)

/* One row of the expectation: for these QP types, from -> to needs req, allows opt. */
struct expect {
	unsigned types;
	enum ibv_qp_state from, to;
	uint32_t req, opt;
};

static const struct expect spec[] = {
	/* Reset: to Init only (and, as from every state, to Reset and Error). */
	{ UD, IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0 },
	{ RC | UC | XI | XT, IBV_QPS_RESET, IBV_QPS_INIT,
	  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0 },
	/* Init -> Init: change what Reset -> Init set. */
	{ UD, IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY },
	{ RC | UC | XI | XT, IBV_QPS_INIT, IBV_QPS_INIT, 0,
	  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
	/* Init -> RTR: the connection's remote end for connected types. */
	{ UD, IBV_QPS_INIT, IBV_QPS_RTR, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	{ UC | XI, IBV_QPS_INIT, IBV_QPS_RTR,
	  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
	{ RC | XT, IBV_QPS_INIT, IBV_QPS_RTR,
	  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
	/* RTR -> RTS: the send side. */
	{ UD, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ UC, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_SQ_PSN,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE },
	{ XI, IBV_QPS_RTR, IBV_QPS_RTS,
	  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		  IBV_QP_MAX_QP_RD_ATOMIC,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE },
	{ RC, IBV_QPS_RTR, IBV_QPS_RTS,
	  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		  IBV_QP_MAX_QP_RD_ATOMIC,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
		  IBV_QP_PATH_MIG_STATE },
	{ XT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_TIMEOUT | IBV_QP_SQ_PSN,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
		  IBV_QP_PATH_MIG_STATE },
	/* RTS -> RTS and SQD -> RTS: the same optional set. */
	{ UD, IBV_QPS_RTS, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ UC | XI, IBV_QPS_RTS, IBV_QPS_RTS, 0,
	  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE },
	{ RC | XT, IBV_QPS_RTS, IBV_QPS_RTS, 0,
	  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
		  IBV_QP_MIN_RNR_TIMER },
	{ UD, IBV_QPS_SQD, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ UC | XI, IBV_QPS_SQD, IBV_QPS_RTS, 0,
	  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE },
	{ RC | XT, IBV_QPS_SQD, IBV_QPS_RTS, 0,
	  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
		  IBV_QP_MIN_RNR_TIMER },
	/* RTS -> SQD: drain, optionally with the SQ_DRAINED event. */
	{ ANY, IBV_QPS_RTS, IBV_QPS_SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	/* SQD -> SQD: change the path while drained. */
	{ UD, IBV_QPS_SQD, IBV_QPS_SQD, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	{ UC, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
		  IBV_QP_PATH_MIG_STATE },
	{ RC, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
		  IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER |
		  IBV_QP_PATH_MIG_STATE },
	{ XI, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		  IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE },
	{ XT, IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
		  IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER |
		  IBV_QP_PATH_MIG_STATE },
	/* SQE -> RTS: recovery exists only where SQE does (UC, UD). */
	{ UD, IBV_QPS_SQE, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ UC, IBV_QPS_SQE, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS },
};

/* Every attribute bit libibverbs defines, including ones no transition takes. */
static const uint32_t all_bits[] = {
	IBV_QP_CUR_STATE,	  IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_ACCESS_FLAGS,
	IBV_QP_PKEY_INDEX,	  IBV_QP_PORT,		      IBV_QP_QKEY,
	IBV_QP_AV,		  IBV_QP_PATH_MTU,	      IBV_QP_TIMEOUT,
	IBV_QP_RETRY_CNT,	  IBV_QP_RNR_RETRY,	      IBV_QP_RQ_PSN,
	IBV_QP_MAX_QP_RD_ATOMIC,  IBV_QP_ALT_PATH,	      IBV_QP_MIN_RNR_TIMER,
	IBV_QP_SQ_PSN,		  IBV_QP_MAX_DEST_RD_ATOMIC,  IBV_QP_PATH_MIG_STATE,
	IBV_QP_CAP,		  IBV_QP_DEST_QPN,	      IBV_QP_RATE_LIMIT,
};

/* Find the expectation for (type, from, to); legal is false if IBA has none. */
static bool expected(enum sib_qp_type t, int from, int to, uint32_t *req, uint32_t *opt)
{
	*req = *opt = 0;
	/* IBA 10.3.1: Modify QP to Reset or to Error is legal from any state. */
	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return true;
	for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
		if ((spec[i].types & (1u << t)) && (int)spec[i].from == from &&
		    (int)spec[i].to == to) {
			*req = spec[i].req;
			*opt = spec[i].opt;
			return true;
		}
	}
	return false;
}

static void enum_values_match_libibverbs(void **state)
{
	(void)state;
	assert_int_equal(SIB_QPS_RESET, IBV_QPS_RESET);
	assert_int_equal(SIB_QPS_INIT, IBV_QPS_INIT);
	assert_int_equal(SIB_QPS_RTR, IBV_QPS_RTR);
	assert_int_equal(SIB_QPS_RTS, IBV_QPS_RTS);
	assert_int_equal(SIB_QPS_SQD, IBV_QPS_SQD);
	assert_int_equal(SIB_QPS_SQE, IBV_QPS_SQE);
	assert_int_equal(SIB_QPS_ERR, IBV_QPS_ERR);
	assert_int_equal(SIB_QP_STATE, IBV_QP_STATE);
	assert_int_equal(SIB_QP_DEST_QPN, IBV_QP_DEST_QPN);
	assert_int_equal(SIB_QP_RATE_LIMIT, IBV_QP_RATE_LIMIT);
	assert_int_equal(SIB_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
	assert_int_equal(SIB_MTU_4096, IBV_MTU_4096);
	assert_int_equal(SIB_MTU_256, IBV_MTU_256);
}

static void table_matches_iba_for_every_type_and_transition(void **state)
{
	(void)state;
	for (int t = 0; t < SIB_QPT_NUM; t++) {
		for (int from = 0; from <= IBV_QPS_ERR; from++) {
			for (int to = 0; to <= IBV_QPS_ERR; to++) {
				uint32_t req, opt;
				bool legal = expected(t, from, to, &req, &opt);

				if (sib_qp_transition_legal(t, from, to) != legal)
					fail_msg("%s %s->%s: legal should be %d",
						 sib_qp_type_name(t), sib_qp_state_name(from),
						 sib_qp_state_name(to), legal);
				assert_int_equal(sib_qp_attr_required(t, from, to), req);
				assert_int_equal(sib_qp_attr_optional(t, from, to), opt);
			}
		}
	}
}

static void each_required_attribute_missing_fails_naming_it(void **state)
{
	char why[160], want[160];
	unsigned checked = 0;

	(void)state;
	for (int t = 0; t < SIB_QPT_NUM; t++)
		for (int from = 0; from <= IBV_QPS_ERR; from++)
			for (int to = 0; to <= IBV_QPS_ERR; to++) {
				uint32_t req, opt;

				if (!expected(t, from, to, &req, &opt))
					continue;
				/* exactly the required set passes */
				why[0] = 0;
				assert_int_equal(sib_qp_modify_check(t, from, to,
								     IBV_QP_STATE | req, why,
								     sizeof(why)),
						 0);
				for (size_t b = 0; b < sizeof(all_bits) / sizeof(all_bits[0]);
				     b++) {
					uint32_t bit = all_bits[b];

					if (!(req & bit))
						continue;
					assert_int_equal(
						sib_qp_modify_check(t, from, to,
								    IBV_QP_STATE | (req & ~bit),
								    why, sizeof(why)),
						EINVAL);
					snprintf(want, sizeof(want), "%s->%s requires %s",
						 sib_qp_state_name(from), sib_qp_state_name(to),
						 sib_qp_attr_name(bit));
					assert_string_equal(why, want);
					checked++;
				}
			}
	assert_int_equal(checked, 49); /* 15 at RESET->INIT, 20 at INIT->RTR, 14 at RTR->RTS */
}

static void each_attribute_not_allowed_fails_naming_it(void **state)
{
	char why[160], want[160];

	(void)state;
	for (int t = 0; t < SIB_QPT_NUM; t++)
		for (int from = 0; from <= IBV_QPS_ERR; from++)
			for (int to = 0; to <= IBV_QPS_ERR; to++) {
				uint32_t req, opt;

				if (!expected(t, from, to, &req, &opt))
					continue;
				for (size_t b = 0; b < sizeof(all_bits) / sizeof(all_bits[0]);
				     b++) {
					uint32_t bit = all_bits[b];
					int rc = sib_qp_modify_check(t, from, to,
								     IBV_QP_STATE | req | bit, why,
								     sizeof(why));

					if ((req | opt) & bit) {
						if (rc)
							fail_msg("%s %s->%s + %s: %s",
								 sib_qp_type_name(t),
								 sib_qp_state_name(from),
								 sib_qp_state_name(to),
								 sib_qp_attr_name(bit), why);
						continue;
					}
					assert_int_equal(rc, EINVAL);
					snprintf(want, sizeof(want), "%s->%s on %s does not allow %s",
						 sib_qp_state_name(from), sib_qp_state_name(to),
						 sib_qp_type_name(t), sib_qp_attr_name(bit));
					assert_string_equal(why, want);
				}
			}
}

static void illegal_transitions_fail_with_any_mask(void **state)
{
	char why[160];

	(void)state;
	for (int t = 0; t < SIB_QPT_NUM; t++)
		for (int from = 0; from <= IBV_QPS_ERR; from++)
			for (int to = 0; to <= IBV_QPS_ERR; to++) {
				uint32_t req, opt;

				if (expected(t, from, to, &req, &opt))
					continue;
				assert_int_equal(sib_qp_modify_check(t, from, to, IBV_QP_STATE,
								     why, sizeof(why)),
						 EINVAL);
				assert_non_null(strstr(why, "is not a legal transition"));
				assert_int_equal(sib_qp_modify_check(t, from, to,
								     IBV_QP_STATE | (0x1fffff & ~IBV_QP_CAP), why,
								     sizeof(why)),
						 EINVAL);
			}
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RTS, SIB_QPS_INIT, IBV_QP_STATE,
					     why, sizeof(why)),
			 EINVAL);
	assert_string_equal(why, "RTS->INIT is not a legal transition");
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_SQE, SIB_QPS_RTS, IBV_QP_STATE,
					     why, sizeof(why)),
			 EINVAL);
	assert_string_equal(why, "SQE->RTS is not a legal transition for RC");
	assert_int_equal(sib_qp_modify_check(SIB_QPT_UD, SIB_QPS_RTS, SIB_QPS_SQE, IBV_QP_STATE,
					     why, sizeof(why)),
			 EINVAL);
}

static void examples_from_the_issue_read_as_written(void **state)
{
	char why[160];

	(void)state;
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RESET, SIB_QPS_INIT,
					     IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, why,
					     sizeof(why)),
			 EINVAL);
	assert_string_equal(why, "RESET->INIT requires IBV_QP_PKEY_INDEX");
	assert_int_equal(sib_qp_modify_check(SIB_QPT_UD, SIB_QPS_INIT, SIB_QPS_RTR,
					     IBV_QP_STATE | IBV_QP_AV, why, sizeof(why)),
			 EINVAL);
	assert_string_equal(why, "INIT->RTR on UD does not allow IBV_QP_AV");
}

static void bad_states_types_and_unknown_bits_are_rejected(void **state)
{
	char why[160];

	(void)state;
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RESET, (enum sib_qp_state)7,
					     IBV_QP_STATE, why, sizeof(why)),
			 EINVAL);
	assert_string_equal(why, "unknown QP state 7");
	assert_int_equal(sib_qp_modify_check((enum sib_qp_type)9, SIB_QPS_RESET, SIB_QPS_RESET, 0,
					     why, sizeof(why)),
			 EINVAL);
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RESET, SIB_QPS_RESET, 1u << 21,
					     why, sizeof(why)),
			 EINVAL);
	assert_non_null(strstr(why, "unknown bits 0x200000"));
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RESET, SIB_QPS_RESET, 1u << 31,
					     why, sizeof(why)),
			 EINVAL);
	/* a zero-sized reason buffer is never written */
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RTS, SIB_QPS_INIT, IBV_QP_STATE,
					     NULL, 0),
			 EINVAL);
	/* no IBV_QP_STATE: the transition is cur -> cur */
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RTS, SIB_QPS_RTS,
					     IBV_QP_MIN_RNR_TIMER, why, sizeof(why)),
			 0);
	assert_int_equal(sib_qp_modify_check(SIB_QPT_RC, SIB_QPS_RTR, SIB_QPS_RTR,
					     IBV_QP_MIN_RNR_TIMER, why, sizeof(why)),
			 EINVAL);
	assert_string_equal(why, "RTR->RTR is not a legal transition");
}

static const struct sib_qp_limits lim = {
	.active_mtu = SIB_MTU_1024, .pkey_tbl_len = 1, .gid_tbl_len = 1, .phys_port_cnt = 1,
};

static int check(const struct sib_qp_attr *a, uint32_t mask, enum sib_qp_state cur, char *why)
{
	return sib_qp_attr_check(SIB_QPT_RC, cur, a, mask, &lim, why, 160);
}

static void attribute_values_out_of_range_are_rejected(void **state)
{
	struct sib_qp_attr a;
	char why[160];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.port_num = 1;
	a.path_mtu = SIB_MTU_1024;
	assert_int_equal(check(&a, IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_PATH_MTU,
			       SIB_QPS_INIT, why),
			 0);

	/* IBA 10.2.5: a controlled Q_Key (high bit) is not a consumer's to set. */
	a.qkey = 0x80010000u;
	assert_int_equal(check(&a, IBV_QP_QKEY, SIB_QPS_INIT, why), EPERM);
	assert_non_null(strstr(why, "controlled Q_Key"));
	a.qkey = 0x7fffffffu;
	assert_int_equal(check(&a, IBV_QP_QKEY, SIB_QPS_INIT, why), 0);

	a.path_mtu = SIB_MTU_4096;
	assert_int_equal(check(&a, IBV_QP_PATH_MTU, SIB_QPS_INIT, why), EINVAL);
	assert_string_equal(why, "path_mtu 4096 exceeds the port's active MTU 1024");
	a.path_mtu = 0;
	assert_int_equal(check(&a, IBV_QP_PATH_MTU, SIB_QPS_INIT, why), EINVAL);
	a.path_mtu = 6;
	assert_int_equal(check(&a, IBV_QP_PATH_MTU, SIB_QPS_INIT, why), EINVAL);
	a.path_mtu = SIB_MTU_256;

	a.max_rd_atomic = SIB_MAX_QP_INIT_RD_ATOM;
	assert_int_equal(check(&a, IBV_QP_MAX_QP_RD_ATOMIC, SIB_QPS_RTR, why), 0);
	a.max_rd_atomic = SIB_MAX_QP_INIT_RD_ATOM + 1;
	assert_int_equal(check(&a, IBV_QP_MAX_QP_RD_ATOMIC, SIB_QPS_RTR, why), EINVAL);
	assert_non_null(strstr(why, "max_rd_atomic"));
	a.max_dest_rd_atomic = SIB_MAX_QP_RD_ATOM + 1;
	assert_int_equal(check(&a, IBV_QP_MAX_DEST_RD_ATOMIC, SIB_QPS_INIT, why), EINVAL);
	assert_non_null(strstr(why, "max_dest_rd_atomic"));

	a.timeout = 31;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.min_rnr_timer = 31;
	assert_int_equal(check(&a, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MIN_RNR_TIMER,
			       SIB_QPS_RTR, why),
			 0);
	a.timeout = 32;
	assert_int_equal(check(&a, IBV_QP_TIMEOUT, SIB_QPS_RTR, why), EINVAL);
	assert_string_equal(why, "timeout 32 is out of range 0..31");
	a.retry_cnt = 8;
	assert_int_equal(check(&a, IBV_QP_RETRY_CNT, SIB_QPS_RTR, why), EINVAL);
	a.rnr_retry = 8;
	assert_int_equal(check(&a, IBV_QP_RNR_RETRY, SIB_QPS_RTR, why), EINVAL);
	a.min_rnr_timer = 32;
	assert_int_equal(check(&a, IBV_QP_MIN_RNR_TIMER, SIB_QPS_RTR, why), EINVAL);
	/* unchecked attributes are not looked at */
	assert_int_equal(check(&a, IBV_QP_SQ_PSN, SIB_QPS_RTR, why), 0);

	a.pkey_index = 1;
	assert_int_equal(check(&a, IBV_QP_PKEY_INDEX, SIB_QPS_RESET, why), EINVAL);
	assert_string_equal(why, "pkey_index 1 is beyond the P_Key table (1 entries)");
	a.port_num = 2;
	assert_int_equal(check(&a, IBV_QP_PORT, SIB_QPS_RESET, why), EINVAL);
	assert_string_equal(why, "port_num 2 does not exist");
	a.port_num = 0;
	assert_int_equal(check(&a, IBV_QP_PORT, SIB_QPS_RESET, why), EINVAL);

	a.dest_qp_num = 0x1000000;
	assert_int_equal(check(&a, IBV_QP_DEST_QPN, SIB_QPS_INIT, why), EINVAL);
	a.path_mig_state = 3;
	assert_int_equal(check(&a, IBV_QP_PATH_MIG_STATE, SIB_QPS_RTR, why), EINVAL);
}

static void address_vectors_and_cur_state_are_checked(void **state)
{
	struct sib_qp_attr a;
	char why[160];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.ah_attr.port_num = 1;
	a.ah_attr.SL = 15;
	a.ah_attr.is_global = 1;
	assert_int_equal(check(&a, IBV_QP_AV, SIB_QPS_INIT, why), 0);
	a.ah_attr.sgid_index = 1;
	assert_int_equal(check(&a, IBV_QP_AV, SIB_QPS_INIT, why), EINVAL);
	assert_non_null(strstr(why, "sgid_index 1"));
	a.ah_attr.sgid_index = 0;
	a.ah_attr.SL = 16;
	assert_int_equal(check(&a, IBV_QP_AV, SIB_QPS_INIT, why), EINVAL);
	a.ah_attr.SL = 0;
	a.ah_attr.port_num = 3;
	assert_int_equal(check(&a, IBV_QP_AV, SIB_QPS_INIT, why), EINVAL);
	a.ah_attr.port_num = 1;

	a.alt_port_num = 1;
	a.alt_ah_attr.port_num = 1;
	assert_int_equal(check(&a, IBV_QP_ALT_PATH, SIB_QPS_INIT, why), 0);
	a.alt_timeout = 40;
	assert_int_equal(check(&a, IBV_QP_ALT_PATH, SIB_QPS_INIT, why), EINVAL);
	a.alt_timeout = 0;
	a.alt_pkey_index = 5;
	assert_int_equal(check(&a, IBV_QP_ALT_PATH, SIB_QPS_INIT, why), EINVAL);

	a.cur_qp_state = SIB_QPS_RTS;
	assert_int_equal(check(&a, IBV_QP_CUR_STATE, SIB_QPS_RTS, why), 0);
	assert_int_equal(check(&a, IBV_QP_CUR_STATE, SIB_QPS_SQD, why), EINVAL);
	assert_string_equal(why, "cur_qp_state RTS does not match the QP's state SQD");
}

static void names_cover_every_value(void **state)
{
	(void)state;
	assert_string_equal(sib_qp_state_name(SIB_QPS_SQE), "SQE");
	assert_string_equal(sib_qp_state_name((enum sib_qp_state)99), "?");
	assert_string_equal(sib_qp_type_name(SIB_QPT_XRC_RECV), "XRC_RECV");
	assert_string_equal(sib_qp_attr_name(IBV_QP_RATE_LIMIT), "IBV_QP_RATE_LIMIT");
	assert_string_equal(sib_qp_attr_name(IBV_QP_STATE | IBV_QP_PORT), "IBV_QP_?");
	assert_string_equal(sib_qp_attr_name(1u << 22), "IBV_QP_?");
	assert_int_equal(sib_mtu_bytes(SIB_MTU_4096), 4096);
	assert_int_equal(sib_mtu_bytes(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(enum_values_match_libibverbs),
		cmocka_unit_test(table_matches_iba_for_every_type_and_transition),
		cmocka_unit_test(each_required_attribute_missing_fails_naming_it),
		cmocka_unit_test(each_attribute_not_allowed_fails_naming_it),
		cmocka_unit_test(illegal_transitions_fail_with_any_mask),
		cmocka_unit_test(examples_from_the_issue_read_as_written),
		cmocka_unit_test(bad_states_types_and_unknown_bits_are_rejected),
		cmocka_unit_test(attribute_values_out_of_range_are_rejected),
		cmocka_unit_test(address_vectors_and_cur_state_are_checked),
		cmocka_unit_test(names_cover_every_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

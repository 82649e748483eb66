/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory-window work requests, for the send queue's executor (qp/post
 * code): what a BIND_MW or LOCAL_INV work request does when its turn comes.
 * Each returns MEMREG_OK or the verdict, after logging one line that names
 * the rule; the caller completes the WR with IBV_WC_SUCCESS or, on a
 * refusal, IBV_WC_MW_BIND_ERR (bind) / IBV_WC_LOC_PROT_ERR (invalidate).
 */
#ifndef SIB_PROVIDER_MW_H
#define SIB_PROVIDER_MW_H

#include <stdint.h>

#include "memreg/memreg.h"
#include "provider/verbs_abi.h"

/* IBV_WR_BIND_MW (wr.bind_mw: mw, rkey, bind_info) posted on qp. */
enum memreg_verdict softib_mw_exec_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t new_rkey,
					const struct ibv_mw_bind_info *info);

/* IBV_WR_LOCAL_INV (invalidate_rkey) posted on qp. */
enum memreg_verdict softib_mw_exec_local_inv(struct ibv_qp *qp, uint32_t rkey);

#endif

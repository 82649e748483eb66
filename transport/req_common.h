/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the requesters of RC, UC and UD share (rc_requester.c defines it):
 * segmentation of SEND / RDMA WRITE into packets, the local checks a WQE
 * passes before its first packet, and the RC timers.
 */
#ifndef SIB_TRANSPORT_REQ_COMMON_H
#define SIB_TRANSPORT_REQ_COMMON_H

#include "transport/qp_impl.h"

/* Takes a responder resource (max_rd_atomic): READ, the atomics, and IBA
 * 1.5's FLUSH and ATOMIC WRITE. */
bool sib_wr_is_rd_atomic(enum sib_wr_opcode op);
/* CmpSwap / FetchAdd: answered by an Atomic Acknowledge. */
bool sib_wr_is_atomic(enum sib_wr_opcode op);
/* Answered by RDMA READ responses: READ, and FLUSH and ATOMIC WRITE (one
 * READ Response Only with no payload, IBA 1.5). */
bool sib_wr_is_read_answered(enum sib_wr_opcode op);
/* PSNs a WQE uses: packets of a SEND/WRITE, responses of a READ, 1 for an
 * atomic, a FLUSH or an ATOMIC WRITE. */
uint32_t sib_req_npkts(const struct sib_send_wqe *w, unsigned mtu);
/* The local L_Key checks of a WQE, once before its first packet (logs the refusal). */
enum sib_wc_status sib_req_precheck(struct sib_qp *qp, const struct sib_send_wqe *w);
const struct sib_endpoint *sib_req_dest(struct sib_qp *qp);
/*
 * Sends the segment of a SEND / WRITE starting at byte off with PSN psn.
 * ackreq sets AckReq; RC and XRC callers decide it alone (the requester
 * asks for coalesced ACKs), other transports set it on a message's last
 * packet too.  0 sent; -1 no link buffer (try later); a positive enum
 * sib_wc_status on a local error (logged).
 */
int sib_req_send_segment(struct sib_qp *qp, const struct sib_send_wqe *w, uint8_t transport,
			 uint32_t psn, uint64_t off, unsigned mtu, bool ackreq);
uint64_t sib_rc_rto_ns(const struct sib_qp *qp);
/* Arms (restart: re-arms) the local ACK timer while PSNs are outstanding. */
void sib_rc_arm_rto(struct sib_qp *qp, bool restart);
/* IBA 9.7.5.2.8 Table 45. */
uint64_t sib_rnr_timer_ns(uint8_t code);
/* One past the highest PSN ever sent: go-back-N may have rewound req.psn. */
uint32_t sib_rc_sent_end(const struct sib_qp *qp);
/* PSNs were acknowledged: the send window grows back (rc_requester.c). */
void sib_rc_window_grow(struct sib_qp *qp, uint32_t acked);
/* Completes the oldest WQE with an error (logged with why) and enters ERR. */
void sib_rc_req_fail_head(struct sib_qp *qp, enum sib_wc_status st, const char *why);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The inside of a QP, shared by transport/qp.c (objects, states, queues)
 * and the data path (engine.c, recv.c, packet_build.c, sge_copy.c, rc_*.c,
 * uc.c, ud.c).  Nothing outside transport/ includes this file.
 *
 * Everything here is guarded by qp->lock unless said otherwise.
 */
#ifndef SIB_TRANSPORT_QP_IMPL_H
#define SIB_TRANSPORT_QP_IMPL_H

#include <pthread.h>

#include "transport/caps.h"
#include "transport/engine.h"
#include "transport/qp.h"
#include "transport/rxq.h"

/* PSNs are 24 bits (IBA 9.3.1): arithmetic modulo 2^24, compared within a
 * window of 2^23 (IBA 9.7.4.1.1). */
#define SIB_PSN_MASK 0xffffffu
static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & SIB_PSN_MASK;
}
/* a - b as a signed distance in the 24-bit circle. */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(((a - b) & SIB_PSN_MASK) << 8) >> 8;
}

/* Requester's view of one send WQE, parallel to the send queue's slots. */
struct sib_req_wqe {
	bool started;	     /* PSNs assigned */
	bool begun;	     /* a packet of it went out once (go-back-N may clear
			      * started): SQD finishes it (IBA 10.3.1.4) */
	bool done;	     /* acknowledged (send/write) or answered (read/atomic) */
	uint8_t local_err;   /* a local error status to report when it reaches the head */
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t rsp_psn;    /* read: PSN of the next response expected */
	uint32_t asked;	     /* read: responses asked for (from first_psn); atomic: 1 once sent */
};

/* The requester (rc_requester.c, uc.c, ud.c) and completer (rc_completer.c). */
struct sib_req {
	uint32_t psn;	      /* next PSN to send */
	uint32_t una_psn;     /* oldest PSN not yet acknowledged */
	uint32_t cur;	      /* send-queue index (from head) being transmitted */
	uint64_t cur_off;     /* bytes of that WQE already sent */
	uint32_t cwnd;	      /* PSNs in flight allowed now; 0 = the full window */
	uint32_t ackreq_psn;  /* the last PSN that asked for an answer (rc_requester.c) */
	uint32_t psn_hi;      /* go-back-N rewound psn from here (if psn_hi_valid) */
	bool psn_hi_valid;
	uint32_t gap_psn;     /* read: a missing response was asked for again from here */
	bool gap_asked;
	uint8_t retry_left;   /* retry_cnt left for this episode */
	uint8_t rnr_left;     /* rnr_retry left (7 = forever) */
	bool rnr_wait;	      /* holding until rnr_deadline */
	bool tx_blocked;      /* the link had no buffer: continue at the next tick */
	bool busy;	      /* counted in the engine's RC QPs with requests in flight */
	uint64_t rto_deadline; /* local ACK timeout; 0 = not armed */
	uint64_t rnr_deadline;
	uint64_t path_deadline; /* waits for the SA's answer, looks again then (0: not) */
	struct sib_req_wqe *w; /* one per send-queue slot */
	uint32_t w_len;
};

/* One responder resource (IBA 9.7.5.1.4): a READ or atomic kept for replay. */
/* What a responder resource answers a duplicate with (IBA 9.7.5.1.4). */
enum sib_res_kind {
	SIB_RES_READ,	   /* the READ again, from the PSN asked for */
	SIB_RES_ATOMIC,	   /* the saved Atomic Acknowledge */
	SIB_RES_EMPTY_RSP, /* FLUSH, ATOMIC WRITE: the empty READ Response again (IBA 1.5) */
};

struct sib_rd_res {
	bool valid;
	enum sib_res_kind kind;
	uint32_t first_psn, last_psn;
	uint64_t va;
	uint32_t rkey;
	uint32_t pd; /* whose R_Keys (XRC: the XRC SRQ's PD) */
	uint32_t len;
	uint64_t orig; /* atomic: the value before the operation */
	/* a read response being transmitted */
	bool sending;
	uint32_t next_psn;
	uint64_t next_off;
};

/* The receive message in progress (RC/UC responder). */
enum sib_msg_kind { SIB_MSG_NONE, SIB_MSG_SEND, SIB_MSG_WRITE };

struct sib_resp {
	uint32_t epsn;	     /* expected PSN */
	uint32_t msn;	     /* messages completed (IBA 9.7.7.2.2) */
	bool nak_sent;	     /* a sequence-error NAK for epsn is out (send once) */
	bool uc_drop;	     /* UC: dropping until the next First/Only */
	enum sib_msg_kind kind;
	bool have_wqe;	     /* recv WQE taken for the message in progress */
	struct sib_recv_wqe wqe;
	uint32_t wqe_pd;     /* its buffers' PD: the SRQ's when it came from one */
	struct sib_sge sge[SIB_MAX_SGE];
	uint64_t off;	     /* bytes placed so far */
	uint64_t va;	     /* WRITE: next address */
	uint32_t rkey;
	uint64_t remaining;  /* WRITE: bytes left of DMALen */
	struct sib_rd_res *res; /* max_dest_rd_atomic entries */
	uint32_t res_len;
	uint32_t res_next;   /* round robin */
	/* XRC target (IBA 9.8.4): the XRC SRQ named by the packet being
	 * processed (valid during one rx only), and the number of the SRQ the
	 * receive WQE in progress came from. */
	struct sib_srq *xrc_srq;
	uint32_t wqe_srqn;
};

struct sib_qp {
	pthread_mutex_t lock;
	uint32_t qp_num;
	enum sib_qp_type type;
	struct sib_qp_attr attr; /* attr.qp_state is the state */
	bool sq_sig_all;
	struct sib_wq sq, rq;
	struct sib_cq *send_cq, *recv_cq;
	struct sib_srq *srq;
	struct sib_xrcd *xrcd;
	uint32_t pd;
	sib_qp_local_exec local_exec;
	struct sib_numtab *qpns;
	struct sib_event_sink *sink;
	void *user;

	/* ---- the data path ---- */
	struct sib_engine *eng;
	struct sib_rxq rxq; /* datagrams waiting to be applied (rxq.h); own lock */
	struct sib_qp *eng_next, *eng_prev; /* the engine's list; under its rwlock */
	struct sib_endpoint dest;	    /* connected QPs: where the peer lives */
	bool dest_valid;
	/* UD: the last source that passed the source check, trusted without
	 * asking again until src_until (engine time): a stream of datagrams
	 * costs one lookup a second. */
	uint16_t src_lid;
	struct sib_endpoint src_ep;
	uint64_t src_until;
	struct sib_req req;
	struct sib_resp resp;
	/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: no copy of its own multicasts (mcast.h). */
	bool block_self_mcast_lb;
	bool sqd_notify; /* SQ_DRAINED is due when the drain ends (en_sqd_async_notify) */
};

/*
 * The QP's lock: whoever holds it applies the QP's datagrams (the receive
 * rule, docs/architecture.md).  sib_qp_unlock applies what waits in the
 * QP's input queue before it lets go (recv.c); every unlock of qp->lock in
 * the data path goes through it, so nothing queued is left behind.
 */
static inline void sib_qp_lock(struct sib_qp *qp)
{
	pthread_mutex_lock(&qp->lock);
}
void sib_qp_unlock(struct sib_qp *qp);

/* qp.c: with the lock held. */
void sib_qp_enter_error_locked(struct sib_qp *qp);
/* In SQD: once nothing begun is outstanding, the drain is over (SQ_DRAINED
 * if the consumer asked for it, IBA 10.3.1.4, 11.6.3.1). */
void sib_qp_sqd_check(struct sib_qp *qp);
/* The requesters: in SQD no WQE that has not begun starts. */
static inline bool sib_qp_may_start(const struct sib_qp *qp)
{
	return qp->attr.qp_state != SIB_QPS_SQD;
}
void sib_qp_complete_send_locked(struct sib_qp *qp, const struct sib_send_wqe *w,
				 enum sib_wc_status status);
/* qp.c: reset the data path state (RESET, INIT) and start it (RTR, RTS). */
void sib_qp_dp_reset(struct sib_qp *qp);

/* engine.c */
void sib_engine_qp_attach(struct sib_engine *eng, struct sib_qp *qp);
void sib_engine_qp_detach(struct sib_engine *eng, struct sib_qp *qp);
struct memreg_table *sib_engine_memreg(struct sib_engine *eng);
struct sib_port *sib_engine_port(struct sib_engine *eng);
void sib_engine_count(struct sib_engine *eng, uint64_t *counter);
struct sib_engine_counters *sib_engine_ctrs(struct sib_engine *eng);
struct sib_numtab *sib_engine_qpns(struct sib_engine *eng);
/* The owner's lookup (engine.h sib_lookup_fn); -ENOENT without one. */
int sib_engine_lookup(struct sib_engine *eng, uint16_t lid, bool refresh, struct sib_endpoint *out);
/* The engine's QPs (a list through eng_next), under sib_engine_rx_lock. */
struct sib_qp *sib_engine_qps(struct sib_engine *eng);
struct sib_numtab *sib_engine_srqns(struct sib_engine *eng);
/* A timer or waiting output needs a tick by engine time when. */
void sib_engine_want_tick(struct sib_engine *eng, uint64_t when);
/* How often a send queue waiting for the SA's answer looks at the SA
 * client's cache again (engine.h: a verb never waits on the SA). */
#define SIB_PATH_POLL_NS 1000000ull
/* Keeps every QP of the engine alive (shared): rx and tick. */
void sib_engine_rx_lock(struct sib_engine *eng);
/* RC QPs with requests in flight (they share a window, rc_requester.c). */
uint32_t sib_engine_rc_busy(struct sib_engine *eng);
void sib_engine_rc_busy_add(struct sib_engine *eng, int d);
/* Under sib_engine_rx_lock: the QP numbered qpn, or NULL. */
struct sib_qp *sib_engine_rx_find(struct sib_engine *eng, uint32_t qpn);
void sib_engine_rx_unlock(struct sib_engine *eng);

/* engine.c: a P_Key violation goes to the owner (trap 257). */
void sib_engine_report_bad_pkey(struct sib_engine *eng, const struct ib_packet *pkt);

/* mcast.c: the engine's multicast tables (mcast.h). */
struct sib_mcast;
struct sib_mcast *sib_mcast_new(void);
void sib_mcast_free(struct sib_mcast *mc);
struct sib_mcast *sib_engine_mcast(struct sib_engine *eng);
/* A QP leaves every group it is attached to (it is being destroyed). */
void sib_mcast_detach_all(struct sib_mcast *mc, uint32_t qpn);
/* Calls fn once per port a multicast to mlid goes to (this port's own
 * endpoint when one of its QPs is attached); returns how many. */
typedef void (*sib_mcast_dest_fn)(void *arg, const struct sib_endpoint *dst);
unsigned sib_mcast_for_each_dest(struct sib_engine *eng, uint16_t mlid, sib_mcast_dest_fn fn,
				 void *arg);
/* The QPs (numbers, up to max, each once) attached to the group a
 * multicast packet is for: by MGID when mgid is not NULL, else by MLID. */
unsigned sib_mcast_qpns(struct sib_engine *eng, const uint8_t *mgid, uint16_t mlid, uint32_t *out,
			unsigned max);

/* packet_build.c: building and sending packets. */
unsigned sib_qp_mtu(const struct sib_qp *qp);
/*
 * Headers from the QP's path (or av for UD), BTH P_Key from its pkey_index;
 * the caller sets bth.OpCode/SE/A/PSN/DestQP and the ETHs.  Then
 * sib_tx_alloc gives a buffer with headers written and *payload pointing at
 * where payload_len bytes go; sib_tx_commit seals and sends it.
 */
void sib_tx_headers(struct sib_qp *qp, const struct sib_av *av, struct ib_packet *pkt);
uint8_t *sib_tx_alloc(struct sib_qp *qp, struct ib_packet *pkt, uint32_t payload_len,
		      uint8_t **payload, size_t *hdr_len);
void sib_tx_commit(struct sib_qp *qp, uint8_t *buf, size_t hdr_len, uint32_t payload_len,
		   const struct sib_endpoint *dst);
/*
 * Sends the packet in buf (headers from sib_tx_alloc) with its payload read
 * where it lies, g->host[0..payload_len): the grant g (from memreg_check)
 * is kept until the kernel has copied the payload, so a deregistration
 * waits for it.  Takes over g whatever happens.
 */
void sib_tx_commit_split(struct sib_qp *qp, uint8_t *buf, size_t hdr_len, uint32_t payload_len,
			 const struct sib_endpoint *dst, const struct memreg_grant *g);
/* A payload-less packet (ACK, NAK, read request, atomic ACK): 0 or -ENOBUFS. */
int sib_tx_send_hdr(struct sib_qp *qp, struct ib_packet *pkt, const struct sib_endpoint *dst);

/*
 * sge_copy.c: copies between a flat buffer and an SGE list at byte offset off, checking
 * each L_Key (PD pd, QP qpn) for the rights `access` (0: local read,
 * MEMREG_ACCESS_LOCAL_WRITE: scatter).  to_sge: buf -> SGEs.  Returns
 * MEMREG_OK or the refusal; *bad (if not NULL) gets the request refused
 * and *grant its explanation fields.  Length beyond the SGEs:
 * MEMREG_OUT_OF_BOUNDS with bad->key 0 (the caller maps it to LOC_LEN_ERR).
 */
enum memreg_verdict sib_sge_copy(struct sib_qp *qp, uint32_t pd, const struct sib_sge *sge,
				 uint32_t num_sge, uint64_t off, uint8_t *buf, uint32_t len,
				 bool to_sge, struct memreg_request *bad,
				 struct memreg_grant *grant);
/* Logs one line for a refused access: "<what> on QP 0x..: <memreg_explain>". */
void sib_log_access(struct sib_qp *qp, const char *what, const struct memreg_request *req,
		    enum memreg_verdict v, const struct memreg_grant *g);

/* Completions on the receive side. */
void sib_recv_complete(struct sib_qp *qp, const struct sib_recv_wqe *w, struct sib_cqe *c,
		       bool solicited);
/* Take a receive WQE from the RQ or SRQ (XRC: resp.xrc_srq) into qp->resp.wqe / sge. */
bool sib_recv_take(struct sib_qp *qp);
/* Where receive completions go: the recv CQ, or for an XRC target the CQ of
 * the XRC SRQ of the WQE in progress (NULL if that SRQ is gone). */
struct sib_cq *sib_recv_cq(struct sib_qp *qp);

/* rc_requester.c / rc_completer.c / rc_responder.c / uc.c / ud.c */
void sib_rc_req_run(struct sib_qp *qp);
void sib_rc_req_retry(struct sib_qp *qp, uint32_t from_psn);
void sib_rc_req_timer(struct sib_qp *qp, uint64_t now);
void sib_rc_comp_rx(struct sib_qp *qp, const struct ib_packet *pkt);
void sib_rc_comp_advance(struct sib_qp *qp);
void sib_rc_resp_rx(struct sib_qp *qp, const struct ib_packet *pkt);
void sib_rc_resp_run(struct sib_qp *qp);
void sib_uc_req_run(struct sib_qp *qp);
void sib_uc_resp_rx(struct sib_qp *qp, const struct ib_packet *pkt);
void sib_ud_req_run(struct sib_qp *qp);
void sib_ud_resp_rx(struct sib_qp *qp, const struct ib_packet *pkt);

/* The send WQE at send-queue index i (0 = oldest) and its requester view. */
static inline struct sib_send_wqe *sq_wqe(struct sib_qp *qp, uint32_t i)
{
	return sib_wq_at(&qp->sq, i);
}
static inline struct sib_req_wqe *sq_req(struct sib_qp *qp, uint32_t i)
{
	return &qp->req.w[(qp->sq.head + i) % qp->sq.max_wr];
}

#endif

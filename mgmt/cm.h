/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The IB Communication Manager (IBA Vol 1 chapter 12) of a node: an agent
 * on QP1 for management class 0x07 that sets up, tears down and resolves
 * connections with REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ and
 * SIDR_REP, as the kernel's ib_cm does for its consumers.
 *
 * A consumer (the rdma_cm emulation in provider/, unit tests) creates CM
 * ids, listens on a ServiceID or sends a REQ/SIDR_REQ, and is told what
 * happens through its handler.  The CM keeps the protocol: the state
 * machine of IBA 12.9 (Figure 152 ff.), retransmission of REQ, REP, DREQ
 * and SIDR_REQ until the peer answers or MaxCMRetries runs out (sends of
 * the node's MAD layer, mgmt/mad_send.h, canceled by the answer), MRA,
 * duplicate REQ/REP/DREQ/SIDR_REQ answered from what was sent before,
 * stale connections rejected (IBA 12.4.1), and TIMEWAIT before a
 * connection's QP numbers may be reused (12.9.8.4).
 *
 * The source check (softib's stand-in for a fabric's cabling, as for data:
 * transport/engine.h).  A REQ or SIDR_REQ counts only when it comes from the
 * UDP endpoint the SA places its SLID at; while the SA is being asked it
 * waits (at most SIB_CM_HELD_MAX of them, the oldest dropped first) and
 * goes on when the answer comes (sib_cm_source_known).  Every other message
 * counts only when it comes from its connection's peer, the endpoint the
 * REQ went to or came from, and names both comm IDs where IBA gives both
 * (Linux's cm_acquire_id).  Comm IDs are random, so none can be guessed
 * from another.  What fails is dropped and counted (rx_wrong_source,
 * rx_unknown_source) and logged (sib_log_nth: the 1st, 2nd, 4th ... from the
 * wrong endpoint at the default level, the rest at debug).
 *
 * Bounds: the CM finds an id by hashing (its comm ID, the peer's comm ID,
 * the peer's QPN), never by walking all of them; at most
 * SIB_CM_PENDING_MAX connection requests wait for their consumer's
 * answer, and a REQ beyond that is rejected with "no resources" (IBA
 * 12.6.7.2, reason 3), counted in rx_pending_full and logged.
 *
 * Locking: one mutex per CM (sib_cm_lock).  Every function below except
 * sib_cm_new/free and the lock functions must be called with it held; the
 * CM calls handlers with it held, from the thread that delivers MADs or
 * runs timers.  A handler may call these functions on any id except that
 * it must not destroy the id it is called for: it returns nonzero instead,
 * and the CM destroys it (for REQ and SIDR_REQ, see sib_cm_handler).
 * Consumers may keep their own state under the same mutex, so that a
 * handler and a consumer's command never take two locks.
 */
#ifndef SIB_MGMT_CM_H
#define SIB_MGMT_CM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/timer.h"
#include "link/link.h"
#include "mgmt/mad_packet.h"
#include "wire/cm.h"

struct sib_node;
struct sib_cm;
struct sib_cm_id;

/* IBA 12.9 connection states, plus SIDR's. */
enum sib_cm_state {
	SIB_CM_IDLE,
	SIB_CM_LISTEN,
	SIB_CM_REQ_SENT,
	SIB_CM_REQ_RCVD,
	SIB_CM_MRA_REQ_SENT, /* we sent (or owe, delayed) an MRA for their REQ */
	SIB_CM_MRA_REQ_RCVD, /* they sent an MRA for our REQ */
	SIB_CM_REP_SENT,
	SIB_CM_REP_RCVD,
	SIB_CM_MRA_REP_SENT,
	SIB_CM_MRA_REP_RCVD,
	SIB_CM_ESTABLISHED,
	SIB_CM_DREQ_SENT,
	SIB_CM_DREQ_RCVD,
	SIB_CM_TIMEWAIT,
	SIB_CM_SIDR_REQ_SENT,
	SIB_CM_SIDR_REQ_RCVD,
	SIB_CM_STATE_COUNT
};

const char *sib_cm_state_name(enum sib_cm_state s);

enum sib_cm_event_type {
	SIB_CM_EV_REQ_RECEIVED,	     /* id is new; ev->listen_id is the listener */
	SIB_CM_EV_REP_RECEIVED,
	SIB_CM_EV_RTU_RECEIVED,
	SIB_CM_EV_USER_ESTABLISHED,  /* sib_cm_establish */
	SIB_CM_EV_REJ_RECEIVED,
	SIB_CM_EV_MRA_RECEIVED,
	SIB_CM_EV_DREQ_RECEIVED,
	SIB_CM_EV_DREP_RECEIVED,
	SIB_CM_EV_TIMEWAIT_EXIT,
	SIB_CM_EV_REQ_ERROR,	     /* our REQ got no answer */
	SIB_CM_EV_REP_ERROR,	     /* our REP got no answer */
	SIB_CM_EV_DREQ_ERROR,	     /* our DREQ got no answer */
	SIB_CM_EV_SIDR_REQ_RECEIVED, /* id is new; ev->listen_id is the listener */
	SIB_CM_EV_SIDR_REQ_ERROR,
	SIB_CM_EV_SIDR_REP_RECEIVED,
};

const char *sib_cm_event_name(enum sib_cm_event_type t);

/* What a handler is told; the message pointers are valid during the call. */
struct sib_cm_event {
	enum sib_cm_event_type type;
	struct sib_cm_id *listen_id;		/* REQ/SIDR_REQ_RECEIVED */
	const struct ib_cm_req *req;		/* REQ_RECEIVED */
	const struct ib_cm_rep *rep;		/* REP_RECEIVED */
	const struct ib_cm_rej *rej;		/* REJ_RECEIVED */
	const struct ib_cm_dreq *dreq;		/* DREQ_RECEIVED */
	const struct ib_cm_sidr_req *sidr_req;	/* SIDR_REQ_RECEIVED */
	const struct ib_cm_sidr_rep *sidr_rep;	/* SIDR_REP_RECEIVED */
	const struct sib_mad_addr *addr;	/* the MAD's addressing (LIDs, SL, P_Key) */
};

/*
 * Returns 0 to keep the id.  Nonzero asks the CM to destroy it after the
 * call; for REQ_RECEIVED and SIDR_REQ_RECEIVED a positive value is also
 * what the requester is told (a REJ reason, enum ib_cm_rej_reason, or a
 * SIDR_REP status, enum ib_cm_sidr_status), and SIB_CM_DROP destroys the
 * new id without an answer (the requester retries: a full backlog).
 */
typedef int (*sib_cm_handler)(struct sib_cm_id *id, const struct sib_cm_event *ev);
#define SIB_CM_DROP (-1)

/* One path, as a PathRecord gives it and a REQ carries it (IBA 12.6.5). */
struct sib_cm_path {
	uint16_t SLID, DLID;
	uint8_t SGID[16], DGID[16];
	uint32_t FlowLabel;
	uint8_t Rate;
	uint8_t TrafficClass;
	uint8_t HopLimit;
	uint8_t SL;
	uint8_t MTU;		/* enum ib_mtu_code */
	uint16_t P_Key;
	uint8_t PacketLifeTime; /* 4.096 us * 2^x */
};

/* The timing both ends of a connection use (IBA 12.6.5 REQ fields). */
struct sib_cm_timing {
	uint8_t remote_cm_response_timeout; /* how long the peer may take */
	uint8_t local_cm_response_timeout;  /* how long we may take */
	uint8_t max_cm_retries;		    /* 0..15 */
};

struct sib_cm_req_param {
	uint64_t service_id;
	uint32_t qpn;
	uint8_t transport;	/* IB_CM_TRANSPORT_RC, _UC, or _EXT: XRC */
	uint32_t starting_psn;	/* 24 bits: our receive queue's first PSN */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;	/* 3 bits */
	uint8_t rnr_retry_count; /* 3 bits */
	uint8_t flow_control;
	uint8_t srq;
	uint8_t local_ack_timeout; /* for the primary path */
	struct sib_cm_path path;
	struct sib_cm_timing timing;
	struct sib_endpoint peer; /* where path.DLID's port lives */
	const uint8_t *private_data;
	unsigned private_data_len; /* up to IB_CM_REQ_PRIVATE_DATA_BYTES */
};

struct sib_cm_rep_param {
	uint32_t qpn;
	uint32_t starting_psn; /* 24 bits: our receive queue's first PSN */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t flow_control;
	uint8_t rnr_retry_count;
	uint8_t srq;
	const uint8_t *private_data;
	unsigned private_data_len; /* up to IB_CM_REP_PRIVATE_DATA_BYTES */
};

struct sib_cm_sidr_req_param {
	uint64_t service_id;
	struct sib_cm_path path;
	struct sib_cm_timing timing;
	struct sib_endpoint peer;
	const uint8_t *private_data;
	unsigned private_data_len; /* up to IB_CM_SIDR_REQ_PRIVATE_DATA_BYTES */
};

/* What `softib info` shows and tests assert. */
struct sib_cm_counters {
	uint64_t rx;		/* CM MADs taken */
	uint64_t tx;		/* CM MADs sent, retransmissions included */
	uint64_t rx_malformed;	/* dropped: bad version, method, attribute or field */
	uint64_t rx_unmatched;	/* dropped: no connection they belong to */
	uint64_t retransmits;
	uint64_t timeouts;	/* requests that ran out of retries */
	uint64_t duplicates;	/* duplicate requests answered again or ignored */
	uint64_t stale;		/* REQs rejected as stale (IBA 12.4.1) */
	uint64_t rx_wrong_source; /* dropped: not from where its SLID lives or its peer is */
	uint64_t rx_unknown_source; /* dropped: nobody could say where its SLID lives */
	uint64_t rx_held;	/* requests that waited for the SA to place their source */
	uint64_t rx_pending_full; /* REQs rejected: SIB_CM_PENDING_MAX wait already */
};

/*
 * A CM id: one endpoint of one connection (or a listener).  Consumers read
 * the public fields; the CM owns the rest.
 */
struct sib_cm_id {
	struct sib_cm *cm;
	sib_cm_handler handler;
	void *context;
	enum sib_cm_state state;
	unsigned port_num;
	uint64_t service_id, service_mask; /* LISTEN; the REQ's for others */
	uint32_t local_comm_id, remote_comm_id;
	uint64_t remote_ca_guid;
	uint32_t local_qpn, remote_qpn;
	bool xrc; /* an XRC connection: the target's QPN rides in the REP's LocalEECN */
	struct sib_cm_path path;	    /* primary path, seen from this end */
	struct sib_endpoint peer;	    /* the peer port's UDP endpoint */
	uint8_t local_ack_timeout;	    /* the QP's (REQ primary LocalACKTimeout) */

	/* ---- the CM's own ---- */
	struct sib_cm_id *next, *prev;
	struct sib_cm_id *hnext[4];	    /* the CM's tables (cm.c: SIB_CM_BY_*) */
	uint32_t hkey[4];
	uint8_t hashed;			    /* bit t: in table t */
	bool pending_req;		    /* a REQ waiting for its consumer's answer */
	bool destroyed;			    /* the consumer let go */
	bool unlinked;			    /* forgotten; freed by its last timer callback */
	bool timer_armed;		    /* the TIMEWAIT timer */
	unsigned pending;		    /* timer callbacks that may still run */
	uint64_t deadline_ns;
	bool mra_delayed;		    /* an MRA is owed on a duplicate */
	uint8_t mra_service_timeout;
	uint64_t tid;			    /* of the exchange in progress */
	uint64_t resp_ns;		    /* peer's response time + 2 PLT */
	uint8_t max_retries;		    /* MaxCMRetries */
	uint64_t send_tid;		    /* msg's send is out (mad_send.h); 0: none */
	bool reply_valid;
	uint8_t msg[IB_MAD_BYTES];	    /* the request the MAD layer retransmits */
	uint8_t reply[IB_MAD_BYTES];	    /* the last answer, for duplicates */
	struct sib_mad_addr addr;	    /* how MADs reach the peer */
	struct sib_timer timer;
};

/* A REQ or SIDR_REQ whose source the SA is being asked about (cm.c). */
#define SIB_CM_HELD_MAX 16
struct sib_cm_held {
	bool used;
	unsigned port_num;
	struct sib_mad_addr a;
	struct sib_endpoint from;
	uint64_t since_ns;
	uint8_t mad[IB_MAD_BYTES];
};

#define SIB_CM_HASH_BITS 10
#define SIB_CM_PENDING_MAX 1024 /* the kernel ucma's largest listen backlog */

struct sib_cm {
	pthread_mutex_t lock;
	struct sib_node *node;
	struct sib_cm_id *ids; /* every id the CM still keeps */
	/* The same ids, by comm ID, by the peer's comm ID, by the peer's QPN,
	 * and the listeners (cm.c). */
	struct sib_cm_id *table[4][1u << SIB_CM_HASH_BITS];
	unsigned pending; /* ids with pending_req */
	struct sib_cm_counters counters;
	struct sib_cm_held held[SIB_CM_HELD_MAX];
};

/* The node's CM (node->cm), registered with the MAD layer for class 0x07
 * on QP1.  0 or a negative errno. */
int sib_cm_register(struct sib_node *node);
/* Frees every id, whatever its state; nothing may deliver MADs or run
 * timers any more. */
void sib_cm_free(struct sib_node *node);
/* The SA client cached where LID lid lives (or that nothing does): the
 * requests from it that wait go on.  Takes the CM's lock. */
void sib_cm_source_known(struct sib_node *node, unsigned port_num, uint16_t lid);

static inline void sib_cm_lock(struct sib_cm *cm)
{
	pthread_mutex_lock(&cm->lock);
}
static inline void sib_cm_unlock(struct sib_cm *cm)
{
	pthread_mutex_unlock(&cm->lock);
}

/* NULL when out of memory. */
struct sib_cm_id *sib_cm_create_id(struct sib_cm *cm, unsigned port_num, sib_cm_handler handler,
				   void *context);
/*
 * The consumer lets go: no handler call for it follows.  What IBA asks of
 * the state it is in goes out (REJ from a handshake, DREQ from
 * ESTABLISHED, DREP from DREQ_RCVD, a rejecting SIDR_REP); a connection
 * then stays in TIMEWAIT inside the CM before it is freed.
 */
void sib_cm_destroy_id(struct sib_cm_id *id);

/* IDLE -> LISTEN for every ServiceID s with (s & mask) == (service_id &
 * mask); -EADDRINUSE when another listener overlaps, -EINVAL otherwise. */
int sib_cm_listen(struct sib_cm_id *id, uint64_t service_id, uint64_t mask);

/* Each returns 0, or -EINVAL (wrong state, private data too long) or
 * another negative errno, after a debug line. */
int sib_cm_send_req(struct sib_cm_id *id, const struct sib_cm_req_param *p);
int sib_cm_send_rep(struct sib_cm_id *id, const struct sib_cm_rep_param *p);
int sib_cm_send_rtu(struct sib_cm_id *id, const uint8_t *pd, unsigned len);
int sib_cm_send_rej(struct sib_cm_id *id, uint16_t reason, const uint8_t *ari, unsigned ari_len,
		    const uint8_t *pd, unsigned len);
/* REQ_RCVD -> MRA_REQ_SENT, REP_RCVD -> MRA_REP_SENT.  delay: send it only
 * when a duplicate of the message arrives (the peer is retrying). */
int sib_cm_send_mra(struct sib_cm_id *id, uint8_t service_timeout, bool delay,
		    const uint8_t *pd, unsigned len);
int sib_cm_send_dreq(struct sib_cm_id *id, const uint8_t *pd, unsigned len);
int sib_cm_send_drep(struct sib_cm_id *id, const uint8_t *pd, unsigned len);
/* The first data packet arrived before the RTU (rdma_notify COMM_EST):
 * REP_SENT or MRA_REP_RCVD -> ESTABLISHED, handler gets USER_ESTABLISHED.
 * -EISCONN when already ESTABLISHED. */
int sib_cm_establish(struct sib_cm_id *id);
int sib_cm_send_sidr_req(struct sib_cm_id *id, const struct sib_cm_sidr_req_param *p);
int sib_cm_send_sidr_rep(struct sib_cm_id *id, uint8_t status, uint32_t qpn, uint32_t qkey,
			 const uint8_t *pd, unsigned len);

/* 4.096 us * 2^exp, the unit of every IBA time field (exp clamped to 31). */
uint64_t sib_cm_time_ns(unsigned exp);
/*
 * The Local ACK Timeout for a path (IBA 9.7.6.1.3: at least twice the
 * packet lifetime plus the responder's ACK delay): one step above the
 * larger of PacketLifeTime + 1 and ack_delay, at most 31.
 */
uint8_t sib_cm_ack_timeout(uint8_t packet_life_time, uint8_t ack_delay);

#endif

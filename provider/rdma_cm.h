/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * librdmacm's kernel interface, emulated (docs/architecture.md section 2): the
 * command channel behind /dev/infiniband/rdma_cm that every librdmacm
 * version and rsockets speak (the ucma ABI, <rdma/rdma_user_cm.h>,
 * version 4).  Each open of the node is a file: a real eventfd that is
 * readable exactly while the file has events queued, so poll, epoll,
 * O_NONBLOCK and blocking GET_EVENT behave as the kernel's ucma does.
 * Commands are written to it; their answers are copied to the response
 * pointer they carry.
 *
 *   ucma.c       the files, the command decoding, the event queues
 *   cma.c        the ids: binding, address and route resolution,
 *                connect/listen/accept/reject/disconnect over the IB CM
 *                (mgmt/cm.h), the QP attributes a connection implies
 *   cma_addr.c   addresses: which IPs are this host's, what the SA knows
 *                of other hosts' ports and listeners (ServiceRecords)
 *   cma_port.c   port numbers: the kernel's port spaces, one abstract
 *                AF_UNIX name per bound id, per network namespace
 *
 * Locking: the HCA's CM lock (sib_cm_lock) guards all of it, as it
 * guards the CM, so that CM handlers and commands never take two locks.
 * SA queries block, and the CM's MADs arrive on the progress thread, so
 * nothing holds the lock while it waits for the SA.  An id's state changes
 * only through cma_transition, under that lock.
 */
#ifndef SIB_PROVIDER_RDMA_CM_H
#define SIB_PROVIDER_RDMA_CM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rdma/rdma_user_cm.h>

#include "hca/hca.h"
#include "mgmt/cm.h"
#include "wire/sa.h"

/* The character device: misc major 10; the kernel's minor is dynamic,
 * this one is fixed. */
#define SIB_UCMA_NAME "rdma_cm"
#define SIB_UCMA_MAJOR 10
#define SIB_UCMA_MINOR 122

#define SIB_UDP_QKEY 0x01234567u /* RDMA_UDP_QKEY */
#define SIB_AF_IB 27		 /* AF_IB: <rdma/rdma_cma.h>, not in glibc */
#define SIB_PS_IP_MASK 0xffffffffffff0000ull /* RDMA_IB_IP_PS_MASK */

/* The events a GET_EVENT reports: enum rdma_cm_event_type of
 * <rdma/rdma_cma.h>, whose values are the ucma ABI's. */
enum ucma_event_type {
	UCMA_EV_ADDR_RESOLVED = 0,
	UCMA_EV_ADDR_ERROR = 1,
	UCMA_EV_ROUTE_RESOLVED = 2,
	UCMA_EV_ROUTE_ERROR = 3,
	UCMA_EV_CONNECT_REQUEST = 4,
	UCMA_EV_CONNECT_RESPONSE = 5,
	UCMA_EV_CONNECT_ERROR = 6,
	UCMA_EV_UNREACHABLE = 7,
	UCMA_EV_REJECTED = 8,
	UCMA_EV_ESTABLISHED = 9,
	UCMA_EV_DISCONNECTED = 10,
	UCMA_EV_DEVICE_REMOVAL = 11,
	UCMA_EV_MULTICAST_JOIN = 12,
	UCMA_EV_MULTICAST_ERROR = 13,
	UCMA_EV_ADDR_CHANGE = 14,
	UCMA_EV_TIMEWAIT_EXIT = 15,
};

/* struct sockaddr_ib (<infiniband/ib.h>), which we may not include. */
struct sib_sockaddr_ib {
	unsigned short sib_family;
	uint16_t sib_pkey;	/* network order */
	uint32_t sib_flowinfo;	/* network order */
	uint8_t sib_addr[16];
	uint64_t sib_sid;	/* network order */
	uint64_t sib_sid_mask;	/* network order */
	uint64_t sib_scope_id;
};

/* The ucma id states (the kernel's rdma_cm states, as far as they show). */
enum cma_state {
	CMA_IDLE,
	CMA_ADDR_BOUND,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_QUERY,
	CMA_ROUTE_RESOLVED,
	CMA_CONNECT,	 /* REQ/SIDR_REQ sent or received, handshake on */
	CMA_ESTABLISHED,
	CMA_DISCONNECT, /* DISCONNECTED reported */
	CMA_LISTEN,
};

/* A set of states: cma_transition's from. */
#define CMA_IN(s) (1u << (s))

/* Who holds a port of an rdma_cm port space (cma_port.c). */
struct cma_holder {
	uint16_t ps, port;
	uint8_t fam; /* AF_INET, AF_INET6, SIB_AF_IB */
	bool any;    /* the wildcard address */
	uint8_t addr[16];
	bool reuseaddr, afonly;
};

/* A port reservation (cma_port.c): an abstract AF_UNIX socket named for
 * its holder. */
struct cma_resv {
	int fd; /* -1: none */
	bool listening;
	struct cma_holder h;
	uint32_t nonce;		 /* tells this process's holders apart */
	struct sockaddr_un name; /* fd's */
	socklen_t name_len;
};

struct ucma_file;
struct cma_service;

/* One rdma_cm id (the kernel's ucma context). */
struct ucma_ctx {
	uint32_t handle;
	uint64_t uid;
	struct ucma_file *file;
	uint16_t ps;
	uint8_t qp_type; /* IBV_QPT_RC, _UC, _UD, _XRC_SEND, _XRC_RECV */
	enum cma_state state;
	struct sockaddr_storage src, dst; /* src holds the bound port */
	bool bound_dev;			  /* on softib0 port 1 (QUERY reports it) */
	struct cma_resv resv;
	bool reuseaddr, afonly, afonly_set;
	uint8_t tos;
	bool tos_set;
	uint8_t ack_timeout;
	bool ack_timeout_set;
	unsigned backlog, pending; /* LISTEN: CONNECT_REQUESTs not reported yet */
	struct cma_service *service; /* LISTEN: the shared CM listener */
	bool sa_listed;		     /* LISTEN: in the SA's listener record */
	bool sa_bound;		     /* a UDP id the program bound (cma_bound.c) */
	/* route */
	uint8_t sgid[16], dgid[16];
	uint8_t host_key[16];	    /* of the destination's host */
	bool have_path;
	bool to_listener;	    /* the route leads to a listener's port */
	struct ib_path_record path; /* seen from this end */
	struct sib_endpoint peer;   /* where dgid's port lives */
	/* connection */
	struct sib_cm_id *cm_id;
	struct ucma_ctx *listener;  /* a child until its CONNECT_REQUEST is reported */
	bool rejected;		    /* the peer let go before we accepted */
	uint32_t qp_num, remote_qpn;
	uint32_t local_psn, remote_psn; /* our RQ PSN, and the peer's (our SQ PSN) */
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count, srq, flow_control;
	uint8_t local_ack_timeout; /* the QP's ACK timeout this connection implies */
	uint32_t qkey;
	unsigned events_reported;
	uint64_t generation; /* tells a ctx from a later one at the same address */
	struct ucma_ctx *next;
};

struct ucma_event {
	struct ucma_ctx *ctx;	/* whose (a CONNECT_REQUEST: the listener's) */
	struct ucma_ctx *child; /* CONNECT_REQUEST: the new id */
	unsigned *mc_reported;	/* a multicast join's: counts it when taken (cma_mcast.c) */
	struct rdma_ucm_event_resp resp;
	struct ucma_event *next;
};

struct ucma_file {
	int fd; /* the eventfd the program holds */
	struct ucma_event *head, *tail;
	unsigned nevents;
	struct ucma_file *next;
};

/* The process's rdma_cm: every file and id, under the CM lock. */
struct ucma {
	struct sib_hca *hca;
	struct sib_cm *cm;
	struct sib_hca *keep; /* held from the first open to the process's end */
	struct ucma_file *files;
	struct ucma_ctx *ctxs;
	struct cma_service *services;
	uint64_t generation;
	bool exiting;
};

extern struct ucma sib_ucma;

/* ---- ucma.c ---- */
/* The character device's operations (provider/fs_view.h's hook). */
int sib_ucma_open(int flags);
ssize_t sib_ucma_write(int fd, const void *buf, size_t len);
void sib_ucma_close(int fd);
/* Queues an event on ctx's file (dropped for a child nobody accepted). */
void ucma_queue_event(struct ucma_ctx *ctx, struct ucma_ctx *child, uint32_t event, int32_t status,
		      const struct rdma_ucm_conn_param *conn, const struct rdma_ucm_ud_param *ud);
/* A multicast event: uid and id are the join's, reported counts it taken. */
void ucma_queue_mc_event(struct ucma_ctx *ctx, uint64_t uid, uint32_t id, uint32_t event,
			 int32_t status, const struct rdma_ucm_ud_param *ud, unsigned *reported);
/* Drops the queued events that count into reported (a join being left). */
void ucma_drop_mc_events(struct ucma_file *f, unsigned *reported);
struct ucma_ctx *ucma_ctx_new(struct ucma_file *file, uint16_t ps, uint8_t qp_type, uint64_t uid);
/* The ctx of this handle still alive with this generation, or NULL. */
struct ucma_ctx *ucma_ctx_find(uint32_t handle, uint64_t generation);
/* Removes ctx (and its queued events) and frees it; tears its connection
 * down first (cma_teardown). */
void ucma_ctx_free(struct ucma_ctx *ctx);

/* ---- cma.c: commands, under the CM lock unless said otherwise ---- */
/*
 * The one way an id's state changes (the kernel's cma_comp_exch): when
 * ctx is in one of the states from (a set of CMA_IN), it moves to to and
 * the answer is true; otherwise nothing changes and the answer is false.
 * With the CM lock held, so the test and the change are one step.
 */
bool cma_transition(struct ucma_ctx *ctx, unsigned from, enum cma_state to);
/* The state's name as the kernel's rdma_cm calls it, less RDMA_CM_. */
const char *cma_state_name(enum cma_state s);
uint32_t cma_random_psn(void);
int cma_bind(struct ucma_ctx *ctx, const struct sockaddr *addr, socklen_t len);
/* These two drop and retake the lock while they ask the SA; *ctxp is
 * NULL afterwards when the id went away meanwhile. */
int cma_resolve_addr(struct ucma_ctx **ctxp, const struct sockaddr *src, socklen_t src_len,
		     const struct sockaddr *dst, socklen_t dst_len);
int cma_resolve_route(struct ucma_ctx **ctxp);
int cma_listen(struct ucma_ctx **ctxp, int backlog);
/* Drops and retakes the lock when the route's listener must be found
 * first (as cma_resolve_route). */
int cma_connect(struct ucma_ctx **ctxp, const struct rdma_ucm_conn_param *p);
int cma_accept(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p, uint64_t uid);
int cma_reject(struct ucma_ctx *ctx, uint8_t reason, const uint8_t *pd, unsigned len);
int cma_disconnect(struct ucma_ctx *ctx);
int cma_init_qp_attr(struct ucma_ctx *ctx, uint32_t qp_state, struct ib_uverbs_qp_attr *out);
int cma_notify(struct ucma_ctx *ctx, uint32_t event);
int cma_set_option(struct ucma_ctx **ctxp, uint32_t level, uint32_t optname, const void *optval,
		   uint32_t optlen);
/* Ends ctx's part in connections and listening (REJ, DREQ, DREP as the
 * CM's state asks); its SA listener record is updated after the lock is
 * dropped (cma_services_sync). */
void cma_teardown(struct ucma_ctx *ctx);
/* cma_mcast.c: JOIN_MCAST / LEAVE_MCAST; an id's joins leave with it. */
int cma_mcast_join(struct ucma_ctx **ctxp, uint64_t uid, const struct sockaddr *addr,
		   uint16_t join_flags, uint32_t *id_out);
int cma_mcast_leave(struct ucma_file *file, uint32_t id, uint32_t *events_reported);
void cma_mcast_ctx_gone(struct ucma_ctx *ctx);
/* The SA lost the port's memberships: MULTICAST_ERROR (-ENETRESET) to
 * every joined id.  Under the CM's lock. */
void cma_mcast_reset(void);
/* Brings the SA's listener records up to date; call without the lock. */
void cma_services_sync(void);
/* At exit: rejects held REQs and asks the SA to drop every listener
 * record, without waiting. */
void cma_services_withdraw(void);
/* Hears hca's CLIENT_REREGISTER (IBA 14.4.11: the SA lost what the port
 * registered) and registers the addresses and every listener record
 * again, from a thread of its own.  Once per process. */
void cma_reregister_listen(struct sib_hca *hca);

/* What QUERY/QUERY_ROUTE report. */
uint64_t cma_node_guid_be(const struct ucma_ctx *ctx);
void cma_user_path(const struct ucma_ctx *ctx, struct ib_user_path_rec *out);
void cma_gid_sockaddr(const struct ucma_ctx *ctx, bool dst, struct sib_sockaddr_ib *out);
socklen_t cma_addr_len(const struct sockaddr *sa);
uint16_t cma_port_of(const struct sockaddr *sa);

/* ---- cma_addr.c ---- */
/* An IP (v4 as ::ffff:a.b.c.d) of sockaddr sa into ip[16]; false for
 * other families. */
bool cma_ip16(const struct sockaddr *sa, uint8_t ip[16]);
bool cma_ip16_any(const uint8_t ip[16]);
/* IPv4 224.0.0.0/4 (as ::ffff:a.b.c.d) or IPv6 ff00::/8 (cma_mcast.c). */
bool cma_ip16_multicast(const uint8_t ip[16]);
bool cma_ip16_loopback(const uint8_t ip[16]);
/* Is ip one of this host's (network namespace's) addresses? */
bool cma_ip16_local(const uint8_t ip[16]);
/* The source address the kernel's routing picks for dst; 0 or -errno. */
int cma_route_source(const uint8_t dst[16], uint8_t src[16]);
/* This host's key (boot and network namespace), as ServiceKey. */
void cma_host_key(uint8_t key[16]);
/* Registers this host's addresses for the port with the SA (once, and
 * again after a failure; again: whatever was done).  Without the lock. */
void cma_addrs_register(struct sib_hca *hca);
void cma_addrs_register_again(struct sib_hca *hca);
void cma_addrs_unregister(struct sib_hca *hca);
/*
 * Where a connection to ip (the service sid) should go: the port GID of
 * a listener for it, else of some port of the host that has ip (whose CM
 * answers REJ 8), in gid.  local: ip is this host's.  0, -EHOSTUNREACH
 * (no such host on the subnet), or an SA error.  Without the lock.
 */
int cma_find_host(struct sib_hca *hca, const uint8_t ip[16], uint8_t key[16], uint8_t gid[16]);
int cma_find_listener(struct sib_hca *hca, uint64_t sid, const uint8_t key[16],
		      const uint8_t ip[16], uint8_t gid[16]);
/* The listener record for sid listing ips (n of them, afonly flags);
 * n == 0 deletes it.  Without the lock. */
void cma_listener_record(struct sib_hca *hca, uint64_t sid, const uint8_t (*ips)[16],
			 const bool *afonly, unsigned n, const char *what);

/* Sends the SA a Delete of this port's record sid, without waiting. */
void cma_record_withdraw(struct sib_hca *hca, uint64_t sid);

/* ---- cma_bound.c ---- */
/* The ServiceID of the record of bound ids on Annex A11 ServiceID sid. */
uint64_t cma_bound_sid(uint64_t sid);
/* ctx was bound by BIND or BIND_IP: a UDP id is then registered.  Under
 * the lock. */
void cma_bound_mark(struct ucma_ctx *ctx);
/* Brings the SA's records of bound ids up to date; without the lock. */
void cma_bound_sync(void);
/* After CLIENT_REREGISTER: every record again.  Without the lock. */
void cma_bound_register_again(void);
/* At exit: Deletes every record, without waiting. */
void cma_bound_withdraw(void);

/* ---- cma_port.c ---- */
/* Reserves addr's port (0: a free one, written back into addr) in port
 * space ps as the kernel's rdma_cm would: 0 or -EADDRINUSE,
 * -EADDRNOTAVAIL, -EACCES. */
int cma_resv_bind(struct cma_resv *r, uint16_t ps, struct sockaddr_storage *addr, bool reuseaddr,
		  bool afonly);
/* LISTEN: 0, or -EADDRINUSE / -EADDRNOTAVAIL for an id with REUSEADDR
 * that is not alone on its address. */
int cma_resv_listen(struct cma_resv *r);
/* REUSEADDR turned on after the bind. */
int cma_resv_reuseaddr(struct cma_resv *r);
/* An IPv6 id's AFONLY when the program set none (net.ipv6.bindv6only). */
bool cma_resv_afonly_default(void);
void cma_resv_release(struct cma_resv *r);

#endif

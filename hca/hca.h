/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * hca/: the one HCA per process (docs/architecture.md section 3).  It composes a node
 * (mgmt/node.h: ports and their agents), a link per port (link/), the data
 * path's engine (transport/) and the memory registration tables (memreg/),
 * and runs the progress thread that drives them all (progress.c); the
 * engine's wiring is data_path.c.  hca/ may use every folder below it in
 * the README's layer table; only provider/ and tools/ use hca/.
 *
 * This header: the HCA itself.  The first context opened on softib0
 * creates it, every further context shares it (as several contexts share
 * one adapter), and the last close tears it down.  Each process is
 * therefore its own node with its own GUIDs and LID.
 *
 * Other modules keep their per-HCA state here: add a member in the marked
 * place below and its set-up/tear-down in sib_hca_new()/sib_hca_free() in
 * hca.c.
 */
#ifndef SIB_HCA_HCA_H
#define SIB_HCA_HCA_H

#include <pthread.h>
#include <stdint.h>

#include "hca/progress.h"
#include "hca/stats_channel.h"
#include "link/link.h"
#include "memreg/memreg.h"
#include "mgmt/cm.h"
#include "mgmt/node.h"
#include "transport/caps.h"
#include "transport/engine.h"
#include "transport/events.h"
#include "transport/port.h"

struct sib_engine;

/* A context's subscription to port events (PORT_ACTIVE, LID_CHANGE, ...). */
struct sib_hca_listener {
	struct sib_event_sink *sink;
	struct sib_hca_listener *next;
};

/* How to build an HCA; sib_hca_get() uses the environment (all zero). */
struct sib_hca_opts {
	struct sib_link *link; /* port 1's link, taken over; NULL: sib_link_open_env() */
	const char *sm;	       /* "ADDR:PORT" or "none"; NULL: $SOFTIB_SM or SIB_SM_DEFAULT */
	bool no_thread;	       /* no progress thread: the caller drives sib_progress_poll */
	bool no_bringup_wait;  /* send the trap but do not wait for ACTIVE */
	bool no_spawn;	       /* never start softib-sm */
	uint64_t node_guid;    /* 0: sib_node_guid(); tests make several nodes */
};

struct sib_hca {
	struct sib_node node; /* ports, their agents, and the lock that guards
			       * them, the listeners and next_pdn */
	int refcnt;           /* contexts using this HCA; under the global lock */
	struct sib_hca_listener *listeners;
	uint32_t next_pdn; /* PD numbers handed out (ibv_pd.handle) */
	struct memreg_table *memreg; /* MRs and MWs: the L_Key/R_Key table */
	struct sib_progress progress;

	/* ---- per-HCA state of other modules (memreg key tables, the QP
	 * number table, ...) goes here ---- */
	struct sib_numtab *qpns;  /* QP numbers (QP0, QP1 reserved: IBA 10.2.4) */
	struct sib_numtab *srqns; /* XRC SRQ numbers */
	struct sib_engine *engine; /* the data path (transport/engine.h), port 1 */
	struct sib_timer engine_timer; /* the data path's timers, on the progress thread */
	struct sib_stats_channel stats; /* the counters, for `softib info --pid` */
};

/* This node's GUID: made once per process, so that ibv_get_device_guid
 * (which needs no open context) and every HCA instance agree.  Port i's
 * GUID is node GUID + i. */
uint64_t sib_node_guid(void);

/* The process's HCA, created on first use; NULL with errno on failure. */
struct sib_hca *sib_hca_get(void);
/* Drop one reference; the last one destroys the HCA. */
void sib_hca_put(struct sib_hca *hca);

/*
 * An HCA outside the per-process singleton (tests, and sib_hca_get itself):
 * opens the link, starts the progress thread and brings the ports up as
 * opts say.  NULL with errno on failure.  sib_hca_free tears it down.
 */
struct sib_hca *sib_hca_new(const struct sib_hca_opts *opts);
void sib_hca_free(struct sib_hca *hca);

/* Port by verbs number (1-based); NULL when there is no such port. */
struct sib_port *sib_hca_port(struct sib_hca *hca, unsigned port_num);

/* Port events reach every listener until it is removed. */
void sib_hca_listen(struct sib_hca *hca, struct sib_hca_listener *l, struct sib_event_sink *sink);
void sib_hca_unlisten(struct sib_hca *hca, struct sib_hca_listener *l);

/*
 * The HCA's engine (data_path.c): built on port 1's link when the HCA is
 * created, fed by the progress thread's rx_data hook, its timers run as a
 * progress timer, destinations resolved through the SA client.
 */
int sib_hca_engine_init(struct sib_hca *hca);
void sib_hca_engine_fini(struct sib_hca *hca);

/* What `softib info` shows of a port's traffic: every reason a packet
 * was dropped has its count here. */
struct sib_port_stats {
	struct sib_link_counters link; /* packets/bytes in and out, drops by reason */
	struct sib_engine_counters engine; /* the data path's receive checks (port 1) */
	uint64_t rx_data_unclaimed;    /* data packets before the data path took them */
	uint64_t rx_mad_malformed;     /* QP0/QP1 packets that were no MAD */
	uint64_t rx_gsi_unclaimed;     /* QP1 MADs no agent here serves */
	uint64_t rx_smp_unclaimed;     /* QP0 MADs of a class no agent serves */
	uint64_t watches;	       /* times the progress thread began to watch the
					* links of a polling application (watch mode,
					* progress.c) */
	uint64_t smp_refused;	       /* SMPs the SMA discarded (M_Key, strangers' Sets) */
	uint64_t M_KeyViolations;      /* PortInfo:M_KeyViolations */
	uint64_t sa_sent, sa_hits, sa_timeouts; /* the SA client */
	uint64_t sa_foreign;	       /* SA answers not from the port's SM */
	uint64_t sa_async_full;	       /* lookups not asked: SIB_SA_ASYNC_MAX were out */
	struct sib_cm_counters cm;		/* the communication manager */
	/* the HCA's thread wake-ups and the messages they were for
	 * (docs/architecture.md, the waiting rule); the same on every port */
	uint64_t wakes_thread, wakes_waiter, wakes_event, rx_requests;
};

/* 0, or -1 for a bad port or one without a link. */
int sib_hca_port_stats(struct sib_hca *hca, unsigned port_num, struct sib_port_stats *out);

/* A new PD number, unique in this HCA, never 0. */
uint32_t sib_hca_alloc_pdn(struct sib_hca *hca);

/*
 * GUIDs are locally administered EUI-64s (IEEE: U/L bit set, I/G bit clear
 * in the first octet) made from random bits, so two processes on one host
 * do not collide.  The low nibble is left for port numbers.
 */
uint64_t sib_guid_from_random(uint64_t rnd);
/* "0123:4567:89ab:cdef", as ibv_devinfo prints GUIDs; buf >= 20 bytes. */
void sib_guid_format(uint64_t guid, char *buf);
/* "fe80:0000:0000:0000:0123:4567:89ab:cdef"; buf >= 40 bytes. */
void sib_gid_format(const uint8_t gid[16], char *buf);

#endif

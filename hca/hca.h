/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The HCA: one per process (DESIGN.md section 3).  The first context opened
 * on softib0 creates it, every further context shares it (as several
 * contexts share one adapter), and the last close tears it down.  Each
 * process is therefore its own node with its own GUIDs and LID.
 *
 * Other modules keep their per-HCA state here: add a member in the marked
 * place below and its set-up/tear-down in sib_hca_create()/sib_hca_destroy()
 * in hca.c.
 */
#ifndef SIB_HCA_HCA_H
#define SIB_HCA_HCA_H

#include <pthread.h>
#include <stdint.h>

#include "memreg/memreg.h"
#include "transport/caps.h"
#include "transport/events.h"
#include "link/link.h"
#include "transport/port.h"
#include "hca/progress.h"
#include "mgmt/sa_client.h"

struct sib_engine;

/* A context's subscription to port events (PORT_ACTIVE, LID_CHANGE, ...). */
struct sib_hca_listener {
	struct sib_event_sink *sink;
	struct sib_hca_listener *next;
};

/*
 * A port's management side (sma.c, port_up.c): its link and what it knows
 * of the subnet manager.  Guarded by the HCA's lock.
 */
struct sib_port_mgmt {
	struct sib_link *link;	   /* the port's emulated link; NULL: none could be opened */
	struct sib_endpoint sm_ep; /* SOFTIB_SM, then wherever the SM's SMPs come from */
	bool sm_none;		   /* SOFTIB_SM=none: no SM, a subnet of one */
	bool sm_heard;		   /* an SM repressed our trap or sent us an SMP */
	uint16_t notice_count;	   /* Notice:NoticeCount of our traps */
	uint64_t trap_tid;
	uint64_t up_since_ns;	   /* when bring-up started */
	uint64_t last_smp_ns;	   /* when the SM last spoke to us */
	struct sib_timer trap_timer;
	char node_desc[64];	   /* NodeDescription, NUL-padded */
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
	int refcnt;           /* contexts using this HCA; under the global lock */
	pthread_mutex_t lock; /* guards listeners and port changes */
	uint64_t node_guid;      /* NodeInfo:NodeGUID */
	uint64_t sys_image_guid; /* NodeInfo:SystemImageGUID */
	struct sib_port ports[SIB_NUM_PORTS]; /* ports[i] is verbs port i + 1 */
	struct sib_hca_listener *listeners;
	uint32_t next_pdn; /* PD numbers handed out (ibv_pd.handle) */
	struct memreg_table *memreg; /* MRs and MWs: the L_Key/R_Key table */

	pthread_cond_t port_cond; /* signalled (under lock) when a port's state changes */
	struct sib_port_mgmt mgmt[SIB_NUM_PORTS]; /* mgmt[i] belongs to ports[i] */
	struct sib_progress progress;
	struct sib_sa_client sa;

	/* ---- per-HCA state of other modules (memreg key tables, the QP
	 * number table, ...) goes here ---- */
	struct sib_numtab *qpns;  /* QP numbers (QP0, QP1 reserved: IBA 10.2.4) */
	struct sib_numtab *srqns; /* XRC SRQ numbers */
	struct sib_engine *engine; /* the data path (transport/engine.h), port 1 */
	struct sib_timer engine_timer; /* the data path's timers, on the progress thread */
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

/* The SM (or the local stand-in) gives a port its LID: the port becomes
 * ACTIVE and listeners get PORT_ACTIVE (first time) or LID_CHANGE. */
void sib_hca_port_set_lid(struct sib_hca *hca, unsigned port_num, uint16_t lid, uint16_t sm_lid);

/* What `softib info` shows of a port's traffic. */
struct sib_port_stats {
	struct sib_link_counters link; /* packets/bytes in and out, drops by reason */
	uint64_t rx_data_unclaimed;    /* data packets before the data path took them */
	uint64_t rx_mad_malformed;     /* QP0/QP1 packets that were no MAD */
	uint64_t rx_gsi_unclaimed;     /* QP1 MADs no agent here serves */
	uint64_t sa_sent, sa_hits, sa_timeouts; /* the SA client */
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

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
#ifndef SOFTIB_TRANSPORT_HCA_H
#define SOFTIB_TRANSPORT_HCA_H

#include <pthread.h>
#include <stdint.h>

#include "memreg/memreg.h"
#include "transport/caps.h"
#include "transport/events.h"
#include "transport/port.h"

struct sib_engine;

/* A context's subscription to port events (PORT_ACTIVE, LID_CHANGE, ...). */
struct sib_hca_listener {
	struct sib_event_sink *sink;
	struct sib_hca_listener *next;
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

	/* ---- per-HCA state of other modules (memreg key tables, the QP
	 * number table, ...) goes here ---- */
	struct sib_numtab *qpns;  /* QP numbers (QP0, QP1 reserved: IBA 10.2.4) */
	struct sib_numtab *srqns; /* XRC SRQ numbers */
	struct sib_engine *engine; /* the data path (transport/engine.h) */
};

/* This node's GUID: made once per process, so that ibv_get_device_guid
 * (which needs no open context) and every HCA instance agree.  Port i's
 * GUID is node GUID + i. */
uint64_t sib_node_guid(void);

/* The process's HCA, created on first use; NULL with errno on failure. */
struct sib_hca *sib_hca_get(void);
/* Drop one reference; the last one destroys the HCA. */
void sib_hca_put(struct sib_hca *hca);

/* Port by verbs number (1-based); NULL when there is no such port. */
struct sib_port *sib_hca_port(struct sib_hca *hca, unsigned port_num);

/* Port events reach every listener until it is removed. */
void sib_hca_listen(struct sib_hca *hca, struct sib_hca_listener *l, struct sib_event_sink *sink);
void sib_hca_unlisten(struct sib_hca *hca, struct sib_hca_listener *l);

/* The SM (or the local stand-in) gives a port its LID: the port becomes
 * ACTIVE and listeners get PORT_ACTIVE (first time) or LID_CHANGE. */
void sib_hca_port_set_lid(struct sib_hca *hca, unsigned port_num, uint16_t lid, uint16_t sm_lid);

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

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "transport/hca.h"
#include "transport/numtab.h"
#include "transport/log.h"

static pthread_mutex_t hca_global_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sib_hca *hca_current;

uint64_t sib_guid_from_random(uint64_t rnd)
{
	/* First octet is the top byte: set U/L (0x02), clear I/G (0x01). */
	rnd |= 0x0200000000000000ull;
	rnd &= ~0x0100000000000000ull;
	rnd &= ~0xfull; /* node GUID + port number = port GUID */
	if ((rnd & 0x00fffffffffffff0ull) == 0)
		rnd |= 0x10; /* never all-zero below the first octet */
	return rnd;
}

void sib_guid_format(uint64_t guid, char *buf)
{
	snprintf(buf, 20, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

void sib_gid_format(const uint8_t gid[16], char *buf)
{
	char *p = buf;

	for (int i = 0; i < 16; i += 2) {
		snprintf(p, 6, "%02x%02x%s", gid[i], gid[i + 1], i < 14 ? ":" : "");
		p += i < 14 ? 5 : 4;
	}
}

static uint64_t random_u64(void)
{
	uint64_t v = 0;
	ssize_t n = getrandom(&v, sizeof(v), GRND_NONBLOCK);

	if (n != (ssize_t)sizeof(v)) {
		/* No entropy yet (early boot): time and pid still differ per process. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
	}
	return v;
}

static pthread_once_t node_guid_once = PTHREAD_ONCE_INIT;
static uint64_t node_guid;

static void node_guid_make(void)
{
	node_guid = sib_guid_from_random(random_u64());
}

uint64_t sib_node_guid(void)
{
	pthread_once(&node_guid_once, node_guid_make);
	return node_guid;
}

static struct sib_hca *sib_hca_create(void)
{
	struct sib_hca *hca = calloc(1, sizeof(*hca));

	if (!hca)
		return NULL;
	pthread_mutex_init(&hca->lock, NULL);
	hca->node_guid = sib_node_guid();
	hca->sys_image_guid = hca->node_guid;
	hca->memreg = memreg_table_create(SIB_MAX_MR, SIB_MAX_MW);
	if (!hca->memreg) {
		pthread_mutex_destroy(&hca->lock);
		free(hca);
		return NULL;
	}
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
		sib_port_init(&hca->ports[i], (uint8_t)(i + 1), hca->node_guid + i + 1);
	hca->next_pdn = 1;
	hca->qpns = sib_numtab_create(2, SIB_MAX_QP);
	hca->srqns = sib_numtab_create(1, SIB_MAX_SRQ);
	if (!hca->qpns || !hca->srqns) {
		sib_numtab_destroy(hca->qpns);
		sib_numtab_destroy(hca->srqns);
		pthread_mutex_destroy(&hca->lock);
		free(hca);
		return NULL;
	}

	/* No SM yet: each port takes a locally unique LID right away, so the
	 * port is ACTIVE before any context listens (like a port that was up
	 * before the program started). */
	for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
		sib_hca_port_set_lid(hca, i + 1, sib_port_local_lid(getpid()),
				     sib_port_local_lid(getpid()));
	sib_dbg("HCA created: node GUID 0x%016llx", (unsigned long long)hca->node_guid);
	return hca;
}

static void sib_hca_destroy(struct sib_hca *hca)
{
	if (hca->listeners)
		sib_warn("HCA destroyed with port-event listeners still attached");
	sib_numtab_destroy(hca->qpns);
	sib_numtab_destroy(hca->srqns);
	pthread_mutex_destroy(&hca->lock);
	memreg_table_destroy(hca->memreg);
	free(hca);
}

struct sib_hca *sib_hca_get(void)
{
	struct sib_hca *hca;

	pthread_mutex_lock(&hca_global_lock);
	if (!hca_current)
		hca_current = sib_hca_create();
	hca = hca_current;
	if (hca)
		hca->refcnt++;
	else
		errno = ENOMEM;
	pthread_mutex_unlock(&hca_global_lock);
	return hca;
}

void sib_hca_put(struct sib_hca *hca)
{
	bool last;

	if (!hca)
		return;
	pthread_mutex_lock(&hca_global_lock);
	last = --hca->refcnt == 0;
	if (last && hca_current == hca)
		hca_current = NULL;
	pthread_mutex_unlock(&hca_global_lock);
	if (last)
		sib_hca_destroy(hca);
}

struct sib_port *sib_hca_port(struct sib_hca *hca, unsigned port_num)
{
	if (!hca || port_num < 1 || port_num > SIB_NUM_PORTS)
		return NULL;
	return &hca->ports[port_num - 1];
}

void sib_hca_listen(struct sib_hca *hca, struct sib_hca_listener *l, struct sib_event_sink *sink)
{
	pthread_mutex_lock(&hca->lock);
	l->sink = sink;
	l->next = hca->listeners;
	hca->listeners = l;
	pthread_mutex_unlock(&hca->lock);
}

void sib_hca_unlisten(struct sib_hca *hca, struct sib_hca_listener *l)
{
	pthread_mutex_lock(&hca->lock);
	for (struct sib_hca_listener **pp = &hca->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	l->next = NULL;
	pthread_mutex_unlock(&hca->lock);
}

void sib_hca_port_set_lid(struct sib_hca *hca, unsigned port_num, uint16_t lid, uint16_t sm_lid)
{
	struct sib_port *port = sib_hca_port(hca, port_num);
	uint16_t old_lid;
	bool activated;

	if (!port)
		return;
	pthread_mutex_lock(&hca->lock);
	old_lid = port->LID;
	activated = sib_port_set_lid(port, lid, sm_lid);
	for (struct sib_hca_listener *l = hca->listeners; l; l = l->next) {
		if (activated)
			sib_event_raise(l->sink, SIB_EV_PORT_ACTIVE, NULL, port_num);
		else if (old_lid != port->LID)
			sib_event_raise(l->sink, SIB_EV_LID_CHANGE, NULL, port_num);
	}
	pthread_mutex_unlock(&hca->lock);
}

uint32_t sib_hca_alloc_pdn(struct sib_hca *hca)
{
	uint32_t pdn;

	pthread_mutex_lock(&hca->lock);
	pdn = hca->next_pdn++;
	if (hca->next_pdn == 0)
		hca->next_pdn = 1;
	pthread_mutex_unlock(&hca->lock);
	return pdn;
}

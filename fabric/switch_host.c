/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-switch's work (switch_host.h): slots, cables, and carrying each
 * packet through the hosted switches.
 */
#include "fabric/switch_host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/counters_socket.h"
#include "base/log.h"

enum { HOP_LIMIT = 64 };

uint64_t sib_switch_host_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool listed(const char *only, const char *id)
{
	size_t n = strlen(id);

	for (const char *s = only; s && *s;) {
		size_t len = strcspn(s, ",");

		if (len == n && !strncmp(s, id, n))
			return true;
		s += len + (s[len] == ',');
	}
	return !only;
}

int sib_switch_host_init(struct sib_switch_host *h, struct sib_topo *topo, const char *only,
			 enum sib_data_mode mode, struct sib_link *link, char *err, size_t errlen)
{
	struct sib_topo *t = &h->topo;

	memset(h, 0, sizeof(*h));
	h->topo = *topo;
	memset(topo, 0, sizeof(*topo));
	h->mode = mode;
	h->link = link;
	h->sw_of = malloc(t->nnodes * sizeof(int));
	h->sw = calloc(t->nnodes, sizeof(*h->sw));
	h->slot = calloc(t->nnodes * 2u + 1, sizeof(*h->slot));
	if (!h->sw_of || !h->sw || !h->slot) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned n = 0; n < t->nnodes; n++) {
		h->sw_of[n] = -1;
		if (t->node[n].type != SIB_TOPO_SWITCH || !listed(only, t->node[n].id))
			continue;
		if (sib_switch_init(&h->sw[h->nsw], &t->node[n])) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		h->sw_of[n] = (int)h->nsw++;
	}
	if (!h->nsw) {
		snprintf(err, errlen, "the topology has no switch%s%s", only ? " named in " : "",
			 only ? only : "");
		goto fail;
	}
	for (unsigned n = 0; n < t->nnodes; n++) {
		const struct sib_topo_node *node = &t->node[n];

		for (unsigned p = 1; p <= node->nports; p++) {
			const struct sib_topo_link *l = &node->port[p];

			if (l->peer < 0)
				continue;
			if (h->sw_of[n] >= 0 && h->sw_of[l->peer] >= 0) {
				sib_switch_link(&h->sw[h->sw_of[n]], p, true);
			} else if (h->sw_of[n] >= 0 && t->node[l->peer].type == SIB_TOPO_SWITCH) {
				sib_info("switch: %s[%u] is cabled to %s, hosted elsewhere: "
					 "that link stays down (links between switch processes are "
					 "not there yet)", node->id, p, t->node[l->peer].id);
			} else if (node->type != SIB_TOPO_SWITCH && h->sw_of[l->peer] >= 0) {
				struct sib_switch_slot *s = &h->slot[h->nslots++];

				s->node = (int)n;
				s->ca_port = p;
				s->sw = h->sw_of[l->peer];
				s->sw_port = l->peer_port;
				h->sw[s->sw].port[s->sw_port].edge = true;
			}
		}
	}
	return 0;
fail:
	sib_switch_host_free(h);
	return -1;
}

void sib_switch_host_free(struct sib_switch_host *h)
{
	for (unsigned s = 0; s < h->nsw; s++)
		sib_switch_free(&h->sw[s]);
	free(h->sw);
	free(h->sw_of);
	free(h->slot);
	sib_topo_free(&h->topo);
	memset(h, 0, sizeof(*h));
}

static struct sib_switch_slot *slot_by_ep(struct sib_switch_host *h, const struct sib_endpoint *ep)
{
	for (unsigned i = 0; i < h->nslots; i++)
		if (h->slot[i].attached && sib_endpoint_equal(&h->slot[i].ep, ep))
			return &h->slot[i];
	return NULL;
}

static void carry(struct sib_switch_host *h, int sw, unsigned in_port, const uint8_t *pkt,
		  size_t len, unsigned depth);

/* A packet leaves hosted switch sw by port p: into the next hosted switch,
 * or to the attached port of a CA. */
static void emit(struct sib_switch_host *h, int sw, unsigned p, const uint8_t *pkt, size_t len,
		 unsigned depth)
{
	const struct sib_topo_node *node = h->sw[sw].node;
	const struct sib_topo_link *l = &node->port[p];

	sib_switch_sent(&h->sw[sw], p, pkt, len);
	if (l->peer < 0)
		return;
	if (h->sw_of[l->peer] >= 0) {
		carry(h, h->sw_of[l->peer], l->peer_port, pkt, len, depth + 1);
		return;
	}
	for (unsigned i = 0; i < h->nslots; i++) {
		struct sib_switch_slot *s = &h->slot[i];

		if (s->node == l->peer && s->ca_port == l->peer_port && s->attached) {
			if (!sib_link_send(h->link, pkt, len, &s->ep))
				h->c.forwarded++;
			return;
		}
	}
}

static void carry(struct sib_switch_host *h, int sw, unsigned in_port, const uint8_t *pkt,
		  size_t len, unsigned depth)
{
	struct sib_switch *s = &h->sw[sw];
	struct sib_switch_out out;
	struct ib_packet p;
	uint8_t buf[IB_MAX_PACKET];
	const uint8_t *send = pkt;

	if (depth > HOP_LIMIT) {
		h->c.hop_limit++;
		return;
	}
	if (ib_packet_decode(pkt, len, &p) != IB_PKT_OK) {
		h->c.rx_malformed++;
		return;
	}
	sib_switch_route(s, in_port, &p, len, buf, &out);
	if (out.to_port0) {
		uint8_t resp[IB_MAX_PACKET];
		struct ib_packet q;

		if (ib_packet_decode(out.rewritten ? buf : pkt, out.len, &q) != IB_PKT_OK ||
		    !sib_switch_mgmt(s, in_port, &q, resp, &out))
			return;
		for (unsigned i = 0; i < out.nports; i++)
			emit(h, sw, out.port[i], resp, out.len, depth);
		return;
	}
	if (out.rewritten) {
		send = buf;
		len = out.len;
	}
	for (unsigned i = 0; i < out.nports; i++)
		emit(h, sw, out.port[i], send, len, depth);
}

static void reply(struct sib_switch_host *h, const struct sib_cable_msg *m,
		  const struct sib_endpoint *to)
{
	uint8_t pkt[SIB_CABLE_BYTES];

	sib_link_send(h->link, pkt, sib_cable_encode(m, pkt), to);
}

static void detach(struct sib_switch_host *h, struct sib_switch_slot *s, const char *why)
{
	char ep[64];

	sib_info("switch: %s detached from %s[%u] (%s, was %s)",
		 h->topo.node[s->node].id, h->sw[s->sw].node->id, s->sw_port, why,
		 sib_endpoint_str(&s->ep, ep));
	s->attached = false;
	s->detached_ns = 0;
	sib_switch_link(&h->sw[s->sw], s->sw_port, false);
	h->c.detached++;
}

/* A port that said goodbye moments ago: what it sent before, or its
 * threads sent while its process ended, may still come.  (One that went
 * silent and speaks again is not late: it is cabled to nothing.) */
static bool just_detached(const struct sib_switch_host *h, const struct sib_endpoint *ep,
			  uint64_t now)
{
	for (unsigned i = 0; i < h->nslots; i++) {
		const struct sib_switch_slot *s = &h->slot[i];

		if (!s->attached && s->detached_ns && sib_endpoint_equal(&s->ep, ep) &&
		    now - s->detached_ns < SIB_CABLE_DEAD_MS * 1000000ull)
			return true;
	}
	return false;
}

static void refuse(struct sib_switch_host *h, uint16_t reason, const char *id,
		   const struct sib_endpoint *from)
{
	struct sib_cable_msg m = { .type = SIB_CABLE_REFUSED, .reason = reason };
	char ep[64];

	snprintf(m.id, sizeof(m.id), "%s", id);
	h->c.refused++;
	sib_log(sib_log_nth(h->c.refused), "switch: %s asked to be CA \"%s\": refused, %s",
		sib_endpoint_str(from, ep), id, sib_cable_reason_str(reason));
	reply(h, &m, from);
}

static void attach(struct sib_switch_host *h, const struct sib_cable_msg *m,
		   const struct sib_endpoint *from, uint64_t now)
{
	struct sib_switch_slot *s = NULL, *mine = slot_by_ep(h, from);
	struct sib_cable_msg a = { .type = SIB_CABLE_ATTACHED };
	const struct sib_topo_node *n;
	char ep[64];

	for (unsigned i = 0; i < h->nslots && !s; i++) {
		struct sib_switch_slot *c = &h->slot[i];

		if (m->id[0] ? !strcmp(h->topo.node[c->node].id, m->id)
			     : !c->attached || c == mine)
			s = c;
	}
	if (!s)
		return refuse(h, m->id[0] ? SIB_CABLE_NO_SUCH_NODE : SIB_CABLE_FULL, m->id, from);
	if (s->attached && !sib_endpoint_equal(&s->ep, from))
		return refuse(h, SIB_CABLE_TAKEN, m->id, from);
	if (!s->attached && h->sw[s->sw].port[s->sw_port].cut)
		return refuse(h, SIB_CABLE_CUT, m->id, from);
	if (mine && mine != s) /* the same port, as another CA now */
		detach(h, mine, "attached again as another CA");
	if (!s->attached) {
		s->attached = true;
		s->ep = *from;
		if (!h->sw[s->sw].port[s->sw_port].cut)
			sib_switch_link(&h->sw[s->sw], s->sw_port, true);
		h->c.attached++;
		sib_info("switch: %s attached to %s[%u] as %s",
			 sib_endpoint_str(from, ep), h->sw[s->sw].node->id, s->sw_port,
			 h->topo.node[s->node].id);
	}
	s->last_seen_ns = now;
	n = &h->topo.node[s->node];
	snprintf(a.id, sizeof(a.id), "%s", n->id);
	a.node_guid = n->node_guid;
	a.sys_image_guid = n->sys_image_guid;
	a.port = (uint8_t)s->ca_port;
	a.nports = (uint8_t)n->nports;
	a.data_mode = (uint8_t)h->mode;
	a.switch_port = (uint8_t)s->sw_port;
	a.switch_guid = h->sw[s->sw].node->node_guid;
	reply(h, &a, from);
}

void sib_switch_host_rx(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	struct sib_switch_host *h = arg;
	struct sib_switch_slot *s;
	uint64_t now = sib_switch_host_now();

	if (sib_cable_is(pkt, len)) {
		struct sib_cable_msg m;

		if (sib_cable_decode(pkt, len, &m)) {
			h->c.rx_cable_bad++;
			return;
		}
		s = slot_by_ep(h, from);
		switch (m.type) {
		case SIB_CABLE_ATTACH:
			attach(h, &m, from, now);
			break;
		case SIB_CABLE_KEEPALIVE:
			if (s)
				s->last_seen_ns = now;
			else
				refuse(h, SIB_CABLE_NOT_ATTACHED, m.id, from);
			break;
		case SIB_CABLE_DETACH:
			if (s) {
				detach(h, s, "it said goodbye");
				s->detached_ns = now;
			}
			break;
		default:
			h->c.rx_cable_bad++;
		}
		return;
	}
	s = slot_by_ep(h, from);
	if (!s && just_detached(h, from, now)) {
		h->c.rx_late++; /* expected: counted, not logged */
		return;
	}
	if (!s) {
		char ep[64];

		h->c.rx_unattached++;
		sib_log(sib_log_nth(h->c.rx_unattached),
			"switch: a packet from %s, which is cabled to no port, dropped "
			"(%llu so far)", sib_endpoint_str(from, ep),
			(unsigned long long)h->c.rx_unattached);
		return;
	}
	s->last_seen_ns = now;
	if (h->sw[s->sw].port[s->sw_port].cut) {
		h->c.rx_cut++;
		return;
	}
	carry(h, s->sw, s->sw_port, pkt, len, 0);
}

void sib_switch_host_tick(struct sib_switch_host *h, uint64_t now_ns)
{
	for (unsigned i = 0; i < h->nsw; i++) {
		uint8_t buf[IB_MAX_PACKET];
		struct sib_switch_out out;

		if (sib_switch_trap(&h->sw[i], now_ns, buf, &out))
			for (unsigned k = 0; k < out.nports; k++)
				emit(h, (int)i, out.port[k], buf, out.len, 0);
	}
	for (unsigned i = 0; i < h->nslots; i++) {
		struct sib_switch_slot *s = &h->slot[i];

		if (s->attached && now_ns - s->last_seen_ns > SIB_CABLE_DEAD_MS * 1000000ull) {
			h->c.dead++;
			detach(h, s, "silent too long");
		}
	}
}

/* ---------------------------------------------------------------- control */

static const char *state_name(uint8_t s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE" };

	return s <= IB_PORT_STATE_ACTIVE ? names[s] : "?";
}

static void show(struct sib_switch_host *h, struct sib_text *t)
{
	const struct sib_topo *topo = &h->topo;

	sib_text_put(t, "%u switches, %u CA slots, data %s\n", h->nsw, h->nslots,
		     h->mode == SIB_DATA_SWITCHED ? "switched" : "direct");
	for (unsigned i = 0; i < h->nsw; i++) {
		const struct sib_switch *sw = &h->sw[i];
		bool any = false;

		sib_text_put(t, "switch %s: GUID 0x%016llx, LID %u, LinearFDBTop %u\n", sw->node->id,
			     (unsigned long long)sw->node->node_guid, sw->port[0].pi.LID,
			     sw->si.LinearFDBTop);
		for (unsigned p = 1; p <= sw->nports; p++) {
			const struct sib_switch_port *sp = &sw->port[p];
			const struct sib_topo_link *l = &sw->node->port[p];

			if (l->peer < 0 && sp->pi.PortState == IB_PORT_STATE_DOWN)
				continue;
			sib_text_put(t, "  port %-3u %-6s%s to %s[%u]: %llu packets out, %llu in, "
					"%u relay errors\n",
				     p, state_name(sp->pi.PortState), sp->cut ? " (cut)" : "",
				     l->peer >= 0 ? topo->node[l->peer].id : "nothing", l->peer_port,
				     (unsigned long long)sp->xmit_pkts,
				     (unsigned long long)sp->rcv_pkts,
				     sp->pc.PortRcvSwitchRelayErrors);
		}
		sib_text_put(t, "  LFT:");
		for (unsigned lid = 1; lid <= sw->si.LinearFDBTop && lid < SIB_SWITCH_LFT_CAP; lid++)
			if (sw->lft[lid] != IB_LFT_PORT_NONE)
				sib_text_put(t, " %u>%u", lid, sw->lft[lid]);
		sib_text_put(t, "\n  dropped:");
		for (unsigned d = 0; d < SIB_DROP_COUNT; d++)
			if (sw->drops[d]) {
				sib_text_put(t, " %s=%llu", sib_switch_drop_name((enum sib_switch_drop)d),
					     (unsigned long long)sw->drops[d]);
				any = true;
			}
		sib_text_put(t, "%s\n", any ? "" : " none");
	}
	for (unsigned i = 0; i < h->nslots; i++) {
		const struct sib_switch_slot *s = &h->slot[i];
		char ep[64];

		if (s->attached)
			sib_text_put(t, "CA %s at %s on %s[%u]\n", topo->node[s->node].id,
				     sib_endpoint_str(&s->ep, ep), h->sw[s->sw].node->id, s->sw_port);
	}
	sib_text_put(t, "cables: %llu attached, %llu detached (%llu silent), %llu refused; "
			"%llu packets forwarded; dropped %llu from no port, %llu late from ports "
			"that detached, %llu malformed, %llu over a cut cable\n",
		     (unsigned long long)h->c.attached, (unsigned long long)h->c.detached,
		     (unsigned long long)h->c.dead, (unsigned long long)h->c.refused,
		     (unsigned long long)h->c.forwarded, (unsigned long long)h->c.rx_unattached,
		     (unsigned long long)h->c.rx_late, (unsigned long long)h->c.rx_malformed,
		     (unsigned long long)h->c.rx_cut);
}

/* Cut (or restore) the cable at hosted switch `id` port p: both ends. */
static int relink(struct sib_switch_host *h, const char *id, unsigned p, bool up, struct sib_text *t)
{
	int n = sib_topo_find(&h->topo, id), sw;
	const struct sib_topo_link *l;

	if (n < 0 || (sw = h->sw_of[n]) < 0) {
		sib_text_put(t, "error: no switch %s here\n", id);
		return -1;
	}
	if (p == 0 || p > h->sw[sw].nports || (l = &h->topo.node[n].port[p])->peer < 0) {
		sib_text_put(t, "error: %s has no cable at port %u\n", id, p);
		return -1;
	}
	h->sw[sw].port[p].cut = !up;
	if (h->sw_of[l->peer] >= 0) {
		struct sib_switch *peer = &h->sw[h->sw_of[l->peer]];

		peer->port[l->peer_port].cut = !up;
		sib_switch_link(&h->sw[sw], p, up);
		sib_switch_link(peer, l->peer_port, up);
	} else {
		bool attached = false;

		for (unsigned i = 0; i < h->nslots; i++)
			if (h->slot[i].node == l->peer && h->slot[i].ca_port == l->peer_port)
				attached = h->slot[i].attached;
		/* a CA comes back with its cable only if it is still there */
		sib_switch_link(&h->sw[sw], p, up && attached);
	}
	sib_info("switch: the cable %s[%u] - %s[%u] is %s (softib fabric)", id, p,
		 h->topo.node[l->peer].id, l->peer_port, up ? "back" : "cut");
	sib_text_put(t, "%s[%u] - %s[%u] %s\n", id, p, h->topo.node[l->peer].id, l->peer_port,
		     up ? "relinked" : "unlinked");
	return 0;
}

size_t sib_switch_host_command(void *arg, const char *line, char *buf, size_t len)
{
	struct sib_switch_host *h = arg;
	struct sib_text t = { .buf = buf, .len = len };
	char verb[16], id[SIB_TOPO_ID_MAX + 1];
	unsigned port;

	buf[0] = 0;
	if (sscanf(line, "%15s", verb) != 1 || !strcmp(verb, "show"))
		show(h, &t);
	else if ((!strcmp(verb, "unlink") || !strcmp(verb, "relink")) &&
		 sscanf(line, "%*s %64s %u", id, &port) == 2)
		relink(h, id, port, verb[0] == 'r', &t);
	else
		sib_text_put(&t, "error: want show, unlink SWITCH PORT or relink SWITCH PORT\n");
	return t.used;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A fabric's topology file: ibsim's netfile, the format ibnetdiscover
 * prints, so that topologies of real clusters and ibsim's examples load
 * unchanged.  A record is a header line, one line per cabled port, and a
 * blank line:
 *
 *   switchguid=0x2c90000000000
 *   Switch 8 "S1"                  # "a switch" enhanced port 0 lid 1
 *   [1]    "H1"[1]                 w=2 s=4
 *   [3](2c90000000003) "S2"[3]     gbit=10 lat=500n
 *
 * Keywords before a header apply to the next node of their kind
 * (switchguid=, caguid= or hcaguids=, rtguid=, sysimgguid=, vendid=,
 * devid=); width=, speed= and extspeed= set the defaults of later links;
 * "include FILE" reads another file in place.  A link need be written at
 * one end only; written at both, the ends must agree.
 *
 * Port options: w= (LinkWidthEnabled bits, 1..31), s= (LinkSpeedEnabled
 * bits, 1..15), e= (LinkSpeedExtEnabled bits, 0..31), as ibsim reads
 * them; softib's own end in a letter ibsim ignores (its parser reads only
 * the letter before '='): gbit= (the link's rate in Gb/s, overriding what
 * width and speed give), lat= (flight delay: a number with n, u, m or s)
 * and buf= (receive buffer per VL, bytes).  A trailing "# ... 4xQDR" (as
 * ibnetdiscover writes) gives width and speed when w= and s= do not.
 */
#ifndef SIB_FABRIC_TOPOLOGY_H
#define SIB_FABRIC_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

enum sib_topo_type { SIB_TOPO_CA = 1, SIB_TOPO_SWITCH = 2, SIB_TOPO_ROUTER = 3 }; /* NodeType */

enum {
	SIB_TOPO_ID_MAX = 64,	   /* a node id or description, as NodeDescription */
	SIB_TOPO_MAX_PORTS = 254,  /* IBA 14.2.5.3: a switch has at most 254 external ports */
	SIB_TOPO_MAX_NODES = 16384,
	SIB_TOPO_MAX_INCLUDE = 8,  /* include depth */
	SIB_TOPO_MAX_FILES = 64,   /* files read in all */
};

/* One end of a cable, seen from a port: where it goes and what it is. */
struct sib_topo_link {
	int peer;	/* node index, -1: nothing cabled */
	uint8_t peer_port;
	uint8_t width;	/* LinkWidthEnabled bits: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x */
	uint8_t speed;	/* LinkSpeedEnabled bits: 1 SDR, 2 DDR, 4 QDR */
	uint8_t ext_speed; /* LinkSpeedExtEnabled bits: 1 FDR, 2 EDR, 4 HDR, 8 NDR */
	uint32_t mbit;	/* gbit= in Mb/s, 0: from width and speed */
	uint64_t delay_ns; /* lat= */
	uint32_t buf;	/* buf=, 0: the default */
	unsigned line;	/* where it was written, for messages */
};

struct sib_topo_node {
	enum sib_topo_type type;
	char id[SIB_TOPO_ID_MAX + 1];	/* the header's "nodeid", unique */
	char desc[SIB_TOPO_ID_MAX + 1]; /* the header's # "description", else id */
	unsigned nports;
	uint64_t node_guid, sys_image_guid;
	uint32_t vendor_id;
	uint16_t device_id;
	int enhanced_port0;
	struct sib_topo_link *port; /* [0..nports]; [0] is a switch's management port, never cabled */
	unsigned line;
};

struct sib_topo {
	unsigned nnodes;
	struct sib_topo_node *node;
};

/*
 * Parse `text` (named `name` in messages; includes are found relative to
 * `dir`, NULL: the current directory).  0, or -1 with `err` saying
 * "NAME:LINE: what is wrong"; on error `t` holds nothing.
 */
int sib_topo_parse(struct sib_topo *t, const char *text, const char *name, const char *dir,
		   char *err, size_t errlen);
int sib_topo_load(struct sib_topo *t, const char *path, char *err, size_t errlen);
void sib_topo_free(struct sib_topo *t);

/* The index of the node with this id, or -1. */
int sib_topo_find(const struct sib_topo *t, const char *id);

/* A port's GUID: a switch has one (its node GUID, port 0); a CA's port n
 * is its node GUID + n. */
uint64_t sib_topo_port_guid(const struct sib_topo_node *n, unsigned port);

#endif

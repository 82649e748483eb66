/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's partitions (IBA 10.9): the configuration in OpenSM's
 * partitions.conf syntax (man 5 partitions.conf; read for facts in
 * OpenSM's osm_prtn_config.c), and the P_Key table it gives each port.
 *
 * The file is a list of definitions, each ended by ';':
 *	[Name][=PKey][,flag[=value]]... : [member[,member]...] ;
 * PKey is 0x0001..0x7fff (the low 15 bits; OpenSM's Default is 0x7fff);
 * flags: defmember=full|limited|both (the membership of members that name
 * none; limited when absent), ipoib, mtu=, rate=, sl=, scope= (IPoIB
 * group parameters: accepted, not used); members: a port GUID (0x...),
 * ALL or ALL_CAS (every port), SELF (the SM's own port: softib-sm has no
 * data port, so nothing), each optionally =full, =limited or =both.
 * '#' starts a comment to the end of the line; white space is free.
 * Definitions with the same PKey merge.  Without a file, the default is
 *	Default=0x7fff : ALL=full ;
 *
 * A port's table: the default partition (0x7fff) first when the port is
 * in it (IBA 10.9.3: index 0 is where the default P_Key lives), then the
 * others in the order the file names them; full membership sets bit 15
 * (0xffff for the default partition), limited does not, both gives the
 * two entries.  At most SIB_MAX_PKEYS entries (the rest are dropped, and
 * the SM warns).
 */
#ifndef SIB_FABRIC_PARTITIONS_H
#define SIB_FABRIC_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIB_PKEY_DEFAULT_PARTITION 0x7fff
#define SIB_PARTITIONS_MAX 64
#define SIB_PARTITION_MEMBERS_MAX 256

enum sib_membership { SIB_MEMBER_LIMITED = 1, SIB_MEMBER_FULL = 2, SIB_MEMBER_BOTH = 3 };

struct sib_partition_member {
	uint64_t guid; /* 0 with all: every port */
	bool all;
	enum sib_membership m;
};

struct sib_partition {
	char name[64];
	uint16_t pkey; /* 15 bits */
	bool ipoib;
	unsigned nmembers;
	struct sib_partition_member members[SIB_PARTITION_MEMBERS_MAX];
};

struct sib_partitions {
	unsigned n;
	struct sib_partition p[SIB_PARTITIONS_MAX];
};

/* The default configuration (one partition 0x7fff, every port full). */
void sib_partitions_default(struct sib_partitions *out);
/* Parses text; 0, or -EINVAL with err naming the line and the rule. */
int sib_partitions_parse(const char *text, struct sib_partitions *out, char *err, size_t err_len);
/* The P_Key table of the port with GUID guid: fills pkeys[0..max) (zeros
 * past the end) and returns how many entries it wanted (more than max:
 * some were dropped). */
unsigned sib_partitions_table(const struct sib_partitions *ps, uint64_t guid, uint16_t *pkeys,
			      unsigned max);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm on a fabric (SOFTIB_FABRIC, SOFTIB_NODE): it attaches to a
 * softib-switch like an HCA and manages the subnet behind it as IBA 14.4
 * says, with directed-route SMPs through its own port.  Every sweep
 * discovers the whole fabric (sm_discover.h), keeps each port's LID by
 * its GUID, and writes what changed (sm_configure.h): LIDs, the LFT
 * blocks that differ, port states.  SMPs go out 16 at a time, each tried
 * 4 times 250 ms apart.  A switch's trap 128 (a link came or went) is
 * repressed and starts a sweep at once.
 *
 * Not yet on a fabric: the SA (PathRecords, ServiceRecords, multicast),
 * M_Keys, standby SMs.
 */
#ifndef SIB_FABRIC_SM_FABRIC_H
#define SIB_FABRIC_SM_FABRIC_H

#include <signal.h>

#include "fabric/routing.h"

struct sib_sm_fabric_opts {
	const char *fabric; /* SOFTIB_FABRIC */
	const char *node;   /* SOFTIB_NODE: the CA the SM is */
	double sweep_s;
	enum sib_rt_engine engine;
};

/* Runs until *stop; 0, or 1 when the SM could not attach. */
int sib_sm_fabric_run(const struct sib_sm_fabric_opts *o, volatile sig_atomic_t *stop);

#endif

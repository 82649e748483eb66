/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * XRC domains (IBA Vol 1 9.8.4 / ibv_open_xrcd(3)).  A domain may be tied to
 * a file: every open naming the same file (device and inode) gets the same
 * domain, as processes sharing an XRC domain through a file expect.  XRC
 * SRQs and XRC target QPs hold the domain; closing it while they exist fails
 * with EBUSY.
 */
#ifndef SIB_TRANSPORT_XRCD_H
#define SIB_TRANSPORT_XRCD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sib_xrcd;

/*
 * Open a domain.  has_file false: a new private domain (oflags must include
 * O_CREAT).  has_file true: the domain of (dev, ino); a missing one is
 * created only with O_CREAT (else EAGAIN, as the kernel's uverbs answers),
 * and O_CREAT|O_EXCL on an existing one fails with EINVAL.  0, EINVAL,
 * EAGAIN, ENOMEM.
 */
int sib_xrcd_open(bool has_file, dev_t dev, ino_t ino, int oflags, struct sib_xrcd **out);
/* Drop one open: 0, or EBUSY when this is the last open and QPs/SRQs use it. */
int sib_xrcd_close(struct sib_xrcd *x);
/* A QP or SRQ starts / stops using the domain. */
void sib_xrcd_get(struct sib_xrcd *x);
void sib_xrcd_put(struct sib_xrcd *x);
/* Domain number, unique while it exists (for logs and the data path). */
uint32_t sib_xrcd_num(const struct sib_xrcd *x);

#endif

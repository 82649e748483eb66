/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * 24-bit object numbers unique within one HCA (QP numbers, IBA 9.6.1.1 and
 * 10.2.4; XRC SRQ numbers, 9.8.4) and the lookup from number to object the
 * receive path needs.  Numbers below `first` are reserved (QP0 and QP1 are
 * the HCA's own).  Thread safe.
 */
#ifndef SIB_TRANSPORT_NUMTAB_H
#define SIB_TRANSPORT_NUMTAB_H

#include <stdint.h>

struct sib_numtab;

/* Numbers first..0xffffff, at most max of them in use at once. */
struct sib_numtab *sib_numtab_create(uint32_t first, uint32_t max);
void sib_numtab_destroy(struct sib_numtab *t);

/* 0 and *num, or ENOMEM (max reached or no memory).  obj must not be NULL. */
int sib_numtab_alloc(struct sib_numtab *t, void *obj, uint32_t *num);
/* Claim a given number (a reserved one, e.g. QP1): 0, EEXIST or ENOMEM. */
int sib_numtab_insert(struct sib_numtab *t, uint32_t num, void *obj);
void sib_numtab_free(struct sib_numtab *t, uint32_t num);
/* The object, or NULL. */
void *sib_numtab_lookup(struct sib_numtab *t, uint32_t num);
uint32_t sib_numtab_count(struct sib_numtab *t);

#endif

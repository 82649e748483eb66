/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The memory of the objects a program holds pointers to (PD, MR, MW, CQ,
 * SRQ, QP, AH, XRCD, DM), so that a pointer used after its object was destroyed
 * gets an error, never a crash.
 *
 * libibverbs reads obj->context (and an MR's pd, addr, length) from the
 * pointer before it calls the provider, so a destroyed object's memory must
 * stay readable with those fields intact: it is never given back to malloc.
 * A destroyed object becomes a dead shell in a pool of its kind; a second
 * destroy finds it dead and returns ENOENT with one line naming the verb.
 * New objects of the kind reuse the oldest shell once SIB_OBJ_QUARANTINE
 * shells wait, so a stale pointer stays dead for as long as that allows and
 * the memory kept is bounded by the most objects ever alive at once plus
 * the quarantine.  (Once a shell is reused, a stale pointer names the new
 * object, as a reused kernel handle would.)  Whether a pointer names a live
 * object is looked up in a set of addresses, never read from the memory it
 * points to.
 */
#ifndef SIB_PROVIDER_HANDLES_H
#define SIB_PROVIDER_HANDLES_H

#include <stdbool.h>
#include <stddef.h>

enum sib_obj_kind {
	SIB_OBJ_PD,
	SIB_OBJ_MR,
	SIB_OBJ_MW,
	SIB_OBJ_CQ,
	SIB_OBJ_SRQ,
	SIB_OBJ_QP,
	SIB_OBJ_AH,
	SIB_OBJ_XRCD,
	SIB_OBJ_DM,
	SIB_OBJ_KINDS
};

/* Dead shells of one kind that wait before one is reused. */
#define SIB_OBJ_QUARANTINE 64

/* size zeroed bytes for a new object of kind, 16-byte aligned, live; NULL
 * with errno ENOMEM.  Every object of a kind must have the same size. */
void *sib_obj_new(enum sib_obj_kind kind, size_t size);

/*
 * Claims obj for its destruction: 0 when it was live (it is now dying);
 * ENOENT, also in errno, when it was already destroyed, another thread is
 * destroying it, or this device never made it (one line naming verb), as
 * the kernel answers a handle it does not know.  obj's memory is not read
 * for that: a forged pointer is refused as well.  After 0, either sib_obj_destroyed (it is gone) or
 * sib_obj_keep (the destroy failed, e.g. EBUSY; it is live again).
 */
int sib_obj_claim(void *obj, const char *verb);
void sib_obj_keep(void *obj);
/* obj's memory becomes a dead shell; the fields libibverbs reads stay. */
void sib_obj_destroyed(void *obj);

/* A new object that was never handed to the program: its memory is free. */
void sib_obj_discard(void *obj);

#endif

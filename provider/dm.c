/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Device memory (ibv_alloc_dm(3)): memory on the adapter that a program
 * reaches only through ibv_memcpy_to_dm / ibv_memcpy_from_dm and, once
 * registered with ibv_reg_dm_mr, through work requests and remote access.
 * softib's adapter memory is its own heap, so a DM is a buffer the program
 * is never given the address of.  The rules are mlx5's (the adapter that
 * has DM, its MEMIC):
 *   - all DMs of the device hold at most max_dm_size bytes in all
 *     (SIB_MAX_DM_SIZE); one larger than that is EINVAL, one that does not
 *     fit beside the others ENOMEM;
 *   - copies move 32-bit words: an offset or length that is not a multiple
 *     of 4 is EINVAL, a range past the end EFAULT;
 *   - a DM MR is zero based (IBV_ACCESS_ZERO_BASED, else EINVAL): work
 *     requests address it from 0, and its addr is NULL, as libibverbs'
 *     ibv_cmd_reg_dm_mr leaves it;
 *   - a DM with MRs on it cannot be freed (EBUSY).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "provider/handles.h"
#include "provider/softib.h"
#include "transport/caps.h"
#include "base/log.h"

struct softib_dm {
	struct ibv_dm ibv_dm;
	uint8_t *mem;
	size_t length;
	size_t size; /* what it counts against max_dm_size: length, aligned */
	atomic_uint users; /* MRs registered on it */
};

/* Bytes of every DM of this process's device (one device per process). */
static atomic_size_t dm_bytes;

static struct softib_dm *to_sdm(struct ibv_dm *dm)
{
	return softib_container_of(dm, struct softib_dm, ibv_dm);
}

/* The range [offset, offset + length) of dm for a copy: 0 or the errno. */
static int dm_range(const char *verb, struct softib_dm *d, uint64_t offset, size_t length)
{
	if ((offset & 3) || (length & 3)) {
		sib_warn("%s: offset %llu and length %zu must be multiples of 4 (device memory "
			 "moves 32-bit words)",
			 verb, (unsigned long long)offset, length);
		return EINVAL;
	}
	if (offset > d->length || length > d->length - offset) {
		sib_warn("%s: offset %llu length %zu is past the %zu bytes of the DM", verb,
			 (unsigned long long)offset, length, d->length);
		return EFAULT;
	}
	return 0;
}

static int softib_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset, const void *host_addr,
			       size_t length)
{
	struct softib_dm *d = to_sdm(dm);
	int err = dm_range("memcpy_to_dm", d, dm_offset, length);

	if (!err)
		memcpy(d->mem + dm_offset, host_addr, length);
	return err;
}

static int softib_memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t dm_offset,
				 size_t length)
{
	struct softib_dm *d = to_sdm(dm);
	int err = dm_range("memcpy_from_dm", d, dm_offset, length);

	if (!err)
		memcpy(host_addr, d->mem + dm_offset, length);
	return err;
}

static struct ibv_dm *softib_alloc_dm(struct ibv_context *ctx, struct ibv_alloc_dm_attr *attr)
{
	struct softib_dm *d;
	size_t align, size, used;

	if (attr->comp_mask) {
		sib_warn("alloc_dm on %s: unknown comp_mask bits 0x%x", SIB_DEV_NAME,
			 attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	if (!attr->length || attr->length > SIB_MAX_DM_SIZE) {
		sib_warn("alloc_dm on %s: length %zu is not 1 to max_dm_size %u bytes",
			 SIB_DEV_NAME, attr->length, SIB_MAX_DM_SIZE);
		errno = EINVAL;
		return NULL;
	}
	if (attr->log_align_req > SIB_MAX_DM_LOG_ALIGN) {
		sib_warn("alloc_dm on %s: log_align_req %u is more than %u", SIB_DEV_NAME,
			 attr->log_align_req, SIB_MAX_DM_LOG_ALIGN);
		errno = EINVAL;
		return NULL;
	}
	align = (size_t)1 << (attr->log_align_req > 6 ? attr->log_align_req : 6);
	size = (attr->length + align - 1) & ~(align - 1);
	used = atomic_fetch_add(&dm_bytes, size);
	if (used + size > SIB_MAX_DM_SIZE) {
		atomic_fetch_sub(&dm_bytes, size);
		sib_warn("alloc_dm on %s: %zu bytes do not fit beside the %zu the other DMs hold "
			 "(max_dm_size %u)",
			 SIB_DEV_NAME, size, used, SIB_MAX_DM_SIZE);
		errno = ENOMEM;
		return NULL;
	}
	d = sib_obj_new(SIB_OBJ_DM, sizeof(*d));
	if (d)
		d->mem = aligned_alloc(align, size);
	if (!d || !d->mem) {
		if (d)
			sib_obj_discard(d);
		atomic_fetch_sub(&dm_bytes, size);
		errno = ENOMEM;
		return NULL;
	}
	memset(d->mem, 0, size);
	d->length = attr->length;
	d->size = size;
	atomic_init(&d->users, 0);
	d->ibv_dm.context = ctx;
	d->ibv_dm.memcpy_to_dm = softib_memcpy_to_dm;
	d->ibv_dm.memcpy_from_dm = softib_memcpy_from_dm;
	return &d->ibv_dm;
}

static int softib_free_dm(struct ibv_dm *dm)
{
	struct softib_dm *d = to_sdm(dm);
	int err = sib_obj_claim(d, "free_dm");

	if (err)
		return err;
	if (atomic_load(&d->users)) {
		sib_warn("free_dm: %u MR(s) are registered on this DM (ibv_dereg_mr first)",
			 atomic_load(&d->users));
		sib_obj_keep(d);
		errno = EBUSY;
		return EBUSY;
	}
	free(d->mem);
	d->mem = NULL;
	atomic_fetch_sub(&dm_bytes, d->size);
	sib_obj_destroyed(d);
	return 0;
}

static struct ibv_mr *softib_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				       size_t length, unsigned int access)
{
	struct softib_dm *d = to_sdm(dm);
	struct softib_mr *smr;
	struct ibv_mr *mr;

	if (!(access & IBV_ACCESS_ZERO_BASED)) {
		sib_warn("reg_dm_mr: device memory is registered zero based "
			 "(IBV_ACCESS_ZERO_BASED)");
		errno = EINVAL;
		return NULL;
	}
	if (dm_offset > d->length || length > d->length - dm_offset) {
		sib_warn("reg_dm_mr: offset %llu length %zu is past the %zu bytes of the DM",
			 (unsigned long long)dm_offset, length, d->length);
		errno = EINVAL;
		return NULL;
	}
	mr = softib_mr_register(pd, d->mem + dm_offset, length, 0, (int)access, "reg_dm_mr",
				IBV_MR_TYPE_MR);
	if (!mr)
		return NULL;
	smr = softib_container_of(mr, struct softib_mr, vmr.ibv_mr);
	smr->dm = d;
	atomic_fetch_add(&d->users, 1);
	mr->addr = NULL;
	return mr;
}

void softib_dm_put(struct softib_dm *dm)
{
	atomic_fetch_sub(&dm->users, 1);
}

const struct verbs_context_ops softib_dm_ops = {
	.alloc_dm = softib_alloc_dm,
	.free_dm = softib_free_dm,
	.reg_dm_mr = softib_reg_dm_mr,
};

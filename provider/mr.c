/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory regions: reg_mr, rereg_mr, dereg_mr, advise_mr.  The rules and the
 * keys live in memreg/; here the libibverbs side: struct verbs_mr
 * (ibv_dereg_mr and ibv_rereg_mr read mr_type and access), PD references,
 * errnos and the log line for every rejection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "memreg/memreg.h"
#include "provider/handles.h"
#include "provider/softib.h"
#include "transport/caps.h"
#include "base/log.h"

/* memreg's access bits are IBV_ACCESS_* and its rereg flags IBV_REREG_MR_*. */
_Static_assert((int)MEMREG_ACCESS_LOCAL_WRITE == (int)IBV_ACCESS_LOCAL_WRITE, "access bits");
_Static_assert((int)MEMREG_ACCESS_REMOTE_WRITE == (int)IBV_ACCESS_REMOTE_WRITE, "access bits");
_Static_assert((int)MEMREG_ACCESS_REMOTE_READ == (int)IBV_ACCESS_REMOTE_READ, "access bits");
_Static_assert((int)MEMREG_ACCESS_REMOTE_ATOMIC == (int)IBV_ACCESS_REMOTE_ATOMIC, "access bits");
_Static_assert((int)MEMREG_ACCESS_MW_BIND == (int)IBV_ACCESS_MW_BIND, "access bits");
_Static_assert((int)MEMREG_ACCESS_ZERO_BASED == (int)IBV_ACCESS_ZERO_BASED, "access bits");
_Static_assert((int)MEMREG_ACCESS_ON_DEMAND == (int)IBV_ACCESS_ON_DEMAND, "access bits");
_Static_assert((int)MEMREG_ACCESS_HUGETLB == (int)IBV_ACCESS_HUGETLB, "access bits");
#if SIB_ABI_LAYOUT >= 45
_Static_assert((int)MEMREG_ACCESS_FLUSH_GLOBAL == (int)IBV_ACCESS_FLUSH_GLOBAL, "access bits");
_Static_assert((int)MEMREG_ACCESS_FLUSH_PERSISTENT == (int)IBV_ACCESS_FLUSH_PERSISTENT,
	       "access bits");
#endif
_Static_assert((int)MEMREG_REREG_TRANSLATION == (int)IBV_REREG_MR_CHANGE_TRANSLATION, "rereg flags");
_Static_assert((int)MEMREG_REREG_PD == (int)IBV_REREG_MR_CHANGE_PD, "rereg flags");
_Static_assert((int)MEMREG_REREG_ACCESS == (int)IBV_REREG_MR_CHANGE_ACCESS, "rereg flags");

/*
 * The optional range (RELAXED_ORDERING and later) holds hints a device may
 * ignore (verbs.h: IBV_ACCESS_OPTIONAL_RANGE); memory is coherent here.
 */
static uint32_t softib_mr_access(int access)
{
	return (uint32_t)access & ~(uint32_t)IBV_ACCESS_OPTIONAL_RANGE;
}

static struct memreg_table *softib_memreg(struct ibv_context *ctx)
{
	return to_sctx(ctx)->hca->memreg;
}

/* Access flags for an MR, with the log line naming the rule: 0 or errno. */
static int softib_mr_check_access(const char *verb, uint32_t access)
{
	const char *rule;
	int err = memreg_mr_access_valid(access, &rule);

	if (err)
		sib_warn("%s: access 0x%x: %s", verb, access, rule);
	return err;
}

/* An implicit ODP MR is the whole address space: no max_mr_size for it. */
static int softib_mr_check_length(const char *verb, const struct memreg_mr_attr *a,
				  bool creating)
{
	if (a->length > SIB_MAX_MR_SIZE && !memreg_mr_implicit(a)) {
		softib_refused(creating, "%s: length %llu is more than max_mr_size %llu", verb,
			       (unsigned long long)a->length, (unsigned long long)SIB_MAX_MR_SIZE);
		return EINVAL;
	}
	return 0;
}

struct ibv_mr *softib_mr_register(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				  int access, const char *verb_name, enum ibv_mr_type type)
{
	struct memreg_mr_attr a = {
		.host = addr,
		.iova = hca_va,
		.length = length,
		.access = softib_mr_access(access),
		.pd = to_spd(pd)->pdn,
	};
	struct softib_mr *smr;
	struct verbs_mr *vmr;
	uint32_t key;
	char verb[40];
	int err;

	snprintf(verb, sizeof(verb), "%s on PD 0x%06x", verb_name, a.pd);
	err = softib_mr_check_access(verb, a.access);
	if (!err)
		err = softib_mr_check_length(verb, &a, true);
	if (!err && length && !addr && !memreg_mr_implicit(&a)) {
		sib_warn("%s: addr is NULL with length %zu (only an implicit ODP MR, "
			 "length SIZE_MAX with IBV_ACCESS_ON_DEMAND, has no address)", verb, length);
		err = EINVAL;
	}
	if (!err && memreg_mr_implicit(&a) && hca_va) {
		sib_warn("%s: implicit ODP MR with iova 0x%llx: its iova is its address, 0", verb,
			 (unsigned long long)hca_va);
		err = EINVAL;
	}
	if (err) {
		errno = err;
		return NULL;
	}
	if (a.access & MEMREG_ACCESS_ZERO_BASED)
		a.iova = 0; /* ibv_reg_mr(3): addressed by offset from the start */
	smr = sib_obj_new(SIB_OBJ_MR, sizeof(*smr));
	vmr = smr ? &smr->vmr : NULL;
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = memreg_mr_register(softib_memreg(pd->context), &a, &key);
	if (err) {
		if (err == ENOMEM)
			sib_warn("%s: no room for another MR (max_mr %u)", verb, (unsigned)SIB_MAX_MR);
		else
			sib_warn("%s: addr %p length %zu iova 0x%llx is not a valid range", verb, addr,
				 length, (unsigned long long)hca_va);
		sib_obj_discard(smr);
		errno = err;
		return NULL;
	}
	vmr->mr_type = type;
	vmr->access = access;
	vmr->ibv_mr.context = pd->context;
	vmr->ibv_mr.pd = pd;
	vmr->ibv_mr.addr = addr;
	vmr->ibv_mr.length = length;
	vmr->ibv_mr.handle = key;
	vmr->ibv_mr.lkey = key;
	vmr->ibv_mr.rkey = key;
	softib_pd_get(pd);
	return &vmr->ibv_mr;
}

static struct ibv_mr *softib_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				    uint64_t hca_va, int access)
{
	return softib_mr_register(pd, addr, length, hca_va, access, "reg_mr", IBV_MR_TYPE_MR);
}

static int softib_rereg_input_error(int err)
{
	errno = err;
	return IBV_REREG_MR_ERR_INPUT;
}

/* The pd argument is meaningless (and may be garbage) without CHANGE_PD. */
static int softib_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, int access)
{
	struct ibv_mr *mr = &vmr->ibv_mr;
	uint32_t new_access = softib_mr_access(flags & IBV_REREG_MR_CHANGE_ACCESS ? access
										  : vmr->access);
	struct memreg_mr_attr a = { .access = new_access };
	int err;

	if (!flags || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED)) {
		sib_warn("rereg_mr on MR 0x%06x: flags 0x%x: need one or more of "
			 "CHANGE_TRANSLATION, CHANGE_PD, CHANGE_ACCESS",
			 mr->lkey, (unsigned)flags);
		return softib_rereg_input_error(EINVAL);
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		char verb[40];

		snprintf(verb, sizeof(verb), "rereg_mr on MR 0x%06x", mr->lkey);
		err = softib_mr_check_access(verb, new_access);
		if (err)
			return softib_rereg_input_error(err);
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!pd || pd->context != mr->context) {
			sib_warn("rereg_mr on MR 0x%06x: the new PD is not on the MR's context",
				 mr->lkey);
			return softib_rereg_input_error(EINVAL);
		}
		a.pd = to_spd(pd)->pdn;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		a.host = addr;
		a.length = length;
		a.iova = (uintptr_t)addr;
		err = softib_mr_check_length("rereg_mr", &a, false);
		if (err)
			return softib_rereg_input_error(err);
	} else {
		a.host = mr->addr;
		a.length = mr->length;
	}
	/* A zero-based MR stays addressed by offset (or becomes so). */
	if (new_access & MEMREG_ACCESS_ZERO_BASED)
		a.iova = 0;
	else if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION))
		a.iova = (uintptr_t)mr->addr;
	/* Access changes that switch ZERO_BASED move the address space too. */
	if ((new_access ^ softib_mr_access(vmr->access)) & MEMREG_ACCESS_ZERO_BASED)
		flags |= IBV_REREG_MR_CHANGE_TRANSLATION;

	/* Packets queued to send from this MR hold it (sib_tx_commit_split):
	 * send them now rather than wait for a poll. */
	sib_progress_flush(to_sctx(mr->context)->hca);
	err = memreg_mr_rereg(softib_memreg(mr->context), mr->lkey, (unsigned)flags, &a);
	if (err) {
		if (err == EBUSY)
			sib_warn("rereg_mr on MR 0x%06x: memory windows are still bound to it",
				 mr->lkey);
		else
			sib_warn("rereg_mr on MR 0x%06x: %s", mr->lkey,
				 err == EINVAL ? "not a registered MR or an invalid range"
					       : "rejected");
		errno = err;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		softib_pd_get(pd);
		softib_pd_put(mr->pd);
		mr->pd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = a.host;
		mr->length = a.length;
	}
	return 0;
}

static int softib_dereg_mr(struct verbs_mr *vmr)
{
	struct ibv_mr *mr = &vmr->ibv_mr;
	struct softib_mr *smr = softib_container_of(vmr, struct softib_mr, vmr);
	int err = sib_obj_claim(smr, "dereg_mr");

	if (err)
		return err;
	/* as in rereg: what waits to be sent from this MR holds it */
	sib_progress_flush(to_sctx(mr->context)->hca);
	err = memreg_mr_deregister(softib_memreg(mr->context), mr->lkey);

	if (err == EBUSY) {
		sib_warn("dereg_mr on MR 0x%06x: memory windows are still bound to it", mr->lkey);
		sib_obj_keep(smr);
		return EBUSY;
	}
	if (err) {
		sib_warn("dereg_mr on MR 0x%06x: not a registered MR", mr->lkey);
		sib_obj_keep(smr);
		return err;
	}
	softib_pd_put(mr->pd);
	if (smr->dm)
		softib_dm_put(smr->dm);
	sib_obj_destroyed(smr);
	return 0;
}

/* ibv_advise_mr(3)'s errno for an SGE memreg refused. */
static int softib_advise_errno(enum memreg_verdict v)
{
	switch (v) {
	case MEMREG_WINDOW_AS_LKEY:
		return EINVAL; /* "doesn't belong to a MR, but a MW" */
	case MEMREG_WRONG_PD:
	case MEMREG_NO_RIGHT:
		return EPERM; /* outside the caller's scope; PREFETCH_WRITE on a read-only MR */
	default:
		return EFAULT; /* invalid lkey, range outside the MR, or not mapped */
	}
}

/*
 * One SGE of a prefetch: checked as a local access (for writing with
 * PREFETCH_WRITE), then its pages faulted in unless NO_FAULT.  A
 * synchronous (FLUSH) prefetch reports a hole as EFAULT; an asynchronous
 * one is a hint whose faults nobody hears of (mlx5 queues it and returns 0).
 */
static int softib_advise_sge(struct ibv_pd *pd, uint32_t advice, bool sync,
			     const struct ibv_sge *sge)
{
	struct memreg_table *t = softib_memreg(pd->context);
	bool write = advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	struct memreg_request req = {
		.key = sge->lkey,
		.pd = to_spd(pd)->pdn,
		.va = sge->addr,
		.len = sge->length,
		.access = write ? MEMREG_ACCESS_LOCAL_WRITE : 0,
	};
	struct memreg_grant g;
	enum memreg_verdict v = memreg_check(t, &req, &g);
	char line[200];

	if (v == MEMREG_OK) {
		bool odp = g.on_demand;

		if (odp && advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
			v = memreg_grant_fault_in(&g, sge->length, write);
		memreg_release(t, &g);
		if (!odp) {
			sib_warn("advise_mr: lkey 0x%06x is not an on-demand (ODP) MR: nothing "
				 "to prefetch (mlx5 refuses it too)", sge->lkey);
			return EINVAL;
		}
	}
	if (v == MEMREG_OK || (v == MEMREG_NOT_MAPPED && !sync))
		return 0;
	memreg_explain(&req, v, &g, line, sizeof(line));
	sib_warn("advise_mr: %s", line);
	return softib_advise_errno(v);
}

static int softib_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			    struct ibv_sge *sg_list, uint32_t num_sge)
{
	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT) {
		sib_warn("advise_mr: advice %u: softib knows PREFETCH, PREFETCH_WRITE and "
			 "PREFETCH_NO_FAULT", (unsigned)advice);
		return EOPNOTSUPP;
	}
	if (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) {
		sib_warn("advise_mr: flags 0x%x: only IBV_ADVISE_MR_FLAG_FLUSH is defined", flags);
		return EINVAL;
	}
	if (!num_sge || !sg_list) {
		sib_warn("advise_mr: an empty scatter list (num_sge %u)", num_sge);
		return EINVAL;
	}
	for (uint32_t i = 0; i < num_sge; i++) {
		int err = softib_advise_sge(pd, advice, flags & IBV_ADVISE_MR_FLAG_FLUSH,
					    &sg_list[i]);

		if (err)
			return err;
	}
	return 0;
}

const struct verbs_context_ops softib_mr_ops = {
	.advise_mr = softib_advise_mr,
	.reg_mr = softib_reg_mr,
	.rereg_mr = softib_rereg_mr,
	.dereg_mr = softib_dereg_mr,
};

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * memreg/: protection domains, memory regions and windows, their keys and
 * the access check (IBA Vol 1 10.6).  memreg/ may use base/ and wire/.
 *
 * Memory registration for one HCA: memory regions (MR), memory windows (MW),
 * the L_Key/R_Key table, and memreg_check(), the one function that decides
 * whether an access (key, PD, QP, address, length, rights) is allowed.
 *
 * Keys (IBA 10.6): key = (index << 8) | key8.  The 24-bit index selects a
 * slot of the table; MRs and MWs share the table so an R_Key lookup is one
 * step.  key8 is the "key" portion: for MRs and type 1 windows memreg picks
 * it and changes it on every reuse of a slot (and on every type 1 bind); for
 * type 2 windows the consumer chooses it at bind time (ibv_inc_rkey).  Index
 * 0 is never used, so a zeroed key is always invalid.  For an MR, L_Key ==
 * R_Key.
 *
 * Protection domains are opaque 32-bit identities that memreg only compares.
 *
 * Thread safety: every function may be called from any thread.  One mutex
 * per table guards the slots; memreg_check() holds it only for the lookup.
 *
 * Lifetime: a successful memreg_check() takes a hold on the region (and, for
 * a window, on the MR beneath it) that memreg_release() drops.  While the
 * data path holds a region it may copy to or from grant.host without the
 * lock.  Deregister, reregister and dealloc first make the key unusable for
 * new checks, then wait until every hold is released, so that when they
 * return nothing touches the old memory any more (the consumer may free it).
 * A grant through a window also holds the MR beneath, so unbinding or
 * invalidating a window needs no wait: the MR cannot go away under the copy.
 * Never call those while holding a grant on the same region.
 *
 * On-demand paging (ODP, IBV_ACCESS_ON_DEMAND): nothing is pinned here
 * anyway, so an on-demand region differs only in that its pages need not
 * be mapped: at registration, or at all for an implicit region (the whole
 * address space, memreg_mr_implicit).  Every byte moved through its grant
 * goes through memreg_grant_read / _write / _fault_in, which report
 * MEMREG_NOT_MAPPED where hardware's page fault would fail, instead of
 * SIGSEGV; other regions keep a plain memcpy.
 *
 * Zero-length accesses: the key, its state, the PD, the QP and the rights are
 * checked, the bounds are not (a zero-length access touches no byte).  The
 * responders do not ask at all for a zero-length RDMA WRITE or READ: IBA
 * C9-88 says its R_Key is not validated (Linux rxe and Google's
 * rdma-unit-test agree since 2022; UCX's endpoint flush is a zero-length
 * WRITE with R_Key 0).
 */
#ifndef SIB_MEMREG_MEMREG_H
#define SIB_MEMREG_MEMREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Access rights: the same values as IBV_ACCESS_* (the provider asserts it). */
enum {
	MEMREG_ACCESS_LOCAL_WRITE = 1 << 0,
	MEMREG_ACCESS_REMOTE_WRITE = 1 << 1,
	MEMREG_ACCESS_REMOTE_READ = 1 << 2,
	MEMREG_ACCESS_REMOTE_ATOMIC = 1 << 3,
	MEMREG_ACCESS_MW_BIND = 1 << 4,
	MEMREG_ACCESS_ZERO_BASED = 1 << 5,
	MEMREG_ACCESS_ON_DEMAND = 1 << 6,
	MEMREG_ACCESS_HUGETLB = 1 << 7, /* a hint that pages are huge: nothing to do here */
	/* IBA 1.5 FLUSH targets (IBV_ACCESS_FLUSH_GLOBAL / _PERSISTENT, rdma-core 45) */
	MEMREG_ACCESS_FLUSH_GLOBAL = 1 << 8,
	MEMREG_ACCESS_FLUSH_PERSISTENT = 1 << 9,
};

/* What memreg_mr_rereg changes: the same values as IBV_REREG_MR_CHANGE_*. */
enum {
	MEMREG_REREG_TRANSLATION = 1 << 0,
	MEMREG_REREG_PD = 1 << 1,
	MEMREG_REREG_ACCESS = 1 << 2,
};

enum memreg_mw_type {
	MEMREG_MW_TYPE_1 = 1,
	MEMREG_MW_TYPE_2 = 2, /* behaves as IBA type 2B: bound to one QP */
};

#define MEMREG_KEY_INDEX(key) ((key) >> 8)
#define MEMREG_KEY_KEY8(key) ((key)&0xffu)
#define MEMREG_KEY(index, key8) (((uint32_t)(index) << 8) | ((key8)&0xffu))
#define MEMREG_MAX_INDEX 0xffffffu

/*
 * Why an access, bind or invalidation was refused.  The transport maps them
 * to completion statuses (remote: NAK access error, local: LOC_PROT_ERR,
 * bind: MW_BIND_ERR); memreg_verdict_str() names the rule for the log line.
 */
enum memreg_verdict {
	MEMREG_OK = 0,
	MEMREG_NO_KEY,          /* index unused or beyond the table */
	MEMREG_STALE_KEY,       /* index in use, but key8 differs */
	MEMREG_WINDOW_AS_LKEY,  /* an MW R_Key in a local SGE: windows are remote-only */
	MEMREG_WINDOW_UNBOUND,  /* MW allocated but not bound, or invalidated */
	MEMREG_WINDOW_OTHER_QP, /* type 2 MW bound to another QP (IBA 10.6.7) */
	MEMREG_WRONG_PD,        /* region's PD is not the QP's PD */
	MEMREG_OUT_OF_BOUNDS,   /* [va, va+len) not inside the region */
	MEMREG_NO_RIGHT,        /* region lacks an access right the operation needs */
	MEMREG_NOT_MAPPED,      /* on-demand region: no page mapped there (memreg/odp.c) */
	/* bind (IBA 10.6.7) */
	MEMREG_BIND_NOT_WINDOW,      /* the key to bind is not a window */
	MEMREG_BIND_WRONG_VERB,      /* type 2 is bound by a bind WR, not ibv_bind_mw */
	MEMREG_BIND_TYPE2_BOUND,     /* type 2 bind needs a free (invalid) window */
	MEMREG_BIND_TYPE2_EMPTY,     /* type 2 bind of zero length (IBA o10-37.2.40) */
	MEMREG_BIND_NO_MR,           /* the MR's L_Key is not a valid MR */
	MEMREG_BIND_MR_NO_MW_BIND,   /* MR registered without MW_BIND */
	MEMREG_BIND_OUTSIDE_MR,      /* window not inside the MR */
	MEMREG_BIND_NEEDS_LOCAL_WRITE, /* remote write/atomic on MR without LOCAL_WRITE */
	MEMREG_BIND_BAD_ACCESS,      /* unknown window access bits */
	MEMREG_BIND_WRONG_PD,        /* MW, MR and QP not in one PD */
	/* invalidate (IBA 10.6.7) */
	MEMREG_INV_NOT_TYPE2,        /* only type 2 windows can be invalidated */
	MEMREG_INV_WRONG_PD,         /* local invalidate: MW not in the QP's PD */
	MEMREG_INV_OTHER_QP,         /* remote invalidate from a QP the MW is not bound to */
	MEMREG_VERDICT_COUNT
};

/* A short phrase naming the rule, e.g. "rkey index not in use". */
const char *memreg_verdict_str(enum memreg_verdict v);

struct memreg_table;

/*
 * Limits: at most max_mr regions and max_mw windows at once (ENOMEM past
 * that).  The table grows on demand.  Returns NULL (errno set) on failure.
 */
struct memreg_table *memreg_table_create(uint32_t max_mr, uint32_t max_mw);
/* Frees everything; must not race with any other call on the table. */
void memreg_table_destroy(struct memreg_table *t);

/* Counts currently registered MRs / allocated MWs (for tests and info). */
uint32_t memreg_mr_count(struct memreg_table *t);
uint32_t memreg_mw_count(struct memreg_table *t);

/* ------------------------------------------------------------ MR */

struct memreg_mr_attr {
	void *host;      /* the host address of the first byte */
	uint64_t iova;   /* the address remote and local SGEs use for it (0 if ZERO_BASED) */
	uint64_t length;
	uint32_t access; /* MEMREG_ACCESS_* */
	uint32_t pd;
};

/*
 * Is `access` acceptable for an MR?  0 or EINVAL (REMOTE_WRITE or
 * REMOTE_ATOMIC without LOCAL_WRITE, ibv_reg_mr(3); unknown bits;
 * FLUSH_PERSISTENT: no memory here is persistent, and rxe refuses it for
 * memory that is not pmem the same way).  *rule, if not NULL, names the
 * rule broken.
 */
int memreg_mr_access_valid(uint32_t access, const char **rule);

/*
 * An implicit on-demand MR: ibv_reg_mr(pd, NULL, SIZE_MAX, ON_DEMAND | ...)
 * registers the whole address space, iova == host address (the kernel's
 * mlx5 test: start 0, length U64_MAX; it wants iova 0 too).
 */
static inline bool memreg_mr_implicit(const struct memreg_mr_attr *a)
{
	return !a->host && a->length == UINT64_MAX && (a->access & MEMREG_ACCESS_ON_DEMAND);
}

/*
 * Register: 0 and *key (L_Key == R_Key), or EINVAL (access, see above;
 * host NULL with nonzero length unless implicit; iova + length wraps;
 * implicit with an iova), ENOMEM (limit).
 */
int memreg_mr_register(struct memreg_table *t, const struct memreg_mr_attr *a, uint32_t *key);

/*
 * Reregister (ibv_rereg_mr(3)): flags says which of a->{host,iova,length},
 * a->pd, a->access apply; the others are kept.  The keys stay the same (a
 * peer holding the R_Key sees the new attributes, as pyverbs expects).
 * 0, EINVAL (no such MR, flags 0 or unknown, bad access), EBUSY (windows are
 * bound to it: IBA 10.6.7 forbids changing an MR under bound windows).  On
 * failure the MR is unchanged.
 */
int memreg_mr_rereg(struct memreg_table *t, uint32_t key, unsigned flags,
		    const struct memreg_mr_attr *a);

/*
 * Deregister: 0, EINVAL (no such MR), EBUSY (a memory window is still bound
 * to it: ibv_dereg_mr(3) and ibv_alloc_mw(3) NOTES).  Waits for holds.
 */
int memreg_mr_deregister(struct memreg_table *t, uint32_t key);

/* Current attributes of an MR: 0 or EINVAL. */
int memreg_mr_query(struct memreg_table *t, uint32_t key, struct memreg_mr_attr *out);

/* ------------------------------------------------------------ MW */

/* Allocate an unbound window: 0 and *rkey, EINVAL (type not 1 or 2), ENOMEM. */
int memreg_mw_alloc(struct memreg_table *t, uint32_t pd, unsigned type, uint32_t *rkey);

/*
 * Deallocate (unbinding it first): 0 or EINVAL (no such window).  Windows
 * are named by the index of rkey only (here, in bind and in query): a type 2
 * bind changes key8 behind the ibv_mw object's back.
 */
int memreg_mw_dealloc(struct memreg_table *t, uint32_t rkey);

/* A bind request: ibv_bind_mw (type 1) or an IBV_WR_BIND_MW (type 2). */
struct memreg_bind {
	uint32_t mw_rkey;  /* the window's current R_Key */
	uint32_t new_rkey; /* R_Key after the bind: same index, consumer's key8 */
	uint32_t mr_lkey;  /* the MR to bind to */
	uint64_t addr;     /* window start, in the MR's address space */
	uint64_t length;   /* 0 on type 1 = unbind */
	uint32_t access;   /* MEMREG_ACCESS_REMOTE_* | ZERO_BASED (LOCAL_WRITE/MW_BIND ignored) */
	uint32_t qpn;      /* the QP the bind is posted on */
	uint32_t pd;       /* that QP's PD */
	bool by_wr;        /* a bind WR (any type), not ibv_bind_mw itself (type 1 only) */
};

/*
 * Bind or (type 1, length 0) unbind a window.  On MEMREG_OK the window's
 * R_Key is new_rkey.  On any refusal nothing changes.
 */
enum memreg_verdict memreg_mw_bind(struct memreg_table *t, const struct memreg_bind *b);

/*
 * Invalidate a type 2 window: LOCAL_INV (remote false: the MW must be in
 * the QP's PD) or SEND_WITH_INV arriving on QP qpn (remote true: the MW must
 * be bound to that QP).
 */
enum memreg_verdict memreg_mw_invalidate(struct memreg_table *t, uint32_t rkey, bool remote,
					 uint32_t qpn, uint32_t pd);

/* Query a window: 0 or EINVAL.  *bound false when invalid. */
int memreg_mw_query(struct memreg_table *t, uint32_t rkey, unsigned *type, uint32_t *pd,
		    bool *bound);

/* ------------------------------------------------------------ the check */

struct memreg_request {
	uint32_t key;    /* L_Key (remote false) or R_Key (remote true) */
	bool remote;     /* an R_Key from a packet, or an L_Key from a local SGE */
	uint32_t pd;     /* the PD of the QP doing the access */
	uint32_t qpn;    /* that QP (type 2 windows are bound to one QP) */
	uint64_t va;     /* address in the region's space (offset if ZERO_BASED) */
	uint64_t len;
	uint32_t access; /* rights needed: 0 = local read; REMOTE_* for remote */
};

struct memreg_grant {
	uint8_t *host; /* host address of va, valid for len bytes while held */
	/* on refusal, the region's range and rights, for memreg_explain() */
	uint64_t lo, hi;
	uint32_t have;
	bool on_demand; /* the region is ODP: copy with memreg_grant_read/_write */
	/* private */
	void *held[2];
};

/*
 * The access check.  MEMREG_OK: grant->host is set and the region is held
 * until memreg_release(t, grant).  Otherwise nothing is held.
 */
enum memreg_verdict memreg_check(struct memreg_table *t, const struct memreg_request *req,
				 struct memreg_grant *grant);
void memreg_release(struct memreg_table *t, struct memreg_grant *grant);

/* ------------------------------------------------------------ ODP */

/* The fault-safe paths (memreg/odp.c): MEMREG_OK or MEMREG_NOT_MAPPED. */
enum memreg_verdict memreg_odp_read(const uint8_t *src, void *dst, size_t n);
enum memreg_verdict memreg_odp_write(uint8_t *dst, const void *src, size_t n);
enum memreg_verdict memreg_odp_fault_in(const uint8_t *addr, size_t n, bool write);

/*
 * Bytes [off, off + n) of a held grant, to dst or from src.  A region
 * that is not on demand is registered memory the application promised to
 * keep mapped (what pinning guarantees on hardware): a plain memcpy, no
 * system call.  An ODP region promised nothing, so its copy must be able
 * to fail, and pays a system call for it.
 */
static inline enum memreg_verdict memreg_grant_read(const struct memreg_grant *g, uint64_t off,
						    void *dst, size_t n)
{
	if (g->on_demand)
		return memreg_odp_read(g->host + off, dst, n);
	memcpy(dst, g->host + off, n);
	return MEMREG_OK;
}

static inline enum memreg_verdict memreg_grant_write(const struct memreg_grant *g, uint64_t off,
						     const void *src, size_t n)
{
	if (g->on_demand)
		return memreg_odp_write(g->host + off, src, n);
	memcpy(g->host + off, src, n);
	return MEMREG_OK;
}

/*
 * Makes the n bytes at the grant's host address safe to touch in place
 * (an atomic, a payload sent from where it lies): an ODP region's pages
 * are faulted in, for writing if write, as an HCA's page fault would.
 */
static inline enum memreg_verdict memreg_grant_fault_in(const struct memreg_grant *g, size_t n,
							bool write)
{
	return g->on_demand ? memreg_odp_fault_in(g->host, n, write) : MEMREG_OK;
}

/*
 * A log line body for a refusal, e.g.
 * "rkey 0x000123: va 0x1000 len 64 outside [0x2000, 0x3000)".
 * Returns what snprintf returns.
 */
int memreg_explain(const struct memreg_request *req, enum memreg_verdict v,
		   const struct memreg_grant *grant, char *buf, size_t size);

#endif

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Breaks the MR and MW rules through the public verbs and checks each
 * rejection's return value and errno.  The integration test runs it under
 * `softib run` and checks that each rejection also logged its rule.
 * Exit 0 if every check held.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/verbs_abi.h"

static int failures;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	fflush(stdout);
	if (!ok)
		failures++;
}

/*
 * The device list comes from the interposer that `softib run` preloads.
 * Helpers are linked with the provider archive, so naming
 * ibv_get_device_list here would link a second, partial copy of the
 * interposer into this program; look it up at run time instead.
 */
static struct ibv_context *open_softib(void)
{
	struct ibv_device **(*get_list)(int *) = dlsym(RTLD_DEFAULT, "ibv_get_device_list");
	void (*free_list)(struct ibv_device **) = dlsym(RTLD_DEFAULT, "ibv_free_device_list");
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	if (!get_list || !free_list)
		return NULL;
	list = get_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "softib0"))
			ctx = ibv_open_device(list[i]);
	free_list(list);
	return ctx;
}

static void check_mr_rules(struct ibv_pd *pd, char *buf, size_t len)
{
	struct ibv_mr *mr;
	int rc;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_WRITE);
	expect(!mr && errno == EINVAL, "reg_mr REMOTE_WRITE without LOCAL_WRITE fails with EINVAL");
	errno = 0;
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ);
	expect(!mr && errno == EINVAL,
	       "reg_mr REMOTE_ATOMIC without LOCAL_WRITE fails with EINVAL");

	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	expect(mr && mr->lkey == mr->rkey && (mr->lkey >> 8) != 0,
	       "reg_mr LOCAL_WRITE|REMOTE_WRITE works, lkey == rkey, index != 0");
	if (!mr)
		return;

	rc = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	expect(rc != 0, "rereg_mr with no flags fails");
	rc = ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0);
	expect(rc == IBV_REREG_MR_ERR_INPUT, "rereg_mr with an unknown flag gives ERR_INPUT");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, (struct ibv_pd *)0x1, NULL, 0,
			  IBV_ACCESS_REMOTE_WRITE);
	expect(rc != 0, "rereg_mr to REMOTE_WRITE without LOCAL_WRITE fails");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, (struct ibv_pd *)0x1, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE);
	expect(rc == 0, "rereg_mr CHANGE_ACCESS ignores a garbage pd");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf + 64, len - 64, 0);
	expect(rc == 0 && mr->addr == buf + 64 && mr->length == len - 64,
	       "rereg_mr CHANGE_TRANSLATION moves the MR");

	rc = ibv_dealloc_pd(pd);
	expect(rc == EBUSY, "dealloc_pd with a registered MR fails with EBUSY");

	/* A struct verbs_mr that names no registered MR: a copy, not an MR
	 * this device made, refused as an unknown handle is (ENOENT). */
	struct verbs_mr bogus;

	memcpy(&bogus, verbs_get_mr(mr), sizeof(bogus));
	bogus.ibv_mr.lkey ^= 0x55;
	bogus.ibv_mr.rkey = bogus.ibv_mr.lkey;
	rc = ibv_dereg_mr(&bogus.ibv_mr);
	expect(rc == ENOENT, "dereg_mr of an MR that is not registered fails with ENOENT");
	rc = ibv_dereg_mr(mr);
	expect(rc == 0, "dereg_mr of the real MR works");
}

static void check_mw_rules(struct ibv_pd *pd)
{
	struct ibv_mw *mw;

	errno = 0;
	mw = ibv_alloc_mw(pd, (enum ibv_mw_type)3);
	expect(!mw && errno == EINVAL, "alloc_mw type 3 fails with EINVAL");
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	expect(mw != NULL, "alloc_mw type 1 works");
	if (mw)
		expect(ibv_dealloc_mw(mw) == 0, "dealloc_mw type 1 works");
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	expect(mw != NULL, "alloc_mw type 2 works");
	if (mw)
		expect(ibv_dealloc_mw(mw) == 0, "dealloc_mw type 2 works");
}

/* ibv_advise_mr(3)'s errnos, each SGE against its MR. */
static void check_advise_rules(struct ibv_pd *pd, struct ibv_mr *odp, struct ibv_mr *plain)
{
	const uint32_t sync = IBV_ADVISE_MR_FLAG_FLUSH;
	struct ibv_sge sge = { .addr = (uintptr_t)odp->addr, .length = 64, .lkey = odp->lkey };
	struct ibv_sge bad = sge;

	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, sync, &sge, 1) == 0,
	       "advise_mr PREFETCH of an ODP MR works");
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sge, 1) == 0,
	       "advise_mr PREFETCH_WRITE (asynchronous) works");
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, sync, &sge, 1) == 0,
	       "advise_mr PREFETCH_NO_FAULT works");
	expect(ibv_advise_mr(pd, (enum ibv_advise_mr_advice)7, sync, &sge, 1) == EOPNOTSUPP,
	       "advise_mr with an unknown advice fails with EOPNOTSUPP");
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1u << 5, &sge, 1) == EINVAL,
	       "advise_mr with an unknown flag fails with EINVAL");
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, sync, &sge, 0) == EINVAL,
	       "advise_mr with no SGE fails with EINVAL");
	bad.lkey ^= 0x100;
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, sync, &bad, 1) == EFAULT,
	       "advise_mr with an invalid lkey fails with EFAULT");
	bad = sge;
	bad.addr += odp->length;
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, sync, &bad, 1) == EFAULT,
	       "advise_mr past the MR's end fails with EFAULT");
	bad = sge;
	bad.lkey = plain->lkey;
	bad.addr = (uintptr_t)plain->addr;
	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, sync, &bad, 1) == EINVAL,
	       "advise_mr of an MR that is not ODP fails with EINVAL (as mlx5)");
}

/* The rules of ODP registration, and prefetch through an implicit MR. */
static void check_odp_rules(struct ibv_pd *pd, char *buf, size_t len)
{
	const int odp = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, odp);
	struct ibv_mr *ro = ibv_reg_mr(pd, buf, len, IBV_ACCESS_ON_DEMAND);
	struct ibv_mr *plain = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *imr;

	expect(mr && ro && plain, "reg_mr ON_DEMAND works (ODP)");
	if (!mr || !ro || !plain)
		return;
	check_advise_rules(pd, mr, plain);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = ro->lkey };

	expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
			     &sge, 1) == EPERM,
	       "advise_mr PREFETCH_WRITE of an MR without LOCAL_WRITE fails with EPERM");
	errno = 0;
	expect(!ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
	       "reg_mr NULL, SIZE_MAX without ON_DEMAND fails with EINVAL");
	errno = 0;
	expect(!ibv_reg_mr_iova(pd, NULL, SIZE_MAX, 0x1000, odp) && errno == EINVAL,
	       "reg_mr of an implicit ODP MR at an iova fails with EINVAL");
	imr = ibv_reg_mr(pd, NULL, SIZE_MAX, odp);
	expect(imr && imr->length == SIZE_MAX, "reg_mr NULL, SIZE_MAX, ON_DEMAND (implicit) works");
	if (imr) {
		sge.lkey = imr->lkey;
		expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) == 0,
		       "advise_mr through the implicit MR works");
		sge.addr = 0x1000; /* page 1: never mapped */
		expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
				     &sge, 1) == EFAULT,
		       "synchronous advise_mr of an unmapped page fails with EFAULT");
		expect(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1) == 0,
		       "asynchronous advise_mr of an unmapped page is 0 (a hint, as mlx5)");
		expect(ibv_dereg_mr(imr) == 0, "dereg_mr of the implicit MR works");
	}
	ibv_dereg_mr(plain);
	ibv_dereg_mr(ro);
	ibv_dereg_mr(mr);
}

int main(void)
{
	struct ibv_context *ctx = open_softib();
	struct ibv_pd *pd;
	size_t len = 8192;
	char *buf = malloc(len);

	if (!ctx) {
		fprintf(stderr, "verbs_mr_rules: no softib0 (run under softib run)\n");
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd || !buf) {
		fprintf(stderr, "verbs_mr_rules: alloc_pd failed\n");
		return 2;
	}
	check_mr_rules(pd, buf, len);
	check_odp_rules(pd, buf, len);
	check_mw_rules(pd);
	expect(ibv_dealloc_pd(pd) == 0, "dealloc_pd once everything is gone works");
	ibv_close_device(ctx);
	free(buf);
	printf("verbs_mr_rules: %d failed\n", failures);
	return failures ? 1 : 0;
}

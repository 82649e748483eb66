/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Breaks the MR and MW rules through the public verbs and checks each
 * rejection's return value and errno.  The integration test runs it under
 * `softib run` and checks that each rejection also logged its rule.
 * Exit 0 if every check held.
 */
#include <dlfcn.h>
#include <errno.h>
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
	errno = 0;
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	expect(!mr && errno == EOPNOTSUPP, "reg_mr ON_DEMAND fails with EOPNOTSUPP (no ODP)");

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
	check_mw_rules(pd);
	expect(ibv_dealloc_pd(pd) == 0, "dealloc_pd once everything is gone works");
	ibv_close_device(ctx);
	free(buf);
	printf("verbs_mr_rules: %d failed\n", failures);
	return failures ? 1 : 0;
}

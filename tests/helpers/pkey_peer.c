/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One port of the partitions test (test_partitions.sh): a UD QP on the
 * P_Key the subnet manager gave this port, datagrams to every other peer,
 * and a check of who got through (IBA 10.9.3: P_Keys match when their low
 * 15 bits are equal and one of the two is a full member).  Run as
 *	pkey_peer DIR ROLE PKEY FROM VIOLATIONS
 * ROLE is a letter; DIR is shared by the peers (files ROLE.guid,
 * ROLE.addr, ROLE.done).  The peer writes its port GUID, waits until its
 * P_Key table holds PKEY (the test rewrites the partitions and the SM sets
 * the tables), makes its QP, then sends its letter to every peer every
 * 50 ms until all are done.  It is done once it received from exactly the
 * peers in FROM (any other is a failure at once) and its port counted at
 * least VIOLATIONS bad P_Keys (ibv_query_port bad_pkey_cntr): the
 * datagrams that must not pass were sent, arrived and were dropped.
 * Prints "ROLE received from FROM, bad_pkey_cntr N"; exit 0, 1, or 77
 * when softib0 is not visible.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include "verbs_open.h"

#define QKEY 0x11u
#define NRECV 64
#define LIMIT_S 90
#define MAXPEERS 8

static const char *dir;
static char role;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	fprintf(stderr, "%c: %s (%s)\n", role, what, strerror(errno));
	exit(1);
}

static void put(const char *ext, const char *text)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%c.%s", dir, role, ext);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		fail("writing a step file");
}

static bool get(char who, const char *ext, char *buf, size_t len)
{
	char path[512];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/%c.%s", dir, who, ext);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok;
}

int main(int argc, char **argv)
{
	static uint8_t rbuf[NRECV][40 + 8], sbuf[8];
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	union ibv_gid gid;
	char got[MAXPEERS + 1] = "", line[128];
	uint16_t want;
	uint32_t qpns[MAXPEERS];
	struct ibv_ah *ahs[MAXPEERS];
	unsigned long violations;
	int pkey_index = -1, npeers = 0;
	double t0;

	if (argc != 6 || strlen(argv[2]) != 1) {
		fprintf(stderr, "usage: pkey_peer DIR ROLE PKEY FROM VIOLATIONS\n");
		return 2;
	}
	dir = argv[1];
	role = argv[2][0];
	want = (uint16_t)strtoul(argv[3], NULL, 0);
	violations = strtoul(argv[5], NULL, 0);
	ctx = verbs_open_softib0();
	if (!ctx)
		return 77;
	t0 = now_s();
	while (ibv_query_port(ctx, 1, &pa) || pa.state != IBV_PORT_ACTIVE || !pa.lid) {
		if (now_s() - t0 > LIMIT_S)
			fail("the port never became ACTIVE");
		usleep(10000);
	}
	if (ibv_query_gid(ctx, 1, 0, &gid))
		fail("ibv_query_gid");
	snprintf(line, sizeof(line), "0x%02x%02x%02x%02x%02x%02x%02x%02x\n", gid.raw[8], gid.raw[9],
		 gid.raw[10], gid.raw[11], gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15]);
	put("guid", line);
	/* The SM sets the table once the test has written the partitions. */
	while (pkey_index < 0) {
		for (int i = 0; i < 16 && pkey_index < 0; i++) {
			__be16 pk;

			if (!ibv_query_pkey(ctx, 1, i, &pk) && be16toh(pk) == want)
				pkey_index = i;
		}
		if (pkey_index < 0 && now_s() - t0 > LIMIT_S) {
			errno = 0;
			fail("the P_Key never appeared in the table");
		}
		usleep(10000);
	}
	printf("%c: P_Key 0x%04x at index %d\n", role, want, pkey_index);
	fflush(stdout);

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * NRECV, NULL, NULL, 0);
	struct ibv_mr *rmr = pd ? ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *smr = pd ? ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 64, .max_recv_wr = NRECV,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = cq && rmr && smr ? ibv_create_qp(pd, &qa) : NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = (uint16_t)pkey_index,
				 .port_num = 1, .qkey = QKEY };

	if (!qp)
		fail("verbs objects");
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		fail("INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		fail("RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fail("RTS");
	for (int k = 0; k < NRECV; k++) {
		struct ibv_sge sge = { .addr = (uintptr_t)rbuf[k], .length = sizeof(rbuf[k]),
				       .lkey = rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			fail("post_recv");
	}
	snprintf(line, sizeof(line), "%u %u\n", pa.lid, qp->qp_num);
	put("addr", line);

	/* The peers: every ROLE.addr in DIR once all have written (the
	 * test names them in $PEERS, passed through the environment). */
	const char *all = getenv("PKEY_PEERS");

	if (!all || strlen(all) > MAXPEERS)
		fail("PKEY_PEERS names the peers");
	for (const char *w = all; *w; w++) {
		unsigned lid, qpn;

		while (!get(*w, "addr", line, sizeof(line)) || sscanf(line, "%u %u", &lid, &qpn) != 2) {
			if (now_s() - t0 > LIMIT_S)
				fail("a peer never wrote its address");
			usleep(10000);
		}
		if (*w == role)
			continue;
		struct ibv_ah_attr aa = { .dlid = (uint16_t)lid, .port_num = 1 };

		ahs[npeers] = ibv_create_ah(pd, &aa);
		if (!ahs[npeers])
			fail("create_ah");
		qpns[npeers++] = qpn;
	}

	memset(sbuf, role, sizeof(sbuf));
	double last = 0;
	bool done = false;

	for (;;) {
		struct ibv_wc wc;
		int alldone = 1;

		if (now_s() - last > 0.05) {
			for (int i = 0; i < npeers; i++) {
				struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = sizeof(sbuf),
						       .lkey = smr->lkey };
				struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
							  .opcode = IBV_WR_SEND },
						   *bad;

				wr.wr.ud.ah = ahs[i];
				wr.wr.ud.remote_qpn = qpns[i];
				wr.wr.ud.remote_qkey = QKEY;
				if (ibv_post_send(qp, &wr, &bad))
					fail("post_send");
			}
			last = now_s();
		}
		while (ibv_poll_cq(cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "%c: completion %s\n", role,
					ibv_wc_status_str(wc.status));
				return 1;
			}
			if (wc.opcode != IBV_WC_RECV)
				continue;
			char from = (char)rbuf[wc.wr_id][40];
			struct ibv_sge sge = { .addr = (uintptr_t)rbuf[wc.wr_id],
					       .length = sizeof(rbuf[0]), .lkey = rmr->lkey };
			struct ibv_recv_wr wr = { .wr_id = wc.wr_id, .sg_list = &sge, .num_sge = 1 },
					   *bad;

			if (ibv_post_recv(qp, &wr, &bad))
				fail("post_recv");
			if (!strchr(argv[4], from)) {
				printf("%c got a datagram from %c, which its partitions forbid\n",
				       role, from);
				return 1;
			}
			if (!strchr(got, from))
				got[strlen(got)] = from;
		}
		if (!done && strlen(got) == strlen(argv[4]) && !ibv_query_port(ctx, 1, &pa) &&
		    pa.bad_pkey_cntr >= violations) {
			done = true;
			put("done", "done\n");
		}
		for (const char *w = all; *w; w++)
			alldone &= get(*w, "done", line, sizeof(line));
		if (alldone)
			break;
		if (now_s() - t0 > LIMIT_S) {
			ibv_query_port(ctx, 1, &pa);
			printf("%c: not done: received from '%s' (want '%s'), bad_pkey_cntr %u "
			       "(want >= %lu)\n",
			       role, got, argv[4], pa.bad_pkey_cntr, violations);
			return 1;
		}
		usleep(2000);
	}
	ibv_query_port(ctx, 1, &pa);
	/* sorted, so the line reads the same whatever the arrival order */
	for (size_t i = 0; got[i]; i++)
		for (size_t j = i + 1; got[j]; j++)
			if (got[j] < got[i]) {
				char t = got[i];

				got[i] = got[j];
				got[j] = t;
			}
	printf("%c received from %s, bad_pkey_cntr %u\n", role, *got ? got : "nobody",
	       pa.bad_pkey_cntr);
	return 0;
}

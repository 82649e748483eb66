/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Three processes in one multicast group, through librdmacm
 * (rdma_join_multicast / rdma_leave_multicast) and UD verbs: who receives
 * what as members join, send, leave and rejoin.  Run as
 *	mcast_members ROLE DIR GROUP_IP BIND_IP
 * with ROLE A, B and C at once; DIR is a directory the three share for
 * their steps (a file per role and step).  The script:
 *	1. A, B, C join; A sends "1": A (its own copy), B and C get it;
 *	2. C leaves; A sends "2": A and B get it, C does not;
 *	3. C joins again; B sends "3": A, B and C get it.
 * A sender sends its message again every 20 ms until everyone who must
 * have it says so (a file), so a datagram lost on a loaded machine only
 * delays the step; a member that must not get a message never does,
 * because its QP is not attached then.  Each process prints
 *	ROLE received: TAGS
 * (the distinct tags it got, in order) and exits 0 when that is what its
 * role must get, 1 otherwise, 77 when softib0 or the group is not there.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define NRECV 32
#define MSG 16
#define STEP_LIMIT_S 60

static char role;
static const char *dir;
static struct rdma_event_channel *ch;
static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static struct ibv_ah *ah;
static uint32_t remote_qpn, remote_qkey;
static struct sockaddr_storage group;
static struct {
	uint8_t recv[NRECV][40 + MSG];
	uint8_t send[MSG];
} mem;
#define bufs mem.recv
#define sbuf mem.send
static char got[8];
static unsigned ngot;

static void die(const char *what)
{
	fprintf(stderr, "%c: %s: %s\n", role, what, strerror(errno));
	exit(1);
}

static void mark(const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.%c", dir, name, role);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		die("mark");
	close(fd);
}

static int marked(const char *name, char who)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.%c", dir, name, who);
	return access(path, F_OK) == 0;
}

static void post_recv(int k)
{
	struct ibv_sge sge = { .addr = (uintptr_t)bufs[k], .length = sizeof(bufs[k]),
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(id->qp, &wr, &bad))
		die("ibv_post_recv");
}

/* Takes what arrived: a new tag is recorded and said with a "got" file. */
static void pump(void)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(cq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "%c: completion %s\n", role, ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;
		char tag = (char)bufs[wc.wr_id][40];

		post_recv((int)wc.wr_id);
		if (!memchr(got, tag, ngot) && ngot < sizeof(got) - 1) {
			char name[8] = { 'g', 'o', 't', tag, 0 };

			got[ngot++] = tag;
			mark(name);
		}
	}
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Every role in who has marked name; receives meanwhile. */
static void wait_for(const char *name, const char *who)
{
	double t0 = now_s();

	for (;;) {
		int all = 1;

		pump();
		for (const char *w = who; *w; w++)
			all &= marked(name, *w);
		if (all)
			return;
		if (now_s() - t0 > STEP_LIMIT_S) {
			fprintf(stderr, "%c: nobody said %s (%s) in %d s\n", role, name, who,
				STEP_LIMIT_S);
			exit(1);
		}
		usleep(2000);
	}
}

static void barrier(const char *name)
{
	mark(name);
	wait_for(name, "ABC");
}

static struct rdma_cm_event *expect_event(enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != type) {
		fprintf(stderr, "%c: event %s (status %d), expected %s\n", role,
			rdma_event_str(ev->event), ev->status, rdma_event_str(type));
		exit(ev->event == RDMA_CM_EVENT_ADDR_ERROR ? 77 : 1);
	}
	return ev;
}

static void join(void)
{
	struct rdma_cm_event *ev;

	if (rdma_join_multicast(id, (struct sockaddr *)&group, NULL))
		die("rdma_join_multicast");
	ev = expect_event(RDMA_CM_EVENT_MULTICAST_JOIN);
	remote_qpn = ev->param.ud.qp_num;
	remote_qkey = ev->param.ud.qkey;
	if (!ah)
		ah = ibv_create_ah(pd, &ev->param.ud.ah_attr);
	if (!ah)
		die("ibv_create_ah");
	printf("%c joined: MLID 0x%04x QPN 0x%06x\n", role, ev->param.ud.ah_attr.dlid, remote_qpn);
	fflush(stdout);
	rdma_ack_cm_event(ev);
}

/* Sends tag until every role in who got it. */
static void send_until(char tag, const char *who)
{
	char name[8] = { 'g', 'o', 't', tag, 0 };
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = MSG, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	double t0 = now_s(), last = 0;

	memset(sbuf, tag, sizeof(sbuf));
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = remote_qkey;
	for (;;) {
		int all = 1;

		if (now_s() - last > 0.02) {
			if (ibv_post_send(id->qp, &wr, &bad))
				die("ibv_post_send");
			last = now_s();
		}
		pump();
		for (const char *w = who; *w; w++)
			all &= marked(name, *w);
		if (all)
			return;
		if (now_s() - t0 > STEP_LIMIT_S) {
			fprintf(stderr, "%c: %s did not all get %c\n", role, who, tag);
			exit(1);
		}
		usleep(2000);
	}
}

static void resolve(const char *ip, struct sockaddr_storage *ss)
{
	struct addrinfo *ai, hints = { .ai_flags = AI_NUMERICHOST };

	if (getaddrinfo(ip, NULL, &hints, &ai)) {
		fprintf(stderr, "%c: bad address %s\n", role, ip);
		exit(1);
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage bind_addr;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 64, .max_recv_wr = NRECV,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_cm_event *ev;
	const char *want;

	if (argc != 5 || strlen(argv[1]) != 1 || argv[1][0] < 'A' || argv[1][0] > 'C') {
		fprintf(stderr, "usage: mcast_members A|B|C DIR GROUP_IP BIND_IP\n");
		return 2;
	}
	role = argv[1][0];
	dir = argv[2];
	resolve(argv[3], &group);
	resolve(argv[4], &bind_addr);
	ch = rdma_create_event_channel();
	if (!ch)
		return 77;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_UDP))
		die("rdma_create_id");
	if (rdma_resolve_addr(id, (struct sockaddr *)&bind_addr, (struct sockaddr *)&group, 2000))
		die("rdma_resolve_addr");
	ev = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	pd = ibv_alloc_pd(id->verbs);
	cq = ibv_create_cq(id->verbs, 2 * NRECV + 64, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd/cq");
	qa.send_cq = qa.recv_cq = cq;
	if (rdma_create_qp(id, pd, &qa))
		die("rdma_create_qp");
	mr = ibv_reg_mr(pd, &mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	for (int k = 0; k < NRECV; k++)
		post_recv(k);

	/* 1. All join; A sends "1". */
	join();
	barrier("joined");
	/* With MCAST_MEMBERS_PAUSE set, A waits here for the test's "info.T"
	 * (the test reads A's groups with softib info --pid meanwhile). */
	if (role == 'A' && getenv("MCAST_MEMBERS_PAUSE")) {
		printf("A pid %d attached\n", (int)getpid());
		fflush(stdout);
		wait_for("info", "T");
	}
	if (role == 'A')
		send_until('1', "ABC");
	barrier("step1");
	/* 2. C leaves; A sends "2" to A and B. */
	if (role == 'C') {
		if (rdma_leave_multicast(id, (struct sockaddr *)&group))
			die("rdma_leave_multicast");
		printf("C left\n");
		fflush(stdout);
	}
	barrier("left");
	if (role == 'A')
		send_until('2', "AB");
	barrier("step2");
	/* 3. C joins again; B sends "3" to everyone. */
	if (role == 'C')
		join();
	barrier("rejoined");
	if (role == 'B')
		send_until('3', "ABC");
	barrier("step3");
	pump();

	got[ngot] = 0;
	printf("%c received: %s\n", role, got);
	fflush(stdout);
	want = role == 'C' ? "13" : "123";
	rdma_leave_multicast(id, (struct sockaddr *)&group);
	ibv_destroy_ah(ah);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return strcmp(got, want) ? 1 : 0;
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Many threads, many RC QPs, one shared receive queue, between two
 * processes (tests/integration/test_srq_threads.sh; issue 36 item 8).
 * Run under `softib run`:
 *
 *   srq_threads [THREADS [MESSAGES]]       default 32 threads, 200 each
 *
 * The parent is the server: one SRQ and one CQ behind THREADS RC QPs.  The
 * child is the client: THREADS threads, each with its own QP and CQ, each
 * sending MESSAGES SENDs (up to 16 outstanding) that carry its number and
 * a sequence number.  The server checks that every QP's messages arrive
 * whole and in order (RC delivers a QP's messages in order, IBA 9.7.7) and
 * reposts each receive.  Each side ends by printing its counters (the
 * text `softib info` shows) between "stats begin" and "stats end", for the
 * test to read: without fault injection no packet may fail its CRCs, and
 * no sequence NAK may be sent unless the socket dropped a packet.
 * Exit 0 when every message arrived in order and completed successfully
 * within the time limit (SRQ_THREADS_LIMIT seconds, default 240).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verbs_loopback.h"
#include "verbs_open.h"

enum { MAX_THREADS = 128, SRQ_WR = 512, SLOT = 64, WINDOW = 16 };

struct msg {
	uint32_t thread, seq;
};

struct addr {
	uint16_t lid;
	uint32_t qpn[MAX_THREADS];
};

static unsigned nthreads = 32, nmsgs = 200;
static double limit_s = 240;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int xfer(int fd, void *buf, size_t len, bool out)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = out ? write(fd, (char *)buf + done, len - done)
				: read(fd, (char *)buf + done, len - done);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

static void print_stats(const char *side, struct ibv_context *ctx)
{
	size_t (*text)(struct ibv_context *, char *, size_t) =
		(size_t (*)(struct ibv_context *, char *, size_t))dlsym(RTLD_DEFAULT,
									 "softib_stats_text");
	static char buf[32768];

	if (!text) {
		printf("srq_threads: %s: no softib_stats_text (not under softib run?)\n", side);
		return;
	}
	text(ctx, buf, sizeof(buf));
	printf("stats begin %s\n%sstats end %s\n", side, buf, side);
}

static uint16_t port_lid(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	return ibv_query_port(ctx, 1, &pa) ? 0 : pa.lid;
}

/* ---------------------------------------------------------------- the server */

static int post_srq(struct ibv_srq *srq, struct ibv_mr *mr, char *bufs, unsigned slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(bufs + slot * SLOT), .length = SLOT,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static int server(int fd)
{
	static char bufs[SRQ_WR * SLOT];
	static uint32_t next_seq[MAX_THREADS];
	struct ibv_context *ctx = verbs_open_softib0();
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_WR, .max_sge = 1 } };
	struct ibv_qp *qps[MAX_THREADS];
	struct addr mine = { 0 }, peer;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint64_t total = 0, want = (uint64_t)nthreads * nmsgs;
	double end;
	int rc = 1;

	if (!ctx || !(pd = ibv_alloc_pd(ctx)) || !(cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0)) ||
	    !(srq = ibv_create_srq(pd, &sa)) ||
	    !(mr = ibv_reg_mr(pd, bufs, sizeof(bufs), IBV_ACCESS_LOCAL_WRITE))) {
		printf("srq_threads: server: setup failed: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned s = 0; s < SRQ_WR; s++)
		if (post_srq(srq, mr, bufs, s)) {
			printf("srq_threads: server: post_srq_recv %u failed\n", s);
			return 1;
		}
	for (unsigned i = 0; i < nthreads; i++) {
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
					       .srq = srq,
					       .cap = { .max_send_wr = 1, .max_send_sge = 1 } };

		if (!(qps[i] = ibv_create_qp(pd, &qa))) {
			printf("srq_threads: server: create_qp %u: %s\n", i, strerror(errno));
			return 1;
		}
		mine.qpn[i] = qps[i]->qp_num;
	}
	mine.lid = port_lid(ctx);
	if (xfer(fd, &mine, sizeof(mine), true) || xfer(fd, &peer, sizeof(peer), false))
		return 1;
	for (unsigned i = 0; i < nthreads; i++)
		if (verbs_connect_rc(qps[i], peer.qpn[i], peer.lid, IBV_MTU_1024)) {
			printf("srq_threads: server: connect QP %u failed\n", i);
			return 1;
		}
	if (xfer(fd, &mine, 1, true)) /* connected: the client may send */
		return 1;
	end = now_s() + limit_s;
	while (total < want && now_s() < end) {
		struct ibv_wc wc[32];
		int n = ibv_poll_cq(cq, 32, wc);

		if (n < 0) {
			printf("srq_threads: server: poll_cq failed\n");
			goto out;
		}
		for (int k = 0; k < n; k++) {
			struct msg m;

			if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV) {
				printf("srq_threads: server: completion %s (opcode %d) on QP 0x%x\n",
				       ibv_wc_status_str(wc[k].status), wc[k].opcode, wc[k].qp_num);
				goto out;
			}
			memcpy(&m, bufs + wc[k].wr_id * SLOT, sizeof(m));
			if (wc[k].byte_len != sizeof(m) || m.thread >= nthreads ||
			    wc[k].qp_num != mine.qpn[m.thread] || m.seq != next_seq[m.thread]) {
				printf("srq_threads: server: QP 0x%x got thread %u seq %u (%u bytes), "
				       "expected seq %u: out of order or misdelivered\n",
				       wc[k].qp_num, m.thread, m.seq, wc[k].byte_len,
				       m.thread < nthreads ? next_seq[m.thread] : 0);
				goto out;
			}
			next_seq[m.thread]++;
			total++;
			if (post_srq(srq, mr, bufs, (unsigned)wc[k].wr_id)) {
				printf("srq_threads: server: repost failed\n");
				goto out;
			}
		}
		if (!n)
			sched_yield(); /* the client's threads share these two cores */
	}
	rc = total == want ? 0 : 1;
out:
	printf("srq_threads: server: %" PRIu64 " of %" PRIu64 " messages on %u QPs sharing one SRQ\n",
	       total, want, nthreads);
	if (rc)
		for (unsigned i = 0; i < nthreads; i++)
			if (next_seq[i] != nmsgs)
				printf("srq_threads: server: QP 0x%x (thread %u) stopped at %u of %u\n",
				       mine.qpn[i], i, next_seq[i], nmsgs);
	print_stats("server", ctx);
	return rc;
}

/* ---------------------------------------------------------------- the client */

struct sender {
	pthread_t t;
	unsigned id;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct msg *buf; /* WINDOW slots */
	unsigned done;
	const char *err;
};

static void *send_main(void *arg)
{
	struct sender *s = arg;
	unsigned posted = 0;
	double end = now_s() + limit_s;

	while (s->done < nmsgs && now_s() < end) {
		struct ibv_wc wc[WINDOW];
		int n;

		while (posted < nmsgs && posted - s->done < WINDOW) {
			struct msg *m = &s->buf[posted % WINDOW];
			struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof(*m),
					       .lkey = s->mr->lkey };
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED },
					   *bad;

			m->thread = s->id;
			m->seq = posted;
			if (ibv_post_send(s->qp, &wr, &bad)) {
				s->err = "post_send failed";
				return NULL;
			}
			posted++;
		}
		n = ibv_poll_cq(s->cq, WINDOW, wc);
		if (n < 0) {
			s->err = "poll_cq failed";
			return NULL;
		}
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				s->err = ibv_wc_status_str(wc[k].status);
				return NULL;
			}
			s->done++;
		}
		if (!n)
			sched_yield();
	}
	if (s->done < nmsgs)
		s->err = "time limit";
	return NULL;
}

static int client(int fd)
{
	static struct sender snd[MAX_THREADS];
	static struct msg bufs[MAX_THREADS][WINDOW];
	struct ibv_context *ctx = verbs_open_softib0();
	struct addr mine = { 0 }, peer;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char go;
	int rc = 0;

	if (!ctx || !(pd = ibv_alloc_pd(ctx)) ||
	    !(mr = ibv_reg_mr(pd, bufs, sizeof(bufs), IBV_ACCESS_LOCAL_WRITE))) {
		printf("srq_threads: client: setup failed: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		struct sender *s = &snd[i];
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = WINDOW, .max_recv_wr = 1,
							.max_send_sge = 1, .max_recv_sge = 1 } };

		s->id = i;
		s->mr = mr;
		s->buf = bufs[i];
		if (!(s->cq = ibv_create_cq(ctx, WINDOW, NULL, NULL, 0))) {
			printf("srq_threads: client: create_cq %u: %s\n", i, strerror(errno));
			return 1;
		}
		qa.send_cq = qa.recv_cq = s->cq;
		if (!(s->qp = ibv_create_qp(pd, &qa))) {
			printf("srq_threads: client: create_qp %u: %s\n", i, strerror(errno));
			return 1;
		}
		mine.qpn[i] = s->qp->qp_num;
	}
	mine.lid = port_lid(ctx);
	if (xfer(fd, &peer, sizeof(peer), false) || xfer(fd, &mine, sizeof(mine), true))
		return 1;
	for (unsigned i = 0; i < nthreads; i++)
		if (verbs_connect_rc(snd[i].qp, peer.qpn[i], peer.lid, IBV_MTU_1024)) {
			printf("srq_threads: client: connect QP %u failed\n", i);
			return 1;
		}
	if (xfer(fd, &go, 1, false))
		return 1;
	for (unsigned i = 0; i < nthreads; i++)
		if (pthread_create(&snd[i].t, NULL, send_main, &snd[i])) {
			printf("srq_threads: client: pthread_create failed\n");
			return 1;
		}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(snd[i].t, NULL);
		if (snd[i].err) {
			printf("srq_threads: client: thread %u (QP 0x%x): %s after %u of %u\n", i,
			       snd[i].qp->qp_num, snd[i].err, snd[i].done, nmsgs);
			rc = 1;
		}
	}
	printf("srq_threads: client: %u threads, %s\n", nthreads,
	       rc ? "some did not finish" : "every message completed");
	print_stats("client", ctx);
	return rc;
}

int main(int argc, char **argv)
{
	const char *lim = getenv("SRQ_THREADS_LIMIT");
	int sv[2], status, rc;
	pid_t pid;

	if (argc > 1)
		nthreads = (unsigned)strtoul(argv[1], NULL, 10);
	if (argc > 2)
		nmsgs = (unsigned)strtoul(argv[2], NULL, 10);
	if (lim)
		limit_s = strtod(lim, NULL);
	if (!nthreads || nthreads > MAX_THREADS || !nmsgs || !(limit_s > 0)) {
		fprintf(stderr, "usage: srq_threads [THREADS 1..%d [MESSAGES >0]]\n", MAX_THREADS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Two processes, two HCAs: forked before either opens the device. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		_exit(client(sv[1]));
	}
	close(sv[1]);
	rc = server(sv[0]);
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		rc = 1;
	printf("srq_threads: %s\n", rc ? "FAILED" : "passed");
	return rc;
}

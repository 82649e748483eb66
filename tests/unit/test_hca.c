/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hca/hca and transport/port: GUIDs, GIDs, LIDs, the per-process HCA
 * lifetime and port events; the data path's rules as hca/progress applies
 * them (docs/architecture.md section 6): the receive rule (one reader, a
 * held QP's datagrams applied by its holder), the transmit rule (a polling
 * thread's posts leave with its next poll, or by its lease's end), the
 * waiting rule (the lease, watch mode, a thread waiting for events takes
 * its datagrams); the counters socket (hca/stats_channel). */
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/rundir.h"
#include "hca/hca.h"
#include "link/link.h"
#include "hca/progress.h"
#include "hca/stats_channel.h"
#include "base/log.h"
#include "transport/qp_impl.h"

#include "engine_world.h"
#include "skip.h"

/* ------------------------------------------------------------ what a case holds */

/* An RC QP on the HCA's own engine, with its own CQs. */
struct hca_qp {
	struct sib_hca *h;
	struct sib_cq *scq, *rcq;
	struct sib_qp *qp;
	uint8_t buf[8];
	uint32_t key;
	bool have_key, used;
};

/* Port events, as a listener on the HCA receives them. */
struct recorder {
	struct sib_event_sink sink;
	int n;
	enum sib_event last;
	unsigned port;
	struct sib_hca_listener l;
	struct sib_hca *hca; /* listened to */
};

/* An application thread blocked for a completion event (the waiting rule,
 * docs/architecture.md): sib_progress_wait on a pipe, as ibv_get_cq_event
 * does. */
struct waiter {
	struct sib_hca *h;
	int fd;
	int rc;
};

/*
 * What the running case holds, kept here and not in its stack frame: a
 * failed assertion or a skip leaves that frame at once, and the case's
 * teardown (case_teardown) gives everything back, so that the next case
 * starts without an HCA.  An HCA left behind keeps its QPs, its knobs and
 * its counters socket, and the next case gets it from sib_hca_get.
 */
static struct {
	struct sib_hca *hcas[3]; /* one entry per reference */
	unsigned n_hcas;
	struct hca_qp qps[2];
	struct recorder recorders[2];
	struct waiter waiter;
	pthread_t waiter_thread;
	bool waiting;	/* waiter_thread runs */
	bool pipe_open; /* the waiter's pipe */
	int pipe[2];
} held;

static struct sib_hca *reading_hca; /* whose read lock the case holds */
static struct sib_qp *locked_qp;     /* whose lock the case holds */
static void hca_qp_free(struct hca_qp *q);
static void unlisten(struct recorder *r);
static void waiter_end(void);
static void waiter_close(void);

/* sib_hca_get, the reference held until hca_put or the case's end. */
static struct sib_hca *hca_get(void)
{
	struct sib_hca *h = sib_hca_get();

	assert_non_null(h);
	assert_true(held.n_hcas < sizeof(held.hcas) / sizeof(held.hcas[0]));
	held.hcas[held.n_hcas++] = h;
	return h;
}

static void hca_put(struct sib_hca *h)
{
	for (unsigned i = held.n_hcas; i-- > 0;)
		if (held.hcas[i] == h) {
			held.hcas[i] = held.hcas[--held.n_hcas];
			sib_hca_put(h);
			return;
		}
	fail_msg("hca_put of an HCA the case does not hold");
}

/* Every case's teardown: what the case still holds goes, in the order
 * that lets each part go (the waiter off the HCA, the links, the QPs,
 * then the HCA references). */
static int case_teardown(void **state)
{
	(void)state;
	if (reading_hca) {
		pthread_mutex_unlock(&reading_hca->progress.read_lock);
		reading_hca = NULL;
	}
	if (locked_qp) {
		sib_qp_unlock(locked_qp);
		locked_qp = NULL;
	}
	if (held.waiting)
		waiter_end();
	if (held.pipe_open)
		waiter_close();
	for (unsigned i = 0; i < sizeof(held.recorders) / sizeof(held.recorders[0]); i++)
		if (held.recorders[i].hca)
			unlisten(&held.recorders[i]);
	for (unsigned i = 0; i < held.n_hcas; i++)
		sib_progress_armed(held.hcas[i]);
	for (unsigned i = 0; i < sizeof(held.qps) / sizeof(held.qps[0]); i++)
		if (held.qps[i].used)
			hca_qp_free(&held.qps[i]);
	while (held.n_hcas)
		hca_put(held.hcas[held.n_hcas - 1]);
	return 0;
}

#define HCA_CASE(f) cmocka_unit_test_teardown(f, case_teardown)

static void guid_from_random_is_locally_administered_unicast(void **state)
{
	static const uint64_t inputs[] = { 0, ~0ull, 0x0123456789abcdefull, 0x0100000000000000ull };

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		uint64_t g = sib_guid_from_random(inputs[i]);

		assert_int_equal((g >> 56) & 0x02, 0x02); /* U/L: locally administered */
		assert_int_equal((g >> 56) & 0x01, 0);    /* I/G: not a group address */
		assert_int_equal(g & 0xf, 0);             /* room for port numbers */
		assert_true((g & 0x00fffffffffffff0ull) != 0);
	}
}

static void guid_format_matches_ibv_devinfo(void **state)
{
	char buf[20];

	(void)state;
	sib_guid_format(0x0123456789abcdefull, buf);
	assert_string_equal(buf, "0123:4567:89ab:cdef");
	sib_guid_format(0x0200000000000010ull, buf);
	assert_string_equal(buf, "0200:0000:0000:0010");
}

static void gid_format_is_eight_groups(void **state)
{
	const uint8_t gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x71 };
	char buf[40];

	(void)state;
	sib_gid_format(gid, buf);
	assert_string_equal(buf, "fe80:0000:0000:0000:0211:2233:4455:6671");
}

static void port_init_sets_default_gid_and_pkey(void **state)
{
	struct sib_port port;
	uint8_t gid[16];
	uint16_t pkey;
	const uint8_t want[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				   0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01 };

	(void)state;
	sib_port_init(&port, 1, 0x02aabbccddeeff01ull);
	assert_int_equal(port.state, SIB_PORT_DOWN);
	assert_int_equal(port.LID, 0);
	assert_int_equal(sib_port_gid(&port, 0, gid), 0);
	assert_memory_equal(gid, want, 16);
	assert_int_equal(sib_port_pkey(&port, 0, &pkey), 0);
	assert_int_equal(pkey, 0xffff);
	assert_int_equal(sib_mtu_bytes(port.active_mtu), 4096);
}

static void port_tables_reject_out_of_range_indices(void **state)
{
	struct sib_port port;
	uint8_t gid[16];
	uint16_t pkey;

	(void)state;
	sib_port_init(&port, 1, 0x0200000000000011ull);
	assert_int_equal(sib_port_gid(&port, SIB_GID_TBL_LEN, gid), -1);
	assert_int_equal(sib_port_gid(&port, ~0u, gid), -1);
	assert_int_equal(sib_port_pkey(&port, SIB_MAX_PKEYS, &pkey), -1);
	assert_int_equal(sib_mtu_bytes((enum sib_mtu)0), 0);
	assert_int_equal(sib_mtu_bytes((enum sib_mtu)6), 0);
	assert_int_equal(sib_mtu_bytes(SIB_MTU_256), 256);
}

static void set_lid_activates_once_and_rejects_reserved_lids(void **state)
{
	struct sib_port port;

	(void)state;
	sib_port_init(&port, 1, 0x0200000000000011ull);
	assert_false(sib_port_set_lid(&port, 0, 1));      /* LID 0 is reserved */
	assert_false(sib_port_set_lid(&port, 0xc000, 1)); /* multicast range */
	assert_int_equal(port.state, SIB_PORT_DOWN);
	assert_true(sib_port_set_lid(&port, 7, 1));
	assert_int_equal(port.state, SIB_PORT_ACTIVE);
	assert_int_equal(port.LID, 7);
	assert_false(sib_port_set_lid(&port, 8, 1)); /* already active: no new PORT_ACTIVE */
	assert_int_equal(port.LID, 8);
}

static void local_lid_is_unicast_for_every_pid(void **state)
{
	static const pid_t pids[] = { 0, 1, 0xbffe, 0xbfff, 0xc000, 4194304, 2147483647 };

	(void)state;
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		uint16_t lid = sib_port_local_lid(pids[i]);

		assert_true(lid >= 1 && lid <= 0xbfff);
	}
	assert_int_not_equal(sib_port_local_lid(100), sib_port_local_lid(101));
}

static void hca_is_shared_until_the_last_put(void **state)
{
	struct sib_hca *a, *b, *c;

	(void)state;
	a = hca_get();
	b = hca_get();
	assert_ptr_equal(a, b);
	assert_int_equal(a->refcnt, 2);
	assert_int_equal(a->node.node_guid, sib_node_guid());
	assert_int_equal(a->node.ports[0].port_guid, a->node.node_guid + 1);
	assert_int_equal(a->node.ports[0].state, SIB_PORT_ACTIVE);
	assert_int_equal(a->node.ports[0].LID, sib_port_local_lid(getpid()));
	hca_put(b);
	assert_int_equal(a->refcnt, 1);
	hca_put(a);
	/* A new HCA after the last close: same node (GUID), fresh state. */
	c = hca_get();
	assert_int_equal(c->refcnt, 1);
	assert_int_equal(c->node.node_guid, sib_node_guid());
	hca_put(c);
}

static void hca_port_lookup_rejects_bad_ports(void **state)
{
	struct sib_hca *hca = hca_get();

	(void)state;
	assert_null(sib_hca_port(hca, 0));
	assert_null(sib_hca_port(hca, SIB_NUM_PORTS + 1));
	assert_non_null(sib_hca_port(hca, 1));
	assert_null(sib_hca_port(NULL, 1));
	hca_put(hca);
}

static void record(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port)
{
	struct recorder *r = (struct recorder *)sink;

	(void)obj;
	r->n++;
	r->last = ev;
	r->port = port;
}

/* Recorder i of held.recorders, listening to hca's port events. */
static struct recorder *listen_on(struct sib_hca *hca, unsigned i)
{
	struct recorder *r = &held.recorders[i];

	*r = (struct recorder){ .sink.deliver = record, .hca = hca };
	sib_hca_listen(hca, &r->l, &r->sink);
	return r;
}

static void unlisten(struct recorder *r)
{
	sib_hca_unlisten(r->hca, &r->l);
	r->hca = NULL;
}

static void lid_change_reaches_every_listener_until_unlisten(void **state)
{
	struct sib_hca *hca = hca_get();
	struct recorder *r1 = listen_on(hca, 0), *r2 = listen_on(hca, 1);
	uint16_t lid = hca->node.ports[0].LID;

	(void)state;
	sib_node_port_set_lid(&hca->node, 1, (uint16_t)(lid % 0xbffe + 1), 1);
	assert_int_equal(r1->n, 1);
	assert_int_equal(r1->last, SIB_EV_LID_CHANGE);
	assert_int_equal(r1->port, 1);
	assert_int_equal(r2->n, 1);
	unlisten(r1);
	sib_node_port_set_lid(&hca->node, 1, lid, 1);
	assert_int_equal(r1->n, 1);
	assert_int_equal(r2->n, 2);
	sib_node_port_set_lid(&hca->node, 1, lid, 1); /* same LID: no event */
	assert_int_equal(r2->n, 2);
	unlisten(r2);
	hca_put(hca);
}

static void first_lid_raises_port_active(void **state)
{
	struct sib_hca *hca = hca_get();
	struct recorder *r;

	(void)state;
	/* Model a port that loses its LID and gets one again from the SM. */
	hca->node.ports[0].state = SIB_PORT_DOWN;
	r = listen_on(hca, 0);
	sib_node_port_set_lid(&hca->node, 1, 5, 1);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->last, SIB_EV_PORT_ACTIVE);
	sib_node_port_set_lid(&hca->node, 9, 5, 1); /* no such port: nothing */
	assert_int_equal(r->n, 1);
	unlisten(r);
	hca_put(hca);
}

static void pd_numbers_are_unique_and_nonzero(void **state)
{
	struct sib_hca *hca = hca_get();
	uint32_t a = sib_hca_alloc_pdn(hca), b = sib_hca_alloc_pdn(hca);

	(void)state;
	assert_int_not_equal(a, 0);
	assert_int_not_equal(b, 0);
	assert_int_not_equal(a, b);
	hca_put(hca);
}

static uint64_t lease_end(struct sib_hca *h)
{
	return __atomic_load_n(&h->progress.poll_until, __ATOMIC_RELAXED);
}

/* No lease is in force: none was taken, it was given back, or it ran out
 * (a thread that lost the CPU for a lease lost it). */
static bool no_lease(struct sib_hca *h)
{
	return lease_end(h) <= sib_link_now_ns();
}

/* docs/architecture.md, the waiting rule: a poll holds the links for a
 * lease, whether it found completions or not; the poll of a thread that
 * armed its CQ (about to sleep) holds none, and arming gives the lease
 * back. */
static void polls_hold_the_links_unless_the_poller_is_about_to_sleep(void **state)
{
	struct sib_hca *h = hca_get();
	uint64_t before;

	(void)state;
	sib_progress_armed(h);
	assert_true(no_lease(h));
	sib_progress_polled(h, true, false);
	assert_true(no_lease(h));

	before = sib_link_now_ns();
	sib_progress_polled(h, false, true);
	assert_true(lease_end(h) > before);
	sib_progress_armed(h);
	assert_true(no_lease(h));

	before = sib_link_now_ns();
	sib_progress_polled(h, true, true);
	assert_true(lease_end(h) > before);
	sib_progress_armed(h);
	assert_true(no_lease(h));
	hca_put(h);
}

/* A QP of held.qps on h, in protection domain pd; what is made of it is
 * recorded as it is made, for hca_qp_free. */
static struct hca_qp *hca_qp_new(struct sib_hca *h, uint32_t pd)
{
	const unsigned n = sizeof(held.qps) / sizeof(held.qps[0]);
	struct hca_qp *q;
	unsigned i = 0;
	struct sib_cq_init ci = { .cqe = 16 };
	struct memreg_mr_attr mr = { .access = MEMREG_ACCESS_LOCAL_WRITE, .pd = pd };
	char why[160] = "";
	struct sib_qp_init in = {
		.type = SIB_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.pd = pd,
		.qpns = h->qpns,
		.engine = h->engine,
	};

	while (i < n && held.qps[i].used)
		i++;
	assert_true(i < n);
	q = &held.qps[i];
	memset(q, 0, sizeof(*q));
	q->used = true;
	q->h = h;
	assert_int_equal(sib_cq_create(&ci, &q->scq), 0);
	assert_int_equal(sib_cq_create(&ci, &q->rcq), 0);
	in.send_cq = q->scq;
	in.recv_cq = q->rcq;
	if (sib_qp_create(&in, &q->qp, why, sizeof(why)))
		fail_msg("create_qp: %s", why);
	mr.host = q->buf;
	mr.iova = (uint64_t)(uintptr_t)q->buf;
	mr.length = sizeof(q->buf);
	assert_int_equal(memreg_mr_register(h->memreg, &mr, &q->key), 0);
	q->have_key = true;
	return q;
}

/* Frees what hca_qp_new made of q, however far it got. */
static void hca_qp_free(struct hca_qp *q)
{
	struct hca_qp parts = *q;

	memset(q, 0, sizeof(*q)); /* a failed assertion below frees nothing twice */
	if (parts.qp)
		sib_qp_destroy(parts.qp);
	if (parts.have_key)
		assert_int_equal(memreg_mr_deregister(parts.h->memreg, parts.key), 0);
	if (parts.scq)
		assert_int_equal(sib_cq_destroy(parts.scq), 0);
	if (parts.rcq)
		assert_int_equal(sib_cq_destroy(parts.rcq), 0);
}

/* Connects q to peer, on this HCA's own port (a loopback connection). */
static void hca_qp_connect(struct sib_hca *h, struct hca_qp *q, struct hca_qp *peer)
{
	struct sib_qp_attr a = { 0 };

	a.qp_state = SIB_QPS_INIT;
	a.port_num = 1;
	world_modify(q->qp, &a, SIB_QP_PKEY_INDEX | SIB_QP_PORT | SIB_QP_ACCESS_FLAGS);
	a.qp_state = SIB_QPS_RTR;
	a.ah_attr.DLID = h->node.ports[0].LID;
	a.ah_attr.port_num = 1;
	a.path_mtu = SIB_MTU_1024;
	a.dest_qp_num = sib_qp_num(peer->qp);
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	world_modify(q->qp, &a,
		     SIB_QP_AV | SIB_QP_PATH_MTU | SIB_QP_DEST_QPN | SIB_QP_RQ_PSN |
			     SIB_QP_MAX_DEST_RD_ATOMIC | SIB_QP_MIN_RNR_TIMER);
	a.qp_state = SIB_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = 0; /* no retransmit timer: its tick sends what is owed */
	a.retry_cnt = 3;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	world_modify(q->qp, &a,
		     SIB_QP_SQ_PSN | SIB_QP_TIMEOUT | SIB_QP_RETRY_CNT | SIB_QP_RNR_RETRY |
			     SIB_QP_MAX_QP_RD_ATOMIC);
}

static void hca_qp_recv(struct hca_qp *q)
{
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)q->buf, .length = sizeof(q->buf), .lkey = q->key };
	char why[160] = "";

	if (sib_qp_post_recv(q->qp, 1, &sge, 1, why, sizeof(why)))
		fail_msg("post_recv: %s", why);
}

/* A signaled 8-byte SEND, posted as the provider posts (sib_progress_post). */
static void hca_qp_send(struct sib_hca *h, struct hca_qp *q)
{
	struct sib_sge sge = { .addr = (uint64_t)(uintptr_t)q->buf, .length = sizeof(q->buf), .lkey = q->key };
	struct sib_send_wqe w = { .wr_id = 2, .opcode = SIB_WR_SEND, .send_flags = SIB_SEND_SIGNALED,
				  .num_sge = 1 };
	char why[160] = "";

	if (sib_qp_post_send(q->qp, &w, &sge, why, sizeof(why)))
		fail_msg("post_send: %s", why);
	sib_progress_post(h, q->qp);
}

/* Packets port 1's link has handed to the kernel. */
static uint64_t tx_packets(struct sib_hca *h)
{
	struct sib_link_counters k;

	sib_link_counters_get(h->node.mgmt[0].link, &k);
	return k.tx_packets;
}

/* Polls cq, and nothing else (the application is stuck, or has stopped
 * calling), for up to ms milliseconds. */
static bool cqe_within(struct sib_cq *cq, struct sib_cqe *c, unsigned ms)
{
	for (unsigned i = 0; i < ms * 10; i++) {
		if (sib_cq_poll(cq, c, 1) == 1)
			return true;
		usleep(100);
	}
	return false;
}

/*
 * The transmit rule: a thread that polls sends what it posts with its next
 * poll (a burst leaves in one system call, after the ACKs its last poll
 * made), and a thread that does not poll sends before its post returns.
 * The progress thread is stopped while the test thread polls and posts, so
 * that what leaves is what the test thread's calls send; a round is
 * inconclusive only when the lease ran out before the post (it then
 * rightly leaves at once).  The next test shows that the progress thread
 * sends what a poller leaves by the lease's end.
 */
static void a_polling_threads_post_leaves_with_its_next_poll(void **state)
{
	struct sib_hca *h = hca_get();
	struct hca_qp *a, *b;
	struct sib_cqe c;
	bool seen = false;

	(void)state;
	a = hca_qp_new(h, 0x51);
	b = hca_qp_new(h, 0x51);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);
	for (int round = 0; round < 20 && !seen; round++) {
		uint64_t until, before;
		bool held;

		hca_qp_recv(b);
		sib_progress_stop(h);
		sib_progress_armed(h); /* a fresh lease from the next poll */
		sib_progress_polled(h, false, true);
		until = lease_end(h);
		before = tx_packets(h);
		hca_qp_send(h, a);
		held = tx_packets(h) == before;
		if (sib_link_now_ns() < until) {
			if (!held)
				fail_msg("a polling thread's post left before its next poll");
			seen = true;
			sib_progress_polled(h, true, true);
			assert_true(tx_packets(h) > before);
		}
		assert_int_equal(sib_progress_start(h), 0);
		assert_true(cqe_within(b->rcq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
		assert_true(cqe_within(a->scq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
	}
	/* A thread that does not poll (it armed its CQ) sends at once: once
	 * the progress thread sleeps, no other sender can take it over. */
	sib_progress_armed(h);
	hca_qp_recv(b);
	for (int i = 0; i < 100000 && !__atomic_load_n(&h->progress.wake_by_ns, __ATOMIC_SEQ_CST);
	     i++)
		usleep(100);
	{
		uint64_t before = tx_packets(h);

		hca_qp_send(h, a);
		assert_true(tx_packets(h) > before);
	}
	assert_true(cqe_within(b->rcq, &c, 10000));
	assert_true(cqe_within(a->scq, &c, 10000));
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
	if (!seen)
		sib_skip("in 20 rounds the test thread never kept the CPU for a lease from its poll "
			 "to its post: whether the post waited could not be seen");
}

/*
 * ... and what a polling thread leaves queued leaves by the end of its
 * lease although it never calls again (it got its completion: now it
 * waits on memory, or on its peer): the progress thread looks in then.
 * With no retransmit timer, nothing else would send it.
 */
static void what_a_poller_leaves_queued_leaves_by_its_lease_end(void **state)
{
	struct sib_hca *h = hca_get();
	struct hca_qp *a, *b;
	struct sib_cqe c;

	(void)state;
	a = hca_qp_new(h, 0x54);
	b = hca_qp_new(h, 0x54);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);
	for (int round = 0; round < 10; round++) {
		hca_qp_recv(b);
		sib_progress_armed(h);
		sib_progress_polled(h, true, true);
		hca_qp_send(h, a); /* held for this thread's next poll, which never comes */
		assert_true(cqe_within(b->rcq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
		assert_true(cqe_within(a->scq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
	}
	sib_progress_armed(h);
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
}

/*
 * ... and a poll that finds completions, by a thread that posted nothing
 * since its last poll, sends nothing: the ACK its reading made waits for
 * the request the thread posts in answer, and both leave with its next
 * poll (in one datagram: link/udp.c), as ib_send_lat's ping-pong wants.
 * The progress thread is stopped meanwhile, so that what leaves is what
 * this thread's calls send (a thread that read the SEND before the lease
 * began would rightly send the ACK at once, whenever it next ran).  A
 * round is inconclusive only when the lease ended before the answer was
 * posted: the post then rightly sends at once.
 */
static void a_poll_that_finds_completions_leaves_its_acks_to_the_answer(void **state)
{
	struct sib_hca *h = hca_get();
	struct hca_qp *a, *b;
	struct sib_cqe c;
	bool seen = false;

	(void)state;
	a = hca_qp_new(h, 0x58);
	b = hca_qp_new(h, 0x58);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);
	for (int round = 0; round < 20 && !seen; round++) {
		uint64_t until, before;
		bool got = false;

		hca_qp_recv(a);
		hca_qp_recv(b);
		sib_progress_stop(h);
		sib_progress_polled(h, true, true); /* this thread holds the links */
		hca_qp_send(h, a);
		/* Its empty polls send the SEND and read it: b's ACK is queued. */
		for (int i = 0; i < 1000000 && !got; i++) {
			sib_progress_polled(h, true, true);
			got = sib_cq_poll(b->rcq, &c, 1) == 1;
		}
		assert_true(got);
		before = tx_packets(h);
		sib_progress_polled(h, false, true); /* found b's receive; posted nothing */
		until = lease_end(h);
		if (tx_packets(h) != before)
			fail_msg("a poll that found completions sent the ACK ahead of the answer");
		hca_qp_send(h, b); /* the answer: waits for this thread's next poll */
		if (sib_link_now_ns() < until) {
			if (tx_packets(h) != before)
				fail_msg("a polling thread's post left before its next poll");
			sib_progress_polled(h, true, true);
			/* The ACK and the answer: both waited for this poll. */
			if (tx_packets(h) < before + 2)
				fail_msg("the next poll sent %" PRIu64 " packets, not the ACK and the answer",
					 tx_packets(h) - before);
			seen = true;
		}
		assert_int_equal(sib_progress_start(h), 0);
		assert_true(cqe_within(a->scq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
		assert_true(cqe_within(a->rcq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
		assert_true(cqe_within(b->scq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
	}
	sib_progress_armed(h);
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
	if (!seen)
		sib_skip("in 20 rounds this thread never kept the CPU for a lease from its poll "
			 "to its answer: whether the answer waited could not be seen");
}

/*
 * The receive rule: a datagram for a QP another thread holds is copied to
 * the QP's queue, and that thread applies it when it lets the QP go
 * (sib_qp_unlock): the reader never waits for a QP, and nothing is lost.
 */
static void a_held_qp_gets_its_datagrams_from_its_holder(void **state)
{
	struct sib_hca *h = hca_get();
	struct sib_engine_counters k0, k1;
	struct hca_qp *a, *b;
	struct sib_cqe c;
	bool queued = false;

	(void)state;
	a = hca_qp_new(h, 0x56);
	b = hca_qp_new(h, 0x56);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);
	hca_qp_recv(b);
	sib_progress_armed(h);
	sib_engine_counters_get(h->engine, &k0);
	sib_qp_lock(b->qp);
	locked_qp = b->qp;
	hca_qp_send(h, a);
	for (int i = 0; i < 100000 && !queued; i++) {
		sib_engine_counters_get(h->engine, &k1);
		queued = k1.rx_queued > k0.rx_queued;
		usleep(100);
	}
	assert_true(queued);
	assert_int_equal(sib_cq_poll(b->rcq, &c, 1), 0);
	locked_qp = NULL;
	sib_qp_unlock(b->qp); /* applies it, on this thread */
	assert_int_equal(sib_cq_poll(b->rcq, &c, 1), 1);
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_int_equal(c.byte_len, 8);
	assert_true(cqe_within(a->scq, &c, 10000));
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
}

/*
 * The receive rule: one thread reads the links at a time.  While another
 * holds them (a poller that lost the CPU in the middle of its read), the
 * progress thread waits for it, and nothing is lost: the datagram is
 * served once the reader lets go.
 */
static void one_reader_at_a_time_and_nothing_lost(void **state)
{
	struct sib_hca *h = hca_get();
	struct hca_qp *a, *b;
	struct sib_cqe c;

	(void)state;
	a = hca_qp_new(h, 0x53);
	b = hca_qp_new(h, 0x53);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);
	hca_qp_recv(b);
	sib_progress_armed(h);
	pthread_mutex_lock(&h->progress.read_lock);
	reading_hca = h;
	hca_qp_send(h, a);
	assert_false(cqe_within(b->rcq, &c, 50));
	/* A poller that finds the links taken does not wait. */
	assert_int_equal(sib_progress_polled(h, true, false), 0);
	pthread_mutex_unlock(&h->progress.read_lock);
	reading_hca = NULL;
	assert_true(cqe_within(b->rcq, &c, 10000));
	assert_int_equal(c.status, SIB_WC_SUCCESS);
	assert_true(cqe_within(a->scq, &c, 10000));
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
}

/*
 * Watch mode, when it engages: an application that holds the links (it
 * polls a CQ now and then) but leaves a request unread (it waits on
 * memory) has the progress thread watch the links, and its requests are
 * then served without waiting for its lease to end; one that reads its
 * datagrams itself has the thread stay off them.
 */
static void watch_mode_engages_when_the_holder_leaves_requests_unread(void **state)
{
	struct sib_hca *h = hca_get();
	struct hca_qp *a, *b;
	struct sib_cqe c;
	uint64_t w0;
	bool got = false, watched = false;

	(void)state;
	a = hca_qp_new(h, 0x57);
	b = hca_qp_new(h, 0x57);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);

	/* A holder that reads itself: no watch. */
	w0 = __atomic_load_n(&h->progress.watches, __ATOMIC_RELAXED);
	for (int round = 0; round < 20; round++) {
		hca_qp_recv(b);
		sib_progress_polled(h, false, true);
		hca_qp_send(h, a);
		got = false;
		for (int i = 0; i < 1000000 && !got; i++) {
			sib_progress_polled(h, true, true);
			got = sib_cq_poll(a->scq, &c, 1) == 1;
		}
		assert_true(got);
		assert_true(cqe_within(b->rcq, &c, 10000));
	}
	if (__atomic_load_n(&h->progress.watches, __ATOMIC_RELAXED) != w0)
		sib_dbg("test: the thread watched a holder that read itself (it lost the CPU?)");

	/* A holder that polls without reading (it waits on memory); on a
	 * loaded machine the progress thread may run too late to find the
	 * request waiting in a round, so rounds go on until it does. */
	for (int round = 0; round < 400 && !watched; round++) {
		hca_qp_recv(b);
		sib_progress_polled(h, false, true);
		hca_qp_send(h, a);
		sib_progress_flush(h); /* sends (as its next empty poll would); reads nothing */
		for (int i = 0; i < 100000; i++) {
			sib_progress_polled(h, false, true); /* keeps the lease */
			if (sib_cq_poll(b->rcq, &c, 1) == 1)
				break;
			usleep(10);
		}
		assert_true(cqe_within(a->scq, &c, 10000));
		watched = __atomic_load_n(&h->progress.watches, __ATOMIC_RELAXED) > w0;
	}
	assert_true(watched);
	sib_progress_armed(h);
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->rc = sib_progress_wait(w->h, w->fd);
	return NULL;
}

/* held.waiter's thread waits on h for a new pipe to become readable. */
static void waiter_start(struct sib_hca *h)
{
	assert_int_equal(pipe(held.pipe), 0);
	held.pipe_open = true;
	held.waiter = (struct waiter){ .h = h, .fd = held.pipe[0], .rc = 1 };
	assert_int_equal(pthread_create(&held.waiter_thread, NULL, waiter_main, &held.waiter), 0);
	held.waiting = true;
}

/* The event comes: the waiter's wait is over. */
static void waiter_end(void)
{
	held.waiting = false;
	assert_int_equal(write(held.pipe[1], "e", 1), 1);
	assert_int_equal(pthread_join(held.waiter_thread, NULL), 0);
}

static void waiter_close(void)
{
	held.pipe_open = false;
	close(held.pipe[0]);
	close(held.pipe[1]);
}

/* Until the waiter is inside its wait (and a moment more, to sleep). */
static void waiter_inside(struct sib_hca *h)
{
	for (int i = 0; i < 10000 && !__atomic_load_n(&h->progress.waiters, __ATOMIC_SEQ_CST); i++)
		usleep(100);
	assert_int_equal(__atomic_load_n(&h->progress.waiters, __ATOMIC_SEQ_CST), 1);
	usleep(2000);
}

/*
 * The waiting rule: while an application thread waits for an event, the
 * datagrams wake it and it handles them itself (its wake-ups are counted,
 * and shown by softib info), and what it queues (the ACK it owes for a
 * SEND) leaves before it sleeps again; it returns once its fd is
 * readable, and holds the links for a lease after.
 */
static void a_thread_waiting_for_events_takes_its_datagrams(void **state)
{
	struct sib_hca *h = hca_get();
	struct sib_port_stats st;
	struct hca_qp *a, *b;
	struct sib_cqe c;
	uint64_t before;

	(void)state;
	a = hca_qp_new(h, 0x55);
	b = hca_qp_new(h, 0x55);
	hca_qp_connect(h, a, b);
	hca_qp_connect(h, b, a);
	before = __atomic_load_n(&h->progress.wakes_waiter, __ATOMIC_RELAXED);
	sib_progress_armed(h);
	waiter_start(h);
	waiter_inside(h);
	/* At least 5 rounds, and more until a datagram woke the waiter: the
	 * progress thread also looks in once a lease, and a waiter that a
	 * loaded machine runs only after that look finds the socket empty and
	 * sleeps on (poll(2) counts no wake-up then).  Bounded, as the
	 * machine is only so loaded. */
	for (int round = 0; round < 5 || (round < 2000 && __atomic_load_n(&h->progress.wakes_waiter,
									    __ATOMIC_RELAXED) == before);
	     round++) {
		hca_qp_recv(b);
		hca_qp_send(h, a);
		assert_true(cqe_within(b->rcq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
		/* No post from b: its ACK leaves all the same. */
		assert_true(cqe_within(a->scq, &c, 10000));
		assert_int_equal(c.status, SIB_WC_SUCCESS);
	}
	assert_true(__atomic_load_n(&h->progress.wakes_waiter, __ATOMIC_RELAXED) > before);
	assert_true(__atomic_load_n(&h->progress.rx_requests, __ATOMIC_RELAXED) >= 5);
	assert_int_equal(sib_hca_port_stats(h, 1, &st), 0);
	assert_true(st.wakes_waiter > before);
	/* The event comes: the wait is over. */
	waiter_end();
	assert_int_equal(held.waiter.rc, 0);
	assert_int_equal(__atomic_load_n(&h->progress.waiters, __ATOMIC_SEQ_CST), 0);
	assert_true(__atomic_load_n(&h->progress.wait_until, __ATOMIC_RELAXED) > 0);
	/* Not this thread's event: it is written, not handed over. */
	assert_false(sib_progress_event_for_waiter(h, held.pipe[0]));
	waiter_close();
	hca_qp_free(a);
	hca_qp_free(b);
	hca_put(h);
}

/* Another process reads this one's counters as text through its socket,
 * in softib's directory, only this user's; the socket leaves with the
 * HCA. */
static void counters_are_read_through_the_process_socket(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[SIB_RUN_DIR_MAX + 32], text[16384], want[64];
	struct sib_hca *h;
	struct stat st;
	size_t used = 0;
	ssize_t n;
	int fd, rc;

	(void)state;
	h = hca_get();
	assert_int_equal(sib_stats_socket_path((int)getpid(), path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	while (!rc && (n = read(fd, text + used, sizeof(text) - 1 - used)) > 0)
		used += (size_t)n;
	close(fd); /* before an assertion can leave */
	assert_int_equal(rc, 0);
	text[used] = 0;
	snprintf(want, sizeof(want), "pid %d\n", (int)getpid());
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\nport1.lid %u\n", h->node.ports[0].LID);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "\nport1.rx_wrong_endpoint 0\n"));
	assert_non_null(strstr(text, "\nport1.M_KeyViolations 0\n"));
	hca_put(h);
	assert_int_not_equal(stat(path, &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guid_from_random_is_locally_administered_unicast),
		cmocka_unit_test(guid_format_matches_ibv_devinfo),
		cmocka_unit_test(gid_format_is_eight_groups),
		cmocka_unit_test(port_init_sets_default_gid_and_pkey),
		cmocka_unit_test(port_tables_reject_out_of_range_indices),
		cmocka_unit_test(set_lid_activates_once_and_rejects_reserved_lids),
		cmocka_unit_test(local_lid_is_unicast_for_every_pid),
		HCA_CASE(hca_is_shared_until_the_last_put),
		HCA_CASE(hca_port_lookup_rejects_bad_ports),
		HCA_CASE(lid_change_reaches_every_listener_until_unlisten),
		HCA_CASE(first_lid_raises_port_active),
		HCA_CASE(pd_numbers_are_unique_and_nonzero),
		HCA_CASE(polls_hold_the_links_unless_the_poller_is_about_to_sleep),
		HCA_CASE(a_polling_threads_post_leaves_with_its_next_poll),
		HCA_CASE(what_a_poller_leaves_queued_leaves_by_its_lease_end),
		HCA_CASE(a_poll_that_finds_completions_leaves_its_acks_to_the_answer),
		HCA_CASE(a_held_qp_gets_its_datagrams_from_its_holder),
		HCA_CASE(one_reader_at_a_time_and_nothing_lost),
		HCA_CASE(watch_mode_engages_when_the_holder_leaves_requests_unread),
		HCA_CASE(a_thread_waiting_for_events_takes_its_datagrams),
		HCA_CASE(counters_are_read_through_the_process_socket),
	};
	char dir[] = "/tmp/softib-test-hca.XXXXXX";
	int rc;

	/* The HCA object alone: no subnet manager (tests/unit/test_sm.c has
	 * those), so the port is a subnet of one, ACTIVE with its local LID. */
	setenv("SOFTIB_SM", "none", 1);
	/* Counters sockets in a directory of this test's own. */
	assert_non_null(mkdtemp(dir));
	setenv("SOFTIB_RUN_DIR", dir, 1);
	rc = cmocka_run_group_tests_name("hca/hca", tests, NULL, NULL);
	rmdir(dir);
	return rc;
}

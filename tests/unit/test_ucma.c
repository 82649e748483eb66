/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The rdma_cm command channel (provider/ucma.c, cma.c) driven the way
 * librdmacm drives it -- commands written to the descriptor, answers read
 * from the response pointers -- in one process with no SM (SOFTIB_SM=none,
 * a subnet of one): command checks and their errnos, the descriptor's
 * readiness and O_NONBLOCK, a full RC connection over loopback with
 * private data both ways and the QP attributes each side gets, REJ with
 * private data, a service nobody listens on, UD through SIDR (and a UD
 * connect that waits for a listener coming late), AF_IB
 * addresses, the states each command needs, migrate, and port
 * reservations (REUSEADDR, port 0; port spaces apart from the host's
 * ports and from each other, across processes, freed at SIGKILL).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "provider/rdma_cm.h"

#define UID_SRV 0x5151u
#define UID_CLI 0xc1c1u
#define UID_CHILD 0xcd01u

/* Writes one command; 0 or -errno. */
static int cmd(int fd, uint32_t op, const void *body, size_t len, uint16_t out)
{
	uint8_t buf[8 + 1024];
	struct rdma_ucm_cmd_hdr h = { .cmd = op, .in = (uint16_t)len, .out = out };
	ssize_t r;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	r = sib_ucma_write(fd, buf, sizeof(h) + len);
	if (r < 0)
		return -errno;
	assert_int_equal(r, (ssize_t)(sizeof(h) + len));
	return 0;
}

static uint32_t create_id(int fd, uint16_t ps, uint8_t qpt, uint64_t uid)
{
	struct rdma_ucm_create_id_resp resp = { .id = 0xffff };
	struct rdma_ucm_create_id c = { .uid = uid, .response = (uintptr_t)&resp, .ps = ps,
					.qp_type = qpt };

	assert_int_equal(cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(resp)), 0);
	return resp.id;
}

static unsigned destroy_id(int fd, uint32_t id)
{
	struct rdma_ucm_destroy_id_resp resp = { .events_reported = 99 };
	struct rdma_ucm_destroy_id c = { .response = (uintptr_t)&resp, .id = id };

	assert_int_equal(cmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c), sizeof(resp)), 0);
	return resp.events_reported;
}

static struct sockaddr_in loop4(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int bind_addr(int fd, uint32_t id, const void *addr, size_t len)
{
	struct rdma_ucm_bind c = { .id = id, .addr_size = (uint16_t)len };

	memcpy(&c.addr, addr, len);
	return cmd(fd, RDMA_USER_CM_CMD_BIND, &c, sizeof(c), 0);
}

static struct rdma_ucm_query_addr_resp query_addr(int fd, uint32_t id)
{
	struct rdma_ucm_query_addr_resp resp;
	struct rdma_ucm_query c = { .response = (uintptr_t)&resp, .id = id,
				    .option = RDMA_USER_CM_QUERY_ADDR };

	memset(&resp, 0, sizeof(resp));
	assert_int_equal(cmd(fd, RDMA_USER_CM_CMD_QUERY, &c, sizeof(c), sizeof(resp)), 0);
	return resp;
}

/* A port that binds now (20000..59999), bound by id on fd. */
static uint16_t bind_free(int fd, uint32_t id)
{
	for (int i = 0; i < 200; i++) {
		uint16_t p = (uint16_t)(20000 + (rand() % 40000));
		struct sockaddr_in a = loop4(p);

		if (!bind_addr(fd, id, &a, sizeof(a)))
			return p;
	}
	fail_msg("no free port");
	return 0;
}

/* The next event (waits up to 5 s for the descriptor to be readable). */
static struct rdma_ucm_event_resp get_event(int fd)
{
	struct rdma_ucm_event_resp resp;
	struct rdma_ucm_get_event c = { .response = (uintptr_t)&resp };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 5000), 1);
	memset(&resp, 0, sizeof(resp));
	assert_int_equal(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), sizeof(resp)), 0);
	return resp;
}

static int resolve(int fd, uint32_t id, uint16_t port)
{
	struct rdma_ucm_resolve_addr c = { .id = id, .timeout_ms = 2000,
					   .dst_size = sizeof(struct sockaddr_in) };
	struct sockaddr_in d = loop4(port);

	memcpy(&c.dst_addr, &d, sizeof(d));
	return cmd(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &c, sizeof(c), 0);
}

static void resolve_both(int fd, uint32_t id, uint16_t port)
{
	struct rdma_ucm_resolve_route r = { .id = id, .timeout_ms = 2000 };
	struct rdma_ucm_event_resp e;

	assert_int_equal(resolve(fd, id, port), 0);
	e = get_event(fd);
	assert_int_equal(e.event, UCMA_EV_ADDR_RESOLVED);
	assert_int_equal(e.status, 0);
	assert_int_equal(cmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &r, sizeof(r), 0), 0);
	e = get_event(fd);
	assert_int_equal(e.event, UCMA_EV_ROUTE_RESOLVED);
	assert_int_equal(e.status, 0);
}

static int connect_id(int fd, uint32_t id, uint32_t qpn, const char *pd)
{
	struct rdma_ucm_connect c = { .id = id };

	c.conn_param.qp_num = qpn;
	c.conn_param.responder_resources = 4;
	c.conn_param.initiator_depth = 2;
	c.conn_param.retry_count = 7;
	c.conn_param.rnr_retry_count = 7;
	c.conn_param.valid = 1;
	if (pd) {
		c.conn_param.private_data_len = (uint8_t)strlen(pd);
		memcpy(c.conn_param.private_data, pd, strlen(pd));
	}
	return cmd(fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0);
}

static int listen_id(int fd, uint32_t id)
{
	struct rdma_ucm_listen c = { .id = id, .backlog = 0 };

	return cmd(fd, RDMA_USER_CM_CMD_LISTEN, &c, sizeof(c), 0);
}

static struct ib_uverbs_qp_attr qp_attr(int fd, uint32_t id, uint32_t state)
{
	struct ib_uverbs_qp_attr a;
	struct rdma_ucm_init_qp_attr c = { .response = (uintptr_t)&a, .id = id,
					   .qp_state = state };

	memset(&a, 0, sizeof(a));
	assert_int_equal(cmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof(c), sizeof(a)), 0);
	return a;
}

struct files {
	int srv, cli;
};

static int setup(void **state)
{
	static struct files f;

	setenv("SOFTIB_SM", "none", 1);
	setenv("SOFTIB_LOG", "error", 0);
	f.srv = sib_ucma_open(O_RDWR | O_CLOEXEC);
	f.cli = sib_ucma_open(O_RDWR | O_CLOEXEC);
	assert_true(f.srv >= 0 && f.cli >= 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct files *f = *state;

	sib_ucma_close(f->srv);
	close(f->srv);
	sib_ucma_close(f->cli);
	close(f->cli);
	return 0;
}

static void commands_are_checked(void **state)
{
	struct files *f = *state;
	struct rdma_ucm_create_id_resp resp;
	struct rdma_ucm_create_id c = { .uid = 1, .response = (uintptr_t)&resp,
					.ps = RDMA_PS_TCP, .qp_type = IBV_QPT_RC };
	struct rdma_ucm_cmd_hdr h = { .cmd = RDMA_USER_CM_CMD_CREATE_ID, .in = 200, .out = 4 };
	uint8_t none[8] = { 0 };

	errno = 0;
	assert_int_equal(sib_ucma_write(f->srv, &h, 4), -1); /* shorter than a header */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sib_ucma_write(f->srv, &h, sizeof(h) + 8), -1); /* in beyond len */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cmd(f->srv, 99, none, sizeof(none), 0), -EINVAL);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_GET_OPTION, none, sizeof(none), 0), -ENOSYS);
	/* LEAVE_MCAST as the kernel's: no room for the answer, then no such join. */
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_LEAVE_MCAST, none, sizeof(none), 0), -ENOSPC);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_LEAVE_MCAST, none, sizeof(none), 4), -ENOENT);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 2), -ENOSPC);
	c.ps = RDMA_PS_IPOIB;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4), -EINVAL);
	c.ps = RDMA_PS_TCP;
	c.qp_type = 99;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4), -EINVAL);
	c.qp_type = IBV_QPT_RC;
	c.response = 0;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4), -EFAULT);
	assert_int_equal(cmd(-1, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4), -EBADF);
	/* Handles are the lowest free; an id is reached through its file. */
	assert_int_equal(create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1), 0);
	assert_int_equal(create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 2), 1);
	assert_int_equal(destroy_id(f->srv, 0), 0);
	assert_int_equal(create_id(f->srv, RDMA_PS_UDP, IBV_QPT_UD, 3), 0);
	{
		struct rdma_ucm_destroy_id_resp r;
		struct rdma_ucm_destroy_id d = { .response = (uintptr_t)&r, .id = 1 };

		assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(r)),
				 -EINVAL);
		d.id = 77;
		assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(r)),
				 -EINVAL);
	}
	destroy_id(f->srv, 0);
	destroy_id(f->srv, 1);
	/* JOIN_MCAST as the kernel's: no room for the answer, then a bad address size. */
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_JOIN_MCAST, none, sizeof(none), 0), -ENOSPC);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_JOIN_MCAST, none, sizeof(none), 4), -EINVAL);
}

static void nonblocking_get_event_and_readiness(void **state)
{
	struct files *f = *state;
	struct rdma_ucm_event_resp resp;
	struct rdma_ucm_get_event g = { .response = (uintptr_t)&resp };
	struct pollfd p = { .fd = f->cli, .events = POLLIN };
	uint32_t id = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	int fl = fcntl(f->cli, F_GETFL);

	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(fcntl(f->cli, F_SETFL, fl | O_NONBLOCK), 0);
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(resp)),
			 -EAGAIN);
	assert_int_equal(resolve(f->cli, id, 9), 0);
	assert_int_equal(poll(&p, 1, 5000), 1); /* readable while an event waits */
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(resp)), 0);
	assert_int_equal(resp.event, UCMA_EV_ADDR_RESOLVED);
	assert_int_equal(resp.uid, UID_CLI);
	assert_int_equal(resp.id, id);
	assert_int_equal(poll(&p, 1, 0), 0); /* and no longer */
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(resp)),
			 -EAGAIN);
	assert_int_equal(fcntl(f->cli, F_SETFL, fl), 0);
	assert_int_equal(destroy_id(f->cli, id), 1);
}

static void rc_connection_over_loopback(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	uint16_t port = bind_free(f->srv, lid);
	struct rdma_ucm_query_addr_resp qa = query_addr(f->srv, lid);
	struct ib_uverbs_qp_attr crtr, crts, srtr, srts;
	struct rdma_ucm_event_resp e;
	struct rdma_ucm_accept acc = { .uid = UID_CHILD };
	uint32_t child;

	/* A specific address binds the device: QUERY names softib0. */
	assert_true(qa.node_guid != 0);
	assert_int_equal(qa.port_num, 1);
	assert_int_equal(ntohs(((struct sockaddr_in *)&qa.src_addr)->sin_port), port);
	assert_int_equal(listen_id(f->srv, lid), 0);
	resolve_both(f->cli, cid, port);
	assert_int_equal(connect_id(f->cli, cid, 0x123, "hello"), 0);

	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	assert_int_equal(e.uid, UID_SRV);
	child = e.id;
	assert_int_not_equal(child, lid);
	assert_int_equal(e.param.conn.private_data_len, 56); /* 92 less the IP header */
	assert_memory_equal(e.param.conn.private_data, "hello", 5);
	assert_int_equal(e.param.conn.qp_num, 0x123);
	assert_int_equal(e.param.conn.responder_resources, 2); /* the peer's depth */
	assert_int_equal(e.param.conn.initiator_depth, 4);
	/* The new id knows both addresses, from the REQ's IP header. */
	qa = query_addr(f->srv, child);
	assert_int_equal(ntohs(((struct sockaddr_in *)&qa.src_addr)->sin_port), port);
	assert_int_equal(((struct sockaddr_in *)&qa.dst_addr)->sin_family, AF_INET);

	srtr = qp_attr(f->srv, child, IBV_QPS_RTR);
	acc.id = child;
	acc.conn_param.qp_num = 0x456;
	acc.conn_param.responder_resources = 1;
	acc.conn_param.initiator_depth = 1;
	acc.conn_param.rnr_retry_count = 6;
	acc.conn_param.private_data_len = 3;
	memcpy(acc.conn_param.private_data, "yes", 3);
	acc.conn_param.valid = 1;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), 0);
	srts = qp_attr(f->srv, child, IBV_QPS_RTS);

	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_CONNECT_RESPONSE);
	assert_int_equal(e.uid, UID_CLI);
	assert_int_equal(e.param.conn.private_data_len, 196);
	assert_memory_equal(e.param.conn.private_data, "yes", 3);
	assert_int_equal(e.param.conn.qp_num, 0x456);
	crtr = qp_attr(f->cli, cid, IBV_QPS_RTR);
	crts = qp_attr(f->cli, cid, IBV_QPS_RTS);
	/* Each side's receive PSN is the other's send PSN (IBA 12.7). */
	assert_int_equal(crtr.dest_qp_num, 0x456);
	assert_int_equal(srtr.dest_qp_num, 0x123);
	assert_int_equal(crtr.rq_psn, srts.sq_psn);
	assert_int_equal(srtr.rq_psn, crts.sq_psn);
	assert_true(crtr.qp_attr_mask & IBV_QP_AV);
	assert_int_equal(crtr.ah_attr.port_num, 1);
	assert_true(crtr.path_mtu >= IBV_MTU_256 && crtr.path_mtu <= IBV_MTU_4096);
	assert_int_equal(crts.rnr_retry, 6);
	assert_int_equal(srts.retry_cnt, 7);
	assert_true(crts.timeout > 0);

	{
		struct rdma_ucm_accept rtu = { .id = cid };

		assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_ACCEPT, &rtu, sizeof(rtu), 0), 0);
	}
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_ESTABLISHED);
	assert_int_equal(e.uid, UID_CHILD); /* the uid ACCEPT gave */

	{
		struct rdma_ucm_disconnect d = { .id = cid };

		assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), 0), 0);
		e = get_event(f->srv);
		assert_int_equal(e.event, UCMA_EV_DISCONNECTED);
		d.id = child;
		assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), 0), 0);
		e = get_event(f->cli);
		assert_int_equal(e.event, UCMA_EV_DISCONNECTED);
	}
	assert_int_equal(destroy_id(f->cli, cid), 4);
	assert_int_equal(destroy_id(f->srv, child), 2);
	assert_int_equal(destroy_id(f->srv, lid), 1);
}

static void reject_and_refused(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	uint16_t port = bind_free(f->srv, lid);
	struct rdma_ucm_reject rej;
	struct rdma_ucm_event_resp e;

	assert_int_equal(listen_id(f->srv, lid), 0);
	resolve_both(f->cli, cid, port);
	assert_int_equal(connect_id(f->cli, cid, 0x77, NULL), 0);
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	memset(&rej, 0, sizeof(rej));
	rej.id = e.id;
	rej.private_data_len = 2;
	memcpy(rej.private_data, "no", 2);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_REJECT, &rej, sizeof(rej), 0), 0);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_REJECTED);
	assert_int_equal(e.status, 28); /* consumer defined */
	assert_int_equal(e.param.conn.private_data_len, 148);
	assert_memory_equal(e.param.conn.private_data, "no", 2);
	destroy_id(f->srv, rej.id);
	destroy_id(f->cli, cid);

	/* Nobody listens on port + 1: REJ 8, what programs call refused. */
	cid = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	resolve_both(f->cli, cid, (uint16_t)(port + 1));
	assert_int_equal(connect_id(f->cli, cid, 0x78, NULL), 0);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_REJECTED);
	assert_int_equal(e.status, 8);
	destroy_id(f->cli, cid);
	destroy_id(f->srv, lid);
}

/*
 * A REQ that comes while nobody listens on its port, shortly after someone
 * did (perftest -R listens again between its connections, and its client
 * may be faster), waits for the next listener; when none comes within the
 * linger it is rejected as refused.
 */
static void req_waits_for_the_next_listener(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	uint16_t port = bind_free(f->srv, lid);
	struct sockaddr_in a = loop4(port);
	struct pollfd p = { .fd = f->srv, .events = POLLIN };
	struct rdma_ucm_event_resp e;
	struct timespec t0, t1;

	assert_int_equal(listen_id(f->srv, lid), 0);
	assert_int_equal(destroy_id(f->srv, lid), 0);
	resolve_both(f->cli, cid, port);
	assert_int_equal(connect_id(f->cli, cid, 0x321, "again"), 0);
	p.fd = f->cli;
	assert_int_equal(poll(&p, 1, 200), 0); /* held, not rejected */

	lid = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, UID_SRV);
	assert_int_equal(bind_addr(f->srv, lid, &a, sizeof(a)), 0);
	assert_int_equal(listen_id(f->srv, lid), 0);
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	assert_int_equal(e.param.conn.qp_num, 0x321);
	assert_memory_equal(e.param.conn.private_data, "again", 5);
	{
		struct rdma_ucm_accept acc = { .id = e.id, .uid = UID_CHILD };

		acc.conn_param.qp_num = 0x654;
		acc.conn_param.valid = 1;
		assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), 0);
	}
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_CONNECT_RESPONSE);
	assert_int_equal(e.param.conn.qp_num, 0x654);
	destroy_id(f->cli, cid); /* before its RTU: REJ */
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_REJECTED);
	destroy_id(f->srv, e.id);
	destroy_id(f->srv, lid);

	/* Nobody comes back: REJ 8 once the linger is over (about 1 s). */
	cid = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	resolve_both(f->cli, cid, port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(connect_id(f->cli, cid, 0x322, NULL), 0);
	e = get_event(f->cli);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(e.event, UCMA_EV_REJECTED);
	assert_int_equal(e.status, 8);
	assert_true(t1.tv_sec - t0.tv_sec <= 3);
	destroy_id(f->cli, cid);
}

static void ud_through_sidr(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_UDP, IBV_QPT_UD, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_UDP, IBV_QPT_UD, UID_CLI);
	uint16_t port = bind_free(f->srv, lid);
	struct rdma_ucm_accept acc = { .uid = UID_CHILD };
	struct rdma_ucm_event_resp e;
	struct ib_uverbs_qp_attr a;

	assert_int_equal(listen_id(f->srv, lid), 0);
	resolve_both(f->cli, cid, port);
	a = qp_attr(f->cli, cid, IBV_QPS_INIT);
	assert_int_equal(a.qkey, 0x01234567);
	assert_true(a.qp_attr_mask & IBV_QP_QKEY);
	assert_int_equal(connect_id(f->cli, cid, 0x99, "ud"), 0);
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	assert_int_equal(e.param.ud.private_data_len, 180); /* 216 less the IP header */
	assert_memory_equal(e.param.ud.private_data, "ud", 2);
	acc.id = e.id;
	acc.conn_param.qp_num = 0xaa;
	acc.conn_param.valid = 1;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), 0);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_ESTABLISHED);
	assert_int_equal(e.param.ud.qp_num, 0xaa);
	assert_int_equal(e.param.ud.qkey, 0x01234567);
	assert_int_equal(e.param.ud.ah_attr.port_num, 1);
	assert_true(e.param.ud.ah_attr.dlid != 0);
	destroy_id(f->srv, acc.id);
	destroy_id(f->srv, lid);
	destroy_id(f->cli, cid);
}

/* The server of listen_late: listens on id once the client's connect has
 * begun (and, 100 ms later, found no listener yet). */
struct late {
	int fd;
	uint32_t id;
	atomic_bool connecting;
	int rc;
};

static void *listen_late(void *arg)
{
	struct late *l = arg;
	const struct timespec t = { 0, 100000000 };

	while (!atomic_load(&l->connecting))
		sched_yield();
	nanosleep(&t, NULL);
	l->rc = listen_id(l->fd, l->id);
	return NULL;
}

/* perftest -R -c UD: the server listens only after the sync that also
 * starts the client's connect.  SIDR has no MRA to hold the SIDR_REQ, so
 * the connect waits for the listener (up to the 1 s a listener lingers)
 * instead of being answered status 1 (ServiceID not supported) at once. */
static void sidr_waits_for_a_late_listener(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_UDP, IBV_QPT_UD, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_UDP, IBV_QPT_UD, UID_CLI);
	uint16_t port = bind_free(f->srv, lid);
	struct rdma_ucm_accept acc = { .uid = UID_CHILD };
	struct late l = { .fd = f->srv, .id = lid, .rc = -1 };
	struct pollfd p = { .fd = f->cli, .events = POLLIN };
	struct rdma_ucm_event_resp e;
	pthread_t t;

	resolve_both(f->cli, cid, port);
	assert_int_equal(pthread_create(&t, NULL, listen_late, &l), 0);
	atomic_store(&l.connecting, true);
	assert_int_equal(connect_id(f->cli, cid, 0x99, "late"), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(l.rc, 0);
	/* Not answered status 1 (UNREACHABLE) before the listener came. */
	assert_int_equal(poll(&p, 1, 0), 0);
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	assert_memory_equal(e.param.ud.private_data, "late", 4);
	acc.id = e.id;
	acc.conn_param.qp_num = 0xab;
	acc.conn_param.valid = 1;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), 0);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_ESTABLISHED);
	assert_int_equal(e.param.ud.qp_num, 0xab);
	destroy_id(f->srv, acc.id);
	destroy_id(f->srv, lid);
	destroy_id(f->cli, cid);
}

/* AF_IB: an id named by GID and ServiceID; no IP header in the REQ, so
 * the whole 92 bytes of private data are the program's. */
static void af_ib_addresses(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_IB, IBV_QPT_RC, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_IB, IBV_QPT_RC, UID_CLI);
	struct sib_sockaddr_ib any = { .sib_family = SIB_AF_IB }, dst, gidq;
	struct rdma_ucm_query_addr_resp qa;
	struct rdma_ucm_query q = { .response = (uintptr_t)&qa, .option = RDMA_USER_CM_QUERY_GID };
	struct rdma_ucm_resolve_addr ra = { .id = cid, .timeout_ms = 2000,
					    .dst_size = sizeof(dst) };
	struct rdma_ucm_resolve_route rr = { .id = cid, .timeout_ms = 2000 };
	struct rdma_ucm_event_resp e;
	uint16_t port = (uint16_t)(20000 + rand() % 40000);
	char pd[92];

	any.sib_sid = htobe64(0x00000000013f0000ull | port);
	any.sib_sid_mask = htobe64(~0ull);
	assert_int_equal(bind_addr(f->srv, lid, &any, sizeof(any)), 0);
	assert_int_equal(listen_id(f->srv, lid), 0);
	/* This process's GID: where the listener is. */
	q.id = lid;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), sizeof(qa)), 0);
	memcpy(&gidq, &qa.src_addr, sizeof(gidq));
	assert_int_equal(gidq.sib_family, SIB_AF_IB);
	assert_true(be64toh(gidq.sib_sid) == (0x00000000013f0000ull | port));
	assert_int_equal(gidq.sib_addr[0], 0xfe);
	dst = gidq;
	memcpy(&ra.dst_addr, &dst, sizeof(dst));
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_RESOLVE_ADDR, &ra, sizeof(ra), 0), 0);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_ADDR_RESOLVED);
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0), 0);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_ROUTE_RESOLVED);
	memset(pd, 'x', sizeof(pd));
	pd[91] = 0;
	assert_int_equal(connect_id(f->cli, cid, 0x31, pd), 0); /* 91 bytes fit */
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	assert_int_equal(e.param.conn.private_data_len, 92);
	assert_memory_equal(e.param.conn.private_data, pd, 91);
	destroy_id(f->srv, e.id);
	e = get_event(f->cli);
	assert_int_equal(e.event, UCMA_EV_REJECTED); /* destroyed unanswered: REJ */
	destroy_id(f->cli, cid);
	destroy_id(f->srv, lid);
}

/* The kernel's rdma_cm refuses a command in a state it does not belong to
 * with EINVAL, and the id stays where it was: the right command still
 * works afterwards (provider/cma.c, cma_transition). */
static void commands_need_their_state(void **state)
{
	struct files *f = *state;
	uint32_t lid = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, UID_SRV);
	uint32_t cid = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	struct rdma_ucm_resolve_route r = { .id = cid, .timeout_ms = 2000 };
	struct rdma_ucm_accept acc = { .id = cid };
	struct rdma_ucm_reject rej = { 0 };
	uint16_t port = bind_free(f->srv, lid);
	struct sockaddr_in a = loop4(port);
	struct rdma_ucm_event_resp e;

	/* IDLE: no route to resolve, nothing to connect or accept. */
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &r, sizeof(r), 0), -EINVAL);
	assert_int_equal(connect_id(f->cli, cid, 0x10, NULL), -EINVAL);
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), -EINVAL);
	/* LISTEN: no second bind, no resolving, no connecting. */
	assert_int_equal(listen_id(f->srv, lid), 0);
	assert_int_equal(bind_addr(f->srv, lid, &a, sizeof(a)), -EINVAL);
	assert_int_equal(resolve(f->srv, lid, port), -EINVAL);
	assert_int_equal(connect_id(f->srv, lid, 0x10, NULL), -EINVAL);
	/* ADDR_RESOLVED: no connect before the route, no listen. */
	assert_int_equal(resolve(f->cli, cid, port), 0);
	assert_int_equal(get_event(f->cli).event, UCMA_EV_ADDR_RESOLVED);
	assert_int_equal(connect_id(f->cli, cid, 0x10, NULL), -EINVAL);
	assert_int_equal(listen_id(f->cli, cid), -EINVAL);
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &r, sizeof(r), 0), 0);
	assert_int_equal(get_event(f->cli).event, UCMA_EV_ROUTE_RESOLVED);
	/* CONNECT: once; no second route or address. */
	assert_int_equal(connect_id(f->cli, cid, 0x11, NULL), 0);
	assert_int_equal(connect_id(f->cli, cid, 0x11, NULL), -EINVAL);
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &r, sizeof(r), 0), -EINVAL);
	assert_int_equal(resolve(f->cli, cid, port), -EINVAL);
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_CONNECT_REQUEST);
	assert_int_equal(e.param.conn.qp_num, 0x11); /* the first CONNECT's */
	rej.id = e.id;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_REJECT, &rej, sizeof(rej), 0), 0);
	/* DISCONNECT (rejected): nothing to accept, reject or connect. */
	assert_int_equal(get_event(f->cli).event, UCMA_EV_REJECTED);
	assert_int_equal(cmd(f->cli, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), -EINVAL);
	acc.id = rej.id;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc), 0), -EINVAL);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_REJECT, &rej, sizeof(rej), 0), -EINVAL);
	assert_int_equal(connect_id(f->cli, cid, 0x12, NULL), -EINVAL);
	destroy_id(f->srv, rej.id);
	destroy_id(f->cli, cid);
	destroy_id(f->srv, lid);
}

static void migrate_moves_the_id_and_its_events(void **state)
{
	struct files *f = *state;
	uint32_t id = create_id(f->cli, RDMA_PS_TCP, IBV_QPT_RC, UID_CLI);
	struct rdma_ucm_migrate_resp r;
	struct rdma_ucm_migrate_id m = { .response = (uintptr_t)&r, .id = id,
					 .fd = (uint32_t)f->cli };
	struct pollfd p = { .fd = f->cli, .events = POLLIN };
	struct rdma_ucm_event_resp e;

	assert_int_equal(resolve(f->cli, id, 9), 0);
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(r)), 0);
	assert_int_equal(r.events_reported, 0);
	assert_int_equal(poll(&p, 1, 0), 0); /* the event went along */
	e = get_event(f->srv);
	assert_int_equal(e.event, UCMA_EV_ADDR_RESOLVED);
	assert_int_equal(e.id, id);
	assert_int_equal(destroy_id(f->srv, id), 1);
}

static void ports_are_reserved_as_the_kernels_rdma_cm_does(void **state)
{
	struct files *f = *state;
	uint32_t a = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1);
	uint32_t b = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 2);
	uint32_t c = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 3);
	uint16_t port = bind_free(f->srv, a);
	struct sockaddr_in s = loop4(port), any4 = { .sin_family = AF_INET };
	struct rdma_ucm_set_option o = { .id = b, .level = RDMA_OPTION_ID,
					 .optname = RDMA_OPTION_ID_REUSEADDR,
					 .optlen = sizeof(int) };
	int one = 1;
	struct rdma_ucm_query_addr_resp qa;

	assert_int_equal(bind_addr(f->srv, b, &s, sizeof(s)), -EADDRINUSE);
	destroy_id(f->srv, a);
	destroy_id(f->srv, b);
	/* REUSEADDR on both: they share the port until one listens. */
	a = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1);
	b = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 2);
	o.optval = (uintptr_t)&one;
	o.id = a;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0), 0);
	o.id = b;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0), 0);
	assert_int_equal(bind_addr(f->srv, a, &s, sizeof(s)), 0);
	assert_int_equal(bind_addr(f->srv, b, &s, sizeof(s)), 0);
	/* The kernel's rdma_listen: a REUSEADDR id listens only alone on its
	 * address (cma_check_port without reuse), and loses REUSEADDR. */
	assert_int_equal(listen_id(f->srv, a), -EADDRINUSE);
	destroy_id(f->srv, b);
	assert_int_equal(listen_id(f->srv, a), 0);
	b = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 2);
	o.id = b;
	assert_int_equal(cmd(f->srv, RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0), 0);
	assert_int_equal(bind_addr(f->srv, b, &s, sizeof(s)), -EADDRINUSE);
	/* A wildcard conflicts with a specific address on the port: the
	 * kernel's rdma_cm says EADDRNOTAVAIL. */
	assert_int_equal(bind_addr(f->srv, c, &(struct sockaddr_in){ .sin_family = AF_INET,
								     .sin_port = htons(port) },
				   sizeof(s)),
			 -EADDRNOTAVAIL);
	/* Port 0: one is picked, and QUERY tells it. */
	assert_int_equal(bind_addr(f->srv, c, &any4, sizeof(any4)), 0);
	qa = query_addr(f->srv, c);
	assert_int_not_equal(ntohs(((struct sockaddr_in *)&qa.src_addr)->sin_port), 0);
	assert_true(qa.node_guid == 0); /* a wildcard binds no device */
	/* Binding twice, or an address not of this host, is refused. */
	assert_int_equal(bind_addr(f->srv, c, &any4, sizeof(any4)), -EINVAL);
	destroy_id(f->srv, a);
	destroy_id(f->srv, b);
	destroy_id(f->srv, c);
	a = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1);
	s.sin_addr.s_addr = inet_addr("192.0.2.77"); /* TEST-NET-1: nobody's */
	assert_int_equal(bind_addr(f->srv, a, &s, sizeof(s)), -EADDRNOTAVAIL);
	destroy_id(f->srv, a);
}

/* A TCP socket of the host listening on 127.0.0.1, port picked by the kernel. */
static int tcp_listener(uint16_t *port)
{
	struct sockaddr_in a = loop4(0);
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/*
 * The kernel's rdma_cm keeps port spaces of its own (cma_ps_alloc): a host
 * TCP listener, and ids of the TCP, UDP and IB spaces, all on one port;
 * within a space one id an address, and a wildcard takes every address.
 */
static void port_spaces_are_apart_from_host_ports_and_each_other(void **state)
{
	struct files *f = *state;
	uint16_t port;
	int tcp = tcp_listener(&port);
	struct sockaddr_in s = loop4(port), any4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	uint32_t t1 = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1);
	uint32_t t2 = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 2);
	uint32_t u1 = create_id(f->srv, RDMA_PS_UDP, IBV_QPT_UD, 3);
	uint32_t u2 = create_id(f->srv, RDMA_PS_UDP, IBV_QPT_UD, 4);
	uint32_t i1 = create_id(f->srv, RDMA_PS_IB, IBV_QPT_RC, 5);

	assert_int_equal(bind_addr(f->srv, t1, &s, sizeof(s)), 0);
	assert_int_equal(listen_id(f->srv, t1), 0);
	assert_int_equal(bind_addr(f->srv, u1, &s, sizeof(s)), 0);
	assert_int_equal(bind_addr(f->srv, i1, &s, sizeof(s)), 0);
	assert_int_equal(bind_addr(f->srv, t2, &s, sizeof(s)), -EADDRINUSE);
	assert_int_equal(bind_addr(f->srv, t2, &any4, sizeof(any4)), -EADDRNOTAVAIL);
	assert_int_equal(bind_addr(f->srv, u2, &any4, sizeof(any4)), -EADDRNOTAVAIL);
	destroy_id(f->srv, t1);
	assert_int_equal(bind_addr(f->srv, t2, &s, sizeof(s)), 0);
	destroy_id(f->srv, t2);
	destroy_id(f->srv, u1);
	destroy_id(f->srv, u2);
	destroy_id(f->srv, i1);
	close(tcp);
}

/* Another process's reservation counts, and dies with it (SIGKILL). */
static void another_process_holds_a_port_until_it_dies(void **state)
{
	struct files *f = *state;
	uint32_t t = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1);
	uint32_t u = create_id(f->srv, RDMA_PS_UDP, IBV_QPT_UD, 2);
	uint16_t port = bind_free(f->srv, t);
	struct sockaddr_storage ss;
	struct sockaddr_in s = loop4(port);
	int ready[2], hold[2], st;
	char c;
	pid_t pid;

	destroy_id(f->srv, t);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct cma_resv r;

		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &s, sizeof(s));
		c = (char)(cma_resv_bind(&r, RDMA_PS_TCP, &ss, false, true) == 0 ? 'y' : 'n');
		close(hold[1]);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		/* Until killed; or until the parent's end closes the pipe. */
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(hold[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	t = create_id(f->srv, RDMA_PS_TCP, IBV_QPT_RC, 1);
	assert_int_equal(bind_addr(f->srv, t, &s, sizeof(s)), -EADDRINUSE);
	assert_int_equal(bind_addr(f->srv, u, &s, sizeof(s)), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(bind_addr(f->srv, t, &s, sizeof(s)), 0);
	destroy_id(f->srv, t);
	destroy_id(f->srv, u);
	close(ready[0]);
	close(ready[1]);
	close(hold[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(commands_are_checked),
		cmocka_unit_test(nonblocking_get_event_and_readiness),
		cmocka_unit_test(rc_connection_over_loopback),
		cmocka_unit_test(reject_and_refused),
		cmocka_unit_test(req_waits_for_the_next_listener),
		cmocka_unit_test(ud_through_sidr),
		cmocka_unit_test(sidr_waits_for_a_late_listener),
		cmocka_unit_test(af_ib_addresses),
		cmocka_unit_test(commands_need_their_state),
		cmocka_unit_test(migrate_moves_the_id_and_its_events),
		cmocka_unit_test(ports_are_reserved_as_the_kernels_rdma_cm_does),
		cmocka_unit_test(port_spaces_are_apart_from_host_ports_and_each_other),
		cmocka_unit_test(another_process_holds_a_port_until_it_dies),
	};

	srand((unsigned)getpid());
	return cmocka_run_group_tests_name("ucma", tests, setup, teardown);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * /dev/infiniband/rdma_cm: the files librdmacm opens and the commands it
 * writes to them (<rdma/rdma_user_cm.h>, ABI version 4), answered as the
 * kernel's ucma (drivers/infiniband/core/ucma.c) answers them.
 *
 * A file is an eventfd: its counter is 1 exactly while the file has
 * events queued, so poll and epoll see it readable then and only then.
 * GET_EVENT takes the oldest event, or waits for one (poll on the
 * descriptor, no lock held) unless the descriptor is O_NONBLOCK, when it
 * fails with EAGAIN.  A command answers by copying its response to the
 * address the command carries, at most `out` bytes; write() returns the
 * command's length, or -1 with the errno the kernel would give.
 *
 * A process that exits with ids open sends what destroying them sends
 * (REJ, DREQ, DREP) and withdraws its SA records, from a destructor, as
 * the kernel does when it closes a dead process's files.  A signal that
 * kills at its default action (SIGTERM, SIGINT, SIGHUP, and the crashes
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) does the same first, where
 * the program left it at the default: a helper thread sends (the thread
 * that got the signal may hold any lock), the handler waits for it up to
 * a second, then the signal takes its default course.  SIGKILL cannot be
 * caught: peers of a killed process wait for their retries to run out.
 */
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "base/log.h"
#include "base/thread.h"
#include "mgmt/sa_query.h"
#include "provider/rdma_cm.h"

#include "provider/fs_view.h"
#include "transport/engine.h"

struct ucma sib_ucma;

/* Commands hold it for reading while they run; opening the first file
 * and closing the last hold it for writing (the HCA comes and goes). */
static pthread_rwlock_t life = PTHREAD_RWLOCK_INITIALIZER;

/* The descriptor's own counter, past the C library: ours are the only
 * read(2)/write(2) the file view does not route back to us. */
static void counter_set(int fd, bool readable)
{
	uint64_t v = 1;

	if (readable)
		(void)!syscall(SYS_write, fd, &v, sizeof(v));
	else
		(void)!syscall(SYS_read, fd, &v, sizeof(v));
}

static struct ucma_file *file_of(int fd)
{
	for (struct ucma_file *f = sib_ucma.files; f; f = f->next)
		if (f->fd == fd)
			return f;
	return NULL;
}

/* ---------------------------------------------------------------- ids */

struct ucma_ctx *ucma_ctx_new(struct ucma_file *file, uint16_t ps, uint8_t qp_type, uint64_t uid)
{
	struct ucma_ctx *c = calloc(1, sizeof(*c));
	uint32_t h = 0;

	if (!c)
		return NULL;
	/* The lowest free handle, as the kernel's xarray hands them out
	 * (librdmacm indexes a table with it). */
	for (bool used = true; used; h++) {
		used = false;
		for (struct ucma_ctx *o = sib_ucma.ctxs; o && !used; o = o->next)
			used = o->handle == h;
		if (!used)
			break;
	}
	c->handle = h;
	c->uid = uid;
	c->file = file;
	c->ps = ps;
	c->qp_type = qp_type;
	c->resv.fd = -1;
	c->local_psn = cma_random_psn();
	c->generation = ++sib_ucma.generation;
	c->next = sib_ucma.ctxs;
	sib_ucma.ctxs = c;
	return c;
}

struct ucma_ctx *ucma_ctx_find(uint32_t handle, uint64_t generation)
{
	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next)
		if (c->handle == handle && (!generation || c->generation == generation))
			return c;
	return NULL;
}

static void event_unlink(struct ucma_file *f, struct ucma_event *prev, struct ucma_event *e)
{
	if (prev)
		prev->next = e->next;
	else
		f->head = e->next;
	if (f->tail == e)
		f->tail = prev;
	if (--f->nevents == 0)
		counter_set(f->fd, false);
}

static void event_append(struct ucma_file *f, struct ucma_event *e)
{
	e->next = NULL;
	if (f->tail)
		f->tail->next = e;
	else
		f->head = e;
	f->tail = e;
	if (f->nevents++ == 0)
		counter_set(f->fd, true);
}

void ucma_ctx_free(struct ucma_ctx *ctx)
{
	struct ucma_file *f = ctx->file;
	struct ucma_event *prev = NULL, *e;

	cma_mcast_ctx_gone(ctx); /* its joins leave (the kernel's too) */
	/* Its queued events go; so do the ids its unreported
	 * CONNECT_REQUESTs would have given the program. */
	for (e = f ? f->head : NULL; e;) {
		struct ucma_event *next = e->next;

		if (e->ctx == ctx || e->child == ctx) {
			event_unlink(f, prev, e);
			if (e->ctx == ctx && e->child)
				ucma_ctx_free(e->child);
			free(e);
		} else {
			prev = e;
		}
		e = next;
	}
	if (ctx->listener && ctx->listener->pending)
		ctx->listener->pending--;
	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next)
		if (c->listener == ctx)
			c->listener = NULL;
	cma_teardown(ctx);
	for (struct ucma_ctx **pp = &sib_ucma.ctxs; *pp; pp = &(*pp)->next)
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	free(ctx);
}

void ucma_queue_event(struct ucma_ctx *ctx, struct ucma_ctx *child, uint32_t event, int32_t status,
		      const struct rdma_ucm_conn_param *conn, const struct rdma_ucm_ud_param *ud)
{
	struct ucma_event *e;

	/* The kernel drops events of an id the program has not taken
	 * (no uid before ACCEPT): the ACCEPT fails later instead. */
	if (sib_ucma.exiting || !ctx->file || (!ctx->uid && event != UCMA_EV_CONNECT_REQUEST))
		return;
	e = calloc(1, sizeof(*e));
	if (!e) {
		sib_warn("rdma_cm: out of memory: event %u of id %u lost", event, ctx->handle);
		return;
	}
	e->ctx = ctx;
	e->child = child;
	e->resp.uid = ctx->uid;
	e->resp.id = child ? child->handle : ctx->handle;
	e->resp.event = event;
	e->resp.status = (uint32_t)status;
	if (conn)
		e->resp.param.conn = *conn;
	else if (ud)
		e->resp.param.ud = *ud;
	event_append(ctx->file, e);
}

void ucma_queue_mc_event(struct ucma_ctx *ctx, uint64_t uid, uint32_t id, uint32_t event,
			 int32_t status, const struct rdma_ucm_ud_param *ud, unsigned *reported)
{
	struct ucma_event *e;

	if (sib_ucma.exiting || !ctx->file)
		return;
	e = calloc(1, sizeof(*e));
	if (!e) {
		sib_warn("rdma_cm: out of memory: event %u of id %u lost", event, ctx->handle);
		return;
	}
	e->ctx = ctx;
	e->mc_reported = reported;
	e->resp.uid = uid;
	e->resp.id = id;
	e->resp.event = event;
	e->resp.status = (uint32_t)status;
	if (ud)
		e->resp.param.ud = *ud;
	event_append(ctx->file, e);
}

void ucma_drop_mc_events(struct ucma_file *f, unsigned *reported)
{
	struct ucma_event *prev = NULL, *e = f->head;

	while (e) {
		struct ucma_event *next = e->next;

		if (e->mc_reported == reported) {
			event_unlink(f, prev, e);
			free(e);
		} else {
			prev = e;
		}
		e = next;
	}
}

/* ---------------------------------------------------------------- commands */

struct cmd {
	struct ucma_file *file;
	const uint8_t *in; /* after the header */
	unsigned in_len, out_len;
};

/* The command struct, zero-filled past what the caller wrote. */
static void cmd_in(const struct cmd *c, void *dst, size_t size)
{
	memset(dst, 0, size);
	memcpy(dst, c->in, c->in_len < size ? c->in_len : size);
}

static int respond(const struct cmd *c, uint64_t response, const void *resp, size_t size)
{
	void *dst = (void *)(uintptr_t)response;

	if (c->out_len < size)
		return -ENOSPC;
	if (!dst)
		return -EFAULT;
	memcpy(dst, resp, size);
	return 0;
}

static struct ucma_ctx *ctx_of(const struct cmd *c, uint32_t handle)
{
	struct ucma_ctx *ctx = ucma_ctx_find(handle, 0);

	/* Linux: an id is reached only through the file that owns it. */
	return ctx && ctx->file == c->file ? ctx : NULL;
}

#define CTX_OR_EINVAL(c, h)                                                                        \
	({                                                                                         \
		struct ucma_ctx *ctx_ = ctx_of(c, h);                                              \
		if (!ctx_)                                                                         \
			return -EINVAL;                                                            \
		ctx_;                                                                              \
	})

/* XRC ids connect through the IB port space only, as with the kernel
 * (ucma_get_qp_type takes the program's QP type there alone). */
static bool id_qp_type_ok(uint16_t ps, uint8_t qp_type)
{
	if (qp_type == IBV_QPT_XRC_SEND || qp_type == IBV_QPT_XRC_RECV)
		return ps == RDMA_PS_IB;
	return qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC || qp_type == IBV_QPT_UD;
}

static int cmd_create_id(const struct cmd *c)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	struct ucma_ctx *ctx;
	int rc;

	cmd_in(c, &cmd, sizeof(cmd));
	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	if (cmd.ps != RDMA_PS_TCP && cmd.ps != RDMA_PS_UDP && cmd.ps != RDMA_PS_IB) {
		sib_warn("rdma_create_id: port space 0x%04x is not TCP, UDP or IB%s", cmd.ps,
			 cmd.ps == RDMA_PS_IPOIB ? " (IPoIB needs IPoIB, which softib0 has not)" : "");
		return -EINVAL;
	}
	if (!id_qp_type_ok(cmd.ps, cmd.qp_type)) {
		sib_warn("rdma_create_id: QP type %u is not RC, UC or UD (or, in the IB port "
			 "space, XRC_SEND or XRC_RECV)", cmd.qp_type);
		return -EINVAL;
	}
	ctx = ucma_ctx_new(c->file, cmd.ps, cmd.qp_type, cmd.uid);
	if (!ctx)
		return -ENOMEM;
	resp.id = ctx->handle;
	rc = respond(c, cmd.response, &resp, sizeof(resp));
	if (rc)
		ucma_ctx_free(ctx); /* the program never learns of it */
	return rc;
}

static int cmd_destroy_id(const struct cmd *c)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct ucma_ctx *ctx;
	int rc;

	cmd_in(c, &cmd, sizeof(cmd));
	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	ctx = CTX_OR_EINVAL(c, cmd.id);
	resp.events_reported = ctx->events_reported;
	rc = respond(c, cmd.response, &resp, sizeof(resp));
	ucma_ctx_free(ctx);
	return rc;
}

static int bound_by_program(struct ucma_ctx *ctx, const struct sockaddr *addr, socklen_t len)
{
	int rc = cma_bind(ctx, addr, len);

	if (!rc)
		cma_bound_mark(ctx);
	return rc;
}

static int cmd_bind_ip(const struct cmd *c)
{
	struct rdma_ucm_bind_ip cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	return bound_by_program(CTX_OR_EINVAL(c, cmd.id), (struct sockaddr *)&cmd.addr,
				sizeof(cmd.addr));
}

static int cmd_bind(const struct cmd *c)
{
	struct rdma_ucm_bind cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	if (cmd.addr_size > sizeof(cmd.addr))
		return -EINVAL;
	return bound_by_program(CTX_OR_EINVAL(c, cmd.id), (struct sockaddr *)&cmd.addr,
				cmd.addr_size);
}

static int cmd_resolve_ip(const struct cmd *c)
{
	struct rdma_ucm_resolve_ip cmd;
	struct ucma_ctx *ctx;
	struct sockaddr *src;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	src = (struct sockaddr *)&cmd.src_addr;
	return cma_resolve_addr(&ctx, src, src->sa_family ? cma_addr_len(src) : 0,
				(struct sockaddr *)&cmd.dst_addr,
				cma_addr_len((struct sockaddr *)&cmd.dst_addr));
}

static int cmd_resolve_addr(const struct cmd *c)
{
	struct rdma_ucm_resolve_addr cmd;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	if (cmd.src_size > sizeof(cmd.src_addr) || cmd.dst_size > sizeof(cmd.dst_addr))
		return -EINVAL;
	return cma_resolve_addr(&ctx, (struct sockaddr *)&cmd.src_addr, cmd.src_size,
				(struct sockaddr *)&cmd.dst_addr, cmd.dst_size);
}

static int cmd_resolve_route(const struct cmd *c)
{
	struct rdma_ucm_resolve_route cmd;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	return cma_resolve_route(&ctx);
}

static void copy_addr(void *dst, size_t cap, const struct sockaddr_storage *ss)
{
	socklen_t len = cma_addr_len((const struct sockaddr *)ss);

	memcpy(dst, ss, len < cap ? len : cap);
}

static int cmd_query_route(const struct cmd *c)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_route_resp resp;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	memset(&resp, 0, sizeof(resp));
	resp.node_guid = cma_node_guid_be(ctx);
	resp.port_num = ctx->bound_dev ? 1 : 0;
	resp.ibdev_index = (uint32_t)-1; /* softib0 has no kernel index */
	cma_user_path(ctx, &resp.ib_route[0]);
	resp.num_paths = ctx->have_path ? 1 : 0;
	if (ctx->src.ss_family != SIB_AF_IB)
		copy_addr(&resp.src_addr, sizeof(resp.src_addr), &ctx->src);
	if (ctx->dst.ss_family != SIB_AF_IB)
		copy_addr(&resp.dst_addr, sizeof(resp.dst_addr), &ctx->dst);
	return respond(c, cmd.response, &resp, sizeof(resp));
}

static int cmd_query(const struct cmd *c)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_addr_resp resp;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	if (cmd.option == RDMA_USER_CM_QUERY_PATH) {
		struct {
			struct rdma_ucm_query_path_resp h;
			struct ib_path_rec_data p;
		} pr;
		size_t size = sizeof(pr.h) + (ctx->have_path ? sizeof(pr.p) : 0);

		memset(&pr, 0, sizeof(pr));
		if (c->out_len < sizeof(pr.h))
			return -ENOSPC;
		if (c->out_len < size)
			size = sizeof(pr.h); /* room for no path */
		pr.h.num_paths = size > sizeof(pr.h);
		pr.p.flags = IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL;
		ib_path_record_encode(&ctx->path, (uint8_t *)pr.p.path_rec);
		return respond(c, cmd.response, &pr, size);
	}
	if (cmd.option != RDMA_USER_CM_QUERY_ADDR && cmd.option != RDMA_USER_CM_QUERY_GID)
		return -ENOSYS;
	memset(&resp, 0, sizeof(resp));
	resp.node_guid = cma_node_guid_be(ctx);
	resp.port_num = ctx->bound_dev ? 1 : 0;
	resp.pkey = htobe16(0xffff);
	resp.ibdev_index = (uint32_t)-1;
	if (cmd.option == RDMA_USER_CM_QUERY_GID) {
		struct sib_sockaddr_ib s, d;

		cma_gid_sockaddr(ctx, false, &s);
		cma_gid_sockaddr(ctx, true, &d);
		memcpy(&resp.src_addr, &s, sizeof(s));
		memcpy(&resp.dst_addr, &d, sizeof(d));
		resp.src_size = resp.dst_size = sizeof(s);
	} else {
		copy_addr(&resp.src_addr, sizeof(resp.src_addr), &ctx->src);
		copy_addr(&resp.dst_addr, sizeof(resp.dst_addr), &ctx->dst);
		resp.src_size = (uint16_t)cma_addr_len((struct sockaddr *)&ctx->src);
		resp.dst_size = (uint16_t)cma_addr_len((struct sockaddr *)&ctx->dst);
	}
	return respond(c, cmd.response, &resp, sizeof(resp));
}

static int cmd_connect(const struct cmd *c)
{
	struct rdma_ucm_connect cmd;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	if (!cmd.conn_param.valid)
		return -EINVAL;
	ctx = CTX_OR_EINVAL(c, cmd.id);
	return cma_connect(&ctx, &cmd.conn_param);
}

static int cmd_listen(const struct cmd *c)
{
	struct rdma_ucm_listen cmd;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	return cma_listen(&ctx, (int)cmd.backlog);
}

static int cmd_accept(const struct cmd *c)
{
	struct rdma_ucm_accept cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	return cma_accept(CTX_OR_EINVAL(c, cmd.id), &cmd.conn_param, cmd.uid);
}

static int cmd_reject(const struct cmd *c)
{
	struct rdma_ucm_reject cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	return cma_reject(CTX_OR_EINVAL(c, cmd.id), cmd.reason, cmd.private_data,
			  cmd.private_data_len);
}

static int cmd_disconnect(const struct cmd *c)
{
	struct rdma_ucm_disconnect cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	return cma_disconnect(CTX_OR_EINVAL(c, cmd.id));
}

static int cmd_init_qp_attr(const struct cmd *c)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr resp;
	int rc;

	cmd_in(c, &cmd, sizeof(cmd));
	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	rc = cma_init_qp_attr(CTX_OR_EINVAL(c, cmd.id), cmd.qp_state, &resp);
	return rc ? rc : respond(c, cmd.response, &resp, sizeof(resp));
}

static int cmd_notify(const struct cmd *c)
{
	struct rdma_ucm_notify cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	return cma_notify(CTX_OR_EINVAL(c, cmd.id), cmd.event);
}

static int cmd_set_option(const struct cmd *c)
{
	struct rdma_ucm_set_option cmd;
	struct ucma_ctx *ctx;

	cmd_in(c, &cmd, sizeof(cmd));
	ctx = CTX_OR_EINVAL(c, cmd.id);
	if (!cmd.optval || cmd.optlen > 4096)
		return cmd.optval ? -EINVAL : -EFAULT;
	return cma_set_option(&ctx, cmd.level, cmd.optname, (const void *)(uintptr_t)cmd.optval,
			      cmd.optlen);
}

/* JOIN_IP_MCAST (an IP address) and JOIN_MCAST (any address, flags). */
static int cmd_join_common(const struct cmd *c, uint64_t response, uint64_t uid, uint32_t id,
			   const struct sockaddr *addr, uint16_t flags)
{
	struct rdma_ucm_create_id_resp resp;
	struct ucma_ctx *ctx = CTX_OR_EINVAL(c, id);
	int rc;

	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	rc = cma_mcast_join(&ctx, uid, addr, flags, &resp.id);
	if (rc)
		return rc;
	return respond(c, response, &resp, sizeof(resp));
}

static int cmd_join_ip(const struct cmd *c)
{
	struct rdma_ucm_join_ip_mcast cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	return cmd_join_common(c, cmd.response, cmd.uid, cmd.id, (struct sockaddr *)&cmd.addr,
			       RDMA_MC_JOIN_FLAG_FULLMEMBER);
}

static int cmd_join(const struct cmd *c)
{
	struct rdma_ucm_join_mcast cmd;

	cmd_in(c, &cmd, sizeof(cmd));
	/* The kernel's order: room for the answer, then the address size. */
	if (c->out_len < sizeof(struct rdma_ucm_create_id_resp))
		return -ENOSPC;
	if (!cma_addr_len((struct sockaddr *)&cmd.addr) ||
	    cmd.addr_size != cma_addr_len((struct sockaddr *)&cmd.addr))
		return -EINVAL;
	return cmd_join_common(c, cmd.response, cmd.uid, cmd.id, (struct sockaddr *)&cmd.addr,
			       cmd.join_flags);
}

static int cmd_leave(const struct cmd *c)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	int rc;

	cmd_in(c, &cmd, sizeof(cmd));
	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	rc = cma_mcast_leave(c->file, cmd.id, &resp.events_reported);
	if (rc)
		return rc;
	return respond(c, cmd.response, &resp, sizeof(resp));
}

static int cmd_migrate_id(const struct cmd *c)
{
	struct rdma_ucm_migrate_id cmd;
	struct rdma_ucm_migrate_resp resp;
	struct ucma_file *old;
	struct ucma_ctx *ctx;
	struct ucma_event *prev = NULL, *e;

	cmd_in(c, &cmd, sizeof(cmd));
	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	old = file_of((int)cmd.fd);
	if (!old)
		return -EBADF;
	ctx = ucma_ctx_find(cmd.id, 0);
	if (!ctx || ctx->file != old)
		return -EINVAL;
	/* The id and its queued events move to this file, in order. */
	if (old != c->file) {
		for (e = old->head; e;) {
			struct ucma_event *next = e->next;

			if (e->ctx == ctx) {
				event_unlink(old, prev, e);
				event_append(c->file, e);
			} else {
				prev = e;
			}
			e = next;
		}
		ctx->file = c->file;
		for (struct ucma_ctx *o = sib_ucma.ctxs; o; o = o->next)
			if (o->listener == ctx)
				o->file = c->file;
	}
	resp.events_reported = ctx->events_reported;
	return respond(c, cmd.response, &resp, sizeof(resp));
}

/*
 * A GET_EVENT whose file was closed under it: the kernel's stays asleep
 * holding the file (close does not wake it) until the process ends, and
 * programs count on that (rping's event thread would report an error and
 * exit(-1) while its main thread returns 0).
 */
static void __attribute__((noreturn)) wait_forever(void)
{
	pthread_rwlock_unlock(&life);
	for (;;)
		pause();
}

/* GET_EVENT: the oldest event, waiting for one unless O_NONBLOCK.  The
 * locks are not held while it waits. */
static int cmd_get_event(struct cmd *c, int fd)
{
	struct rdma_ucm_get_event cmd;
	struct ucma_event *e;
	int rc;

	cmd_in(c, &cmd, sizeof(cmd));
	if (c->out_len < sizeof(e->resp))
		return -ENOSPC;
	while (!c->file->head) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (syscall(SYS_fcntl, fd, F_GETFL) & O_NONBLOCK)
			return -EAGAIN;
		sib_cm_unlock(sib_ucma.cm);
		pthread_rwlock_unlock(&life);
		rc = poll(&pfd, 1, -1);
		pthread_rwlock_rdlock(&life);
		if (!sib_ucma.hca || !(c->file = file_of(fd)))
			wait_forever();
		sib_cm_lock(sib_ucma.cm);
		if (rc < 0 && errno == EINTR)
			return -EINTR;
	}
	e = c->file->head;
	rc = respond(c, cmd.response, &e->resp, sizeof(e->resp));
	if (rc)
		return rc;
	event_unlink(c->file, NULL, e);
	e->ctx->events_reported++;
	if (e->mc_reported)
		(*e->mc_reported)++; /* a join's: LEAVE_MCAST reports it too */
	if (e->child) {
		/* The program has the new id now. */
		if (e->ctx->pending)
			e->ctx->pending--;
		e->child->listener = NULL;
	}
	free(e);
	return 0;
}

typedef int (*cmd_fn)(const struct cmd *c);

static const cmd_fn commands[] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = cmd_create_id,
	[RDMA_USER_CM_CMD_DESTROY_ID] = cmd_destroy_id,
	[RDMA_USER_CM_CMD_BIND_IP] = cmd_bind_ip,
	[RDMA_USER_CM_CMD_RESOLVE_IP] = cmd_resolve_ip,
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = cmd_resolve_route,
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = cmd_query_route,
	[RDMA_USER_CM_CMD_CONNECT] = cmd_connect,
	[RDMA_USER_CM_CMD_LISTEN] = cmd_listen,
	[RDMA_USER_CM_CMD_ACCEPT] = cmd_accept,
	[RDMA_USER_CM_CMD_REJECT] = cmd_reject,
	[RDMA_USER_CM_CMD_DISCONNECT] = cmd_disconnect,
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = cmd_init_qp_attr,
	[RDMA_USER_CM_CMD_GET_EVENT] = NULL, /* cmd_get_event: it waits */
	[RDMA_USER_CM_CMD_GET_OPTION] = NULL, /* the kernel has none either */
	[RDMA_USER_CM_CMD_SET_OPTION] = cmd_set_option,
	[RDMA_USER_CM_CMD_NOTIFY] = cmd_notify,
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = cmd_join_ip,
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = cmd_leave,
	[RDMA_USER_CM_CMD_MIGRATE_ID] = cmd_migrate_id,
	[RDMA_USER_CM_CMD_QUERY] = cmd_query,
	[RDMA_USER_CM_CMD_BIND] = cmd_bind,
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = cmd_resolve_addr,
	[RDMA_USER_CM_CMD_JOIN_MCAST] = cmd_join,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Commands that may leave SA records to update once the lock is gone. */
static bool touches_services(uint32_t cmd)
{
	return cmd == RDMA_USER_CM_CMD_DESTROY_ID;
}

/* Commands after which this host's addresses should be known to the SA:
 * a server binds before it tells anyone its port, so its addresses are
 * there before a client asks. */
static bool registers_addrs(uint32_t cmd)
{
	return cmd == RDMA_USER_CM_CMD_BIND_IP || cmd == RDMA_USER_CM_CMD_BIND;
}

/*
 * A MAD a command or the exit sends (DREQ, REJ, DREP) leaves after the ACKs
 * the data path has queued: it joins the link's one queue behind them
 * (docs/architecture.md, the transmit rule).  Hardware acknowledges what
 * it accepted before its consumer can say goodbye, and a peer whose last
 * SEND is still unacknowledged when the DREQ comes sees it flushed
 * (libfabric's verbs;ofi_rxm fails fi_pingpong's final exchange so).
 */
ssize_t sib_ucma_write(int fd, const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;
	struct cmd c;
	int rc;

	if (!buf || len < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	/* The kernel's checks: a whole command, a known one. */
	if (hdr.in + sizeof(hdr) > len || hdr.cmd >= NCOMMANDS) {
		errno = EINVAL;
		return -1;
	}
	if (!commands[hdr.cmd] && hdr.cmd != RDMA_USER_CM_CMD_GET_EVENT) {
		errno = ENOSYS;
		return -1;
	}
	c.in = (const uint8_t *)buf + sizeof(hdr);
	c.in_len = hdr.in;
	c.out_len = hdr.out;
	pthread_rwlock_rdlock(&life);
	if (!sib_ucma.hca) {
		pthread_rwlock_unlock(&life);
		errno = EBADF;
		return -1;
	}
	sib_cm_lock(sib_ucma.cm);
	c.file = file_of(fd);
	if (!c.file)
		rc = -EBADF;
	else if (hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT)
		rc = cmd_get_event(&c, fd);
	else
		rc = commands[hdr.cmd](&c);
	if (sib_ucma.hca)
		sib_cm_unlock(sib_ucma.cm);
	if (touches_services(hdr.cmd) && sib_ucma.hca)
		cma_services_sync();
	if (registers_addrs(hdr.cmd) && !rc && sib_ucma.hca)
		cma_addrs_register(sib_ucma.hca);
	if ((touches_services(hdr.cmd) || registers_addrs(hdr.cmd)) && sib_ucma.hca)
		cma_bound_sync();
	pthread_rwlock_unlock(&life);
	if (rc) {
		errno = -rc;
		return -1;
	}
	return (ssize_t)len;
}

/* ---------------------------------------------------------------- exit */

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int goodbye_pipe[2] = { -1, -1 }; /* struct last_words, to the helper */
static int done_pipe[2] = { -1, -1 };	 /* a byte back once the goodbyes are out */

/* What a fatal signal's handler tells the helper: the signal, and the
 * thread it stopped for good. */
struct last_words {
	pthread_t thread;
	unsigned char sig;
};

/* What destroying every id sends, and the SA records withdrawn; nothing
 * is freed (the process is on its way out).  stopped: the thread a fatal
 * signal stopped (NULL at exit), which may hold any lock: the link sends
 * in its place if it was sending (sib_link_abandoned_by); the CM's lock
 * is waited for at most half a second. */
static void goodbye(const pthread_t *stopped)
{
	struct timespec ts;
	struct sib_hca *hca;

	if (pthread_rwlock_tryrdlock(&life))
		return;
	hca = sib_ucma.hca;
	if (!hca || sib_ucma.exiting) {
		pthread_rwlock_unlock(&life);
		return;
	}
	if (stopped)
		for (unsigned i = 0; i < SIB_NUM_PORTS; i++)
			if (hca->node.mgmt[i].link)
				sib_link_abandoned_by(hca->node.mgmt[i].link, *stopped);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 500000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	/* A thread that holds the lock forever cannot be waited for. */
	if (pthread_mutex_timedlock(&sib_ucma.cm->lock, &ts)) {
		pthread_rwlock_unlock(&life);
		return;
	}
	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next) {
		if (c->cm_id) {
			sib_cm_destroy_id(c->cm_id);
			c->cm_id = NULL;
		}
	}
	cma_services_withdraw();
	cma_bound_withdraw();
	sib_ucma.exiting = true;
	sib_cm_unlock(sib_ucma.cm);
	cma_addrs_unregister(hca);
	pthread_rwlock_unlock(&life);
}

__attribute__((destructor)) static void ucma_at_exit(void)
{
	goodbye(NULL);
}

/* The helper thread (no signals reach it: base/thread.h): the goodbyes
 * for a signal, then word back to the handler. */
static void *goodbye_main(void *arg)
{
	struct last_words w;

	(void)arg;
	while (syscall(SYS_read, goodbye_pipe[0], &w, sizeof(w)) == (long)sizeof(w)) {
		goodbye(&w.thread);
		syscall(SYS_write, done_pipe[1], &w.sig, 1);
	}
	return NULL;
}

static void on_fatal_signal(int sig);

/* Whether our handler is still the one installed for sig. */
static bool ours(int sig)
{
	struct sigaction cur;

	return !sigaction(sig, NULL, &cur) && !(cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_handler == on_fatal_signal;
}

/*
 * The rule: softib changes nothing a program can see of its signals but
 * the handler a query returns.  It installs this handler only for the
 * signals the program left at their default action, when the program
 * first opens /dev/infiniband/rdma_cm; the handler never returns to the
 * program: it has the helper thread send the goodbyes (the interrupted
 * thread may hold any lock; if it was the link's sender, the helper sends
 * in its place), waits for that at most a second, puts the
 * default action back and raises the signal, which ends the process as it
 * would have without softib (same signal, same status, core dump if the
 * signal makes one).  So no system call of the program sees EINTR and no
 * code of the program runs after the signal.  Called by anyone else (a
 * handler the program installed later, chaining to the one it replaced)
 * it does nothing, as SIG_DFL would have been skipped.
 */
static void on_fatal_signal(int sig)
{
	int saved = errno;
	struct last_words w = { .thread = pthread_self(), .sig = (unsigned char)sig };
	unsigned char c;
	struct sigaction dfl;
	struct pollfd pfd;

	if (!ours(sig)) {
		errno = saved;
		return;
	}
	/* One write, below PIPE_BUF: the helper reads it whole. */
	if (syscall(SYS_write, goodbye_pipe[1], &w, sizeof(w)) == (long)sizeof(w)) {
		pfd.fd = done_pipe[0];
		pfd.events = POLLIN;
		pfd.revents = 0;
		/* EINTR: another signal's handler ran; the second is counted
		 * again from there, which stays short. */
		while (syscall(SYS_poll, &pfd, 1, 1000) < 0 && errno == EINTR)
			;
		if (pfd.revents & POLLIN)
			syscall(SYS_read, done_pipe[0], &c, 1);
	}
	/* Blocked in the handler (sa_mask: every signal), the raised signal
	 * is delivered, with its default action, when the handler returns. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	raise(sig);
	errno = saved;
}

static void exit_hooks(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				    SIGABRT };
	pthread_t th;

	if (pipe2(goodbye_pipe, O_CLOEXEC))
		return;
	if (pipe2(done_pipe, O_CLOEXEC | O_NONBLOCK) ||
	    sib_thread_create(&th, goodbye_main, NULL)) {
		syscall(SYS_close, goodbye_pipe[0]);
		syscall(SYS_close, goodbye_pipe[1]);
		goodbye_pipe[0] = goodbye_pipe[1] = -1;
		return;
	}
	pthread_detach(th);
	pthread_setname_np(th, "softib-cm-exit");
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa, cur;

		/* Only where the program left the default (ignored stays
		 * ignored, its own handler stays its own); exit() still says
		 * goodbye through the destructor. */
		if (sigaction(sigs[i], NULL, &cur) || cur.sa_handler != SIG_DFL ||
		    (cur.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sigfillset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

/* ---------------------------------------------------------------- the device */

int sib_ucma_open(int flags)
{
	struct ucma_file *f;
	struct sib_hca *hca;
	int fd, err;

	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return -1;
	}
	hca = sib_hca_get();
	if (!hca) {
		err = errno;
		free(f);
		errno = err ? err : ENODEV;
		return -1;
	}
	if (!hca->node.cm) {
		sib_hca_put(hca);
		free(f);
		errno = ENODEV;
		return -1;
	}
	fd = eventfd(0, (flags & O_CLOEXEC ? EFD_CLOEXEC : 0) |
				(flags & O_NONBLOCK ? EFD_NONBLOCK : 0));
	if (fd < 0) {
		err = errno;
		sib_hca_put(hca);
		free(f);
		errno = err;
		return -1;
	}
	f->fd = fd;
	pthread_rwlock_wrlock(&life);
	if (sib_ucma.hca && sib_ucma.hca != hca)
		sib_warn("rdma_cm: a second HCA in one process; ids stay with the first");
	if (!sib_ucma.hca) {
		static bool listening;

		sib_ucma.hca = hca;
		sib_ucma.cm = hca->node.cm;
		sib_ucma.exiting = false;
		/* The HCA is kept to the process's end (below): hear its
		 * CLIENT_REREGISTER from the first open on. */
		if (!listening) {
			listening = true;
			cma_reregister_listen(hca);
		}
	}
	/* The port stays up from the first open to the process's end, as a
	 * kernel keeps its device: librdmacm opens and closes a file at
	 * start-up (its AF_IB probe), and a port brought up again would be
	 * new to the subnet each time. */
	if (!sib_ucma.keep)
		sib_ucma.keep = sib_hca_get();
	sib_cm_lock(sib_ucma.cm);
	f->next = sib_ucma.files;
	sib_ucma.files = f;
	sib_cm_unlock(sib_ucma.cm);
	pthread_rwlock_unlock(&life);
	pthread_once(&exit_once, exit_hooks);
	return fd;
}

void sib_ucma_close(int fd)
{
	struct sib_hca *hca = NULL, *put;
	struct ucma_file *f = NULL;
	bool last;

	pthread_rwlock_wrlock(&life);
	if (!sib_ucma.hca) {
		pthread_rwlock_unlock(&life);
		return;
	}
	hca = sib_ucma.hca;
	sib_cm_lock(sib_ucma.cm);
	for (struct ucma_file **pp = &sib_ucma.files; *pp; pp = &(*pp)->next)
		if ((*pp)->fd == fd) {
			f = *pp;
			*pp = f->next;
			break;
		}
	if (f) {
		/* The kernel destroys a file's ids when it is closed. */
		for (struct ucma_ctx *c = sib_ucma.ctxs, *next; c; c = next) {
			next = c->next;
			if (c->file == f) {
				ucma_ctx_free(c);
				next = sib_ucma.ctxs; /* the list may have lost others */
			}
		}
		while (f->head) {
			struct ucma_event *e = f->head;

			f->head = e->next;
			free(e);
		}
	}
	last = !sib_ucma.files;
	sib_cm_unlock(sib_ucma.cm);
	pthread_rwlock_unlock(&life);
	if (!f)
		return;
	(void)last;
	cma_services_sync();
	cma_bound_sync();
	free(f);
	put = hca;
	sib_hca_put(put);
}

static ssize_t ucma_read(int fd, void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	(void)len;
	errno = EINVAL; /* the kernel's ucma has no read either */
	return -1;
}

const struct softib_cdev_ops sib_ucma_cdev = {
	.name = SIB_UCMA_NAME,
	.major = SIB_UCMA_MAJOR,
	.minor = SIB_UCMA_MINOR,
	.open = sib_ucma_open,
	.write = sib_ucma_write,
	.read = ucma_read,
	.close = sib_ucma_close,
};

/* fork(): the child has none of the parent's threads or HCA; it starts
 * with no rdma_cm files, and lets go of the parent's port reservations. */
static void atfork_child(void)
{
	for (struct ucma_ctx *c = sib_ucma.ctxs; c; c = c->next)
		if (c->resv.fd >= 0)
			close(c->resv.fd);
	memset(&sib_ucma, 0, sizeof(sib_ucma));
	pthread_rwlock_init(&life, NULL);
	exit_once = PTHREAD_ONCE_INIT;
	/* The helper stayed in the parent: an inherited handler finds no
	 * pipe and lets the signal take its default course at once. */
	for (unsigned i = 0; i < 2; i++) {
		if (goodbye_pipe[i] >= 0)
			syscall(SYS_close, goodbye_pipe[i]);
		if (done_pipe[i] >= 0)
			syscall(SYS_close, done_pipe[i]);
		goodbye_pipe[i] = done_pipe[i] = -1;
	}
}

__attribute__((constructor)) static void ucma_init(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
	if (softib_fs_add_cdev(&sib_ucma_cdev))
		sib_warn("rdma_cm: /dev/infiniband/%s could not be added", SIB_UCMA_NAME);
}

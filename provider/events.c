/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Event records the stock libibverbs code reads: ibv_get_async_event reads
 * 16 bytes from context->async_fd, ibv_get_cq_event 8 bytes from
 * channel->fd (rdma-core's libibverbs/device.c and cmd_cq.c).  We feed both through
 * pipes so that blocking reads, poll() and O_NONBLOCK behave as with the
 * kernel's event files.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "provider/softib.h"
#include "base/log.h"

/* The kernel's ib_uverbs_async_event_desc layout. */
struct softib_async_record {
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};
_Static_assert(sizeof(struct softib_async_record) == 16, "async event record is 16 bytes");

/* The kernel's ib_uverbs_comp_event_desc layout. */
struct softib_comp_record {
	uint64_t cq_handle;
};
_Static_assert(sizeof(struct softib_comp_record) == 8, "completion event record is 8 bytes");

static const char *event_name(enum ibv_event_type type)
{
	return ibv_event_type_str(type);
}

void softib_post_async_event(struct softib_context *sctx, uint64_t element,
			     enum ibv_event_type type)
{
	struct softib_async_record rec = { .element = element, .event_type = (uint32_t)type };
	ssize_t n;

	if (!sctx || sctx->async_wr < 0)
		return;
	/* A pipe write of <= PIPE_BUF bytes is atomic: readers never see half
	 * a record even with several writer threads. */
	do
		n = write(sctx->async_wr, &rec, sizeof(rec));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(rec))
		sib_warn("async event %s dropped: the application does not read its async events (%s)",
			 event_name(type), n < 0 ? strerror(errno) : "short write");
}

/* The event this thread made for the channel it waits on: one slot (a
 * second event of the drain goes through the pipe). */
static __thread struct ibv_comp_channel *own_ch;
static __thread struct ibv_cq *own_cq;

struct ibv_cq *softib_comp_channel_take_own(struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = own_ch == ch ? own_cq : NULL;

	if (cq)
		own_ch = NULL, own_cq = NULL;
	return cq;
}

int softib_comp_channel_notify(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct softib_comp_record rec = { .cq_handle = (uint64_t)(uintptr_t)cq };
	int fd = softib_comp_channel_write_fd(ch);
	ssize_t n;

	if (fd < 0 || !cq)
		return EINVAL;
	/* Its reader drained the packet itself: no write, no read. */
	if (!own_cq && sib_progress_event_for_waiter(to_sctx(ch->context)->hca, ch->fd)) {
		own_ch = ch;
		own_cq = cq;
		return 0;
	}
	do
		n = write(fd, &rec, sizeof(rec));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(rec))
		return 0;
	sib_warn("completion event for CQ %p dropped: channel fd %d: %s", (void *)cq, ch->fd,
		 n < 0 ? strerror(errno) : "short write");
	return n < 0 ? errno : EIO;
}

/* IBA 11.6.3 event classes mapped to libibverbs' numbering. */
static int map_event(enum sib_event ev, enum ibv_event_type *out)
{
	static const struct {
		enum sib_event sib;
		enum ibv_event_type ibv;
	} map[] = {
		{ SIB_EV_CQ_ERR, IBV_EVENT_CQ_ERR },
		{ SIB_EV_QP_FATAL, IBV_EVENT_QP_FATAL },
		{ SIB_EV_QP_REQ_ERR, IBV_EVENT_QP_REQ_ERR },
		{ SIB_EV_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR },
		{ SIB_EV_COMM_EST, IBV_EVENT_COMM_EST },
		{ SIB_EV_SQ_DRAINED, IBV_EVENT_SQ_DRAINED },
		{ SIB_EV_PATH_MIG, IBV_EVENT_PATH_MIG },
		{ SIB_EV_PATH_MIG_ERR, IBV_EVENT_PATH_MIG_ERR },
		{ SIB_EV_DEVICE_FATAL, IBV_EVENT_DEVICE_FATAL },
		{ SIB_EV_PORT_ACTIVE, IBV_EVENT_PORT_ACTIVE },
		{ SIB_EV_PORT_ERR, IBV_EVENT_PORT_ERR },
		{ SIB_EV_LID_CHANGE, IBV_EVENT_LID_CHANGE },
		{ SIB_EV_PKEY_CHANGE, IBV_EVENT_PKEY_CHANGE },
		{ SIB_EV_SM_CHANGE, IBV_EVENT_SM_CHANGE },
		{ SIB_EV_SRQ_ERR, IBV_EVENT_SRQ_ERR },
		{ SIB_EV_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_LIMIT_REACHED },
		{ SIB_EV_QP_LAST_WQE_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED },
		{ SIB_EV_CLIENT_REREGISTER, IBV_EVENT_CLIENT_REREGISTER },
		{ SIB_EV_GID_CHANGE, IBV_EVENT_GID_CHANGE },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (map[i].sib == ev) {
			*out = map[i].ibv;
			return 0;
		}
	}
	return -1;
}

static bool event_is_port_event(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return true;
	default:
		return false;
	}
}

/* The sink of a context: transport objects raise, we write the record the
 * application's ibv_get_async_event will read. */
void softib_event_deliver(struct sib_event_sink *sink, enum sib_event ev, void *obj,
			  unsigned port)
{
	struct softib_context *sctx = softib_container_of(sink, struct softib_context, sink);
	enum ibv_event_type type;

	if (map_event(ev, &type)) {
		sib_warn("unknown transport event %d dropped", (int)ev);
		return;
	}
	/* element: the ibv_cq/ibv_qp/ibv_srq the owner gave as `user`, or the
	 * port number for port events (DEVICE_FATAL carries nothing). */
	if (event_is_port_event(type))
		softib_post_async_event(sctx, type == IBV_EVENT_DEVICE_FATAL ? 0 : port, type);
	else
		softib_post_async_event(sctx, (uint64_t)(uintptr_t)obj, type);
}

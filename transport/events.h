/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Asynchronous events (IBA Vol 1 11.6.3).  The transport raises them on an
 * object; the owner of the object (the provider's context) learns through
 * the sink it attached when it created the object.  The transport knows
 * nothing about libibverbs: the provider maps these to IBV_EVENT_*.
 */
#ifndef SIB_TRANSPORT_EVENTS_H
#define SIB_TRANSPORT_EVENTS_H

enum sib_event {
	SIB_EV_CQ_ERR,
	SIB_EV_QP_FATAL,
	SIB_EV_QP_REQ_ERR,
	SIB_EV_QP_ACCESS_ERR,
	SIB_EV_COMM_EST,
	SIB_EV_SQ_DRAINED,
	SIB_EV_PATH_MIG,
	SIB_EV_PATH_MIG_ERR,
	SIB_EV_DEVICE_FATAL,
	SIB_EV_PORT_ACTIVE,
	SIB_EV_PORT_ERR,
	SIB_EV_LID_CHANGE,
	SIB_EV_PKEY_CHANGE,
	SIB_EV_SM_CHANGE,
	SIB_EV_SRQ_ERR,
	SIB_EV_SRQ_LIMIT_REACHED,
	SIB_EV_QP_LAST_WQE_REACHED,
	SIB_EV_CLIENT_REREGISTER,
	SIB_EV_GID_CHANGE,
};

struct sib_event_sink {
	/* obj is the `user` pointer the owner gave the object; port is set for
	 * port events.  Called from any thread, must not block for long. */
	void (*deliver)(struct sib_event_sink *sink, enum sib_event ev, void *obj, unsigned port);
};

static inline void sib_event_raise(struct sib_event_sink *sink, enum sib_event ev, void *obj,
				   unsigned port)
{
	if (sink && sink->deliver)
		sink->deliver(sink, ev, obj, port);
}

#endif

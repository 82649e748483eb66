/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* provider/events.c: transport events become the 16-byte records that
 * ibv_get_async_event reads, and a full pipe never blocks the HCA. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "provider/softib.h"
#include "base/log.h"

struct record {
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

struct fixture {
	struct softib_context sctx;
	int rd;
};

static int setup(void **state)
{
	static struct fixture f;
	int fds[2];

	memset(&f, 0, sizeof(f));
	if (pipe2(fds, O_NONBLOCK))
		return -1;
	f.rd = fds[0];
	f.sctx.async_wr = fds[1];
	f.sctx.sink.deliver = softib_event_deliver;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->rd);
	close(f->sctx.async_wr);
	return 0;
}

static void object_event_carries_the_object_pointer(void **state)
{
	struct fixture *f = *state;
	int srq_stand_in;
	struct record r;

	sib_event_raise(&f->sctx.sink, SIB_EV_SRQ_LIMIT_REACHED, &srq_stand_in, 0);
	assert_int_equal(read(f->rd, &r, sizeof(r)), sizeof(r));
	assert_int_equal(r.element, (uint64_t)(uintptr_t)&srq_stand_in);
	assert_int_equal(r.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	assert_int_equal(r.reserved, 0);
}

static void port_event_carries_the_port_number(void **state)
{
	struct fixture *f = *state;
	struct record r;

	sib_event_raise(&f->sctx.sink, SIB_EV_PORT_ACTIVE, NULL, 1);
	assert_int_equal(read(f->rd, &r, sizeof(r)), sizeof(r));
	assert_int_equal(r.element, 1);
	assert_int_equal(r.event_type, IBV_EVENT_PORT_ACTIVE);
}

static void every_transport_event_has_an_ibv_event(void **state)
{
	struct fixture *f = *state;
	char log[600];
	struct record r;

	sib_log_capture(log, sizeof(log));
	for (int ev = SIB_EV_CQ_ERR; ev <= SIB_EV_GID_CHANGE; ev++) {
		sib_event_raise(&f->sctx.sink, (enum sib_event)ev, f, 1);
		assert_int_equal(read(f->rd, &r, sizeof(r)), sizeof(r));
	}
	assert_string_equal(log, "");
	sib_event_raise(&f->sctx.sink, (enum sib_event)999, f, 1); /* unknown: dropped, logged */
	assert_int_equal(read(f->rd, &r, sizeof(r)), -1);
	assert_non_null(strstr(log, "unknown transport event"));
	sib_log_capture(NULL, 0);
}

static void full_pipe_drops_the_event_without_blocking(void **state)
{
	struct fixture *f = *state;
	char log[600];
	struct record r;
	int n = 0;

	sib_log_capture(log, sizeof(log));
	/* Fill the pipe: with the write end non-blocking this terminates. */
	while (n < 1 << 20) {
		softib_post_async_event(&f->sctx, 7, IBV_EVENT_QP_FATAL);
		n++;
		if (log[0])
			break;
	}
	assert_non_null(strstr(log, "dropped"));
	sib_log_capture(NULL, 0);
	/* What was queued is whole records. */
	assert_int_equal(read(f->rd, &r, sizeof(r)), sizeof(r));
	assert_int_equal(r.element, 7);
	while (read(f->rd, &r, sizeof(r)) == sizeof(r))
		;
}

static void comp_channel_notify_rejects_foreign_channels(void **state)
{
	struct ibv_comp_channel ch = { .context = NULL, .fd = 0, .refcnt = 0 };
	struct ibv_cq cq;

	(void)state;
	assert_int_equal(softib_comp_channel_notify(&ch, &cq), EINVAL);
	assert_int_equal(softib_comp_channel_notify(NULL, &cq), EINVAL);
	assert_false(softib_comp_channel_is_ours(&ch));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(object_event_carries_the_object_pointer, setup, teardown),
		cmocka_unit_test_setup_teardown(port_event_carries_the_port_number, setup, teardown),
		cmocka_unit_test_setup_teardown(every_transport_event_has_an_ibv_event, setup, teardown),
		cmocka_unit_test_setup_teardown(full_pipe_drops_the_event_without_blocking, setup,
						teardown),
		cmocka_unit_test(comp_channel_notify_rejects_foreign_channels),
	};

	/* The checks read warn lines, whatever SOFTIB_LOG says. */
	sib_log_init();
	sib_log_level_cur = SIB_LOG_WARN;
	return cmocka_run_group_tests_name("provider/events", tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* SOFTIB_CAPTURE over in-memory links, read back with wire/capture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "link/link.h"
#include "base/log.h"
#include "wire/capture.h"

static void ignore(void *arg, const uint8_t *pkt, size_t len, const struct sib_endpoint *from)
{
	(void)pkt, (void)from;
	*(size_t *)arg += len;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void every_packet_sent_and_received_is_recorded_in_order(void **state)
{
	char path[] = "/tmp/softib-capture-test-XXXXXX";
	struct sib_mem_hub *hub = sib_mem_hub_new();
	struct sib_link *a, *b, *cap;
	struct ib_pcap_reader rd;
	struct ib_pcap_record rec;
	uint8_t pkt[300];
	size_t got = 0, len;
	uint8_t *file;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sib_link_mem_open(hub, 4096, &a), 0);
	assert_int_equal(sib_link_mem_open(hub, 4096, &b), 0);
	assert_int_equal(sib_link_capture_wrap(a, path, &cap), 0);

	for (unsigned i = 0; i < 5; i++) { /* sent: 100..104 bytes, first byte i */
		memset(pkt, (int)i, sizeof(pkt));
		assert_int_equal(sib_link_send(cap, pkt, 100 + i, &b->local), 0);
	}
	for (unsigned i = 0; i < 3; i++) { /* received: 200..202 bytes, first byte 0x80+i */
		memset(pkt, (int)(0x80 + i), sizeof(pkt));
		assert_int_equal(sib_link_send(b, pkt, 200 + i, &a->local), 0);
	}
	assert_int_equal(sib_link_poll(cap, 64, ignore, &got), 3);
	assert_int_equal(got, 200 + 201 + 202);
	sib_link_close(cap); /* closes a too, and flushes the file */
	sib_link_close(b);
	sib_mem_hub_free(hub);

	file = slurp(path, &len);
	assert_int_equal(ib_pcap_reader_init(&rd, file, len), 0);
	for (unsigned i = 0; i < 8; i++) {
		bool sent = i < 5;

		assert_int_equal(ib_pcap_next(&rd, &rec), 1);
		assert_null(rec.skip);
		assert_int_equal(rec.port, sent ? IB_PCAP_PORT_SENT : IB_PCAP_PORT_RECEIVED);
		assert_int_equal(rec.len, sent ? 100 + i : 200 + (i - 5));
		assert_int_equal(rec.pkt[0], sent ? i : 0x80 + (i - 5));
		assert_int_equal(rec.pkt[rec.len - 1], rec.pkt[0]);
	}
	assert_int_equal(ib_pcap_next(&rd, &rec), 0);
	free(file);
	unlink(path);
}

static void unwritable_capture_path_fails_with_a_line(void **state)
{
	struct sib_mem_hub *hub = sib_mem_hub_new();
	struct sib_link *a, *cap = (struct sib_link *)1;
	char line[512];

	(void)state;
	assert_int_equal(sib_link_mem_open(hub, 4096, &a), 0);
	sib_log_capture(line, sizeof(line));
	assert_int_equal(sib_link_capture_wrap(a, "/nonexistent-dir/x.pcap", &cap), -ENOENT);
	assert_null(cap);
	assert_non_null(strstr(line, "SOFTIB_CAPTURE=/nonexistent-dir/x.pcap"));
	sib_log_capture(NULL, 0);
	sib_link_close(a); /* still the caller's after a failed wrap */
	sib_mem_hub_free(hub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_packet_sent_and_received_is_recorded_in_order),
		cmocka_unit_test(unwritable_capture_path_fails_with_a_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

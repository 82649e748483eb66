/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Endpoints: parsing, printing, comparing, hashing, sockaddr round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "link/link.h"

static void parse_and_print_round_trip(void **state)
{
	static const char *const ok[][2] = {
		{ "127.0.0.1", "127.0.0.1:4791" },
		{ "10.1.2.3:7000", "10.1.2.3:7000" },
		{ "::1", "[::1]:4791" },
		{ "[::1]", "[::1]:4791" },
		{ "[fe80::1:2]:65535", "[fe80::1:2]:65535" },
		{ "[::ffff:192.0.2.7]:9", "192.0.2.7:9" }, /* mapped IPv4 is IPv4 */
		{ "0.0.0.0:0", "0.0.0.0:0" },
	};
	struct sib_endpoint ep;
	char s[SIB_ENDPOINT_STRLEN];

	(void)state;
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(sib_endpoint_parse(ok[i][0], 4791, &ep), 0);
		assert_string_equal(sib_endpoint_str(&ep, s), ok[i][1]);
	}
}

static void malformed_endpoints_are_rejected(void **state)
{
	static const char *const bad[] = {
		"",	      "localhost", "1.2.3",	"1.2.3.4:",	  "1.2.3.4:65536", "1.2.3.4:-1",
		"1.2.3.4:x", "[::1",	  "[::1]x",	"[::1]:99999",	  "[1.2.3.4]:5",   ":::",
		"1.2.3.4:5:6", "[]:1",	   "1.2.3.4 ", "300.0.0.1",
	};
	struct sib_endpoint ep;

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sib_endpoint_parse(bad[i], 1, &ep) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	assert_int_equal(sib_endpoint_parse(NULL, 1, &ep), -EINVAL);
}

static void equal_endpoints_compare_and_hash_alike(void **state)
{
	struct sib_endpoint a, b, c, d;

	(void)state;
	assert_int_equal(sib_endpoint_parse("192.0.2.1:5", 0, &a), 0);
	assert_int_equal(sib_endpoint_parse("[::ffff:192.0.2.1]:5", 0, &b), 0);
	assert_int_equal(sib_endpoint_parse("192.0.2.1:6", 0, &c), 0);
	assert_int_equal(sib_endpoint_parse("[::1]:5", 0, &d), 0);
	assert_true(sib_endpoint_equal(&a, &b));
	assert_int_equal(sib_endpoint_hash(&a), sib_endpoint_hash(&b));
	assert_false(sib_endpoint_equal(&a, &c));
	assert_false(sib_endpoint_equal(&a, &d));
	assert_int_not_equal(sib_endpoint_hash(&a), sib_endpoint_hash(&c));
	assert_int_equal(sizeof(struct sib_endpoint), 20);
}

static void sockaddr_round_trips_in_both_families(void **state)
{
	struct sib_endpoint v4, v6, back;
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	assert_int_equal(sib_endpoint_parse("192.0.2.1:4791", 0, &v4), 0);
	assert_int_equal(sib_endpoint_parse("[2001:db8::5]:4792", 0, &v6), 0);

	len = sib_endpoint_to_sockaddr(&v4, AF_INET, &ss);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 4791);
	assert_int_equal(sib_endpoint_from_sockaddr((struct sockaddr *)&ss, len, &back), 0);
	assert_true(sib_endpoint_equal(&v4, &back));

	/* IPv4 over an IPv6 socket: mapped, and read back as IPv4. */
	len = sib_endpoint_to_sockaddr(&v4, AF_INET6, &ss);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(sib_endpoint_from_sockaddr((struct sockaddr *)&ss, len, &back), 0);
	assert_true(sib_endpoint_equal(&v4, &back));

	len = sib_endpoint_to_sockaddr(&v6, AF_INET6, &ss);
	assert_int_equal(sib_endpoint_from_sockaddr((struct sockaddr *)&ss, len, &back), 0);
	assert_true(sib_endpoint_equal(&v6, &back));

	/* IPv6 cannot go out of an IPv4 socket; short or foreign sockaddrs fail. */
	assert_int_equal(sib_endpoint_to_sockaddr(&v6, AF_INET, &ss), 0);
	assert_int_equal(sib_endpoint_from_sockaddr((struct sockaddr *)&ss, 4, &back),
			 -EAFNOSUPPORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_and_print_round_trip),
		cmocka_unit_test(malformed_endpoints_are_rejected),
		cmocka_unit_test(equal_endpoints_compare_and_hash_alike),
		cmocka_unit_test(sockaddr_round_trips_in_both_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm's partitions.conf parser and the P_Key tables it gives
 * (fabric/partitions.c): OpenSM's syntax, the default, memberships, the
 * default partition at index 0, and the errors that name their line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/partitions.c"

static struct sib_partitions ps;

static void the_default_is_one_partition_with_every_port_full(void **state)
{
	uint16_t t[16];

	(void)state;
	sib_partitions_default(&ps);
	assert_int_equal(sib_partitions_table(&ps, 0x1234, t, 16), 1);
	assert_int_equal(t[0], 0xffff);
	assert_int_equal(t[1], 0);
}

static void opensm_syntax_with_comments_flags_and_memberships(void **state)
{
	const char *conf =
		"# two tenants and the default partition\n"
		"Default=0x7fff, ipoib : ALL=full, SELF=full ;\n"
		"tenantA = 0x0001 , ipoib, mtu=4, rate=7 :\n"
		"   0x0002c90300000011=full,   # the server\n"
		"   0x0002c90300000022 ;\n"
		"tenantB=0x8002,defmember=full: 0x0002c90300000022, 0x0002c90300000033=limited;\n"
		"both=0x0003:0x0002c90300000033=both;\n";
	char err[160] = "";
	uint16_t t[16];

	(void)state;
	assert_int_equal(sib_partitions_parse(conf, &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.n, 4);
	assert_true(ps.p[1].ipoib);
	/* 0x11: default full, tenantA full. */
	assert_int_equal(sib_partitions_table(&ps, 0x0002c90300000011ull, t, 16), 2);
	assert_int_equal(t[0], 0xffff);
	assert_int_equal(t[1], 0x8001);
	/* 0x22: tenantA limited (no defmember), tenantB full (defmember). */
	assert_int_equal(sib_partitions_table(&ps, 0x0002c90300000022ull, t, 16), 3);
	assert_int_equal(t[1], 0x0001);
	assert_int_equal(t[2], 0x8002);
	/* 0x33: tenantB limited, "both" gives two entries. */
	assert_int_equal(sib_partitions_table(&ps, 0x0002c90300000033ull, t, 16), 4);
	assert_int_equal(t[1], 0x0002);
	assert_int_equal(t[2], 0x8003);
	assert_int_equal(t[3], 0x0003);
	/* A port nobody names: the default partition only. */
	assert_int_equal(sib_partitions_table(&ps, 0x99, t, 16), 1);
}

static void a_port_outside_the_default_partition_has_no_0xffff(void **state)
{
	const char *conf = "only=0x0010 : 0x5=full ;";
	char err[160] = "";
	uint16_t t[16];

	(void)state;
	assert_int_equal(sib_partitions_parse(conf, &ps, err, sizeof(err)), 0);
	assert_int_equal(sib_partitions_table(&ps, 5, t, 16), 1);
	assert_int_equal(t[0], 0x8010);
	assert_int_equal(sib_partitions_table(&ps, 6, t, 16), 0);
	assert_int_equal(t[0], 0);
}

static void definitions_with_one_p_key_merge_and_the_table_is_capped(void **state)
{
	char conf[4096] = "a=0x0001:0x5=full;\nb=0x0001:0x6;\n";
	char err[160] = "";
	uint16_t t[4];

	(void)state;
	for (int i = 2; i < 10; i++)
		snprintf(conf + strlen(conf), sizeof(conf) - strlen(conf), "p%d=0x%04x:ALL;\n", i, i);
	assert_int_equal(sib_partitions_parse(conf, &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.n, 9);
	assert_string_equal(ps.p[0].name, "a");
	assert_int_equal(ps.p[0].nmembers, 2);
	/* 9 memberships wanted, 4 slots. */
	assert_int_equal(sib_partitions_table(&ps, 5, t, 4), 9);
	assert_int_equal(t[0], 0x8001);
	assert_int_equal(t[3], 0x0004);
}

static void errors_name_the_line_and_the_rule(void **state)
{
	char err[160];

	(void)state;
	assert_int_equal(sib_partitions_parse("x=0x0001:ALL;\ny=0x0000:ALL;", &ps, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "line 2: P_Key '0x0000' is not 0x0001..0x7fff");
	assert_int_equal(sib_partitions_parse("x=0x1 ALL;", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: a definition without ':'");
	assert_int_equal(sib_partitions_parse("x=0x1:ALL", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: a definition without ';'");
	assert_int_equal(sib_partitions_parse("\n\nx:ALL;", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 3: partition 'x' needs a P_Key (Name=0x....)");
	assert_int_equal(sib_partitions_parse("x=0x1,bogus:ALL;", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: unknown partition flag 'bogus'");
	assert_int_equal(sib_partitions_parse("x=0x1:0x5=half;", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: membership 'half' is full, limited or both");
	assert_int_equal(sib_partitions_parse("x=0x1:host7;", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: 'host7' is not a port GUID, ALL or SELF");
	assert_int_equal(sib_partitions_parse("# nothing\n", &ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "no partition defined");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_default_is_one_partition_with_every_port_full),
		cmocka_unit_test(opensm_syntax_with_comments_flags_and_memberships),
		cmocka_unit_test(a_port_outside_the_default_partition_has_no_0xffff),
		cmocka_unit_test(definitions_with_one_p_key_merge_and_the_table_is_capped),
		cmocka_unit_test(errors_name_the_line_and_the_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

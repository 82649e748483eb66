/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Directed-route SMPs hop by hop (IBA 14.2.2, C14-9 and C14-13): a request
 * walked from an SM's CA through two switches to a CA and its response
 * walked back, with HopPointer and ReturnPath checked at every hop against
 * values written out here from the rules; then each way a path can be
 * wrong.  Also the switch attribute layouts (14.2.5.4, .10, .12).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "wire/smp.h"

static struct ib_dr_smp request(unsigned hops, const uint8_t *path)
{
	struct ib_dr_smp dr;

	memset(&dr, 0, sizeof(dr));
	dr.BaseVersion = 1;
	dr.MgmtClass = 0x81;
	dr.ClassVersion = 1;
	dr.Method = 1;
	dr.AttributeID = IB_SMP_ATTR_NODE_INFO;
	dr.DrSLID = 0xffff;
	dr.DrDLID = 0xffff;
	dr.HopCount = (uint8_t)hops;
	for (unsigned i = 1; i <= hops; i++)
		dr.InitialPath[i] = path[i - 1];
	return dr;
}

/* SM's CA port 1 -> switch A (in on 3, out on 7) -> switch B (in on 2, out
 * on 5) -> CA X (in on its port 1): InitialPath 1,7,5. */
static void test_three_hops_out_and_back(void **state)
{
	const uint8_t path[] = { 1, 7, 5 };
	struct ib_dr_smp dr = request(3, path);
	const char *why;
	unsigned out = 0;

	(void)state;
	/* C14-9:1 at the SM's CA */
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 1);
	assert_int_equal(dr.HopPointer, 1);
	/* C14-9:2 at switch A, arrived on 3 */
	assert_int_equal(ib_dr_smp_arrive(&dr, true, 8, 3, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 7);
	assert_int_equal(dr.HopPointer, 2);
	assert_int_equal(dr.ReturnPath[1], 3);
	/* C14-9:2 at switch B, arrived on 2 */
	assert_int_equal(ib_dr_smp_arrive(&dr, true, 8, 2, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 5);
	assert_int_equal(dr.HopPointer, 3);
	assert_int_equal(dr.ReturnPath[2], 2);
	/* C14-9:3 at CA X, arrived on its port 1 */
	assert_int_equal(ib_dr_smp_arrive(&dr, false, 1, 1, &out, &why), IB_DR_DELIVER);
	assert_int_equal(dr.HopPointer, 4);
	assert_int_equal(dr.ReturnPath[3], 1);

	/* the response: C14-13:1 at CA X */
	dr.D = 1;
	dr.R = 1;
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 1);
	assert_int_equal(dr.HopPointer, 3);
	/* C14-13:2 at switch B: back out the port the request came in by */
	assert_int_equal(ib_dr_smp_arrive(&dr, true, 8, 5, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 2);
	assert_int_equal(dr.HopPointer, 2);
	/* C14-13:2 at switch A */
	assert_int_equal(ib_dr_smp_arrive(&dr, true, 8, 7, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 3);
	assert_int_equal(dr.HopPointer, 1);
	/* C14-13:3 at the SM's CA */
	assert_int_equal(ib_dr_smp_arrive(&dr, false, 1, 1, &out, &why), IB_DR_DELIVER);
	assert_int_equal(dr.HopPointer, 0);
	/* the paths the SM learns from */
	assert_int_equal(dr.InitialPath[2], 7);
	assert_int_equal(dr.ReturnPath[1], 3);
}

/* One hop: the switch an SM's port is cabled to answers for its port 0. */
static void test_one_hop_to_the_switch_itself(void **state)
{
	const uint8_t path[] = { 1 };
	struct ib_dr_smp dr = request(1, path);
	const char *why;
	unsigned out = 0;

	(void)state;
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 1);
	assert_int_equal(ib_dr_smp_arrive(&dr, true, 36, 17, &out, &why), IB_DR_DELIVER);
	assert_int_equal(dr.ReturnPath[1], 17);
	assert_int_equal(dr.HopPointer, 2);
	dr.D = 1;
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_FORWARD);
	assert_int_equal(out, 17);
	assert_int_equal(ib_dr_smp_arrive(&dr, false, 1, 1, &out, &why), IB_DR_DELIVER);
	assert_int_equal(dr.HopPointer, 0);
}

static void test_hop_count_zero_stays_home(void **state)
{
	struct ib_dr_smp dr = request(0, NULL);
	const char *why;
	unsigned out = 99;

	(void)state;
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_DELIVER);
	assert_int_equal(out, 99);
}

static void expect_drop(struct ib_dr_smp dr, bool sw, unsigned in_port, const char *rule)
{
	const char *why = NULL;
	unsigned out = 0;

	assert_int_equal(ib_dr_smp_arrive(&dr, sw, 8, in_port, &out, &why), IB_DR_DROP);
	assert_non_null(why);
	if (!strstr(why, rule))
		fail_msg("dropped for \"%s\", expected %s", why, rule);
}

static void test_bad_paths_are_dropped_with_their_rule(void **state)
{
	const uint8_t path[] = { 1, 9, 2 };
	struct ib_dr_smp dr = request(3, path);

	(void)state;
	dr.HopPointer = 0; /* nobody applied C14-9:1 */
	expect_drop(dr, true, 1, "C14-9:5");
	dr.HopPointer = 1; /* next hop 9 on an 8-port switch */
	expect_drop(dr, true, 1, "C14-9:2");
	dr.InitialPath[2] = 0; /* port 0 is not a way out */
	expect_drop(dr, true, 1, "C14-9:2");
	dr.InitialPath[2] = 3; /* a CA cannot forward */
	expect_drop(dr, false, 1, "C14-9:2");
	dr.HopPointer = 5; /* past HopCount + 1 */
	expect_drop(dr, true, 1, "C14-9:5");
	dr.HopPointer = 3; /* a LID-routed last segment */
	dr.DrDLID = 7;
	expect_drop(dr, true, 1, "C14-9:3");
	dr.DrDLID = 0xffff;
	dr.HopCount = 64;
	expect_drop(dr, true, 1, "63");

	dr = request(3, path);
	dr.D = 1;
	dr.HopPointer = 3;
	dr.ReturnPath[2] = 12; /* back out a port the switch lacks */
	expect_drop(dr, true, 1, "C14-13:2");
	dr.ReturnPath[2] = 4;
	expect_drop(dr, false, 1, "C14-13:2");
	dr.HopPointer = 1;
	dr.DrSLID = 3;
	expect_drop(dr, false, 1, "C14-13:3");
	dr.HopPointer = 0;
	expect_drop(dr, false, 1, "C14-13:5");
}

static void test_a_response_leaves_only_from_the_end(void **state)
{
	const uint8_t path[] = { 1, 2 };
	struct ib_dr_smp dr = request(2, path);
	const char *why;
	unsigned out;

	(void)state;
	dr.HopPointer = 1; /* a request already on its way */
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_DROP);
	dr.D = 1;
	dr.HopPointer = 2; /* a response not at HopCount + 1 */
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_DROP);
	dr.HopPointer = 3;
	dr.DrSLID = 5;
	assert_int_equal(ib_dr_smp_depart(&dr, &out, &why), IB_DR_DROP);
}

/* Layouts: bytes written out from IBA 14.2.5.4, .10, .12. */
static void test_switch_attributes_on_the_wire(void **state)
{
	struct ib_switch_info si, back;
	struct ib_lft_block lft;
	struct ib_mft_block mft;
	uint8_t w[IB_SMP_DATA_BYTES];

	(void)state;
	memset(&si, 0, sizeof(si));
	si.LinearFDBCap = 0xc000;
	si.MulticastFDBCap = 0x0400;
	si.LinearFDBTop = 0x0012;
	si.DefaultPort = 0xff;
	si.LifeTimeValue = 0x12;
	si.PortStateChange = 1;
	si.LIDsPerPort = 1;
	si.EnhancedPort0 = 0;
	si.MulticastFDBTop = 0xc003;
	memset(w, 0, sizeof(w));
	ib_switch_info_encode(&si, w);
	assert_int_equal(w[0], 0xc0);
	assert_int_equal(w[5], 0x00);
	assert_int_equal(w[4], 0x04);
	assert_int_equal(w[7], 0x12);
	assert_int_equal(w[8], 0xff);
	assert_int_equal(w[11], 0x12 << 3 | 0x04);
	assert_int_equal(w[13], 1);
	assert_int_equal(w[18], 0xc0);
	assert_int_equal(w[19], 0x03);
	ib_switch_info_decode(&back, w);
	assert_int_equal(back.PortStateChange, 1);
	assert_int_equal(back.LifeTimeValue, 0x12);

	for (unsigned i = 0; i < IB_LFT_BLOCK; i++)
		lft.Port[i] = (uint8_t)i;
	ib_lft_block_encode(&lft, w);
	assert_int_equal(w[0], 0);
	assert_int_equal(w[63], 63);

	memset(&mft, 0, sizeof(mft));
	mft.PortMask[0] = 0x8001;
	mft.PortMask[31] = 0x0006;
	ib_mft_block_encode(&mft, w);
	assert_int_equal(w[0], 0x80);
	assert_int_equal(w[1], 0x01);
	assert_int_equal(w[63], 0x06);
	assert_int_equal(ib_mft_mod_position(0x20000005), 2);
	assert_int_equal(ib_mft_mod_block(0x20000105), 0x105);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_hops_out_and_back),
		cmocka_unit_test(test_one_hop_to_the_switch_itself),
		cmocka_unit_test(test_hop_count_zero_stays_home),
		cmocka_unit_test(test_bad_paths_are_dropped_with_their_rule),
		cmocka_unit_test(test_a_response_leaves_only_from_the_end),
		cmocka_unit_test(test_switch_attributes_on_the_wire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

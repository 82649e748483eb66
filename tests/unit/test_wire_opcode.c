/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The opcode table against IBA 9.2 (OpCode field): which opcodes exist,
 * which headers each carries and where, and that every one of them goes
 * through the packet builder and the decoder with exactly that header set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "wire/opcode.h"
#include "wire/packet.h"

#define H(x) IB_HDRBIT(IB_HDR_##x)

/* Headers per operation (bits 4:0) for RC, written out from IBA 9.2 here
 * rather than derived from the table under test. */
static const uint32_t rc_headers[0x1e] = {
	[0x03] = H(IMMDT),	      [0x05] = H(IMMDT),
	[0x06] = H(RETH),	      [0x09] = H(IMMDT),
	[0x0a] = H(RETH),	      [0x0b] = H(RETH) | H(IMMDT),
	[0x0c] = H(RETH),	      [0x0d] = H(AETH),
	[0x0f] = H(AETH),	      [0x10] = H(AETH),
	[0x11] = H(AETH),	      [0x12] = H(AETH) | H(ATOMICACKETH),
	[0x13] = H(ATOMICETH),	      [0x14] = H(ATOMICETH),
	[0x16] = H(IETH),	      [0x17] = H(IETH),
	[0x1c] = H(FETH) | H(RETH),   [0x1d] = H(RETH), /* IBA 1.5 FLUSH, ATOMIC WRITE */
};

static bool rc_op_is_response(unsigned op)
{
	return op >= 0x0d && op <= 0x12;
}

static bool rc_op_has_payload(unsigned op)
{
	return op <= 0x0b || (op >= 0x0d && op <= 0x10) || op == 0x16 || op == 0x17 || op == 0x1d;
}

/* Which opcodes exist, and the headers each must carry. */
static bool expected(uint8_t opcode, uint32_t *headers)
{
	unsigned t = opcode >> 5, op = opcode & 0x1f;

	switch (t) {
	case IB_TRANSPORT_RC:
	case IB_TRANSPORT_XRC:
		if ((op > 0x17 && op != 0x1c && op != 0x1d) || op == 0x15)
			return false;
		*headers = rc_headers[op];
		if (t == IB_TRANSPORT_XRC && !rc_op_is_response(op))
			*headers |= H(XRCETH);
		return true;
	case IB_TRANSPORT_UC:
		if (op > 0x0b)
			return false;
		*headers = rc_headers[op];
		return true;
	case IB_TRANSPORT_RD:
		if (op > 0x15 && op != 0x1c) /* RD has FLUSH but not ATOMIC WRITE */
			return false;
		if (op == 0x15) { /* RESYNC */
			*headers = H(RDETH) | H(DETH);
			return true;
		}
		*headers = rc_headers[op] | H(RDETH) | (rc_op_is_response(op) ? 0 : H(DETH));
		return true;
	case IB_TRANSPORT_UD:
		if (op != 0x04 && op != 0x05)
			return false;
		*headers = rc_headers[op] | H(DETH);
		return true;
	case IB_TRANSPORT_CNP:
		*headers = 0;
		return op == 0x00 || op == 0x01;
	default:
		return false;
	}
}

static void test_every_opcode_is_present_or_reserved_as_iba_says(void **state)
{
	static const char *prefix[8] = { "RC ", "UC ", "RD ", "UD ", "CNP", "XRC ", NULL, NULL };

	(void)state;
	for (unsigned o = 0; o < 256; o++) {
		const struct ib_opcode_info *info = ib_opcode_info((uint8_t)o);
		uint32_t want = 0;

		if (!expected((uint8_t)o, &want)) {
			if (info)
				fail_msg("opcode 0x%02x should be reserved, table has %s", o, info->name);
			continue;
		}
		if (!info)
			fail_msg("opcode 0x%02x missing", o);
		assert_int_equal(info->opcode, o);
		assert_int_equal(info->transport, o >> 5);
		assert_int_equal(strncmp(info->name, prefix[o >> 5], strlen(prefix[o >> 5])), 0);
		if (info->headers != want)
			fail_msg("%s: headers 0x%x, IBA says 0x%x", info->name, info->headers, want);
	}
}

static void test_flags_say_request_or_response_and_payload(void **state)
{
	(void)state;
	for (unsigned o = 0; o < 256; o++) {
		const struct ib_opcode_info *info = ib_opcode_info((uint8_t)o);
		unsigned op = o & 0x1f;

		if (!info || info->transport == IB_TRANSPORT_CNP)
			continue;
		if (info->transport == IB_TRANSPORT_RD && op == 0x15)
			continue;
		assert_int_equal(!!(info->flags & IB_OPF_RESPONSE), rc_op_is_response(op));
		assert_int_equal(!!(info->flags & IB_OPF_REQUEST), !rc_op_is_response(op));
		assert_int_equal(!!(info->flags & IB_OPF_PAYLOAD), rc_op_has_payload(op));
		assert_int_equal(!!(info->flags & IB_OPF_IMM), !!(info->headers & H(IMMDT)));
		assert_int_equal(!!(info->flags & IB_OPF_INV), !!(info->headers & H(IETH)));
		/* Every opcode says where in a message it sits. */
		assert_true(info->flags & (IB_OPF_FIRST | IB_OPF_MIDDLE | IB_OPF_LAST));
	}
	assert_true(ib_opcode_info(IB_OPCODE_CNP)->flags & IB_OPF_CNP);
}

static void test_names_follow_iba(void **state)
{
	static const struct {
		uint8_t opcode;
		const char *name;
	} names[] = {
		{ 0x04, "RC SEND Only" },
		{ 0x65, "UD SEND Only with Immediate" },
		{ 0x0d, "RC RDMA READ Response First" },
		{ 0x11, "RC Acknowledge" },
		{ 0x12, "RC Atomic Acknowledge" },
		{ 0x13, "RC CmpSwap" },
		{ 0x14, "RC FetchAdd" },
		{ 0x16, "RC SEND Last with Invalidate" },
		{ 0x81, "CNP" },
		{ 0x0b, "RC RDMA WRITE Only with Immediate" },
		{ 0x2a, "UC RDMA WRITE Only" },
		{ 0xa0, "XRC SEND First" },
		{ 0x4c, "RD RDMA READ Request" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct ib_opcode_info *info = ib_opcode_info(names[i].opcode);

		assert_non_null(info);
		assert_string_equal(info->name, names[i].name);
	}
}

static void test_reserved_opcodes_have_no_entry(void **state)
{
	static const uint8_t reserved[] = { 0x15, 0x18, 0x1f, 0x2c, 0x2e, 0x30, 0x56, 0x60,
					    0x63, 0x66, 0x7f, 0x82, 0x9f, 0xb5, 0xb8, 0xc0,
					    0xe0, 0xff };

	(void)state;
	for (size_t i = 0; i < sizeof(reserved); i++)
		assert_null(ib_opcode_info(reserved[i]));
}

static void test_eth_order_is_iba_order(void **state)
{
	/* IBA 1.5 puts the FETH after the XRCETH and before the RETH. */
	static const enum ib_hdr want[] = { IB_HDR_RDETH,	IB_HDR_DETH,	     IB_HDR_XRCETH,
					    IB_HDR_FETH,	IB_HDR_RETH,	     IB_HDR_ATOMICETH,
					    IB_HDR_AETH,	IB_HDR_ATOMICACKETH, IB_HDR_IMMDT,
					    IB_HDR_IETH };

	(void)state;
	assert_int_equal(ib_eth_order_count, 10);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(ib_eth_order[i], want[i]);
}

static void test_header_offsets_are_counted_from_the_bth(void **state)
{
	const struct ib_opcode_info *wr = ib_opcode_info(IB_OPCODE(IB_TRANSPORT_RC, 0x0b));
	const struct ib_opcode_info *xwr = ib_opcode_info(IB_OPCODE(IB_TRANSPORT_XRC, 0x0b));
	const struct ib_opcode_info *rdcs = ib_opcode_info(IB_OPCODE(IB_TRANSPORT_RD, 0x13));
	const struct ib_opcode_info *aack = ib_opcode_info(0x12);
	const struct ib_opcode_info *ud = ib_opcode_info(0x65);

	(void)state;
	assert_int_equal(ib_opcode_hdr_offset(wr, IB_HDR_BTH), 0);
	assert_int_equal(ib_opcode_hdr_offset(wr, IB_HDR_RETH), 12);
	assert_int_equal(ib_opcode_hdr_offset(wr, IB_HDR_IMMDT), 28);
	assert_int_equal(ib_opcode_hdr_offset(wr, IB_HDR_AETH), -1);
	assert_int_equal(ib_opcode_hdr_offset(wr, IB_HDR_LRH), -1);
	assert_int_equal(ib_opcode_eth_bytes(wr), 20);

	assert_int_equal(ib_opcode_hdr_offset(xwr, IB_HDR_XRCETH), 12);
	assert_int_equal(ib_opcode_hdr_offset(xwr, IB_HDR_RETH), 16);
	assert_int_equal(ib_opcode_hdr_offset(xwr, IB_HDR_IMMDT), 32);

	assert_int_equal(ib_opcode_hdr_offset(rdcs, IB_HDR_RDETH), 12);
	assert_int_equal(ib_opcode_hdr_offset(rdcs, IB_HDR_DETH), 16);
	assert_int_equal(ib_opcode_hdr_offset(rdcs, IB_HDR_ATOMICETH), 24);
	assert_int_equal(ib_opcode_eth_bytes(rdcs), 40);

	assert_int_equal(ib_opcode_hdr_offset(aack, IB_HDR_AETH), 12);
	assert_int_equal(ib_opcode_hdr_offset(aack, IB_HDR_ATOMICACKETH), 16);

	assert_int_equal(ib_opcode_hdr_offset(ud, IB_HDR_DETH), 12);
	assert_int_equal(ib_opcode_hdr_offset(ud, IB_HDR_IMMDT), 20);

	assert_int_equal(ib_opcode_hdr_offset(NULL, IB_HDR_BTH), -1);
	assert_int_equal(ib_opcode_eth_bytes(NULL), 0);
}

static void fill_fields(struct ib_packet *p, uint8_t opcode, bool grh)
{
	memset(p, 0, sizeof(*p));
	p->lrh.VL = 2;
	p->lrh.SL = 3;
	p->lrh.LNH = grh ? IB_LNH_IBA_GLOBAL : IB_LNH_IBA_LOCAL;
	p->lrh.DLID = 0x1234;
	p->lrh.SLID = 0x5678;
	if (grh) {
		p->grh.TClass = 0x21;
		p->grh.FlowLabel = 0x54321;
		p->grh.HopLmt = 63;
		for (int i = 0; i < 16; i++) {
			p->grh.SGID.raw[i] = (uint8_t)(0xfe - i);
			p->grh.DGID.raw[i] = (uint8_t)(0x11 * i);
		}
	}
	p->bth.OpCode = opcode;
	p->bth.SE = 1;
	p->bth.M = 1;
	p->bth.P_Key = 0xffff;
	p->bth.BECN = 1;
	p->bth.DestQP = 0xabcdef;
	p->bth.A = 1;
	p->bth.PSN = 0x123456;
	p->rdeth.EECnxt = 0x010203;
	p->deth.Q_Key = 0x80010000;
	p->deth.SrcQP = 0x000042;
	p->xrceth.XRCSRQ = 0x00beef;
	p->reth.VA = 0x1122334455667788ull;
	p->reth.R_Key = 0x99aabbcc;
	p->reth.DMALen = 4096;
	p->atomiceth.VA = 0x0102030405060708ull;
	p->atomiceth.R_Key = 0x0a0b0c0d;
	p->atomiceth.SwapDt = 0xfedcba9876543210ull;
	p->atomiceth.CmpDt = 0x0f0e0d0c0b0a0908ull;
	p->aeth.Syndrome = ib_aeth_syndrome(IB_AETH_ACK, 5);
	p->aeth.MSN = 0x777777;
	p->atomicacketh.OrigRemDt = 0xcafef00dcafef00dull;
	p->immdt.ImmDt = 0xdeadbeef;
	p->ieth.R_Key = 0x13572468;
	p->feth.SEL = IB_FETH_SEL_REGION;
	p->feth.PLT = IB_FETH_PLT_GLOBAL | IB_FETH_PLT_PERSISTENT;
}

static void assert_header_at(const uint8_t *bth, const struct ib_opcode_info *info, enum ib_hdr h,
			     const struct ib_packet *p)
{
	uint8_t want[28];
	int off = ib_opcode_hdr_offset(info, h);

	assert_true(off >= 12);
	switch (h) {
	case IB_HDR_RDETH:
		ib_rdeth_encode(&p->rdeth, want);
		break;
	case IB_HDR_DETH:
		ib_deth_encode(&p->deth, want);
		break;
	case IB_HDR_XRCETH:
		ib_xrceth_encode(&p->xrceth, want);
		break;
	case IB_HDR_RETH:
		ib_reth_encode(&p->reth, want);
		break;
	case IB_HDR_ATOMICETH:
		ib_atomiceth_encode(&p->atomiceth, want);
		break;
	case IB_HDR_AETH:
		ib_aeth_encode(&p->aeth, want);
		break;
	case IB_HDR_ATOMICACKETH:
		ib_atomicacketh_encode(&p->atomicacketh, want);
		break;
	case IB_HDR_IMMDT:
		ib_immdt_encode(&p->immdt, want);
		break;
	case IB_HDR_IETH:
		ib_ieth_encode(&p->ieth, want);
		break;
	case IB_HDR_FETH:
		ib_feth_encode(&p->feth, want);
		break;
	default:
		fail();
	}
	assert_memory_equal(bth + off, want, ib_header_desc(h)->bytes);
}

static void assert_eths_equal(const struct ib_packet *a, const struct ib_packet *b, uint32_t hdrs)
{
	if (hdrs & H(RDETH))
		assert_int_equal(a->rdeth.EECnxt, b->rdeth.EECnxt);
	if (hdrs & H(DETH)) {
		assert_int_equal(a->deth.Q_Key, b->deth.Q_Key);
		assert_int_equal(a->deth.SrcQP, b->deth.SrcQP);
	}
	if (hdrs & H(XRCETH))
		assert_int_equal(a->xrceth.XRCSRQ, b->xrceth.XRCSRQ);
	if (hdrs & H(RETH)) {
		assert_true(a->reth.VA == b->reth.VA);
		assert_int_equal(a->reth.R_Key, b->reth.R_Key);
		assert_int_equal(a->reth.DMALen, b->reth.DMALen);
	}
	if (hdrs & H(ATOMICETH)) {
		assert_true(a->atomiceth.VA == b->atomiceth.VA);
		assert_int_equal(a->atomiceth.R_Key, b->atomiceth.R_Key);
		assert_true(a->atomiceth.SwapDt == b->atomiceth.SwapDt);
		assert_true(a->atomiceth.CmpDt == b->atomiceth.CmpDt);
	}
	if (hdrs & H(AETH)) {
		assert_int_equal(a->aeth.Syndrome, b->aeth.Syndrome);
		assert_int_equal(a->aeth.MSN, b->aeth.MSN);
	}
	if (hdrs & H(ATOMICACKETH))
		assert_true(a->atomicacketh.OrigRemDt == b->atomicacketh.OrigRemDt);
	if (hdrs & H(IMMDT))
		assert_int_equal(a->immdt.ImmDt, b->immdt.ImmDt);
	if (hdrs & H(IETH))
		assert_int_equal(a->ieth.R_Key, b->ieth.R_Key);
	if (hdrs & H(FETH)) {
		assert_int_equal(a->feth.SEL, b->feth.SEL);
		assert_int_equal(a->feth.PLT, b->feth.PLT);
	}
}

static void round_trip(uint8_t opcode, bool grh)
{
	const struct ib_opcode_info *info = ib_opcode_info(opcode);
	static const uint8_t data[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	struct ib_packet in, out;
	uint8_t buf[IB_MAX_PACKET];
	uint32_t plen = 0;
	size_t len;
	enum ib_pkt_err err;

	fill_fields(&in, opcode, grh);
	if (info->flags & IB_OPF_PAYLOAD) {
		bool pad_ok = (info->flags & IB_OPF_LAST) && !(info->flags & IB_OPF_MIDDLE);

		plen = pad_ok ? 13 : 16;
	}
	len = ib_packet_encode(&in, data, plen, buf, sizeof(buf));
	assert_int_equal(len, ib_packet_len(in.hdr_len, plen));
	assert_int_equal(in.hdr_len, 8 + (grh ? 40 : 0) + 12 + ib_opcode_eth_bytes(info));

	err = ib_packet_decode(buf, len, &out);
	if (err != IB_PKT_OK)
		fail_msg("%s%s: %s", info->name, grh ? " (GRH)" : "", ib_pkt_err_str(err));
	assert_ptr_equal(out.op, info);
	assert_int_equal(out.headers, info->headers);
	assert_int_equal(out.has_grh, grh);
	assert_int_equal(out.hdr_len, in.hdr_len);
	assert_int_equal(out.payload_len, plen);
	if (plen)
		assert_memory_equal(out.payload, data, plen);
	assert_ptr_equal(out.payload, buf + out.hdr_len);
	assert_int_equal(out.bth.OpCode, opcode);
	assert_int_equal(out.bth.DestQP, in.bth.DestQP);
	assert_int_equal(out.bth.PSN, in.bth.PSN);
	assert_int_equal(out.bth.PadCnt, (4 - plen % 4) % 4);
	assert_int_equal(out.bth.BECN, 1);
	assert_int_equal(out.lrh.DLID, in.lrh.DLID);
	assert_int_equal(out.lrh.PktLen, (len - 2) / 4);
	if (grh) {
		assert_int_equal(out.grh.PayLen, len - 8 - 40 - 2);
		assert_memory_equal(out.grh.DGID.raw, in.grh.DGID.raw, 16);
	}
	assert_eths_equal(&in, &out, info->headers);
	for (unsigned i = 0; i < ib_eth_order_count; i++)
		if (info->headers & IB_HDRBIT(ib_eth_order[i]))
			assert_header_at(buf + 8 + (grh ? 40 : 0), info, ib_eth_order[i], &in);
}

static void test_every_opcode_round_trips_with_exactly_its_headers(void **state)
{
	(void)state;
	for (unsigned o = 0; o < 256; o++) {
		if (!ib_opcode_info((uint8_t)o))
			continue;
		round_trip((uint8_t)o, false);
		round_trip((uint8_t)o, true);
	}
}

static void test_xrc_requests_carry_xrceth_and_responses_do_not(void **state)
{
	(void)state;
	for (unsigned op = 0; op < 0x20; op++) {
		const struct ib_opcode_info *info = ib_opcode_info(IB_OPCODE(IB_TRANSPORT_XRC, op));

		if (!info)
			continue;
		if (info->flags & IB_OPF_REQUEST)
			assert_true(info->headers & H(XRCETH));
		else
			assert_false(info->headers & H(XRCETH));
	}
	assert_false(ib_opcode_info(0xb1)->headers & H(XRCETH)); /* XRC Acknowledge */
	assert_false(ib_opcode_info(0xb2)->headers & H(XRCETH)); /* XRC Atomic Acknowledge */
	assert_false(ib_opcode_info(0xad)->headers & H(XRCETH)); /* XRC READ Response First */
	assert_true(ib_opcode_info(0xac)->headers & H(XRCETH));	 /* XRC READ Request */
}

static void test_ud_carries_deth(void **state)
{
	struct ib_packet in, out;
	uint8_t buf[128];
	size_t len;

	(void)state;
	assert_int_equal(ib_opcode_info(0x64)->headers, H(DETH));
	assert_int_equal(ib_opcode_info(0x65)->headers, H(DETH) | H(IMMDT));
	fill_fields(&in, 0x64, false);
	len = ib_packet_encode(&in, "x", 1, buf, sizeof(buf));
	assert_int_equal(ib_packet_decode(buf, len, &out), IB_PKT_OK);
	assert_int_equal(out.deth.Q_Key, 0x80010000);
	assert_int_equal(out.deth.SrcQP, 0x42);
	/* DETH sits right after the BTH. */
	assert_int_equal(buf[20], 0x80);
	assert_int_equal(buf[27], 0x42);
	assert_int_equal(out.payload[0], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_opcode_is_present_or_reserved_as_iba_says),
		cmocka_unit_test(test_flags_say_request_or_response_and_payload),
		cmocka_unit_test(test_names_follow_iba),
		cmocka_unit_test(test_reserved_opcodes_have_no_entry),
		cmocka_unit_test(test_eth_order_is_iba_order),
		cmocka_unit_test(test_header_offsets_are_counted_from_the_bth),
		cmocka_unit_test(test_every_opcode_round_trips_with_exactly_its_headers),
		cmocka_unit_test(test_xrc_requests_carry_xrceth_and_responses_do_not),
		cmocka_unit_test(test_ud_carries_deth),
	};

	return cmocka_run_group_tests_name("wire_opcode", tests, NULL, NULL);
}

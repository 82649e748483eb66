/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * UD under faults (tests/integration/test_stress.sh): two processes
 * (stress_pair.h) send each other datagrams of every length up to the MTU
 * under `softib run` with SOFTIB_FAULTS.  UD is unreliable: datagrams may
 * be lost (dropped, corrupted and discarded, or no receive posted) or
 * delivered twice (a duplicated packet), but a corrupted one must never be
 * delivered.  Each datagram carries its sequence number, its length and a
 * check of both, and bytes that are a pure function of (seed, side,
 * sequence), so the receiver verifies every byte of every delivery.
 *
 * Passes when no delivery is wrong, at least half of the datagrams arrive,
 * and, when the peer injected corruptions, this side's port counted CRC
 * errors (corruption happened and was caught below the QP).
 *
 * Usage: stress_ud [--count N] [--seed N] [--watchdog SECONDS]
 */
#include <getopt.h>
#include <inttypes.h>

#include "stress_pair.h"

enum {
	GRH = 40,
	MTU = 4096,
	NRECV = 512,
	DEPTH = 32,
	QKEY = 0x11111111,
	HDR = 16,
};

struct dgram_hdr {
	uint32_t seq, len, check, side;
};

struct setup {
	uint16_t lid;
	uint32_t qpn;
};

struct final {
	uint64_t sent, injected_corrupt;
};

static struct {
	uint64_t count;
	uint64_t seed;
	unsigned watchdog;
} cfg = { .count = 20000, .seed = 1, .watchdog = 300 };

static uint32_t dgram_len(int side, uint64_t seq)
{
	uint64_t h = pat_mix(cfg.seed ^ (uint64_t)side << 40 ^ seq * 0x9e37ull);

	return HDR + (uint32_t)(h % (MTU - HDR + 1));
}

static uint32_t dgram_check(int side, uint32_t seq, uint32_t len)
{
	return (uint32_t)pat_mix(cfg.seed * 31 ^ (uint64_t)side << 48 ^ (uint64_t)seq << 16 ^ len);
}

static uint64_t dgram_key(int side, uint64_t seq)
{
	return pat_mix(cfg.seed ^ 0x5544ull << 32 ^ (uint64_t)side << 56 ^ seq);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "watchdog", required_argument, NULL, 'w' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == '?')
			exit(2);
		unsigned long long v = strtoull(optarg, NULL, 0);

		if (c == 'c')
			cfg.count = v;
		else if (c == 's')
			cfg.seed = v;
		else
			cfg.watchdog = (unsigned)v;
	}
	if (!cfg.count || cfg.count > (1u << 30)) {
		fprintf(stderr, "stress_ud: --count 1..2^30\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *smr, *rmr;
	struct setup me = { 0 }, peer;
	struct final mine = { 0 }, theirs;
	uint8_t *sbuf, *rbuf, *seen;
	uint64_t posted = 0, completed = 0, delivered = 0, dups = 0, bad = 0;
	int side, rc = 0;

	parse_args(argc, argv);
	side = pair_start("stress_ud", cfg.watchdog);
	ctx = verbs_open_softib0();
	if (!ctx)
		pair_die("cannot open softib0 (run under `softib run`)");
	me.lid = pair_wait_lid(ctx);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	scq = pd && ch ? ibv_create_cq(ctx, DEPTH * 2, NULL, ch, 0) : NULL;
	rcq = scq ? ibv_create_cq(ctx, NRECV * 2, NULL, ch, 0) : NULL;
	if (!rcq)
		pair_die("alloc_pd / create_cq failed");
	sbuf = aligned_alloc(4096, (size_t)DEPTH * MTU);
	rbuf = aligned_alloc(4096, (size_t)NRECV * (GRH + MTU));
	seen = calloc(cfg.count, 1);
	if (!sbuf || !rbuf || !seen)
		pair_die("out of memory");
	smr = ibv_reg_mr(pd, sbuf, (size_t)DEPTH * MTU, IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_mr(pd, rbuf, (size_t)NRECV * (GRH + MTU), IBV_ACCESS_LOCAL_WRITE);
	if (!smr || !rmr)
		pair_die("reg_mr failed");

	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = NRECV, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		pair_die("create_qp: %s", strerror(errno));
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		pair_die("modify_qp INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		pair_die("modify_qp RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		pair_die("modify_qp RTS");
	for (unsigned i = 0; i < NRECV; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(rbuf + (size_t)i * (GRH + MTU)),
				       .length = GRH + MTU, .lkey = rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *badr;

		if (ibv_post_recv(qp, &wr, &badr))
			pair_die("post_recv failed");
	}
	me.qpn = qp->qp_num;
	pair_xchg(&me, &peer, sizeof(me));
	struct ibv_ah_attr aha = { .dlid = peer.lid, .port_num = 1 };

	ah = ibv_create_ah(pd, &aha);
	if (!ah)
		pair_die("create_ah failed");
	pair_xchg(&me.lid, &peer.lid, sizeof(me.lid)); /* both have receives posted */

	uint64_t quiet_since = 0;
	bool peer_done = false, told = false;
	uint64_t my_hi = 0, reported = 0, peer_hi = 0, credit_t = pair_now_ns();

	while (!told || !peer_done || pair_now_ns() - quiet_since < 300000000ull) {
		struct ibv_wc wc[32];
		int n, got = 0;

		/* UD has no flow control: pace by how far the peer has got
		 * (the highest sequence it saw), or by time if nothing comes. */
		if (posted >= peer_hi + NRECV / 2 && pair_now_ns() - credit_t > 20000000ull) {
			peer_hi += NRECV / 4;
			credit_t = pair_now_ns();
		}
		while (posted < cfg.count && posted - completed < DEPTH && posted < peer_hi + NRECV / 2) {
			uint8_t *b = sbuf + (posted % DEPTH) * MTU;
			uint32_t len = dgram_len(side, posted);
			struct dgram_hdr h = { .seq = (uint32_t)posted, .len = len,
					       .check = dgram_check(side, (uint32_t)posted, len),
					       .side = (uint32_t)side };
			struct ibv_sge sge = { .addr = (uintptr_t)b, .length = len, .lkey = smr->lkey };
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
			struct ibv_send_wr *bads;

			memcpy(b, &h, HDR);
			pat_fill(b + HDR, len - HDR, dgram_key(side, posted), 0);
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = peer.qpn;
			wr.wr.ud.remote_qkey = QKEY;
			if (ibv_post_send(qp, &wr, &bads))
				pair_die("post_send: %s", strerror(errno));
			posted++;
		}
		while ((n = ibv_poll_cq(scq, 32, wc)) > 0) {
			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					pair_die("send %" PRIu64 ": %s", wc[i].wr_id,
						 ibv_wc_status_str(wc[i].status));
			completed += (uint64_t)n;
			got += n;
		}
		while ((n = ibv_poll_cq(rcq, 32, wc)) > 0) {
			for (int i = 0; i < n; i++) {
				uint8_t *b = rbuf + wc[i].wr_id * (GRH + MTU) + GRH;
				struct dgram_hdr h;
				struct ibv_sge sge = { .addr = (uintptr_t)(b - GRH), .length = GRH + MTU,
						       .lkey = rmr->lkey };
				struct ibv_recv_wr wr = { .wr_id = wc[i].wr_id, .sg_list = &sge,
							  .num_sge = 1 }, *badr;

				if (wc[i].status != IBV_WC_SUCCESS)
					pair_die("receive: %s", ibv_wc_status_str(wc[i].status));
				memcpy(&h, b, sizeof(h));
				if (wc[i].byte_len < GRH + HDR || h.side != (uint32_t)(1 - side) ||
				    h.seq >= cfg.count || h.len != wc[i].byte_len - GRH ||
				    h.check != dgram_check(1 - side, h.seq, h.len) ||
				    pat_check(b + HDR, h.len - HDR, dgram_key(1 - side, h.seq), 0) >= 0) {
					pair_say("CORRUPTED datagram delivered: byte_len %u, seq %u, len %u",
						 wc[i].byte_len, h.seq, h.len);
					bad++;
				} else if (seen[h.seq]) {
					dups++;
				} else {
					seen[h.seq] = 1;
					delivered++;
					if (h.seq + 1 > my_hi)
						my_hi = h.seq + 1;
				}
				if (ibv_post_recv(qp, &wr, &badr))
					pair_die("post_recv failed");
			}
			got += n;
			quiet_since = pair_now_ns();
		}
		if (n < 0)
			pair_die("poll_cq failed");
		if (my_hi >= reported + 32 && !told) {
			pair_write(&my_hi, sizeof(my_hi)); /* credit for the peer */
			reported = my_hi;
		}
		if (posted == cfg.count && completed == cfg.count && !told) {
			uint64_t done = UINT64_MAX;

			pair_write(&done, sizeof(done)); /* all sent: the peer may stop once quiet */
			told = true;
		}
		for (;;) {
			/* Credits and the peer's "done", without blocking. */
			struct pollfd pfd = { .fd = pair_sock, .events = POLLIN };
			uint64_t msg;

			if (peer_done || poll(&pfd, 1, 0) <= 0)
				break;
			pair_read(&msg, sizeof(msg));
			if (msg == UINT64_MAX) {
				peer_done = true;
				quiet_since = pair_now_ns();
			} else if (msg > peer_hi) {
				peer_hi = msg;
				credit_t = pair_now_ns();
			}
		}
		if (got)
			continue;
		if (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0))
			pair_die("req_notify_cq failed");
		pair_wait_cq(ch, 20);
	}

	struct sib_port_stats st;
	uint64_t crc = 0;

	if (pair_port_stats(ctx, &st)) {
		crc = st.link.pkt_err[IB_PKT_ERR_VCRC] + st.link.pkt_err[IB_PKT_ERR_ICRC];
		mine.injected_corrupt = st.link.fault[SIB_FAULT_CORRUPT];
	}
	mine.sent = cfg.count;
	pair_xchg(&mine, &theirs, sizeof(mine));
	pair_say("%" PRIu64 " of %" PRIu64 " datagrams delivered (%" PRIu64 " twice), %" PRIu64
		 " wrong; peer corrupted %" PRIu64 ", CRC errors caught here %" PRIu64,
		 delivered, theirs.sent, dups, bad, theirs.injected_corrupt, crc);
	if (bad)
		rc = 1;
	if (delivered * 2 < theirs.sent) {
		pair_say("fewer than half of the datagrams arrived");
		rc = 1;
	}
	if (theirs.injected_corrupt && !crc) {
		pair_say("the peer corrupted datagrams but no CRC error was counted here");
		rc = 1;
	}
	pair_xchg(&rc, &(int){ 0 }, sizeof(rc));
	ibv_destroy_qp(qp);
	ibv_destroy_ah(ah);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	if (!rc)
		pair_say("OK: no corrupted datagram delivered");
	return pair_finish(rc);
}

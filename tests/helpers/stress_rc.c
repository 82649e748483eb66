/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RC under faults (tests/integration/test_stress.sh): two processes
 * (stress_pair.h says why), several RC QPs between them, both sides
 * requesters and responders at once, in mixed SEND (with and without
 * immediate), RDMA WRITE (and WRITE with immediate), RDMA READ, CmpSwap and
 * FetchAdd, run under `softib run` with SOFTIB_FAULTS set.
 *
 * Every op is a pure function of (seed, side, QP, index), so both sides
 * know every op of both: the receiver knows each message's length, bytes
 * and immediate.  What is verified:
 *   - every SEND's bytes, length, opcode and immediate at the receiver;
 *   - every RDMA WRITE by reading the slot back (the READ follows the WRITE
 *     on the same QP; the next WRITE to a slot is fenced behind it);
 *   - every RDMA READ of the peer's read-only pattern region;
 *   - FetchAdd: each side FetchAdds 1 to a counter in the peer's memory
 *     from all its QPs while the peer's CPU adds 2^32 to it: the low 32 bits
 *     returned are exactly 0..N-1, each once, and the final value is
 *     CPU adds * 2^32 + N (an atomic executed twice, or not atomic with the
 *     CPU, breaks one of these);
 *   - CmpSwap: a cell per QP goes 0, 1, 2, ... by CmpSwap(c, c+1); every
 *     eighth compare is wrong on purpose and must change nothing; each
 *     returns the value the cell held;
 *   - every completion is SUCCESS, in order per QP.
 *
 * Usage: stress_rc [--bytes N] [--qps N] [--seed N] [--timeout T]
 *        [--seconds S] [--watchdog SECONDS].  --bytes counts the payload
 *        both sides move together (SEND, WRITE and READ bytes) in one round.
 *        --seconds keeps the same QPs connected and runs rounds (each with
 *        its own ops, every check made again) until S seconds have passed:
 *        a long-lived connection, as an application's is.  Exit 0 when all
 *        checks pass.
 */
#include <getopt.h>
#include <inttypes.h>

#include "stress_pair.h"

enum {
	MAX_QPS = 16,
	DEPTH = 16,	      /* ops outstanding per QP */
	NRECV = 32,	      /* receives posted per QP */
	MAXLEN = 128 * 1024,  /* longest SEND / WRITE / READ */
	NSLOT = 8,	      /* WRITE target slots per QP in the peer */
	RO_LEN = 1024 * 1024, /* read-only pattern region */
	CAS_BAD_EVERY = 8,
};

enum op_type { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READBACK, OP_READ_RO, OP_FADD, OP_CAS };

struct op {
	uint8_t type;
	uint32_t len;
	uint32_t slot;
	uint32_t imm;
	uint64_t key;	 /* pattern key of the data (SEND / WRITE / READBACK) */
	uint64_t ro_off; /* READ_RO */
	uint64_t cmp, swap;
};

struct ops {
	struct op *v;
	uint64_t n;
	uint64_t nrecv; /* ops that consume a receive at the peer */
	uint64_t nfadd;
	uint64_t cas_final;
};

/* What one side tells the other at the start. */
struct setup {
	uint16_t lid;
	uint32_t qpn[MAX_QPS];
	uint32_t psn[MAX_QPS];
	uint64_t tgt_addr, ro_addr, atom_addr;
	uint32_t tgt_rkey, ro_rkey, atom_rkey;
};

/* ... and at the end: the memory its peer's atomics worked on. */
struct final {
	uint64_t counter, cpu_adds;
	uint64_t cas[MAX_QPS];
	uint64_t bytes, ops;
};

/* The peer's atomics target, one per side. */
struct atom_area {
	uint64_t counter;
	uint64_t cas[MAX_QPS];
};

struct qstate {
	struct ibv_qp *qp;
	struct ops mine, peers;
	uint64_t posted, completed;
	uint64_t recv_posted, recv_done;
	uint8_t *opbuf; /* DEPTH * MAXLEN */
	uint8_t *rbuf;	/* NRECV * MAXLEN */
};

static struct {
	uint64_t bytes;
	unsigned nqp;
	uint64_t seed;
	unsigned timeout;
	unsigned watchdog;
	unsigned seconds; /* 0: one round */
} cfg = { .bytes = 64ull << 20, .nqp = 4, .seed = 1, .timeout = 14, .watchdog = 600 };
static uint64_t round_no; /* rounds differ in their ops and data */

static struct qstate qs[MAX_QPS];
static struct setup me, peer;
static struct ibv_mr *op_mr, *recv_mr, *tgt_mr, *ro_mr, *atom_mr;
static uint8_t *tgt, *ro;
static struct atom_area *atom;
static uint8_t *fadd_seen; /* one byte per FetchAdd result value */
static uint64_t fadd_total, cpu_adds;
static uint64_t recv_cursor[MAX_QPS]; /* the peer's next op that consumes a receive */

static uint64_t data_key(int side, unsigned q, uint64_t k)
{
	return pat_mix((cfg.seed + round_no * 0x9e3779b97f4a7c15ull) * 0x100000001b3ull ^
		       (uint64_t)side << 56 ^ (uint64_t)q << 48 ^ k);
}

static uint64_t ro_key(int side)
{
	return pat_mix(cfg.seed ^ 0x524f524f524f0000ull ^ (uint64_t)side);
}

static uint32_t pick_len(uint64_t h)
{
	switch (h & 7) {
	case 0:
		return (uint32_t)(h >> 8) % 65;	  /* tiny, zero included */
	case 1:
		return (uint32_t)(h >> 8) % 4097; /* about one MTU */
	default:
		return (uint32_t)(h >> 8) % (MAXLEN + 1);
	}
}

/* The op list of one side's QP q, the same on both sides. */
static void gen_ops(int side, unsigned q, struct ops *o)
{
	uint64_t target = cfg.bytes / 2 / cfg.nqp, moved = 0, cap = 1024, cas_val = 0, ncas = 0;

	memset(o, 0, sizeof(*o));
	o->v = malloc(cap * sizeof(*o->v));
	if (!o->v)
		pair_die("out of memory");
	for (uint64_t k = 0; moved < target; k++) {
		uint64_t h = pat_mix(data_key(side, q, k) ^ 0x6f70);
		unsigned pick = (unsigned)(h % 100);
		struct op op = { .len = pick_len(h >> 7), .key = data_key(side, q, o->n) };

		if (o->n + 2 >= cap) {
			cap *= 2;
			o->v = realloc(o->v, cap * sizeof(*o->v));
			if (!o->v)
				pair_die("out of memory");
		}
		if (pick < 22) {
			op.type = OP_SEND;
		} else if (pick < 30) {
			op.type = OP_SEND_IMM;
		} else if (pick < 50) {
			op.type = OP_WRITE;
		} else if (pick < 55) {
			op.type = OP_WRITE_IMM;
		} else if (pick < 75) {
			op.type = OP_READ_RO;
			op.ro_off = (h >> 40) % (RO_LEN - MAXLEN);
		} else if (pick < 88) {
			op.type = OP_FADD;
			op.len = 8;
			o->nfadd++;
		} else {
			op.type = OP_CAS;
			op.len = 8;
			op.cmp = cas_val;
			op.swap = cas_val + 1;
			if (++ncas % CAS_BAD_EVERY == 0) {
				op.cmp = cas_val + 1000; /* wrong on purpose: nothing changes */
				op.swap = 0xdeadbeefull;
			} else {
				cas_val++;
			}
		}
		if (op.type == OP_SEND_IMM || op.type == OP_WRITE_IMM)
			op.imm = (uint32_t)h ^ (uint32_t)k;
		if (op.type == OP_WRITE || op.type == OP_WRITE_IMM)
			op.slot = (uint32_t)(o->n / 2 % NSLOT);
		if (op.type == OP_SEND || op.type == OP_SEND_IMM || op.type == OP_WRITE_IMM)
			o->nrecv++;
		if (op.type != OP_FADD && op.type != OP_CAS)
			moved += op.len;
		o->v[o->n++] = op;
		if (op.type == OP_WRITE || op.type == OP_WRITE_IMM) {
			/* Read it back: the same slot, bytes and key. */
			struct op rb = op;

			rb.type = OP_READBACK;
			rb.imm = 0;
			o->v[o->n++] = rb;
			moved += op.len;
		}
	}
	o->cas_final = cas_val;
}

static void *xalloc(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);

	if (!p)
		pair_die("out of memory (%zu bytes)", n);
	memset(p, 0, n);
	return p;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *p, size_t n, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, n, access);

	if (!mr)
		pair_die("reg_mr of %zu bytes: %s", n, strerror(errno));
	return mr;
}

static void connect_qp(struct ibv_qp *qp, uint32_t my_psn, uint32_t dqpn, uint32_t dpsn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		pair_die("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = dqpn;
	a.rq_psn = dpsn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1; /* 0.01 ms */
	a.ah_attr.dlid = peer.lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		pair_die("modify_qp RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = (uint8_t)cfg.timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* forever: the receiver reposts as it goes */
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		pair_die("modify_qp RTS");
}

static void post_recv(unsigned q)
{
	struct qstate *s = &qs[q];

	while (s->recv_posted - s->recv_done < NRECV && s->recv_posted < s->peers.nrecv) {
		uint64_t m = s->recv_posted;
		struct ibv_sge sge = {
			.addr = (uintptr_t)(s->rbuf + (m % NRECV) * MAXLEN),
			.length = MAXLEN,
			.lkey = recv_mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)q << 48 | m, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(s->qp, &wr, &bad))
			pair_die("post_recv QP %u: %s", q, strerror(errno));
		s->recv_posted++;
	}
}

static void post_ops(unsigned q)
{
	struct qstate *s = &qs[q];

	while (s->posted - s->completed < DEPTH && s->posted < s->mine.n) {
		uint64_t k = s->posted;
		const struct op *op = &s->mine.v[k];
		uint8_t *buf = s->opbuf + (k % DEPTH) * MAXLEN;
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = op->len, .lkey = op_mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)q << 48 | k,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr *bad;
		uint64_t slot_addr = peer.tgt_addr + ((uint64_t)q * NSLOT + op->slot) * MAXLEN;

		switch (op->type) {
		case OP_SEND:
		case OP_SEND_IMM:
			pat_fill(buf, op->len, op->key, 0);
			wr.opcode = op->type == OP_SEND ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
			wr.imm_data = htobe32(op->imm);
			break;
		case OP_WRITE:
		case OP_WRITE_IMM:
			pat_fill(buf, op->len, op->key, 0);
			wr.opcode = op->type == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.imm_data = htobe32(op->imm);
			/* The slot may still be read by an earlier READ (IBA 10.8.3.3). */
			wr.send_flags |= IBV_SEND_FENCE;
			wr.wr.rdma.remote_addr = slot_addr;
			wr.wr.rdma.rkey = peer.tgt_rkey;
			break;
		case OP_READBACK:
		case OP_READ_RO:
			memset(buf, 0xa5, op->len);
			wr.opcode = IBV_WR_RDMA_READ;
			wr.wr.rdma.remote_addr =
				op->type == OP_READBACK ? slot_addr : peer.ro_addr + op->ro_off;
			wr.wr.rdma.rkey = op->type == OP_READBACK ? peer.tgt_rkey : peer.ro_rkey;
			break;
		case OP_FADD:
		case OP_CAS:
			memset(buf, 0xa5, 8);
			wr.opcode = op->type == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD
							: IBV_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.remote_addr =
				peer.atom_addr + (op->type == OP_FADD ? offsetof(struct atom_area, counter)
								      : offsetof(struct atom_area, cas) +
										8 * (uint64_t)q);
			wr.wr.atomic.rkey = peer.atom_rkey;
			wr.wr.atomic.compare_add = op->type == OP_FADD ? 1 : op->cmp;
			wr.wr.atomic.swap = op->swap;
			break;
		}
		if (ibv_post_send(s->qp, &wr, &bad))
			pair_die("post_send QP %u op %" PRIu64 ": %s", q, k, strerror(errno));
		s->posted++;
	}
}

static const char *op_name(uint8_t t)
{
	static const char *const n[] = { "SEND", "SEND_IMM", "WRITE", "WRITE_IMM",
					 "READ(back)", "READ", "FETCH_ADD", "CMP_SWAP" };
	return t < 8 ? n[t] : "?";
}

static enum ibv_wc_opcode expect_wc_opcode(uint8_t t)
{
	switch (t) {
	case OP_SEND:
	case OP_SEND_IMM:
		return IBV_WC_SEND;
	case OP_WRITE:
	case OP_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case OP_READBACK:
	case OP_READ_RO:
		return IBV_WC_RDMA_READ;
	case OP_FADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_COMP_SWAP;
	}
}

static void send_done(const struct ibv_wc *wc)
{
	unsigned q = (unsigned)(wc->wr_id >> 48);
	uint64_t k = wc->wr_id & 0xffffffffffffull;
	struct qstate *s = &qs[q];
	const struct op *op;
	uint8_t *buf;
	int64_t bad;

	if (q >= cfg.nqp || k >= s->mine.n)
		pair_die("send completion with unknown wr_id 0x%" PRIx64, wc->wr_id);
	op = &s->mine.v[k];
	if (wc->status != IBV_WC_SUCCESS)
		pair_die("QP %u op %" PRIu64 " (%s, %u bytes): status %s", q, k, op_name(op->type),
			 op->len, ibv_wc_status_str(wc->status));
	if (k != s->completed)
		pair_die("QP %u: op %" PRIu64 " completed before op %" PRIu64, q, k, s->completed);
	if (wc->opcode != expect_wc_opcode(op->type))
		pair_die("QP %u op %" PRIu64 ": completion opcode %d for a %s", q, k, wc->opcode,
			 op_name(op->type));
	buf = s->opbuf + (k % DEPTH) * MAXLEN;
	switch (op->type) {
	case OP_READBACK:
	case OP_READ_RO:
		if (wc->byte_len != op->len)
			pair_die("QP %u op %" PRIu64 " READ: byte_len %u, expected %u", q, k, wc->byte_len,
				 op->len);
		bad = op->type == OP_READBACK ? pat_check(buf, op->len, op->key, 0)
					      : pat_check(buf, op->len, ro_key(1 - pair_side), op->ro_off);
		if (bad >= 0)
			pair_die("QP %u op %" PRIu64 " %s of %u bytes: wrong byte at offset %" PRId64, q,
				 k, op_name(op->type), op->len, bad);
		break;
	case OP_FADD: {
		uint64_t v;

		memcpy(&v, buf, 8);
		uint64_t lo = v & 0xffffffffull;

		if (lo >= fadd_total || fadd_seen[lo])
			pair_die("QP %u op %" PRIu64 " FETCH_ADD returned 0x%" PRIx64
				 " (%s; %" PRIu64 " adds in all)",
				 q, k, v, lo >= fadd_total ? "out of range" : "seen before", fadd_total);
		fadd_seen[lo] = 1;
		break;
	}
	case OP_CAS: {
		uint64_t v;

		memcpy(&v, buf, 8);
		uint64_t held = op->swap == 0xdeadbeefull ? op->cmp - 1000 : op->cmp;

		if (v != held)
			pair_die("QP %u op %" PRIu64 " CMP_SWAP(%" PRIu64 ", %" PRIu64 ") returned %" PRIu64
				 ", the cell held %" PRIu64,
				 q, k, op->cmp, op->swap, v, held);
		break;
	}
	default:
		break;
	}
	s->completed++;
}

static void recv_done(const struct ibv_wc *wc)
{
	unsigned q = (unsigned)(wc->wr_id >> 48);
	uint64_t m = wc->wr_id & 0xffffffffffffull;
	struct qstate *s = &qs[q];

	if (q >= cfg.nqp)
		pair_die("receive completion with unknown wr_id 0x%" PRIx64, wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS)
		pair_die("QP %u receive %" PRIu64 ": status %s", q, m, ibv_wc_status_str(wc->status));
	if (m != s->recv_done)
		pair_die("QP %u: receive %" PRIu64 " completed before receive %" PRIu64, q, m,
			 s->recv_done);
	/* The m-th op of the peer that consumes a receive. */
	const struct op *op = NULL;

	while (recv_cursor[q] < s->peers.n) {
		const struct op *o = &s->peers.v[recv_cursor[q]++];

		if (o->type == OP_SEND || o->type == OP_SEND_IMM || o->type == OP_WRITE_IMM) {
			op = o;
			break;
		}
	}
	if (!op)
		pair_die("QP %u: receive %" PRIu64 " completed but the peer sent no more", q, m);
	bool imm = op->type != OP_SEND;
	enum ibv_wc_opcode want = op->type == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;

	if (wc->opcode != want || wc->byte_len != op->len || !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && be32toh(wc->imm_data) != op->imm))
		pair_die("QP %u receive %" PRIu64 " (%s of %u bytes, imm 0x%x): got opcode %d, %u bytes, "
			 "flags 0x%x, imm 0x%x",
			 q, m, op_name(op->type), op->len, op->imm, wc->opcode, wc->byte_len,
			 wc->wc_flags, be32toh(wc->imm_data));
	if (op->type != OP_WRITE_IMM) {
		int64_t bad = pat_check(s->rbuf + (m % NRECV) * MAXLEN, op->len, op->key, 0);

		if (bad >= 0)
			pair_die("QP %u receive %" PRIu64 " (%u bytes): wrong byte at offset %" PRId64, q,
				 m, op->len, bad);
	}
	s->recv_done++;
}

/* Takes every completion there is; returns how many. */
static int drain(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_wc wc[32];
	int n, got = 0;

	while ((n = ibv_poll_cq(scq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++)
			send_done(&wc[i]);
		got += n;
	}
	if (n < 0)
		pair_die("poll_cq failed");
	while ((n = ibv_poll_cq(rcq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++)
			recv_done(&wc[i]);
		got += n;
	}
	if (n < 0)
		pair_die("poll_cq failed");
	return got;
}

static bool all_done(void)
{
	for (unsigned q = 0; q < cfg.nqp; q++)
		if (qs[q].completed < qs[q].mine.n || qs[q].recv_done < qs[q].peers.nrecv)
			return false;
	return true;
}

static uint64_t progress_sum(void)
{
	uint64_t n = 0;

	for (unsigned q = 0; q < cfg.nqp; q++)
		n += qs[q].completed + qs[q].recv_done;
	return n;
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", required_argument, NULL, 'b' },   { "qps", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },    { "timeout", required_argument, NULL, 't' },
		{ "watchdog", required_argument, NULL, 'w' }, { "seconds", required_argument, NULL, 'S' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		unsigned long long v;

		if (c == '?')
			exit(2);
		v = strtoull(optarg, &end, 0);
		if (*end == 'M')
			v <<= 20;
		else if (*end == 'G')
			v <<= 30;
		switch (c) {
		case 'b':
			cfg.bytes = v;
			break;
		case 'q':
			cfg.nqp = (unsigned)v;
			break;
		case 's':
			cfg.seed = v;
			break;
		case 't':
			cfg.timeout = (unsigned)v;
			break;
		case 'w':
			cfg.watchdog = (unsigned)v;
			break;
		case 'S':
			cfg.seconds = (unsigned)v;
			break;
		}
	}
	if (!cfg.nqp || cfg.nqp > MAX_QPS || cfg.timeout > 31) {
		fprintf(stderr, "stress_rc: --qps 1..%d, --timeout 0..31\n", MAX_QPS);
		exit(2);
	}
}

/* A round's ops, data and counters; the atomics' targets start from 0. */
static void round_setup(int side)
{
	fadd_total = 0;
	cpu_adds = 0;
	for (unsigned q = 0; q < cfg.nqp; q++) {
		struct qstate *s = &qs[q];

		free(s->mine.v);
		free(s->peers.v);
		gen_ops(side, q, &s->mine);
		gen_ops(1 - side, q, &s->peers);
		s->posted = s->completed = s->recv_posted = s->recv_done = 0;
		recv_cursor[q] = 0;
		fadd_total += s->mine.nfadd;
	}
	free(fadd_seen);
	fadd_seen = calloc(fadd_total + 1, 1);
	if (!fadd_seen)
		pair_die("out of memory");
	memset(atom, 0, sizeof(*atom));
}

/* Moves one round's ops; dies on any wrong completion or a stall. */
static void round_run(struct ibv_comp_channel *ch, struct ibv_cq *scq, struct ibv_cq *rcq)
{
	uint64_t last_progress_t = pair_now_ns(), last_progress = 0;

	while (!all_done()) {
		for (unsigned q = 0; q < cfg.nqp; q++) {
			post_recv(q);
			post_ops(q);
		}
		/* The CPU's own atomic adds, racing the peer's FetchAdds. */
		__atomic_fetch_add(&atom->counter, 1ull << 32, __ATOMIC_SEQ_CST);
		cpu_adds++;
		if (drain(scq, rcq))
			continue;
		if (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0))
			pair_die("req_notify_cq failed");
		if (drain(scq, rcq))
			continue; /* arrived before the CQs were armed */
		pair_wait_cq(ch, 50);
		if (progress_sum() != last_progress) {
			last_progress = progress_sum();
			last_progress_t = pair_now_ns();
		} else if (pair_now_ns() - last_progress_t > 60ull * 1000000000) {
			for (unsigned q = 0; q < cfg.nqp; q++)
				pair_say("QP %u: ops %" PRIu64 "/%" PRIu64 " posted %" PRIu64
					 ", receives %" PRIu64 "/%" PRIu64,
					 q, qs[q].completed, qs[q].mine.n, qs[q].posted, qs[q].recv_done,
					 qs[q].peers.nrecv);
			pair_die("no progress for 60 s (round %" PRIu64 ")", round_no + 1);
		}
	}
}

/*
 * After a round both sides are done, so the peer's atomics on our memory
 * are over: each side checks what its own atomics did to the peer's.
 * Returns 0 when all is right; adds the round's bytes and ops to *bytes
 * and *ops.
 */
static int round_check(uint64_t *bytes, uint64_t *ops, uint64_t *fadds)
{
	struct final mine_final, peer_final;
	uint64_t total_bytes = 0, total_ops = 0;
	int rc = 0;

	for (unsigned q = 0; q < cfg.nqp; q++) {
		const struct ops *o = &qs[q].mine;

		total_ops += o->n;
		for (uint64_t k = 0; k < o->n; k++)
			if (o->v[k].type != OP_FADD && o->v[k].type != OP_CAS)
				total_bytes += o->v[k].len;
	}
	/* When the peer is done too, its atomics on our memory are over. */
	pair_xchg(&total_ops, &peer_final.ops, sizeof(total_ops));
	memset(&mine_final, 0, sizeof(mine_final));
	mine_final.counter = __atomic_load_n(&atom->counter, __ATOMIC_SEQ_CST);
	mine_final.cpu_adds = cpu_adds;
	for (unsigned q = 0; q < cfg.nqp; q++)
		mine_final.cas[q] = atom->cas[q];
	mine_final.bytes = total_bytes;
	mine_final.ops = total_ops;
	pair_xchg(&mine_final, &peer_final, sizeof(mine_final));

	for (uint64_t v = 0; v < fadd_total; v++)
		if (!fadd_seen[v])
			pair_die("FETCH_ADD never returned %" PRIu64 " (of %" PRIu64 ")", v, fadd_total);
	if (peer_final.counter != (peer_final.cpu_adds << 32) + fadd_total) {
		pair_say("the peer's counter is 0x%" PRIx64 ", expected %" PRIu64 " CPU adds << 32 + %" PRIu64
			 " FetchAdds",
			 peer_final.counter, peer_final.cpu_adds, fadd_total);
		rc = 1;
	}
	for (unsigned q = 0; q < cfg.nqp; q++)
		if (peer_final.cas[q] != qs[q].mine.cas_final) {
			pair_say("QP %u: the peer's CmpSwap cell is %" PRIu64 ", expected %" PRIu64, q,
				 peer_final.cas[q], qs[q].mine.cas_final);
			rc = 1;
		}
	bytes[0] += total_bytes;
	bytes[1] += peer_final.bytes;
	*ops += total_ops;
	*fadds += fadd_total;
	return rc;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	uint64_t t0, bytes[2] = { 0, 0 }, total_ops = 0, total_fadds = 0, total_cpu_adds = 0;
	int side, rc = 0, go;

	parse_args(argc, argv);
	side = pair_start("stress_rc", cfg.watchdog);
	ctx = verbs_open_softib0();
	if (!ctx)
		pair_die("cannot open softib0 (run under `softib run`)");
	me.lid = pair_wait_lid(ctx);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!pd || !ch)
		pair_die("alloc_pd / create_comp_channel failed");
	scq = ibv_create_cq(ctx, (int)(cfg.nqp * DEPTH * 2), NULL, ch, 0);
	rcq = ibv_create_cq(ctx, (int)(cfg.nqp * NRECV * 2), NULL, ch, 0);
	if (!scq || !rcq)
		pair_die("create_cq failed");

	/* Memory: op buffers, receive buffers, WRITE slots, the read-only
	 * pattern and the atomics' targets. */
	uint8_t *opbuf = xalloc((size_t)cfg.nqp * DEPTH * MAXLEN);
	uint8_t *rbuf = xalloc((size_t)cfg.nqp * NRECV * MAXLEN);

	tgt = xalloc((size_t)cfg.nqp * NSLOT * MAXLEN);
	ro = xalloc(RO_LEN);
	atom = xalloc(sizeof(*atom));
	pat_fill(ro, RO_LEN, ro_key(side), 0);
	op_mr = reg(pd, opbuf, (size_t)cfg.nqp * DEPTH * MAXLEN, IBV_ACCESS_LOCAL_WRITE);
	recv_mr = reg(pd, rbuf, (size_t)cfg.nqp * NRECV * MAXLEN, IBV_ACCESS_LOCAL_WRITE);
	tgt_mr = reg(pd, tgt, (size_t)cfg.nqp * NSLOT * MAXLEN,
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ro_mr = reg(pd, ro, RO_LEN, IBV_ACCESS_REMOTE_READ);
	atom_mr = reg(pd, atom, sizeof(*atom),
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	me.tgt_addr = (uintptr_t)tgt;
	me.tgt_rkey = tgt_mr->rkey;
	me.ro_addr = (uintptr_t)ro;
	me.ro_rkey = ro_mr->rkey;
	me.atom_addr = (uintptr_t)atom;
	me.atom_rkey = atom_mr->rkey;

	for (unsigned q = 0; q < cfg.nqp; q++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = scq,
			.recv_cq = rcq,
			.cap = { .max_send_wr = DEPTH, .max_recv_wr = NRECV, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		qs[q].qp = ibv_create_qp(pd, &ia);
		if (!qs[q].qp)
			pair_die("create_qp: %s", strerror(errno));
		qs[q].opbuf = opbuf + (size_t)q * DEPTH * MAXLEN;
		qs[q].rbuf = rbuf + (size_t)q * NRECV * MAXLEN;
		me.qpn[q] = qs[q].qp->qp_num;
		me.psn[q] = (uint32_t)(pat_mix(cfg.seed ^ (uint64_t)side << 8 ^ q) & 0xffffff);
	}
	pair_xchg(&me, &peer, sizeof(me));
	for (unsigned q = 0; q < cfg.nqp; q++)
		connect_qp(qs[q].qp, me.psn[q], peer.qpn[q], peer.psn[q]);
	if (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0))
		pair_die("req_notify_cq failed");

	t0 = pair_now_ns();
	do {
		int peer_go = 0;

		round_setup(side);
		for (unsigned q = 0; q < cfg.nqp; q++)
			post_recv(q);
		/* Both sides' receives are posted and their atomics' targets
		 * reset before either sends. */
		pair_xchg(&me.lid, &peer.lid, sizeof(me.lid));
		round_run(ch, scq, rcq);
		rc |= round_check(bytes, &total_ops, &total_fadds);
		total_cpu_adds += cpu_adds;
		round_no++;
		/* Another round when neither side found an error and the
		 * parent's clock says there is time (both compute the same). */
		go = !rc && cfg.seconds &&
		     (side == 1 || pair_now_ns() - t0 < (uint64_t)cfg.seconds * 1000000000ull);
		pair_xchg(&go, &peer_go, sizeof(go));
		go = go && peer_go;
	} while (go);
	double secs = (double)(pair_now_ns() - t0) / 1e9;

	struct sib_port_stats st;

	if (pair_port_stats(ctx, &st)) {
		uint64_t crc = st.link.pkt_err[IB_PKT_ERR_VCRC] + st.link.pkt_err[IB_PKT_ERR_ICRC];

		pair_say("%.1f MiB in %" PRIu64 " ops (%" PRIu64 " FetchAdds, %" PRIu64
			 " CPU adds) in %.2f s, %" PRIu64 " round%s on the same QPs; injected drop=%" PRIu64
			 " dup=%" PRIu64 " reorder=%" PRIu64 " corrupt=%" PRIu64 " delay=%" PRIu64
			 "; received CRC errors=%" PRIu64,
			 (double)bytes[0] / (1 << 20), total_ops, total_fadds, total_cpu_adds, secs,
			 round_no, round_no == 1 ? "" : "s", st.link.fault[SIB_FAULT_DROP],
			 st.link.fault[SIB_FAULT_DUP], st.link.fault[SIB_FAULT_REORDER],
			 st.link.fault[SIB_FAULT_CORRUPT], st.link.fault[SIB_FAULT_DELAY], crc);
		pair_say("link: sent %" PRIu64 " packets, received %" PRIu64 "; dropped: rx queue full %" PRIu64
			 ", no tx buffer %" PRIu64,
			 st.link.tx_packets, st.link.rx_packets,
			 st.link.drop[SIB_LINK_DROP_RX_QUEUE_FULL], st.link.drop[SIB_LINK_DROP_TX_NO_BUFFER]);
	}
	/* Nobody tears down while the other may still answer. */
	pair_xchg(&rc, &(int){ 0 }, sizeof(rc));
	for (unsigned q = 0; q < cfg.nqp; q++)
		ibv_destroy_qp(qs[q].qp);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_destroy_comp_channel(ch);
	ibv_dereg_mr(op_mr);
	ibv_dereg_mr(recv_mr);
	ibv_dereg_mr(tgt_mr);
	ibv_dereg_mr(ro_mr);
	ibv_dereg_mr(atom_mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	if (!rc)
		pair_say("OK: %.1f MiB verified (both sides together %.1f MiB)",
			 (double)bytes[0] / (1 << 20), (double)(bytes[0] + bytes[1]) / (1 << 20));
	return pair_finish(rc);
}

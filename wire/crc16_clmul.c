/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * VCRC CRC-16 by carry-less multiplication (PCLMULQDQ), after Intel's "Fast
 * CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009).
 *
 * Reflected CRC arithmetic in xmm registers.  A 16-byte block loaded little
 * endian holds message bit i (bit 0 of byte 0 first) in register bit i, the
 * coefficient of x^(127-i).  A 64-bit lane likewise holds x^(63-i) in bit i,
 * so a polynomial c of degree < 64 lives in a lane as bitrev64(c).  For two
 * lanes A and B, PCLMULQDQ gives a 128-bit register whose polynomial is
 * A*B*x (the product lands one bit short of the top), hence the "-1" below.
 *
 * Folding a 128-bit state S = H*x^64 + L forward by D bits:
 *   S*x^D = H*x^(D+64) + L*x^D == clmul(H, x^(D+63) mod P) ^ clmul(L, x^(D-1) mod P)
 * Eight states run side by side (128 bytes per round, D = 1024) to hide the
 * multiplier latency; they are then folded into one, then 16-byte blocks
 * one at a time (D = 128).  Where VPCLMULQDQ exists, four 512-bit registers
 * hold sixteen states (256 bytes per round, D = 2048), about twice as fast.
 *
 * Reduction of the final S to the CRC register S*x^16 mod P:
 *   1. T = clmul(H, x^63 mod P) ^ L            degree < 80
 *   2. V = T.hi ^ clmul(T.lo, x^63 mod P).hi   degree < 64, V == S (mod P)
 *   3. Barrett: q = floor(V*x^16 / P) = V ^ floor(V*mu' / x^64), where
 *      mu = floor(x^80 / P) = x^64 + mu'; the CRC is the low 16
 *      coefficients of q*P.  Exact in GF(2) for degree V < 64.
 * The constants are computed once at load time by ib_crc16_clmul_init() from
 * P alone (x^k mod P by shifting; mu by long division).
 */
#include <stdbool.h>
#include <string.h>

#include "wire/crc_impl.h"

#if defined(__x86_64__)

#include <immintrin.h>

/* P = x^16 + x^12 + x^3 + x + 1, bit j = coefficient of x^j. */
#define CRC16_POLY 0x1100Bu

struct lanes {
	uint64_t lo, hi; /* multiplies the state's low lane (H) and high lane (L) */
};

static struct {
	struct lanes fold[17]; /* fold[m]: forward by m * 128 bits */
	uint64_t x63;	      /* lane(x^63 mod P) */
	uint64_t mu;	      /* lane(mu') */
	uint64_t poly;	      /* lane(P) */
} k;

static uint64_t bitrev64(uint64_t v)
{
	uint64_t r = 0;

	for (int i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/* x^n mod P, bit j = coefficient of x^j. */
static uint32_t xpow_mod(unsigned int n)
{
	uint32_t r = 1;

	while (n--) {
		r <<= 1;
		if (r & 0x10000)
			r ^= CRC16_POLY;
	}
	return r;
}

void ib_crc16_clmul_init(void)
{
	unsigned __int128 rem = (unsigned __int128)1 << 80;
	uint64_t mu = 0; /* floor(x^80 / P) without its x^64 term */

	for (int i = 80; i >= 16; i--)
		if ((rem >> i) & 1) {
			rem ^= (unsigned __int128)CRC16_POLY << (i - 16);
			if (i - 16 < 64)
				mu |= (uint64_t)1 << (i - 16);
		}
	for (unsigned int m = 1; m <= 16; m++) {
		k.fold[m].lo = bitrev64(xpow_mod(128 * m + 63));
		k.fold[m].hi = bitrev64(xpow_mod(128 * m - 1));
	}
	k.x63 = bitrev64(xpow_mod(63));
	k.mu = bitrev64(mu);
	k.poly = bitrev64(CRC16_POLY);
}

#define CLMUL_FN __attribute__((target("pclmul,sse4.1")))
#define FN(name) name##_sse
#include "wire/crc16_clmul_body.h"
#undef CLMUL_FN
#undef FN

#define CLMUL_FN __attribute__((target("pclmul,sse4.1,avx")))
#define FN(name) name##_avx
#include "wire/crc16_clmul_body.h"
#undef CLMUL_FN
#undef FN

#define VPCLMUL_FN                                                                              \
	__attribute__((target("pclmul,sse4.1,avx,avx2,avx512f,avx512vl,avx512bw,vpclmulqdq")))

VPCLMUL_FN static inline __m512i kload512(const struct lanes *l)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)l->hi, (long long)l->lo));
}

/* a ^ fold(s, kk) in one ternary-logic XOR */
VPCLMUL_FN static inline __m512i fold512_into(__m512i a, __m512i s, __m512i kk)
{
	return _mm512_ternarylogic_epi64(a, _mm512_clmulepi64_epi128(s, kk, 0x00),
					 _mm512_clmulepi64_epi128(s, kk, 0x11), 0x96);
}

VPCLMUL_FN static uint16_t crc16_clmul_avx512(uint16_t reg, const uint8_t *p, size_t len)
{
	__m512i z0, z1, z2, z3, k16;
	__m128i s, x[4];

	if (len < 256)
		return crc16_clmul_avx(reg, p, len);
	k16 = kload512(&k.fold[16]);
	/* The initial register is XORed into the first message bits. */
	z0 = _mm512_xor_si512(_mm512_loadu_si512(p),
			      _mm512_zextsi128_si512(_mm_cvtsi32_si128(reg)));
	z1 = _mm512_loadu_si512(p + 64);
	z2 = _mm512_loadu_si512(p + 128);
	z3 = _mm512_loadu_si512(p + 192);
	p += 256;
	len -= 256;
	while (len >= 256) {
		z0 = fold512_into(_mm512_loadu_si512(p), z0, k16);
		z1 = fold512_into(_mm512_loadu_si512(p + 64), z1, k16);
		z2 = fold512_into(_mm512_loadu_si512(p + 128), z2, k16);
		z3 = fold512_into(_mm512_loadu_si512(p + 192), z3, k16);
		p += 256;
		len -= 256;
	}
	/* Lane i of z_j is state 4j + i of sixteen: fold z0..z2 onto z3,
	 * then z3's four lanes onto its last. */
	z3 = fold512_into(z3, z2, kload512(&k.fold[4]));
	z3 = fold512_into(z3, z1, kload512(&k.fold[8]));
	z3 = fold512_into(z3, z0, kload512(&k.fold[12]));
	x[0] = _mm512_extracti32x4_epi32(z3, 0);
	x[1] = _mm512_extracti32x4_epi32(z3, 1);
	x[2] = _mm512_extracti32x4_epi32(z3, 2);
	x[3] = _mm512_extracti32x4_epi32(z3, 3);
	s = _mm_xor_si128(x[3], fold_avx(x[2], kload_avx(&k.fold[1])));
	s = _mm_xor_si128(s, fold_avx(x[1], kload_avx(&k.fold[2])));
	s = _mm_xor_si128(s, fold_avx(x[0], kload_avx(&k.fold[3])));
	return tail_avx(s, p, len);
}

ib_crc16_update_fn *ib_crc16_clmul(const char *encoding)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1"))
		return NULL;
	bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("vpclmulqdq");

	if (!encoding)
		encoding = avx512			     ? "avx512" :
			   __builtin_cpu_supports("avx") ? "avx" :
							   "sse";
	if (!strcmp(encoding, "sse"))
		return crc16_clmul_sse;
	if (!strcmp(encoding, "avx") && __builtin_cpu_supports("avx"))
		return crc16_clmul_avx;
	if (!strcmp(encoding, "avx512") && avx512)
		return crc16_clmul_avx512;
	return NULL;
}

#else /* no PCLMULQDQ on this architecture */

void ib_crc16_clmul_init(void)
{
}

ib_crc16_update_fn *ib_crc16_clmul(const char *encoding)
{
	(void)encoding;
	return NULL;
}

#endif

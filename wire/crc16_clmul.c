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
 * one at a time (D = 128).
 *
 * Reduction of the final S to the CRC register S*x^16 mod P:
 *   1. T = clmul(H, x^63 mod P) ^ L            degree < 80
 *   2. V = T.hi ^ clmul(T.lo, x^63 mod P).hi   degree < 64, V == S (mod P)
 *   3. Barrett: q = floor(V*x^16 / P) = V ^ floor(V*mu' / x^64), where
 *      mu = floor(x^80 / P) = x^64 + mu'; the CRC is the low 16
 *      coefficients of q*P.  Exact in GF(2) for degree V < 64.
 * The constants are computed once at load time by crc16_clmul_init() from
 * P alone (x^k mod P by shifting; mu by long division).
 */
#include "wire/crc_impl.h"

#if defined(__x86_64__)

#include <immintrin.h>

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* P = x^16 + x^12 + x^3 + x + 1, bit j = coefficient of x^j. */
#define CRC16_POLY 0x1100Bu

struct lanes {
	uint64_t lo, hi; /* multiplies the state's low lane (H) and high lane (L) */
};

static struct {
	struct lanes fold[9]; /* fold[m]: forward by m * 128 bits */
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
	for (unsigned int m = 1; m <= 8; m++) {
		k.fold[m].lo = bitrev64(xpow_mod(128 * m + 63));
		k.fold[m].hi = bitrev64(xpow_mod(128 * m - 1));
	}
	k.x63 = bitrev64(xpow_mod(63));
	k.mu = bitrev64(mu);
	k.poly = bitrev64(CRC16_POLY);
}

bool ib_crc16_clmul_supported(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

CLMUL_TARGET static inline __m128i kload(const struct lanes *l)
{
	return _mm_set_epi64x((long long)l->hi, (long long)l->lo);
}

CLMUL_TARGET static inline __m128i fold(__m128i s, __m128i kk)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(s, kk, 0x00), _mm_clmulepi64_si128(s, kk, 0x11));
}

CLMUL_TARGET static inline __m128i ld(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

CLMUL_TARGET static uint16_t reduce(__m128i s)
{
	__m128i x63 = _mm_cvtsi64_si128((long long)k.x63);
	__m128i t, g, q, r;
	uint64_t v, w;

	t = _mm_xor_si128(_mm_clmulepi64_si128(s, x63, 0x00),
			  _mm_unpackhi_epi64(_mm_setzero_si128(), s));
	g = _mm_clmulepi64_si128(t, x63, 0x00);
	v = (uint64_t)_mm_extract_epi64(t, 1) ^ (uint64_t)_mm_extract_epi64(g, 1);

	/* Bits 0..62 of the low lane hold x^126..x^64 of V*mu'; shifting by
	 * one makes them the lane of floor(V*mu' / x^64). */
	q = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)v),
				 _mm_cvtsi64_si128((long long)k.mu), 0x00);
	w = (uint64_t)_mm_cvtsi128_si64(q) << 1;
	r = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(v ^ w)),
				 _mm_cvtsi64_si128((long long)k.poly), 0x00);
	/* x^j of q*P sits in register bit 126-j; CRC bit b is x^(15-b). */
	return (uint16_t)((uint64_t)_mm_extract_epi64(r, 1) >> 47);
}

CLMUL_TARGET uint16_t ib_crc16_clmul_update(uint16_t reg, const uint8_t *p, size_t len)
{
	__m128i s, k1;

	if (len < 16)
		return ib_crc16_table_update(reg, p, len);

	if (len >= 128) {
		__m128i k8 = kload(&k.fold[8]);
		__m128i s0 = ld(p), s1 = ld(p + 16), s2 = ld(p + 32), s3 = ld(p + 48);
		__m128i s4 = ld(p + 64), s5 = ld(p + 80), s6 = ld(p + 96), s7 = ld(p + 112);

		/* The initial register is XORed into the first message bits. */
		s0 = _mm_xor_si128(s0, _mm_cvtsi32_si128(reg));
		p += 128;
		len -= 128;
		while (len >= 128) {
			s0 = _mm_xor_si128(fold(s0, k8), ld(p));
			s1 = _mm_xor_si128(fold(s1, k8), ld(p + 16));
			s2 = _mm_xor_si128(fold(s2, k8), ld(p + 32));
			s3 = _mm_xor_si128(fold(s3, k8), ld(p + 48));
			s4 = _mm_xor_si128(fold(s4, k8), ld(p + 64));
			s5 = _mm_xor_si128(fold(s5, k8), ld(p + 80));
			s6 = _mm_xor_si128(fold(s6, k8), ld(p + 96));
			s7 = _mm_xor_si128(fold(s7, k8), ld(p + 112));
			p += 128;
			len -= 128;
		}
		s = _mm_xor_si128(s7, fold(s6, kload(&k.fold[1])));
		s = _mm_xor_si128(s, fold(s5, kload(&k.fold[2])));
		s = _mm_xor_si128(s, fold(s4, kload(&k.fold[3])));
		s = _mm_xor_si128(s, fold(s3, kload(&k.fold[4])));
		s = _mm_xor_si128(s, fold(s2, kload(&k.fold[5])));
		s = _mm_xor_si128(s, fold(s1, kload(&k.fold[6])));
		s = _mm_xor_si128(s, fold(s0, kload(&k.fold[7])));
	} else {
		s = _mm_xor_si128(ld(p), _mm_cvtsi32_si128(reg));
		p += 16;
		len -= 16;
	}
	k1 = kload(&k.fold[1]);
	while (len >= 16) {
		s = _mm_xor_si128(fold(s, k1), ld(p));
		p += 16;
		len -= 16;
	}
	return ib_crc16_table_update(reduce(s), p, len);
}

#else /* no PCLMULQDQ on this architecture */

bool ib_crc16_clmul_supported(void)
{
	return false;
}

void ib_crc16_clmul_init(void)
{
}

uint16_t ib_crc16_clmul_update(uint16_t reg, const uint8_t *p, size_t len)
{
	return ib_crc16_table_update(reg, p, len);
}

#endif

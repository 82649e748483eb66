/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The folding loop and reduction of crc16_clmul.c, compiled twice there:
 * once with legacy SSE encoding and once VEX-encoded (AVX).  The VEX copy
 * matters: after ISA-L's AVX-512 crc32 leaves the upper register halves
 * dirty, legacy SSE instructions pay a state-transition penalty (ICRC+VCRC
 * took 1.5 times as long in bench_crc).  No include guard, on purpose; the
 * includer defines CLMUL_FN (the target attribute) and FN(name) (a suffix).
 */

CLMUL_FN static inline __attribute__((unused)) __m128i FN(kload)(const struct lanes *l)
{
	return _mm_set_epi64x((long long)l->hi, (long long)l->lo);
}

CLMUL_FN static inline __attribute__((unused)) __m128i FN(fold)(__m128i s, __m128i kk)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(s, kk, 0x00), _mm_clmulepi64_si128(s, kk, 0x11));
}

CLMUL_FN static inline __m128i FN(ld)(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

CLMUL_FN static uint16_t FN(reduce)(__m128i s)
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

/* The 16-byte blocks left after the wide folds, then the last bytes. */
CLMUL_FN static uint16_t FN(tail)(__m128i s, const uint8_t *p, size_t len)
{
	__m128i k1 = FN(kload)(&k.fold[1]);

	while (len >= 16) {
		s = _mm_xor_si128(FN(fold)(s, k1), FN(ld)(p));
		p += 16;
		len -= 16;
	}
	return ib_crc16_table_update(FN(reduce)(s), p, len);
}

CLMUL_FN static uint16_t FN(crc16_clmul)(uint16_t reg, const uint8_t *p, size_t len)
{
	__m128i s;

	if (len < 16)
		return ib_crc16_table_update(reg, p, len);

	if (len >= 128) {
		__m128i k8 = FN(kload)(&k.fold[8]);
		__m128i s0 = FN(ld)(p), s1 = FN(ld)(p + 16), s2 = FN(ld)(p + 32),
			s3 = FN(ld)(p + 48);
		__m128i s4 = FN(ld)(p + 64), s5 = FN(ld)(p + 80), s6 = FN(ld)(p + 96),
			s7 = FN(ld)(p + 112);

		/* The initial register is XORed into the first message bits. */
		s0 = _mm_xor_si128(s0, _mm_cvtsi32_si128(reg));
		p += 128;
		len -= 128;
		while (len >= 128) {
			s0 = _mm_xor_si128(FN(fold)(s0, k8), FN(ld)(p));
			s1 = _mm_xor_si128(FN(fold)(s1, k8), FN(ld)(p + 16));
			s2 = _mm_xor_si128(FN(fold)(s2, k8), FN(ld)(p + 32));
			s3 = _mm_xor_si128(FN(fold)(s3, k8), FN(ld)(p + 48));
			s4 = _mm_xor_si128(FN(fold)(s4, k8), FN(ld)(p + 64));
			s5 = _mm_xor_si128(FN(fold)(s5, k8), FN(ld)(p + 80));
			s6 = _mm_xor_si128(FN(fold)(s6, k8), FN(ld)(p + 96));
			s7 = _mm_xor_si128(FN(fold)(s7, k8), FN(ld)(p + 112));
			p += 128;
			len -= 128;
		}
		s = _mm_xor_si128(s7, FN(fold)(s6, FN(kload)(&k.fold[1])));
		s = _mm_xor_si128(s, FN(fold)(s5, FN(kload)(&k.fold[2])));
		s = _mm_xor_si128(s, FN(fold)(s4, FN(kload)(&k.fold[3])));
		s = _mm_xor_si128(s, FN(fold)(s3, FN(kload)(&k.fold[4])));
		s = _mm_xor_si128(s, FN(fold)(s2, FN(kload)(&k.fold[5])));
		s = _mm_xor_si128(s, FN(fold)(s1, FN(kload)(&k.fold[6])));
		s = _mm_xor_si128(s, FN(fold)(s0, FN(kload)(&k.fold[7])));
	} else {
		s = _mm_xor_si128(FN(ld)(p), _mm_cvtsi32_si128(reg));
		p += 16;
		len -= 16;
	}
	return FN(tail)(s, p, len);
}

/*
 * Keccak-f[1600] with AVX2 (VEX, 16 registers) for the avx2-* variants,
 * whose flags add -mavx2; include it nowhere else.  One lane per xmm
 * register, the simplest layout (docs/studies.md compares it with the
 * AVX-512 lane pairs): without vpternlogq and vprolq a round is ~185
 * instructions instead of 90 (three-input XOR is two
 * vpxor, a rotate is vpsllq + vpsrlq + vpor, or one vpshufb when it is a
 * whole number of bytes; chi is vpandn + vpxor), and 25 lanes do not fit
 * in 16 registers, so the compiler spills.  Written with intrinsics: the
 * spilling is the compiler's problem either way.
 */
#ifndef SEQORCH_KECCAK_AVX2_H
#define SEQORCH_KECCAK_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#include "sha3/keccak-c.h"

/* Rotates by whole bytes are one vpshufb; others are two shifts + or. */
static inline __m128i
rol_avx2(__m128i v, int n)
{
	if (n == 8)
		return _mm_shuffle_epi8(v, _mm_set_epi8(14, 13, 12, 11, 10, 9,
		    8, 15, 6, 5, 4, 3, 2, 1, 0, 7));
	if (n == 56)
		return _mm_shuffle_epi8(v, _mm_set_epi8(8, 15, 14, 13, 12, 11,
		    10, 9, 0, 7, 6, 5, 4, 3, 2, 1));
	return _mm_or_si128(_mm_slli_epi64(v, n), _mm_srli_epi64(v, 64 - n));
}
#define ROL_AVX2(v, n) rol_avx2((v), (n))

#define X5(p, q, r, s, t) _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(p, q), \
	_mm_xor_si128(r, s)), t)

#define KECCAK_ROUND_AVX2(rcv) do {					\
	__m128i c0 = X5(a00, a05, a10, a15, a20);			\
	__m128i c1 = X5(a01, a06, a11, a16, a21);			\
	__m128i c2 = X5(a02, a07, a12, a17, a22);			\
	__m128i c3 = X5(a03, a08, a13, a18, a23);			\
	__m128i c4 = X5(a04, a09, a14, a19, a24);			\
	__m128i d0 = _mm_xor_si128(c4, ROL_AVX2(c1, 1));		\
	__m128i d1 = _mm_xor_si128(c0, ROL_AVX2(c2, 1));		\
	__m128i d2 = _mm_xor_si128(c1, ROL_AVX2(c3, 1));		\
	__m128i d3 = _mm_xor_si128(c2, ROL_AVX2(c4, 1));		\
	__m128i d4 = _mm_xor_si128(c3, ROL_AVX2(c0, 1));		\
	/* rho and pi: b[y][2x+3y] = rol(a[x][y] ^ d[x], r[x][y]) */	\
	__m128i b00 = _mm_xor_si128(a00, d0);				\
	__m128i b10 = ROL_AVX2(_mm_xor_si128(a01, d1), 1);		\
	__m128i b20 = ROL_AVX2(_mm_xor_si128(a02, d2), 62);		\
	__m128i b05 = ROL_AVX2(_mm_xor_si128(a03, d3), 28);		\
	__m128i b15 = ROL_AVX2(_mm_xor_si128(a04, d4), 27);		\
	__m128i b16 = ROL_AVX2(_mm_xor_si128(a05, d0), 36);		\
	__m128i b01 = ROL_AVX2(_mm_xor_si128(a06, d1), 44);		\
	__m128i b11 = ROL_AVX2(_mm_xor_si128(a07, d2), 6);		\
	__m128i b21 = ROL_AVX2(_mm_xor_si128(a08, d3), 55);		\
	__m128i b06 = ROL_AVX2(_mm_xor_si128(a09, d4), 20);		\
	__m128i b07 = ROL_AVX2(_mm_xor_si128(a10, d0), 3);		\
	__m128i b17 = ROL_AVX2(_mm_xor_si128(a11, d1), 10);		\
	__m128i b02 = ROL_AVX2(_mm_xor_si128(a12, d2), 43);		\
	__m128i b12 = ROL_AVX2(_mm_xor_si128(a13, d3), 25);		\
	__m128i b22 = ROL_AVX2(_mm_xor_si128(a14, d4), 39);		\
	__m128i b23 = ROL_AVX2(_mm_xor_si128(a15, d0), 41);		\
	__m128i b08 = ROL_AVX2(_mm_xor_si128(a16, d1), 45);		\
	__m128i b18 = ROL_AVX2(_mm_xor_si128(a17, d2), 15);		\
	__m128i b03 = ROL_AVX2(_mm_xor_si128(a18, d3), 21);		\
	__m128i b13 = ROL_AVX2(_mm_xor_si128(a19, d4), 8);		\
	__m128i b14 = ROL_AVX2(_mm_xor_si128(a20, d0), 18);		\
	__m128i b24 = ROL_AVX2(_mm_xor_si128(a21, d1), 2);		\
	__m128i b09 = ROL_AVX2(_mm_xor_si128(a22, d2), 61);		\
	__m128i b19 = ROL_AVX2(_mm_xor_si128(a23, d3), 56);		\
	__m128i b04 = ROL_AVX2(_mm_xor_si128(a24, d4), 14);		\
	/* chi: andnot is (~first) & second */				\
	a00 = _mm_xor_si128(_mm_xor_si128(b00, _mm_andnot_si128(b01, b02)), \
	    (rcv));							\
	a01 = _mm_xor_si128(b01, _mm_andnot_si128(b02, b03));		\
	a02 = _mm_xor_si128(b02, _mm_andnot_si128(b03, b04));		\
	a03 = _mm_xor_si128(b03, _mm_andnot_si128(b04, b00));		\
	a04 = _mm_xor_si128(b04, _mm_andnot_si128(b00, b01));		\
	a05 = _mm_xor_si128(b05, _mm_andnot_si128(b06, b07));		\
	a06 = _mm_xor_si128(b06, _mm_andnot_si128(b07, b08));		\
	a07 = _mm_xor_si128(b07, _mm_andnot_si128(b08, b09));		\
	a08 = _mm_xor_si128(b08, _mm_andnot_si128(b09, b05));		\
	a09 = _mm_xor_si128(b09, _mm_andnot_si128(b05, b06));		\
	a10 = _mm_xor_si128(b10, _mm_andnot_si128(b11, b12));		\
	a11 = _mm_xor_si128(b11, _mm_andnot_si128(b12, b13));		\
	a12 = _mm_xor_si128(b12, _mm_andnot_si128(b13, b14));		\
	a13 = _mm_xor_si128(b13, _mm_andnot_si128(b14, b10));		\
	a14 = _mm_xor_si128(b14, _mm_andnot_si128(b10, b11));		\
	a15 = _mm_xor_si128(b15, _mm_andnot_si128(b16, b17));		\
	a16 = _mm_xor_si128(b16, _mm_andnot_si128(b17, b18));		\
	a17 = _mm_xor_si128(b17, _mm_andnot_si128(b18, b19));		\
	a18 = _mm_xor_si128(b18, _mm_andnot_si128(b19, b15));		\
	a19 = _mm_xor_si128(b19, _mm_andnot_si128(b15, b16));		\
	a20 = _mm_xor_si128(b20, _mm_andnot_si128(b21, b22));		\
	a21 = _mm_xor_si128(b21, _mm_andnot_si128(b22, b23));		\
	a22 = _mm_xor_si128(b22, _mm_andnot_si128(b23, b24));		\
	a23 = _mm_xor_si128(b23, _mm_andnot_si128(b24, b20));		\
	a24 = _mm_xor_si128(b24, _mm_andnot_si128(b20, b21));		\
} while (0)

#define KECCAK_LANES_AVX2						\
	__m128i a00, a01, a02, a03, a04, a05, a06, a07, a08, a09,	\
	    a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,		\
	    a20, a21, a22, a23, a24

/* Lane i of s into the low half of a register (vmovq). */
#define LD_AVX2(i) _mm_loadl_epi64((const __m128i *)(const void *)&s[i])
#define ST_AVX2(i, v) _mm_storel_epi64((__m128i *)(void *)&s[i], (v))
#define LD_AVX2_RC(r)							\
	_mm_loadl_epi64((const __m128i *)(const void *)&keccak_rc[r])

/* The permutation through memory; noinline so it has its own symbol. */
static __attribute__((noinline)) void
keccak_f1600_avx2(uint64_t s[25])
{
	KECCAK_LANES_AVX2;
	int r;

	a00 = LD_AVX2(0); a01 = LD_AVX2(1); a02 = LD_AVX2(2);
	a03 = LD_AVX2(3); a04 = LD_AVX2(4); a05 = LD_AVX2(5);
	a06 = LD_AVX2(6); a07 = LD_AVX2(7); a08 = LD_AVX2(8);
	a09 = LD_AVX2(9); a10 = LD_AVX2(10); a11 = LD_AVX2(11);
	a12 = LD_AVX2(12); a13 = LD_AVX2(13); a14 = LD_AVX2(14);
	a15 = LD_AVX2(15); a16 = LD_AVX2(16); a17 = LD_AVX2(17);
	a18 = LD_AVX2(18); a19 = LD_AVX2(19); a20 = LD_AVX2(20);
	a21 = LD_AVX2(21); a22 = LD_AVX2(22); a23 = LD_AVX2(23);
	a24 = LD_AVX2(24);
	for (r = 0; r < 24; r++)
		KECCAK_ROUND_AVX2(LD_AVX2_RC(r));
	ST_AVX2(0, a00); ST_AVX2(1, a01); ST_AVX2(2, a02); ST_AVX2(3, a03);
	ST_AVX2(4, a04); ST_AVX2(5, a05); ST_AVX2(6, a06); ST_AVX2(7, a07);
	ST_AVX2(8, a08); ST_AVX2(9, a09); ST_AVX2(10, a10);
	ST_AVX2(11, a11); ST_AVX2(12, a12); ST_AVX2(13, a13);
	ST_AVX2(14, a14); ST_AVX2(15, a15); ST_AVX2(16, a16);
	ST_AVX2(17, a17); ST_AVX2(18, a18); ST_AVX2(19, a19);
	ST_AVX2(20, a20); ST_AVX2(21, a21); ST_AVX2(22, a22);
	ST_AVX2(23, a23); ST_AVX2(24, a24);
}

#endif

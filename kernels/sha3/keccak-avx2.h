/*
 * Keccak-f[1600] with AVX2 (VEX, 16 ymm registers) for the avx2-*
 * variants, whose flags add -mavx2 -mno-avx512f (so that -march=native
 * builds stay VEX); include it nowhere else.  Generated
 * by gen-avx2.py, which derives the layout, checks the round against a
 * plain Keccak and explains it; edit the generator, not this file.
 *
 * Seven ymm registers hold the state so that pi only moves lanes inside
 * a register (slot j = 0..3, lane (x, y) at x + 5y):
 *
 *   lane0  (0, 0) in every slot       col0   (0, 2(j + 1))
 *   row0   (j + 1, 0)                 diagK  (j + 1, K(j + 1)), K = 1..4
 *
 * A round is 104 instructions: 39 vpxor/vpor/vpandn, 16 shifts
 * (rho's vpsllvq/vpsrlvq, theta's rotate by one), 14 vpermq (pi, theta,
 * chi's return to column order), 34 vpblendd (chi's neighbour lanes);
 * the last round of a chained hash, which only needs the digest lanes
 * (lane0, row0), is 37.  The order is gen-avx2.py's list schedule,
 * which keeps at most 16 values live so the compilers do not spill.
 */
#ifndef SEQORCH_KECCAK_AVX2_H
#define SEQORCH_KECCAK_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#include "sha3/keccak-c.h"

#define KECCAK_STATE_AVX2						\
	__m256i lane0, row0, col0, diag1, diag2, diag3, diag4

/* One round on the seven registers; rc is the round constant, broadcast. */
#define KECCAK_ROUND_AVX2(rc) do {					\
	__m256i t4 = _mm256_shuffle_epi32(col0, 0x4e);			\
	__m256i t0 = _mm256_xor_si256(row0, diag1);			\
	__m256i t1 = _mm256_xor_si256(diag2, diag3);			\
	__m256i t2 = _mm256_xor_si256(t0, t1);				\
	__m256i t5 = _mm256_xor_si256(col0, t4);			\
	__m256i t7 = _mm256_permute4x64_epi64(t5, 0x4e);		\
	__m256i t3 = _mm256_xor_si256(t2, diag4);			\
	__m256i t6 = _mm256_xor_si256(t5, lane0);			\
	__m256i t15 = _mm256_permute4x64_epi64(t3, 0x93);		\
	__m256i t10 = _mm256_srli_epi64(t3, 63);			\
	__m256i t9 = _mm256_add_epi64(t3, t3);				\
	__m256i t11 = _mm256_or_si256(t9, t10);				\
	__m256i t19 = _mm256_permute4x64_epi64(t11, 0x39);		\
	__m256i t8 = _mm256_xor_si256(t6, t7);				\
	__m256i t13 = _mm256_srli_epi64(t8, 63);			\
	__m256i t12 = _mm256_add_epi64(t8, t8);				\
	__m256i t16 = _mm256_xor_si256(t15, t11);			\
	__m256i t17 = _mm256_permute4x64_epi64(t16, 0x00);		\
	__m256i t14 = _mm256_or_si256(t12, t13);			\
	__m256i t18 = _mm256_blend_epi32(t15, t8, 0x03);		\
	__m256i t20 = _mm256_blend_epi32(t19, t14, 0xc0);		\
	__m256i t21 = _mm256_xor_si256(t18, t20);			\
	__m256i t25 = _mm256_xor_si256(diag2, t21);			\
	__m256i t26 = _mm256_xor_si256(diag3, t21);			\
	__m256i t27 = _mm256_xor_si256(diag4, t21);			\
	__m256i t28 = _mm256_xor_si256(col0, t17);			\
	__m256i t35 = _mm256_sllv_epi64(t25,				\
	    _mm256_setr_epi64x(10, 61, 55, 8));				\
	__m256i t24 = _mm256_xor_si256(diag1, t21);			\
	__m256i t36 = _mm256_srlv_epi64(t25,				\
	    _mm256_setr_epi64x(54, 3, 9, 56));				\
	__m256i t38 = _mm256_sllv_epi64(t26,				\
	    _mm256_setr_epi64x(45, 6, 56, 39));				\
	__m256i t23 = _mm256_xor_si256(row0, t21);			\
	__m256i t39 = _mm256_srlv_epi64(t26,				\
	    _mm256_setr_epi64x(19, 58, 8, 25));				\
	__m256i t41 = _mm256_sllv_epi64(t27,				\
	    _mm256_setr_epi64x(2, 15, 25, 20));				\
	__m256i t37 = _mm256_or_si256(t35, t36);			\
	__m256i t42 = _mm256_srlv_epi64(t27,				\
	    _mm256_setr_epi64x(62, 49, 39, 44));			\
	__m256i t44 = _mm256_sllv_epi64(t28,				\
	    _mm256_setr_epi64x(3, 18, 36, 41));				\
	__m256i t40 = _mm256_or_si256(t38, t39);			\
	__m256i t45 = _mm256_srlv_epi64(t28,				\
	    _mm256_setr_epi64x(61, 46, 28, 23));			\
	__m256i t32 = _mm256_sllv_epi64(t24,				\
	    _mm256_setr_epi64x(44, 43, 21, 14));			\
	__m256i t43 = _mm256_or_si256(t41, t42);			\
	__m256i t33 = _mm256_srlv_epi64(t24,				\
	    _mm256_setr_epi64x(20, 21, 43, 50));			\
	__m256i t46 = _mm256_or_si256(t44, t45);			\
	__m256i t58 = _mm256_permute4x64_epi64(t37, 0x1b);		\
	__m256i t57 = _mm256_permute4x64_epi64(t46, 0x8d);		\
	__m256i t34 = _mm256_or_si256(t32, t33);			\
	__m256i t29 = _mm256_sllv_epi64(t23,				\
	    _mm256_setr_epi64x(1, 62, 28, 27));				\
	__m256i t59 = _mm256_permute4x64_epi64(t40, 0x8d);		\
	__m256i t30 = _mm256_srlv_epi64(t23,				\
	    _mm256_setr_epi64x(63, 2, 36, 37));				\
	__m256i t22 = _mm256_xor_si256(lane0, t17);			\
	__m256i t60 = _mm256_permute4x64_epi64(t43, 0x72);		\
	__m256i t31 = _mm256_or_si256(t29, t30);			\
	__m256i t52 = _mm256_xor_si256(t22, (rc));			\
	__m256i t47 = _mm256_permute4x64_epi64(t34, 0xf9);		\
	__m256i t69 = _mm256_blend_epi32(t58, t31, 0x0c);		\
	__m256i t72 = _mm256_blend_epi32(t57, t58, 0x0c);		\
	__m256i t70 = _mm256_blend_epi32(t57, t59, 0xc0);		\
	__m256i t73 = _mm256_blend_epi32(t59, t31, 0xc0);		\
	__m256i t87 = _mm256_blend_epi32(t59, t58, 0xc0);		\
	__m256i t86 = _mm256_blend_epi32(t31, t60, 0x0c);		\
	__m256i t89 = _mm256_blend_epi32(t59, t31, 0x0c);		\
	__m256i t71 = _mm256_blend_epi32(t69, t70, 0xf0);		\
	__m256i t90 = _mm256_blend_epi32(t58, t60, 0xc0);		\
	__m256i t48 = _mm256_blend_epi32(t47, t22, 0xc0);		\
	__m256i t74 = _mm256_blend_epi32(t72, t73, 0xf0);		\
	__m256i t95 = _mm256_blend_epi32(t57, t59, 0x0c);		\
	__m256i t88 = _mm256_blend_epi32(t86, t87, 0xf0);		\
	__m256i t91 = _mm256_blend_epi32(t89, t90, 0xf0);		\
	__m256i t96 = _mm256_blend_epi32(t31, t60, 0xc0);		\
	__m256i t98 = _mm256_blend_epi32(t31, t57, 0x0c);		\
	__m256i t75 = _mm256_andnot_si256(t71, t74);			\
	__m256i t99 = _mm256_blend_epi32(t60, t59, 0xc0);		\
	__m256i t97 = _mm256_blend_epi32(t95, t96, 0xf0);		\
	__m256i t51 = _mm256_andnot_si256(t34, t48);			\
	__m256i t100 = _mm256_blend_epi32(t98, t99, 0xf0);		\
	__m256i t92 = _mm256_andnot_si256(t88, t91);			\
	__m256i t53 = _mm256_permute4x64_epi64(t51, 0x00);		\
	__m256i t49 = _mm256_permute4x64_epi64(t34, 0x0e);		\
	__m256i t101 = _mm256_andnot_si256(t97, t100);			\
	__m256i t61 = _mm256_blend_epi32(t59, t58, 0x0c);		\
	__m256i t62 = _mm256_blend_epi32(t60, t57, 0xc0);		\
	__m256i t76 = _mm256_xor_si256(t60, t75);			\
	__m256i t93 = _mm256_xor_si256(t57, t92);			\
	__m256i t102 = _mm256_xor_si256(t58, t101);			\
	__m256i t77 = _mm256_permute4x64_epi64(t76, 0x72);		\
	__m256i t63 = _mm256_blend_epi32(t61, t62, 0xf0);		\
	__m256i t64 = _mm256_blend_epi32(t60, t59, 0x0c);		\
	__m256i t94 = _mm256_permute4x64_epi64(t93, 0x1b);		\
	__m256i t50 = _mm256_blend_epi32(t49, t22, 0x30);		\
	__m256i t65 = _mm256_blend_epi32(t57, t58, 0xc0);		\
	__m256i t103 = _mm256_permute4x64_epi64(t102, 0x8d);		\
	__m256i t55 = _mm256_andnot_si256(t48, t50);			\
	__m256i t78 = _mm256_blend_epi32(t60, t57, 0x0c);		\
	__m256i t81 = _mm256_blend_epi32(t58, t60, 0x0c);		\
	__m256i t82 = _mm256_blend_epi32(t31, t57, 0xc0);		\
	__m256i t79 = _mm256_blend_epi32(t58, t31, 0xc0);		\
	__m256i t66 = _mm256_blend_epi32(t64, t65, 0xf0);		\
	__m256i t83 = _mm256_blend_epi32(t81, t82, 0xf0);		\
	__m256i t80 = _mm256_blend_epi32(t78, t79, 0xf0);		\
	__m256i t67 = _mm256_andnot_si256(t63, t66);			\
	__m256i t54 = _mm256_xor_si256(t52, t53);			\
	__m256i t84 = _mm256_andnot_si256(t80, t83);			\
	__m256i t56 = _mm256_xor_si256(t34, t55);			\
	__m256i t68 = _mm256_xor_si256(t31, t67);			\
	__m256i t85 = _mm256_xor_si256(t59, t84);			\
	lane0 = t54;							\
	row0 = t56;							\
	col0 = t68;							\
	diag1 = t77;							\
	diag2 = t85;							\
	diag3 = t94;							\
	diag4 = t103;							\
} while (0)

/* Round 23 of a chained hash: only lane0 and row0 (the digest lanes). */
#define KECCAK_LAST_ROUND_AVX2(rc) do {					\
	__m256i t4 = _mm256_shuffle_epi32(col0, 0x4e);			\
	__m256i t0 = _mm256_xor_si256(row0, diag1);			\
	__m256i t1 = _mm256_xor_si256(diag2, diag3);			\
	__m256i t2 = _mm256_xor_si256(t0, t1);				\
	__m256i t5 = _mm256_xor_si256(col0, t4);			\
	__m256i t7 = _mm256_permute4x64_epi64(t5, 0x4e);		\
	__m256i t3 = _mm256_xor_si256(t2, diag4);			\
	__m256i t6 = _mm256_xor_si256(t5, lane0);			\
	__m256i t10 = _mm256_srli_epi64(t3, 63);			\
	__m256i t9 = _mm256_add_epi64(t3, t3);				\
	__m256i t15 = _mm256_permute4x64_epi64(t3, 0x93);		\
	__m256i t11 = _mm256_or_si256(t9, t10);				\
	__m256i t19 = _mm256_permute4x64_epi64(t11, 0x39);		\
	__m256i t8 = _mm256_xor_si256(t6, t7);				\
	__m256i t13 = _mm256_srli_epi64(t8, 63);			\
	__m256i t12 = _mm256_add_epi64(t8, t8);				\
	__m256i t18 = _mm256_blend_epi32(t15, t8, 0x03);		\
	__m256i t14 = _mm256_or_si256(t12, t13);			\
	__m256i t16 = _mm256_xor_si256(t15, t11);			\
	__m256i t20 = _mm256_blend_epi32(t19, t14, 0xc0);		\
	__m256i t17 = _mm256_permute4x64_epi64(t16, 0x00);		\
	__m256i t21 = _mm256_xor_si256(t18, t20);			\
	__m256i t24 = _mm256_xor_si256(diag1, t21);			\
	__m256i t31 = _mm256_sllv_epi64(t24,				\
	    _mm256_setr_epi64x(44, 43, 21, 14));			\
	__m256i t32 = _mm256_srlv_epi64(t24,				\
	    _mm256_setr_epi64x(20, 21, 43, 50));			\
	__m256i t22 = _mm256_xor_si256(lane0, t17);			\
	__m256i t33 = _mm256_or_si256(t31, t32);			\
	__m256i t48 = _mm256_xor_si256(t22, (rc));			\
	__m256i t43 = _mm256_permute4x64_epi64(t33, 0xf9);		\
	__m256i t45 = _mm256_permute4x64_epi64(t33, 0x0e);		\
	__m256i t44 = _mm256_blend_epi32(t43, t22, 0xc0);		\
	__m256i t47 = _mm256_andnot_si256(t33, t44);			\
	__m256i t46 = _mm256_blend_epi32(t45, t22, 0x30);		\
	__m256i t49 = _mm256_permute4x64_epi64(t47, 0x00);		\
	__m256i t51 = _mm256_andnot_si256(t44, t46);			\
	__m256i t52 = _mm256_xor_si256(t33, t51);			\
	__m256i t50 = _mm256_xor_si256(t48, t49);			\
	lane0 = t50;							\
	row0 = t52;							\
} while (0)

#define KECCAK_LOAD_AVX2(s) do {					\
	lane0 = _mm256_set1_epi64x((long long)(s)[0]);			\
	row0 = _mm256_loadu_si256((const __m256i *)(const void *)&(s)[1]); \
	col0 = _mm256_setr_epi64x((long long)(s)[10],			\
	    (long long)(s)[20], (long long)(s)[5], (long long)(s)[15]);	\
	diag1 = _mm256_setr_epi64x((long long)(s)[6],			\
	    (long long)(s)[12], (long long)(s)[18], (long long)(s)[24]); \
	diag2 = _mm256_setr_epi64x((long long)(s)[11],			\
	    (long long)(s)[22], (long long)(s)[8], (long long)(s)[19]);	\
	diag3 = _mm256_setr_epi64x((long long)(s)[16],			\
	    (long long)(s)[7], (long long)(s)[23], (long long)(s)[14]);	\
	diag4 = _mm256_setr_epi64x((long long)(s)[21],			\
	    (long long)(s)[17], (long long)(s)[13], (long long)(s)[9]);	\
} while (0)

/* Slots 0-3 of v to lanes i0-i3 of s. */
static inline void
keccak_store4_avx2(uint64_t s[25], __m256i v, int i0, int i1, int i2, int i3)
{
	uint64_t t[4];

	_mm256_storeu_si256((__m256i *)(void *)t, v);
	s[i0] = t[0];
	s[i1] = t[1];
	s[i2] = t[2];
	s[i3] = t[3];
}

#define KECCAK_STORE_AVX2(s) do {					\
	_mm_storel_epi64((__m128i *)(void *)&(s)[0],			\
	    _mm256_castsi256_si128(lane0));				\
	_mm256_storeu_si256((__m256i *)(void *)&(s)[1], row0);		\
	keccak_store4_avx2((s), col0, 10, 20, 5, 15);			\
	keccak_store4_avx2((s), diag1, 6, 12, 18, 24);			\
	keccak_store4_avx2((s), diag2, 11, 22, 8, 19);			\
	keccak_store4_avx2((s), diag3, 16, 7, 23, 14);			\
	keccak_store4_avx2((s), diag4, 21, 17, 13, 9);			\
} while (0)

#define KECCAK_RC_AVX2(r) _mm256_set1_epi64x((long long)keccak_rc[r])

/* The permutation through memory; noinline so it has its own symbol. */
static __attribute__((noinline)) void
keccak_f1600_avx2(uint64_t s[25])
{
	KECCAK_STATE_AVX2;
	int r;

	KECCAK_LOAD_AVX2(s);
	for (r = 0; r < 24; r++)
		KECCAK_ROUND_AVX2(KECCAK_RC_AVX2(r));
	KECCAK_STORE_AVX2(s);
}

#endif

/*
 * mul32/avx2: the sixteen lanes in two ymm registers.  VPMULLD and VPADDD
 * per half; lane i + 1 comes under lane i by a VPERMD rotation of each
 * half and a VPBLENDD that swaps their top lanes; AVX2 has no rotation, so
 * ror32 is VPSRLD, VPSLLD and VPOR.
 */
#include "kernel.h"

#include <immintrin.h>
#include <string.h>

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) void
mul32_avx2_rounds(uint32_t v[16], uint64_t steps)
{
	const __m256i m = _mm256_set1_epi32((int)0x85ebca6bu);
	const __m256i up = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
	__m256i lo = _mm256_loadu_si256((const __m256i *)v);
	__m256i hi = _mm256_loadu_si256((const __m256i *)(v + 8));
	__m256i alo, ahi, tlo, thi, plo, phi, nlo, nhi;
	uint32_t a[16];
	int i;

	for (i = 0; i < 16; i++)
		a[i] = (uint32_t)(2 * i + 1) * 0x9e3779b9u;
	alo = _mm256_loadu_si256((const __m256i *)a);
	ahi = _mm256_loadu_si256((const __m256i *)(a + 8));
	while (steps-- > 0) {
		tlo = _mm256_add_epi32(_mm256_mullo_epi32(lo, m), alo);
		thi = _mm256_add_epi32(_mm256_mullo_epi32(hi, m), ahi);
		plo = _mm256_permutevar8x32_epi32(tlo, up); /* t1..t7 t0 */
		phi = _mm256_permutevar8x32_epi32(thi, up); /* t9..t15 t8 */
		nlo = _mm256_blend_epi32(plo, phi, 0x80);   /* t1..t8 */
		nhi = _mm256_blend_epi32(phi, plo, 0x80);   /* t9..t15 t0 */
		lo = _mm256_xor_si256(tlo, _mm256_or_si256(
		    _mm256_srli_epi32(nlo, 13), _mm256_slli_epi32(nlo, 19)));
		hi = _mm256_xor_si256(thi, _mm256_or_si256(
		    _mm256_srli_epi32(nhi, 13), _mm256_slli_epi32(nhi, 19)));
	}
	_mm256_storeu_si256((__m256i *)v, lo);
	_mm256_storeu_si256((__m256i *)(v + 8), hi);
}

static int
avx2_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t v[16];

	(void)ctx;
	memcpy(v, x, 64);
	mul32_avx2_rounds(v, steps);
	memcpy(x, v, 64);
	return 0;
}

static const char *const avx2_insns[] = {
	"vpmulld", "vpaddd", "vpermd", "vpblendd", "vpsrld", NULL
};
/*
 * Scalar multiplies, or AVX-512 forms that -march=native would bring in
 * (flags has -mno-avx512f so that this variant stays AVX2).
 */
static const char *const avx2_forbidden[] = {
	"imul", "vpextrd", "valignd", "vprold", "vprord", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "AVX2, two ymm: VPMULLD, VPADDD, VPERMD + VPBLENDD for "
	    "the neighbour, shifts for the rotation",
	.features = KF_X86_AVX2,
	.insns = avx2_insns,
	.forbidden = avx2_forbidden,
	.symbol = "mul32_avx2_rounds",
	.chain = avx2_chain,
};

/*
 * mul-wide/avx512: the four lanes in one ymm register: VPMULLQ
 * (AVX-512DQ), VPADDQ, VPERMQ to bring lane i + 1 under lane i, VPRORQ,
 * VPXORQ.  Its path is VPMULLQ's 15 cycles on Intel cores (3 on Zen 4)
 * plus 6: slower than scalar on this machine, measured as the SIMD form.
 */
#include "kernel.h"

#include <immintrin.h>
#include <string.h>

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) void
mulw_avx512_rounds(uint64_t v[4], uint64_t steps)
{
	const __m256i m = _mm256_set1_epi64x((long long)0x9e3779b97f4a7c15ULL);
	const __m256i a = _mm256_setr_epi64x((long long)0xd1b54a32d192ed03ULL,
	    (long long)0x8bb84b93962eacc9ULL, (long long)0x2545f4914f6cdd1dULL,
	    (long long)0x94d049bb133111ebULL);
	__m256i x = _mm256_loadu_si256((const __m256i *)v), t, n;

	while (steps-- > 0) {
		t = _mm256_add_epi64(_mm256_mullo_epi64(x, m), a);
		/* lane i <- t[i + 1 mod 4] */
		n = _mm256_permute4x64_epi64(t, _MM_SHUFFLE(0, 3, 2, 1));
		x = _mm256_xor_si256(t, _mm256_ror_epi64(n, 23));
	}
	_mm256_storeu_si256((__m256i *)v, x);
}

static int
avx512_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v[4];

	(void)ctx;
	memcpy(v, x, 32);
	mulw_avx512_rounds(v, steps);
	memcpy(x, v, 32);
	return 0;
}

/* The rotation may come out as VPROLQ by 41 (clang) or VPRORQ by 23. */
static const char *const avx512_insns[] = {
	"vpmullq", "vpaddq", "vpermq", NULL
};
/* A lane multiplied in a general register, or a rotation by shifts. */
static const char *const avx512_forbidden[] = {
	"imul", "vpextrq", "vpsrlq", "vpsllq", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "AVX-512DQ/VL, the four lanes in one ymm: VPMULLQ, "
	    "VPADDQ, VPERMQ, VPRORQ, VPXORQ",
	.features = KF_X86_AVX512 | KF_X86_AVX512DQ,
	.insns = avx512_insns,
	.forbidden = avx512_forbidden,
	.symbol = "mulw_avx512_rounds",
	.chain = avx512_chain,
};

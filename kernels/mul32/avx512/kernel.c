/*
 * mul32/avx512: the sixteen lanes in one zmm register: VPMULLD, VPADDD,
 * VALIGND by one lane (lane i + 1 under lane i, the top lane wrapping
 * round), VPRORD, VPXORD.  On Golden Cove: 10 + 1 + 3 + 1 + 1 = 16 cycles.
 */
#include "kernel.h"

#include <immintrin.h>
#include <string.h>

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) void
mul32_avx512_rounds(uint32_t v[16], uint64_t steps)
{
	const __m512i m = _mm512_set1_epi32((int)0x85ebca6bu);
	__m512i x = _mm512_loadu_si512(v), a, t, n;
	uint32_t add[16];
	int i;

	for (i = 0; i < 16; i++)
		add[i] = (uint32_t)(2 * i + 1) * 0x9e3779b9u;
	a = _mm512_loadu_si512(add);
	while (steps-- > 0) {
		t = _mm512_add_epi32(_mm512_mullo_epi32(x, m), a);
		n = _mm512_alignr_epi32(t, t, 1);
		x = _mm512_xor_si512(t, _mm512_ror_epi32(n, 13));
	}
	_mm512_storeu_si512(v, x);
}

static int
avx512_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t v[16];

	(void)ctx;
	memcpy(v, x, 64);
	mul32_avx512_rounds(v, steps);
	memcpy(x, v, 64);
	return 0;
}

/* The rotation may come out as VPROLD by 19 (clang) or VPRORD by 13. */
static const char *const avx512_insns[] = {
	"vpmulld", "vpaddd", "valignd", NULL
};
/* Scalar multiplies, or a rotation built from shifts. */
static const char *const avx512_forbidden[] = {
	"imul", "vpsrld", "vpslld", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "AVX-512F, one zmm: VPMULLD, VPADDD, VALIGND, VPRORD, "
	    "VPXORD",
	.features = KF_X86_AVX512,
	.insns = avx512_insns,
	.forbidden = avx512_forbidden,
	.symbol = "mul32_avx512_rounds",
	.chain = avx512_chain,
};

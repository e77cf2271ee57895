/*
 * div64/avx512-fp: c-fp's estimate and correction with the AVX-512 DQ
 * unsigned conversions (VCVTUQQ2PD, VCVTTPD2UQQ on xmm), so the estimate's
 * chain stays in vector registers: divisor XOR, convert, VDIVSD, truncate,
 * XOR again, with no move between register files on it.  The quotient also
 * goes to a general register, where the exact correction (docs/studies.md)
 * checks it beside the next division; it is a branch that almost never
 * fires, and when it does the corrected quotient goes back to the vector.
 */
#include "kernel.h"
#include "div64/div64.h"

#include <immintrin.h>

static int
div64_avx512_fp_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t a = div64_load(x), b = div64_load(x + 8);
	__m128i dv = _mm_cvtsi64_si128((long long)(DIV64_HI | (uint32_t)b));
	uint64_t next_a, i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		uint64_t p = DIV64_HI | (uint32_t)a;
		__m128d ad = _mm_cvtepu64_pd(_mm_cvtsi64_si128((long long)a));
		__m128i qv = _mm_cvttpd_epu64(_mm_div_sd(ad,
		    _mm_cvtepu64_pd(dv)));
		uint64_t d = (uint64_t)_mm_cvtsi128_si64(dv);
		uint64_t q = (uint64_t)_mm_cvtsi128_si64(qv);
		int64_t r = (int64_t)(a - q * d);

		if (r < 0) {
			q--;
			r += (int64_t)d;
			qv = _mm_cvtsi64_si128((long long)q);
		} else if ((uint64_t)r >= d) {
			q++;
			r -= (int64_t)d;
			qv = _mm_cvtsi64_si128((long long)q);
		}
		next_a = b ^ DIV64_C;
		dv = _mm_xor_si128(_mm_cvtsi64_si128((long long)p), qv);
		b = a ^ q ^ ((uint64_t)r << 32);
		a = next_a;
	}
	div64_store(x, a);
	div64_store(x + 8, b);
	return 0;
}

static const char *const div64_avx512_fp_insns[] = {
	"vcvtuqq2pd", "vdivsd", "vcvttpd2uqq", NULL
};
static const char *const div64_avx512_fp_forbidden[] = { "div", "idiv", NULL };

const struct kernel KERNEL_THIS = {
	.description = "AVX-512 DQ unsigned conversions on xmm, double "
	    "estimate, exact integer correction",
	.features = KF_X86_AVX512 | KF_X86_AVX512DQ,
	.insns = div64_avx512_fp_insns,
	.forbidden = div64_avx512_fp_forbidden,
	.symbol = "div64_avx512_fp_chain",
	.chain = div64_avx512_fp_chain,
};

/*
 * bitperm/bmi2: the round with BMI2 PEXT and PDEP (3 cycles each on Intel
 * since Haswell and AMD since Zen 3; microcoded and much slower on Zen 1/2).
 * x86-64 has no bit reversal: BSWAP, then nibbles, pairs and bits swapped
 * in three stages of mask, shift and OR.
 */
#include "kernel.h"
#include "bitperm/bitperm.h"

#include <immintrin.h>

static int
bitperm_bmi2_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v = bitperm_load(x), i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		uint64_t t = _pdep_u64(_pext_u64(v, BITPERM_M), BITPERM_N) |
		    _pdep_u64(_pext_u64(v, ~BITPERM_M), ~BITPERM_N);

		t = __builtin_bswap64(t);
		t = (t & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4 |
		    (t & UINT64_C(0xf0f0f0f0f0f0f0f0)) >> 4;
		t = (t & UINT64_C(0x3333333333333333)) << 2 |
		    (t & UINT64_C(0xcccccccccccccccc)) >> 2;
		t = (t & UINT64_C(0x5555555555555555)) << 1 |
		    (t & UINT64_C(0xaaaaaaaaaaaaaaaa)) >> 1;
		v = t + BITPERM_K;
	}
	bitperm_store(x, v);
	return 0;
}

static const char *const bitperm_bmi2_insns[] = {
	"pext", "pdep", "bswap", NULL
};
static const char *const bitperm_bmi2_forbidden[] = { "call", NULL };

const struct kernel KERNEL_THIS = {
	.description = "BMI2 pext/pdep, bswap and three swap stages for the "
	    "bit reversal",
	.features = KF_X86_BMI2,
	.insns = bitperm_bmi2_insns,
	.forbidden = bitperm_bmi2_forbidden,
	.symbol = "bitperm_bmi2_chain",
	.chain = bitperm_bmi2_chain,
};

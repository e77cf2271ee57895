/*
 * sha3/avx2-wrapped: the AVX2 permutation (../keccak-avx2.h: seven ymm
 * registers, pi inside registers) behind the same per-hash wrapper as
 * c-wrapped: state reset and padded in memory, permutation called per
 * hash, which loads the lanes into its layout and stores them back.
 */
#include "kernel.h"
#include "sha3/keccak-avx2.h"

static int
avx2_wrapped_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_avx2);
}

static int
avx2_wrapped_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	sha3_256_wrapped_chain(x, steps, keccak_f1600_avx2);
	return 0;
}

/* pi and chi's return to column order, chi's lanes, rho, chi. */
static const char *const avx2_insns[] = {
	"vpermq", "vpblendd", "vpsllvq", "vpsrlvq", "vpandn", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "AVX2 Keccak, state in seven ymm registers, state "
	    "reset and permutation called per hash",
	.features = KF_X86_AVX2,
	.insns = avx2_insns,
	.symbol = "keccak_f1600_avx2",
	.hash = avx2_wrapped_hash,
	.chain = avx2_wrapped_chain,
};

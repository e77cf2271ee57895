/*
 * sha3/c-unrolled: c-fused with the 24 rounds written out, each with its
 * round constant as a literal.  Lets the compiler fold the fixed padding
 * into round 0 and drop the lanes of round 23 the digest does not read;
 * every round of every hash is still executed.
 */
#include "kernel.h"
#include "sha3/keccak-c.h"

static int
c_unrolled_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_c);
}

static int
c_unrolled_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	KECCAK_LANES_C;
	uint64_t i;

	(void)ctx;
	a00 = load64_le(x);
	a01 = load64_le(x + 8);
	a02 = load64_le(x + 16);
	a03 = load64_le(x + 24);
	for (i = 0; i < steps; i++) {
		KECCAK_RESET_PAD32_C();
		KECCAK_THETA_C(a);
		KECCAK_ROUND_C(a, e, 0x0000000000000001ULL);
		KECCAK_ROUND_C(e, a, 0x0000000000008082ULL);
		KECCAK_ROUND_C(a, e, 0x800000000000808aULL);
		KECCAK_ROUND_C(e, a, 0x8000000080008000ULL);
		KECCAK_ROUND_C(a, e, 0x000000000000808bULL);
		KECCAK_ROUND_C(e, a, 0x0000000080000001ULL);
		KECCAK_ROUND_C(a, e, 0x8000000080008081ULL);
		KECCAK_ROUND_C(e, a, 0x8000000000008009ULL);
		KECCAK_ROUND_C(a, e, 0x000000000000008aULL);
		KECCAK_ROUND_C(e, a, 0x0000000000000088ULL);
		KECCAK_ROUND_C(a, e, 0x0000000080008009ULL);
		KECCAK_ROUND_C(e, a, 0x000000008000000aULL);
		KECCAK_ROUND_C(a, e, 0x000000008000808bULL);
		KECCAK_ROUND_C(e, a, 0x800000000000008bULL);
		KECCAK_ROUND_C(a, e, 0x8000000000008089ULL);
		KECCAK_ROUND_C(e, a, 0x8000000000008003ULL);
		KECCAK_ROUND_C(a, e, 0x8000000000008002ULL);
		KECCAK_ROUND_C(e, a, 0x8000000000000080ULL);
		KECCAK_ROUND_C(a, e, 0x000000000000800aULL);
		KECCAK_ROUND_C(e, a, 0x800000008000000aULL);
		KECCAK_ROUND_C(a, e, 0x8000000080008081ULL);
		KECCAK_ROUND_C(e, a, 0x8000000000008080ULL);
		KECCAK_ROUND_C(a, e, 0x0000000080000001ULL);
		KECCAK_ROUND_C(e, a, 0x8000000080008008ULL);
	}
	store64_le(x, a00);
	store64_le(x + 8, a01);
	store64_le(x + 16, a02);
	store64_le(x + 24, a03);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "portable C, whole chain in one function, all 24 rounds "
	    "expanded with literal round constants",
	.symbol = "c_unrolled_chain",
	.hash = c_unrolled_hash,
	.chain = c_unrolled_chain,
};

/*
 * sha3/c-wrapped: the scalar wrapper of seed 000.  Every hash resets the
 * state, prepares the padded 32-byte message and calls the permutation,
 * so the digest goes through memory between hashes.
 */
#include "kernel.h"
#include "sha3/keccak-c.h"

static int
c_wrapped_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_c);
}

/* A real call per hash, as a library permutation would be. */
static __attribute__((noinline)) void
c_wrapped_permute(uint64_t s[25])
{
	keccak_f1600_c(s);
}

static int
c_wrapped_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	sha3_256_wrapped_chain(x, steps, c_wrapped_permute);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "portable C Keccak-f[1600], state reset and "
	    "permutation called per hash",
	.symbol = "c_wrapped_chain",
	.hash = c_wrapped_hash,
	.chain = c_wrapped_chain,
};

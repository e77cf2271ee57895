/*
 * sha3/c-fused: the whole chain in one function.  The digest stays in
 * four lanes between hashes and only the rest of the state is reset to
 * the fixed padding of a 32-byte message (0x06 after the message, 0x80 at
 * the end of the 136-byte rate), so nothing goes through memory.  Round 0
 * and round 23 are peeled so the compiler specialises them.
 */
#include "kernel.h"
#include "sha3/keccak-c.h"

static int
c_fused_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_c);
}

static int
c_fused_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	KECCAK_LANES_C;
	uint64_t i;
	int r;

	(void)ctx;
	a00 = load64_le(x);
	a01 = load64_le(x + 8);
	a02 = load64_le(x + 16);
	a03 = load64_le(x + 24);
	for (i = 0; i < steps; i++) {
		/*
		 * Rounds 0 and 23 outside the loop: the compiler folds the
		 * 21 constant lanes into round 0's theta and keeps only
		 * what lanes 0-3 need of round 23.  The loop is the same
		 * two-round body as keccak_f1600_c, sets e -> a -> e.
		 */
		KECCAK_RESET_PAD32_C();
		KECCAK_THETA_C(a);
		KECCAK_ROUND_C(a, e, keccak_rc[0]);
		for (r = 1; r < 23; r += 2) {
			KECCAK_ROUND_C(e, a, keccak_rc[r]);
			KECCAK_ROUND_C(a, e, keccak_rc[r + 1]);
		}
		KECCAK_ROUND_C(e, a, keccak_rc[23]);
#ifdef SEQORCH_TEST_BROKEN_AFTER
		/*
		 * Test-only fault (tests/test_60_faults.py; never in a build
		 * without this -D): chains of up to N steps are right (the
		 * self-test's among them), longer ones have a bit flipped.
		 */
		if (i == (uint64_t)(SEQORCH_TEST_BROKEN_AFTER))
			a00 ^= 1;
#endif
	}
	store64_le(x, a00);
	store64_le(x + 8, a01);
	store64_le(x + 16, a02);
	store64_le(x + 24, a03);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "portable C, whole chain in one function, digest kept "
	    "in lanes, only the padding state reset",
	.symbol = "c_fused_chain",
	.hash = c_fused_hash,
	.chain = c_fused_chain,
};

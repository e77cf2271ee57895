/*
 * sha3/arm-sha3-unrolled: the whole chain in one function with the ARMv8.2
 * SHA3 instructions (../keccak-arm-sha3.h).  The digest stays in lanes
 * 0-3 between hashes and only the rest of the state is reset to the
 * padding of a 32-byte message.  The 24 rounds are written out
 * with literal round constants (the compiler may then fold the padding
 * into round 0 and drop the lanes of round 23 the digest does not read).
 */
#include "kernel.h"
#include "sha3/keccak-arm-sha3.h"

static int
arm_sha3_unrolled_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_arm_sha3);
}

static int
arm_sha3_unrolled_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	KECCAK_LANES_SHA3;
	uint64_t i;

	(void)ctx;
	a00 = vdupq_n_u64(load64_le(x));
	a01 = vdupq_n_u64(load64_le(x + 8));
	a02 = vdupq_n_u64(load64_le(x + 16));
	a03 = vdupq_n_u64(load64_le(x + 24));
	for (i = 0; i < steps; i++) {
		KECCAK_RESET_PAD32_SHA3();
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x0000000000000001ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x0000000000008082ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x800000000000808aULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000080008000ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x000000000000808bULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x0000000080000001ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000080008081ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000000008009ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x000000000000008aULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x0000000000000088ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x0000000080008009ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x000000008000000aULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x000000008000808bULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x800000000000008bULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000000008089ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000000008003ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000000008002ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000000000080ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x000000000000800aULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x800000008000000aULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000080008081ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000000008080ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x0000000080000001ULL));
		KECCAK_ROUND_SHA3(vdupq_n_u64(0x8000000080008008ULL));
	}
	store64_le(x, vgetq_lane_u64(a00, 0));
	store64_le(x + 8, vgetq_lane_u64(a01, 0));
	store64_le(x + 16, vgetq_lane_u64(a02, 0));
	store64_le(x + 24, vgetq_lane_u64(a03, 0));
	return 0;
}

static const char *const arm_sha3_insns[] = {
	"eor3", "rax1", "xar", "bcax", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "ARMv8.2 SHA3 instructions, whole chain in one "
	    "function, all 24 rounds expanded",
	.features = KF_ARM_SHA3,
	.insns = arm_sha3_insns,
	.symbol = "arm_sha3_unrolled_chain",
	.hash = arm_sha3_unrolled_hash,
	.chain = arm_sha3_unrolled_chain,
};

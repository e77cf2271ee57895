/*
 * sha3/arm-sha3-fused: the whole chain in one function with the ARMv8.2
 * SHA3 instructions (../keccak-arm-sha3.h).  The digest stays in lanes
 * 0-3 between hashes and only the rest of the state is reset to the
 * padding of a 32-byte message.  The rounds are a loop, with rounds 0
 * and 23 peeled so the compiler specialises them.
 */
#include "kernel.h"
#include "sha3/keccak-arm-sha3.h"

static int
arm_sha3_fused_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_arm_sha3);
}

static int
arm_sha3_fused_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	KECCAK_LANES_SHA3;
	uint64_t i;
	int r;

	(void)ctx;
	a00 = vdupq_n_u64(load64_le(x));
	a01 = vdupq_n_u64(load64_le(x + 8));
	a02 = vdupq_n_u64(load64_le(x + 16));
	a03 = vdupq_n_u64(load64_le(x + 24));
	for (i = 0; i < steps; i++) {
		KECCAK_RESET_PAD32_SHA3();
		/*
		 * Rounds 0 and 23 outside the loop: the compiler folds the
		 * padding constants into round 0 and drops the lanes of
		 * round 23 that the digest does not read (dead stores).
		 */
		KECCAK_ROUND_SHA3(vld1q_dup_u64(&keccak_rc[0]));
		for (r = 1; r < 23; r++)
			KECCAK_ROUND_SHA3(vld1q_dup_u64(&keccak_rc[r]));
		KECCAK_ROUND_SHA3(vld1q_dup_u64(&keccak_rc[23]));
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
	    "function, digest kept in registers",
	.features = KF_ARM_SHA3,
	.insns = arm_sha3_insns,
	.symbol = "arm_sha3_fused_chain",
	.hash = arm_sha3_fused_hash,
	.chain = arm_sha3_fused_chain,
};

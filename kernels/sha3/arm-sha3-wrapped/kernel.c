/*
 * sha3/arm-sha3-wrapped: the ARMv8.2 SHA3-instruction permutation
 * (../keccak-arm-sha3.h) behind the same per-hash wrapper as c-wrapped:
 * state reset and padded in memory, permutation called per hash.
 */
#include "kernel.h"
#include "sha3/keccak-arm-sha3.h"

static int
arm_sha3_wrapped_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_arm_sha3);
}

static int
arm_sha3_wrapped_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	sha3_256_wrapped_chain(x, steps, keccak_f1600_arm_sha3);
	return 0;
}

static const char *const arm_sha3_insns[] = {
	"eor3", "rax1", "xar", "bcax", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "ARMv8.2 SHA3 instructions (EOR3/RAX1/XAR/BCAX), "
	    "state reset and permutation called per hash",
	.features = KF_ARM_SHA3,
	.insns = arm_sha3_insns,
	.symbol = "keccak_f1600_arm_sha3",
	.hash = arm_sha3_wrapped_hash,
	.chain = arm_sha3_wrapped_chain,
};

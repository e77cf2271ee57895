/*
 * sha3/openssl-fused: seed 000's fused variant.  The chain is one assembly
 * function that kernels/sha3/generate.pl writes on the coordinator around
 * OpenSSL's round body, its lane layout and round constants unchanged
 * (x86-64: keccak1600-avx512vl.pl, lanes in ymm0-ymm6 in OpenSSL's own
 * order; aarch64: keccak1600-armv8.pl's SHA3-extension KeccakF1600_ce,
 * lane i in v<i>): the digest stays in registers, the rest of the state is
 * reset to the fixed padding in that layout, registers are set up and
 * saved once per chain. The 24 rounds run as OpenSSL's loop.
 * The known answer goes through OpenSSL's SHA3_absorb of the same file.
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

size_t openssl_fused_absorb(uint64_t A[25], const unsigned char *inp,
    size_t len, size_t r);

#if defined(__aarch64__)
#define OPENSSL_CHAIN openssl_fused_arm_chain
#define OPENSSL_CHAIN_NAME "openssl_fused_arm_chain"
#define OPENSSL_FEATURES KF_ARM_SHA3
static const char *const openssl_fused_insns[] = {
	"eor3", "rax1", "xar", "bcax", NULL
};
static const char *const *const openssl_fused_forbidden = NULL;
#else
#define OPENSSL_CHAIN openssl_fused_x86_chain
#define OPENSSL_CHAIN_NAME "openssl_fused_x86_chain"
#define OPENSSL_FEATURES KF_X86_AVX512
static const char *const openssl_fused_insns[] = {
	"vpternlogq", "vprolq", NULL
};
static const char *const openssl_fused_forbidden[] = {
	"vpsllvq", "vpsrlvq", NULL
};
#endif

void OPENSSL_CHAIN(uint8_t *x, uint64_t steps);

static int
openssl_fused_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return openssl_wrap_hash(openssl_fused_absorb, msg, len, out);
}

static int
openssl_fused_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	if (steps > 0)
		OPENSSL_CHAIN(x, steps);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's round body (AVX512VL; ARM SHA3), digest "
	    "kept in registers, rounds in a loop",
	.features = OPENSSL_FEATURES,
	.insns = openssl_fused_insns,
	.forbidden = openssl_fused_forbidden,
	.symbol = OPENSSL_CHAIN_NAME,
	.hash = openssl_fused_hash,
	.chain = openssl_fused_chain,
};

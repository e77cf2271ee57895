/*
 * kernels/sha3/openssl-chain.h: the C side of sha3's openssl-fused and
 * openssl-unrolled, which differ only in their generated assembly.  The
 * chain is one assembly function that kernels/sha3/generate.pl writes on
 * the coordinator around OpenSSL's round body, its lane layout and round
 * constants unchanged (x86-64: keccak1600-avx512vl.pl, lanes in
 * ymm0-ymm6 in OpenSSL's own order; aarch64: keccak1600-armv8.pl's
 * SHA3-extension KeccakF1600_ce, lane i in v<i>): the digest stays in
 * registers, the rest of the state is reset to the fixed padding in that
 * layout, registers are set up and saved once per chain.  The known
 * answer goes through OpenSSL's SHA3_absorb of the same file.
 *
 * The variant's kernel.c defines OPENSSL_VARIANT (its folder's name
 * after "openssl-": fused, unrolled) and OPENSSL_ROUNDS (how its 24
 * rounds run, for the description), then includes this file, which
 * defines its KERNEL_THIS.
 */
#ifndef SEQORCH_SHA3_OPENSSL_CHAIN_H
#define SEQORCH_SHA3_OPENSSL_CHAIN_H

#include "kernel.h"
#include "sha3/openssl-wrap.h"

#define OPENSSL_PASTE_(a, b, c) a##b##c
#define OPENSSL_PASTE(a, b, c) OPENSSL_PASTE_(a, b, c)
#define OPENSSL_NAME(suffix) OPENSSL_PASTE(openssl_, OPENSSL_VARIANT, suffix)
#define OPENSSL_STR_(x) #x
#define OPENSSL_STR(x) OPENSSL_STR_(x)

#if defined(__aarch64__)
#define OPENSSL_CHAIN OPENSSL_NAME(_arm_chain)
#define OPENSSL_FEATURES KF_ARM_SHA3
static const char *const openssl_chain_insns[] = {
	"eor3", "rax1", "xar", "bcax", NULL
};
static const char *const *const openssl_chain_forbidden = NULL;
#else
#define OPENSSL_CHAIN OPENSSL_NAME(_x86_chain)
#define OPENSSL_FEATURES KF_X86_AVX512
static const char *const openssl_chain_insns[] = {
	"vpternlogq", "vprolq", NULL
};
static const char *const openssl_chain_forbidden[] = {
	"vpsllvq", "vpsrlvq", NULL
};
#endif

size_t OPENSSL_NAME(_absorb)(uint64_t A[25], const unsigned char *inp,
    size_t len, size_t r);
void OPENSSL_CHAIN(uint8_t *x, uint64_t steps);

static int
openssl_chain_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return openssl_wrap_hash(OPENSSL_NAME(_absorb), msg, len, out);
}

static int
openssl_chain_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	if (steps > 0)
		OPENSSL_CHAIN(x, steps);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's round body (AVX512VL; ARM SHA3), digest "
	    "kept in registers, " OPENSSL_ROUNDS,
	.features = OPENSSL_FEATURES,
	.insns = openssl_chain_insns,
	.forbidden = openssl_chain_forbidden,
	.symbol = OPENSSL_STR(OPENSSL_CHAIN),
	.hash = openssl_chain_hash,
	.chain = openssl_chain_chain,
};

#endif

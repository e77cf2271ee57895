/*
 * sha3/openssl-fused: seed 000's fused variant on x86-64.  The chain is one
 * assembly function that kernels/sha3/generate.pl writes on the
 * coordinator around OpenSSL's AVX512VL round body (keccak1600-avx512vl.pl,
 * its lane layout and round constants unchanged): the digest stays in
 * registers, the rest of the state is reset to the fixed padding in that
 * layout, and registers are set up once per chain.  The 24 rounds run
 * as OpenSSL's loop.  The known answer goes through OpenSSL's
 * SHA3_absorb of the same file.
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

size_t openssl_fused_absorb(uint64_t A[25], const unsigned char *inp,
    size_t len, size_t r);
void openssl_fused_x86_chain(uint8_t *x, uint64_t steps);

static int
openssl_fused_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return openssl_sha3_hash(openssl_fused_absorb, msg, len, out);
}

static int
openssl_fused_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	if (steps > 0)
		openssl_fused_x86_chain(x, steps);
	return 0;
}

static const char *const openssl_fused_insns[] = {
	"vpternlogq", "vprolq", NULL
};
static const char *const openssl_fused_forbidden[] = {
	"vpsllvq", "vpsrlvq", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's AVX512VL round body, digest kept in "
	    "registers, rounds in a loop",
	.features = KF_X86_AVX512,
	.insns = openssl_fused_insns,
	.forbidden = openssl_fused_forbidden,
	.symbol = "openssl_fused_x86_chain",
	.hash = openssl_fused_hash,
	.chain = openssl_fused_chain,
};

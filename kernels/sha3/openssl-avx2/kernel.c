/*
 * sha3/openssl-avx2: OpenSSL's AVX2 Keccak (keccak1600-avx2.pl), behind seed 000's C wrapper (openssl-wrap.h): the
 * state reset and the padded block absorbed with OpenSSL's SHA3_absorb
 * for every hash.  Built only when the coordinator has OpenSSL's source
 * (`seqorch fetch --study sha3`).
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

size_t openssl_avx2_absorb(uint64_t A[25], const unsigned char *inp,
    size_t len, size_t r);

static int
openssl_avx2_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return openssl_wrap_hash(openssl_avx2_absorb, msg, len, out);
}

static int
openssl_avx2_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	openssl_wrap_chain(openssl_avx2_absorb, x, steps);
	return 0;
}

static const char *const openssl_avx2_insns[] = { "vpsllvq", "vpsrlvq", "vpandn", NULL };
static const char *const openssl_avx2_forbidden[] = { "vpternlogq", "vprolq", "vprolvq", NULL };

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's AVX2 Keccak (keccak1600-avx2.pl), state reset and block absorbed per hash",
	.features = KF_X86_AVX2,
	.insns = openssl_avx2_insns,
	.forbidden = openssl_avx2_forbidden,
	.symbol = "openssl_avx2_permute",
	.hash = openssl_avx2_hash,
	.chain = openssl_avx2_chain,
};

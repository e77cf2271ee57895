/*
 * sha3/openssl-avx2: OpenSSL's AVX2 Keccak (keccak1600-avx2.pl), behind seed 000's C wrapper (openssl-wrap.h): the
 * state reset and the padded block absorbed with OpenSSL's SHA3_absorb
 * for every hash.  Built only when the coordinator has OpenSSL's source
 * (`seqorch fetch --study sha3`).
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

OPENSSL_WRAP_HOOKS(avx2)

static const char *const openssl_avx2_insns[] = { "vpsllvq", "vpsrlvq", "vpandn", NULL };
static const char *const openssl_avx2_forbidden[] = { "vpternlogq", "vprolq", "vprolvq", NULL };

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's AVX2 Keccak (keccak1600-avx2.pl), state reset and block absorbed per hash",
	.features = KF_X86_AVX2,
	.insns = openssl_avx2_insns,
	.forbidden = openssl_avx2_forbidden,
	.symbol = "openssl_avx2_permute",
	.hash = openssl_hash,
	.chain = openssl_chain,
};

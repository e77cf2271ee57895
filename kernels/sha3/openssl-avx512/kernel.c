/*
 * sha3/openssl-avx512: OpenSSL's AVX-512 Keccak (keccak1600-avx512.pl), behind seed 000's C wrapper (openssl-wrap.h): the
 * state reset and the padded block absorbed with OpenSSL's SHA3_absorb
 * for every hash.  Built only when the coordinator has OpenSSL's source
 * (`seqorch fetch --study sha3`).
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

OPENSSL_WRAP_HOOKS(avx512)

static const char *const openssl_avx512_insns[] = { "vpternlogq", "vprolvq", NULL };
static const char *const openssl_avx512_forbidden[] = { "vpsllvq", "vpsrlvq", NULL };

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's AVX-512 Keccak (keccak1600-avx512.pl), state reset and block absorbed per hash",
	.features = KF_X86_AVX512,
	.insns = openssl_avx512_insns,
	.forbidden = openssl_avx512_forbidden,
	.symbol = "openssl_avx512_permute",
	.hash = openssl_hash,
	.chain = openssl_chain,
};

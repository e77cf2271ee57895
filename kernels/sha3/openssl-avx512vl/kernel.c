/*
 * sha3/openssl-avx512vl: OpenSSL's AVX512VL Keccak (keccak1600-avx512vl.pl), behind seed 000's C wrapper (openssl-wrap.h): the
 * state reset and the padded block absorbed with OpenSSL's SHA3_absorb
 * for every hash.  Built only when the coordinator has OpenSSL's source
 * (`seqorch fetch --study sha3`).
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

OPENSSL_WRAP_HOOKS(avx512vl)

static const char *const openssl_avx512vl_insns[] = { "vpternlogq", "vprolq", NULL };
static const char *const openssl_avx512vl_forbidden[] = { "vpsllvq", "vpsrlvq", NULL };

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's AVX512VL Keccak (keccak1600-avx512vl.pl), state reset and block absorbed per hash",
	.features = KF_X86_AVX512,
	.insns = openssl_avx512vl_insns,
	.forbidden = openssl_avx512vl_forbidden,
	.symbol = "openssl_avx512vl_permute",
	.hash = openssl_hash,
	.chain = openssl_chain,
};

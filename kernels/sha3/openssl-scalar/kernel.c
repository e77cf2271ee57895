/*
 * sha3/openssl-scalar: OpenSSL's integer Keccak (keccak1600-x86_64.pl,
 * keccak1600-armv8.pl's integer path) behind seed 000's C wrapper
 * (openssl-wrap.h): the state reset and the padded block absorbed with
 * OpenSSL's SHA3_absorb for every hash.  Built only when the coordinator
 * has OpenSSL's source (`seqorch fetch --study sha3`).
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

OPENSSL_WRAP_HOOKS(scalar)

/* The integer path: rotates, never the SIMD Keccak instructions. */
#if defined(__aarch64__)
static const char *const openssl_scalar_insns[] = { "ror", "bic", NULL };
static const char *const openssl_scalar_forbidden[] = {
	"eor3", "rax1", "xar", "bcax", NULL
};
#else
static const char *const openssl_scalar_insns[] = { "rol", NULL };
static const char *const openssl_scalar_forbidden[] = {
	"vpternlogq", "vprolq", "vprolvq", NULL
};
#endif

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's integer Keccak (keccak1600-x86_64.pl, "
	    "keccak1600-armv8.pl), state reset and block absorbed per hash",
	.insns = openssl_scalar_insns,
	.forbidden = openssl_scalar_forbidden,
	.symbol = "openssl_scalar_permute",
	.hash = openssl_hash,
	.chain = openssl_chain,
};

/*
 * sha3/openssl-sha3: seed 000's "simd" variant on ARM, keccak1600-armv8.pl's
 * SHA3-extension code (EOR3, RAX1, XAR, BCAX) selected explicitly, behind
 * the same C wrapper as openssl-scalar (openssl-wrap.h): the state reset
 * and the padded block absorbed with OpenSSL's SHA3_absorb_cext for every
 * hash.  Built only when the coordinator has OpenSSL's source.
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

OPENSSL_WRAP_HOOKS(sha3)

static const char *const openssl_sha3_insns[] = {
	"eor3", "rax1", "xar", "bcax", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL's ARMv8.2 SHA3-extension Keccak "
	    "(keccak1600-armv8.pl, SHA3_absorb_cext), state reset and block "
	    "absorbed per hash",
	.features = KF_ARM_SHA3,
	.insns = openssl_sha3_insns,
	.symbol = "openssl_sha3_permute",
	.hash = openssl_hash,
	.chain = openssl_chain,
};

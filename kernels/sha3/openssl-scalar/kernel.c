/*
 * sha3/openssl-scalar: OpenSSL's integer Keccak (keccak1600-x86_64.pl,
 * keccak1600-armv8.pl's integer path) behind seed 000's C wrapper
 * (openssl-wrap.h): the state reset and the padded block absorbed with
 * OpenSSL's SHA3_absorb for every hash.  Built only when the coordinator
 * has OpenSSL's source (`seqorch fetch --study sha3`).
 */
#include "kernel.h"
#include "sha3/openssl-wrap.h"

size_t openssl_scalar_absorb(uint64_t A[25], const unsigned char *inp,
    size_t len, size_t r);

static int
openssl_scalar_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return openssl_wrap_hash(openssl_scalar_absorb, msg, len, out);
}

static int
openssl_scalar_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	openssl_wrap_chain(openssl_scalar_absorb, x, steps);
	return 0;
}

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
	.hash = openssl_scalar_hash,
	.chain = openssl_scalar_chain,
};

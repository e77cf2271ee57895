/*
 * sha3/openssl-evp: the public-API control.  EVP_DigestInit_ex, Update
 * and Final_ex with EVP_sha3_256() for every hash, one EVP_MD_CTX reused
 * for the whole chain; the host's libcrypto does the work.
 */
#include "kernel.h"

#include <openssl/evp.h>

static int
evp_setup(void **ctx)
{
	*ctx = EVP_MD_CTX_new();
	return *ctx == NULL ? -1 : 0;
}

static void
evp_teardown(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static int
evp_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	unsigned int n = 0;

	if (EVP_DigestInit_ex(ctx, EVP_sha3_256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, msg, len) != 1 ||
	    EVP_DigestFinal_ex(ctx, out, &n) != 1 || n != 32)
		return -1;
	return 0;
}

static int
evp_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	const EVP_MD *md = EVP_sha3_256();
	unsigned int n;
	uint64_t i;

	for (i = 0; i < steps; i++) {
		if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
		    EVP_DigestUpdate(ctx, x, 32) != 1 ||
		    EVP_DigestFinal_ex(ctx, x, &n) != 1)
			return -1;
	}
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL EVP_sha3_256() Init/Update/Final per hash, "
	    "one reused EVP_MD_CTX (control)",
	.symbol = "evp_chain",
	.setup = evp_setup,
	.teardown = evp_teardown,
	.hash = evp_hash,
	.chain = evp_chain,
};

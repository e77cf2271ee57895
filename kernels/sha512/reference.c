/*
 * The coordinator's sha512 reference: OpenSSL's EVP_sha512 through the
 * public digest API, one Init/Update/Final per step.  It shares no code with
 * any variant (openssl-transform and openssl-api run on the host's
 * libcrypto through the low-level SHA512_* calls, this on the
 * coordinator's through EVP).
 */
#include "kernel.h"

#include <openssl/evp.h>
#include <stdio.h>

static int
sha512_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n;
	uint64_t i;
	int rc = 0;

	if (ctx == NULL) {
		snprintf(why, whylen, "no EVP context");
		return -1;
	}
	for (i = 0; i < steps; i++) {
		if ((i & 0xffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			rc = -1;
			break;
		}
		if (EVP_DigestInit_ex(ctx, EVP_sha512(), NULL) != 1 ||
		    EVP_DigestUpdate(ctx, x, 64) != 1 ||
		    EVP_DigestFinal_ex(ctx, x, &n) != 1 || n != 64) {
			snprintf(why, whylen, "OpenSSL EVP_sha512 failed");
			rc = -1;
			break;
		}
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

const struct study_reference REFERENCE_THIS = {
	.method = "OpenSSL EVP_sha512",
	.chain = sha512_reference_chain,
};

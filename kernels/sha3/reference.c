/*
 * The coordinator's sha3 reference: OpenSSL's EVP_sha3_256 through the
 * public digest API, one Init/Update/Final per step.  It shares no code with
 * any variant (openssl-evp runs on the host's libcrypto, this on the
 * coordinator's).
 */
#include "kernel.h"

#include <openssl/evp.h>
#include <stdio.h>

static int
sha3_reference_chain(uint8_t *x, uint64_t steps, volatile sig_atomic_t *stop,
    char *why, size_t whylen)
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
		if (EVP_DigestInit_ex(ctx, EVP_sha3_256(), NULL) != 1 ||
		    EVP_DigestUpdate(ctx, x, 32) != 1 ||
		    EVP_DigestFinal_ex(ctx, x, &n) != 1 || n != 32) {
			snprintf(why, whylen, "OpenSSL EVP_sha3_256 failed");
			rc = -1;
			break;
		}
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

const struct study_reference REFERENCE_THIS = {
	.method = "OpenSSL EVP_sha3_256",
	.chain = sha3_reference_chain,
};

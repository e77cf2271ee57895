/*
 * The coordinator's sha512 reference: OpenSSL's EVP_sha512 through the
 * public digest API, one Init/Update/Final per step.  It shares no code with
 * any variant (openssl-transform and openssl-api run on the host's
 * libcrypto through the low-level SHA512_* calls, this on the
 * coordinator's through EVP).
 */
#include "evp-reference.h"

static int
sha512_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	return evp_reference_chain(EVP_sha512(), 64, x, steps, stop, why,
	    whylen);
}

static int
sha512_reference_msg_chain(uint8_t *x, uint64_t steps, size_t msg_len,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	return evp_reference_msg_chain(EVP_sha512(), 64, x, steps, msg_len, stop,
	    why, whylen);
}

const struct study_reference REFERENCE_THIS = {
	.method = "OpenSSL EVP_sha512",
	.chain = sha512_reference_chain,
	.msg_chain = sha512_reference_msg_chain,
};

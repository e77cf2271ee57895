/*
 * The coordinator's sha3 reference: OpenSSL's EVP_sha3_256 through the
 * public digest API, one Init/Update/Final per step.  It shares no code with
 * any variant (openssl-evp runs on the host's libcrypto, this on the
 * coordinator's).
 */
#include "evp-reference.h"

static int
sha3_reference_chain(uint8_t *x, uint64_t steps, volatile sig_atomic_t *stop,
    char *why, size_t whylen)
{
	return evp_reference_chain(EVP_sha3_256(), 32, x, steps, stop, why,
	    whylen);
}

static int
sha3_reference_msg_chain(uint8_t *x, uint64_t steps, size_t msg_len,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	return evp_reference_msg_chain(EVP_sha3_256(), 32, x, steps, msg_len,
	    stop, why, whylen);
}

const struct study_reference REFERENCE_THIS = {
	.method = "OpenSSL EVP_sha3_256",
	.chain = sha3_reference_chain,
	.msg_chain = sha3_reference_msg_chain,
};

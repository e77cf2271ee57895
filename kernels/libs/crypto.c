/*
 * The probe of -lcrypto (kernels/registry.sh libs): it compiles and links
 * when the compiler, with the build's flags, finds what the variants whose
 * libs name -lcrypto and the agent's libcrypto facts use: OpenSSL's EVP
 * digests, SHA512_Transform (deprecated in OpenSSL 3, still exported) and
 * OpenSSL_version.  It is never run.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

int
main(void)
{
	SHA512_CTX c;
	unsigned char b[128] = { 0 };
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	SHA512_Init(&c);
	SHA512_Transform(&c, b);
	EVP_MD_CTX_free(ctx);
	return EVP_MD_size(EVP_sha3_256()) != 32 ||
	    OpenSSL_version(OPENSSL_VERSION) == NULL;
}

/*
 * sha512/openssl-api: the seeds' API control.  SHA512_Init, SHA512_Update
 * and SHA512_Final on the host's libcrypto for every hash; the library
 * does the padding and the serialization.
 *
 * These calls are deprecated in OpenSSL 3 and still exported; this
 * folder's `flags` silences the deprecation for this file only.
 */
#include "kernel.h"

#include <openssl/sha.h>
#include <stdlib.h>

static int
api_setup(void **ctx)
{
	SHA512_CTX *c = calloc(1, sizeof *c);

	*ctx = c;
	return c == NULL ? -1 : 0;
}

static void
api_teardown(void *ctx)
{
	free(ctx);
}

static int
api_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	if (SHA512_Init(ctx) != 1 || SHA512_Update(ctx, msg, len) != 1 ||
	    SHA512_Final(out, ctx) != 1)
		return -1;
	return 0;
}

static int
api_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t i;

	for (i = 0; i < steps; i++)
		if (SHA512_Init(ctx) != 1 || SHA512_Update(ctx, x, 64) != 1 ||
		    SHA512_Final(x, ctx) != 1)
			return -1;
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL SHA512_Init/Update/Final per hash (the seeds' "
	    "API control)",
	.symbol = "api_chain",
	.setup = api_setup,
	.teardown = api_teardown,
	.hash = api_hash,
	.chain = api_chain,
};

/*
 * sha512/openssl-transform: the seeds' tight chain (control).  Per hash
 * the host's libcrypto SHA512_Transform compresses one block made of the
 * previous digest and the fixed padding of a 64-byte message, from the
 * standard IV set by SHA512_Init; the state words are then written out
 * big-endian as the next message.  No per-hash lookup, allocation or
 * streaming bookkeeping, but resetting the state, building the block and
 * serializing the digest are timed, as in the seeds.
 *
 * SHA512_Init/Transform are deprecated in OpenSSL 3 and still exported;
 * this folder's `flags` silences the deprecation for this file only.
 */
#include "kernel.h"

#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

static int
transform_setup(void **ctx)
{
	SHA512_CTX *c = calloc(1, sizeof *c);

	*ctx = c;
	return c == NULL ? -1 : 0;
}

static void
transform_teardown(void *ctx)
{
	free(ctx);
}

/* Seed 002's serialization: the state words, big-endian. */
static void
put_state(const SHA512_CTX *c, uint8_t *out)
{
	int i, j;

	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++)
			out[8 * i + j] = (uint8_t)(c->h[i] >> (56 - 8 * j));
}

/*
 * A message of any length, every block through SHA512_Transform: the
 * known answer, and the L-byte chain of `run --msg-len`.
 */
static int
transform_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	uint8_t block[2 * SHA512_CBLOCK] = { 0 };
	uint64_t bits = (uint64_t)len * 8;
	size_t rest, last, off;
	int i;

	if (SHA512_Init(ctx) != 1)
		return -1;
	for (rest = len; rest >= SHA512_CBLOCK; rest -= SHA512_CBLOCK) {
		SHA512_Transform(ctx, msg);
		msg += SHA512_CBLOCK;
	}
	memcpy(block, msg, rest);
	block[rest] = 0x80;
	last = rest > SHA512_CBLOCK - 17 ? 2 * SHA512_CBLOCK : SHA512_CBLOCK;
	for (i = 0; i < 8; i++)
		block[last - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (off = 0; off < last; off += SHA512_CBLOCK)
		SHA512_Transform(ctx, block + off);
	put_state(ctx, out);
	return 0;
}

static int
transform_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	/* Bytes 64-127 never change: 0x80, zeros, the length 512 bits. */
	uint8_t block[SHA512_CBLOCK] = { 0 };
	uint64_t i;

	block[64] = 0x80;
	block[SHA512_CBLOCK - 2] = 0x02;
	memcpy(block, x, 64);
	for (i = 0; i < steps; i++) {
		if (SHA512_Init(ctx) != 1)
			return -1;
		SHA512_Transform(ctx, block);
		put_state(ctx, block);
	}
	memcpy(x, block, 64);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "OpenSSL SHA512_Transform on one block per hash, "
	    "standard IV, fixed padding (control: the seeds' tight chain)",
	.symbol = "transform_chain",
	.setup = transform_setup,
	.teardown = transform_teardown,
	.hash = transform_hash,
	.chain = transform_chain,
};

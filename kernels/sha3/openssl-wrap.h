/*
 * kernels/sha3/openssl-wrap.h: the C side of the openssl-* variants, seed
 * 000's wrapper around OpenSSL's own SHA3_absorb (generated on the
 * coordinator from the fetched source, kernels/sha3/generate.pl, and
 * renamed per variant by its kernel.S).  Every hash resets the state and
 * absorbs the fixed padded block of a 32-byte message; the digest is the
 * state's first four lanes, which every OpenSSL lane layout keeps in
 * place (A[0][0..3]).
 */
#ifndef SEQORCH_SHA3_OPENSSL_WRAP_H
#define SEQORCH_SHA3_OPENSSL_WRAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* OpenSSL's size_t SHA3_absorb(uint64_t A[5][5], inp, len, r). */
typedef size_t (*openssl_absorb_fn)(uint64_t A[25], const unsigned char *inp,
    size_t len, size_t r);

#define OPENSSL_SHA3_RATE 136

/*
 * SHA3-256 of a message of any length, through absorb: its full blocks
 * straight from msg, then the padded rest as one block.
 */
static inline int
openssl_wrap_hash(openssl_absorb_fn absorb, const uint8_t *msg, size_t len,
    uint8_t *out)
{
	uint64_t A[25] = { 0 };
	unsigned char block[OPENSSL_SHA3_RATE] = { 0 };
	size_t full = len - len % OPENSSL_SHA3_RATE;

	if (full > 0 && absorb(A, msg, full, OPENSSL_SHA3_RATE) != 0)
		return -1;
	memcpy(block, msg + full, len - full);
	block[len - full] ^= 0x06;
	block[OPENSSL_SHA3_RATE - 1] ^= 0x80;
	if (absorb(A, block, sizeof block, sizeof block) != 0)
		return -1;
	memcpy(out, A, 32);
	return 0;
}

/* x = SHA3-256(x), steps times: reset, prepare the block, absorb. */
static inline void
openssl_wrap_chain(openssl_absorb_fn absorb, uint8_t *x, uint64_t steps)
{
	uint64_t A[25];
	unsigned char block[OPENSSL_SHA3_RATE] = { 0 };
	uint64_t i;

	block[32] = 0x06;
	block[OPENSSL_SHA3_RATE - 1] = 0x80;
	for (i = 0; i < steps; i++) {
		memset(A, 0, sizeof A);
		memcpy(block, x, 32);
		absorb(A, block, sizeof block, sizeof block);
		memcpy(x, A, 32);
	}
}

/*
 * The hash and chain hooks, openssl_hash and openssl_chain, of the variant
 * whose kernel.S renames OpenSSL's SHA3_absorb to openssl_<v>_absorb.
 */
#define OPENSSL_WRAP_HOOKS(v)						\
size_t openssl_##v##_absorb(uint64_t A[25], const unsigned char *inp,	\
    size_t len, size_t r);						\
static int								\
openssl_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)	\
{									\
	(void)ctx;							\
	return openssl_wrap_hash(openssl_##v##_absorb, msg, len, out);	\
}									\
static int								\
openssl_chain(void *ctx, uint8_t *x, uint64_t steps)			\
{									\
	(void)ctx;							\
	openssl_wrap_chain(openssl_##v##_absorb, x, steps);		\
	return 0;							\
}

#endif

/*
 * sha512/c-fused: our compression function in portable C, the whole chain
 * in one function.  The digest never leaves the locals: words 0-7 of the
 * next block are the eight state words plus the IV, words 8-15 are the
 * constant padding of a 64-byte message, written as literals so that the
 * compiler folds them into the first 16 rounds and the first message
 * schedule steps, and the state restarts from the IV constants (round 0
 * folds too).  All 80 rounds are written out (sha512-c.h).
 */
#include "kernel.h"
#include "sha512/sha512-c.h"

static void
c_fused_compress(uint64_t state[8], const uint64_t block[16])
{
	uint64_t a = state[0], b = state[1], c = state[2], d = state[3];
	uint64_t e = state[4], f = state[5], g = state[6], h = state[7];
	uint64_t m0 = block[0], m1 = block[1], m2 = block[2], m3 = block[3];
	uint64_t m4 = block[4], m5 = block[5], m6 = block[6], m7 = block[7];
	uint64_t m8 = block[8], m9 = block[9], m10 = block[10];
	uint64_t m11 = block[11], m12 = block[12], m13 = block[13];
	uint64_t m14 = block[14], m15 = block[15];

	SHA512_ROUNDS80();
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
	state[5] += f;
	state[6] += g;
	state[7] += h;
}

static int
c_fused_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha512_short(msg, len, out, c_fused_compress);
}

static int
sha512_c_fused_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t a, b, c, d, e, f, g, h;
	uint64_t m0, m1, m2, m3, m4, m5, m6, m7;
	uint64_t m8, m9, m10, m11, m12, m13, m14, m15;
	uint64_t i;

	(void)ctx;
	/* a..h hold the digest between hashes. */
	a = sha512_load_be(x);
	b = sha512_load_be(x + 8);
	c = sha512_load_be(x + 16);
	d = sha512_load_be(x + 24);
	e = sha512_load_be(x + 32);
	f = sha512_load_be(x + 40);
	g = sha512_load_be(x + 48);
	h = sha512_load_be(x + 56);
	for (i = 0; i < steps; i++) {
		m0 = a; m1 = b; m2 = c; m3 = d;
		m4 = e; m5 = f; m6 = g; m7 = h;
		m8 = SHA512_PAD64_W8;
		m9 = m10 = m11 = m12 = m13 = m14 = 0;
		m15 = SHA512_PAD64_W15;
		a = sha512_iv[0]; b = sha512_iv[1];
		c = sha512_iv[2]; d = sha512_iv[3];
		e = sha512_iv[4]; f = sha512_iv[5];
		g = sha512_iv[6]; h = sha512_iv[7];
		SHA512_ROUNDS80();
		a += sha512_iv[0]; b += sha512_iv[1];
		c += sha512_iv[2]; d += sha512_iv[3];
		e += sha512_iv[4]; f += sha512_iv[5];
		g += sha512_iv[6]; h += sha512_iv[7];
	}
	sha512_store_be(x, a);
	sha512_store_be(x + 8, b);
	sha512_store_be(x + 16, c);
	sha512_store_be(x + 24, d);
	sha512_store_be(x + 32, e);
	sha512_store_be(x + 40, f);
	sha512_store_be(x + 48, g);
	sha512_store_be(x + 56, h);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "portable C, whole chain in one function, digest in "
	    "locals, padding words and IV folded as constants",
	.symbol = "sha512_c_fused_chain",
	.hash = c_fused_hash,
	.chain = sha512_c_fused_chain,
};

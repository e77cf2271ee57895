/*
 * SHA-512 (FIPS 180-4) pieces shared by the sha512 variants that are ours:
 * the round constants, the initial value, big-endian word access, the
 * padding of one short message, and the portable round as macros on local
 * variables (so a chain loop keeps the state and the message words in
 * registers and the compiler folds what is constant).
 *
 * In the chain every message is the previous 64-byte digest: words 0-7 of
 * the block are the eight digest words exactly (both big-endian), and words
 * 8-15 are the fixed padding of a 64-byte message below.
 */
#ifndef SEQORCH_SHA512_C_H
#define SEQORCH_SHA512_C_H

#include <stdint.h>
#include <string.h>

/* Words 8 and 15 of the block of a 64-byte message; 9-14 are zero. */
#define SHA512_PAD64_W8 0x8000000000000000ULL
#define SHA512_PAD64_W15 512ULL		/* message length in bits */

static const uint64_t sha512_iv[8] = {
	0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
	0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
	0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static const uint64_t sha512_k[80] = {
	0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL,
	0xe9b5dba58189dbbcULL, 0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL,
	0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL, 0xd807aa98a3030242ULL,
	0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
	0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL,
	0xc19bf174cf692694ULL, 0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL,
	0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL, 0x2de92c6f592b0275ULL,
	0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
	0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL,
	0xbf597fc7beef0ee4ULL, 0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL,
	0x06ca6351e003826fULL, 0x142929670a0e6e70ULL, 0x27b70a8546d22ffcULL,
	0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
	0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL,
	0x92722c851482353bULL, 0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL,
	0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL, 0xd192e819d6ef5218ULL,
	0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
	0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL,
	0x34b0bcb5e19b48a8ULL, 0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL,
	0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL, 0x748f82ee5defb2fcULL,
	0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
	0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL,
	0xc67178f2e372532bULL, 0xca273eceea26619cULL, 0xd186b8c721c0c207ULL,
	0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL, 0x06f067aa72176fbaULL,
	0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
	0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL,
	0x431d67c49c100d4cULL, 0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL,
	0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

static inline uint64_t
sha512_load_be(const uint8_t *p)
{
	return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 |
	    (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
	    (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
	    (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static inline void
sha512_store_be(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* n in 1..63: compilers turn this into one rotate (rorx with BMI2). */
#define SHA512_ROR(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define SHA512_S0(a) (SHA512_ROR(a, 28) ^ SHA512_ROR(a, 34) ^ SHA512_ROR(a, 39))
#define SHA512_S1(e) (SHA512_ROR(e, 14) ^ SHA512_ROR(e, 18) ^ SHA512_ROR(e, 41))
#define SHA512_s0(w) (SHA512_ROR(w, 1) ^ SHA512_ROR(w, 8) ^ ((w) >> 7))
#define SHA512_s1(w) (SHA512_ROR(w, 19) ^ SHA512_ROR(w, 61) ^ ((w) >> 6))
/* Ch's two terms have no bit in common, so they can be added. */
#define SHA512_CH(e, f, g) (((e) & (f)) ^ (~(e) & (g)))
#define SHA512_MAJ(a, b, c) (((a) & (b)) | ((c) & ((a) | (b))))

/*
 * One round on the locals a..h (the caller rotates the names) with
 * message word w and round t: h becomes the new a, d the new e.
 */
#define SHA512_ROUND(a, b, c, d, e, f, g, h, t, w) do {		\
	uint64_t t1_ = (h) + SHA512_S1(e) + SHA512_CH(e, f, g) +	\
	    sha512_k[t] + (w);						\
	(d) += t1_;							\
	(h) = t1_ + SHA512_S0(a) + SHA512_MAJ(a, b, c);			\
} while (0)

/* Eight rounds from round t with message words w0..w7. */
#define SHA512_ROUND8(t, w0, w1, w2, w3, w4, w5, w6, w7) do {		\
	SHA512_ROUND(a, b, c, d, e, f, g, h, (t) + 0, w0);		\
	SHA512_ROUND(h, a, b, c, d, e, f, g, (t) + 1, w1);		\
	SHA512_ROUND(g, h, a, b, c, d, e, f, (t) + 2, w2);		\
	SHA512_ROUND(f, g, h, a, b, c, d, e, (t) + 3, w3);		\
	SHA512_ROUND(e, f, g, h, a, b, c, d, (t) + 4, w4);		\
	SHA512_ROUND(d, e, f, g, h, a, b, c, (t) + 5, w5);		\
	SHA512_ROUND(c, d, e, f, g, h, a, b, (t) + 6, w6);		\
	SHA512_ROUND(b, c, d, e, f, g, h, a, (t) + 7, w7);		\
} while (0)

/* W[t] in place of W[t - 16], on the sixteen locals m0..m15. */
#define SHA512_M(j, j14, j9, j1)					\
	(m##j += SHA512_s1(m##j14) + m##j9 + SHA512_s0(m##j1))

/* Sixteen rounds from round t (16, 32, 48, 64), scheduling as they go. */
#define SHA512_ROUND16(t) do {						\
	SHA512_ROUND8(t, SHA512_M(0, 14, 9, 1), SHA512_M(1, 15, 10, 2),	\
	    SHA512_M(2, 0, 11, 3), SHA512_M(3, 1, 12, 4),		\
	    SHA512_M(4, 2, 13, 5), SHA512_M(5, 3, 14, 6),		\
	    SHA512_M(6, 4, 15, 7), SHA512_M(7, 5, 0, 8));		\
	SHA512_ROUND8((t) + 8, SHA512_M(8, 6, 1, 9),			\
	    SHA512_M(9, 7, 2, 10), SHA512_M(10, 8, 3, 11),		\
	    SHA512_M(11, 9, 4, 12), SHA512_M(12, 10, 5, 13),		\
	    SHA512_M(13, 11, 6, 14), SHA512_M(14, 12, 7, 15),		\
	    SHA512_M(15, 13, 8, 0));					\
} while (0)

/* All 80 rounds on a..h with the block in m0..m15 (overwritten). */
#define SHA512_ROUNDS80() do {						\
	SHA512_ROUND8(0, m0, m1, m2, m3, m4, m5, m6, m7);		\
	SHA512_ROUND8(8, m8, m9, m10, m11, m12, m13, m14, m15);		\
	SHA512_ROUND16(16);						\
	SHA512_ROUND16(32);						\
	SHA512_ROUND16(48);						\
	SHA512_ROUND16(64);						\
} while (0)

/*
 * SHA-512 of a message of any length into out (64 bytes), with
 * compress(state, block words) doing the work: the known answer of a
 * variant's own compression function and, through kernel->hash, the
 * L-byte chain of `run --msg-len` (kernels/kernel.h).  (The name is from
 * when it took one block only.)  Returns 0.
 */
static inline int
sha512_short(const uint8_t *msg, size_t len, uint8_t *out,
    void (*compress)(uint64_t state[8], const uint64_t block[16]))
{
	uint8_t buf[256] = { 0 };
	uint64_t state[8], block[16];
	uint64_t bits = (uint64_t)len * 8;
	size_t i, off, rest, nbuf;

	memcpy(state, sha512_iv, sizeof state);
	for (rest = len; rest >= 128; rest -= 128, msg += 128) {
		for (i = 0; i < 16; i++)
			block[i] = sha512_load_be(msg + 8 * i);
		compress(state, block);
	}
	/* The rest, 0x80, zeros and the 128-bit length: one or two blocks. */
	memcpy(buf, msg, rest);
	buf[rest] = 0x80;
	nbuf = rest > 111 ? 256 : 128;
	sha512_store_be(buf + nbuf - 8, bits);
	for (off = 0; off < nbuf; off += 128) {
		for (i = 0; i < 16; i++)
			block[i] = sha512_load_be(buf + off + 8 * i);
		compress(state, block);
	}
	for (i = 0; i < 8; i++)
		sha512_store_be(out + 8 * i, state[i]);
	return 0;
}

#endif

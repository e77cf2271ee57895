/*
 * Portable Keccak-f[1600] and the SHA3-256 padding helpers shared by the
 * sha3 variants.  Lanes are little-endian uint64_t in x + 5y order
 * (FIPS 202).  The round is a macro on 25 lane variables so a chain loop
 * keeps the state in locals across hashes and c-unrolled can expand it;
 * the other variants use the padding, load/store and round-constant
 * helpers with their own permutations.
 */
#ifndef SEQORCH_KECCAK_C_H
#define SEQORCH_KECCAK_C_H

#include <stdint.h>
#include <string.h>

#define SHA3_256_RATE 136	/* bytes: 1600 - 2 * 256 bits */

/* Lanes 4 and 16 after padding a 32-byte message; the rest are zero. */
#define SHA3_256_PAD32_LANE4 0x06ULL
#define SHA3_256_PAD32_LANE16 0x8000000000000000ULL

static const uint64_t keccak_rc[24] = {
	0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL,
	0x8000000080008000ULL, 0x000000000000808bULL, 0x0000000080000001ULL,
	0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL,
	0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
	0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
	0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
	0x000000000000800aULL, 0x800000008000000aULL, 0x8000000080008081ULL,
	0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

/* n in 1..63: compilers turn this into one rotate instruction. */
#define ROL64(a, n) (((a) << (n)) | ((a) >> (64 - (n))))

/*
 * One round on 25 lane variables a00..a24 (declared by the caller, with
 * the round constant rc); theta, rho+pi and chi are fused so a compiler
 * keeps all lanes in registers.  A macro so c-unrolled can expand all 24
 * rounds with literal constants.
 */
#define KECCAK_ROUND_C(rc) do {						\
	uint64_t c0 = a00 ^ a05 ^ a10 ^ a15 ^ a20;			\
	uint64_t c1 = a01 ^ a06 ^ a11 ^ a16 ^ a21;			\
	uint64_t c2 = a02 ^ a07 ^ a12 ^ a17 ^ a22;			\
	uint64_t c3 = a03 ^ a08 ^ a13 ^ a18 ^ a23;			\
	uint64_t c4 = a04 ^ a09 ^ a14 ^ a19 ^ a24;			\
	uint64_t d0 = c4 ^ ROL64(c1, 1);				\
	uint64_t d1 = c0 ^ ROL64(c2, 1);				\
	uint64_t d2 = c1 ^ ROL64(c3, 1);				\
	uint64_t d3 = c2 ^ ROL64(c4, 1);				\
	uint64_t d4 = c3 ^ ROL64(c0, 1);				\
	/* rho and pi: b[y][2x+3y] = rot(a[x][y] ^ d[x], r[x][y]) */	\
	uint64_t b00 = a00 ^ d0;					\
	uint64_t b01 = ROL64(a06 ^ d1, 44);				\
	uint64_t b02 = ROL64(a12 ^ d2, 43);				\
	uint64_t b03 = ROL64(a18 ^ d3, 21);				\
	uint64_t b04 = ROL64(a24 ^ d4, 14);				\
	uint64_t b05 = ROL64(a03 ^ d3, 28);				\
	uint64_t b06 = ROL64(a09 ^ d4, 20);				\
	uint64_t b07 = ROL64(a10 ^ d0, 3);				\
	uint64_t b08 = ROL64(a16 ^ d1, 45);				\
	uint64_t b09 = ROL64(a22 ^ d2, 61);				\
	uint64_t b10 = ROL64(a01 ^ d1, 1);				\
	uint64_t b11 = ROL64(a07 ^ d2, 6);				\
	uint64_t b12 = ROL64(a13 ^ d3, 25);				\
	uint64_t b13 = ROL64(a19 ^ d4, 8);				\
	uint64_t b14 = ROL64(a20 ^ d0, 18);				\
	uint64_t b15 = ROL64(a04 ^ d4, 27);				\
	uint64_t b16 = ROL64(a05 ^ d0, 36);				\
	uint64_t b17 = ROL64(a11 ^ d1, 10);				\
	uint64_t b18 = ROL64(a17 ^ d2, 15);				\
	uint64_t b19 = ROL64(a23 ^ d3, 56);				\
	uint64_t b20 = ROL64(a02 ^ d2, 62);				\
	uint64_t b21 = ROL64(a08 ^ d3, 55);				\
	uint64_t b22 = ROL64(a14 ^ d4, 39);				\
	uint64_t b23 = ROL64(a15 ^ d0, 41);				\
	uint64_t b24 = ROL64(a21 ^ d1, 2);				\
	a00 = b00 ^ (~b01 & b02) ^ (rc);				\
	a01 = b01 ^ (~b02 & b03);					\
	a02 = b02 ^ (~b03 & b04);					\
	a03 = b03 ^ (~b04 & b00);					\
	a04 = b04 ^ (~b00 & b01);					\
	a05 = b05 ^ (~b06 & b07);					\
	a06 = b06 ^ (~b07 & b08);					\
	a07 = b07 ^ (~b08 & b09);					\
	a08 = b08 ^ (~b09 & b05);					\
	a09 = b09 ^ (~b05 & b06);					\
	a10 = b10 ^ (~b11 & b12);					\
	a11 = b11 ^ (~b12 & b13);					\
	a12 = b12 ^ (~b13 & b14);					\
	a13 = b13 ^ (~b14 & b10);					\
	a14 = b14 ^ (~b10 & b11);					\
	a15 = b15 ^ (~b16 & b17);					\
	a16 = b16 ^ (~b17 & b18);					\
	a17 = b17 ^ (~b18 & b19);					\
	a18 = b18 ^ (~b19 & b15);					\
	a19 = b19 ^ (~b15 & b16);					\
	a20 = b20 ^ (~b21 & b22);					\
	a21 = b21 ^ (~b22 & b23);					\
	a22 = b22 ^ (~b23 & b24);					\
	a23 = b23 ^ (~b24 & b20);					\
	a24 = b24 ^ (~b20 & b21);					\
} while (0)

/* The 25 lane variables the round macro works on. */
#define KECCAK_LANES_C							\
	uint64_t a00, a01, a02, a03, a04, a05, a06, a07, a08, a09,	\
	    a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,		\
	    a20, a21, a22, a23, a24

#define KECCAK_LOAD_C(s) do {						\
	a00 = (s)[0]; a01 = (s)[1]; a02 = (s)[2]; a03 = (s)[3];	\
	a04 = (s)[4]; a05 = (s)[5]; a06 = (s)[6]; a07 = (s)[7];	\
	a08 = (s)[8]; a09 = (s)[9]; a10 = (s)[10]; a11 = (s)[11];	\
	a12 = (s)[12]; a13 = (s)[13]; a14 = (s)[14];			\
	a15 = (s)[15]; a16 = (s)[16]; a17 = (s)[17];			\
	a18 = (s)[18]; a19 = (s)[19]; a20 = (s)[20];			\
	a21 = (s)[21]; a22 = (s)[22]; a23 = (s)[23];			\
	a24 = (s)[24];							\
} while (0)

#define KECCAK_STORE_C(s) do {						\
	(s)[0] = a00; (s)[1] = a01; (s)[2] = a02; (s)[3] = a03;	\
	(s)[4] = a04; (s)[5] = a05; (s)[6] = a06; (s)[7] = a07;	\
	(s)[8] = a08; (s)[9] = a09; (s)[10] = a10; (s)[11] = a11;	\
	(s)[12] = a12; (s)[13] = a13; (s)[14] = a14;			\
	(s)[15] = a15; (s)[16] = a16; (s)[17] = a17;			\
	(s)[18] = a18; (s)[19] = a19; (s)[20] = a20;			\
	(s)[21] = a21; (s)[22] = a22; (s)[23] = a23;			\
	(s)[24] = a24;							\
} while (0)

/* The permutation: 24 rounds of the macro, lanes in locals. */
static inline void
keccak_f1600_c(uint64_t s[25])
{
	KECCAK_LANES_C;
	int r;

	KECCAK_LOAD_C(s);
	for (r = 0; r < 24; r++)
		KECCAK_ROUND_C(keccak_rc[r]);
	KECCAK_STORE_C(s);
}

static inline uint64_t
load64_le(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void
store64_le(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Load the one padded block of a message shorter than one block
 * (len < 136) into a reset state: 0x06 domain/pad byte after the message,
 * 0x80 at the end of the rate.
 */
static inline void
sha3_256_pad_short(uint64_t s[25], const uint8_t *msg, size_t len)
{
	uint8_t block[SHA3_256_RATE];
	int i;

	memset(block, 0, sizeof block);
	memcpy(block, msg, len);
	block[len] ^= 0x06;
	block[SHA3_256_RATE - 1] ^= 0x80;
	for (i = 0; i < SHA3_256_RATE / 8; i++)
		s[i] = load64_le(block + 8 * i);
	for (; i < 25; i++)
		s[i] = 0;
}

/* The 32-byte digest: the first four lanes, little-endian. */
static inline void
sha3_256_squeeze(const uint64_t s[25], uint8_t out[32])
{
	int i;

	for (i = 0; i < 4; i++)
		store64_le(out + 8 * i, s[i]);
}

/*
 * The wrapped variants' per-hash reset: a fresh state holding the one
 * padded block of the 32-byte message x (what seed 000's scalar wrapper
 * does), without the general path's block buffer.
 */
static inline void
sha3_256_pad32(uint64_t s[25], const uint8_t x[32])
{
	int i;

	for (i = 0; i < 4; i++)
		s[i] = load64_le(x + 8 * i);
	s[4] = SHA3_256_PAD32_LANE4;
	for (i = 5; i < 25; i++)
		s[i] = 0;
	s[16] = SHA3_256_PAD32_LANE16;
}

/* Lanes 0-3 keep the digest; the other 21 get a 32-byte message's pad. */
#define KECCAK_RESET_PAD32_C() do {					\
	a04 = SHA3_256_PAD32_LANE4; a05 = a06 = a07 = a08 = a09 = 0;	\
	a10 = a11 = a12 = a13 = a14 = a15 = 0;				\
	a16 = SHA3_256_PAD32_LANE16; a17 = a18 = a19 = 0;		\
	a20 = a21 = a22 = a23 = a24 = 0;				\
} while (0)

/* A Keccak-f[1600] permutation of the state in memory. */
typedef void keccak_permute_fn(uint64_t s[25]);

/*
 * SHA3-256 of a message shorter than one block with permute, the known
 * answer path of every variant; -1 for a longer message.
 */
static inline int
sha3_256_short(const uint8_t *msg, size_t len, uint8_t out[32],
    keccak_permute_fn *permute)
{
	uint64_t s[25];

	if (len >= SHA3_256_RATE)
		return -1;
	sha3_256_pad_short(s, msg, len);
	permute(s);
	sha3_256_squeeze(s, out);
	return 0;
}

/*
 * The chain of every *-wrapped variant, seed 000's scalar wrapper: each
 * hash resets the state to the padded block of x in memory, permutes it
 * and reads the digest back.  Inlined with a constant permute, so each
 * variant calls its own permutation directly.
 */
static inline void
sha3_256_wrapped_chain(uint8_t x[32], uint64_t steps,
    keccak_permute_fn *permute)
{
	uint64_t s[25];
	uint64_t i;

	for (i = 0; i < steps; i++) {
		sha3_256_pad32(s, x);
		permute(s);
		sha3_256_squeeze(s, x);
	}
}

#endif

/*
 * Portable Keccak-f[1600] and the SHA3-256 padding helpers shared by the
 * sha3 variants.  Lanes are little-endian uint64_t in x + 5y order
 * (FIPS 202).  The round is a macro on lane variables so a chain loop
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
 * The round as in the Keccak team's optimized 64-bit code: two sets of 25
 * lane variables, a round reads set s and writes set t (a -> e -> a, so a
 * two-round body needs no copies), and theta's column parities c0..c4 for
 * the next round are accumulated as chi writes each lane, so each lane is
 * read once a round.  x86-64 has 16 registers for 50 lanes, 5 parities and
 * 5 theta terms: going plane by plane keeps one chi row's five inputs and
 * the parities in registers while the lanes wait on the stack.
 */

/* The column parities c0..c4 of set s, before the first round. */
#define KECCAK_THETA_C(s) do {						\
	c0 = s##00 ^ s##05 ^ s##10 ^ s##15 ^ s##20;			\
	c1 = s##01 ^ s##06 ^ s##11 ^ s##16 ^ s##21;			\
	c2 = s##02 ^ s##07 ^ s##12 ^ s##17 ^ s##22;			\
	c3 = s##03 ^ s##08 ^ s##13 ^ s##18 ^ s##23;			\
	c4 = s##04 ^ s##09 ^ s##14 ^ s##19 ^ s##24;			\
} while (0)

/*
 * chi of one plane from b0..b4 into lanes o0..o4 of set t, and those lanes
 * into the next round's column parities c0..c4.
 */
#define KECCAK_CHI_C(t, o0, o1, o2, o3, o4) do {			\
	t##o0 = b0 ^ (~b1 & b2); c0 ^= t##o0;				\
	t##o1 = b1 ^ (~b2 & b3); c1 ^= t##o1;				\
	t##o2 = b2 ^ (~b3 & b4); c2 ^= t##o2;				\
	t##o3 = b3 ^ (~b4 & b0); c3 ^= t##o3;				\
	t##o4 = b4 ^ (~b0 & b1); c4 ^= t##o4;				\
} while (0)

/*
 * One round from set s, whose column parities are in c0..c4, into set t,
 * leaving t's parities in c0..c4 (dead after the last round, so dropped).
 * Output plane y is chi of b[x] = rot(s[x + 3y][x] ^ d[x + 3y], r[x + 3y][x])
 * (theta, rho and pi; indices mod 5, lane [x][y] is variable x + 5y).
 */
#define KECCAK_ROUND_C(s, t, rc) do {					\
	const uint64_t d0 = c4 ^ ROL64(c1, 1);				\
	const uint64_t d1 = c0 ^ ROL64(c2, 1);				\
	const uint64_t d2 = c1 ^ ROL64(c3, 1);				\
	const uint64_t d3 = c2 ^ ROL64(c4, 1);				\
	const uint64_t d4 = c3 ^ ROL64(c0, 1);				\
	uint64_t b0, b1, b2, b3, b4;					\
	b0 = s##00 ^ d0;						\
	b1 = ROL64(s##06 ^ d1, 44);					\
	b2 = ROL64(s##12 ^ d2, 43);					\
	b3 = ROL64(s##18 ^ d3, 21);					\
	b4 = ROL64(s##24 ^ d4, 14);					\
	t##00 = b0 ^ (~b1 & b2) ^ (rc); c0 = t##00;			\
	t##01 = b1 ^ (~b2 & b3); c1 = t##01;				\
	t##02 = b2 ^ (~b3 & b4); c2 = t##02;				\
	t##03 = b3 ^ (~b4 & b0); c3 = t##03;				\
	t##04 = b4 ^ (~b0 & b1); c4 = t##04;				\
									\
	b0 = ROL64(s##03 ^ d3, 28);					\
	b1 = ROL64(s##09 ^ d4, 20);					\
	b2 = ROL64(s##10 ^ d0, 3);					\
	b3 = ROL64(s##16 ^ d1, 45);					\
	b4 = ROL64(s##22 ^ d2, 61);					\
	KECCAK_CHI_C(t, 05, 06, 07, 08, 09);				\
									\
	b0 = ROL64(s##01 ^ d1, 1);					\
	b1 = ROL64(s##07 ^ d2, 6);					\
	b2 = ROL64(s##13 ^ d3, 25);					\
	b3 = ROL64(s##19 ^ d4, 8);					\
	b4 = ROL64(s##20 ^ d0, 18);					\
	KECCAK_CHI_C(t, 10, 11, 12, 13, 14);				\
									\
	b0 = ROL64(s##04 ^ d4, 27);					\
	b1 = ROL64(s##05 ^ d0, 36);					\
	b2 = ROL64(s##11 ^ d1, 10);					\
	b3 = ROL64(s##17 ^ d2, 15);					\
	b4 = ROL64(s##23 ^ d3, 56);					\
	KECCAK_CHI_C(t, 15, 16, 17, 18, 19);				\
									\
	b0 = ROL64(s##02 ^ d2, 62);					\
	b1 = ROL64(s##08 ^ d3, 55);					\
	b2 = ROL64(s##14 ^ d4, 39);					\
	b3 = ROL64(s##15 ^ d0, 41);					\
	b4 = ROL64(s##21 ^ d1, 2);					\
	KECCAK_CHI_C(t, 20, 21, 22, 23, 24);				\
} while (0)

/* Both sets of lanes and the parities the round macro works on. */
#define KECCAK_LANES_C							\
	uint64_t a00, a01, a02, a03, a04, a05, a06, a07, a08, a09,	\
	    a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,		\
	    a20, a21, a22, a23, a24;					\
	uint64_t e00, e01, e02, e03, e04, e05, e06, e07, e08, e09,	\
	    e10, e11, e12, e13, e14, e15, e16, e17, e18, e19,		\
	    e20, e21, e22, e23, e24;					\
	uint64_t c0, c1, c2, c3, c4

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

/* The permutation: 12 times two rounds, a -> e -> a. */
static inline void
keccak_f1600_c(uint64_t s[25])
{
	KECCAK_LANES_C;
	int r;

	KECCAK_LOAD_C(s);
	KECCAK_THETA_C(a);
	for (r = 0; r < 24; r += 2) {
		KECCAK_ROUND_C(a, e, keccak_rc[r]);
		KECCAK_ROUND_C(e, a, keccak_rc[r + 1]);
	}
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
 * SHA3-256 of a message of any length with permute, into out: the known
 * answer path of every variant and, through kernel->hash, the L-byte
 * chain of `run --msg-len` (kernels/kernel.h).  Each full block is XORed
 * into the state and permuted; the rest is padded as one last block.
 * (The name is from when it took one block only.)  Returns 0.
 */
static inline int
sha3_256_short(const uint8_t *msg, size_t len, uint8_t out[32],
    keccak_permute_fn *permute)
{
	uint64_t s[25], last[25];
	size_t i;

	for (i = 0; i < 25; i++)
		s[i] = 0;
	for (; len >= SHA3_256_RATE; len -= SHA3_256_RATE) {
		for (i = 0; i < SHA3_256_RATE / 8; i++)
			s[i] ^= load64_le(msg + 8 * i);
		permute(s);
		msg += SHA3_256_RATE;
	}
	sha3_256_pad_short(last, msg, len);
	for (i = 0; i < 25; i++)
		s[i] ^= last[i];
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

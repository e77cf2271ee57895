/*
 * sha512/arm-sha512: the ARMv8.2 SHA512 instructions, whole chain in one
 * function.  The state lives in four registers of two words, (a, b),
 * (c, d), (e, f), (g, h) with the first word in lane 0; two rounds are
 * SHA512H (the two T1 values, with e and f) and SHA512H2 (the two new a
 * values), and the message schedule is SHA512SU0 + SHA512SU1 per pair of
 * words.  Between hashes the digest stays in the registers: words 0-7 of
 * the next block are the state plus the IV, words 8-15 are the constant
 * padding of a 64-byte message.
 */
#include "kernel.h"
#include "sha512/sha512-c.h"

#include <arm_neon.h>

/*
 * Rounds t and t + 1 on the pairs ab, cd, ef, gh; w holds message words
 * (t, t + 1).  SHA512H takes (h, g) + (k + w) as its accumulator, (f, g)
 * and (d, e); its result (the two T1) plus (c, d) are the new e and f,
 * and SHA512H2 makes the new a and b from it with (c, d) and (a, b).
 * The new (a, b) is written where (c, d) was and the new (e, f) where
 * (g, h) was, so the old (a, b) and (e, f) registers are the new (c, d)
 * and (g, h).
 */
#define ROUND2(ab, cd, ef, gh, t, w) do {				\
	uint64x2_t kw_ = vaddq_u64(vld1q_u64(&sha512_k[t]), w);		\
	uint64x2_t acc_ = vaddq_u64(gh, vextq_u64(kw_, kw_, 1));	\
	uint64x2_t t1_ = vsha512hq_u64(acc_, vextq_u64(ef, gh, 1),	\
	    vextq_u64(cd, ef, 1));					\
	gh = vaddq_u64(cd, t1_);					\
	cd = vsha512h2q_u64(t1_, cd, ab);				\
} while (0)

/* Eight rounds: two rounds swap the roles of s0/s1 and s2/s3. */
#define ROUND8(t, w0, w1, w2, w3) do {					\
	ROUND2(s0, s1, s2, s3, (t) + 0, w0);				\
	ROUND2(s1, s0, s3, s2, (t) + 2, w1);				\
	ROUND2(s0, s1, s2, s3, (t) + 4, w2);				\
	ROUND2(s1, s0, s3, s2, (t) + 6, w3);				\
} while (0)

/* W[t], W[t + 1] in place of W[t - 16], W[t - 15] (pairs m0..m7). */
#define SCHED(j, j1, j7, j4, j5)					\
	(m##j = vsha512su1q_u64(vsha512su0q_u64(m##j, m##j1), m##j7,	\
	    vextq_u64(m##j4, m##j5, 1)))

#define ROUNDS80() do {							\
	int r_;								\
	ROUND8(0, m0, m1, m2, m3);					\
	ROUND8(8, m4, m5, m6, m7);					\
	for (r_ = 16; r_ < 80; r_ += 16) {				\
		ROUND8(r_, SCHED(0, 1, 7, 4, 5), SCHED(1, 2, 0, 5, 6),	\
		    SCHED(2, 3, 1, 6, 7), SCHED(3, 4, 2, 7, 0));	\
		ROUND8(r_ + 8, SCHED(4, 5, 3, 0, 1),			\
		    SCHED(5, 6, 4, 1, 2), SCHED(6, 7, 5, 2, 3),		\
		    SCHED(7, 0, 6, 3, 4));				\
	}								\
} while (0)

static void
arm_sha512_compress(uint64_t state[8], const uint64_t block[16])
{
	uint64x2_t s0 = vld1q_u64(state), s1 = vld1q_u64(state + 2);
	uint64x2_t s2 = vld1q_u64(state + 4), s3 = vld1q_u64(state + 6);
	uint64x2_t m0 = vld1q_u64(block), m1 = vld1q_u64(block + 2);
	uint64x2_t m2 = vld1q_u64(block + 4), m3 = vld1q_u64(block + 6);
	uint64x2_t m4 = vld1q_u64(block + 8), m5 = vld1q_u64(block + 10);
	uint64x2_t m6 = vld1q_u64(block + 12), m7 = vld1q_u64(block + 14);

	ROUNDS80();
	/* 80 rounds swap the roles 40 times: back where they began. */
	vst1q_u64(state, vaddq_u64(vld1q_u64(state), s0));
	vst1q_u64(state + 2, vaddq_u64(vld1q_u64(state + 2), s1));
	vst1q_u64(state + 4, vaddq_u64(vld1q_u64(state + 4), s2));
	vst1q_u64(state + 6, vaddq_u64(vld1q_u64(state + 6), s3));
}

static int
arm_sha512_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha512_short(msg, len, out, arm_sha512_compress);
}

static int
arm_sha512_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	static const uint64_t pad[8] = { SHA512_PAD64_W8, 0, 0, 0, 0, 0, 0,
	    SHA512_PAD64_W15 };
	uint64x2_t iv0 = vld1q_u64(sha512_iv), iv1 = vld1q_u64(sha512_iv + 2);
	uint64x2_t iv2 = vld1q_u64(sha512_iv + 4);
	uint64x2_t iv3 = vld1q_u64(sha512_iv + 6);
	uint64x2_t s0, s1, s2, s3, m0, m1, m2, m3, m4, m5, m6, m7;
	uint64_t w[8];
	uint64_t i;
	int j;

	(void)ctx;
	for (j = 0; j < 8; j++)
		w[j] = sha512_load_be(x + 8 * j);
	/* m0..m3 hold the digest between hashes. */
	m0 = vld1q_u64(w);
	m1 = vld1q_u64(w + 2);
	m2 = vld1q_u64(w + 4);
	m3 = vld1q_u64(w + 6);
	for (i = 0; i < steps; i++) {
		m4 = vld1q_u64(pad);
		m5 = vld1q_u64(pad + 2);
		m6 = vld1q_u64(pad + 4);
		m7 = vld1q_u64(pad + 6);
		s0 = iv0;
		s1 = iv1;
		s2 = iv2;
		s3 = iv3;
		ROUNDS80();
		m0 = vaddq_u64(s0, iv0);
		m1 = vaddq_u64(s1, iv1);
		m2 = vaddq_u64(s2, iv2);
		m3 = vaddq_u64(s3, iv3);
	}
	vst1q_u64(w, m0);
	vst1q_u64(w + 2, m1);
	vst1q_u64(w + 4, m2);
	vst1q_u64(w + 6, m3);
	for (j = 0; j < 8; j++)
		sha512_store_be(x + 8 * j, w[j]);
	return 0;
}

static const char *const arm_sha512_insns[] = {
	"sha512h", "sha512h2", "sha512su0", "sha512su1", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "ARMv8.2 SHA512H/H2/SU0/SU1, whole chain in one "
	    "function, digest kept in registers",
	.features = KF_ARM_SHA512,
	.insns = arm_sha512_insns,
	.symbol = "arm_sha512_chain",
	.hash = arm_sha512_hash,
	.chain = arm_sha512_chain,
};

/*
 * Keccak-f[1600] with the ARMv8.2 SHA3 instructions, shared by the
 * arm-sha3-* variants (their flags add +sha3; include it nowhere else).
 * One lane per 128-bit register (both halves hold the same lane, which
 * costs nothing and keeps the loads simple), 25 lanes in v-registers:
 * EOR3 for the column parities, RAX1 for theta's d = c[x-1] ^ rol(c[x+1]),
 * XAR for theta and rho of a lane in one instruction, BCAX for chi.  That
 * is 66 vector instructions a round against about 124 on general-purpose
 * registers; pi is variable renaming.
 */
#ifndef SEQORCH_KECCAK_ARM_SHA3_H
#define SEQORCH_KECCAK_ARM_SHA3_H

#include <arm_neon.h>
#include <stdint.h>

#include "sha3/keccak-c.h"

#define KECCAK_ROUND_SHA3(rcv) do {					\
	uint64x2_t c0 = veor3q_u64(veor3q_u64(a00, a05, a10),		\
	    a15, a20);							\
	uint64x2_t c1 = veor3q_u64(veor3q_u64(a01, a06, a11),		\
	    a16, a21);							\
	uint64x2_t c2 = veor3q_u64(veor3q_u64(a02, a07, a12),		\
	    a17, a22);							\
	uint64x2_t c3 = veor3q_u64(veor3q_u64(a03, a08, a13),		\
	    a18, a23);							\
	uint64x2_t c4 = veor3q_u64(veor3q_u64(a04, a09, a14),		\
	    a19, a24);							\
	uint64x2_t d0 = vrax1q_u64(c4, c1);				\
	uint64x2_t d1 = vrax1q_u64(c0, c2);				\
	uint64x2_t d2 = vrax1q_u64(c1, c3);				\
	uint64x2_t d3 = vrax1q_u64(c2, c4);				\
	uint64x2_t d4 = vrax1q_u64(c3, c0);				\
	/* theta and rho in one XAR: b[pi(x,y)] = ror(a ^ d, 64 - r) */	\
	uint64x2_t b00 = veorq_u64(a00, d0);				\
	uint64x2_t b10 = vxarq_u64(a01, d1, 63);			\
	uint64x2_t b20 = vxarq_u64(a02, d2, 2);				\
	uint64x2_t b05 = vxarq_u64(a03, d3, 36);			\
	uint64x2_t b15 = vxarq_u64(a04, d4, 37);			\
	uint64x2_t b16 = vxarq_u64(a05, d0, 28);			\
	uint64x2_t b01 = vxarq_u64(a06, d1, 20);			\
	uint64x2_t b11 = vxarq_u64(a07, d2, 58);			\
	uint64x2_t b21 = vxarq_u64(a08, d3, 9);				\
	uint64x2_t b06 = vxarq_u64(a09, d4, 44);			\
	uint64x2_t b07 = vxarq_u64(a10, d0, 61);			\
	uint64x2_t b17 = vxarq_u64(a11, d1, 54);			\
	uint64x2_t b02 = vxarq_u64(a12, d2, 21);			\
	uint64x2_t b12 = vxarq_u64(a13, d3, 39);			\
	uint64x2_t b22 = vxarq_u64(a14, d4, 25);			\
	uint64x2_t b23 = vxarq_u64(a15, d0, 23);			\
	uint64x2_t b08 = vxarq_u64(a16, d1, 19);			\
	uint64x2_t b18 = vxarq_u64(a17, d2, 49);			\
	uint64x2_t b03 = vxarq_u64(a18, d3, 43);			\
	uint64x2_t b13 = vxarq_u64(a19, d4, 56);			\
	uint64x2_t b14 = vxarq_u64(a20, d0, 46);			\
	uint64x2_t b24 = vxarq_u64(a21, d1, 62);			\
	uint64x2_t b09 = vxarq_u64(a22, d2, 3);				\
	uint64x2_t b19 = vxarq_u64(a23, d3, 8);				\
	uint64x2_t b04 = vxarq_u64(a24, d4, 50);			\
	/* chi: BCAX is b[x] ^ (b[x+2] & ~b[x+1]) */			\
	a00 = veorq_u64(vbcaxq_u64(b00, b02, b01), (rcv));		\
	a01 = vbcaxq_u64(b01, b03, b02);				\
	a02 = vbcaxq_u64(b02, b04, b03);				\
	a03 = vbcaxq_u64(b03, b00, b04);				\
	a04 = vbcaxq_u64(b04, b01, b00);				\
	a05 = vbcaxq_u64(b05, b07, b06);				\
	a06 = vbcaxq_u64(b06, b08, b07);				\
	a07 = vbcaxq_u64(b07, b09, b08);				\
	a08 = vbcaxq_u64(b08, b05, b09);				\
	a09 = vbcaxq_u64(b09, b06, b05);				\
	a10 = vbcaxq_u64(b10, b12, b11);				\
	a11 = vbcaxq_u64(b11, b13, b12);				\
	a12 = vbcaxq_u64(b12, b14, b13);				\
	a13 = vbcaxq_u64(b13, b10, b14);				\
	a14 = vbcaxq_u64(b14, b11, b10);				\
	a15 = vbcaxq_u64(b15, b17, b16);				\
	a16 = vbcaxq_u64(b16, b18, b17);				\
	a17 = vbcaxq_u64(b17, b19, b18);				\
	a18 = vbcaxq_u64(b18, b15, b19);				\
	a19 = vbcaxq_u64(b19, b16, b15);				\
	a20 = vbcaxq_u64(b20, b22, b21);				\
	a21 = vbcaxq_u64(b21, b23, b22);				\
	a22 = vbcaxq_u64(b22, b24, b23);				\
	a23 = vbcaxq_u64(b23, b20, b24);				\
	a24 = vbcaxq_u64(b24, b21, b20);				\
} while (0)

#define KECCAK_LANES_SHA3						\
	uint64x2_t a00, a01, a02, a03, a04, a05, a06, a07, a08, a09,	\
	    a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,		\
	    a20, a21, a22, a23, a24

#define KECCAK_LOAD_SHA3(s) do {					\
	a00 = vld1q_dup_u64(&(s)[0]); a01 = vld1q_dup_u64(&(s)[1]);	\
	a02 = vld1q_dup_u64(&(s)[2]); a03 = vld1q_dup_u64(&(s)[3]);	\
	a04 = vld1q_dup_u64(&(s)[4]); a05 = vld1q_dup_u64(&(s)[5]);	\
	a06 = vld1q_dup_u64(&(s)[6]); a07 = vld1q_dup_u64(&(s)[7]);	\
	a08 = vld1q_dup_u64(&(s)[8]); a09 = vld1q_dup_u64(&(s)[9]);	\
	a10 = vld1q_dup_u64(&(s)[10]); a11 = vld1q_dup_u64(&(s)[11]);	\
	a12 = vld1q_dup_u64(&(s)[12]); a13 = vld1q_dup_u64(&(s)[13]);	\
	a14 = vld1q_dup_u64(&(s)[14]); a15 = vld1q_dup_u64(&(s)[15]);	\
	a16 = vld1q_dup_u64(&(s)[16]); a17 = vld1q_dup_u64(&(s)[17]);	\
	a18 = vld1q_dup_u64(&(s)[18]); a19 = vld1q_dup_u64(&(s)[19]);	\
	a20 = vld1q_dup_u64(&(s)[20]); a21 = vld1q_dup_u64(&(s)[21]);	\
	a22 = vld1q_dup_u64(&(s)[22]); a23 = vld1q_dup_u64(&(s)[23]);	\
	a24 = vld1q_dup_u64(&(s)[24]);					\
} while (0)

#define KECCAK_STORE_SHA3(s) do {					\
	(s)[0] = vgetq_lane_u64(a00, 0); (s)[1] = vgetq_lane_u64(a01, 0); \
	(s)[2] = vgetq_lane_u64(a02, 0); (s)[3] = vgetq_lane_u64(a03, 0); \
	(s)[4] = vgetq_lane_u64(a04, 0); (s)[5] = vgetq_lane_u64(a05, 0); \
	(s)[6] = vgetq_lane_u64(a06, 0); (s)[7] = vgetq_lane_u64(a07, 0); \
	(s)[8] = vgetq_lane_u64(a08, 0); (s)[9] = vgetq_lane_u64(a09, 0); \
	(s)[10] = vgetq_lane_u64(a10, 0);				\
	(s)[11] = vgetq_lane_u64(a11, 0);				\
	(s)[12] = vgetq_lane_u64(a12, 0);				\
	(s)[13] = vgetq_lane_u64(a13, 0);				\
	(s)[14] = vgetq_lane_u64(a14, 0);				\
	(s)[15] = vgetq_lane_u64(a15, 0);				\
	(s)[16] = vgetq_lane_u64(a16, 0);				\
	(s)[17] = vgetq_lane_u64(a17, 0);				\
	(s)[18] = vgetq_lane_u64(a18, 0);				\
	(s)[19] = vgetq_lane_u64(a19, 0);				\
	(s)[20] = vgetq_lane_u64(a20, 0);				\
	(s)[21] = vgetq_lane_u64(a21, 0);				\
	(s)[22] = vgetq_lane_u64(a22, 0);				\
	(s)[23] = vgetq_lane_u64(a23, 0);				\
	(s)[24] = vgetq_lane_u64(a24, 0);				\
} while (0)

/* Lanes 0-3 keep the digest; the other 21 get a 32-byte message's pad. */
#define KECCAK_RESET_PAD32_SHA3() do {					\
	a04 = vdupq_n_u64(SHA3_256_PAD32_LANE4);			\
	a05 = a06 = a07 = a08 = a09 = vdupq_n_u64(0);			\
	a10 = a11 = a12 = a13 = a14 = a15 = a05;			\
	a16 = vdupq_n_u64(SHA3_256_PAD32_LANE16);			\
	a17 = a18 = a19 = a20 = a21 = a22 = a23 = a24 = a05;		\
} while (0)

/* The permutation through memory; noinline so it has its own symbol. */
static __attribute__((noinline)) void
keccak_f1600_arm_sha3(uint64_t s[25])
{
	KECCAK_LANES_SHA3;
	int r;

	KECCAK_LOAD_SHA3(s);
	for (r = 0; r < 24; r++)
		KECCAK_ROUND_SHA3(vld1q_dup_u64(&keccak_rc[r]));
	KECCAK_STORE_SHA3(s);
}

#endif

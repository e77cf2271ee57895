/*
 * The mul32 study (seed 001, "the 32-bit round", scalar or SIMD): sixteen
 * 32-bit lanes x[0..15], little-endian, lane 0 first in the 64-byte state,
 * from zero, and per round, for every i (indices mod 16)
 *
 *	t[i] = x[i] * M + A[i]			(mod 2^32)
 *	x[i] = t[i] ^ ror32(t[i + 1], 13)
 *
 * with M = 0x85ebca6b and A[i] = (2i + 1) * 0x9e3779b9 mod 2^32.  Sixteen
 * lanes are one zmm, two ymm or four NEON registers.  Per round the
 * critical path is short (x86-64 6 cycles, AArch64 3) but sixteen
 * multiplies must issue: docs/studies.md derives the floors, 16 cycles on
 * this machine's x86-64 (Golden Cove: VPMULLD 10 + VPADDD 1 + VALIGND 3 +
 * VPRORD 1 + VPXORD 1, and equally 16 IMULs on one port) and 8 on
 * Neoverse V2 (16 MADDs on two multiply pipes).
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "16 x 32-bit lanes: t = x * M + A[i], x[i] = t[i] ^ "
	    "ror32(t[i+1], 13), scalar or SIMD with identical results",
	.unit = "round",
	.unit_plural = "rounds",
	.state_len = 64,
	.seed_hex = "00000000000000000000000000000000"
	    "00000000000000000000000000000000"
	    "00000000000000000000000000000000"
	    "00000000000000000000000000000000",
	.default_steps = 200000000,
	.control = "c",
	.floor_x86_64 = 16,
	.floor_aarch64 = 8,
};

/*
 * The mul-wide study (seed 001, "wider mixed integer state"): four 64-bit
 * lanes x[0..3], little-endian, lane 0 first in the 32-byte state, from
 * zero, and per round, for every i (indices mod 4)
 *
 *	t[i] = x[i] * M + A[i]			(mod 2^64)
 *	x[i] = t[i] ^ ror64(t[i + 1], 23)
 *
 * with M = 0x9e3779b97f4a7c15 and A = { 0xd1b54a32d192ed03,
 * 0x8bb84b93962eacc9, 0x2545f4914f6cdd1d, 0x94d049bb133111eb } (distinct,
 * so that equal lanes do not stay equal).  Every lane feeds two lanes of
 * the next round: the four chains are one.  The critical path is mul's
 * (x86-64 6 cycles, AArch64 3); four lanes fit under it on both.
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "4 x 64-bit lanes: t = x * M + A[i], x[i] = t[i] ^ "
	    "ror64(t[i+1], 23), every lane mixed every round",
	.unit = "round",
	.unit_plural = "rounds",
	.state_len = 32,
	.seed_hex = "00000000000000000000000000000000"
	    "00000000000000000000000000000000",
	.default_steps = 500000000,
	.control = "c",
	.floor_x86_64 = 6,
	.floor_aarch64 = 3,
};

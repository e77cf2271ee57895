/*
 * The mul study (seed 001, "low-half mul + add + rotate-xor round"): one
 * 64-bit word x, little-endian in the 8-byte state, from zero, and per round
 *
 *	x = ror64(x * M + A, 23) ^ K		(mod 2^64)
 *
 * M = 0x9e3779b97f4a7c15 (odd), A = 0xd1b54a32d192ed03,
 * K = 0xbf58476d1ce4e5b9.  Every step of the round depends on the one
 * before it; docs/studies.md says why no compiler can shorten it and what
 * one round costs on x86-64 (IMUL 3 + ADD 1 + RORX 1 + XOR 1) and AArch64
 * (MADD 2 + EOR with the rotation folded in 1, Neoverse V2).
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "x = ror64(x * M + A, 23) ^ K on one 64-bit word: "
	    "low-half multiply, fused add, rotate-xor",
	.unit = "round",
	.unit_plural = "rounds",
	.state_len = 8,
	.seed_hex = "0000000000000000",
	.default_steps = 1000000000,
	.control = "c",
	.floor_x86_64 = 6,
	.floor_aarch64 = 3,
};

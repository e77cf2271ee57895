/*
 * The div64 study: a chain of dependent 64-bit unsigned divisions (seed
 * 001, "integer division").  State: two 64-bit words (a, b), little-endian,
 * from 16 zero bytes.  One round (docs/studies.md proves the ranges):
 *
 *   d = 2^32 | (b mod 2^32)          2^32 <= d < 2^33, never zero
 *   q = a / d,  r = a mod d          q < 2^32, r < 2^33
 *   a' = b ^ C                       C = 0x9e3779b97f4a7c15
 *   b' = a ^ q ^ (r << 32)           mod 2^64
 *
 * The next divisor is 2^32 | low32(a ^ q) = (2^32 | low32(a)) ^ q because
 * q < 2^32: one XOR after the division on the critical path.
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "(a, b) -> (b ^ C, a ^ q ^ r << 32) with q, r = "
	    "a divmod (2^32 | low32 b): dependent 64-bit unsigned divisions",
	.unit = "division",
	.unit_plural = "divisions",
	.state_len = 16,
	.seed_hex = "00000000000000000000000000000000",
	.default_steps = 30000000,
	.control = "c-div",
	/* DIV r64 14 + XOR 1 (Raptor Cove, measured); UDIV X 20 + EOR 1
	 * (Neoverse V2 software optimization guide). */
	.floor_x86_64 = 15,
	.floor_aarch64 = 21,
};

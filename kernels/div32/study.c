/*
 * The div32 study: a chain of dependent 32-bit unsigned divisions (seed
 * 001, "integer division").  State: two 32-bit words (a, b), little-endian,
 * from 8 zero bytes.  One round (docs/studies.md proves the ranges):
 *
 *   d = 2^16 | (b mod 2^16)          2^16 <= d < 2^17, never zero
 *   q = a / d,  r = a mod d          q < 2^16, r < 2^17
 *   a' = b ^ C                       C = 0x9e3779b9
 *   b' = a ^ q ^ (r << 16)           mod 2^32
 *
 * The next divisor is 2^16 | low16(a ^ q) = (2^16 | low16(a)) ^ q because
 * q < 2^16: one XOR after the division on the critical path.
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "(a, b) -> (b ^ C, a ^ q ^ r << 16) with q, r = "
	    "a divmod (2^16 | low16 b): dependent 32-bit unsigned divisions",
	.unit = "division",
	.unit_plural = "divisions",
	.state_len = 8,
	.seed_hex = "0000000000000000",
	.default_steps = 30000000,
	.control = "c-div",
	/* DIV r32 10 + XOR 1 (Raptor Cove, measured); UDIV W 12 + EOR 1
	 * (Neoverse V2 software optimization guide). */
	.floor_x86_64 = 11,
	.floor_aarch64 = 13,
};

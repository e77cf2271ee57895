/*
 * The bitperm study: dependent bit gathers, scatters and a reversal (seed
 * 001, "bit manipulation").  State: one 64-bit word x, little-endian, from
 * 8 zero bytes.  One round, with M and N two constant masks of 32 bits each:
 *
 *   t  = pdep(pext(x, M), N) | pdep(pext(x, ~M), ~N)
 *   x' = rev64(t) + K                K = 0x9e3779b97f4a7c15, mod 2^64
 *
 * pext gathers the bits of x under a mask into the low bits, pdep scatters
 * low bits to the positions of a mask, rev64 reverses the 64 bits.  The add
 * makes the round non-linear over GF(2): the reversal cannot be carried
 * into the next round's masks (docs/studies.md).
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "x -> rev64(pdep(pext(x, M), N) | pdep(pext(x, ~M), "
	    "~N)) + K: dependent bit gathers, scatters and reversal",
	.unit = "round",
	.unit_plural = "rounds",
	.state_len = 8,
	.seed_hex = "0000000000000000",
	.default_steps = 5000000,
	.control = "c-portable",
	/*
	 * x86-64 BMI2 (Raptor Cove, measured): PEXT 3 + PDEP 3, plus 1 since
	 * the two gathers share PEXT/PDEP's one port, + OR 1 + BSWAP 2 +
	 * three swap stages of 3 + ADD 1.  AArch64 SVE2 (Neoverse V2 guide):
	 * BEXT 6 + BDEP 6, plus 2 since each is two micro-ops on the one V1
	 * pipe, + ORR 2 + RBIT 2 + ADD 2.
	 */
	.floor_x86_64 = 20,
	.floor_aarch64 = 20,
};

/*
 * The coordinator's div32 reference: the round exactly as study.c and
 * docs/studies.md state it, one 32-bit division and remainder per step with
 * C's operators on the coordinator's CPU.  Shares nothing with the variants.
 */
#include "kernel.h"

#include <stdio.h>

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static int
div32_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	uint32_t a = get32(x), b = get32(x + 4);
	uint64_t i;

	for (i = 0; i < steps; i++) {
		uint32_t d, q, r, next_b;

		if ((i & 0xfffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		d = 0x10000 | (b & 0xffff);
		q = a / d;
		r = a % d;
		next_b = a ^ q ^ (r << 16);
		a = b ^ 0x9e3779b9;
		b = next_b;
	}
	put32(x, a);
	put32(x + 4, b);
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "C 32-bit / and % on the coordinator",
	.chain = div32_reference_chain,
};

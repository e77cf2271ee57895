/*
 * The coordinator's div64 reference: the round exactly as study.c and
 * docs/studies.md state it, one 64-bit division and remainder per step with
 * C's operators on the coordinator's CPU.  Shares nothing with the variants.
 */
#include "kernel.h"

#include <stdio.h>

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << 8 * i;
	return v;
}

static void
put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static int
div64_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	uint64_t a = get64(x), b = get64(x + 8), i;

	for (i = 0; i < steps; i++) {
		uint64_t d, q, r, next_b;

		if ((i & 0xfffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		d = ((uint64_t)1 << 32) | (b & 0xffffffff);
		q = a / d;
		r = a % d;
		next_b = a ^ q ^ (r << 32);
		a = b ^ 0x9e3779b97f4a7c15;
		b = next_b;
	}
	put64(x, a);
	put64(x + 8, b);
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "C 64-bit / and % on the coordinator",
	.chain = div64_reference_chain,
};

/*
 * The coordinator's mul reference: the round of docs/studies.md written
 * out once more, plainly, with its own constants.  It shares no code with
 * the variants under kernels/mul/.
 */
#include "kernel.h"

#include <stdio.h>

static int
mul_reference_chain(uint8_t *x, uint64_t steps, volatile sig_atomic_t *stop,
    char *why, size_t whylen)
{
	uint64_t v = 0, t, i;
	int b;

	for (b = 0; b < 8; b++)
		v |= (uint64_t)x[b] << (8 * b);
	for (i = 0; i < steps; i++) {
		if ((i & 0xffffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		t = v * 0x9e3779b97f4a7c15ULL + 0xd1b54a32d192ed03ULL;
		v = ((t >> 23) | (t << 41)) ^ 0xbf58476d1ce4e5b9ULL;
	}
	for (b = 0; b < 8; b++)
		x[b] = (uint8_t)(v >> (8 * b));
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "plain C on the coordinator",
	.chain = mul_reference_chain,
};

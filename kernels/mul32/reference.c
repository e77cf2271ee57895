/*
 * The coordinator's mul32 reference: the round of docs/studies.md on an
 * array of sixteen 32-bit words, plainly, sharing no code with
 * kernels/mul32/.
 */
#include "kernel.h"

#include <stdio.h>

static int
mul32_reference_chain(uint8_t *x, uint64_t steps, volatile sig_atomic_t *stop,
    char *why, size_t whylen)
{
	uint32_t v[16] = { 0 }, t[16], add[16], n;
	uint64_t i;
	int lane, b;

	for (lane = 0; lane < 16; lane++) {
		add[lane] = (uint32_t)(2 * lane + 1) * 0x9e3779b9u;
		for (b = 0; b < 4; b++)
			v[lane] |= (uint32_t)x[4 * lane + b] << (8 * b);
	}
	for (i = 0; i < steps; i++) {
		if ((i & 0xfffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		for (lane = 0; lane < 16; lane++)
			t[lane] = v[lane] * 0x85ebca6bu + add[lane];
		for (lane = 0; lane < 16; lane++) {
			n = t[(lane + 1) % 16];
			v[lane] = t[lane] ^ ((n >> 13) | (n << 19));
		}
	}
	for (lane = 0; lane < 16; lane++)
		for (b = 0; b < 4; b++)
			x[4 * lane + b] = (uint8_t)(v[lane] >> (8 * b));
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "plain C on the coordinator",
	.chain = mul32_reference_chain,
};

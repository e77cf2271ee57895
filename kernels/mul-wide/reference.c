/*
 * The coordinator's mul-wide reference: the round of docs/studies.md on an
 * array of four words, plainly, sharing no code with kernels/mul-wide/.
 */
#include "kernel.h"

#include <stdio.h>

static const uint64_t add_const[4] = {
	0xd1b54a32d192ed03ULL, 0x8bb84b93962eacc9ULL,
	0x2545f4914f6cdd1dULL, 0x94d049bb133111ebULL,
};

static int
mul_wide_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	uint64_t v[4] = { 0 }, t[4], n, i;
	int lane, b;

	for (lane = 0; lane < 4; lane++)
		for (b = 0; b < 8; b++)
			v[lane] |= (uint64_t)x[8 * lane + b] << (8 * b);
	for (i = 0; i < steps; i++) {
		if ((i & 0xffffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		for (lane = 0; lane < 4; lane++)
			t[lane] = v[lane] * 0x9e3779b97f4a7c15ULL +
			    add_const[lane];
		for (lane = 0; lane < 4; lane++) {
			n = t[(lane + 1) % 4];
			v[lane] = t[lane] ^ ((n >> 23) | (n << 41));
		}
	}
	for (lane = 0; lane < 4; lane++)
		for (b = 0; b < 8; b++)
			x[8 * lane + b] = (uint8_t)(v[lane] >> (8 * b));
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "plain C on the coordinator",
	.chain = mul_wide_reference_chain,
};

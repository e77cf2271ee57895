/*
 * The coordinator's bitperm reference: the round as a table of where each
 * bit goes, built from the definition (docs/studies.md): the j-th set bit of
 * M moves to the j-th set bit of N, the j-th clear bit of M to the j-th
 * clear bit of N, and then bit i to bit 63 - i; then K is added.  One bit at
 * a time, no pext/pdep, shares nothing with the variants.
 */
#include "kernel.h"

#include <stdio.h>

#define REF_M 0x9b3cf1a6d2584e07ULL
#define REF_N 0x6e25c9b1f0a3d748ULL
#define REF_K 0x9e3779b97f4a7c15ULL

/* Positions of the bits of mask that are `want` (0 or 1), lowest first. */
static int
positions(uint64_t mask, int want, int *out)
{
	int i, n = 0;

	for (i = 0; i < 64; i++)
		if ((int)(mask >> i & 1) == want)
			out[n++] = i;
	return n;
}

static int
bitperm_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	int from[64], to[64], dest[64];
	uint64_t v = 0, i;
	int n, k;

	n = positions(REF_M, 1, from);
	positions(REF_M, 0, from + n);
	k = positions(REF_N, 1, to);
	positions(REF_N, 0, to + k);
	if (n != k) {
		snprintf(why, whylen, "masks of different weight");
		return -1;
	}
	for (k = 0; k < 64; k++)
		dest[from[k]] = 63 - to[k];
	for (k = 0; k < 8; k++)
		v |= (uint64_t)x[k] << 8 * k;
	for (i = 0; i < steps; i++) {
		uint64_t y = 0;

		if ((i & 0xffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		for (k = 0; k < 64; k++)
			y |= (v >> k & 1) << dest[k];
		v = y + REF_K;
	}
	for (k = 0; k < 8; k++)
		x[k] = (uint8_t)(v >> 8 * k);
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "C bit-by-bit permutation on the coordinator",
	.chain = bitperm_reference_chain,
};

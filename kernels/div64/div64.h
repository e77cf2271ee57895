/*
 * div64's constants and state layout (study.c defines the round), shared
 * by the variants and nothing else: the coordinator's reference.c writes
 * its own.
 */
#ifndef SEQORCH_DIV64_H
#define SEQORCH_DIV64_H

#include <stdint.h>

#define DIV64_C UINT64_C(0x9e3779b97f4a7c15)
#define DIV64_HI (UINT64_C(1) << 32)	/* the divisor's top bit */

static inline uint64_t
div64_load(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void
div64_store(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

#endif

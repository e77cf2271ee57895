/*
 * bitperm's constants (study.c defines the round), shared by the variants
 * and nothing else: the coordinator's reference.c writes its own.
 */
#ifndef SEQORCH_BITPERM_H
#define SEQORCH_BITPERM_H

#include <stdint.h>

#define BITPERM_M UINT64_C(0x9b3cf1a6d2584e07)
#define BITPERM_N UINT64_C(0x6e25c9b1f0a3d748)
#define BITPERM_K UINT64_C(0x9e3779b97f4a7c15)

static inline uint64_t
bitperm_load(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void
bitperm_store(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

#endif

/*
 * div32's constants and state layout (study.c defines the round), shared
 * by the variants and nothing else: the coordinator's reference.c writes
 * its own.
 */
#ifndef SEQORCH_DIV32_H
#define SEQORCH_DIV32_H

#include <stdint.h>

#define DIV32_C UINT32_C(0x9e3779b9)
#define DIV32_HI (UINT32_C(1) << 16)	/* the divisor's top bit */

static inline uint32_t
div32_load(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline void
div32_store(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#endif

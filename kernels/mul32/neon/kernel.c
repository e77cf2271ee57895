/*
 * mul32/neon: the sixteen lanes in four 128-bit registers: MLA (multiply
 * and accumulate onto the addends), EXT across neighbouring registers to
 * bring lane i + 1 under lane i, ror32 as SHL then SRI (shift right and
 * insert), EOR.  Advanced SIMD is part of every AArch64 core.
 */
#include "kernel.h"

#include <arm_neon.h>
#include <string.h>

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) void
mul32_neon_rounds(uint32_t v[16], uint64_t steps)
{
	const uint32x4_t m = vdupq_n_u32(0x85ebca6bu);
	uint32x4_t x0 = vld1q_u32(v), x1 = vld1q_u32(v + 4);
	uint32x4_t x2 = vld1q_u32(v + 8), x3 = vld1q_u32(v + 12);
	uint32x4_t a0, a1, a2, a3, t0, t1, t2, t3, n0, n1, n2, n3;
	uint32_t add[16];
	int i;

	for (i = 0; i < 16; i++)
		add[i] = (uint32_t)(2 * i + 1) * 0x9e3779b9u;
	a0 = vld1q_u32(add), a1 = vld1q_u32(add + 4);
	a2 = vld1q_u32(add + 8), a3 = vld1q_u32(add + 12);
	while (steps-- > 0) {
		t0 = vmlaq_u32(a0, x0, m);
		t1 = vmlaq_u32(a1, x1, m);
		t2 = vmlaq_u32(a2, x2, m);
		t3 = vmlaq_u32(a3, x3, m);
		n0 = vextq_u32(t0, t1, 1);
		n1 = vextq_u32(t1, t2, 1);
		n2 = vextq_u32(t2, t3, 1);
		n3 = vextq_u32(t3, t0, 1);
		x0 = veorq_u32(t0, vsriq_n_u32(vshlq_n_u32(n0, 19), n0, 13));
		x1 = veorq_u32(t1, vsriq_n_u32(vshlq_n_u32(n1, 19), n1, 13));
		x2 = veorq_u32(t2, vsriq_n_u32(vshlq_n_u32(n2, 19), n2, 13));
		x3 = veorq_u32(t3, vsriq_n_u32(vshlq_n_u32(n3, 19), n3, 13));
	}
	vst1q_u32(v, x0), vst1q_u32(v + 4, x1);
	vst1q_u32(v + 8, x2), vst1q_u32(v + 12, x3);
}

static int
neon_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t v[16];

	(void)ctx;
	memcpy(v, x, 64);
	mul32_neon_rounds(v, steps);
	memcpy(x, v, 64);
	return 0;
}

static const char *const neon_insns[] = { "mla", "ext", "sri", "eor", NULL };
/* A lane taken to a general register and multiplied there. */
static const char *const neon_forbidden[] = { "madd", "umov", NULL };

const struct kernel KERNEL_THIS = {
	.description = "AArch64 Advanced SIMD, four q registers: MLA, EXT, "
	    "SHL + SRI for the rotation, EOR",
	.insns = neon_insns,
	.forbidden = neon_forbidden,
	.symbol = "mul32_neon_rounds",
	.chain = neon_chain,
};

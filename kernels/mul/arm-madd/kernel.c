/*
 * mul/arm-madd: the round as AArch64's two-instruction critical path, MADD
 * (multiply and add in one, 2 cycles on Neoverse V2) then EOR with the
 * rotation folded into its second operand (1 cycle), one asm statement per
 * round in a plain C loop: the compiler schedules the loop around it.
 */
#include "kernel.h"

#include <string.h>

#define MUL_M 0x9e3779b97f4a7c15ULL
#define MUL_A 0xd1b54a32d192ed03ULL
#define MUL_K 0xbf58476d1ce4e5b9ULL

static __attribute__((noinline)) uint64_t
mul_arm_madd_rounds(uint64_t v, uint64_t steps)
{
	const uint64_t m = MUL_M, a = MUL_A, k = MUL_K;

	while (steps-- > 0)
		__asm__ ("madd %0, %0, %1, %2\n\t"
		    "eor %0, %3, %0, ror #23"
		    : "+&r" (v) : "r" (m), "r" (a), "r" (k));
	return v;
}

static int
arm_madd_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v;

	(void)ctx;
	memcpy(&v, x, 8);
	v = mul_arm_madd_rounds(v, steps);
	memcpy(x, &v, 8);
	return 0;
}

static const char *const arm_madd_insns[] = { "madd", "eor", NULL };
/* A separate rotation or an unfused multiply lengthens the path. */
static const char *const arm_madd_forbidden[] = { "ror", "extr", NULL };

const struct kernel KERNEL_THIS = {
	.description = "AArch64 MADD then EOR with the rotation folded, one "
	    "asm statement per round",
	.insns = arm_madd_insns,
	.forbidden = arm_madd_forbidden,
	.symbol = "mul_arm_madd_rounds",
	.chain = arm_madd_chain,
};

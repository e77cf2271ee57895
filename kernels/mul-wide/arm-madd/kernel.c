/*
 * mul-wide/arm-madd: per lane MADD, then EOR with the neighbour lane's
 * rotation folded into the operand: two instructions on the path (3 cycles
 * on Neoverse V2), four MADDs a round on two multiply pipes.
 */
#include "kernel.h"

#include <string.h>

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) void
mulw_arm_madd_rounds(uint64_t v[4], uint64_t steps)
{
	uint64_t x0 = v[0], x1 = v[1], x2 = v[2], x3 = v[3];
	uint64_t t0, t1, t2, t3;
	const uint64_t m = 0x9e3779b97f4a7c15ULL;
	const uint64_t a0 = 0xd1b54a32d192ed03ULL, a1 = 0x8bb84b93962eacc9ULL;
	const uint64_t a2 = 0x2545f4914f6cdd1dULL, a3 = 0x94d049bb133111ebULL;

	while (steps-- > 0)
		__asm__ (
		    "madd %[t0], %[x0], %[m], %[a0]\n\t"
		    "madd %[t1], %[x1], %[m], %[a1]\n\t"
		    "madd %[t2], %[x2], %[m], %[a2]\n\t"
		    "madd %[t3], %[x3], %[m], %[a3]\n\t"
		    "eor %[x0], %[t0], %[t1], ror #23\n\t"
		    "eor %[x1], %[t1], %[t2], ror #23\n\t"
		    "eor %[x2], %[t2], %[t3], ror #23\n\t"
		    "eor %[x3], %[t3], %[t0], ror #23\n\t"
		    : [x0] "+&r" (x0), [x1] "+&r" (x1), [x2] "+&r" (x2),
		      [x3] "+&r" (x3), [t0] "=&r" (t0), [t1] "=&r" (t1),
		      [t2] "=&r" (t2), [t3] "=&r" (t3)
		    : [m] "r" (m), [a0] "r" (a0), [a1] "r" (a1),
		      [a2] "r" (a2), [a3] "r" (a3));
	v[0] = x0, v[1] = x1, v[2] = x2, v[3] = x3;
}

static int
arm_madd_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v[4];

	(void)ctx;
	memcpy(v, x, 32);
	mulw_arm_madd_rounds(v, steps);
	memcpy(x, v, 32);
	return 0;
}

static const char *const arm_madd_insns[] = { "madd", "eor", NULL };
static const char *const arm_madd_forbidden[] = { "ror", "extr", NULL };

const struct kernel KERNEL_THIS = {
	.description = "AArch64 MADD per lane, EOR with the neighbour's "
	    "rotation folded",
	.insns = arm_madd_insns,
	.forbidden = arm_madd_forbidden,
	.symbol = "mulw_arm_madd_rounds",
	.chain = arm_madd_chain,
};

/*
 * mul/arm-scheduled: the seeds' explicitly scheduled ARM loop.  Eight
 * rounds of MADD + EOR (rotation folded) per iteration in one asm block;
 * the loop counter's SUBS sits at the top so its flags are ready long
 * before the branch, and nothing but the chain waits on the chain.
 */
#include "kernel.h"

#include <string.h>

#define MUL_M 0x9e3779b97f4a7c15ULL
#define MUL_A 0xd1b54a32d192ed03ULL
#define MUL_K 0xbf58476d1ce4e5b9ULL

#define ROUND \
	"madd %[v], %[v], %[m], %[a]\n\t" \
	"eor %[v], %[k], %[v], ror #23\n\t"

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) uint64_t
mul_arm_scheduled_rounds(uint64_t v, uint64_t oct, uint64_t rest)
{
	const uint64_t m = MUL_M, a = MUL_A, k = MUL_K;

	if (oct > 0)
		__asm__ volatile (
		    "1:\n\t"
		    "subs %[n], %[n], #1\n\t"
		    ROUND ROUND ROUND ROUND ROUND ROUND ROUND ROUND
		    "b.ne 1b\n\t"
		    : [v] "+&r" (v), [n] "+&r" (oct)
		    : [m] "r" (m), [a] "r" (a), [k] "r" (k)
		    : "cc");
	while (rest-- > 0)
		__asm__ (ROUND
		    : [v] "+&r" (v)
		    : [m] "r" (m), [a] "r" (a), [k] "r" (k));
	return v;
}

static int
arm_scheduled_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v;

	(void)ctx;
	memcpy(&v, x, 8);
	v = mul_arm_scheduled_rounds(v, steps / 8, steps % 8);
	memcpy(x, &v, 8);
	return 0;
}

static const char *const arm_scheduled_insns[] = { "madd", "eor", "subs",
	NULL };
static const char *const arm_scheduled_forbidden[] = { "ror", "extr",
	NULL };

const struct kernel KERNEL_THIS = {
	.description = "AArch64 MADD + EOR (rotation folded), 8 rounds per "
	    "iteration scheduled by hand, counter off the chain",
	.insns = arm_scheduled_insns,
	.forbidden = arm_scheduled_forbidden,
	.symbol = "mul_arm_scheduled_rounds",
	.chain = arm_scheduled_chain,
};

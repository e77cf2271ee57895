/*
 * mul-wide/x86-rorx: per lane IMUL, ADD, then RORX of the neighbour lane
 * and XOR, the four lanes interleaved in one asm block per round; the
 * multiplier and the four addends stay in registers.  Four IMULs a round
 * issue in 4 cycles on one port, under the 6-cycle path.
 */
#include "kernel.h"

#include <string.h>

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) void
mulw_x86_rorx_rounds(uint64_t v[4], uint64_t steps)
{
	uint64_t x0 = v[0], x1 = v[1], x2 = v[2], x3 = v[3];
	uint64_t r0, r1, r2, r3;
	const uint64_t m = 0x9e3779b97f4a7c15ULL;
	const uint64_t a0 = 0xd1b54a32d192ed03ULL, a1 = 0x8bb84b93962eacc9ULL;
	const uint64_t a2 = 0x2545f4914f6cdd1dULL, a3 = 0x94d049bb133111ebULL;

	while (steps-- > 0)
		__asm__ (
		    "imulq %[m], %[x0]\n\t"
		    "imulq %[m], %[x1]\n\t"
		    "imulq %[m], %[x2]\n\t"
		    "imulq %[m], %[x3]\n\t"
		    "addq %[a0], %[x0]\n\t"
		    "addq %[a1], %[x1]\n\t"
		    "addq %[a2], %[x2]\n\t"
		    "addq %[a3], %[x3]\n\t"
		    "rorxq $23, %[x1], %[r0]\n\t"
		    "rorxq $23, %[x2], %[r1]\n\t"
		    "rorxq $23, %[x3], %[r2]\n\t"
		    "rorxq $23, %[x0], %[r3]\n\t"
		    "xorq %[r0], %[x0]\n\t"
		    "xorq %[r1], %[x1]\n\t"
		    "xorq %[r2], %[x2]\n\t"
		    "xorq %[r3], %[x3]\n\t"
		    : [x0] "+r" (x0), [x1] "+r" (x1), [x2] "+r" (x2),
		      [x3] "+r" (x3), [r0] "=&r" (r0), [r1] "=&r" (r1),
		      [r2] "=&r" (r2), [r3] "=&r" (r3)
		    : [m] "r" (m), [a0] "r" (a0), [a1] "r" (a1),
		      [a2] "r" (a2), [a3] "r" (a3)
		    : "cc");
	v[0] = x0, v[1] = x1, v[2] = x2, v[3] = x3;
}

static int
x86_rorx_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v[4];

	(void)ctx;
	memcpy(v, x, 32);
	mulw_x86_rorx_rounds(v, steps);
	memcpy(x, v, 32);
	return 0;
}

static const char *const x86_rorx_insns[] = {
	"imul", "add", "rorx", "xor", NULL
};
static const char *const x86_rorx_forbidden[] = {
	"vpmullq", "pmuludq", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "x86-64 IMUL, ADD, RORX, XOR on four lanes "
	    "interleaved, constants in registers",
	.features = KF_X86_BMI2,
	.insns = x86_rorx_insns,
	.forbidden = x86_rorx_forbidden,
	.symbol = "mulw_x86_rorx_rounds",
	.chain = x86_rorx_chain,
};

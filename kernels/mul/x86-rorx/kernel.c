/*
 * mul/x86-rorx: the round as the four instructions of its critical path,
 * IMUL (3 cycles), ADD (1), RORX (1, BMI2: no flags, separate destination)
 * and XOR (1), four rounds per loop iteration.  The constants stay in
 * registers; the loop counter runs beside the chain.
 */
#include "kernel.h"

#include <string.h>

#define MUL_M 0x9e3779b97f4a7c15ULL
#define MUL_A 0xd1b54a32d192ed03ULL
#define MUL_K 0xbf58476d1ce4e5b9ULL

#define ROUND \
	"imulq %[m], %[v]\n\t" \
	"addq %[a], %[v]\n\t" \
	"rorxq $23, %[v], %[v]\n\t" \
	"xorq %[k], %[v]\n\t"

/* The disassembly check reads this function: only the chain is in it. */
static __attribute__((noinline)) uint64_t
mul_x86_rorx_rounds(uint64_t v, uint64_t quads, uint64_t rest)
{
	if (quads > 0)
		__asm__ volatile (
		    "1:\n\t"
		    ROUND ROUND ROUND ROUND
		    "decq %[n]\n\t"
		    "jnz 1b\n\t"
		    : [v] "+r" (v), [n] "+r" (quads)
		    : [m] "r" (MUL_M), [a] "r" (MUL_A), [k] "r" (MUL_K)
		    : "cc");
	while (rest-- > 0)
		__asm__ (ROUND
		    : [v] "+r" (v)
		    : [m] "r" (MUL_M), [a] "r" (MUL_A), [k] "r" (MUL_K)
		    : "cc");
	return v;
}

static int
x86_rorx_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v;

	(void)ctx;
	memcpy(&v, x, 8);
	v = mul_x86_rorx_rounds(v, steps / 4, steps % 4);
	memcpy(x, &v, 8);
	return 0;
}

static const char *const x86_rorx_insns[] = {
	"imul", "add", "rorx", "xor", NULL
};
/* The rotation by shifts (2 cycles) or any vector form is another path. */
static const char *const x86_rorx_forbidden[] = {
	"shl", "shr", "vpmullq", "pmuludq", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "x86-64 IMUL, ADD, RORX, XOR per round, constants in "
	    "registers, 4 rounds per iteration",
	.features = KF_X86_BMI2,
	.insns = x86_rorx_insns,
	.forbidden = x86_rorx_forbidden,
	.symbol = "mul_x86_rorx_rounds",
	.chain = x86_rorx_chain,
};

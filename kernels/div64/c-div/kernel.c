/*
 * div64/c-div: the round in portable C with the `/` and `%` operators, which
 * compile to the hardware divide (x86-64 DIV r64, AArch64 UDIV X + MSUB).
 * The study's control.
 */
#include "kernel.h"
#include "div64/div64.h"

static int
div64_c_div_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t a = div64_load(x), b = div64_load(x + 8);
	uint64_t d = DIV64_HI | (uint32_t)b;
	uint64_t next_a, i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		uint64_t q = a / d, r = a % d;
		/* 2^32 | low32(a ^ q) with q < 2^32: known before q is. */
		uint64_t p = DIV64_HI | (uint32_t)a;

		next_a = b ^ DIV64_C;
		d = p ^ q;
		b = a ^ q ^ (r << 32);
		a = next_a;
	}
	div64_store(x, a);
	div64_store(x + 8, b);
	return 0;
}

/*
 * The divide must be there; a multiply would mean the division was turned
 * into a reciprocal multiplication (AArch64 needs MSUB for the remainder,
 * so there only the multiply-high is a sign of it).
 */
#if defined(__x86_64__)
static const char *const div64_c_div_insns[] = { "div", NULL };
static const char *const div64_c_div_forbidden[] = {
	"mul", "imul", "mulx", NULL
};
#elif defined(__aarch64__)
static const char *const div64_c_div_insns[] = { "udiv", NULL };
static const char *const div64_c_div_forbidden[] = { "umulh", NULL };
#else
#define div64_c_div_insns NULL
#define div64_c_div_forbidden NULL
#endif

const struct kernel KERNEL_THIS = {
	.description = "portable C, / and % (hardware divide)",
	.insns = div64_c_div_insns,
	.forbidden = div64_c_div_forbidden,
	.symbol = "div64_c_div_chain",
	.chain = div64_c_div_chain,
};

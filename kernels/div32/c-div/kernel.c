/*
 * div32/c-div: the round in portable C with the `/` and `%` operators, which
 * compile to the hardware divide (x86-64 DIV r32, AArch64 UDIV W + MSUB).
 * The study's control.
 */
#include "kernel.h"
#include "div32/div32.h"

static int
div32_c_div_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t a = div32_load(x), b = div32_load(x + 4);
	uint32_t d = DIV32_HI | (uint16_t)b;
	uint32_t next_a;
	uint64_t i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		uint32_t q = a / d, r = a % d;
		/* 2^16 | low16(a ^ q) with q < 2^16: known before q is. */
		uint32_t p = DIV32_HI | (uint16_t)a;

		next_a = b ^ DIV32_C;
		d = p ^ q;
		b = a ^ q ^ (r << 16);
		a = next_a;
	}
	div32_store(x, a);
	div32_store(x + 4, b);
	return 0;
}

/*
 * The divide must be there; a multiply would mean the division was turned
 * into a reciprocal multiplication (AArch64 needs MSUB for the remainder,
 * so there only the multiply-high is a sign of it).
 */
#if defined(__x86_64__)
static const char *const div32_c_div_insns[] = { "div", NULL };
static const char *const div32_c_div_forbidden[] = {
	"mul", "imul", "mulx", NULL
};
#elif defined(__aarch64__)
static const char *const div32_c_div_insns[] = { "udiv", NULL };
static const char *const div32_c_div_forbidden[] = { "umulh", "umull", NULL };
#else
#define div32_c_div_insns NULL
#define div32_c_div_forbidden NULL
#endif

const struct kernel KERNEL_THIS = {
	.description = "portable C, / and % (hardware divide)",
	.insns = div32_c_div_insns,
	.forbidden = div32_c_div_forbidden,
	.symbol = "div32_c_div_chain",
	.chain = div32_c_div_chain,
};

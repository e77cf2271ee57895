/*
 * div32/c-double: the quotient as trunc(a / d) in double precision, with
 * no correction at all.  Exact for every 32-bit dividend and divisor
 * (docs/studies.md): both convert exactly, and for a < 2^53 the rounded
 * quotient never reaches the next integer, since a / d is at least 1 / d
 * below it while the rounding error is at most a / d * 2^-53 < 1 / d.
 */
#include "kernel.h"
#include "div32/div32.h"

static int
div32_c_double_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t a = div32_load(x), b = div32_load(x + 4);
	uint32_t d = DIV32_HI | (uint16_t)b;
	uint32_t next_a;
	uint64_t i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		uint32_t q = (uint32_t)((double)a / (double)d);
		uint32_t r = a - q * d;
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
 * The floating-point divide (VEX-encoded where the build enables AVX, as
 * -march=native does), and no integer divide anywhere.
 */
#if defined(__x86_64__) && defined(__AVX__)
static const char *const div32_c_double_insns[] = { "vdivsd", NULL };
static const char *const div32_c_double_forbidden[] = { "div", "idiv", NULL };
#elif defined(__x86_64__)
static const char *const div32_c_double_insns[] = { "divsd", NULL };
static const char *const div32_c_double_forbidden[] = { "div", "idiv", NULL };
#elif defined(__aarch64__)
static const char *const div32_c_double_insns[] = { "fdiv", NULL };
static const char *const div32_c_double_forbidden[] = { "udiv", "sdiv", NULL };
#else
#define div32_c_double_insns NULL
#define div32_c_double_forbidden NULL
#endif

const struct kernel KERNEL_THIS = {
	.description = "portable C, double-precision quotient, exact for all "
	    "32-bit operands without correction",
	.insns = div32_c_double_insns,
	.forbidden = div32_c_double_forbidden,
	.symbol = "div32_c_double_chain",
	.chain = div32_c_double_chain,
};

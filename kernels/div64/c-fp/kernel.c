/*
 * div64/c-fp: the quotient estimated in double precision, then corrected
 * exactly in integers.  Portable C with signed conversions only, because the
 * operands' ranges allow it (docs/studies.md has the proof):
 *
 *   - the divisor d < 2^33 converts exactly;
 *   - the dividend converts as (a >> 11) * 2^11: a >> 11 < 2^53 is exact,
 *     so the estimate sees a - (a mod 2^11), off by less than 2^11;
 *   - the estimate q~ = trunc(fl(a~ / d)) is then within 1 of q, and
 *     a - q~ * d lies in [-d, 2d): it fits an int64_t and one step up or
 *     down corrects it.
 *
 * A generic (double)a on a uint64_t would cost x86-64 without AVX-512 a
 * branch on the top bit (50% mispredicted here); the range makes it
 * unnecessary.  The correction is a branch that almost never fires, so the
 * next division starts on the estimate and the check runs beside it.
 */
#include "kernel.h"
#include "div64/div64.h"

static int
div64_c_fp_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t a = div64_load(x), b = div64_load(x + 8);
	uint64_t d = DIV64_HI | (uint32_t)b;
	uint64_t next_a, i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		double ad = (double)(int64_t)(a >> 11) * 2048.0;
		uint64_t q = (uint64_t)(int64_t)(ad / (double)(int64_t)d);
		int64_t r = (int64_t)(a - q * d);
		uint64_t p = DIV64_HI | (uint32_t)a;

		if (r < 0) {
			q--;
			r += (int64_t)d;
		} else if ((uint64_t)r >= d) {
			q++;
			r -= (int64_t)d;
		}
		next_a = b ^ DIV64_C;
		d = p ^ q;
		b = a ^ q ^ ((uint64_t)r << 32);
		a = next_a;
	}
	div64_store(x, a);
	div64_store(x + 8, b);
	return 0;
}

/*
 * The floating-point divide (VEX-encoded where the build enables AVX, as
 * -march=native does), and no integer divide anywhere.
 */
#if defined(__x86_64__) && defined(__AVX__)
static const char *const div64_c_fp_insns[] = { "vdivsd", NULL };
static const char *const div64_c_fp_forbidden[] = { "div", "idiv", NULL };
#elif defined(__x86_64__)
static const char *const div64_c_fp_insns[] = { "divsd", NULL };
static const char *const div64_c_fp_forbidden[] = { "div", "idiv", NULL };
#elif defined(__aarch64__)
static const char *const div64_c_fp_insns[] = { "fdiv", NULL };
static const char *const div64_c_fp_forbidden[] = { "udiv", "sdiv", NULL };
#else
#define div64_c_fp_insns NULL
#define div64_c_fp_forbidden NULL
#endif

const struct kernel KERNEL_THIS = {
	.description = "portable C, double-precision quotient estimate, "
	    "exact integer correction (one step up or down)",
	.insns = div64_c_fp_insns,
	.forbidden = div64_c_fp_forbidden,
	.symbol = "div64_c_fp_chain",
	.chain = div64_c_fp_chain,
};

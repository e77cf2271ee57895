/*
 * div32/c-float: the quotient estimated in single precision (24-bit
 * significand, the fastest divide), then corrected exactly in integers.
 * The ranges (docs/studies.md has the proof):
 *
 *   - the divisor d < 2^17 converts exactly;
 *   - the dividend converts as (a >> 8) * 2^8: a >> 8 < 2^24 is exact, so
 *     the estimate sees a - (a mod 2^8), off by less than 2^8;
 *   - q~ = trunc(fl(a~ / d)) is within 1 of q (error below 2^-7), and
 *     a - q~ * d lies in [-d, 2d): it fits an int32_t and one step up or
 *     down corrects it.
 *
 * The correction is a branch that almost never fires, so the next division
 * starts on the estimate and the check runs beside it.
 */
#include "kernel.h"
#include "div32/div32.h"

static int
div32_c_float_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t a = div32_load(x), b = div32_load(x + 4);
	uint32_t d = DIV32_HI | (uint16_t)b;
	uint32_t next_a;
	uint64_t i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		float af = (float)(int32_t)(a >> 8) * 256.0f;
		uint32_t q = (uint32_t)(int32_t)(af / (float)(int32_t)d);
		int32_t r = (int32_t)(a - q * d);
		uint32_t p = DIV32_HI | (uint16_t)a;

		if (r < 0) {
			q--;
			r += (int32_t)d;
		} else if ((uint32_t)r >= d) {
			q++;
			r -= (int32_t)d;
		}
		next_a = b ^ DIV32_C;
		d = p ^ q;
		b = a ^ q ^ ((uint32_t)r << 16);
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
static const char *const div32_c_float_insns[] = { "vdivss", NULL };
static const char *const div32_c_float_forbidden[] = { "div", "idiv", NULL };
#elif defined(__x86_64__)
static const char *const div32_c_float_insns[] = { "divss", NULL };
static const char *const div32_c_float_forbidden[] = { "div", "idiv", NULL };
#elif defined(__aarch64__)
static const char *const div32_c_float_insns[] = { "fdiv", NULL };
static const char *const div32_c_float_forbidden[] = { "udiv", "sdiv", NULL };
#else
#define div32_c_float_insns NULL
#define div32_c_float_forbidden NULL
#endif

const struct kernel KERNEL_THIS = {
	.description = "portable C, single-precision quotient estimate, "
	    "exact integer correction (one step up or down)",
	.insns = div32_c_float_insns,
	.forbidden = div32_c_float_forbidden,
	.symbol = "div32_c_float_chain",
	.chain = div32_c_float_chain,
};

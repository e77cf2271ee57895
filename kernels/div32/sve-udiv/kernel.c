/*
 * div32/sve-udiv: the round with SVE UDIV on 32-bit lanes, the whole state
 * in vector registers (every lane holds the same (a, b); lane 0 is read at
 * the end), so nothing crosses between vector and general registers inside
 * the chain.  MLS gives the remainder.
 */
#include "kernel.h"
#include "div32/div32.h"

#include <arm_sve.h>

static int
div32_sve_udiv_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	svbool_t all = svptrue_b32();
	svuint32_t a = svdup_n_u32(div32_load(x));
	svuint32_t b = svdup_n_u32(div32_load(x + 4));
	svuint32_t d = svorr_n_u32_x(all, svand_n_u32_x(all, b, 0xffff),
	    DIV32_HI);
	uint64_t i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		svuint32_t q = svdiv_u32_x(all, a, d);
		svuint32_t r = svmls_u32_x(all, a, q, d);
		svuint32_t p = svorr_n_u32_x(all,
		    svand_n_u32_x(all, a, 0xffff), DIV32_HI);
		svuint32_t nb = sveor_u32_x(all, sveor_u32_x(all, a, q),
		    svlsl_n_u32_x(all, r, 16));

		a = sveor_n_u32_x(all, b, DIV32_C);
		b = nb;
		d = sveor_u32_x(all, p, q);
	}
	div32_store(x, svlastb_u32(svptrue_pat_b32(SV_VL1), a));
	div32_store(x + 4, svlastb_u32(svptrue_pat_b32(SV_VL1), b));
	return 0;
}

static const char *const sve_insns[] = { "udiv", NULL };
static const char *const sve_forbidden[] = { "umulh", "bl", NULL };

const struct kernel KERNEL_THIS = {
	.description = "SVE UDIV on 32-bit lanes, state in vector registers",
	.features = KF_ARM_SVE,
	.insns = sve_insns,
	.forbidden = sve_forbidden,
	.symbol = "div32_sve_udiv_chain",
	.chain = div32_sve_udiv_chain,
};

/*
 * div64/sve-udiv: the round with SVE UDIV on 64-bit lanes, the whole state
 * in vector registers (every lane holds the same (a, b); lane 0 is read at
 * the end), so nothing crosses between vector and general registers inside
 * the chain.  MLS gives the remainder.
 */
#include "kernel.h"
#include "div64/div64.h"

#include <arm_sve.h>

static int
div64_sve_udiv_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	svbool_t all = svptrue_b64();
	svuint64_t a = svdup_n_u64(div64_load(x));
	svuint64_t b = svdup_n_u64(div64_load(x + 8));
	svuint64_t d = svorr_n_u64_x(all, svand_n_u64_x(all, b, 0xffffffff),
	    DIV64_HI);
	uint64_t i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		svuint64_t q = svdiv_u64_x(all, a, d);
		svuint64_t r = svmls_u64_x(all, a, q, d);
		svuint64_t p = svorr_n_u64_x(all,
		    svand_n_u64_x(all, a, 0xffffffff), DIV64_HI);
		svuint64_t nb = sveor_u64_x(all, sveor_u64_x(all, a, q),
		    svlsl_n_u64_x(all, r, 32));

		a = sveor_n_u64_x(all, b, DIV64_C);
		b = nb;
		d = sveor_u64_x(all, p, q);
	}
	div64_store(x, svlastb_u64(svptrue_pat_b64(SV_VL1), a));
	div64_store(x + 8, svlastb_u64(svptrue_pat_b64(SV_VL1), b));
	return 0;
}

static const char *const sve_insns[] = { "udiv", NULL };
static const char *const sve_forbidden[] = { "umulh", "bl", NULL };

const struct kernel KERNEL_THIS = {
	.description = "SVE UDIV on 64-bit lanes, state in vector registers",
	.features = KF_ARM_SVE,
	.insns = sve_insns,
	.forbidden = sve_forbidden,
	.symbol = "div64_sve_udiv_chain",
	.chain = div64_sve_udiv_chain,
};

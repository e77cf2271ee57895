/*
 * bitperm/sve2-bitperm: the round with SVE2 BEXT and BDEP (FEAT_SVE_BitPerm)
 * and SVE RBIT, the state kept in a vector register (every 64-bit lane
 * holds the same x; lane 0 is read at the end), so nothing crosses between
 * the vector and general registers inside the chain.
 */
#include "kernel.h"
#include "bitperm/bitperm.h"

#include <arm_sve.h>

static int
bitperm_sve2_bitperm_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	svbool_t all = svptrue_b64();
	svuint64_t m = svdup_n_u64(BITPERM_M), not_m = svdup_n_u64(~BITPERM_M);
	svuint64_t n = svdup_n_u64(BITPERM_N), not_n = svdup_n_u64(~BITPERM_N);
	svuint64_t v = svdup_n_u64(bitperm_load(x));
	uint64_t i;

	(void)ctx;
	for (i = 0; i < steps; i++) {
		svuint64_t t = svorr_u64_x(all,
		    svbdep_u64(svbext_u64(v, m), n),
		    svbdep_u64(svbext_u64(v, not_m), not_n));

		v = svadd_n_u64_x(all, svrbit_u64_x(all, t), BITPERM_K);
	}
	bitperm_store(x, svlastb_u64(svptrue_pat_b64(SV_VL1), v));
	return 0;
}

static const char *const sve2_insns[] = { "bext", "bdep", "rbit", NULL };
static const char *const sve2_forbidden[] = { "bl", NULL };

const struct kernel KERNEL_THIS = {
	.description = "SVE2 BEXT/BDEP and SVE RBIT, state in a vector "
	    "register",
	.features = KF_ARM_SVE2_BITPERM,
	.insns = sve2_insns,
	.forbidden = sve2_forbidden,
	.symbol = "bitperm_sve2_bitperm_chain",
	.chain = bitperm_sve2_bitperm_chain,
};

/*
 * bitperm/arm-rbit: the round on AArch64 without SVE2: pext and pdep as the
 * fixed-mask networks of ../network.h (BIC, AND and ORR with a shifted
 * operand: two dependent instructions a stage), the reversal as one RBIT.
 */
#include "kernel.h"
#include "bitperm/bitperm.h"
#include "bitperm/network.h"

#include <stdlib.h>

struct nets {
	struct bitperm_net m, not_m, n, not_n;
};

static int
bitperm_arm_rbit_setup(void **ctx)
{
	struct nets *k = malloc(sizeof *k);

	if (k == NULL)
		return -1;
	bitperm_net_init(&k->m, BITPERM_M);
	bitperm_net_init(&k->not_m, ~BITPERM_M);
	bitperm_net_init(&k->n, BITPERM_N);
	bitperm_net_init(&k->not_n, ~BITPERM_N);
	*ctx = k;
	return 0;
}

static void
bitperm_arm_rbit_teardown(void *ctx)
{
	free(ctx);
}

static int
bitperm_arm_rbit_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	const struct nets *k = ctx;
	uint64_t v = bitperm_load(x), i;

	for (i = 0; i < steps; i++) {
		uint64_t lo = bitperm_net_extract(&k->m, v);
		uint64_t hi = bitperm_net_extract(&k->not_m, v);
		uint64_t t = bitperm_net_deposit(&k->n, lo) |
		    bitperm_net_deposit(&k->not_n, hi);

		__asm__("rbit %0, %1" : "=r"(t) : "r"(t));
		v = t + BITPERM_K;
	}
	bitperm_store(x, v);
	return 0;
}

static const char *const bitperm_arm_rbit_insns[] = { "rbit", NULL };
static const char *const bitperm_arm_rbit_forbidden[] = { "bl", NULL };

const struct kernel KERNEL_THIS = {
	.description = "AArch64: pext/pdep as fixed-mask shift networks, "
	    "RBIT for the reversal",
	.insns = bitperm_arm_rbit_insns,
	.forbidden = bitperm_arm_rbit_forbidden,
	.symbol = "bitperm_arm_rbit_chain",
	.setup = bitperm_arm_rbit_setup,
	.teardown = bitperm_arm_rbit_teardown,
	.chain = bitperm_arm_rbit_chain,
};

/*
 * bitperm/c-portable: the round in portable C, with no bit-permutation
 * instruction: pext and pdep as the fixed-mask networks of ../network.h,
 * rev64 as a byte swap and three swap stages (nibbles, pairs, bits).  The
 * study's control: what a compiler makes of the round on any CPU.
 */
#include "kernel.h"
#include "bitperm/bitperm.h"
#include "bitperm/network.h"

#include <stdlib.h>

struct nets {
	struct bitperm_net m, not_m, n, not_n;
};

static int
bitperm_c_portable_setup(void **ctx)
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
bitperm_c_portable_teardown(void *ctx)
{
	free(ctx);
}

static uint64_t
rev64(uint64_t v)
{
	v = (v >> 32) | (v << 32);
	v = ((v >> 16) & UINT64_C(0x0000ffff0000ffff)) |
	    ((v & UINT64_C(0x0000ffff0000ffff)) << 16);
	v = ((v >> 8) & UINT64_C(0x00ff00ff00ff00ff)) |
	    ((v & UINT64_C(0x00ff00ff00ff00ff)) << 8);
	v = ((v >> 4) & UINT64_C(0x0f0f0f0f0f0f0f0f)) |
	    ((v & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4);
	v = ((v >> 2) & UINT64_C(0x3333333333333333)) |
	    ((v & UINT64_C(0x3333333333333333)) << 2);
	v = ((v >> 1) & UINT64_C(0x5555555555555555)) |
	    ((v & UINT64_C(0x5555555555555555)) << 1);
	return v;
}

static int
bitperm_c_portable_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	const struct nets *k = ctx;
	uint64_t v = bitperm_load(x), i;

	for (i = 0; i < steps; i++) {
		uint64_t lo = bitperm_net_extract(&k->m, v);
		uint64_t hi = bitperm_net_extract(&k->not_m, v);
		uint64_t t = bitperm_net_deposit(&k->n, lo) |
		    bitperm_net_deposit(&k->not_n, hi);

		v = rev64(t) + BITPERM_K;
	}
	bitperm_store(x, v);
	return 0;
}

/*
 * No bit-permutation instruction: the gathers and scatters stay software.
 * RBIT is allowed: clang on AArch64 recognises the swap stages as a bit
 * reversal, and the control is what a compiler makes of portable C.
 */
static const char *const bitperm_c_portable_forbidden[] = {
	"pext", "pdep", "bext", "bdep", "call", "bl", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "portable C: pext/pdep as fixed-mask shift networks, "
	    "rev64 as swap stages",
	.forbidden = bitperm_c_portable_forbidden,
	.symbol = "bitperm_c_portable_chain",
	.setup = bitperm_c_portable_setup,
	.teardown = bitperm_c_portable_teardown,
	.chain = bitperm_c_portable_chain,
};

/*
 * mul/c: the round in portable C, the study's control.  The compiler picks
 * the instructions (x86-64: IMUL, ADD, ROR or RORX, XOR; AArch64: MADD,
 * EOR with the rotation folded), which the disassembly check confirms.
 */
#include "kernel.h"

#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the state is little-endian: this file assumes a little-endian host"
#endif

#define MUL_M 0x9e3779b97f4a7c15ULL
#define MUL_A 0xd1b54a32d192ed03ULL
#define MUL_K 0xbf58476d1ce4e5b9ULL

static int
mul_c_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v, t;

	(void)ctx;
	memcpy(&v, x, 8);
	while (steps-- > 0) {
		t = v * MUL_M + MUL_A;
		v = ((t >> 23) | (t << 41)) ^ MUL_K;
	}
	memcpy(x, &v, 8);
	return 0;
}

/*
 * A vector multiply or add in the loop would mean the compiler rebuilt the
 * chain; folding rounds algebraically cannot happen with the rotation
 * between the multiplies (docs/studies.md).
 */
static const char *const c_forbidden[] = {
	"vpmullq", "vpmuludq", "pmuludq", "vpaddq", "paddq", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "portable C, one round per loop iteration, the "
	    "compiler's instructions",
	.forbidden = c_forbidden,
	.symbol = "mul_c_chain",
	.chain = mul_c_chain,
};

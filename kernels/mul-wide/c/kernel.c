/*
 * mul-wide/c: the four-lane round in portable C, the study's control; each
 * lane in its own variable, the compiler's instructions.
 */
#include "kernel.h"

#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the state is little-endian: this file assumes a little-endian host"
#endif

#define WIDE_M 0x9e3779b97f4a7c15ULL
#define ROR23(t) (((t) >> 23) | ((t) << 41))

static int
mulw_c_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v[4], x0, x1, x2, x3, t0, t1, t2, t3;

	(void)ctx;
	memcpy(v, x, 32);
	x0 = v[0], x1 = v[1], x2 = v[2], x3 = v[3];
	while (steps-- > 0) {
		t0 = x0 * WIDE_M + 0xd1b54a32d192ed03ULL;
		t1 = x1 * WIDE_M + 0x8bb84b93962eacc9ULL;
		t2 = x2 * WIDE_M + 0x2545f4914f6cdd1dULL;
		t3 = x3 * WIDE_M + 0x94d049bb133111ebULL;
		x0 = t0 ^ ROR23(t1);
		x1 = t1 ^ ROR23(t2);
		x2 = t2 ^ ROR23(t3);
		x3 = t3 ^ ROR23(t0);
	}
	v[0] = x0, v[1] = x1, v[2] = x2, v[3] = x3;
	memcpy(x, v, 32);
	return 0;
}

/* The scalar control: a vector multiply means the compiler vectorized it. */
static const char *const c_forbidden[] = {
	"vpmullq", "vpmuludq", "pmuludq", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "portable C, four lane variables, the compiler's "
	    "instructions",
	.forbidden = c_forbidden,
	.symbol = "mulw_c_chain",
	.chain = mulw_c_chain,
};

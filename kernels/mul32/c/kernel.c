/*
 * mul32/c: the sixteen-lane round in portable C, the study's control and
 * its scalar form.  Empty asm statements keep the lanes in
 * general registers: without them an optimising compiler may vectorize the
 * sixteen independent multiplies, and the scalar form would be measured
 * as SIMD (the disassembly check forbids vector multiplies here).  Each
 * multiply's operand passes one inside its loop, whatever the flags: a
 * loop with an asm statement is never vectorized, and gcc 12 at -O2
 * vectorizes these loops (two MLA on AArch64) when only whole arrays
 * pass them after it (tests/test_24_arith.py checks -O2 and -O3).
 */
#include "kernel.h"

#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the state is little-endian: this file assumes a little-endian host"
#endif

#define M32 0x85ebca6bu
#define ROR13(t) (((t) >> 13) | ((t) << 19))

/* No instruction: says the value is in a general register here. */
#define SCALAR(x) __asm__ ("" : "+r" (x))

/* No instruction: says the sixteen values are in general registers here. */
#define KEEP_SCALAR(w) do { \
	__asm__ ("" : "+r" (w[0]), "+r" (w[1]), "+r" (w[2]), "+r" (w[3]), \
	    "+r" (w[4]), "+r" (w[5]), "+r" (w[6]), "+r" (w[7])); \
	__asm__ ("" : "+r" (w[8]), "+r" (w[9]), "+r" (w[10]), "+r" (w[11]), \
	    "+r" (w[12]), "+r" (w[13]), "+r" (w[14]), "+r" (w[15])); \
} while (0)

/* A[i] = (2i + 1) * 0x9e3779b9 mod 2^32, as constants: a loop computing
 * them is vectorized at -O3 (MUL on vectors), and it is in the symbol the
 * disassembly check reads. */
static const uint32_t a[16] = {
	0x9e3779b9u, 0xdaa66d2bu, 0x1715609du, 0x5384540fu,
	0x8ff34781u, 0xcc623af3u, 0x08d12e65u, 0x454021d7u,
	0x81af1549u, 0xbe1e08bbu, 0xfa8cfc2du, 0x36fbef9fu,
	0x736ae311u, 0xafd9d683u, 0xec48c9f5u, 0x28b7bd67u,
};

static int
mul32_c_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t v[16], t[16];
	int i;

	(void)ctx;
	memcpy(v, x, 64);
	while (steps-- > 0) {
		for (i = 0; i < 16; i++) {
			uint32_t x = v[i];

			SCALAR(x);
			t[i] = x * M32 + a[i];
		}
		KEEP_SCALAR(t);
		for (i = 0; i < 16; i++)
			v[i] = t[i] ^ ROR13(t[(i + 1) & 15]);
		KEEP_SCALAR(v);
	}
	memcpy(x, v, 64);
	return 0;
}

/* Vector multiplies: x86-64 VPMULLD/PMULLD, AArch64 MLA/MUL on vectors. */
static const char *const c_forbidden[] = {
	"vpmulld", "pmulld", "mla", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "portable C, sixteen lanes kept in general registers, "
	    "the compiler's scalar instructions",
	.forbidden = c_forbidden,
	.symbol = "mul32_c_chain",
	.chain = mul32_c_chain,
};

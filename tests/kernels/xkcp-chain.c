/*
 * One XKCP single-instance Keccak-p[1600] build as a chain for
 * tests/kernels/others.c: x = SHA3-256(x) through XKCP's SnP calls, the way
 * its sponge (KeccakWidth1600_Sponge) drives them for a 32-byte message:
 * Initialize, AddBytes of the message, AddByte of the two padding bytes
 * (0x06 after the message, 0x80 at the end of the 136-byte rate),
 * Permute_24rounds, ExtractBytes of the digest.  The lane layout (AVX2's
 * permuted one) and lane complementing stay inside XKCP's functions.
 *
 * tests/kernels/xkcp.sh compiles this file once per XKCP config and
 * compiler, with that config's SnP.h first on the include path, into a
 * shared object that exports only the two symbols below (others.c
 * dlopen()s each); XKCP's own symbols stay local to its object.
 */
#include <stddef.h>
#include <stdint.h>

#include "KeccakP-1600-SnP.h"

#define EXPORT __attribute__((visibility("default")))

/* "plain-64bits ua, gcc": set by xkcp.sh. */
EXPORT const char xkcp_name[] = XKCP_NAME;

EXPORT int
xkcp_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	KeccakP1600_state st;

	(void)ctx;
	KeccakP1600_StaticInitialize();
	while (steps--) {
		KeccakP1600_Initialize(&st);
		KeccakP1600_AddBytes(&st, x, 0, 32);
		KeccakP1600_AddByte(&st, 0x06, 32);
		KeccakP1600_AddByte(&st, 0x80, 135);
		KeccakP1600_Permute_24rounds(&st);
		KeccakP1600_ExtractBytes(&st, x, 0, 32);
	}
	return 0;
}

/*
 * sha3/avx2-fused: the whole chain in one function with the AVX2 round
 * (../keccak-avx2.h).  The digest stays in lanes 0-3 between hashes and
 * only the rest of the state is reset to the padding of a 32-byte
 * message; rounds 0 and 23 are peeled so the compiler specialises them.
 */
#include "kernel.h"
#include "sha3/keccak-avx2.h"

static int
avx2_fused_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, keccak_f1600_avx2);
}

static int
avx2_fused_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	KECCAK_LANES_AVX2;
	const __m128i zero = _mm_setzero_si128();
	uint64_t i;
	int r;

	(void)ctx;
	a00 = _mm_loadl_epi64((const __m128i *)(const void *)x);
	a01 = _mm_loadl_epi64((const __m128i *)(const void *)(x + 8));
	a02 = _mm_loadl_epi64((const __m128i *)(const void *)(x + 16));
	a03 = _mm_loadl_epi64((const __m128i *)(const void *)(x + 24));
	for (i = 0; i < steps; i++) {
		a04 = _mm_set_epi64x(0, (long long)SHA3_256_PAD32_LANE4);
		a05 = a06 = a07 = a08 = a09 = zero;
		a10 = a11 = a12 = a13 = a14 = a15 = zero;
		a16 = _mm_set_epi64x(0, (long long)SHA3_256_PAD32_LANE16);
		a17 = a18 = a19 = a20 = a21 = a22 = a23 = a24 = zero;
		/*
		 * Rounds 0 and 23 outside the loop: the compiler folds the
		 * padding constants into round 0 and drops the lanes of
		 * round 23 that the digest does not read (dead stores).
		 */
		KECCAK_ROUND_AVX2(LD_AVX2_RC(0));
		for (r = 1; r < 23; r++)
			KECCAK_ROUND_AVX2(LD_AVX2_RC(r));
		KECCAK_ROUND_AVX2(LD_AVX2_RC(23));
	}
	_mm_storel_epi64((__m128i *)(void *)x, a00);
	_mm_storel_epi64((__m128i *)(void *)(x + 8), a01);
	_mm_storel_epi64((__m128i *)(void *)(x + 16), a02);
	_mm_storel_epi64((__m128i *)(void *)(x + 24), a03);
	return 0;
}

static const char *const avx2_insns[] = {
	"vpxor", "vpandn", "vpsllq", "vpsrlq", NULL
};

const struct kernel kernel_sha3_avx2_fused = {
	.study = "sha3",
	.variant = "avx2-fused",
	.description = "AVX2 Keccak, one lane per xmm, whole chain in one "
	    "function",
	.features = KF_X86_AVX2,
	.insns = avx2_insns,
	.symbol = "avx2_fused_chain",
	.hash = avx2_fused_hash,
	.chain = avx2_fused_chain,
};

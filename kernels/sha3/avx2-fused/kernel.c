/*
 * sha3/avx2-fused: the whole chain in one function with the AVX2 round
 * (../keccak-avx2.h, seven ymm registers).  The digest stays in lane0
 * and row0 between hashes; the other five registers are reset to the
 * padding of a 32-byte message, which is all zero but for lane 4 (row0's
 * last slot) and lane 16 (diag3's first).  Round 0 is peeled so the
 * compilers fold those constants, and round 23 computes only lane0 and
 * row0.
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
	KECCAK_STATE_AVX2;
	const __m256i zero = _mm256_setzero_si256();
	const __m256i pad4 = _mm256_setr_epi64x(0, 0, 0,
	    (long long)SHA3_256_PAD32_LANE4);
	const __m256i pad16 = _mm256_setr_epi64x(
	    (long long)SHA3_256_PAD32_LANE16, 0, 0, 0);
	__m256i digest;
	uint64_t i;
	int r;

	(void)ctx;
	/* x is lanes 0-3, little-endian as on every x86 host. */
	digest = _mm256_loadu_si256((const __m256i *)(const void *)x);
	lane0 = _mm256_permute4x64_epi64(digest, 0x00);
	row0 = _mm256_permute4x64_epi64(digest, 0xf9);
	for (i = 0; i < steps; i++) {
		row0 = _mm256_blend_epi32(row0, pad4, 0xc0);
		col0 = diag1 = diag2 = diag4 = zero;
		diag3 = pad16;
		KECCAK_ROUND_AVX2(KECCAK_RC_AVX2(0));
		for (r = 1; r < 23; r++)
			KECCAK_ROUND_AVX2(KECCAK_RC_AVX2(r));
		KECCAK_LAST_ROUND_AVX2(KECCAK_RC_AVX2(23));
	}
	/* Lanes 0-3: lane0's slot 0, then row0's slots 0-2. */
	digest = _mm256_blend_epi32(_mm256_permute4x64_epi64(row0, 0x90),
	    lane0, 0x03);
	_mm256_storeu_si256((__m256i *)(void *)x, digest);
	return 0;
}

/* pi and chi's return to column order, chi's lanes, rho, chi. */
static const char *const avx2_insns[] = {
	"vpermq", "vpblendd", "vpsllvq", "vpsrlvq", "vpandn", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "AVX2 Keccak, state in seven ymm registers, whole "
	    "chain in one function",
	.features = KF_X86_AVX2,
	.insns = avx2_insns,
	.symbol = "avx2_fused_chain",
	.hash = avx2_fused_hash,
	.chain = avx2_fused_chain,
};

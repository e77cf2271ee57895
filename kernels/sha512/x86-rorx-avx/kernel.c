/*
 * sha512/x86-rorx-avx: x86-rorx's rounds for cores without AVX-512 (AVX2
 * machines, and VMs that hide AVX-512, as some clouds do on Zen 4): the
 * same generated chain (../gen-x86-rorx.py), its message schedule in VEX
 * registers: rotates as shift pairs or vpshufb, sigma0 and the sums for two
 * pairs at once in a ymm (vextracti128 splits them), xors as vpxor.
 */
#include "kernel.h"
#include "sha512/sha512-c.h"

void sha512_x86_rorx_avx_chain(uint64_t h[8], uint64_t steps);
void sha512_x86_rorx_avx_block(uint64_t state[8], const uint64_t block[16]);

static int
x86_rorx_avx_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha512_short(msg, len, out, sha512_x86_rorx_avx_block);
}

static int
x86_rorx_avx_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t h[8];
	int i;

	(void)ctx;
	for (i = 0; i < 8; i++)
		h[i] = sha512_load_be(x + 8 * i);
	sha512_x86_rorx_avx_chain(h, steps);
	for (i = 0; i < 8; i++)
		sha512_store_be(x + 8 * i, h[i]);
	return 0;
}

static const char *const x86_rorx_avx_insns[] = {
	"rorx", "andn", "vpsllq", "vpshufb", "vextracti128", NULL
};

/* EVEX would not run where this variant is meant to. */
static const char *const x86_rorx_avx_forbidden[] = {
	"vprorq", "vpternlogq", "vmovdqu64", NULL
};

const struct kernel KERNEL_THIS = {
	.description = "x86-rorx without AVX-512: BMI2 rorx/andn rounds, "
	    "message schedule in VEX xmm/ymm (shift pairs for rotates)",
	.features = KF_X86_BMI2 | KF_X86_AVX2,
	.insns = x86_rorx_avx_insns,
	.forbidden = x86_rorx_avx_forbidden,
	.symbol = "sha512_x86_rorx_avx_chain",
	.hash = x86_rorx_avx_hash,
	.chain = x86_rorx_avx_chain,
};

/*
 * kernels/openssl-caps.h: the OpenSSL capability bits that `seqorch run
 * --openssl-cap-clear NAME[,NAME]` may clear, per architecture.  aarch64:
 * OpenSSL's own names and bits (arm_arch.h, the one word of
 * OPENSSL_armcap).  x86-64: the bits OPENSSL_ia32cap(3) documents, named
 * after their CPU feature; word 0 is CPUID.1 EDX (bits 0-31) and ECX
 * (32-63), word 1 CPUID.7 EBX (0-31) and ECX (32-63).  Plain C, shipped
 * with the agent (which clears them) and read by the coordinator (which
 * refuses a name the host's architecture does not have before building).
 */
#ifndef SEQORCH_OPENSSL_CAPS_H
#define SEQORCH_OPENSSL_CAPS_H

#include <string.h>

struct openssl_cap_bit {
	const char *arch;	/* "aarch64", "x86_64" */
	const char *name;
	unsigned word, bit;
};

static const struct openssl_cap_bit openssl_cap_bits[] = {
	{ "aarch64", "ARMV7_NEON", 0, 0 },
	{ "aarch64", "ARMV7_TICK", 0, 1 },
	{ "aarch64", "ARMV8_AES", 0, 2 },
	{ "aarch64", "ARMV8_SHA1", 0, 3 },
	{ "aarch64", "ARMV8_SHA256", 0, 4 },
	{ "aarch64", "ARMV8_PMULL", 0, 5 },
	{ "aarch64", "ARMV8_SHA512", 0, 6 },
	{ "aarch64", "ARMV8_CPUID", 0, 7 },
	{ "aarch64", "ARMV8_RNG", 0, 8 },
	{ "aarch64", "ARMV8_SM3", 0, 9 },
	{ "aarch64", "ARMV8_SM4", 0, 10 },
	{ "aarch64", "ARMV8_SHA3", 0, 11 },
	{ "aarch64", "ARMV8_UNROLL8_EOR3", 0, 12 },
	{ "aarch64", "ARMV8_SVE", 0, 13 },
	{ "aarch64", "ARMV8_SVE2", 0, 14 },
	{ "aarch64", "ARMV8_HAVE_SHA3_AND_WORTH_USING", 0, 15 },
	{ "aarch64", "ARMV8_UNROLL12_EOR3", 0, 16 },
	{ "x86_64", "TSC", 0, 4 },
	{ "x86_64", "CLFLUSH", 0, 19 },
	{ "x86_64", "MMX", 0, 23 },
	{ "x86_64", "FXSR", 0, 24 },
	{ "x86_64", "SSE", 0, 25 },
	{ "x86_64", "SSE2", 0, 26 },
	{ "x86_64", "HTT", 0, 28 },
	{ "x86_64", "INTEL", 0, 30 },
	{ "x86_64", "PCLMULQDQ", 0, 33 },
	{ "x86_64", "SSSE3", 0, 41 },
	{ "x86_64", "XOP", 0, 43 },
	{ "x86_64", "MOVBE", 0, 54 },
	{ "x86_64", "AESNI", 0, 57 },
	{ "x86_64", "OSXSAVE", 0, 59 },
	{ "x86_64", "AVX", 0, 60 },
	{ "x86_64", "RDRAND", 0, 62 },
	{ "x86_64", "BMI1", 1, 3 },
	{ "x86_64", "AVX2", 1, 5 },
	{ "x86_64", "BMI2", 1, 8 },
	{ "x86_64", "AVX512F", 1, 16 },
	{ "x86_64", "AVX512DQ", 1, 17 },
	{ "x86_64", "RDSEED", 1, 18 },
	{ "x86_64", "ADX", 1, 19 },
	{ "x86_64", "AVX512IFMA", 1, 21 },
	{ "x86_64", "SHA", 1, 29 },
	{ "x86_64", "AVX512BW", 1, 30 },
	{ "x86_64", "AVX512VL", 1, 31 },
	{ "x86_64", "VAES", 1, 41 },
	{ "x86_64", "VPCLMULQDQ", 1, 42 },
	{ NULL, NULL, 0, 0 },
};

/*
 * The bit called name (the first n bytes of it) of arch (NULL: any
 * architecture), or NULL.
 */
static inline const struct openssl_cap_bit *
openssl_cap_find(const char *arch, const char *name, size_t n)
{
	const struct openssl_cap_bit *b;

	for (b = openssl_cap_bits; b->name != NULL; b++)
		if ((arch == NULL || strcmp(b->arch, arch) == 0) &&
		    strlen(b->name) == n && strncmp(b->name, name, n) == 0)
			return b;
	return NULL;
}

#endif

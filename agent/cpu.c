/*
 * CPU feature detection.  Tests for features, not OS names: cpuid/xgetbv
 * where the compiler targets x86-64, getauxval where the C library has it,
 * sysctlbyname on Apple.  A variant whose bits are missing is skipped.
 */
#include "cpu.h"
#include "kernel.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#if defined(__x86_64__)
static unsigned
detect(void)
{
	unsigned a, b, c, d, bits = 0;
	unsigned long long xcr0 = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	if (c & (1u << 25))
		bits |= KF_X86_AES;
	/* OSXSAVE: the OS saves the vector registers we are about to use. */
	if (c & (1u << 27)) {
		unsigned lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = ((unsigned long long)hi << 32) | lo;
	}
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	if ((xcr0 & 0x6) == 0x6 && (b & (1u << 5)))
		bits |= KF_X86_AVX2;
	/* AVX-512 F (b16) and VL (b31), with opmask/ZMM state enabled. */
	if ((xcr0 & 0xe6) == 0xe6 && (b & (1u << 16)) && (b & (1u << 31)))
		bits |= KF_X86_AVX512;
	if (b & (1u << 8))
		bits |= KF_X86_BMI2;
	/* AVX-512 DQ (b17): 64-bit integer <-> double conversions. */
	if ((bits & KF_X86_AVX512) && (b & (1u << 17)))
		bits |= KF_X86_AVX512DQ;
	/* SHA512 instructions: leaf 7 subleaf 1, eax bit 0; they use ymm. */
	if ((xcr0 & 0x6) == 0x6 && __get_cpuid_count(7, 1, &a, &b, &c, &d) &&
	    (a & 1u))
		bits |= KF_X86_SHA512;
	return bits;
}
#elif defined(__aarch64__) && defined(__linux__)
static unsigned
detect(void)
{
	unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
	unsigned bits = 0;

	/* HWCAP_AES = bit 3, HWCAP_SHA3 = bit 17, HWCAP_SHA512 = bit 21,
	 * HWCAP_SVE = bit 22 */
	if (hw & (1UL << 3))
		bits |= KF_ARM_AES;
	if (hw & (1UL << 17))
		bits |= KF_ARM_SHA3;
	if (hw & (1UL << 21))
		bits |= KF_ARM_SHA512;
	if (hw & (1UL << 22))
		bits |= KF_ARM_SVE;
	/* HWCAP2_SVE2 = bit 1, HWCAP2_SVEBITPERM = bit 4 */
	if ((hw2 & (1UL << 1)) && (hw2 & (1UL << 4)))
		bits |= KF_ARM_SVE2_BITPERM;
	return bits;
}
#elif defined(__aarch64__) && defined(__APPLE__)
static int
sysctl_flag(const char *name)
{
	int v = 0;
	size_t len = sizeof v;

	return sysctlbyname(name, &v, &len, NULL, 0) == 0 && v != 0;
}

static unsigned
detect(void)
{
	unsigned bits = 0;

	if (sysctl_flag("hw.optional.arm.FEAT_AES"))
		bits |= KF_ARM_AES;
	if (sysctl_flag("hw.optional.arm.FEAT_SHA3"))
		bits |= KF_ARM_SHA3;
	if (sysctl_flag("hw.optional.arm.FEAT_SHA512"))
		bits |= KF_ARM_SHA512;
	return bits;
}
#else
static unsigned
detect(void)
{
	return 0;
}
#endif

#if defined(__aarch64__) && defined(__linux__)
/* Linux's names of the AT_HWCAP and AT_HWCAP2 bits (asm/hwcap.h), as its
 * /proc/cpuinfo "Features" line spells them; NULL: a bit not named here. */
static const char *const hwcap_names[] = {
	"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32",
	"atomics", "fphp", "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma",
	"lrcpc", "dcpop", "sha3", "sm3", "sm4", "asimddp", "sha512", "sve",
	"asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca",
	"pacg",
};
static const char *const hwcap2_names[] = {
	"dcpodp", "sve2", "sveaes", "svepmull", "svebitperm", "svesha3",
	"svesm4", "flagm2", "frint", "svei8mm", "svef32mm", "svef64mm",
	"svebf16", "i8mm", "bf16", "dgh", "rng", "bti", "mte", "ecv", "afp",
	"rpres", "mte3", "sme", "sme_i16i64", "sme_f64f64", "sme_i8i32",
	"sme_f16f32", "sme_b16f32", "sme_f32f32", "sme_fa64",
};

/* The names of mask's bits (else "hwcapN_bitB"), appended to buf. */
static void
add_names(char *buf, size_t len, size_t *used, unsigned long mask,
    const char *const *names, size_t nnames, const char *prefix)
{
	unsigned b;
	int n;

	for (b = 0; b < 8 * sizeof mask; b++) {
		if (!(mask & (1UL << b)))
			continue;
		if (b < nnames && names[b] != NULL)
			n = snprintf(buf + *used, len - *used, "%s%s",
			    *used ? " " : "", names[b]);
		else
			n = snprintf(buf + *used, len - *used, "%s%s_bit%u",
			    *used ? " " : "", prefix, b);
		if (n < 0 || (size_t)n >= len - *used)
			return;
		*used += (size_t)n;
	}
}

int
cpu_hwcap_names(char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	add_names(buf, len, &used, getauxval(AT_HWCAP), hwcap_names,
	    sizeof hwcap_names / sizeof hwcap_names[0], "hwcap");
	add_names(buf, len, &used, getauxval(AT_HWCAP2), hwcap2_names,
	    sizeof hwcap2_names / sizeof hwcap2_names[0], "hwcap2");
	return 0;
}
#else
int
cpu_hwcap_names(char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	return -1;
}
#endif

unsigned
cpu_features(void)
{
	static int done;
	static unsigned bits;

	if (!done) {
		bits = detect();
		done = 1;
	}
	return bits;
}

int
cpu_signature(char *buf, size_t len)
{
#if defined(__x86_64__)
	unsigned a, b, c, d, family, model;

	if (len > 0)
		buf[0] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return -1;
	/* The SDM's and AMD's rule: the extended fields count from 0xf. */
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	snprintf(buf, len, "family %u model %u stepping %u", family, model,
	    a & 0xf);
	return 0;
#else
	if (len > 0)
		buf[0] = '\0';
	return -1;
#endif
}

void
cpu_feature_names(unsigned bits, char *buf, size_t len)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ KF_X86_AVX2, "avx2" },
		{ KF_X86_AVX512, "avx512f+vl" },
		{ KF_X86_BMI2, "bmi2" },
		{ KF_X86_AVX512DQ, "avx512dq" },
		{ KF_X86_SHA512, "sha512ni" },
		{ KF_X86_AES, "aes-ni" },
		{ KF_ARM_SHA3, "sha3" },
		{ KF_ARM_SHA512, "sha512" },
		{ KF_ARM_SVE, "sve" },
		{ KF_ARM_SVE2_BITPERM, "sve2-bitperm" },
		{ KF_ARM_AES, "aes" },
	};
	size_t i, used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		int n;

		if (!(bits & names[i].bit))
			continue;
		n = snprintf(buf + used, len - used, "%s%s",
		    used ? "," : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

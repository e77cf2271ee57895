/*
 * kernels/kernel.h: the one interface every study variant implements.
 *
 * A study is a sequential-work function x = F(x) iterated from a fixed seed
 * (sha3: SHA3-256 from 32 zero bytes).  A variant is one implementation of
 * that study, kept in its own folder kernels/<study>/<variant>/ with:
 *
 *   kernel.c (or kernel.S)  the code; it exports exactly one
 *                           `const struct kernel kernel_<study>_<variant>`
 *                           (dashes become underscores) and registers it by
 *                           adding one row to agent/registry.c
 *   flags                   optional, one line: extra compiler flags for
 *                           this variant's files only, e.g. "-mavx512f".
 *                           Flags never leak into other files.
 *   arch                    optional, one line: the `cc -dumpmachine`
 *                           architecture prefix the folder builds on
 *                           ("x86_64", "aarch64"); absent means portable.
 *
 * Variants that need a CPU feature declare it in `features`; the agent checks
 * it at run time (cpuid, getauxval, sysctl) and records the variant as skipped
 * with the reason instead of calling it.
 *
 * Ownership: every pointer in a struct kernel is static and owned by the
 * kernel; nothing is freed by callers.  A context returned by setup() is owned
 * by the caller and released with teardown().
 */
#ifndef SEQORCH_KERNEL_H
#define SEQORCH_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/* Largest chained value of any study, in bytes (sha512: 64). */
#define KERNEL_MAX_STATE 64

/* CPU features a variant may require; see agent/cpu.c for detection. */
enum kernel_feature {
	KF_X86_AVX2 = 1u << 0,
	KF_X86_AVX512 = 1u << 1,	/* AVX-512 F + VL (ternlog, prolq) */
	KF_X86_BMI2 = 1u << 2,
	KF_ARM_SHA3 = 1u << 8,		/* ARMv8.2 EOR3/RAX1/XAR/BCAX */
	KF_ARM_SHA512 = 1u << 9,
	KF_ARM_SVE = 1u << 10,
};

/* One study: its semantics are shared by all of its variants. */
struct study {
	const char *name;		/* "sha3" */
	const char *description;	/* one line for `seqorch studies` */
	const char *unit;		/* what one step is: "hash" */
	size_t state_len;		/* bytes in x (sha3: 32) */
	/* Known answer for kernel->hash: message and expected digest. */
	const char *kat_msg;
	const char *kat_hex;
};

struct kernel {
	const char *study;		/* must match a struct study name */
	const char *variant;		/* "c-fused"; [a-z0-9-], unique per study */
	const char *description;	/* one line */
	unsigned features;		/* KF_* bits required, 0 for none */
	/*
	 * Instructions the built binary must contain in `symbol` (NULL
	 * terminated list, or NULL): checked by disassembly at build time.
	 */
	const char *const *insns;
	const char *symbol;

	/*
	 * Optional setup outside the timer (allocate a library context...).
	 * Returns 0 and sets *ctx (possibly NULL), or -1 if the variant cannot
	 * run here; then it is recorded as skipped.
	 */
	int (*setup)(void **ctx);
	void (*teardown)(void *ctx);

	/*
	 * Known-answer hook: hash a short message (under one block) with this
	 * variant's own permutation/compression into out (study digest size).
	 * Returns 0 or -1.
	 */
	int (*hash)(void *ctx, const uint8_t *msg, size_t len, uint8_t *out);

	/*
	 * The timed work: x = F(x), `steps` times, in place.  x holds
	 * study->state_len bytes.  Returns 0 or -1 on a library failure.
	 */
	int (*chain)(void *ctx, uint8_t *x, uint64_t steps);
};

#endif

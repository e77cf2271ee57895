/*
 * kernels/kernel.h: the one interface shared by every study, every variant,
 * the agent and the coordinator.
 *
 * A study is a sequential-work function x = F(x) iterated `steps` times from
 * a fixed seed (sha3: SHA3-256 from 32 zero bytes).  It lives in one folder:
 *
 *   kernels/<study>/study.c      const struct study STUDY_THIS = { ... }:
 *                                unit, seed, default steps, known answer
 *                                (shared by the agent and the coordinator)
 *   kernels/<study>/reference.c  const struct study_reference REFERENCE_THIS:
 *                                the coordinator's independent chain, plain
 *                                code that shares nothing with the variants
 *   kernels/<study>/<variant>/   one folder per variant:
 *       kernel.c (and/or .S)     const struct kernel KERNEL_THIS = { ... }
 *       flags                    optional, one line: extra compiler flags
 *                                for this folder's files only ("-mavx512f");
 *                                flags never leak into other files
 *       arch                     optional, one line: the architecture the
 *                                folder builds on ("x86_64", "aarch64"), as
 *                                `sh kernels/registry.sh arch TARGET` names
 *                                a `cc -dumpmachine` target (Apple clang's
 *                                "arm64-apple-darwin..." is aarch64);
 *                                absent: portable
 *       libs                     optional, one line: the libraries the
 *                                folder's files need ("-lcrypto"); each
 *                                -lNAME has its probe, kernels/libs/NAME.c,
 *                                which agent/build.sh compiles and links
 *                                with the host's compiler and flags: when
 *                                it fails, the variant is left out and
 *                                reported skipped with the reason.
 *                                registry.sh's nolibs leaves such variants
 *                                out altogether (the static aarch64 check
 *                                harness)
 *       needs                    optional, one line: the name of a study
 *                                artifact marked "generate" whose generated
 *                                sources the folder's files include (sha3's
 *                                openssl-*: "openssl"); built only when the
 *                                coordinator had them, with -I to them, and
 *                                recorded skipped with the reason otherwise
 *
 * A study that builds on upstream code adds, all optional:
 *
 *   kernels/<study>/artifacts    upstream files, one a line: name, SHA-256,
 *                                size, default URL (tab or space separated);
 *                                the coordinator fetches each into its cache
 *                                (orchestrator/http.c) and uploads it to
 *                                WORKDIR/artifacts/<sha256> on each host;
 *                                with a fifth field "generate", it is not
 *                                uploaded but read on the coordinator by
 *                                kernels/<study>/generate.pl (perl: TARBALL
 *                                OUTDIR, orchestrator/generate.c), whose
 *                                output is uploaded for the variants that
 *                                need it, its OUTDIR/meta recorded with the
 *                                build; a run fetches it only when
 *                                --variants names such a variant
 *   kernels/<study>/prebuild.sh  run on the host by agent/build.sh before
 *                                the variants are compiled: sh prebuild.sh
 *                                OUT CC CFLAGS ARTIFACTS TARGETING; leaves
 *                                OUT/libs (link flags added to the agent's
 *                                link), OUT/commands and OUT/meta (key=value
 *                                facts, stored as builds.extra); its variants
 *                                are only built when it ran
 *   kernels/<study>/targetings   one line, e.g. "default native": each
 *                                compiler builds the agent once per
 *                                targeting for this study ("native" adds
 *                                -march=native / -mcpu=native), each a
 *                                build row of its own
 *   kernels/<study>/NAME.cpp     shipped with the sources, for prebuild.sh
 *
 * and is registered by one line, its name, in kernels/studies.txt (the
 * order in which studies are listed and run).  kernels/registry.sh derives
 * everything else from the folders: the manifest (study, variant, arch,
 * flags), the tables of the agent and the coordinator, and each file's
 * compiler flags, among them the -D that names KERNEL_THIS, STUDY_THIS or
 * REFERENCE_THIS after the folder (kernel_<study>_<variant>, dashes become
 * underscores).  A file therefore never repeats its study's or variant's
 * name.
 *
 * Variants that need a CPU feature declare it in `features`; the agent checks
 * it at run time (cpuid, getauxval, sysctl) and records the variant as skipped
 * with the reason instead of calling it.
 *
 * Ownership: every pointer in these structs is static and owned by the
 * defining file; nothing is freed by callers.  A context returned by setup()
 * is owned by the caller and released with teardown().
 */
#ifndef SEQORCH_KERNEL_H
#define SEQORCH_KERNEL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the self-test chain every variant runs before the window; the
 * coordinator checks its digest against its own reference.
 */
#define SEQORCH_SELFTEST_STEPS 1000

/*
 * Named metrics a kernel may report for its last chain (struct kernel's
 * metrics hook): at most this many, names at most KERNEL_METRIC_NAME bytes
 * of [a-z0-9_].
 */
#define KERNEL_MAX_METRICS 16
#define KERNEL_METRIC_NAME 32

/* Largest chained value of any study, in bytes (sha512: 64). */
#define KERNEL_MAX_STATE 64

/*
 * The message-length chain (`run --msg-len L`, seed 003's eBASH table):
 * for a study whose step hashes a message (its variants have a hash
 * hook), each step hashes one L-byte message, the previous digest followed
 * by zero bytes up to L, standard padding after it, all of it absorbed:
 * x = H(x || 0^(L - state_len)).  Still strictly sequential, since every
 * message begins with the digest before it.  The agent runs it through
 * the variant's own hash hook, so no variant has code of its own for it;
 * the coordinator checks it with its reference's msg_chain.  L is from
 * state_len to KERNEL_MAX_MSG bytes.
 */
#define KERNEL_MAX_MSG 65536

/* CPU features a variant may require; see agent/cpu.c for detection. */
enum kernel_feature {
	KF_X86_AVX2 = 1u << 0,
	KF_X86_AVX512 = 1u << 1,	/* AVX-512 F + VL (ternlog, prolq) */
	KF_X86_BMI2 = 1u << 2,
	KF_X86_AVX512DQ = 1u << 3,	/* 64-bit integer <-> double */
	KF_X86_SHA512 = 1u << 4,	/* VSHA512RNDS2 (Arrow Lake and later) */
	KF_X86_AES = 1u << 5,		/* AES-NI */
	KF_ARM_SHA3 = 1u << 8,		/* ARMv8.2 EOR3/RAX1/XAR/BCAX */
	KF_ARM_SHA512 = 1u << 9,
	KF_ARM_SVE = 1u << 10,
	KF_ARM_SVE2_BITPERM = 1u << 11,	/* BEXT/BDEP/BGRP */
	KF_ARM_AES = 1u << 12,		/* AESE/AESD/AESMC */
};

/* One study: its semantics are shared by all of its variants. */
struct study {
	const char *description;	/* one line for `seqorch studies` */
	const char *unit;		/* what one step is: "hash" */
	const char *unit_plural;	/* "hashes" */
	size_t state_len;		/* bytes in x (sha3: 32) */
	const char *seed_hex;		/* default seed, state_len bytes */
	uint64_t default_steps;		/* per sample: the seeds' protocol */
	const char *control;		/* variant the others are compared with */
	/*
	 * Cycles per step on the critical path of one step, for latency-bound
	 * studies (docs/studies.md derives them), on x86-64 and on AArch64;
	 * 0 where not stated.  `make bench` prints measured cycles beside it.
	 */
	double floor_x86_64;
	double floor_aarch64;
	/*
	 * Optional known answer for kernel->hash: a short message and its
	 * digest (state_len bytes of hex).  NULL for studies whose step is
	 * not a message hash; their variants then leave hash NULL too.
	 */
	const char *kat_msg;
	const char *kat_hex;
	/*
	 * What `hosts check` compiles and runs on a host to see that the
	 * study can build there, beyond a C compiler (the libraries of its
	 * variants' libs files are probed by kernels/registry.sh libs):
	 * a C program that exits 0 when usable, else prints what is missing,
	 * one item a line (or NULL: nothing more), its link flags, and what
	 * to tell the user when the probe itself does not build.
	 */
	const char *probe_src;
	const char *probe_libs;
	const char *requires;
	/*
	 * Steps of the self-test chain every variant runs before the window
	 * (and the coordinator checks); 0 means SEQORCH_SELFTEST_STEPS.  A
	 * study whose step takes milliseconds (randomx) states fewer.
	 */
	uint64_t selftest_steps;
	/*
	 * The most steps a sample may have (`run --steps`, and what `verify`
	 * recomputes for a bundle's run): about an hour of the coordinator's
	 * reference chain on one core.  0 means STUDY_MAX_STEPS.
	 */
	uint64_t max_steps;
};

/* A study's self-test chain length. */
#define STUDY_SELFTEST_STEPS(s) \
	((s)->selftest_steps ? (s)->selftest_steps : SEQORCH_SELFTEST_STEPS)

/* One named value of a kernel's last chain (see struct kernel). */
struct kernel_metric {
	const char *name;		/* static */
	double value;
};

/*
 * The coordinator's independent reference for a study (reference.c; never
 * built into the agent).  chain computes x = F(x) `steps` times in place on
 * the study's state_len bytes, polling *stop (may be NULL) now and then.
 * Returns 0, or -1 with a short reason in why (whylen bytes, may be
 * truncated): -1 also when *stop was set.
 */
struct study_reference {
	const char *method;		/* "OpenSSL EVP_sha3_256", shown/stored */
	int (*chain)(uint8_t *x, uint64_t steps, volatile sig_atomic_t *stop,
	    char *why, size_t whylen);
	/*
	 * The message-length chain (KERNEL_MAX_MSG above): x = H(x ||
	 * zeros) with msg_len-byte messages, the same contract as chain;
	 * NULL for a study whose step is not a message hash.
	 */
	int (*msg_chain)(uint8_t *x, uint64_t steps, size_t msg_len,
	    volatile sig_atomic_t *stop, char *why, size_t whylen);
};

struct kernel {
	const char *description;	/* one line */
	unsigned features;		/* KF_* bits required, 0 for none */
	/*
	 * Instructions the built binary must contain in `symbol` (NULL
	 * terminated list, or NULL): checked by disassembly at build time.
	 * forbidden: instructions that must not appear there (a reassociated
	 * or shortened chain shows as one), or NULL.
	 */
	const char *const *insns;
	const char *const *forbidden;
	const char *symbol;

	/*
	 * Optional setup outside the timer (allocate a library context...).
	 * Returns 0 and sets *ctx (possibly NULL), or -1 if the variant cannot
	 * run here; then it is recorded as skipped.
	 */
	int (*setup)(void **ctx);
	void (*teardown)(void *ctx);

	/*
	 * Known-answer hook, for studies with a kat_msg (else NULL): hash a
	 * message of any length up to KERNEL_MAX_MSG with this variant's own
	 * permutation/compression into out (state_len bytes; out may be
	 * msg).  0 or -1.  The agent's message-length chain is this hook
	 * called once a step (KERNEL_MAX_MSG above).
	 */
	int (*hash)(void *ctx, const uint8_t *msg, size_t len, uint8_t *out);

	/*
	 * The timed work: x = F(x), `steps` times, in place.  x holds
	 * study->state_len bytes.  Returns 0 or -1 on a library failure.
	 */
	int (*chain)(void *ctx, uint8_t *x, uint64_t steps);

	/*
	 * Optional: named metrics of the last chain() call, at most max of
	 * them into m; returns how many.  Names starting with "phase_" are
	 * disjoint parts of the chain's time in nanoseconds, measured inside
	 * it; the agent adds "phase_other", the timed ns minus their sum, so
	 * that a sample's phases add up to what was measured.  Called outside
	 * the timer.
	 */
	size_t (*metrics)(void *ctx, struct kernel_metric *m, size_t max);

	/*
	 * Optional: after setup, a short warning about how this variant runs
	 * here ("selects software AES on a CPU with hardware AES"), or NULL.
	 * The agent puts it in the variant record; the coordinator stores it
	 * as a warning event of the build.
	 */
	const char *(*warning)(void *ctx);
};

/*
 * The names registry.sh gives the one definition in each file; see above.
 * Building a file outside registry.sh's flags is an error here, not a
 * silently unnamed symbol.
 */
#if defined(SEQORCH_KERNEL_SYM)
#define KERNEL_THIS SEQORCH_KERNEL_SYM
#endif
#if defined(SEQORCH_STUDY_SYM)
#define STUDY_THIS SEQORCH_STUDY_SYM
#define REFERENCE_THIS SEQORCH_REFERENCE_SYM
#endif

#endif

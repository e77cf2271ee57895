/*
 * kernels/randomx/phased.h: RandomX hashing with its phases timed, on the
 * library prebuild.sh builds from the fetched upstream source (C ABI over
 * phased.cpp, which is compiled against that source's own VM classes).
 *
 * rxp_create returns a context owned by the caller, freed by rxp_destroy.
 */
#ifndef SEQORCH_RANDOMX_PHASED_H
#define SEQORCH_RANDOMX_PHASED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rxp;

/* Indices of rxp_phases' array: nanoseconds spent in each phase. */
enum {
	RXP_PROGGEN,	/* program generation (generateProgram, initialize) */
	RXP_COMPILE,	/* JIT compilation of the program */
	RXP_EXECUTE,	/* running the generated code */
	RXP_MPROTECT,	/* JIT page permission changes (W^X, secure JIT):
			 * mprotect, on Apple pthread_jit_write_protect_np */
	RXP_NPHASES
};

/*
 * A JIT VM in secure (W^X) mode keyed with key: light mode (256 MiB
 * cache) or, with full, the 2 GiB dataset initialised on every core.
 * Returns 0, or -1 with a reason in why.
 */
int rxp_create(int full, const void *key, size_t keylen, struct rxp **out,
    char *why, size_t whylen);
void rxp_destroy(struct rxp *r);

/* One RandomX hash of in into out (32 bytes). */
void rxp_hash(struct rxp *r, const void *in, size_t len, void *out);

/* The phases' ns since the last call (then zeroed). */
void rxp_phases(struct rxp *r, uint64_t ns[RXP_NPHASES]);

/* Whether the VM runs hardware AES (RANDOMX_FLAG_HARD_AES was selected). */
int rxp_hard_aes(const struct rxp *r);

#ifdef __cplusplus
}
#endif

#endif

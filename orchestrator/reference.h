/*
 * Independent reference digests: the coordinator recomputes each study's
 * chain with the study's own reference (kernels/<study>/reference.c, code
 * that shares nothing with the agent's variants) and caches the result per
 * (study, seed, steps) in results.db.
 */
#ifndef SEQORCH_REFERENCE_H
#define SEQORCH_REFERENCE_H

#include "db.h"
#include "util.h"

#include <signal.h>
#include <stdint.h>

/*
 * The hex digest after `steps` steps from seed_hex, of msg_len-byte
 * messages (kernel.h; 0: the study's own chain), from the cache or
 * computed now (then stored).  digest must hold 129 bytes.  stop, if set by
 * a signal during a long computation, makes it return SO_EINTR.  An unknown
 * study is SO_ENOTFOUND, a seed of the wrong size SO_EINVAL.
 */
int reference_get(struct db *db, const char *study, const char *seed_hex,
    uint64_t steps, uint64_t msg_len, char *digest,
    volatile sig_atomic_t *stop, struct so_err *err);

#endif

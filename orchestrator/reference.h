/*
 * Independent reference digests: the coordinator recomputes each study's
 * chain with OpenSSL's EVP API (not the agent's kernels) and caches the
 * result per (study, seed, steps) in results.db.
 */
#ifndef SEQORCH_REFERENCE_H
#define SEQORCH_REFERENCE_H

#include "db.h"
#include "util.h"

#include <signal.h>
#include <stdint.h>

/* Does this coordinator have a reference for study? */
int reference_known(const char *study);

/*
 * The hex digest after `steps` steps from seed_hex, from the cache or
 * computed now (then stored).  digest must hold 129 bytes.  stop, if set by
 * a signal during a long computation, makes it return SO_EINTR.
 */
int reference_get(struct db *db, const char *study, const char *seed_hex,
    uint64_t steps, char *digest, volatile sig_atomic_t *stop,
    struct so_err *err);

/* Default seed of study as hex (all zeros of its state size); static. */
const char *reference_default_seed(const char *study);

#endif

/*
 * The fan-out over hosts, shared by `deploy`, `hosts check` and `run`:
 * one job per host, at most a given number at once, each in its own
 * thread.  The caller keeps each job's outcome in its own per-host state
 * (indexed by i); the pool owns nothing the caller passes it.
 */
#ifndef SEQORCH_POOL_H
#define SEQORCH_POOL_H

#include <stddef.h>

/*
 * Call fn(arg, i) for every i in [0, n), in at most parallel threads at
 * once (each thread takes the next i until none is left; parallel < 1
 * counts as 1), and return when every call has returned.  When not one
 * thread can be started, the calling thread does all the work itself, so
 * a job is never skipped.
 */
void pool_run(size_t n, int parallel, void (*fn)(void *arg, size_t i),
    void *arg);

#endif

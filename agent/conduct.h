/*
 * --conduct: every build of the host in one alternating order.  The
 * conductor starts each --build's agent with --serve, relays its records
 * (each run of them after a build record) and asks it for its samples,
 * inside one window that the conductor takes (lock, preflight, window
 * records).
 *
 * Ownership: the build agents are this module's children; conduct reaps
 * every one of them before it returns (and TERM stops them first).
 */
#ifndef SEQORCH_AGENT_CONDUCT_H
#define SEQORCH_AGENT_CONDUCT_H

#include "kernel.h"
#include "opts.h"

/*
 * Run the window of o->builds for study (st, its name), the conductor's
 * hello already written; returns the exit code: AG_OK when any sample
 * was taken.  o->seed and o->steps are the study's defaults unless given.
 */
int conduct(struct opts *o, const struct study *st, const char *study);

#endif

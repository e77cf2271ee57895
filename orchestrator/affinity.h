/*
 * Keeping the coordinator off the agent's CPU.  For a local host the
 * coordinator and the agent share the machine: the coordinator's threads
 * wake for every record they store, and would otherwise be scheduled on
 * the very CPU whose timed loop they interrupt.
 */
#ifndef SEQORCH_AFFINITY_H
#define SEQORCH_AFFINITY_H

#include "util.h"

/*
 * Remove cpu from the affinity of every thread of this process (those
 * started later inherit it from their creator).  Returns 0 and the CPUs
 * left in left (a list like "0,2-3"), SO_EINVAL when cpu is the only one
 * a thread may use (then nothing is changed for it), or SO_EIO when the
 * OS has no hard affinity or refuses.
 */
int affinity_avoid(int cpu, char *left, size_t leftlen, struct so_err *err);

#endif

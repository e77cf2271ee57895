/*
 * cpu = "auto": which CPU the agent pins itself to, and why
 * (docs/measurement.md).  Linux only reads sysfs (under sysfs_root());
 * elsewhere there is no hard pin to choose.
 */
#ifndef SEQORCH_AGENT_TOPOLOGY_H
#define SEQORCH_AGENT_TOPOLOGY_H

#include <stddef.h>

#define TOPOLOGY_WHY_LEN 512

/*
 * Pick a CPU: not CPU 0 (it takes most interrupts), on hybrid CPUs a
 * performance core (cpu/types, the cpu_core PMU's cpus, or the largest
 * cpu_capacity), preferring CPUs that are idle with an idle SMT sibling,
 * then CPUs in isolcpus, then the least busy, then the highest number.
 * busy is per CPU as from sysfs_busy (-1: unknown).  Returns the CPU with
 * the reason in why, or -1 with why saying what could not be read.
 */
int topology_pick(const double *busy, char *why, size_t whylen);

/*
 * --cpu auto: watch the CPUs for a quarter of a second and pick one as
 * topology_pick does.  Where there is no hard pin (macOS) -1 is returned
 * with that in why; the caller then sets the QoS class (macos_qos), as
 * for every agent that is not pinned.
 */
int topology_auto(char *why, size_t whylen);

#endif

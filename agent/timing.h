/* Monotonic raw clock and the dependent-add frequency calibration. */
#ifndef SEQORCH_AGENT_TIMING_H
#define SEQORCH_AGENT_TIMING_H

#include <stddef.h>
#include <stdint.h>

/* Nanoseconds from a raw monotonic clock (not slewed by NTP). */
uint64_t timing_now_ns(void);

/* Name of the clock timing_now_ns reads, for the facts record. */
const char *timing_clock_name(void);

/*
 * CPU time of the calling thread in nanoseconds (user and system) into
 * *ns: 0, or -1 where the OS cannot say.
 */
int timing_thread_cpu_ns(uint64_t *ns);

/*
 * Time the calling thread has waited, runnable, for a cpu, in nanoseconds
 * (Linux's schedstat run_delay) into *ns: 0, or -1 where the OS cannot
 * say.  A thread on a crowded cpu waits; its clock did not jump.
 */
int timing_thread_wait_ns(uint64_t *ns);

/*
 * Did the clock of timing_now_ns jump between t0 and t1, over which the
 * calling thread ran cpu_ns of CPU time and waited wait_ns for a cpu
 * (both read just inside t0 and t1; wait_ns 0 where unknown)?  The thread
 * cannot run longer than the clock advanced, and a clock that advanced
 * over ten seconds more than twice what the thread ran and waited jumped
 * forward (or the process was stopped meanwhile).  Returns 1 and says so
 * in why (len bytes), else 0.
 */
int timing_jumped(uint64_t t0, uint64_t t1, uint64_t cpu_ns,
    uint64_t wait_ns, char *why, size_t len);

/*
 * Estimate the core clock in MHz by timing a chain of dependent adds (one
 * cycle each on every core we target).  Takes about 5 ms.  Returns 0 when
 * this architecture has no calibration loop.
 */
double timing_calibrate_mhz(void);

#endif

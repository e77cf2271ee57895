/* Monotonic raw clock and the dependent-add frequency calibration. */
#ifndef SEQORCH_AGENT_TIMING_H
#define SEQORCH_AGENT_TIMING_H

#include <stdint.h>

/* Nanoseconds from a raw monotonic clock (not slewed by NTP). */
uint64_t timing_now_ns(void);

/* Name of the clock timing_now_ns reads, for the facts record. */
const char *timing_clock_name(void);

/*
 * Estimate the core clock in MHz by timing a chain of dependent adds (one
 * cycle each on every core we target).  Takes about 5 ms.  Returns 0 when
 * this architecture has no calibration loop.
 */
double timing_calibrate_mhz(void);

#endif

/*
 * Hardware counters around each sample (docs/measurement.md): user-space
 * cycles and instructions of this thread, from perf_event_open, enabled
 * just before the timed call and read just after it, so the timed loop
 * itself runs no counter code.  Where the counters cannot be had, why.
 */
#ifndef SEQORCH_AGENT_PERF_H
#define SEQORCH_AGENT_PERF_H

#include <stddef.h>
#include <stdint.h>

struct perf {
	int fd_cycles, fd_insns;	/* -1 when closed */
	const char *source;	/* "pmu", "test-seam", or "none" */
	char why[256];		/* why not, when source is "none" */
};

/*
 * Open the counters for the calling thread on whatever CPU it runs.
 * Returns 0 with p->source "pmu"; or -1 with p->source "none" and the
 * reason in p->why: no PMU (a VM without a virtual one), refused
 * (kernel.perf_event_paranoid, a seccomp filter), or no perf_event_open
 * on this OS.
 *
 * The test seam: with SEQORCH_TEST_COUNTERS=software the same path runs
 * on the kernel's software clocks (task-clock as "cycles", cpu-clock as
 * "instructions", both in ns), with p->source "test-seam", so that
 * machines without a PMU can test it.  Outside pytest
 * (PYTEST_CURRENT_TEST unset) the seam refuses: returns -2 with why.
 */
int perf_open(struct perf *p);

/* Reset and enable both counters; nothing when closed. */
void perf_start(struct perf *p);

/*
 * Disable and read.  Returns 0 with the counts, or -1 when closed, when
 * the read fails or when the counters did not run the whole time (the
 * kernel multiplexed them): such counts would be scaled guesses.
 */
int perf_stop(struct perf *p, uint64_t *cycles, uint64_t *insns);

void perf_close(struct perf *p);

#endif

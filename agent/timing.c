/* Raw monotonic time and a dependent-add loop to estimate cycles. */
#include "timing.h"

#include <stdio.h>
#include <time.h>

uint64_t
timing_now_ns(void)
{
#if defined(__APPLE__)
	return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

const char *
timing_clock_name(void)
{
#if defined(__APPLE__)
	return "CLOCK_UPTIME_RAW";
#else
	return "CLOCK_MONOTONIC_RAW";
#endif
}

int
timing_thread_cpu_ns(uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

int
timing_thread_wait_ns(uint64_t *ns)
{
#if defined(__linux__)
	/* One line: "run_ns wait_ns timeslices". */
	unsigned long long run, wait;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int rc = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
		*ns = wait;
		rc = 0;
	}
	fclose(f);
	return rc;
#else
	(void)ns;
	return -1;
#endif
}

/* Slack for the two clocks' reads and rates: 1% and 1 ms. */
#define JUMP_SLACK_NS(ns) ((ns) / 100 + 1000000u)
#define JUMP_FORWARD_NS 10000000000u

int
timing_jumped(uint64_t t0, uint64_t t1, uint64_t cpu_ns, uint64_t wait_ns,
    char *why, size_t len)
{
	uint64_t d = t1 - t0, busy = cpu_ns + wait_ns;

	if (t1 < t0)
		snprintf(why, len, "it went back %.3f s",
		    (double)(t0 - t1) / 1e9);
	else if (d + JUMP_SLACK_NS(cpu_ns) < cpu_ns)
		snprintf(why, len, "it advanced %.6f s while the thread ran "
		    "%.6f s of cpu", (double)d / 1e9, (double)cpu_ns / 1e9);
	else if (d / 2 > busy && d - busy > JUMP_FORWARD_NS)
		snprintf(why, len, "it advanced %.3f s while the thread ran "
		    "only %.3f s of cpu and waited %.3f s for one (or the agent "
		    "was stopped)", (double)d / 1e9, (double)cpu_ns / 1e9,
		    (double)wait_ns / 1e9);
	else
		return 0;
	return 1;
}

#define CALIB_ITERS 250000	/* x 20 dependent adds: ~5 ms at 1 GHz */

/*
 * Register-register adds: some cores fold chains of add-immediate at
 * rename, which would make the loop look faster than one cycle per add.
 */
#if defined(__x86_64__)
#define ADD1 "add %1, %0\n\t"
#elif defined(__aarch64__)
#define ADD1 "add %0, %0, %1\n\t"
#endif

#ifdef ADD1
#define ADD5 ADD1 ADD1 ADD1 ADD1 ADD1
static uint64_t
add_chain(uint64_t iters, uint64_t one)
{
	uint64_t x = 0, i;

	/* 20 adds that each wait on the previous one: 20 cycles/iteration. */
	for (i = 0; i < iters; i++)
		__asm__ volatile(ADD5 ADD5 ADD5 ADD5 : "+r"(x) : "r"(one));
	return x;
}

double
timing_calibrate_mhz(void)
{
	uint64_t t0, t1, best = UINT64_MAX;
	int rep;

	/* Best of three: interruptions only ever make a pass slower. */
	for (rep = 0; rep < 3; rep++) {
		t0 = timing_now_ns();
		add_chain(CALIB_ITERS, 1);
		t1 = timing_now_ns();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	if (best == 0)
		return 0;
	return (double)CALIB_ITERS * 20.0 * 1000.0 / (double)best;
}
#else
double
timing_calibrate_mhz(void)
{
	return 0;
}
#endif

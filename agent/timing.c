/* Raw monotonic time and a dependent-add loop to estimate cycles. */
#include "timing.h"

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

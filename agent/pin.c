/*
 * CPU pinning.  Linux has sched_setaffinity; macOS has only affinity
 * hints, so there we report that no hard pin exists (seed 000: "the Mac is
 * one thread, scheduled by macOS, without hard core affinity").
 */
#include "pin.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int
pin_to_cpu(int cpu, char *why, size_t whylen)
{
#if defined(CPU_SET)
	cpu_set_t set;

	if (cpu >= CPU_SETSIZE) {
		snprintf(why, whylen, "cpu %d out of range", cpu);
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		snprintf(why, whylen, "sched_setaffinity cpu %d: %s", cpu,
		    strerror(errno));
		return -1;
	}
	return 0;
#else
	snprintf(why, whylen, "no hard cpu affinity on this os (cpu %d "
	    "requested)", cpu);
	return -1;
#endif
}

int
pin_current_cpu(void)
{
#if defined(CPU_SET)
	return sched_getcpu();
#else
	return -1;
#endif
}

/*
 * CPU pinning.  Linux has sched_setaffinity; macOS has only affinity
 * hints, so there we report that no hard pin exists (seed 000: "the Mac is
 * one thread, scheduled by macOS, without hard core affinity").
 */
#include "pin.h"

#include "sysfs.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#if defined(CPU_SET)
/*
 * A cpu the host does not have (or has offline) is a mistake in
 * hosts.toml, which EINVAL does not name: say which cpus there are.  0
 * with why filled, or -1 when cpu is online or the list is unreadable.
 */
static int
not_online(int cpu, char *why, size_t whylen)
{
	static unsigned char online[SYSFS_MAX_CPUS];
	char list[128];
	int n = sysfs_cpus(online, "/sys/devices/system/cpu/online");

	if (n <= 0 || (cpu < SYSFS_MAX_CPUS && online[cpu]))
		return -1;
	sysfs_format_cpus(online, list, sizeof list);
	snprintf(why, whylen, "cpu %d is not one of its %d cpus (%s)", cpu, n,
	    list);
	return 0;
}
#endif

int
pin_to_cpu(int cpu, char *why, size_t whylen)
{
#if defined(CPU_SET)
	cpu_set_t set;
	int err;

	if (cpu >= CPU_SETSIZE) {
		if (not_online(cpu, why, whylen) != 0)
			snprintf(why, whylen, "cpu %d out of range", cpu);
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		err = errno;
		if (err != EINVAL || not_online(cpu, why, whylen) != 0)
			snprintf(why, whylen, "sched_setaffinity cpu %d: %s",
			    cpu, strerror(err));
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

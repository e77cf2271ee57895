/* perf_event_open counters around a sample (perf.h). */
#include "perf.h"

#include "protocol.h"
#include "sysfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#define HAVE_PERF_EVENT 1
#endif
#endif

#ifdef HAVE_PERF_EVENT
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

/* read() of a group: nr, time enabled, time running, then the values. */
struct group_read {
	uint64_t nr, enabled, running, values[2];
};

static int
open_event(uint32_t type, uint64_t config, int group)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = group < 0;
	/* A leader that cannot stay on the PMU reads as nothing, not less. */
	a.pinned = group < 0;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
	    PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group,
	    PERF_FLAG_FD_CLOEXEC);
}

/* errno's symbolic name, for the messages: what failed, exactly. */
static const char *
errno_name(int e, char *buf, size_t len)
{
	static const struct { int e; const char *name; } names[] = {
		{ ENOSYS, "ENOSYS" }, { ENOENT, "ENOENT" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { ENODEV, "ENODEV" },
		{ EACCES, "EACCES" }, { EPERM, "EPERM" }, { EINVAL, "EINVAL" },
		{ EBUSY, "EBUSY" }, { EMFILE, "EMFILE" }, { E2BIG, "E2BIG" },
		{ EFAULT, "EFAULT" }, { ENOSPC, "ENOSPC" },
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(buf, len, "errno %d", e);
	return buf;
}

/*
 * Why hardware counters failed with errno e, in p->why: the call and its
 * errno first, then what the host shows that bears on it.
 */
static void
explain(struct perf *p, int e)
{
	char path[512], buf[32], name[32];
	long long paranoid = -99;
	const char *en = errno_name(e, name, sizeof name);

	sysfs_path(path, sizeof path, "/sys/bus/event_source/devices/cpu");
	if (e == ENOSYS) {
		/* The call itself is missing: a kernel without perf events,
		 * or an emulator (qemu-user) that does not implement it. */
		snprintf(p->why, sizeof p->why, "perf_event_open (cycles) "
		    "failed: %s (%s); /proc/sys/kernel/perf_event_paranoid "
		    "%s", en, strerror(e), sysfs_ll(&paranoid,
		    "/proc/sys/kernel/perf_event_paranoid") == 0 ? "exists, "
		    "so this kernel has perf events" : "is absent");
	} else if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) {
		snprintf(p->why, sizeof p->why, "no hardware pmu: "
		    "perf_event_open (cycles) failed: %s (%s)%s", en,
		    strerror(e), access(path, F_OK) != 0 ? "; no /sys/bus/"
		    "event_source/devices/cpu: a vm without a virtual pmu?" :
		    "");
	} else if (e == EACCES || e == EPERM) {
		if (sysfs_ll(&paranoid, "/proc/sys/kernel/perf_event_paranoid")
		    == 0)
			snprintf(buf, sizeof buf, "%lld", paranoid);
		else
			snprintf(buf, sizeof buf, "unknown");
		snprintf(p->why, sizeof p->why, "perf_event_open (cycles) "
		    "refused: %s (%s); kernel.perf_event_paranoid %s (above 2 "
		    "refuses users, and a container's seccomp filter can "
		    "refuse it too)", en, strerror(e), buf);
	} else
		snprintf(p->why, sizeof p->why, "perf_event_open (cycles) "
		    "failed: %s (%s)", en, strerror(e));
}

int
perf_open(struct perf *p)
{
	const char *seam = getenv("SEQORCH_TEST_COUNTERS");
	uint32_t type = PERF_TYPE_HARDWARE;
	uint64_t c_cycles = PERF_COUNT_HW_CPU_CYCLES;
	uint64_t c_insns = PERF_COUNT_HW_INSTRUCTIONS;
	int e;

	p->fd_cycles = p->fd_insns = -1;
	p->source = "none";
	p->why[0] = '\0';
	if (seam != NULL) {
		if (getenv("PYTEST_CURRENT_TEST") == NULL ||
		    strcmp(seam, "software") != 0) {
			snprintf(p->why, sizeof p->why, "test seam "
			    "SEQORCH_TEST_COUNTERS=\"%.40s\" outside the tests: "
			    "unset it", seam);
			return -2;
		}
		type = PERF_TYPE_SOFTWARE;
		c_cycles = PERF_COUNT_SW_TASK_CLOCK;
		c_insns = PERF_COUNT_SW_TASK_CLOCK;
	}
	if ((p->fd_cycles = open_event(type, c_cycles, -1)) < 0) {
		explain(p, errno);
		return -1;
	}
	if ((p->fd_insns = open_event(type, c_insns, p->fd_cycles)) < 0) {
		char name[32];

		e = errno;
		snprintf(p->why, sizeof p->why, "perf_event_open "
		    "(instructions) failed: %s (%s)",
		    errno_name(e, name, sizeof name), strerror(e));
		perf_close(p);
		return -1;
	}
	p->source = seam != NULL ? PROTO_V_TEST_SEAM : PROTO_V_PMU;
	return 0;
}

void
perf_start(struct perf *p)
{
	if (p->fd_cycles < 0)
		return;
	ioctl(p->fd_cycles, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl(p->fd_cycles, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

int
perf_stop(struct perf *p, uint64_t *cycles, uint64_t *insns)
{
	struct group_read g;

	if (p->fd_cycles < 0)
		return -1;
	ioctl(p->fd_cycles, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	if (read(p->fd_cycles, &g, sizeof g) != (ssize_t)sizeof g ||
	    g.nr != 2 || g.running != g.enabled || g.enabled == 0)
		return -1;
	*cycles = g.values[0];
	*insns = g.values[1];
	return 0;
}

void
perf_close(struct perf *p)
{
	if (p->fd_insns >= 0)
		close(p->fd_insns);
	if (p->fd_cycles >= 0)
		close(p->fd_cycles);
	p->fd_cycles = p->fd_insns = -1;
}
#else
int
perf_open(struct perf *p)
{
	p->fd_cycles = p->fd_insns = -1;
	p->source = "none";
	if (getenv("SEQORCH_TEST_COUNTERS") != NULL) {
		snprintf(p->why, sizeof p->why, "test seam "
		    "SEQORCH_TEST_COUNTERS set where there is no "
		    "perf_event_open: unset it");
		return -2;
	}
	/* macOS: kperf's counters need root and a private framework. */
	snprintf(p->why, sizeof p->why, "no perf_event_open on this os");
	return -1;
}

void
perf_start(struct perf *p)
{
	(void)p;
}

int
perf_stop(struct perf *p, uint64_t *cycles, uint64_t *insns)
{
	(void)p;
	(void)cycles;
	(void)insns;
	return -1;
}

void
perf_close(struct perf *p)
{
	(void)p;
}
#endif

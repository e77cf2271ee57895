/* The CPU the agent picks for itself with --cpu auto (topology.h). */
#include "topology.h"

#include "sysfs.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define CPU_DIR "/sys/devices/system/cpu"
#define IDLE_BELOW 0.10		/* busy share under which a CPU is idle */
#define WATCH_MS 250		/* how long the CPUs are watched */

/*
 * The performance cores of a hybrid CPU into perf, with where that came
 * from in src.  Returns 1 when the CPU is hybrid and perf is set, 0 when
 * every core is alike (or nothing says otherwise).
 */
static int
perf_cores(const unsigned char *online, unsigned char *perf, char *src,
    size_t srclen)
{
	static unsigned char set[SYSFS_MAX_CPUS];
	char path[512];
	struct dirent *de;
	long long cap[SYSFS_MAX_CPUS], max = -1;
	int ntypes = 0, nperf = 0, i, alike = 1;
	DIR *d;

	memset(perf, 0, SYSFS_MAX_CPUS);
	/* Intel hybrid: one directory per core type, intel_core_* for P. */
	sysfs_path(path, sizeof path, CPU_DIR "/types");
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (sysfs_cpus(set, CPU_DIR "/types/%s/cpulist",
			    de->d_name) < 0)
				continue;
			ntypes++;
			if (strncmp(de->d_name, "intel_core", 10) != 0)
				continue;
			for (i = 0; i < SYSFS_MAX_CPUS; i++)
				if (set[i] && online[i] && !perf[i]) {
					perf[i] = 1;
					nperf++;
				}
		}
		closedir(d);
		if (ntypes > 1 && nperf > 0) {
			snprintf(src, srclen, "cpu/types intel_core");
			return 1;
		}
	}
	/* The hybrid perf driver names its P-core PMU cpu_core. */
	if (sysfs_cpus(set, "/sys/bus/event_source/devices/cpu_core/cpus") >
	    0 && sysfs_cpus(perf, "/sys/bus/event_source/devices/cpu_atom/"
	    "cpus") >= 0) {
		for (i = 0; i < SYSFS_MAX_CPUS; i++)
			perf[i] = set[i] && online[i];
		snprintf(src, srclen, "cpu_core pmu");
		return 1;
	}
	memset(perf, 0, SYSFS_MAX_CPUS);
	/* Arm big.LITTLE and others: the largest relative capacity. */
	for (i = 0; i < SYSFS_MAX_CPUS; i++) {
		cap[i] = -1;
		if (!online[i] || sysfs_ll(&cap[i], CPU_DIR "/cpu%d/cpu_capacity",
		    i) != 0)
			continue;
		if (max >= 0 && cap[i] != max)
			alike = 0;
		if (cap[i] > max)
			max = cap[i];
	}
	if (max < 0 || alike)
		return 0;
	for (i = 0; i < SYSFS_MAX_CPUS; i++)
		perf[i] = online[i] && cap[i] == max;
	snprintf(src, srclen, "cpu_capacity %lld", max);
	return 1;
}

struct cand {
	int cpu, idle, isolated, sibling;	/* sibling: -1 none */
	double load;				/* max of its and siblings' */
};

/* Is a better than b for the agent?  (The order of topology.h.) */
static int
better(const struct cand *a, const struct cand *b)
{
	if (a->idle != b->idle)
		return a->idle;
	if (a->isolated != b->isolated)
		return a->isolated;
	if (a->load != b->load)
		return a->load < b->load;
	return a->cpu > b->cpu;
}

static void
pct(char *buf, size_t len, double v)
{
	if (v < 0)
		snprintf(buf, len, "busy unknown");
	else
		snprintf(buf, len, "%.0f%% busy", 100 * v);
}

int
topology_pick(const double *busy, char *why, size_t whylen)
{
	static unsigned char online[SYSFS_MAX_CPUS], perf[SYSFS_MAX_CPUS];
	static unsigned char iso[SYSFS_MAX_CPUS], sib[SYSFS_MAX_CPUS];
	struct cand best = { -1, 0, 0, -1, 0 }, c;
	char src[64] = "", isolist[128], b1[32], b2[32];
	int hybrid, nonline, niso, i, j;
	size_t n;

	if ((nonline = sysfs_cpus(online, CPU_DIR "/online")) <= 0) {
		snprintf(why, whylen, "cannot read the online cpus from "
		    CPU_DIR "/online");
		return -1;
	}
	hybrid = perf_cores(online, perf, src, sizeof src);
	if ((niso = sysfs_cpus(iso, CPU_DIR "/isolated")) < 0) {
		memset(iso, 0, sizeof iso);
		niso = 0;
	}
	for (i = 0; i < SYSFS_MAX_CPUS; i++) {
		if (!online[i] || (hybrid && !perf[i]) ||
		    (i == 0 && nonline > 1))
			continue;
		c.cpu = i;
		c.isolated = iso[i];
		c.sibling = -1;
		c.load = busy[i];
		if (sysfs_cpus(sib, CPU_DIR "/cpu%d/topology/thread_siblings_list",
		    i) > 0) {
			for (j = 0; j < SYSFS_MAX_CPUS; j++) {
				if (!sib[j] || j == i)
					continue;
				if (c.sibling < 0 || busy[j] > busy[c.sibling])
					c.sibling = j;
				if (busy[j] > c.load)
					c.load = busy[j];
			}
		}
		c.idle = c.load < IDLE_BELOW;
		if (best.cpu < 0 || better(&c, &best))
			best = c;
	}
	if (best.cpu < 0) {
		snprintf(why, whylen, "no online cpu to choose from");
		return -1;
	}
	i = best.cpu;
	n = (size_t)snprintf(why, whylen, "cpu %d: %s", i, nonline > 1 ?
	    "not cpu 0 (interrupts)" : "the only online cpu");
	if (hybrid && n < whylen)
		n += (size_t)snprintf(why + n, whylen - n, "; performance "
		    "core (%s)", src);
	pct(b1, sizeof b1, busy[i]);
	if (n < whylen)
		n += (size_t)snprintf(why + n, whylen - n, "; %s", b1);
	if (best.sibling >= 0 && n < whylen) {
		pct(b2, sizeof b2, busy[best.sibling]);
		n += (size_t)snprintf(why + n, whylen - n, "; smt sibling cpu "
		    "%d %s(%s)", best.sibling, busy[best.sibling] < 0 ? "" :
		    busy[best.sibling] < IDLE_BELOW ? "idle " : "busy ", b2);
	} else if (n < whylen)
		n += (size_t)snprintf(why + n, whylen - n, "; no smt sibling");
	sysfs_format_cpus(iso, isolist, sizeof isolist);
	if (n < whylen)
		snprintf(why + n, whylen - n, "; %s (isolcpus %s)",
		    best.isolated ? "isolated" : "not isolated",
		    niso ? isolist : "none");
	return i;
}

int
topology_auto(char *why, size_t whylen)
{
#if defined(__APPLE__)
	/* The QoS class that stands in for a pin is set by the caller, for
	 * every unpinned agent (macos_qos). */
	snprintf(why, whylen, "not pinned: no hard cpu affinity on this os");
	return -1;
#else
	static double busy[SYSFS_MAX_CPUS], steal[SYSFS_MAX_CPUS];
	int i;

	if (sysfs_busy(WATCH_MS, busy, steal) != 0)
		for (i = 0; i < SYSFS_MAX_CPUS; i++)
			busy[i] = -1;
	return topology_pick(busy, why, whylen);
#endif
}

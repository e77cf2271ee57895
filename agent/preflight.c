/*
 * The noise preflight (preflight.h).  Each check reads what the host
 * exposes; a file that is missing is a note, never a verdict, so a VM
 * without cpufreq is judged on what it does show.  The thresholds are in
 * docs/measurement.md.
 */
#include "preflight.h"

#include "macos.h"
#include "pin.h"
#include "protocol.h"
#include "sysfs.h"

#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <libkern/OSThermalNotification.h>
#endif

#define CPU_DIR "/sys/devices/system/cpu"
#define SAMPLE_MS 250		/* how long we watch the other CPUs */
#define BUSY_ABOVE 0.10		/* a CPU this busy is not idle */
#define STEAL_ABOVE 0.02	/* the hypervisor ran someone else */
#define LOAD_PER_CPU 0.5	/* load1 above this per online CPU */
#define MAX_ITEMS 32		/* protocol limit of reasons and notes */

/* The reasons or the notes, until they are written into the record. */
struct items {
	size_t n;
	char s[MAX_ITEMS][256];
};

static void __attribute__((format(printf, 2, 3)))
add(struct items *list, const char *fmt, ...)
{
	va_list ap;

	if (list->n >= MAX_ITEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(list->s[list->n++], sizeof list->s[0], fmt, ap);
	va_end(ap);
}

static void
add_list(struct jsonl *rec, const char *key, const struct items *list)
{
	size_t i;

	jsonl_open(rec, key, '[');
	for (i = 0; i < list->n; i++)
		jsonl_str(rec, NULL, list->s[i]);
	jsonl_close(rec);
}

/* A governor other than performance lets the clock follow the load. */
static void
check_governor(int cpu, struct items *reasons, struct items *notes)
{
	char gov[64];

	if (cpu < 0 || sysfs_line(gov, sizeof gov,
	    CPU_DIR "/cpu%d/cpufreq/scaling_governor", cpu) != 0) {
		add(notes, "governor unknown (no cpufreq for the cpu)");
		return;
	}
	if (strcmp(gov, "performance") != 0)
		add(reasons, "governor \"%s\" on cpu %d (not performance)",
		    gov, cpu);
	else
		add(notes, "governor performance on cpu %d", cpu);
}

/*
 * Boost lets the clock rise with temperature and with what the other
 * cores do: the generic cpufreq/boost, intel_pstate's no_turbo, and
 * amd-pstate's per-policy boost.
 */
static void
check_boost(int cpu, struct items *reasons, struct items *notes)
{
	char status[64];
	long long v;
	int known = 0;

	if (sysfs_ll(&v, CPU_DIR "/cpufreq/boost") == 0) {
		known = 1;
		if (v != 0)
			add(reasons, "boost on (cpufreq/boost %lld)", v);
	}
	if (sysfs_ll(&v, CPU_DIR "/intel_pstate/no_turbo") == 0) {
		known = 1;
		if (v == 0)
			add(reasons, "turbo on (intel_pstate/no_turbo 0)");
	}
	if (sysfs_line(status, sizeof status, CPU_DIR "/amd_pstate/status") ==
	    0)
		add(notes, "amd-pstate %s", status);
	if (cpu >= 0 && sysfs_ll(&v, CPU_DIR "/cpu%d/cpufreq/boost", cpu) ==
	    0) {
		known = 1;
		if (v != 0)
			add(reasons, "boost on for cpu %d (cpu%d/cpufreq/boost "
			    "%lld)", cpu, cpu, v);
	}
	if (!known)
		add(notes, "boost state unknown (no cpufreq boost, "
		    "intel_pstate or amd-pstate control)");
}

/* The CPU itself, its SMT siblings, and steal time on it. */
static void
check_cpu(int cpu, const double *busy, const double *steal, struct items *reasons,
    struct items *notes)
{
	static unsigned char sib[SYSFS_MAX_CPUS];
	int j, nsib = 0;

	if (cpu < 0 || cpu >= SYSFS_MAX_CPUS) {
		add(notes, "no cpu to describe");
		return;
	}
	if (busy[cpu] < 0)
		add(notes, "cpu %d: busy share unknown", cpu);
	else if (busy[cpu] > BUSY_ABOVE)
		add(reasons, "cpu %d busy %.0f%% with other work", cpu,
		    100 * busy[cpu]);
	if (steal[cpu] > STEAL_ABOVE)
		add(reasons, "steal %.0f%% on cpu %d (the hypervisor ran "
		    "another guest)", 100 * steal[cpu], cpu);
	if (sysfs_cpus(sib, CPU_DIR "/cpu%d/topology/thread_siblings_list",
	    cpu) < 0) {
		add(notes, "smt siblings of cpu %d unknown", cpu);
		return;
	}
	for (j = 0; j < SYSFS_MAX_CPUS; j++) {
		if (!sib[j] || j == cpu)
			continue;
		nsib++;
		if (busy[j] > BUSY_ABOVE)
			add(reasons, "smt sibling cpu %d busy %.0f%%", j,
			    100 * busy[j]);
		else if (busy[j] < 0)
			add(notes, "smt sibling cpu %d: busy share unknown", j);
		else
			add(notes, "smt sibling cpu %d idle (%.0f%%)", j,
			    100 * busy[j]);
	}
	if (nsib == 0)
		add(notes, "cpu %d has no smt sibling", cpu);
}

/* isolcpus and nohz_full keep the scheduler and the tick off a CPU. */
static void
check_isolation(int cpu, struct items *notes)
{
	static unsigned char set[SYSFS_MAX_CPUS];
	static const char *const files[] = { "isolated", "nohz_full" };
	static const char *const names[] = { "isolcpus", "nohz_full" };
	char list[128];
	int i, n;

	for (i = 0; i < 2; i++) {
		if ((n = sysfs_cpus(set, CPU_DIR "/%s", files[i])) < 0) {
			add(notes, "%s unknown", names[i]);
			continue;
		}
		sysfs_format_cpus(set, list, sizeof list);
		if (cpu >= 0 && cpu < SYSFS_MAX_CPUS && set[cpu])
			add(notes, "cpu %d in %s (%s)", cpu, names[i], list);
		else
			add(notes, "cpu %d not in %s (%s)", cpu, names[i],
			    n ? list : "none");
	}
}

/*
 * Without a pin (macOS) the agent can land beside any other work: more
 * than half of the CPUs busy is a reason, fewer is a note.
 */
static void
check_unpinned(const double *busy, int ncpu, struct items *reasons, struct items *notes)
{
	int i, nbusy = 0, known = 0;

	for (i = 0; i < ncpu; i++) {
		if (busy[i] < 0)
			continue;
		known++;
		if (busy[i] > BUSY_ABOVE)
			nbusy++;
	}
	if (known == 0)
		add(notes, "cpu activity unknown (no cpu ticked)");
	else if (2 * nbusy > known)
		add(reasons, "%d of %d cpus busy over %.0f%% with other work",
		    nbusy, known, 100 * BUSY_ABOVE);
	else
		add(notes, "%d of %d cpus busy over %.0f%%", nbusy, known,
		    100 * BUSY_ABOVE);
}

static void
check_load(struct items *reasons, struct items *notes)
{
	static unsigned char online[SYSFS_MAX_CPUS];
	char buf[128];
	double load1;
	int n;

	if ((n = sysfs_cpus(online, CPU_DIR "/online")) <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	/* No /proc (macOS): the C library's getloadavg, as state.c uses; a
	 * recorded tree (sysfs_root) is never mixed with the real host's. */
	if ((sysfs_line(buf, sizeof buf, "/proc/loadavg") != 0 ||
	    sscanf(buf, "%lf", &load1) != 1) &&
	    (sysfs_root() != NULL || getloadavg(&load1, 1) != 1)) {
		add(notes, "load unknown (no /proc/loadavg)");
		return;
	}
	if (n > 0 && load1 > LOAD_PER_CPU * n)
		add(reasons, "load %.2f on %d cpus", load1, n);
	else
		add(notes, "load %.2f on %d cpus", load1, n);
}

/* The other agents from the process list where there is no /proc. */
static void
check_agents_macos(struct items *reasons, struct items *notes)
{
	struct macos_agent a[MAX_ITEMS];
	int n, i;

	if ((n = macos_agents(a, MAX_ITEMS)) < 0) {
		add(notes, "other seqorch agents unknown (no /proc)");
		return;
	}
	for (i = 0; i < n; i++)
		if (a[i].running)
			add(reasons, "another seqorch-agent is running (pid "
			    "%d)", a[i].pid);
		else
			add(notes, "another seqorch-agent waits (pid %d, no "
			    "thread running)", a[i].pid);
}

/*
 * Other agents: one that runs (state R, or D) competes for the host; one
 * that sleeps is waiting for the host lock and does not.  A conductor's
 * own build agents (its children) are not others: they wait for its
 * sample requests.
 */
static void
check_agents(struct items *reasons, struct items *notes)
{
	char path[1100], dir[600], comm[64], stat[512], *rp;
	struct dirent *de;
	long self = (long)getpid();
	DIR *d;

	sysfs_path(dir, sizeof dir, "/proc");
	if ((d = opendir(dir)) == NULL) {
		check_agents_macos(reasons, notes);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    strtol(de->d_name, NULL, 10) == self)
			continue;
		snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
		if (sysfs_line(comm, sizeof comm, "%s", path) != 0 ||
		    strcmp(comm, "seqorch-agent") != 0)
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if (sysfs_line(stat, sizeof stat, "%s", path) != 0 ||
		    (rp = strrchr(stat, ')')) == NULL || rp[1] != ' ' ||
		    rp[2] == '\0' || strtol(rp + 3, NULL, 10) == self)
			continue;
		if (rp[2] == 'R' || rp[2] == 'D')
			add(reasons, "another seqorch-agent is running (pid "
			    "%s)", de->d_name);
		else
			add(notes, "another seqorch-agent waits (pid %s, state "
			    "%c)", de->d_name, rp[2]);
	}
	closedir(d);
}

/* Sum of every thermal_throttle counter; -1 when there are none. */
static long long
throttle_count(void)
{
	static unsigned char online[SYSFS_MAX_CPUS];
	static const char *const names[] = {
		"core_throttle_count", "package_throttle_count",
	};
	long long v, sum = -1;
	int i, k;

	if (sysfs_cpus(online, CPU_DIR "/online") <= 0)
		return -1;
	for (i = 0; i < SYSFS_MAX_CPUS; i++) {
		for (k = 0; online[i] && k < 2; k++) {
			if (sysfs_ll(&v, CPU_DIR "/cpu%d/thermal_throttle/%s",
			    i, names[k]) != 0)
				continue;
			sum = (sum < 0 ? 0 : sum) + v;
		}
	}
	return sum;
}

#if defined(__APPLE__)
static void
check_macos(struct items *reasons, struct items *notes)
{
	char power[128];
	uint64_t v;

	if (macos_notify_state(kOSThermalNotificationPressureLevelName,
	    &v) != 0)
		add(notes, "thermal pressure unknown");
	else if (v != kOSThermalPressureLevelNominal)
		add(reasons, "thermal pressure level %llu (0 is nominal)",
		    (unsigned long long)v);
	else
		add(notes, "thermal pressure nominal");
	if (macos_notify_state("com.apple.system.lowpowermode", &v) != 0)
		add(notes, "low-power mode unknown");
	else if (v != 0)
		add(reasons, "low-power mode on");
	else
		add(notes, "low-power mode off");
	/* Seed 002 measured on AC while charging: a note, the facts keep it. */
	if (macos_power(power, sizeof power) != 0)
		add(notes, "power source unknown");
	else
		add(notes, "power: %s", power);
}
#endif

int
preflight_run(struct jsonl *rec, int cpu, char *why, size_t whylen)
{
	static double busy[SYSFS_MAX_CPUS], steal[SYSFS_MAX_CPUS];
	static struct items r, nt;
	struct items *reasons = &r, *notes = &nt;
	long long t0, t1;
	int quiet, ncpu = -1, i;
	size_t k, n = 0;

	r.n = nt.n = 0;
	if (cpu < 0)
		cpu = pin_current_cpu();
	t0 = throttle_count();
	if (sysfs_busy(SAMPLE_MS, busy, steal) != 0) {
		for (i = 0; i < SYSFS_MAX_CPUS; i++)
			busy[i] = steal[i] = -1;
		/* macOS: the kernel's per-CPU ticks instead of /proc/stat. */
		if ((ncpu = macos_busy(SAMPLE_MS, busy, SYSFS_MAX_CPUS)) < 0)
			add(notes, "cpu activity unknown (no /proc/stat)");
	}
	t1 = throttle_count();
	check_governor(cpu, reasons, notes);
	check_boost(cpu, reasons, notes);
	if (ncpu >= 0 && cpu < 0)
		check_unpinned(busy, ncpu, reasons, notes);
	else
		check_cpu(cpu, busy, steal, reasons, notes);
	check_isolation(cpu, notes);
	check_load(reasons, notes);
	check_agents(reasons, notes);
	if (t0 < 0 || t1 < 0)
		add(notes, "thermal throttle counts unknown");
	else if (t1 > t0)
		add(reasons, "thermal throttling: %lld events in %d ms",
		    t1 - t0, SAMPLE_MS);
	else
		add(notes, "thermal throttle counts %lld since boot, none new",
		    t1);
#if defined(__APPLE__)
	check_macos(reasons, notes);
#endif
	quiet = reasons->n == 0;
	jsonl_str(rec, PROTO_F_VERDICT, quiet ? PROTO_V_QUIET :
	    PROTO_V_NOISY);
	add_list(rec, PROTO_F_REASONS, reasons);
	add_list(rec, PROTO_F_NOTES, notes);
	why[0] = '\0';
	for (k = 0; k < reasons->n && n < whylen; k++)
		n += (size_t)snprintf(why + n, whylen - n, "%s%s",
		    k ? "; " : "", reasons->s[k]);
	return quiet;
}

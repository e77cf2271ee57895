/*
 * Host-state snapshots for the window records (docs/protocol.md).  Linux
 * exposes this state in /proc and /sys; whether a file exists decides what
 * is reported, not the name of the OS, so macOS, containers without /sys
 * and VMs without thermal zones all get null for what they lack.
 */
#include "state.h"

#include "pin.h"
#include "protocol.h"
#include "timing.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_BUSY 16		/* protocol limit of busy_on_cpu entries */
#define CPU_DIR "/sys/devices/system/cpu"
#define THERMAL_DIR "/sys/class/thermal"

struct task {
	char comm[64];
	char state;
	long cpu;
};

static void
add_num_or_null(struct jsonl *o, const char *key, int ok, double v)
{
	if (ok)
		jsonl_num(o, key, v);
	else
		jsonl_null(o, key);
}

static int
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The first integer in path: 0, or -1 if unreadable or not a number. */
static int
read_ll(const char *path, long long *v)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (f == NULL)
		return -1;
	rc = fscanf(f, "%lld", v) == 1 ? 0 : -1;
	fclose(f);
	return rc;
}

/* Wall time in UTC with milliseconds, comparable across hosts and runs. */
static void
add_time(struct jsonl *o)
{
	struct timespec ts;
	struct tm tm;
	char buf[40];
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof buf - n, ".%03dZ",
	    (int)(ts.tv_nsec / 1000000));
	jsonl_str(o, PROTO_F_AT, buf);
}

static void
add_cpufreq(struct jsonl *o, int cpu)
{
	char path[128], gov[64];
	long long khz = 0;
	FILE *f;
	int ok = 0;

	if (cpu >= 0) {
		snprintf(path, sizeof path,
		    CPU_DIR "/cpu%d/cpufreq/scaling_governor", cpu);
		if ((f = fopen(path, "r")) != NULL) {
			ok = fscanf(f, "%63s", gov) == 1;
			fclose(f);
		}
	}
	if (ok)
		jsonl_str(o, PROTO_F_GOVERNOR, gov);
	else
		jsonl_null(o, PROTO_F_GOVERNOR);

	ok = 0;
	if (cpu >= 0) {
		snprintf(path, sizeof path,
		    CPU_DIR "/cpu%d/cpufreq/scaling_cur_freq", cpu);
		ok = read_ll(path, &khz) == 0 && khz >= 0;
	}
	add_num_or_null(o, PROTO_F_FREQ_KHZ, ok, (double)khz);
}

/* The hottest thermal zone: the one that makes the firmware throttle. */
static void
add_temp(struct jsonl *o)
{
	DIR *d = opendir(THERMAL_DIR);
	struct dirent *de;
	char path[512];
	long long milli, max = 0;
	int found = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (!has_prefix(de->d_name, "thermal_zone"))
			continue;
		snprintf(path, sizeof path, THERMAL_DIR "/%s/temp", de->d_name);
		/* Some zones fail to read (no sensor behind them): skip. */
		if (read_ll(path, &milli) != 0)
			continue;
		if (!found || milli > max)
			max = milli;
		found = 1;
	}
	if (d != NULL)
		closedir(d);
	add_num_or_null(o, PROTO_F_TEMP_C, found, (double)max / 1000.0);
}

/*
 * Sum of the kernel's throttling counters over all CPUs.  Package counters
 * repeat on every CPU of the package, so the sum means nothing alone; only
 * a change between the begin and end snapshots does.
 */
static void
add_throttle(struct jsonl *o)
{
	DIR *d = opendir(CPU_DIR), *t;
	struct dirent *de, *te;
	char dir[512], path[1024];
	long long v, sum = 0;
	int found = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (!has_prefix(de->d_name, "cpu") ||
		    !isdigit((unsigned char)de->d_name[3]))
			continue;
		snprintf(dir, sizeof dir, CPU_DIR "/%s/thermal_throttle",
		    de->d_name);
		if ((t = opendir(dir)) == NULL)
			continue;
		while ((te = readdir(t)) != NULL) {
			if (!has_suffix(te->d_name, "_throttle_count"))
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, te->d_name);
			if (read_ll(path, &v) == 0) {
				sum += v;
				found = 1;
			}
		}
		closedir(t);
	}
	if (d != NULL)
		closedir(d);
	add_num_or_null(o, PROTO_F_THROTTLE_COUNT, found, (double)sum);
}

/*
 * Fields 2 (comm), 3 (state) and 39 (CPU last run on) of a /proc stat
 * file.  Returns 0, or -1 when the task is gone or the line is malformed.
 */
static int
read_stat(const char *path, struct task *t)
{
	char buf[1024], *lp, *rp, *p, *end;
	FILE *f = fopen(path, "r");
	size_t n, i;
	int field;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may itself hold spaces and parentheses: it ends at the last ')'. */
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (lp == NULL || rp == NULL || rp < lp)
		return -1;
	snprintf(t->comm, sizeof t->comm, "%.*s", (int)(rp - lp - 1), lp + 1);
	/* The name is shown to people: no terminal controls, ASCII only. */
	for (i = 0; t->comm[i] != '\0'; i++)
		if ((unsigned char)t->comm[i] < 0x20 ||
		    (unsigned char)t->comm[i] > 0x7e)
			t->comm[i] = '?';
	p = rp + 1;
	for (field = 3; field < 39; field++) {
		p += strspn(p, " ");
		if (*p == '\0')
			return -1;
		if (field == 3)
			t->state = *p;
		p += strcspn(p, " ");
	}
	t->cpu = strtol(p, &end, 10);
	return end == p || (*end != ' ' && *end != '\n' && *end != '\0') ?
	    -1 : 0;
}

/*
 * Runnable tasks system-wide, and the processes with a runnable thread
 * whose last CPU is cpu (the agent excluded): those compete with the
 * timed kernel for its core.
 */
static void
add_procs(struct jsonl *o, int cpu)
{
	DIR *proc = opendir("/proc"), *tasks;
	struct dirent *de, *te;
	struct task t;
	char dir[300], path[600], comm[64];
	struct { long pid; char comm[64]; } busy[MAX_BUSY];
	size_t nbusy = 0, i;
	long long runnable = 0;
	long pid, self = (long)getpid();
	int found;

	if (proc == NULL) {
		jsonl_null(o, PROTO_F_BUSY_ON_CPU);
		jsonl_null(o, PROTO_F_RUNNABLE);
		return;
	}
	while ((de = readdir(proc)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		snprintf(dir, sizeof dir, "/proc/%s/task", de->d_name);
		/* A process that exits while we look is simply not counted. */
		if ((tasks = opendir(dir)) == NULL)
			continue;
		found = 0;
		while ((te = readdir(tasks)) != NULL) {
			if (!isdigit((unsigned char)te->d_name[0]))
				continue;
			snprintf(path, sizeof path, "%s/%s/stat", dir,
			    te->d_name);
			if (read_stat(path, &t) != 0 || t.state != 'R')
				continue;
			runnable++;
			if (pid != self && t.cpu == cpu && !found) {
				found = 1;
				memcpy(comm, t.comm, sizeof comm);
			}
		}
		closedir(tasks);
		if (found && nbusy < MAX_BUSY) {
			busy[nbusy].pid = pid;
			memcpy(busy[nbusy++].comm, comm, sizeof comm);
		}
	}
	closedir(proc);
	if (cpu >= 0) {
		jsonl_open(o, PROTO_F_BUSY_ON_CPU, '[');
		for (i = 0; i < nbusy; i++) {
			jsonl_open(o, NULL, '{');
			jsonl_int(o, PROTO_F_PID, busy[i].pid);
			jsonl_str(o, PROTO_F_COMM, busy[i].comm);
			jsonl_close(o);
		}
		jsonl_close(o);
	} else
		jsonl_null(o, PROTO_F_BUSY_ON_CPU);
	jsonl_int(o, PROTO_F_RUNNABLE, runnable);
}

void
state_snapshot(struct jsonl *o, const char *key, int cpu)
{
	double load[3], mhz;
	int nload, i;
	static const char *const load_keys[] = { PROTO_F_LOAD1,
	    PROTO_F_LOAD5, PROTO_F_LOAD15 };

	jsonl_open(o, key, '{');
	if (cpu < 0)
		cpu = pin_current_cpu();
	add_time(o);
	nload = getloadavg(load, 3);
	for (i = 0; i < 3; i++)
		add_num_or_null(o, load_keys[i], i < nload, load[i]);
	mhz = timing_calibrate_mhz();
	add_num_or_null(o, PROTO_F_CALIB_MHZ, mhz > 0, mhz);
	add_cpufreq(o, cpu);
	add_temp(o);
	add_throttle(o);
	add_procs(o, cpu);
	jsonl_close(o);
}

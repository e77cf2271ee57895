/* Bounded readers for /sys and /proc under a root (sysfs.h). */
#include "sysfs.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE_MAX_LEN 4096

struct times {
	unsigned long long work[SYSFS_MAX_CPUS], steal[SYSFS_MAX_CPUS];
	unsigned long long total[SYSFS_MAX_CPUS];
	unsigned char seen[SYSFS_MAX_CPUS];
};

const char *
sysfs_root(void)
{
	const char *r = getenv("SEQORCH_SYSFS_ROOT");

	return r != NULL && *r != '\0' ? r : NULL;
}

void
sysfs_path(char *buf, size_t len, const char *path)
{
	const char *root = sysfs_root();

	snprintf(buf, len, "%s%s", root ? root : "", path);
}

static FILE *
open_rel(const char *rel)
{
	char path[1024];

	sysfs_path(path, sizeof path, rel);
	return fopen(path, "r");
}

static FILE *
vopen(const char *fmt, va_list ap)
{
	char rel[512];

	vsnprintf(rel, sizeof rel, fmt, ap);
	return open_rel(rel);
}

static int
vline(char *buf, size_t len, const char *fmt, va_list ap)
{
	FILE *f = vopen(fmt, ap);
	int rc = -1;

	if (f == NULL)
		return -1;
	buf[0] = '\0';
	if (fgets(buf, (int)len, f) != NULL || feof(f)) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

int
sysfs_line(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vline(buf, len, fmt, ap);
	va_end(ap);
	return rc;
}

int
sysfs_ll(long long *v, const char *fmt, ...)
{
	char buf[64], *end;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vline(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (rc != 0)
		return -1;
	*v = strtoll(buf, &end, 10);
	return end == buf ? -1 : 0;
}

int
sysfs_parse_cpus(const char *s, unsigned char *set)
{
	long a, b;
	char *end;
	int n = 0;

	memset(set, 0, SYSFS_MAX_CPUS);
	/* nohz_full reads "(null)" when the kernel has it but none is set. */
	if (strcmp(s, "(null)") == 0)
		return 0;
	while (*s == ' ')
		s++;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return -1;
		a = b = strtol(s, &end, 10);
		s = end;
		if (*s == '-') {
			if (!isdigit((unsigned char)s[1]))
				return -1;
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		if (a > b || b >= SYSFS_MAX_CPUS)
			return -1;
		for (; a <= b; a++)
			if (!set[a]) {
				set[a] = 1;
				n++;
			}
		if (*s == ',')
			s++;
		else if (*s != '\0' && *s != ' ')
			return -1;
		while (*s == ' ')
			s++;
	}
	return n;
}

int
sysfs_cpus(unsigned char *set, const char *fmt, ...)
{
	char buf[LINE_MAX_LEN];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vline(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (rc != 0)
		return -1;
	return sysfs_parse_cpus(buf, set);
}

void
sysfs_format_cpus(const unsigned char *set, char *buf, size_t len)
{
	size_t n = 0;
	int a, b;

	buf[0] = '\0';
	for (a = 0; a < SYSFS_MAX_CPUS && n < len; a++) {
		if (!set[a])
			continue;
		for (b = a; b + 1 < SYSFS_MAX_CPUS && set[b + 1]; b++)
			;
		if (b == a)
			n += (size_t)snprintf(buf + n, len - n, "%s%d",
			    n ? "," : "", a);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d-%d",
			    n ? "," : "", a, b);
		a = b;
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
}

/* The per-CPU lines of /proc/stat: "cpuN user nice system idle ...". */
static int
read_times(struct times *t)
{
	char line[LINE_MAX_LEN];
	unsigned long long v[8];
	FILE *f;
	int cpu, i, n;
	char *p, *end;

	memset(t->seen, 0, sizeof t->seen);
	if ((f = open_rel("/proc/stat")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "cpu", 3) != 0 ||
		    !isdigit((unsigned char)line[3]))
			continue;
		cpu = (int)strtol(line + 3, &p, 10);
		for (i = 0; i < 8; i++) {
			v[i] = strtoull(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		n = i;
		/* Old kernels stop before steal; 4 fields is the minimum. */
		if (n < 4 || cpu < 0 || cpu >= SYSFS_MAX_CPUS)
			continue;
		for (; i < 8; i++)
			v[i] = 0;
		/* user nice system idle iowait irq softirq steal */
		t->work[cpu] = v[0] + v[1] + v[2] + v[5] + v[6];
		t->steal[cpu] = v[7];
		t->total[cpu] = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] +
		    v[6] + v[7];
		t->seen[cpu] = 1;
	}
	fclose(f);
	return 0;
}

int
sysfs_busy(unsigned ms, double *busy, double *steal)
{
	static struct times a, b;
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	unsigned long long dt;
	int i;

	if (read_times(&a) != 0)
		return -1;
	while (nanosleep(&ts, &ts) != 0)
		;
	if (read_times(&b) != 0)
		return -1;
	for (i = 0; i < SYSFS_MAX_CPUS; i++) {
		busy[i] = steal[i] = -1;
		if (!a.seen[i] || !b.seen[i] || b.total[i] <= a.total[i])
			continue;
		dt = b.total[i] - a.total[i];
		busy[i] = b.work[i] >= a.work[i] ?
		    (double)(b.work[i] - a.work[i]) / (double)dt : 0;
		steal[i] = b.steal[i] >= a.steal[i] ?
		    (double)(b.steal[i] - a.steal[i]) / (double)dt : 0;
	}
	return 0;
}

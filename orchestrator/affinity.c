/* Moving this process's threads off one CPU (affinity.h). */
#include "affinity.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(CPU_SET)
/* The CPUs of set as a list ("0,2-3") in buf. */
static void
format_set(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;
	int a, b;

	buf[0] = '\0';
	for (a = 0; a < CPU_SETSIZE && n < len; a++) {
		if (!CPU_ISSET(a, set))
			continue;
		for (b = a; b + 1 < CPU_SETSIZE && CPU_ISSET(b + 1, set); b++)
			;
		n += (size_t)snprintf(buf + n, len - n, b == a ? "%s%d" :
		    "%s%d-%d", n ? "," : "", a, b);
		a = b;
	}
}

int
affinity_avoid(int cpu, char *left, size_t leftlen, struct so_err *err)
{
	DIR *d;
	struct dirent *de;
	cpu_set_t set;
	pid_t tid;
	int rc = 0;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return so_error(err, SO_EINVAL, "cpu %d out of range", cpu);
	if ((d = opendir("/proc/self/task")) == NULL)
		return so_error(err, SO_EIO, "cannot list this process's "
		    "threads: %s", strerror(errno));
	left[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = (pid_t)strtol(de->d_name, NULL, 10);
		/* A thread that has just ended is not an error. */
		if (sched_getaffinity(tid, sizeof set, &set) != 0)
			continue;
		if (!CPU_ISSET(cpu, &set)) {
			format_set(&set, left, leftlen);
			continue;
		}
		CPU_CLR(cpu, &set);
		if (CPU_COUNT(&set) == 0) {
			rc = so_error(err, SO_EINVAL, "cpu %d is the only "
			    "cpu this coordinator may run on", cpu);
			break;
		}
		if (sched_setaffinity(tid, sizeof set, &set) != 0 &&
		    errno != ESRCH) {
			rc = so_error(err, SO_EIO, "sched_setaffinity thread "
			    "%ld: %s", (long)tid, strerror(errno));
			break;
		}
		format_set(&set, left, leftlen);
	}
	closedir(d);
	return rc;
}
#else
int
affinity_avoid(int cpu, char *left, size_t leftlen, struct so_err *err)
{
	(void)left;
	(void)leftlen;
	return so_error(err, SO_EIO, "no hard cpu affinity on this os to "
	    "keep the coordinator off cpu %d", cpu);
}
#endif

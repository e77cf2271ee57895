/*
 * The macOS side of the preflight and of the unpinned agent (macos.h).
 * Apple's own interfaces: pthread QoS classes, host_processor_info for
 * per-CPU ticks, libproc for the process list.  This file is compiled
 * here only against declarations (tests/test_27_apple.py), never run:
 * docs/hosts.md says what was checked on a Mac and what was not.
 */
#include "macos.h"

#include <stdio.h>
#include <string.h>

#if defined(__APPLE__)
#include <errno.h>
#include <libproc.h>
#include <mach/mach.h>
#include <pthread.h>
#include <pthread/qos.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
macos_qos(char *why, size_t len)
{
	size_t n = strlen(why);
	int rc = pthread_set_qos_class_self_np(QOS_CLASS_USER_INTERACTIVE, 0);

	if (n < len)
		snprintf(why + n, len - n, "; %s%s",
		    rc == 0 ? "running at qos class user-interactive" :
		    "setting qos class user-interactive failed: ",
		    rc == 0 ? "" : strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* Every CPU's ticks: user + system + nice into work, all into total. */
static int
ticks(unsigned long long *work, unsigned long long *total, int max)
{
	processor_info_array_t info;
	mach_msg_type_number_t count;
	natural_t ncpu, i;
	int n;

	if (host_processor_info(mach_host_self(), PROCESSOR_CPU_LOAD_INFO,
	    &ncpu, &info, &count) != KERN_SUCCESS)
		return -1;
	n = (int)ncpu < max ? (int)ncpu : max;
	for (i = 0; i < (natural_t)n; i++) {
		const natural_t *t = (const natural_t *)info +
		    i * CPU_STATE_MAX;

		work[i] = (unsigned long long)t[CPU_STATE_USER] +
		    t[CPU_STATE_SYSTEM] + t[CPU_STATE_NICE];
		total[i] = work[i] + t[CPU_STATE_IDLE];
	}
	vm_deallocate(mach_task_self(), (vm_address_t)info,
	    count * sizeof(integer_t));
	return n;
}

int
macos_busy(unsigned ms, double *busy, int max)
{
	static unsigned long long w0[1024], t0[1024], w1[1024], t1[1024];
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	int n0, n1, i;

	if (max > 1024)
		max = 1024;
	if ((n0 = ticks(w0, t0, max)) < 0)
		return -1;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if ((n1 = ticks(w1, t1, max)) < 0)
		return -1;
	if (n1 > n0)
		n1 = n0;
	for (i = 0; i < n1; i++)
		busy[i] = t1[i] > t0[i] ? (double)(w1[i] - w0[i]) /
		    (double)(t1[i] - t0[i]) : -1;
	return n1;
}

int
macos_agents(struct macos_agent *agents, int max)
{
	struct proc_taskinfo ti;
	struct proc_bsdinfo bi;
	char name[64];
	int *pids, n, i, found = 0, self = (int)getpid();

	if ((n = proc_listallpids(NULL, 0)) <= 0)
		return -1;
	n += 64;	/* processes that start meanwhile */
	if ((pids = calloc((size_t)n, sizeof *pids)) == NULL)
		return -1;
	n = proc_listallpids(pids, n * (int)sizeof *pids);
	for (i = 0; i < n && found < max; i++) {
		if (pids[i] == self || proc_name(pids[i], name,
		    sizeof name) <= 0 || strcmp(name, "seqorch-agent") != 0)
			continue;
		/* A conductor's own build agents are not others. */
		if (proc_pidinfo(pids[i], PROC_PIDTBSDINFO, 0, &bi,
		    (int)sizeof bi) == (int)sizeof bi &&
		    (int)bi.pbi_ppid == self)
			continue;
		agents[found].pid = pids[i];
		/* One that exits meanwhile counts as waiting. */
		agents[found].running = proc_pidinfo(pids[i], PROC_PIDTASKINFO,
		    0, &ti, (int)sizeof ti) == (int)sizeof ti &&
		    ti.pti_numrunning > 0;
		found++;
	}
	free(pids);
	return n < 0 ? -1 : found;
}

#else

int
macos_qos(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 1;
}

int
macos_busy(unsigned ms, double *busy, int max)
{
	(void)ms;
	(void)busy;
	(void)max;
	return -1;
}

int
macos_agents(struct macos_agent *agents, int max)
{
	(void)agents;
	(void)max;
	return -1;
}

#endif

/*
 * The macOS side of the preflight, the facts and the unpinned agent
 * (macos.h).  Apple's own interfaces: pthread QoS classes,
 * host_processor_info for per-CPU ticks, libproc for the process list,
 * sysctl for the CPU's features, notify(3) for the thermal pressure,
 * IOKit's power sources (through dlopen).  This file is compiled
 * here only against declarations (tests/test_27_apple.py), never run:
 * docs/hosts.md says what was checked on a Mac and what was not.
 */
#include "macos.h"

#include <stdio.h>
#include <string.h>

#if defined(__APPLE__)
#include "macfacts.h"

#include <dlfcn.h>
#include <errno.h>
#include <libkern/OSThermalNotification.h>
#include <libproc.h>
#include <mach/mach.h>
#include <pthread.h>
#include <notify.h>
#include <pthread/qos.h>
#include <stdlib.h>
#include <sys/sysctl.h>
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

static int
sysctl_int(const char *name, int *v)
{
	size_t len = sizeof *v;

	return sysctlbyname(name, v, &len, NULL, 0) == 0 ? 0 : -1;
}

int
macos_feat_names(char *buf, size_t len)
{
	if (macfacts_feat_names(sysctl_int, buf, len) > 0)
		return 0;
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

/*
 * IOKit's power sources (IOKit/ps/IOPowerSources.h, IOPSKeys.h) and the
 * CoreFoundation calls that read them, looked up at run time so that the
 * agent's link stays "cc ... -ldl" on a Mac too.  CoreFoundation's types
 * are opaque pointers here; its headers are not included.
 */
typedef const void *cf_ref;
typedef long cf_index;
#define CF_UTF8 0x08000100u		/* kCFStringEncodingUTF8 */
#define CF_NUMBER_INT 9			/* kCFNumberIntType */

static struct iops {
	int loaded;
	cf_ref (*copy_info)(void);
	cf_ref (*copy_list)(cf_ref);
	cf_ref (*description)(cf_ref, cf_ref);
	cf_ref (*providing)(cf_ref);
	cf_index (*count)(cf_ref);
	cf_ref (*at)(cf_ref, cf_index);
	cf_ref (*get)(cf_ref, cf_ref);
	unsigned char (*cstring)(cf_ref, char *, cf_index, uint32_t);
	cf_ref (*make)(cf_ref, const char *, uint32_t);
	unsigned char (*boolean)(cf_ref);
	unsigned char (*number)(cf_ref, long, void *);
	unsigned long (*type_of)(cf_ref);
	unsigned long (*bool_type)(void);
	unsigned long (*number_type)(void);
	unsigned long (*string_type)(void);
	void (*release)(cf_ref);
} iops;

static int
iops_load(void)
{
	void *io, *cf;

	if (iops.loaded)
		return iops.loaded > 0 ? 0 : -1;
	iops.loaded = -1;
	io = dlopen("/System/Library/Frameworks/IOKit.framework/IOKit",
	    RTLD_LAZY | RTLD_LOCAL);
	cf = dlopen("/System/Library/Frameworks/CoreFoundation.framework/"
	    "CoreFoundation", RTLD_LAZY | RTLD_LOCAL);
	if (io == NULL || cf == NULL)
		return -1;
#define SYM(h, f, name) if ((*(void **)&iops.f = dlsym(h, name)) == NULL) \
	return -1
	SYM(io, copy_info, "IOPSCopyPowerSourcesInfo");
	SYM(io, copy_list, "IOPSCopyPowerSourcesList");
	SYM(io, description, "IOPSGetPowerSourceDescription");
	SYM(io, providing, "IOPSGetProvidingPowerSourceType");
	SYM(cf, count, "CFArrayGetCount");
	SYM(cf, at, "CFArrayGetValueAtIndex");
	SYM(cf, get, "CFDictionaryGetValue");
	SYM(cf, cstring, "CFStringGetCString");
	SYM(cf, make, "CFStringCreateWithCString");
	SYM(cf, boolean, "CFBooleanGetValue");
	SYM(cf, number, "CFNumberGetValue");
	SYM(cf, type_of, "CFGetTypeID");
	SYM(cf, bool_type, "CFBooleanGetTypeID");
	SYM(cf, number_type, "CFNumberGetTypeID");
	SYM(cf, string_type, "CFStringGetTypeID");
	SYM(cf, release, "CFRelease");
#undef SYM
	iops.loaded = 1;
	return 0;
}

/* desc[key] as a boolean (1, 0) or a number; -1 when absent or another type. */
static int
iops_int(cf_ref desc, const char *key)
{
	cf_ref k = iops.make(NULL, key, CF_UTF8), v;
	int n = -1;

	if (k == NULL)
		return -1;
	v = iops.get(desc, k);
	iops.release(k);
	if (v == NULL)
		return -1;
	if (iops.type_of(v) == iops.bool_type())
		return iops.boolean(v) ? 1 : 0;
	if (iops.type_of(v) != iops.number_type() ||
	    !iops.number(v, CF_NUMBER_INT, &n))
		return -1;
	return n;
}

/* Whether desc[key] is the string want. */
static int
iops_is(cf_ref desc, const char *key, const char *want)
{
	cf_ref k = iops.make(NULL, key, CF_UTF8), v;
	char s[64];

	if (k == NULL)
		return 0;
	v = iops.get(desc, k);
	iops.release(k);
	return v != NULL && iops.type_of(v) == iops.string_type() &&
	    iops.cstring(v, s, (cf_index)sizeof s, CF_UTF8) &&
	    strcmp(s, want) == 0;
}

int
macos_power(char *buf, size_t len)
{
	struct macfacts_power p = { NULL, 0, -1, -1, -1 };
	char source[64];
	cf_ref info, list, type;
	cf_index i, n;
	int rc;

	if (len > 0)
		buf[0] = '\0';
	if (iops_load() != 0 || (info = iops.copy_info()) == NULL)
		return -1;
	type = iops.providing(info);
	if (type != NULL && iops.cstring(type, source,
	    (cf_index)sizeof source, CF_UTF8))
		p.source = source;
	list = iops.copy_list(info);
	n = list != NULL ? iops.count(list) : 0;
	for (i = 0; i < n && !p.battery; i++) {
		cf_ref d = iops.description(info, iops.at(list, i));
		int cur, max;

		if (d == NULL || !iops_is(d, "Type", "InternalBattery"))
			continue;
		p.battery = 1;
		p.charging = iops_int(d, "Is Charging");
		p.charged = iops_int(d, "Is Charged");
		cur = iops_int(d, "Current Capacity");
		max = iops_int(d, "Max Capacity");
		if (cur >= 0 && max > 0)
			p.percent = (int)((cur * 100L + max / 2) / max);
	}
	rc = macfacts_power_describe(&p, buf, len);
	if (list != NULL)
		iops.release(list);
	iops.release(info);
	return rc;
}

int
macos_notify_state(const char *name, uint64_t *v)
{
	int token, rc = -1;

	if (notify_register_check(name, &token) != NOTIFY_STATUS_OK)
		return -1;
	if (notify_get_state(token, v) == NOTIFY_STATUS_OK)
		rc = 0;
	notify_cancel(token);
	return rc;
}

int
macos_thermal(char *buf, size_t len)
{
	uint64_t v;
	const char *name;

	if (len > 0)
		buf[0] = '\0';
	if (macos_notify_state(kOSThermalNotificationPressureLevelName,
	    &v) != 0)
		return -1;
	/* By the SDK's constants: iOS numbers the same levels otherwise. */
	switch (v) {
	case kOSThermalPressureLevelNominal: name = "nominal"; break;
	case kOSThermalPressureLevelModerate: name = "moderate"; break;
	case kOSThermalPressureLevelHeavy: name = "heavy"; break;
	case kOSThermalPressureLevelTrapping: name = "trapping"; break;
	case kOSThermalPressureLevelSleeping: name = "sleeping"; break;
	default: name = NULL; break;
	}
	if (name != NULL)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "level %llu", (unsigned long long)v);
	return 0;
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

int
macos_feat_names(char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

int
macos_power(char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

int
macos_notify_state(const char *name, uint64_t *v)
{
	(void)name;
	(void)v;
	return -1;
}

int
macos_thermal(char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

#endif

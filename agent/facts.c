/*
 * Host facts.  Everything is read from the OS as it is; a fact that cannot
 * be read is reported as null so the database never holds a guess.
 */
#include "facts.h"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

/* First line of path into buf without the newline; 0 or -1. */
static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int rc = -1;

	if (f == NULL)
		return -1;
	if (fgets(buf, (int)len, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

#if !defined(__APPLE__)
/* Value of the first "key<tab>: value" line of /proc/cpuinfo (not on
 * macOS, which has sysctl and no /proc). */
static int
cpuinfo(const char *key, char *buf, size_t len)
{
	char line[8192];
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/cpuinfo", "r");
	int rc = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		char *colon;

		if (strncmp(line, key, klen) != 0 ||
		    (line[klen] != ' ' && line[klen] != '\t' &&
		    line[klen] != ':'))
			continue;
		colon = strchr(line, ':');
		if (colon == NULL)
			continue;
		colon++;
		while (*colon == ' ')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}
#endif

void
facts_libcrypto(char *buf, size_t len)
{
	Dl_info info, self;

	/* dladdr names the object that holds the function called here; the
	 * agent's own file when libcrypto was linked into it. */
	if (dladdr((void *)(uintptr_t)OpenSSL_version, &info) != 0 &&
	    dladdr((void *)(uintptr_t)facts_libcrypto, &self) != 0 &&
	    info.dli_fname != NULL && info.dli_fbase != self.dli_fbase)
		snprintf(buf, len, "%s (%s)", OpenSSL_version(OPENSSL_VERSION),
		    info.dli_fname);
	else
		snprintf(buf, len, "%s (linked statically)",
		    OpenSSL_version(OPENSSL_VERSION));
}

static void
add_string_or_null(cJSON *obj, const char *key, int ok, const char *value)
{
	if (ok)
		cJSON_AddStringToObject(obj, key, value);
	else
		cJSON_AddNullToObject(obj, key);
}

static const char *
compiler_string(void)
{
#if defined(__clang__)
	return "clang " __clang_version__;
#elif defined(__GNUC__)
	return "gcc " __VERSION__;
#else
	return "unknown";
#endif
}

void
facts_add(cJSON *obj, int cpu)
{
	struct utsname u;
	char buf[4096], path[128];
	int ok;

	if (uname(&u) == 0) {
		cJSON_AddStringToObject(obj, "arch", u.machine);
		cJSON_AddStringToObject(obj, "os", u.sysname);
		cJSON_AddStringToObject(obj, "kernel", u.release);
		cJSON_AddStringToObject(obj, "hostname", u.nodename);
	}

#if defined(__APPLE__)
	{
		size_t n = sizeof buf;

		ok = sysctlbyname("machdep.cpu.brand_string", buf, &n, NULL,
		    0) == 0;
		add_string_or_null(obj, "cpu_model", ok, buf);
		cJSON_AddNullToObject(obj, "cpu_flags");
	}
#else
	ok = cpuinfo("model name", buf, sizeof buf) == 0;
	if (!ok) {
		/* arm64 Linux names the core by implementer and part. */
		char part[64];

		if (cpuinfo("CPU implementer", buf, 64) == 0 &&
		    cpuinfo("CPU part", part, sizeof part) == 0) {
			size_t n = strlen(buf);

			snprintf(buf + n, sizeof buf - n, " part %s", part);
			ok = 1;
		}
	}
	add_string_or_null(obj, "cpu_model", ok, buf);
	ok = cpuinfo("flags", buf, sizeof buf) == 0 ||
	    cpuinfo("Features", buf, sizeof buf) == 0;
	add_string_or_null(obj, "cpu_flags", ok, buf);
#endif
	cJSON_AddNumberToObject(obj, "cores",
	    (double)sysconf(_SC_NPROCESSORS_ONLN));
	cJSON_AddStringToObject(obj, "compiler", compiler_string());
	cJSON_AddStringToObject(obj, "openssl",
	    OpenSSL_version(OPENSSL_VERSION));
	/* The capability masks libcrypto read when it loaded (seqorch run
	 * --openssl-cap), so the coordinator can see they arrived. */
	add_string_or_null(obj, "openssl_ia32cap",
	    getenv("OPENSSL_ia32cap") != NULL, getenv("OPENSSL_ia32cap"));
	add_string_or_null(obj, "openssl_armcap",
	    getenv("OPENSSL_armcap") != NULL, getenv("OPENSSL_armcap"));

	ok = 0;
	if (cpu >= 0) {
		snprintf(path, sizeof path,
		    "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
		    cpu);
		ok = read_line(path, buf, sizeof buf) == 0;
	}
	add_string_or_null(obj, "governor", ok, buf);
}

/*
 * Host facts.  Everything is read from the OS as it is; a fact that cannot
 * be read is reported as null so the database never holds a guess.
 */
#include "facts.h"

#include "osslcap.h"
#include "cpu.h"
#include "macos.h"
#include "protocol.h"
#include "sysfs.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif
/* agent/build.sh defines it when the compiler links libcrypto here. */
#if defined(SEQORCH_LIBCRYPTO)
#include <openssl/crypto.h>
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
/* Whether line is "key<blanks>: ..." */
static int
is_key(const char *line, const char *key)
{
	size_t klen = strlen(key);

	return strncmp(line, key, klen) == 0 && (line[klen] == ' ' ||
	    line[klen] == '\t' || line[klen] == ':');
}

/*
 * Value of "key<tab>: value" in /proc/cpuinfo (not on macOS, which has
 * sysctl and no /proc): from the block of cpu ("processor : N"), else the
 * first one.  A big.LITTLE host names each core's part in its own block,
 * and its cpu 0 is often a little one, not the core measured.
 */
static int
cpuinfo(int cpu, const char *key, char *buf, size_t len)
{
	char line[8192], path[1024], *colon;
	int rc = -1, block = -1;
	FILE *f;

	sysfs_path(path, sizeof path, "/proc/cpuinfo");
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		if (is_key(line, "processor")) {
			block = (int)strtol(colon + 1, NULL, 10);
			continue;
		}
		if (!is_key(line, key) || (rc == 0 && block != cpu))
			continue;
		colon++;
		while (*colon == ' ')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		rc = 0;
		if (cpu < 0 || block == cpu)
			break;
	}
	fclose(f);
	return rc;
}
#endif

#if !defined(SEQORCH_LIBCRYPTO)
void
facts_libcrypto(char *buf, size_t len)
{
	snprintf(buf, len, "none (the agent was built without libcrypto)");
}
#else
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
#endif

static void
add_string_or_null(struct jsonl *obj, const char *key, int ok, const char *value)
{
	if (ok)
		jsonl_str(obj, key, value);
	else
		jsonl_null(obj, key);
}

#if !defined(__APPLE__)
/* Whether every space-separated word of words is a word of list. */
static int
all_in(const char *words, const char *list)
{
	const char *w = words, *l;
	size_t n;

	for (;;) {
		w += strspn(w, " ");
		if ((n = strcspn(w, " ")) == 0)
			return 1;
		for (l = list;; l += strcspn(l, " \t")) {
			l += strspn(l, " \t");
			if (*l == '\0')
				return 0;
			if (strncmp(l, w, n) == 0 && (l[n] == '\0' ||
			    l[n] == ' ' || l[n] == '\t'))
				break;
		}
		w += n;
	}
}

/*
 * cpu_model, cpu_flags, hwcaps and facts_warning.  On AArch64 the hwcaps
 * are what the agent picks variants by, so they are the truth: a
 * /proc/cpuinfo without an AArch64 "Features" line (qemu-user passes the
 * machine's own through: an x86 model and "flags" on an aarch64 host), or
 * whose Features lack hwcaps, is not recorded as this host's, and
 * facts_warning says so.
 */
static void
linux_cpu(struct jsonl *obj, int cpu)
{
	char model[512], flags[4096], part[64], hw[2048], warn[512];
	int have_model, have_flags, have_hw, features, x86;

	have_hw = cpu_hwcap_names(hw, sizeof hw) == 0;
	have_model = cpuinfo(cpu, "model name", model, sizeof model) == 0;
	if (!have_model && cpuinfo(cpu, "CPU implementer", model, 64) == 0 &&
	    cpuinfo(cpu, "CPU part", part, sizeof part) == 0) {
		/* arm64 Linux names the core by implementer and part. */
		size_t n = strlen(model);

		snprintf(model + n, sizeof model - n, " part %s", part);
		have_model = 1;
	}
	features = cpuinfo(cpu, "Features", flags, sizeof flags) == 0;
	x86 = !features && cpuinfo(cpu, "flags", flags, sizeof flags) == 0;
	have_flags = features || x86;
	warn[0] = '\0';
	if (have_hw && !features) {
		snprintf(warn, sizeof warn, "/proc/cpuinfo has no aarch64 "
		    "\"Features\" line%s, so it is not this cpu's (qemu-user "
		    "shows the machine's own): cpu_model not recorded, "
		    "cpu_flags are the AT_HWCAP/AT_HWCAP2 bits",
		    x86 ? " but an x86 \"flags\" line" : "");
		have_model = 0;
	} else if (have_hw && !all_in(hw, flags)) {
		snprintf(warn, sizeof warn, "/proc/cpuinfo's \"Features\" "
		    "lack bits of AT_HWCAP/AT_HWCAP2, which the variants were "
		    "picked by: cpu_flags are the hwcaps");
	}
	add_string_or_null(obj, PROTO_F_CPU_MODEL, have_model, model);
	if (have_hw)
		jsonl_str(obj, PROTO_F_CPU_FLAGS, hw);
	else
		add_string_or_null(obj, PROTO_F_CPU_FLAGS, have_flags, flags);
	add_string_or_null(obj, PROTO_F_HWCAPS, have_hw, hw);
	add_string_or_null(obj, PROTO_F_FACTS_WARNING, warn[0] != '\0', warn);
}
#endif

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
facts_add(struct jsonl *obj, int cpu)
{
	struct utsname u;
	char buf[4096], path[128];
	int ok;

	if (uname(&u) == 0) {
		jsonl_str(obj, PROTO_F_ARCH, u.machine);
		jsonl_str(obj, PROTO_F_OS, u.sysname);
		jsonl_str(obj, PROTO_F_KERNEL, u.release);
		jsonl_str(obj, PROTO_F_HOSTNAME, u.nodename);
	}

#if defined(__APPLE__)
	{
		size_t n = sizeof buf;

		ok = sysctlbyname("machdep.cpu.brand_string", buf, &n, NULL,
		    0) == 0;
		add_string_or_null(obj, PROTO_F_CPU_MODEL, ok, buf);
		/* What cpu.c selects by, as hwcaps are on Linux: both. */
		ok = macos_feat_names(buf, sizeof buf) == 0;
		add_string_or_null(obj, PROTO_F_CPU_FLAGS, ok, buf);
		add_string_or_null(obj, PROTO_F_HWCAPS, ok, buf);
		jsonl_null(obj, PROTO_F_FACTS_WARNING);
	}
#else
	linux_cpu(obj, cpu);
#endif
	if (cpu_signature(buf, sizeof buf) == 0)
		jsonl_str(obj, PROTO_F_CPU_SIGNATURE, buf);
	ok = macos_power(buf, sizeof buf) == 0;
	add_string_or_null(obj, PROTO_F_POWER, ok, buf);
	ok = macos_thermal(buf, sizeof buf) == 0;
	add_string_or_null(obj, PROTO_F_THERMAL_PRESSURE, ok, buf);
	jsonl_num(obj, PROTO_F_CORES,
	    (double)sysconf(_SC_NPROCESSORS_ONLN));
	jsonl_str(obj, PROTO_F_COMPILER, compiler_string());
#if defined(SEQORCH_LIBCRYPTO)
	jsonl_str(obj, PROTO_F_OPENSSL, OpenSSL_version(OPENSSL_VERSION));
#else
	jsonl_null(obj, PROTO_F_OPENSSL);
#endif
	/* The capability masks libcrypto read when it loaded (seqorch run
	 * --openssl-cap), so the coordinator can see they arrived. */
	add_string_or_null(obj, PROTO_F_OPENSSL_IA32CAP,
	    getenv("OPENSSL_ia32cap") != NULL, getenv("OPENSSL_ia32cap"));
	add_string_or_null(obj, PROTO_F_OPENSSL_ARMCAP,
	    getenv("OPENSSL_armcap") != NULL, getenv("OPENSSL_armcap"));
	/* --openssl-cap-clear (osslcap.h): the masks read, cleared, in use. */
	if (getenv(OSSLCAP_ENV_DETECTED) != NULL) {
		char applied[256];

		osslcap_applied(applied, sizeof applied);
		jsonl_str(obj, PROTO_F_OPENSSL_CAP_DETECTED,
		    getenv(OSSLCAP_ENV_DETECTED));
		add_string_or_null(obj, PROTO_F_OPENSSL_CAP_CLEARED,
		    getenv(OSSLCAP_ENV_CLEARED) != NULL,
		    getenv(OSSLCAP_ENV_CLEARED));
		jsonl_str(obj, PROTO_F_OPENSSL_CAP_APPLIED,
		    applied);
	}

	ok = 0;
	if (cpu >= 0) {
		snprintf(path, sizeof path,
		    "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
		    cpu);
		ok = read_line(path, buf, sizeof buf) == 0;
	}
	add_string_or_null(obj, PROTO_F_GOVERNOR, ok, buf);
}

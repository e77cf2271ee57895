/* --openssl-cap-clear: clear named OpenSSL capability bits, keep the rest. */
#include "osslcap.h"

#include "openssl-caps.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WORDS 4

/* Only an agent built with libcrypto (agent/build.sh) has masks to clear. */
#if defined(SEQORCH_LIBCRYPTO)
#include <openssl/crypto.h>

#if defined(__aarch64__) || defined(_M_ARM64)
#define OSSLCAP_ARCH "aarch64"
#define OSSLCAP_VAR "OPENSSL_armcap"
#elif defined(__x86_64__) || defined(_M_X64)
#define OSSLCAP_ARCH "x86_64"
#define OSSLCAP_VAR "OPENSSL_ia32cap"
#endif
#endif

void
osslcap_applied(char *buf, size_t len)
{
#if defined(SEQORCH_LIBCRYPTO)
	const char *s = OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS), *eq;

	buf[0] = '\0';
	if (s == NULL || (eq = strchr(s, '=')) == NULL)
		return;
	eq++;
	snprintf(buf, len, "%.*s", (int)strcspn(eq, " "), eq);
#else
	snprintf(buf, len, "none (the agent was built without libcrypto)");
#endif
}

#if defined(OSSLCAP_ARCH)
/* "0x..:0x.." into words; how many, or -1. */
static int
parse_words(const char *s, uint64_t w[MAX_WORDS])
{
	char *end;
	int n = 0;

	while (n < MAX_WORDS) {
		errno = 0;
		w[n++] = strtoull(s, &end, 0);
		if (errno != 0 || end == s)
			return -1;
		if (*end != ':')
			return *end == '\0' ? n : -1;
		s = end + 1;
	}
	return -1;
}

static void
format_words(const uint64_t *w, int n, char *buf, size_t len)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s0x%llx",
		    i ? ":" : "", (unsigned long long)w[i]);
}
#endif

int
osslcap_clear(const char *names, char **argv, char *err, size_t len)
{
#if defined(OSSLCAP_ARCH)
	uint64_t det[MAX_WORDS], clr[MAX_WORDS] = { 0 };
	char detected[128], cleared[128], applied[128];
	const struct openssl_cap_bit *b;
	const char *p = names;
	int n, i;

	if (getenv(OSSLCAP_ENV_DETECTED) != NULL)
		return 0;
	osslcap_applied(detected, sizeof detected);
	if ((n = parse_words(detected, det)) < 0) {
		snprintf(err, len, "cannot read the capability mask OpenSSL "
		    "detected from \"%s\"", OPENSSL_info(
		    OPENSSL_INFO_CPU_SETTINGS));
		return -1;
	}
	while (*p) {
		size_t k = strcspn(p, ",");

		b = openssl_cap_find(OSSLCAP_ARCH, p, k);
		if (b == NULL || (int)b->word >= n) {
			snprintf(err, len, "--openssl-cap-clear: \"%.*s\" is not "
			    "an OpenSSL capability of %s (kernels/"
			    "openssl-caps.h)", (int)k, p, OSSLCAP_ARCH);
			return -1;
		}
		clr[b->word] |= (uint64_t)1 << b->bit;
		p += k + (p[k] == ',');
	}
	format_words(clr, n, cleared, sizeof cleared);
	for (i = 0; i < n; i++)
		det[i] &= ~clr[i];
	format_words(det, n, applied, sizeof applied);
	if (setenv(OSSLCAP_VAR, applied, 1) != 0 ||
	    setenv(OSSLCAP_ENV_DETECTED, detected, 1) != 0 ||
	    setenv(OSSLCAP_ENV_CLEARED, cleared, 1) != 0) {
		snprintf(err, len, "setenv: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	/* Linux names the running binary; elsewhere argv[0] is its path. */
	if (access("/proc/self/exe", X_OK) == 0)
		execv("/proc/self/exe", argv);
	execv(argv[0], argv);
	snprintf(err, len, "--openssl-cap-clear: cannot run \"%s\" again: %s",
	    argv[0], strerror(errno));
	return -1;
#else
	(void)names;
	(void)argv;
	snprintf(err, len, "--openssl-cap-clear: no OpenSSL capability names "
	    "for this architecture, or an agent without libcrypto");
	return -1;
#endif
}

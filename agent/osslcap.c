/* --openssl-cap-clear: clear named OpenSSL capability bits, keep the rest. */
#include "osslcap.h"

#include "openssl-caps.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The words of a mask OPENSSL_info prints: OpenSSL 3.0 prints two
 * ia32cap words, 3.5 five (crypto/info.c), arm one.  Capability names
 * live in the first words only (kernels/openssl-caps.h), so words past
 * these are carried over as they were, whatever a later release adds.
 */
#define MAX_WORDS 5

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

/*
 * "0x..:0x..[:...]" into its first MAX_WORDS words; *rest is what follows
 * them ("" or the text after their ':').  How many, or -1.
 */
static int
parse_words(const char *s, uint64_t w[MAX_WORDS], const char **rest)
{
	char *end;
	int n = 0;

	for (;;) {
		errno = 0;
		w[n++] = strtoull(s, &end, 0);
		if (errno != 0 || end == s || (*end != ':' && *end != '\0'))
			return -1;
		*rest = end + (*end == ':');
		if (*end == '\0' || n == MAX_WORDS)
			return n;
		s = end + 1;
	}
}

/* The words, then rest as it was; "" when it does not fit in len. */
static void
format_words(const uint64_t *w, int n, const char *rest, char *buf,
    size_t len)
{
	size_t at = 0;
	int i, k;

	for (i = 0; i < n; i++) {
		k = snprintf(buf + at, len - at, "%s0x%llx", i ? ":" : "",
		    (unsigned long long)w[i]);
		if (k < 0 || (size_t)k >= len - at)
			goto too_long;
		at += (size_t)k;
	}
	if (*rest == '\0')
		return;
	k = snprintf(buf + at, len - at, ":%s", rest);
	if (k >= 0 && (size_t)k < len - at)
		return;
too_long:
	buf[0] = '\0';
}

int
osslcap_mask(const char *arch, const char *detected, const char *names,
    char *cleared, char *applied, size_t len, char *err, size_t errlen)
{
	uint64_t det[MAX_WORDS], clr[MAX_WORDS] = { 0 };
	const struct openssl_cap_bit *b;
	const char *p = names, *rest;
	int n, i;

	if ((n = parse_words(detected, det, &rest)) < 0) {
		snprintf(err, errlen, "cannot read the capability mask "
		    "OpenSSL detected from \"%s\"", detected);
		return -1;
	}
	while (*p) {
		size_t k = strcspn(p, ",");

		if ((b = openssl_cap_find(arch, p, k)) == NULL) {
			snprintf(err, errlen, "--openssl-cap-clear: \"%.*s\" is "
			    "not an OpenSSL capability of %s (kernels/"
			    "openssl-caps.h)", (int)k, p, arch);
			return -1;
		}
		if ((int)b->word >= n) {
			snprintf(err, errlen, "--openssl-cap-clear: \"%.*s\" is "
			    "in word %u of the mask, and the one OpenSSL "
			    "detected, \"%s\", has %d", (int)k, p, b->word,
			    detected, n);
			return -1;
		}
		clr[b->word] |= (uint64_t)1 << b->bit;
		p += k + (p[k] == ',');
	}
	for (i = 0; i < n; i++)
		det[i] &= ~clr[i];
	format_words(clr, n, "", cleared, len);
	format_words(det, n, rest, applied, len);
	if (cleared[0] == '\0' || applied[0] == '\0') {
		snprintf(err, errlen, "--openssl-cap-clear: the mask OpenSSL "
		    "detected, \"%s\", is too long", detected);
		return -1;
	}
	return 0;
}

int
osslcap_clear(const char *names, char **argv, char *err, size_t len)
{
#if !defined(SEQORCH_LIBCRYPTO)
	/* Nothing here reads OpenSSL's bits: the facts' null openssl tells
	 * the coordinator, which records the control as skipped. */
	(void)names;
	(void)argv;
	(void)err;
	(void)len;
	return 0;
#elif defined(OSSLCAP_ARCH)
	char detected[256], cleared[256], applied[256];

	if (getenv(OSSLCAP_ENV_DETECTED) != NULL)
		return 0;
	osslcap_applied(detected, sizeof detected);
	if (osslcap_mask(OSSLCAP_ARCH, detected, names, cleared, applied,
	    sizeof applied, err, len) != 0)
		return -1;
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
	    "for this architecture");
	return -1;
#endif
}

/*
 * Known-answer check of every sha3 variant compiled into this binary.
 *
 * Links only kernels/ sources and agent/cpu.c (no cJSON, no OpenSSL
 * required), so it cross-builds statically for aarch64 and runs under
 * qemu.  Variants are referenced weakly: a variant whose folder was left
 * out of the build (other architecture, no libcrypto) is reported as
 * "absent", one whose CPU features are missing as "skip" and is never
 * called.  The caller (tests/test_20_kernels.py) decides which variants
 * must be present and which may be skipped.
 *
 *   check [-e STEPS=HEX]... [-l] [variant...]
 *
 * Every variant: kernel->hash on study_sha3.kat_msg, chains of 0, 1, 2 and
 * 1000 steps (also 1000 as 1 + 999 to catch state carried between calls),
 * and with -l the 1M and 10M chains.  Expected chain digests default to
 * ../shared/vectors/chains.json's and can be overridden with -e.
 * Output: one line per check, "ok", "FAIL", "skip" or "absent" first.
 * Naming variants checks only those.  Exit status 1 if any check failed,
 * 2 on a usage error or an unknown variant name.
 */
#include "cpu.h"
#include "kernel.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct study study_sha3;

#define WEAK __attribute__((weak))
extern const struct kernel kernel_sha3_c_wrapped WEAK;
extern const struct kernel kernel_sha3_c_fused WEAK;
extern const struct kernel kernel_sha3_c_unrolled WEAK;
extern const struct kernel kernel_sha3_openssl_evp WEAK;
extern const struct kernel kernel_sha3_avx2_wrapped WEAK;
extern const struct kernel kernel_sha3_avx2_fused WEAK;
extern const struct kernel kernel_sha3_avx512_wrapped WEAK;
extern const struct kernel kernel_sha3_avx512_fused WEAK;
extern const struct kernel kernel_sha3_avx512_unrolled WEAK;
extern const struct kernel kernel_sha3_arm_sha3_wrapped WEAK;
extern const struct kernel kernel_sha3_arm_sha3_fused WEAK;
extern const struct kernel kernel_sha3_arm_sha3_unrolled WEAK;
extern const struct kernel kernel_sha3_arm_scalar WEAK;

/* Names are spelled out because an absent weak symbol has no name. */
static const struct {
	const char *name;
	const struct kernel *k;
} variants[] = {
	{ "c-wrapped", &kernel_sha3_c_wrapped },
	{ "c-fused", &kernel_sha3_c_fused },
	{ "c-unrolled", &kernel_sha3_c_unrolled },
	{ "openssl-evp", &kernel_sha3_openssl_evp },
	{ "avx2-wrapped", &kernel_sha3_avx2_wrapped },
	{ "avx2-fused", &kernel_sha3_avx2_fused },
	{ "avx512-wrapped", &kernel_sha3_avx512_wrapped },
	{ "avx512-fused", &kernel_sha3_avx512_fused },
	{ "avx512-unrolled", &kernel_sha3_avx512_unrolled },
	{ "arm-sha3-wrapped", &kernel_sha3_arm_sha3_wrapped },
	{ "arm-sha3-fused", &kernel_sha3_arm_sha3_fused },
	{ "arm-sha3-unrolled", &kernel_sha3_arm_sha3_unrolled },
	{ "arm-scalar", &kernel_sha3_arm_scalar },
};

#define MAX_EXPECT 16

static struct expect {
	uint64_t steps;
	char hex[2 * KERNEL_MAX_STATE + 1];
	int longrun;		/* only with -l */
} expects[MAX_EXPECT] = {
	{ 0, "0000000000000000000000000000000000000000000000000000000000000000",
	    0 },
	{ 1, "9e6291970cb44dd94008c79bcaf9d86f18b4b49ba5b2a04781db7199ed3b9e4e",
	    0 },
	{ 2, "3ffcf92d9c820def681c81ab1dffa44c3166539addb445c7731921af69bce8c7",
	    0 },
	{ 1000,
	    "52cf48e88ce4dea40f272b6aaf083675ade26504a0129f51ec30204a2fdb1c5b",
	    0 },
	{ 1000000,
	    "dc200976acbc96bee5043f096d283965a70507175db948839c406d90e4c1d61d",
	    1 },
	{ 10000000,
	    "19d95125b30564cf757302603b2ad4f88bae3b88ec8aaabe852378d5f9b4e737",
	    1 },
};
static int nexpects = 6;

static void
to_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* -e STEPS=HEX replaces the expectation for STEPS or adds one. */
static int
parse_expect(const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *end;
	uint64_t steps;
	int i;

	if (eq == NULL || strlen(eq + 1) != 2 * study_sha3.state_len) {
		fprintf(stderr, "check: bad -e \"%s\" (want STEPS=%zu hex "
		    "digits)\n", arg, 2 * study_sha3.state_len);
		return -1;
	}
	steps = strtoull(arg, &end, 10);
	if (end != eq) {
		fprintf(stderr, "check: bad step count in -e \"%s\"\n", arg);
		return -1;
	}
	for (i = 0; i < nexpects; i++)
		if (expects[i].steps == steps)
			break;
	if (i == nexpects) {
		if (nexpects == MAX_EXPECT) {
			fprintf(stderr, "check: too many -e options\n");
			return -1;
		}
		nexpects++;
	}
	expects[i].steps = steps;
	snprintf(expects[i].hex, sizeof expects[i].hex, "%s", eq + 1);
	expects[i].longrun = steps > 100000;
	return 0;
}

static int
check_chain(const struct kernel *k, void *ctx, const struct expect *e,
    int split)
{
	uint8_t x[KERNEL_MAX_STATE] = { 0 };
	char hex[2 * KERNEL_MAX_STATE + 1];
	int rc;

	/* split: the same chain in two calls, 1 step then the rest */
	if (split && e->steps > 1)
		rc = k->chain(ctx, x, 1) || k->chain(ctx, x, e->steps - 1);
	else
		rc = k->chain(ctx, x, e->steps);
	to_hex(x, study_sha3.state_len, hex);
	if (rc != 0) {
		printf("FAIL sha3/%s chain %" PRIu64 "%s: returned error\n",
		    k->variant, e->steps, split ? " split" : "");
		return -1;
	}
	if (strcmp(hex, e->hex) != 0) {
		printf("FAIL sha3/%s chain %" PRIu64 "%s: got %s want %s\n",
		    k->variant, e->steps, split ? " split" : "", hex, e->hex);
		return -1;
	}
	printf("ok sha3/%s chain %" PRIu64 "%s %s\n", k->variant, e->steps,
	    split ? " split" : "", hex);
	return 0;
}

static int
check_kernel(const struct kernel *k, int longrun)
{
	uint8_t out[KERNEL_MAX_STATE];
	char hex[2 * KERNEL_MAX_STATE + 1];
	void *ctx = NULL;
	int i, bad = 0;

	if (k->setup != NULL && k->setup(&ctx) != 0) {
		printf("FAIL sha3/%s setup\n", k->variant);
		return -1;
	}
	if (k->hash(ctx, (const uint8_t *)study_sha3.kat_msg,
	    strlen(study_sha3.kat_msg), out) != 0) {
		printf("FAIL sha3/%s kat: returned error\n", k->variant);
		bad = 1;
	} else {
		to_hex(out, study_sha3.state_len, hex);
		if (strcmp(hex, study_sha3.kat_hex) != 0) {
			printf("FAIL sha3/%s kat: got %s want %s\n",
			    k->variant, hex, study_sha3.kat_hex);
			bad = 1;
		} else
			printf("ok sha3/%s kat %s\n", k->variant, hex);
	}
	for (i = 0; i < nexpects; i++) {
		if (expects[i].longrun && !longrun)
			continue;
		if (check_chain(k, ctx, &expects[i], 0) != 0)
			bad = 1;
		if (!expects[i].longrun && expects[i].steps > 1 &&
		    check_chain(k, ctx, &expects[i], 1) != 0)
			bad = 1;
	}
	if (k->teardown != NULL)
		k->teardown(ctx);
	return bad ? -1 : 0;
}

int
main(int argc, char **argv)
{
	unsigned have = cpu_features();
	char names[128];
	int i, longrun = 0, bad = 0, nonly = 0;
	const char *only[sizeof variants / sizeof variants[0]];
	size_t v;

	/* a crashing variant must not take the lines before it along */
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-l") == 0)
			longrun = 1;
		else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc) {
			if (parse_expect(argv[++i]) != 0)
				return 2;
		} else if (argv[i][0] != '-') {
			for (v = 0; v < sizeof variants / sizeof variants[0]; v++)
				if (strcmp(variants[v].name, argv[i]) == 0)
					break;
			if (v == sizeof variants / sizeof variants[0]) {
				fprintf(stderr, "check: unknown variant \"%s\"\n",
				    argv[i]);
				return 2;
			}
			only[nonly++] = variants[v].name;
		} else {
			fprintf(stderr, "usage: check [-e STEPS=HEX]... [-l] "
			    "[variant...]\n");
			return 2;
		}
	}
	cpu_feature_names(have, names, sizeof names);
	printf("cpu features: %s\n", names[0] ? names : "none");
	for (v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		const struct kernel *k = variants[v].k;
		unsigned missing;
		int j;

		for (j = 0; j < nonly; j++)
			if (strcmp(only[j], variants[v].name) == 0)
				break;
		if (nonly > 0 && j == nonly)
			continue;

		if (k == NULL) {
			printf("absent sha3/%s\n", variants[v].name);
			continue;
		}
		if (strcmp(k->variant, variants[v].name) != 0 ||
		    strcmp(k->study, "sha3") != 0) {
			printf("FAIL sha3/%s: struct names %s/%s\n",
			    variants[v].name, k->study, k->variant);
			bad = 1;
			continue;
		}
		missing = k->features & ~have;
		if (missing != 0) {
			cpu_feature_names(missing, names, sizeof names);
			printf("skip sha3/%s: cpu lacks %s\n", k->variant,
			    names);
			continue;
		}
		if (check_kernel(k, longrun) != 0)
			bad = 1;
	}
	return bad;
}

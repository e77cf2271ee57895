/*
 * Known-answer check of every variant of one study compiled into this
 * binary, for tests/test_20_kernels.py.
 *
 * Links only kernels/ sources, the table kernels/registry.sh generates for
 * the target, agent/registry.c and agent/cpu.c (no cJSON; OpenSSL only when
 * the variants that need it are in the table), so it cross-builds
 * statically for aarch64 and runs under qemu.  A variant whose CPU
 * features are missing is reported as "skip" and never called.
 *
 *   check -S STUDY [-s SEED] [-e STEPS=HEX]... [variant...]
 *
 * Every variant: kernel->hash on the study's kat_msg (when it has one), and
 * the chain of each -e STEPS from the seed (the study's default unless -s),
 * also as 1 + (STEPS - 1) steps to catch state carried between calls (for
 * STEPS up to 100000).  The expected digests come from the caller, which
 * computes them independently.  Output: one line per check, "ok", "FAIL"
 * or "skip" first, then STUDY/VARIANT.  Naming variants checks only those.
 * Exit status 1 if any check failed, 2 on a usage error or an unknown name.
 */
#include "cpu.h"
#include "kernel.h"
#include "registry.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPECT 16
#define SPLIT_MAX 100000

static struct expect {
	uint64_t steps;
	char hex[2 * KERNEL_MAX_STATE + 1];
} expects[MAX_EXPECT];
static int nexpects;

static const char *study_name;
static const struct study *st;
static uint8_t seed[KERNEL_MAX_STATE];

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

static int
from_hex(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	if (strlen(hex) != 2 * n || strspn(hex, "0123456789abcdef") != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* -e STEPS=HEX: one more expected chain digest. */
static int
parse_expect(const char *arg)
{
	const char *eq = strchr(arg, '=');
	uint8_t tmp[KERNEL_MAX_STATE];
	char *end;

	if (nexpects == MAX_EXPECT) {
		fprintf(stderr, "check: too many -e options\n");
		return -1;
	}
	if (eq == NULL || from_hex(eq + 1, tmp, st->state_len) != 0) {
		fprintf(stderr, "check: bad -e \"%s\" (want STEPS=%zu lowercase "
		    "hex digits)\n", arg, 2 * st->state_len);
		return -1;
	}
	expects[nexpects].steps = strtoull(arg, &end, 10);
	if (end != eq || *arg == '-') {
		fprintf(stderr, "check: bad step count in -e \"%s\"\n", arg);
		return -1;
	}
	snprintf(expects[nexpects].hex, sizeof expects[nexpects].hex, "%s",
	    eq + 1);
	nexpects++;
	return 0;
}

static int
check_chain(const struct registry_kernel *r, void *ctx,
    const struct expect *e, int split)
{
	uint8_t x[KERNEL_MAX_STATE];
	char hex[2 * KERNEL_MAX_STATE + 1];
	int rc;

	memcpy(x, seed, sizeof x);
	if (split)
		rc = r->k->chain(ctx, x, 1) || r->k->chain(ctx, x, e->steps - 1);
	else
		rc = r->k->chain(ctx, x, e->steps);
	to_hex(x, st->state_len, hex);
	if (rc != 0) {
		printf("FAIL %s/%s chain %" PRIu64 "%s: returned error\n",
		    r->study, r->variant, e->steps, split ? " split" : "");
		return -1;
	}
	if (strcmp(hex, e->hex) != 0) {
		printf("FAIL %s/%s chain %" PRIu64 "%s: got %s want %s\n",
		    r->study, r->variant, e->steps, split ? " split" : "", hex,
		    e->hex);
		return -1;
	}
	printf("ok %s/%s chain %" PRIu64 "%s %s\n", r->study, r->variant,
	    e->steps, split ? " split" : "", hex);
	return 0;
}

static int
check_kat(const struct registry_kernel *r, void *ctx)
{
	uint8_t out[KERNEL_MAX_STATE];
	char hex[2 * KERNEL_MAX_STATE + 1];

	if (st->kat_msg == NULL)
		return 0;
	if (r->k->hash == NULL) {
		printf("FAIL %s/%s kat: no hash hook\n", r->study, r->variant);
		return -1;
	}
	if (r->k->hash(ctx, (const uint8_t *)st->kat_msg, strlen(st->kat_msg),
	    out) != 0) {
		printf("FAIL %s/%s kat: returned error\n", r->study,
		    r->variant);
		return -1;
	}
	to_hex(out, st->state_len, hex);
	if (strcmp(hex, st->kat_hex) != 0) {
		printf("FAIL %s/%s kat: got %s want %s\n", r->study, r->variant,
		    hex, st->kat_hex);
		return -1;
	}
	printf("ok %s/%s kat %s\n", r->study, r->variant, hex);
	return 0;
}

static int
check_kernel(const struct registry_kernel *r)
{
	void *ctx = NULL;
	int i, bad = 0;

	if (r->k->setup != NULL && r->k->setup(&ctx) != 0) {
		printf("FAIL %s/%s setup\n", r->study, r->variant);
		return -1;
	}
	if (check_kat(r, ctx) != 0)
		bad = 1;
	for (i = 0; i < nexpects; i++) {
		if (check_chain(r, ctx, &expects[i], 0) != 0)
			bad = 1;
		if (expects[i].steps > 1 && expects[i].steps <= SPLIT_MAX &&
		    check_chain(r, ctx, &expects[i], 1) != 0)
			bad = 1;
	}
	if (r->k->teardown != NULL)
		r->k->teardown(ctx);
	return bad ? -1 : 0;
}

static int
usage(void)
{
	fprintf(stderr, "usage: check -S STUDY [-s SEED] [-e STEPS=HEX]... "
	    "[variant...]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const struct registry_study *rs;
	unsigned have = cpu_features();
	const char *seed_hex = NULL;
	char names[128];
	int i, j, first, bad = 0;
	size_t v;

	/* a crashing variant must not take the lines before it along */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || strcmp(argv[1], "-S") != 0)
		return usage();
	study_name = argv[2];
	if ((rs = registry_study(study_name)) == NULL) {
		fprintf(stderr, "check: unknown study \"%s\"\n", study_name);
		return 2;
	}
	st = rs->study;
	for (i = 3; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-e") == 0 && i + 1 < argc) {
			if (parse_expect(argv[++i]) != 0)
				return 2;
		} else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			seed_hex = argv[++i];
		else
			return usage();
	}
	if (from_hex(seed_hex ? seed_hex : st->seed_hex, seed,
	    st->state_len) != 0) {
		fprintf(stderr, "check: bad seed\n");
		return 2;
	}
	first = i;
	for (j = first; j < argc; j++) {
		for (v = 0; registry_kernels[v].study != NULL; v++)
			if (strcmp(registry_kernels[v].study, study_name) == 0 &&
			    strcmp(registry_kernels[v].variant, argv[j]) == 0)
				break;
		if (registry_kernels[v].study == NULL) {
			fprintf(stderr, "check: unknown variant \"%s\"\n",
			    argv[j]);
			return 2;
		}
	}
	cpu_feature_names(have, names, sizeof names);
	printf("cpu features: %s\n", names[0] ? names : "none");
	for (v = 0; registry_kernels[v].study != NULL; v++) {
		const struct registry_kernel *r = &registry_kernels[v];
		unsigned missing;

		if (strcmp(r->study, study_name) != 0)
			continue;
		for (j = first; j < argc; j++)
			if (strcmp(argv[j], r->variant) == 0)
				break;
		if (first < argc && j == argc)
			continue;
		missing = r->k->features & ~have;
		if (missing != 0) {
			cpu_feature_names(missing, names, sizeof names);
			printf("skip %s/%s: cpu lacks %s\n", r->study,
			    r->variant, names);
			continue;
		}
		if (check_kernel(r) != 0)
			bad = 1;
	}
	return bad;
}

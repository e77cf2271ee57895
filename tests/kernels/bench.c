/*
 * Side-by-side rates of one study's variants in one process, for tuning
 * kernels without the agent (`make kernel-bench` builds it from the table
 * kernels/registry.sh generates).  Samples alternate the variant order
 * (forward, then backward) so drifting machine load hits every variant
 * alike.
 *
 *   kernel-bench -S STUDY [-n STEPS] [-s SAMPLES] [-c CPU] [variant...]
 *
 * Prints per variant the median steps/s, ns/step, cycles/step at the
 * dependent-add calibrated clock, the ratio to the study's control variant
 * when it is in the run, and the fastest sample (on a shared machine many
 * short samples and their minimum say more than a few long ones).  Every
 * sample's digest must equal the first variant's, or the run fails; the
 * common digest is printed last, to be checked independently.
 */
#include "cpu.h"
#include "kernel.h"
#include "pin.h"
#include "registry.h"
#include "timing.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NALL 64
#define MAX_SAMPLES 2000

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const struct registry_kernel *
find(const char *study, const char *variant)
{
	size_t j;

	for (j = 0; registry_kernels[j].study != NULL; j++)
		if (strcmp(registry_kernels[j].study, study) == 0 &&
		    strcmp(registry_kernels[j].variant, variant) == 0)
			return &registry_kernels[j];
	return NULL;
}

int
main(int argc, char **argv)
{
	const struct registry_kernel *run[NALL];
	static double ns[NALL][MAX_SAMPLES];
	const struct registry_study *rs;
	const struct study *st;
	void *ctx[NALL];
	double med[NALL];
	uint8_t seed[KERNEL_MAX_STATE] = { 0 }, ref[KERNEL_MAX_STATE];
	char hex[2 * KERNEL_MAX_STATE + 1];
	uint64_t steps = 1000000;
	int samples = 5, cpu = 1, nrun = 0, i, s, control = -1, have_ref = 0;
	int pick_all;
	size_t j;
	double mhz;
	char why[128];

	if (argc < 3 || strcmp(argv[1], "-S") != 0 ||
	    (rs = registry_study(argv[2])) == NULL) {
		fprintf(stderr, "usage: kernel-bench -S STUDY [-n STEPS] "
		    "[-s SAMPLES] [-c CPU] [variant...]\n");
		return 2;
	}
	st = rs->study;
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			steps = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			samples = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			cpu = (int)strtol(argv[++i], NULL, 10);
		else if (nrun < NALL && find(rs->name, argv[i]) != NULL)
			run[nrun++] = find(rs->name, argv[i]);
		else {
			fprintf(stderr, "bench: no variant \"%s\"\n", argv[i]);
			return 2;
		}
	}
	if (samples < 1 || samples > MAX_SAMPLES)
		samples = 5;
	for (i = 0; i < nrun; i++) {
		unsigned lack = run[i]->k->features & ~cpu_features();

		if (lack != 0) {
			cpu_feature_names(lack, why, sizeof why);
			fprintf(stderr, "bench: variant \"%s\" needs %s, which "
			    "this cpu lacks\n", run[i]->variant, why);
			return 2;
		}
	}
	pick_all = nrun == 0;
	for (j = 0; pick_all && registry_kernels[j].study != NULL; j++)
		if (nrun < NALL &&
		    strcmp(registry_kernels[j].study, rs->name) == 0 &&
		    (registry_kernels[j].k->features & ~cpu_features()) == 0)
			run[nrun++] = &registry_kernels[j];
	for (j = 0; j < st->state_len; j++) {
		unsigned v;

		sscanf(st->seed_hex + 2 * j, "%2x", &v);
		seed[j] = (uint8_t)v;
	}
	if (pin_to_cpu(cpu, why, sizeof why) != 0)
		fprintf(stderr, "bench: not pinned: %s\n", why);
	for (i = 0; i < nrun; i++) {
		ctx[i] = NULL;
		if (run[i]->k->setup != NULL && run[i]->k->setup(&ctx[i]) != 0) {
			fprintf(stderr, "bench: %s setup failed\n",
			    run[i]->variant);
			return 1;
		}
		if (st->control != NULL &&
		    strcmp(run[i]->variant, st->control) == 0)
			control = i;
	}
	mhz = timing_calibrate_mhz();
	for (s = 0; s < samples; s++) {
		int k;

		for (k = 0; k < nrun; k++) {
			int v = s % 2 ? nrun - 1 - k : k;
			uint8_t x[KERNEL_MAX_STATE];
			uint64_t t0, t1;

			memcpy(x, seed, sizeof x);
			t0 = timing_now_ns();
			if (run[v]->k->chain(ctx[v], x, steps) != 0)
				return 1;
			t1 = timing_now_ns();
			ns[v][s] = (double)(t1 - t0);
			if (!have_ref) {
				memcpy(ref, x, sizeof ref);
				have_ref = 1;
			} else if (memcmp(ref, x, st->state_len) != 0) {
				fprintf(stderr, "bench: %s digest differs\n",
				    run[v]->variant);
				return 1;
			}
		}
	}
	mhz = (mhz + timing_calibrate_mhz()) / 2;
	printf("%s: %" PRIu64 " %s x %d samples, clock %.0f MHz "
	    "(calibrated)\n", rs->name, steps, st->unit_plural, samples, mhz);
	for (i = 0; i < nrun; i++) {
		qsort(ns[i], (size_t)samples, sizeof ns[i][0], cmp_double);
		med[i] = ns[i][samples / 2] / (double)steps;
	}
	for (i = 0; i < nrun; i++) {
		printf("%-18s %8.3f M/s %8.2f ns %7.1f cyc", run[i]->variant,
		    1e3 / med[i], med[i], med[i] * mhz / 1e3);
		if (control >= 0)
			printf("  x%.2f %s", med[control] / med[i],
			    st->control);
		printf("   min %.2f ns %.1f cyc, max %.2f ns\n",
		    ns[i][0] / (double)steps,
		    ns[i][0] / (double)steps * mhz / 1e3,
		    ns[i][samples - 1] / (double)steps);
	}
	for (i = 0; i < nrun; i++)
		if (run[i]->k->teardown != NULL)
			run[i]->k->teardown(ctx[i]);
	for (j = 0; have_ref && j < st->state_len; j++)
		snprintf(hex + 2 * j, 3, "%02x", ref[j]);
	if (have_ref)
		printf("digest %s\n", hex);
	return 0;
}

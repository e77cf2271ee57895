/*
 * Side-by-side rates of the sha3 variants in one process, for tuning
 * kernels without the agent.  Samples alternate the variant order (forward,
 * then backward) so drifting machine load hits every variant alike.
 *
 *   bench [-n STEPS] [-s SAMPLES] [-c CPU] [variant...]
 *
 * Prints per variant the median hashes/s, ns/hash, cycles/hash at the
 * dependent-add calibrated clock, the ratio to openssl-evp when that
 * variant is in the run, and the fastest sample (on a shared machine many
 * short samples and their minimum say more than a few long ones).  Every
 * sample's digest must equal the first variant's, or the run fails.
 */
#include "cpu.h"
#include "kernel.h"
#include "pin.h"
#include "timing.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const struct kernel *const all[] = {
	&kernel_sha3_openssl_evp, &kernel_sha3_c_wrapped, &kernel_sha3_c_fused,
	&kernel_sha3_c_unrolled, &kernel_sha3_avx2_wrapped,
	&kernel_sha3_avx2_fused, &kernel_sha3_avx512_wrapped,
	&kernel_sha3_avx512_fused, &kernel_sha3_avx512_unrolled,
	&kernel_sha3_arm_sha3_wrapped, &kernel_sha3_arm_sha3_fused,
	&kernel_sha3_arm_sha3_unrolled, &kernel_sha3_arm_scalar,
};
#define NALL (sizeof all / sizeof all[0])
#define MAX_SAMPLES 2000

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	const struct kernel *run[NALL];
	static double ns[NALL][MAX_SAMPLES];
	void *ctx[NALL];
	double med[NALL];
	uint8_t ref[KERNEL_MAX_STATE];
	uint64_t steps = 1000000;
	int samples = 5, cpu = 1, nrun = 0, i, s, evp = -1, have_ref = 0;
	double mhz;
	char why[128];

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			steps = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			samples = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			cpu = (int)strtol(argv[++i], NULL, 10);
		else {
			size_t j;

			for (j = 0; j < NALL; j++)
				if (all[j] != NULL &&
				    strcmp(all[j]->variant, argv[i]) == 0)
					break;
			if (j == NALL) {
				fprintf(stderr, "bench: no variant \"%s\"\n",
				    argv[i]);
				return 2;
			}
			run[nrun++] = all[j];
		}
	}
	if (samples < 1 || samples > MAX_SAMPLES)
		samples = 5;
	if (nrun == 0) {
		size_t j;

		for (j = 0; j < NALL; j++)
			if (all[j] != NULL &&
			    (all[j]->features & ~cpu_features()) == 0)
				run[nrun++] = all[j];
	}
	if (pin_to_cpu(cpu, why, sizeof why) != 0)
		fprintf(stderr, "bench: not pinned: %s\n", why);
	for (i = 0; i < nrun; i++) {
		ctx[i] = NULL;
		if (run[i]->setup != NULL && run[i]->setup(&ctx[i]) != 0) {
			fprintf(stderr, "bench: %s setup failed\n",
			    run[i]->variant);
			return 1;
		}
		if (strcmp(run[i]->variant, "openssl-evp") == 0)
			evp = i;
	}
	mhz = timing_calibrate_mhz();
	for (s = 0; s < samples; s++) {
		int k;

		for (k = 0; k < nrun; k++) {
			int v = s % 2 ? nrun - 1 - k : k;
			uint8_t x[KERNEL_MAX_STATE] = { 0 };
			uint64_t t0, t1;

			t0 = timing_now_ns();
			if (run[v]->chain(ctx[v], x, steps) != 0)
				return 1;
			t1 = timing_now_ns();
			ns[v][s] = (double)(t1 - t0);
			if (!have_ref) {
				memcpy(ref, x, sizeof ref);
				have_ref = 1;
			} else if (memcmp(ref, x, 32) != 0) {
				fprintf(stderr, "bench: %s digest differs\n",
				    run[v]->variant);
				return 1;
			}
		}
	}
	mhz = (mhz + timing_calibrate_mhz()) / 2;
	printf("%" PRIu64 " steps x %d samples, clock %.0f MHz (calibrated)\n",
	    steps, samples, mhz);
	for (i = 0; i < nrun; i++) {
		qsort(ns[i], (size_t)samples, sizeof ns[i][0], cmp_double);
		med[i] = ns[i][samples / 2] / (double)steps;
	}
	for (i = 0; i < nrun; i++) {
		printf("%-18s %7.3f Mh/s %7.1f ns %7.1f cyc", run[i]->variant,
		    1e3 / med[i], med[i], med[i] * mhz / 1e3);
		if (evp >= 0)
			printf("  x%.2f evp", med[evp] / med[i]);
		printf("   min %.1f ns %.1f cyc, max %.1f ns\n",
		    ns[i][0] / (double)steps,
		    ns[i][0] / (double)steps * mhz / 1e3,
		    ns[i][samples - 1] / (double)steps);
	}
	for (i = 0; i < nrun; i++)
		if (run[i]->teardown != NULL)
			run[i]->teardown(ctx[i]);
	return 0;
}

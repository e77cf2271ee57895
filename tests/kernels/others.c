/*
 * What a user would pick instead of our kernels, side by side with them in
 * one process (`make bench`): the same chain through libgcrypt and nettle
 * for sha3 and sha512, and every variant of the study this CPU runs, from
 * the table kernels/registry.sh generates.
 *
 *   others -S STUDY [-n STEPS] [-s SAMPLES] [-c CPU]
 *
 * libgcrypt: gcry_md_hash_buffer per hash, its one-call API (it picks its
 * fastest code for this CPU: AVX-512 Keccak for SHA3-256 where the CPU has
 * it, AVX2/BMI2 SHA-512).  nettle: the sha3_256_/sha512_ init, update and
 * digest functions per hash, one context on the stack.  Samples alternate
 * the order (forward, then backward); every sample's digest must equal the
 * first one's or the run fails.  Prints the median per implementation,
 * its cycles at the dependent-add calibrated clock and its ratios to the
 * study's control, libgcrypt and nettle, then the common digest so that
 * the caller can check it independently (tests/bench.py does).
 */
#include "cpu.h"
#include "kernel.h"
#include "pin.h"
#include "registry.h"
#include "timing.h"

#include <gcrypt.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>
#include <nettle/version.h>
#include <openssl/crypto.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NALL 64
#define MAX_SAMPLES 2000

static int
gcry_sha3_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	while (steps--)
		gcry_md_hash_buffer(GCRY_MD_SHA3_256, x, x, 32);
	return 0;
}

static int
gcry_sha512_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	(void)ctx;
	while (steps--)
		gcry_md_hash_buffer(GCRY_MD_SHA512, x, x, 64);
	return 0;
}

static int
nettle_sha3_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	struct sha3_256_ctx c;

	(void)ctx;
	while (steps--) {
		sha3_256_init(&c);
		sha3_256_update(&c, 32, x);
		sha3_256_digest(&c, 32, x);
	}
	return 0;
}

static int
nettle_sha512_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	struct sha512_ctx c;

	(void)ctx;
	while (steps--) {
		sha512_init(&c);
		sha512_update(&c, 64, x);
		sha512_digest(&c, 64, x);
	}
	return 0;
}

/* One implementation in the run: a registry kernel or a library. */
struct impl {
	const char *name;
	int (*chain)(void *ctx, uint8_t *x, uint64_t steps);
	const struct kernel *k;		/* NULL for a library */
	void *ctx;
};

static const struct {
	const char *study, *name;
	int (*chain)(void *ctx, uint8_t *x, uint64_t steps);
} libraries[] = {
	{ "sha3", "libgcrypt", gcry_sha3_chain },
	{ "sha3", "nettle", nettle_sha3_chain },
	{ "sha512", "libgcrypt", gcry_sha512_chain },
	{ "sha512", "nettle", nettle_sha512_chain },
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
find(const struct impl *run, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (name != NULL && strcmp(run[i].name, name) == 0)
			return i;
	return -1;
}

int
main(int argc, char **argv)
{
	static double ns[NALL][MAX_SAMPLES];
	struct impl run[NALL];
	const struct registry_study *rs;
	const struct study *st;
	uint8_t seed[KERNEL_MAX_STATE] = { 0 }, ref[KERNEL_MAX_STATE];
	double med[NALL], mhz;
	uint64_t steps = 2000;
	int samples = 201, cpu = 1, n = 0, i, s, have_ref = 0, ctl, gc, ne;
	size_t j;
	char why[128];

	if (argc < 3 || strcmp(argv[1], "-S") != 0 ||
	    (rs = registry_study(argv[2])) == NULL)
		goto usage;
	st = rs->study;
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			steps = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			samples = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			cpu = (int)strtol(argv[++i], NULL, 10);
		else
			goto usage;
	}
	if (steps == 0 || samples < 1 || samples > MAX_SAMPLES)
		goto usage;
	if (gcry_check_version(GCRYPT_VERSION) == NULL) {
		fprintf(stderr, "others: libgcrypt older than its headers\n");
		return 1;
	}
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);

	for (j = 0; registry_kernels[j].study != NULL && n < NALL; j++) {
		const struct registry_kernel *r = &registry_kernels[j];

		if (strcmp(r->study, rs->name) != 0 ||
		    (r->k->features & ~cpu_features()) != 0)
			continue;
		run[n].name = r->variant;
		run[n].chain = r->k->chain;
		run[n].k = r->k;
		run[n].ctx = NULL;
		if (r->k->setup != NULL && r->k->setup(&run[n].ctx) != 0) {
			fprintf(stderr, "others: %s setup failed\n", r->variant);
			return 1;
		}
		n++;
	}
	for (j = 0; j < sizeof libraries / sizeof libraries[0]; j++)
		if (strcmp(libraries[j].study, rs->name) == 0 && n < NALL) {
			run[n].name = libraries[j].name;
			run[n].chain = libraries[j].chain;
			run[n].k = NULL;
			run[n].ctx = NULL;
			n++;
		}
	for (j = 0; j < st->state_len; j++) {
		unsigned v;

		sscanf(st->seed_hex + 2 * j, "%2x", &v);
		seed[j] = (uint8_t)v;
	}
	if (pin_to_cpu(cpu, why, sizeof why) != 0)
		fprintf(stderr, "others: not pinned: %s\n", why);

	mhz = timing_calibrate_mhz();
	for (s = 0; s < samples; s++) {
		int k;

		for (k = 0; k < n; k++) {
			int v = s % 2 ? n - 1 - k : k;
			uint8_t x[KERNEL_MAX_STATE];
			uint64_t t0, t1;

			memcpy(x, seed, sizeof x);
			t0 = timing_now_ns();
			if (run[v].chain(run[v].ctx, x, steps) != 0)
				return 1;
			t1 = timing_now_ns();
			ns[v][s] = (double)(t1 - t0);
			if (!have_ref) {
				memcpy(ref, x, sizeof ref);
				have_ref = 1;
			} else if (memcmp(ref, x, st->state_len) != 0) {
				fprintf(stderr, "others: %s digest differs\n",
				    run[v].name);
				return 1;
			}
		}
	}
	mhz = (mhz + timing_calibrate_mhz()) / 2;
	for (i = 0; i < n; i++) {
		qsort(ns[i], (size_t)samples, sizeof ns[i][0], cmp_double);
		med[i] = ns[i][samples / 2] / (double)steps;
	}
	ctl = find(run, n, st->control);
	gc = find(run, n, "libgcrypt");
	ne = find(run, n, "nettle");
	printf("%s: %llu %s x %d samples, clock %.0f MHz (calibrated), "
	    "libgcrypt %s, nettle %d.%d, %s\n", rs->name,
	    (unsigned long long)steps, st->unit_plural, samples, mhz,
	    gcry_check_version(NULL), nettle_version_major(),
	    nettle_version_minor(), OpenSSL_version(OPENSSL_VERSION));
	printf("%-18s %10s %9s %8s %8s %8s %8s\n", "implementation", "median/s",
	    "ns", "cycles", "x ctl", "x gcry", "x nettle");
	for (i = 0; i < n; i++)
		printf("%-18s %9.3fM %9.2f %8.1f %8.2f %8.2f %8.2f\n",
		    run[i].name, 1e3 / med[i], med[i], med[i] * mhz / 1e3,
		    ctl >= 0 ? med[ctl] / med[i] : 0,
		    gc >= 0 ? med[gc] / med[i] : 0,
		    ne >= 0 ? med[ne] / med[i] : 0);
	for (i = 0; i < n; i++)
		if (run[i].k != NULL && run[i].k->teardown != NULL)
			run[i].k->teardown(run[i].ctx);
	printf("digest ");
	for (j = 0; j < st->state_len; j++)
		printf("%02x", ref[j]);
	printf("\n");
	return 0;
usage:
	fprintf(stderr, "usage: others -S STUDY [-n STEPS] [-s SAMPLES] "
	    "[-c CPU]\n");
	return 2;
}

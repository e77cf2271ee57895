/*
 * What a user would pick instead of our kernels, side by side with them in
 * one process (`make bench`): the same chain through libgcrypt, nettle,
 * OpenSSL EVP with the digest fetched once, and XKCP builds for sha3 (and
 * libgcrypt and nettle for sha512), beside every variant of the study this
 * CPU runs, from the table kernels/registry.sh generates.
 *
 *   others -S STUDY [-n STEPS] [-s SAMPLES] [-r ROUNDS] [-c CPU] [-x SO]...
 *
 * libgcrypt: gcry_md_hash_buffer per hash, its one-call API (it picks its
 * fastest code for this CPU: AVX-512 Keccak for SHA3-256 where the CPU has
 * it, AVX2/BMI2 SHA-512).  nettle: the sha3_256_/sha512_ init, update and
 * digest functions per hash, one context on the stack.  evp-fetched: the
 * openssl-evp variant's Init/Update/Final with an EVP_MD fetched once
 * (EVP_MD_fetch), which skips OpenSSL 3's per-Init lookup of the implicit
 * EVP_sha3_256().  -x: a shared object tests/kernels/xkcp.sh built around
 * one XKCP config (xkcp_chain, xkcp_name), dlopen()ed, repeatable.
 *
 * The samples are split into ROUNDS rounds (default 1); inside a round the
 * order alternates (forward, then backward).  Every sample's digest must
 * equal the first one's or the run fails.  Prints, per round, the best own
 * kernel against the best XKCP build, libgcrypt and evp-fetched (ratios of
 * medians, and of fastest samples); then the median over all samples per
 * implementation, its cycles at the dependent-add calibrated clock and its
 * ratios to the study's control, libgcrypt, nettle and the best XKCP
 * build; then the common digest so that the caller can check it
 * independently (tests/bench.py does).
 */
#include "cpu.h"
#include "kernel.h"
#include "pin.h"
#include "registry.h"
#include "timing.h"

#include <dlfcn.h>
#include <gcrypt.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>
#include <nettle/version.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NALL 64
#define MAX_SAMPLES 2000
#define MAX_ROUNDS 20

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

/* EVP_sha3_256 fetched once, one context: both live for the run. */
static EVP_MD *evp_md;
static EVP_MD_CTX *evp_ctx;

static int
evp_fetched_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	unsigned int n;

	(void)ctx;
	while (steps--)
		if (EVP_DigestInit_ex(evp_ctx, evp_md, NULL) != 1 ||
		    EVP_DigestUpdate(evp_ctx, x, 32) != 1 ||
		    EVP_DigestFinal_ex(evp_ctx, x, &n) != 1)
			return -1;
	return 0;
}

/* What an implementation is, for the ratios. */
enum impl_kind { IMPL_OWN, IMPL_LIBRARY, IMPL_XKCP };

/* One implementation in the run: a registry kernel, a library or XKCP. */
struct impl {
	const char *name;
	int (*chain)(void *ctx, uint8_t *x, uint64_t steps);
	const struct kernel *k;		/* NULL unless IMPL_OWN */
	void *ctx;
	enum impl_kind kind;
};

static const struct {
	const char *study, *name;
	int (*chain)(void *ctx, uint8_t *x, uint64_t steps);
} libraries[] = {
	{ "sha3", "libgcrypt", gcry_sha3_chain },
	{ "sha3", "nettle", nettle_sha3_chain },
	{ "sha3", "evp-fetched", evp_fetched_chain },
	{ "sha512", "libgcrypt", gcry_sha512_chain },
	{ "sha512", "nettle", nettle_sha512_chain },
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median (or, with lo, the fastest) ns per step of v's samples a..b-1. */
static double
per_step(double ns[][MAX_SAMPLES], int v, int a, int b, int lo, uint64_t steps)
{
	double t[MAX_SAMPLES];

	memcpy(t, ns[v] + a, sizeof t[0] * (size_t)(b - a));
	qsort(t, (size_t)(b - a), sizeof t[0], cmp_double);
	return t[lo ? 0 : (b - a) / 2] / (double)steps;
}

/* The fastest implementation of a kind over samples a..b-1, or -1. */
static int
best(const struct impl *run, int n, enum impl_kind kind,
    double ns[][MAX_SAMPLES], int a, int b, int lo, uint64_t steps)
{
	int i, w = -1;

	for (i = 0; i < n; i++)
		if (run[i].kind == kind && (w < 0 ||
		    per_step(ns, i, a, b, lo, steps) <
		    per_step(ns, w, a, b, lo, steps)))
			w = i;
	return w;
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

/* One round's line: the best own kernel against the other kinds' best. */
static void
print_round(const struct impl *run, int n, double ns[][MAX_SAMPLES], int a,
    int b, uint64_t steps, const char *label)
{
	int lo, own, xk, gc = find(run, n, "libgcrypt"),
	    ev = find(run, n, "evp-fetched");

	printf("%-8s", label);
	for (lo = 0; lo < 2; lo++) {
		own = best(run, n, IMPL_OWN, ns, a, b, lo, steps);
		xk = best(run, n, IMPL_XKCP, ns, a, b, lo, steps);
		if (own < 0)
			return;
		printf(" %s %s %.1f ns", lo ? "| min:" : "median:",
		    run[own].name, per_step(ns, own, a, b, lo, steps));
		if (xk >= 0)
			printf(", %.3fx %s", per_step(ns, xk, a, b, lo, steps) /
			    per_step(ns, own, a, b, lo, steps), run[xk].name);
		if (gc >= 0)
			printf(", %.3fx libgcrypt", per_step(ns, gc, a, b, lo,
			    steps) / per_step(ns, own, a, b, lo, steps));
		if (ev >= 0)
			printf(", %.3fx evp-fetched", per_step(ns, ev, a, b, lo,
			    steps) / per_step(ns, own, a, b, lo, steps));
	}
	printf("\n");
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
	int samples = 201, rounds = 1, cpu = 1, n = 0, i, s, r, have_ref = 0;
	int ctl, gc, ne, xk, per;
	size_t j;
	char why[128], label[16];

	if (argc < 3 || strcmp(argv[1], "-S") != 0 ||
	    (rs = registry_study(argv[2])) == NULL)
		goto usage;
	st = rs->study;
	for (i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			steps = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			samples = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
			rounds = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			cpu = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc) {
			void *h, *fn;
			const char *name;

			if (strcmp(rs->name, "sha3") != 0 || n == NALL) {
				fprintf(stderr, "others: -x \"%s\": XKCP is "
				    "a sha3 peer, at most %d in all\n",
				    argv[i + 1], NALL);
				return 2;
			}
			/* RTLD_LOCAL: each object's XKCP stays its own. */
			if ((h = dlopen(argv[++i], RTLD_NOW | RTLD_LOCAL)) ==
			    NULL || (fn = dlsym(h, "xkcp_chain")) == NULL ||
			    (name = dlsym(h, "xkcp_name")) == NULL) {
				fprintf(stderr, "others: -x \"%s\": %s\n",
				    argv[i], dlerror());
				return 1;
			}
			run[n].name = name;
			*(void **)&run[n].chain = fn;
			run[n].k = NULL;
			run[n].ctx = NULL;
			run[n].kind = IMPL_XKCP;
			n++;
		} else
			goto usage;
	}
	if (steps == 0 || samples < 1 || samples > MAX_SAMPLES ||
	    rounds < 1 || rounds > MAX_ROUNDS || samples < rounds)
		goto usage;
	per = samples / rounds;
	samples = per * rounds;
	if (gcry_check_version(GCRYPT_VERSION) == NULL) {
		fprintf(stderr, "others: libgcrypt older than its headers\n");
		return 1;
	}
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	if ((evp_md = EVP_MD_fetch(NULL, "SHA3-256", NULL)) == NULL ||
	    (evp_ctx = EVP_MD_CTX_new()) == NULL) {
		fprintf(stderr, "others: EVP_MD_fetch SHA3-256 failed\n");
		return 1;
	}

	for (j = 0; registry_kernels[j].study != NULL && n < NALL; j++) {
		const struct registry_kernel *rk = &registry_kernels[j];

		if (strcmp(rk->study, rs->name) != 0 ||
		    (rk->k->features & ~cpu_features()) != 0)
			continue;
		run[n].name = rk->variant;
		run[n].chain = rk->k->chain;
		run[n].k = rk->k;
		run[n].ctx = NULL;
		run[n].kind = IMPL_OWN;
		if (rk->k->setup != NULL && rk->k->setup(&run[n].ctx) != 0) {
			fprintf(stderr, "others: %s setup failed\n",
			    rk->variant);
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
			run[n].kind = IMPL_LIBRARY;
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
	printf("%s: %llu %s x %d samples in %d rounds, libgcrypt %s, "
	    "nettle %d.%d, %s\n", rs->name, (unsigned long long)steps,
	    st->unit_plural, samples, rounds, gcry_check_version(NULL),
	    nettle_version_major(), nettle_version_minor(),
	    OpenSSL_version(OPENSSL_VERSION));
	for (r = 0; r < rounds; r++) {
		for (s = r * per; s < (r + 1) * per; s++) {
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
				} else if (memcmp(ref, x, st->state_len) !=
				    0) {
					fprintf(stderr, "others: %s digest "
					    "differs\n", run[v].name);
					return 1;
				}
			}
		}
		snprintf(label, sizeof label, "round %d", r + 1);
		print_round(run, n, ns, r * per, (r + 1) * per, steps, label);
		fflush(stdout);
	}
	if (rounds > 1)
		print_round(run, n, ns, 0, samples, steps, "all");
	mhz = (mhz + timing_calibrate_mhz()) / 2;
	for (i = 0; i < n; i++)
		med[i] = per_step(ns, i, 0, samples, 0, steps);
	ctl = find(run, n, st->control);
	gc = find(run, n, "libgcrypt");
	ne = find(run, n, "nettle");
	xk = best(run, n, IMPL_XKCP, ns, 0, samples, 0, steps);
	printf("clock %.0f MHz (calibrated)\n", mhz);
	printf("%-32s %10s %9s %9s %8s %8s %8s %8s %8s\n", "implementation",
	    "median/s", "ns", "min ns", "cycles", "x ctl", "x gcry",
	    "x nettle", "x xkcp");
	for (i = 0; i < n; i++) {
		int to[] = { ctl, gc, ne, xk };
		size_t c;

		printf("%-32s %9.3fM %9.2f %9.2f %8.1f", run[i].name,
		    1e3 / med[i], med[i],
		    per_step(ns, i, 0, samples, 1, steps), med[i] * mhz / 1e3);
		/* "-" where that implementation is not in the run (XKCP
		 * beside sha512) */
		for (c = 0; c < sizeof to / sizeof to[0]; c++)
			if (to[c] >= 0)
				printf(" %8.2f", med[to[c]] / med[i]);
			else
				printf(" %8s", "-");
		printf("\n");
	}
	for (i = 0; i < n; i++)
		if (run[i].k != NULL && run[i].k->teardown != NULL)
			run[i].k->teardown(run[i].ctx);
	EVP_MD_CTX_free(evp_ctx);
	EVP_MD_free(evp_md);
	printf("digest ");
	for (j = 0; j < st->state_len; j++)
		printf("%02x", ref[j]);
	printf("\n");
	return 0;
usage:
	fprintf(stderr, "usage: others -S STUDY [-n STEPS] [-s SAMPLES] "
	    "[-r ROUNDS] [-c CPU] [-x SO]...\n");
	return 2;
}

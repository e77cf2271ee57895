/*
 * stats.c: descriptive statistics against values computed by hand (and by
 * numpy's default quantile), the constant-time resampled median against
 * plain resampling with replacement, and the verdicts on synthetic data:
 * clearly different, overlapping, n = 1, and sets drawn from one
 * distribution (which must mostly come out undecided); paired ratios of
 * builds, whose few pairs all on one side decide nothing; unpaired
 * ratios, which Welch's t-test of the logs must back, and that test's
 * Student t against known quantiles.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static void
test_describe(void **state)
{
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };
	struct stats_desc d;

	(void)state;
	stats_describe(odd, 5, &d);
	assert_int_equal(d.n, 5);
	assert_true(d.median == 3 && d.q1 == 2 && d.q3 == 4);
	assert_true(d.min == 1 && d.max == 5 && d.mean == 3);
	/* sd = sqrt(10 / 4) */
	assert_true(fabs(d.cv - sqrt(2.5) / 3) < 1e-12);
	assert_true(odd[0] == 1 && odd[4] == 5);

	/* numpy.quantile([1, 2, 3, 4], [.25, .5, .75]) = 1.75, 2.5, 3.25 */
	stats_describe(even, 4, &d);
	assert_true(d.median == 2.5 && d.q1 == 1.75 && d.q3 == 3.25);

	stats_describe(one, 1, &d);
	assert_true(d.median == 7 && d.q1 == 7 && d.q3 == 7);
	assert_true(isnan(d.cv));

	stats_describe(NULL, 0, &d);
	assert_int_equal(d.n, 0);
	assert_true(isnan(d.median));
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The distribution of stats_boot_median equals that of the median of n
 * draws with replacement: compare the frequency of every outcome.
 */
static void
check_boot_median(const double *x, size_t n)
{
	enum { DRAWS = 40000 };
	struct stats_rng rng;
	double *fast = malloc(DRAWS * sizeof *fast);
	double *slow = malloc(DRAWS * sizeof *slow);
	double *re = malloc(n * sizeof *re);
	unsigned seed = 12;
	size_t i, j, k, a, b;

	stats_rng_seed(&rng, 1);
	for (i = 0; i < DRAWS; i++)
		fast[i] = stats_boot_median(&rng, x, n);
	/* Plain resampling, with rand_r as an independent generator. */
	for (i = 0; i < DRAWS; i++) {
		for (j = 0; j < n; j++)
			re[j] = x[(size_t)rand_r(&seed) % n];
		qsort(re, n, sizeof *re, cmp);
		slow[i] = n % 2 ? re[n / 2] : (re[n / 2 - 1] + re[n / 2]) / 2;
	}
	qsort(fast, DRAWS, sizeof *fast, cmp);
	qsort(slow, DRAWS, sizeof *slow, cmp);
	/* Every outcome's frequency agrees within 1.5 points. */
	for (i = 0; i < DRAWS; i = k) {
		for (k = i; k < DRAWS && fast[k] == fast[i]; k++)
			;
		for (a = 0; a < DRAWS && slow[a] < fast[i]; a++)
			;
		for (b = a; b < DRAWS && slow[b] == fast[i]; b++)
			;
		assert_true(fabs((double)(k - i) - (double)(b - a)) <
		    0.015 * DRAWS);
	}
	/* And so do the quantiles the interval is made of. */
	assert_true(fabs(stats_quantile(fast, DRAWS, 0.025) -
	    stats_quantile(slow, DRAWS, 0.025)) <= 1.0);
	assert_true(fabs(stats_quantile(fast, DRAWS, 0.975) -
	    stats_quantile(slow, DRAWS, 0.975)) <= 1.0);
	free(re);
	free(slow);
	free(fast);
}

/* The radix sort orders as qsort does: negatives, zeros, ties, large n. */
static void
test_sort(void **state)
{
	enum { N = 5000 };
	double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
	unsigned seed = 3;
	size_t i;

	(void)state;
	for (i = 0; i < N; i++) {
		x[i] = y[i] = ((double)rand_r(&seed) - RAND_MAX / 2) *
		    (i % 7 == 0 ? 1e-300 : i % 5 == 0 ? 0 : 1e3);
	}
	x[10] = y[10] = -0.0;
	stats_sort(x, N);
	qsort(y, N, sizeof *y, cmp);
	for (i = 0; i < N; i++)
		assert_true(x[i] == y[i]);
	free(x);
	free(y);
}

/* Linear-time median equals the sorted one, odd and even, with ties. */
static void
test_median_select(void **state)
{
	unsigned seed = 5;
	double x[101], y[101];
	struct stats_desc d;
	size_t n, i;

	(void)state;
	for (n = 1; n <= 101; n++) {
		for (i = 0; i < n; i++)
			x[i] = y[i] = (double)(rand_r(&seed) % 17);
		stats_describe(y, n, &d);
		assert_true(stats_median(x, n) == d.median);
	}
}

static void
test_boot_median(void **state)
{
	const double odd[] = { 10, 11, 13, 17, 20, 21, 30 };
	const double even[] = { 10, 11, 13, 17, 20, 21, 30, 31 };

	(void)state;
	check_boot_median(odd, 7);
	check_boot_median(even, 8);
}

static void
test_clearly_different(void **state)
{
	double fast[] = { 100.1, 99.8, 100.3, 99.9, 100.0 };
	double slow[] = { 80.2, 79.9, 80.0, 80.1, 79.8 };
	struct stats_ratio r;

	(void)state;
	qsort(fast, 5, sizeof *fast, cmp);
	qsort(slow, 5, sizeof *slow, cmp);
	stats_ratio(fast, 5, slow, 5, STATS_SEED, &r);
	assert_true(fabs(r.ratio - 100.0 / 80.0) < 1e-12);
	assert_true(r.lo > 1 && r.lo <= r.ratio && r.ratio <= r.hi);
	assert_int_equal(r.verdict, STATS_FASTER);
	assert_string_equal(stats_verdict_word(r.verdict), "faster");
	stats_ratio(slow, 5, fast, 5, STATS_SEED, &r);
	assert_true(r.hi < 1);
	assert_int_equal(r.verdict, STATS_SLOWER);
	assert_string_equal(stats_verdict_word(r.verdict), "slower");
}

static void
test_overlapping(void **state)
{
	/* Medians 1% apart, ranges 10% wide: no verdict. */
	double a[] = { 95, 99, 101, 103, 105 }, b[] = { 94, 98, 100, 102, 104 };
	/* Three samples whose ranges touch by one value. */
	double c[] = { 10.0, 10.1, 10.3 }, d[] = { 9.0, 9.2, 10.1 };
	/*
	 * Three that do not overlap: the interval leaves 1 out, but b spread
	 * over 10% is too wide for the t-test at 3 a side (p = 0.10); a
	 * tighter g is decided.
	 */
	double e[] = { 10.0, 10.1, 10.3 }, f[] = { 9.0, 9.2, 9.9 };
	double g[] = { 9.0, 9.1, 9.3 };
	struct stats_ratio r;

	(void)state;
	stats_ratio(a, 5, b, 5, STATS_SEED, &r);
	assert_true(r.lo < 1 && r.hi > 1);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	assert_string_equal(stats_verdict_word(r.verdict),
	    "not distinguishable at this precision");
	stats_ratio(c, 3, d, 3, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	stats_ratio(e, 3, f, 3, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	assert_true(r.p > 0.09 && r.p < 0.11);
	/* For n = 3 the interval reaches the extremes. */
	assert_true(fabs(r.lo - 10.0 / 9.9) < 1e-12);
	assert_true(fabs(r.hi - 10.3 / 9.0) < 1e-12);
	stats_ratio(e, 3, g, 3, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_FASTER);
	stats_ratio(g, 3, e, 3, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_SLOWER);
}

/*
 * Holm's adjusted p-values by hand, and the family the report's position
 * headline sums up: 13 positions of 3 samples each against the others,
 * all from one distribution.  By each position's bootstrap interval,
 * some position is decided in most such runs; by rank tests with Holm's
 * correction, in about one run in twenty.
 */
static void
test_holm(void **state)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005, NAN }, adj[5];
	double e[] = { 10.0, 10.1, 10.3 }, f[] = { 9.0, 9.2, 9.9 };
	double pool[39], in[3], out[36], ps[13], padj[13];
	struct stats_ratio r;
	size_t run, k, i, nin, nout;
	int raw_runs = 0, holm_runs = 0, raw, holm;

	(void)state;
	stats_holm(p, 5, adj);
	assert_true(fabs(adj[3] - 0.025) < 1e-12);
	assert_true(fabs(adj[0] - 0.04) < 1e-12);
	assert_true(fabs(adj[2] - 0.09) < 1e-12);
	assert_true(fabs(adj[1] - 0.09) < 1e-12);
	assert_true(adj[4] == 1);
	/* No overlap, 3 and 3: the most extreme of 20 orders, each side. */
	assert_true(fabs(stats_rank_p(e, 3, f, 3) - 0.1) < 1e-12);
	assert_true(stats_rank_p(e, 3, e, 3) == 1);
	/* U = 5: 19 of the 792 orders at or below it, by enumeration. */
	{
		double g[] = { 1, 2, 3, 4, 10 };
		double h[] = { 5, 6, 7, 8, 9, 11, 12 };

		assert_true(fabs(stats_rank_p(g, 5, h, 7) -
		    38.0 / 792) < 1e-12);
	}
	srand48(31);
	for (run = 0; run < 100; run++) {
		for (i = 0; i < 39; i++)	/* Box-Muller, 1% spread */
			pool[i] = 1 + 0.01 * sqrt(-2 * log(1 - drand48())) *
			    cos(2 * M_PI * drand48());
		raw = 0;
		for (k = 0; k < 13; k++) {
			for (nin = nout = 0, i = 0; i < 39; i++) {
				if (i % 13 == k)
					in[nin++] = pool[i];
				else
					out[nout++] = pool[i];
			}
			stats_sort(in, nin);
			stats_sort(out, nout);
			stats_ratio(in, nin, out, nout, STATS_SEED + k, &r);
			raw |= r.lo > 1 || r.hi < 1;
			ps[k] = stats_rank_p(in, nin, out, nout);
		}
		stats_holm(ps, 13, padj);
		for (holm = 0, k = 0; k < 13; k++)
			holm |= padj[k] <= 1 - STATS_LEVEL_PCT / 100.0;
		raw_runs += raw;
		holm_runs += holm;
	}
	print_message("runs with a position decided: %d of 100 by the "
	    "bootstrap intervals, %d by Holm over rank tests\n", raw_runs,
	    holm_runs);
	assert_true(raw_runs >= 25);
	assert_true(holm_runs <= 10);
}

static void
test_n1(void **state)
{
	double a[] = { 200 }, b[] = { 80, 81, 82 };
	struct stats_ratio r;

	(void)state;
	/* 2.5x apart, yet one sample says nothing about its spread. */
	stats_ratio(a, 1, b, 3, STATS_SEED, &r);
	assert_true(fabs(r.ratio - 200.0 / 81) < 1e-12);
	assert_true(isnan(r.lo) && isnan(r.hi));
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	stats_ratio(b, 3, a, 1, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	stats_ratio(a, 1, a, 1, STATS_SEED, &r);
	assert_true(r.ratio == 1);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
}

static void
test_reproducible(void **state)
{
	double a[] = { 95, 99, 101, 103, 105 }, b[] = { 90, 93, 97, 99, 100 };
	struct stats_ratio r1, r2, r3;

	(void)state;
	stats_ratio(a, 5, b, 5, STATS_SEED, &r1);
	stats_ratio(a, 5, b, 5, STATS_SEED, &r2);
	stats_ratio(a, 5, b, 5, STATS_SEED + 1, &r3);
	assert_true(r1.ratio == r2.ratio && r1.lo == r2.lo && r1.hi == r2.hi &&
	    r1.verdict == r2.verdict);
	/* Another seed moves the interval a little, not the ratio. */
	assert_true(r1.ratio == r3.ratio);
	assert_true(fabs(r1.lo - r3.lo) < 0.01 && fabs(r1.hi - r3.hi) < 0.01);
}

/*
 * n values, sorted, mean m and relative spread cv, normal by Box-Muller
 * over rand_r (not the generator under test).
 */
static double *
synth(unsigned *seed, size_t n, double m, double cv)
{
	double *x = malloc(n * sizeof *x), u, v;
	size_t i;

	for (i = 0; i < n; i++) {
		u = ((double)rand_r(seed) + 1) / ((double)RAND_MAX + 2);
		v = ((double)rand_r(seed) + 1) / ((double)RAND_MAX + 2);
		x[i] = m * (1 + cv * sqrt(-2 * log(u)) * cos(2 * M_PI * v));
	}
	qsort(x, n, sizeof *x, cmp);
	return x;
}

static void
test_same_distribution(void **state)
{
	struct stats_ratio r;
	unsigned seed = 99;
	int t, undecided = 0;
	double *a, *b;

	(void)state;
	for (t = 0; t < 200; t++) {
		a = synth(&seed, 31, 1000, 0.02);
		b = synth(&seed, 31, 1000, 0.02);
		stats_ratio(a, 31, b, 31, STATS_SEED, &r);
		undecided += r.verdict == STATS_UNDECIDED;
		free(a);
		free(b);
	}
	/* A 95% interval: about 190 of 200; allow for the small n. */
	assert_true(undecided >= 176);
}

static void
test_large_cells(void **state)
{
	enum { N = 200000 };
	struct stats_ratio r;
	unsigned seed = 7;
	double *a, *b;

	(void)state;
	/* 0.5% apart under 3% noise: 200k samples a side resolve it. */
	a = synth(&seed, N, 1005, 0.03);
	b = synth(&seed, N, 1000, 0.03);
	stats_ratio(a, N, b, N, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_FASTER);
	assert_true(r.lo > 1.003 && r.hi < 1.007);
	free(a);
	free(b);
}

/*
 * Paired ratios of two builds that do not differ: 3 pairs all on one
 * side are a quarter of such runs, and the interval of their median is
 * their range, so a verdict must also pass the sign test.
 */
static void
test_paired(void **state)
{
	static const double five[] = { 1.03, 1.05, 1.06, 1.07, 1.41 };
	static const double eight[] = { 1.02, 1.03, 1.04, 1.05, 1.05, 1.06,
	    1.07, 1.09 };
	static const double mixed[] = { 0.9, 0.95, 1, 1.05, 1.1, 1.2 };
	struct stats_ratio r;
	unsigned seed = 5;
	int t, undecided = 0;
	double *x;

	(void)state;
	for (t = 0; t < 200; t++) {
		x = synth(&seed, 3, 1, 0.02);
		stats_paired(x, 3, STATS_SEED, &r);
		undecided += r.verdict == STATS_UNDECIDED;
		free(x);
	}
	assert_int_equal(undecided, 200);
	/* All five above 1: the range excludes 1, p = 2 / 32 does not. */
	stats_paired(five, 5, STATS_SEED, &r);
	assert_true(r.lo > 1);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	assert_true(fabs(stats_sign_p(five, 5) - 0.0625) < 1e-12);
	stats_paired(eight, 8, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_FASTER);
	assert_true(fabs(stats_sign_p(eight, 8) - 2.0 / 256) < 1e-12);
	/* The pair at exactly 1 is left out: 3 above, 2 below. */
	assert_true(fabs(stats_sign_p(mixed, 6) - 1) < 1e-12);
	assert_true(fabs(stats_sign_p(mixed, 0) - 1) < 1e-12);
}

/*
 * Two-sided p at Student's 97.5% quantiles (tables), at df = 1 and 2
 * whose CDFs are closed forms, and at df that are not whole, where the
 * values are the density integrated by Simpson's rule.
 */
static void
test_student_t(void **state)
{
	static const struct {
		double t, df, p;
	} known[] = {
		{ 4.302653, 2, 0.05 }, { 2.776445, 4, 0.05 },
		{ 2.042272, 30, 0.05 }, { 1.959964, 1e7, 0.05 },
		{ 3.0, 2.5, 0.0725760955 }, { 2.2, 7.3, 0.0621691654 },
		{ 1.0, 1.5, 0.4511353673 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof known / sizeof *known; i++)
		assert_true(fabs(stats_t_p(known[i].t, known[i].df) -
		    known[i].p) < 1e-6);
	assert_true(fabs(stats_t_p(3, 1) - (1 - 2 / M_PI * atan(3))) < 1e-12);
	assert_true(fabs(stats_t_p(3, 2) - (1 - 3 / sqrt(11))) < 1e-12);
	assert_true(fabs(stats_t_p(-3, 2) - stats_t_p(3, 2)) < 1e-15);
	assert_true(stats_t_p(0, 3) == 1);
	assert_true(stats_t_p(INFINITY, 3) == 0);
	/* Far in the tail, no cancellation: 2 / (pi t) for Cauchy. */
	assert_true(fabs(stats_t_p(1e8, 1) / (2 / (M_PI * 1e8)) - 1) < 1e-6);
}

/*
 * The t-test itself: a 1.5x difference at 0.5% cv is decided at 2 and 3
 * samples a side; 1 sample a side, or sets with no spread and equal
 * means, cannot be; the same pair added twice (compare's geometric mean
 * of two equal cells) has the same difference per cell and twice the
 * degrees of freedom, so a smaller p.
 */
static void
test_welch(void **state)
{
	double fast[] = { 1.495, 1.5, 1.505 }, slow[] = { 0.995, 1, 1.005 };
	double one[] = { 1 }, flat[] = { 2, 2, 2 };
	struct stats_welch w = { 0 }, w2 = { 0 };
	struct stats_ratio r;
	double p;

	(void)state;
	stats_ratio(fast, 3, slow, 3, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_FASTER);
	assert_true(r.p < 1e-6);
	stats_ratio(slow, 2, fast, 2, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_SLOWER);
	stats_ratio(one, 1, fast, 3, STATS_SEED, &r);
	assert_int_equal(r.verdict, STATS_UNDECIDED);
	assert_true(isnan(r.p));
	stats_welch_add(&w, flat, 3, flat, 3);
	assert_true(stats_welch_p(&w) == 1);
	stats_welch_add(&w, one, 1, flat, 3);
	assert_true(isnan(stats_welch_p(&w)));
	memset(&w, 0, sizeof w);
	assert_true(isnan(stats_welch_p(&w)));
	/* 0.5% apart at 0.5% cv: spreads alike, so df is near 4. */
	stats_welch_add(&w, (double[]){ 1.0, 1.005, 1.01 }, 3, slow, 3);
	p = stats_welch_p(&w);
	assert_true(fabs(w.d - (log(1.0 * 1.005 * 1.01) - log(0.995 * 1.005)) /
	    3) < 1e-12);
	assert_true(fabs(w.v * w.v / w.w - 4) < 0.01);
	assert_true(fabs(p - stats_t_p(w.d / sqrt(w.v), w.v * w.v / w.w)) <
	    1e-12);
	w2 = w;
	stats_welch_add(&w2, (double[]){ 1.0, 1.005, 1.01 }, 3, slow, 3);
	assert_true(fabs(stats_welch_p(&w2) - stats_t_p(w.d / sqrt(w.v) *
	    sqrt(2), 2 * w.v * w.v / w.w)) < 1e-12);
	assert_true(stats_welch_p(&w2) < p);
}

/*
 * Two sets from one distribution (2% noise) at the sizes runs have: by
 * the interval alone (the rule before the t-test) 3 against 3 decided
 * about one time in ten, ranges that do not overlap; with the t-test at
 * most about 5% at any size.  Sets 5% apart are decided at 3 a side
 * about half the time, and nearly always from 5.
 */
static void
test_unpaired(void **state)
{
	enum { TRIALS = 400 };
	static const size_t sizes[] = { 3, 4, 5, 8, 21 };
	struct stats_draws d;
	struct stats_ratio r;
	unsigned seed = 17;
	size_t k;
	int t, interval, verdict, apart, apart_interval;
	double *a, *b;

	(void)state;
	for (k = 0; k < sizeof sizes / sizeof *sizes; k++) {
		stats_draws_init(&d, sizes[k], sizes[k], STATS_SEED);
		interval = verdict = apart = apart_interval = 0;
		for (t = 0; t < TRIALS; t++) {
			a = synth(&seed, sizes[k], 1000, 0.02);
			b = synth(&seed, sizes[k], 1000, 0.02);
			stats_ratio_drawn(a, b, &d, &r);
			interval += r.lo > 1 || r.hi < 1;
			verdict += r.verdict != STATS_UNDECIDED;
			free(b);
			b = synth(&seed, sizes[k], 1050, 0.02);
			stats_ratio_drawn(b, a, &d, &r);
			apart += r.verdict == STATS_FASTER;
			apart_interval += r.lo > 1;
			free(b);
			free(a);
		}
		stats_draws_free(&d);
		print_message("n = %2zu: equal sets decided %5.1f%% by the "
		    "interval alone, %5.1f%% with the t-test; 5%% apart "
		    "%5.1f%%, %5.1f%%\n", sizes[k], 100.0 * interval / TRIALS,
		    100.0 * verdict / TRIALS, 100.0 * apart_interval / TRIALS,
		    100.0 * apart / TRIALS);
		assert_true(verdict <= interval);
		assert_true(verdict <= TRIALS * 7 / 100);
		if (sizes[k] == 3)
			assert_true(apart >= TRIALS * 40 / 100);
		if (sizes[k] >= 5)
			assert_true(apart >= apart_interval * 95 / 100);
		if (sizes[k] >= 8)
			assert_true(apart >= TRIALS * 95 / 100);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_median_select),
		cmocka_unit_test(test_boot_median),
		cmocka_unit_test(test_clearly_different),
		cmocka_unit_test(test_overlapping),
		cmocka_unit_test(test_n1),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_same_distribution),
		cmocka_unit_test(test_large_cells),
		cmocka_unit_test(test_paired),
		cmocka_unit_test(test_student_t),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_unpaired),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Statistics the report decides with: descriptive statistics of one
 * sample set, and the ratio of two sets' medians with a seeded bootstrap
 * interval and a verdict in words.  Pure functions: no I/O, no database,
 * nothing allocated that the caller must free but the draws it keeps
 * (stats_draws_free).
 */
#ifndef SEQORCH_STATS_H
#define SEQORCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The bootstrap: STATS_RESAMPLES resampled medians per side, a
 * STATS_LEVEL_PCT % percentile interval, and the seed every call starts
 * from, so that the same samples always give the same interval.
 */
#define STATS_RESAMPLES 10000
#define STATS_LEVEL_PCT 95
#define STATS_SEED 0x5e9012c4a7f3d1b5ULL

/*
 * Quartiles use linear interpolation between order statistics (R type 7,
 * numpy's default); the median of an even count is the mean of the two
 * middle values, as the schema's summary view computes it.  cv is the
 * sample standard deviation (n - 1) over the mean; NAN when n < 2.
 */
struct stats_desc {
	size_t	n;
	double	median, q1, q3, min, max, mean, cv;
};

/*
 * Sort x ascending in place: a radix sort on the values' bits (six
 * 11-bit passes at most), linear in n, for cells of a million samples;
 * NaNs are not expected, and -0 sorts before 0.
 */
void stats_sort(double *x, size_t n);

/* Sort x (n values) ascending in place and describe it; n may be 0. */
void stats_describe(double *x, size_t n, struct stats_desc *d);

/*
 * The median of x (n >= 1), as stats_describe has it, in linear time
 * (quickselect); x is reordered.
 */
double stats_median(double *x, size_t n);
/*
 * The median of the positive values of x (n of them), or 0, and in *used
 * how many there are; x is reordered, its values kept.
 */
double stats_positive_median(double *x, size_t n, size_t *used);

/* The p-quantile (0 <= p <= 1) of sorted x, n >= 1. */
double stats_quantile(const double *x, size_t n, double p);

enum stats_verdict {
	STATS_UNDECIDED,	/* the interval holds 1, or too few samples */
	STATS_FASTER,		/* the whole interval is above 1 */
	STATS_SLOWER,		/* the whole interval is below 1 */
};

/* "faster", "slower", "not distinguishable at this precision". */
const char *stats_verdict_word(enum stats_verdict v);
/* "faster", "slower", "undecided": for CSV and JSON. */
const char *stats_verdict_key(enum stats_verdict v);

/*
 * ratio = median(a) / median(b) for rates (higher is faster), with the
 * STATS_LEVEL_PCT % percentile interval of that ratio over resamples of a
 * and b drawn independently.  Each resampled median is drawn exactly and
 * in constant time from the order statistics of uniforms (the k-th
 * smallest of n uniform draws is Beta(k, n - k + 1)), so a cell of a
 * million samples costs what a cell of three does.
 *
 * With fewer than 2 samples on either side no spread is known: lo and hi
 * are NAN and the verdict is STATS_UNDECIDED.  Otherwise the verdict is
 * STATS_FASTER when lo > 1, STATS_SLOWER when hi < 1, and only when
 * Welch's t-test of the samples' logs (stats_welch) is p under 1 -
 * STATS_LEVEL_PCT / 100 too, its difference on the interval's side:
 * for n = 2 or 3 the interval reaches the extremes, so ranges that do
 * not overlap would decide, which two sets of 3 from one distribution do
 * one time in ten.  p is that test's, NAN when it has none.  a and b
 * must be sorted ascending.
 */
struct stats_ratio {
	double			ratio, lo, hi, p;
	enum stats_verdict	verdict;
};
void stats_ratio(const double *a, size_t na, const double *b, size_t nb,
    uint64_t seed, struct stats_ratio *out);

/*
 * The draws stats_ratio's resamples take for na and nb values from seed,
 * as indices of the sorted values: they depend on the sizes alone, so the
 * ratios of cells of the same sizes (a run's cells mostly hold its
 * samples per variant) can share them instead of drawing them again.
 * stats_ratio_drawn gives stats_ratio's result for a and b of those
 * sizes.  Sizes below 2^32; free at with stats_draws_free.
 */
struct stats_draws {
	size_t		 na, nb;
	uint64_t	 seed;
	uint32_t	*at;	/* per resample: a's two, b's two; NULL: none */
};
void stats_draws_init(struct stats_draws *d, size_t na, size_t nb,
    uint64_t seed);
void stats_draws_free(struct stats_draws *d);
void stats_ratio_drawn(const double *a, const double *b,
    const struct stats_draws *d, struct stats_ratio *out);
/*
 * The same for a and b that split sorted x (d->na + d->nb values): a is
 * the values at the ascending indices at (d->na of them), b the others;
 * neither is copied (a group against the rest of a pool).  Its verdict
 * is the interval's alone and p is NAN: the caller decides by its own
 * tests.
 */
void stats_ratio_drawn_split(const double *x, const uint32_t *at,
    const struct stats_draws *d, struct stats_ratio *out);

/*
 * A paired ratio: r holds n ratios of two builds' rates, each from two
 * samples taken side by side (the same index of one alternating order),
 * sorted ascending.  ratio is their median; the interval resamples the
 * pairs (the median of n of them drawn with replacement, as
 * stats_boot_median draws it), so a drift both builds share cancels in
 * each pair instead of widening the interval.  Fewer than 2 pairs: lo and
 * hi are NAN and the verdict STATS_UNDECIDED.  A verdict also needs the
 * sign test of the pairs (stats_sign_p) under 1 - STATS_LEVEL_PCT / 100:
 * the interval of a median of few pairs is their range, so all of them
 * on one side, which 3 pairs of equal builds are one time in four,
 * would decide; the test needs STATS_SIGN_MIN_PAIRS at least.
 */
#define STATS_SIGN_MIN_PAIRS 6
void stats_paired(const double *r, size_t n, uint64_t seed,
    struct stats_ratio *out);
/*
 * The two-sided p-value of the exact sign test that ratios r (n of them,
 * any order) are as often above 1 as below it; ratios of exactly 1 are
 * left out.  1 when none is left.
 */
double stats_sign_p(const double *r, size_t n);

/*
 * The generator (xoshiro256**) and one resampled median, for callers that
 * combine several cells per resample (the geometric mean of compare).
 */
struct stats_rng {
	uint64_t s[4];
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
/* One resampled median of sorted x (n >= 1). */
double stats_boot_median(struct stats_rng *r, const double *x, size_t n);

/*
 * The two-sided p-value of the Mann-Whitney rank-sum test that a and b
 * (na, nb >= 1 values each, sorted ascending) come from one
 * distribution: exact when na * nb <= STATS_EXACT_RANKS and no value is
 * in both, else the normal approximation with ties' correction.  A rank
 * test, because a bootstrap interval of a median of three is far too
 * narrow to test with: such p-values at n = 3 are near 0 a quarter of
 * the time when nothing differs.
 */
#define STATS_EXACT_RANKS 4000
double stats_rank_p(const double *a, size_t na, const double *b, size_t nb);
/*
 * The same p-value from what it is made of, for a caller that has them
 * without the two lists (ranks in a pool of several groups): u, the U of
 * a against b (pairs with a above b, ties a half); ties, whether any
 * value is in both; tsum, sum(t^3 - t) over the runs of equal values of
 * a and b together, in ascending order.
 */
double stats_rank_p_of(double u, int ties, double tsum, size_t na, size_t nb);

/*
 * Welch's two-sided t-test on the natural logs of samples, of one pair
 * of sets a and b or of several at once (the geometric mean of compare's
 * cells): d sums each pair's difference of mean logs (a's less b's), v
 * the variance of that sum (s_a^2 / n_a + s_b^2 / n_b per pair), and
 * the degrees of freedom are Welch-Satterthwaite's over all the terms.
 * Logs, because times are a product of factors and their ratios are
 * what the report gives (the logs of rates are those of times, negated).
 * Zero it, add each pair (values positive), take p: NAN when a pair has
 * fewer than 2 values on a side (no spread known) or none was added;
 * with no spread at all, 1 when the means are equal, else 0.
 */
struct stats_welch {
	double	d, v, w;	/* w: sum of each term^2 / (n - 1) */
	size_t	pairs;
	int	unknown;	/* a pair of fewer than 2 values a side */
};
void stats_welch_add(struct stats_welch *w, const double *a, size_t na,
    const double *b, size_t nb);
double stats_welch_p(const struct stats_welch *w);
/*
 * P(|T| >= t) for Student's t with df > 0 degrees of freedom (not
 * necessarily whole): the regularized incomplete beta function
 * I(df / (df + t^2); df / 2, 1 / 2), by its continued fraction.
 */
double stats_t_p(double t, double df);

/*
 * Holm's step-down correction of the m p-values p (in any order, NANs
 * count as 1) for one family of tests: adj[i] is p[i]'s adjusted p-value,
 * which a caller compares with 1 - STATS_LEVEL_PCT / 100 so that the
 * chance of any false verdict in the family stays at that level.  adj
 * may not be p.
 */
void stats_holm(const double *p, size_t m, double *adj);

/*
 * The interval and verdict of a ratio from its nboot resampled values
 * (sorted in place): what stats_ratio does after resampling.
 */
void stats_interval(double *boot, size_t nboot, struct stats_ratio *out);

#endif

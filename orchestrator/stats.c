/*
 * Descriptive statistics and the seeded bootstrap of a ratio of medians.
 *
 * A resampled median is drawn without resampling: for sorted x, a draw
 * with replacement is x[ceil(n U) - 1] for U uniform, so the k-th
 * smallest of n draws is x at the k-th smallest of n uniforms, which is
 * Beta(k, n - k + 1).  The next one up is that plus the minimum of the
 * n - k uniforms above it.  Beta comes from two Gamma draws
 * (Marsaglia and Tsang), normals from Box-Muller.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A double's bits as an unsigned key in the same order. */
static uint64_t
key(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof u);
	return u >> 63 ? ~u : u | 0x8000000000000000ULL;
}

static double
unkey(uint64_t u)
{
	double v;

	u = u >> 63 ? u & 0x7fffffffffffffffULL : ~u;
	memcpy(&v, &u, sizeof v);
	return v;
}

/*
 * Least significant digit first, 11 bits a pass (six passes for 64 bits),
 * with every pass's counts taken in one read before the first; a digit
 * that is the same everywhere needs no pass, and a sorted x none at all.
 */
#define RADIX_BITS 11
#define RADIX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)
#define RADIX_SIZE (1 << RADIX_BITS)

void
stats_sort(double *x, size_t n)
{
	uint64_t *a, *b, *t;
	size_t *count, *c, i, sum, k;
	int pass, shift;

	if (n < 256) {
		if (n > 0)
			qsort(x, n, sizeof *x, cmp_double);
		return;
	}
	for (i = 1; i < n && key(x[i - 1]) <= key(x[i]); i++)
		;
	if (i == n)
		return;
	count = xcalloc(RADIX_PASSES * RADIX_SIZE, sizeof *count);
	a = xmalloc(n * sizeof *a);
	b = xmalloc(n * sizeof *b);
	for (i = 0; i < n; i++) {
		a[i] = key(x[i]);
		for (pass = 0; pass < RADIX_PASSES; pass++)
			count[pass * RADIX_SIZE + ((a[i] >> (pass *
			    RADIX_BITS)) & (RADIX_SIZE - 1))]++;
	}
	for (pass = 0; pass < RADIX_PASSES; pass++) {
		shift = pass * RADIX_BITS;
		c = count + pass * RADIX_SIZE;
		if (c[(a[0] >> shift) & (RADIX_SIZE - 1)] == n)
			continue;
		for (sum = 0, i = 0; i < RADIX_SIZE; i++) {
			k = c[i];
			c[i] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			b[c[(a[i] >> shift) & (RADIX_SIZE - 1)]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < n; i++)
		x[i] = unkey(a[i]);
	free(b);
	free(a);
	free(count);
}

/* Put the k-th smallest of x[0..n) at x[k] (Hoare's selection). */
static void
select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, i, j;
	double pivot, t;

	while (lo < hi) {
		pivot = x[lo + (hi - lo) / 2];
		i = lo;
		j = hi;
		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				t = x[i];
				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double
stats_median(double *x, size_t n)
{
	double upper;
	size_t i;

	select_kth(x, n, (n - 1) / 2);
	if (n % 2)
		return x[(n - 1) / 2];
	/* Everything above the lower middle is at least it: take the least. */
	for (upper = x[n / 2], i = n / 2 + 1; i < n; i++) {
		if (x[i] < upper)
			upper = x[i];
	}
	return (x[n / 2 - 1] + upper) / 2;
}

double
stats_positive_median(double *x, size_t n, size_t *used)
{
	size_t i, k = 0;
	double t;

	/* Swapped to the front, not copied over: a caller's values stay. */
	for (i = 0; i < n; i++) {
		if (x[i] > 0) {
			t = x[k];
			x[k++] = x[i];
			x[i] = t;
		}
	}
	*used = k;
	return k == 0 ? 0 : stats_median(x, k);
}

double
stats_quantile(const double *x, size_t n, double p)
{
	double h = (double)(n - 1) * p, f = floor(h);
	size_t i = (size_t)f;

	if (i + 1 >= n)
		return x[n - 1];
	return x[i] + (h - f) * (x[i + 1] - x[i]);
}

void
stats_describe(double *x, size_t n, struct stats_desc *d)
{
	double sum = 0, ss = 0;
	size_t i;

	memset(d, 0, sizeof *d);
	d->n = n;
	d->cv = NAN;
	if (n == 0) {
		d->median = d->q1 = d->q3 = d->min = d->max = d->mean = NAN;
		return;
	}
	stats_sort(x, n);
	for (i = 0; i < n; i++)
		sum += x[i];
	d->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (x[i] - d->mean) * (x[i] - d->mean);
	if (n >= 2 && d->mean != 0)
		d->cv = sqrt(ss / (double)(n - 1)) / d->mean;
	d->min = x[0];
	d->max = x[n - 1];
	d->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	d->q1 = stats_quantile(x, n, 0.25);
	d->q3 = stats_quantile(x, n, 0.75);
}

const char *
stats_verdict_word(enum stats_verdict v)
{
	switch (v) {
	case STATS_FASTER:	return "faster";
	case STATS_SLOWER:	return "slower";
	case STATS_UNDECIDED:	break;
	}
	return "not distinguishable at this precision";
}

const char *
stats_verdict_key(enum stats_verdict v)
{
	switch (v) {
	case STATS_FASTER:	return "faster";
	case STATS_SLOWER:	return "slower";
	case STATS_UNDECIDED:	break;
	}
	return "undecided";
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	uint64_t z;
	int i;

	/* splitmix64 spreads one word over the whole state. */
	for (i = 0; i < 4; i++) {
		seed += 0x9e3779b97f4a7c15ULL;
		z = seed;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		r->s[i] = z ^ (z >> 31);
	}
}

static uint64_t
next(struct stats_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* Uniform in (0, 1), never 0 or 1. */
static double
uniform(struct stats_rng *r)
{
	return ((double)(next(r) >> 11) + 0.5) * 0x1p-53;
}

static double
normal(struct stats_rng *r)
{
	return sqrt(-2 * log(uniform(r))) * cos(2 * M_PI * uniform(r));
}

/* Gamma(k, 1) for k >= 1 (Marsaglia and Tsang 2000). */
static double
gamma_draw(struct stats_rng *r, double k)
{
	double d = k - 1.0 / 3, c = 1 / sqrt(9 * d), x, v;

	for (;;) {
		do {
			x = normal(r);
			v = 1 + c * x;
		} while (v <= 0);
		v = v * v * v;
		if (log(uniform(r)) < 0.5 * x * x + d - d * v + d * log(v))
			return d * v;
	}
}

static double
beta_draw(struct stats_rng *r, double a, double b)
{
	double x = gamma_draw(r, a);

	return x / (x + gamma_draw(r, b));
}

/*
 * A sorted list of n values of sorted x, not copied: x itself; the values
 * at the ascending indices pick; or x without the values at the
 * ascending indices skip (nskip of them).
 */
struct list {
	const double	*x;
	size_t		 n;
	const uint32_t	*pick, *skip;
	size_t		 nskip;
};

/*
 * The list's i-th value: x[i], x[pick[i]], or x[i + c], c the skipped
 * indices below it, which are those with skip[j] - j <= i (skip[j] - j
 * values precede skip[j]).
 */
static double
list_at(const struct list *l, size_t i)
{
	size_t lo = 0, hi = l->nskip, mid;

	if (l->pick != NULL)
		return l->x[l->pick[i]];
	if (l->skip == NULL)
		return l->x[i];
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l->skip[mid] - mid <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return l->x[i + lo];
}

/* The index of the draw with replacement of n values uniform u stands for. */
static size_t
pick(size_t n, double u)
{
	double i = ceil((double)n * u) - 1;

	if (i < 0)
		i = 0;
	if (i > (double)(n - 1))
		i = (double)(n - 1);
	return (size_t)i;
}

/*
 * The draws of one resampled median of n values, as indices of the sorted
 * values: i of the k-th smallest draw, i2 of the (k+1)-th when n is even
 * (else 0); none (0) for n = 1.
 */
static void
boot_draw(struct stats_rng *r, size_t n, size_t *i, size_t *i2)
{
	size_t k = (n + 1) / 2;
	double u;

	*i = *i2 = 0;
	if (n == 1)
		return;
	u = beta_draw(r, (double)k, (double)(n - k + 1));
	*i = pick(n, u);
	/* The (k+1)-th: the least of the n - k uniforms above u. */
	if (n % 2 == 0)
		*i2 = pick(n, u + (1 - u) * (1 - pow(uniform(r), 1.0 /
		    (double)(n - k))));
}

/* The resampled median of a sorted list that boot_draw's i and i2 pick. */
static double
boot_value(const struct list *l, size_t i, size_t i2)
{
	if (l->n % 2)
		return list_at(l, i);
	return (list_at(l, i) + list_at(l, i2)) / 2;
}

double
stats_boot_median(struct stats_rng *r, const double *x, size_t n)
{
	const struct list l = { x, n, NULL, NULL, 0 };
	size_t i, i2;

	boot_draw(r, n, &i, &i2);
	return boot_value(&l, i, i2);
}

void
stats_interval(double *boot, size_t nboot, struct stats_ratio *out)
{
	double tail = (100 - STATS_LEVEL_PCT) / 200.0;

	stats_sort(boot, nboot);
	out->lo = stats_quantile(boot, nboot, tail);
	out->hi = stats_quantile(boot, nboot, 1 - tail);
	out->verdict = out->lo > 1 ? STATS_FASTER : out->hi < 1 ?
	    STATS_SLOWER : STATS_UNDECIDED;
}

static double
median_sorted(const struct list *l)
{
	return l->n % 2 ? list_at(l, l->n / 2) : (list_at(l, l->n / 2 - 1) +
	    list_at(l, l->n / 2)) / 2;
}

void
stats_draws_init(struct stats_draws *d, size_t na, size_t nb, uint64_t seed)
{
	struct stats_rng rng;
	size_t i, at[4];
	uint32_t *p;

	d->na = na;
	d->nb = nb;
	d->seed = seed;
	d->at = NULL;
	if (na < 2 || nb < 2)
		return;
	stats_rng_seed(&rng, seed);
	d->at = xmalloc(4 * STATS_RESAMPLES * sizeof *d->at);
	for (i = 0, p = d->at; i < STATS_RESAMPLES; i++, p += 4) {
		boot_draw(&rng, na, &at[0], &at[1]);
		boot_draw(&rng, nb, &at[2], &at[3]);
		p[0] = (uint32_t)at[0];
		p[1] = (uint32_t)at[1];
		p[2] = (uint32_t)at[2];
		p[3] = (uint32_t)at[3];
	}
}

void
stats_draws_free(struct stats_draws *d)
{
	free(d->at);
	d->at = NULL;
}

static void
ratio_lists(const struct list *a, const struct list *b,
    const struct stats_draws *d, struct stats_ratio *out)
{
	const uint32_t *p;
	double *boot;
	size_t i;

	out->ratio = a->n > 0 && b->n > 0 ? median_sorted(a) /
	    median_sorted(b) : NAN;
	out->lo = out->hi = out->p = NAN;
	out->verdict = STATS_UNDECIDED;
	if (d->at == NULL)
		return;
	boot = xmalloc(STATS_RESAMPLES * sizeof *boot);
	for (i = 0, p = d->at; i < STATS_RESAMPLES; i++, p += 4)
		boot[i] = boot_value(a, p[0], p[1]) / boot_value(b, p[2], p[3]);
	stats_interval(boot, STATS_RESAMPLES, out);
	free(boot);
}

void
stats_ratio_drawn(const double *a, const double *b,
    const struct stats_draws *d, struct stats_ratio *out)
{
	const struct list la = { a, d->na, NULL, NULL, 0 };
	const struct list lb = { b, d->nb, NULL, NULL, 0 };
	struct stats_welch w = { 0 };

	ratio_lists(&la, &lb, d, out);
	if (d->at == NULL)
		return;
	stats_welch_add(&w, a, d->na, b, d->nb);
	out->p = stats_welch_p(&w);
	if (!(out->p < 1 - STATS_LEVEL_PCT / 100.0) ||
	    (out->verdict == STATS_FASTER) != (w.d > 0))
		out->verdict = STATS_UNDECIDED;
}

void
stats_ratio_drawn_split(const double *x, const uint32_t *at,
    const struct stats_draws *d, struct stats_ratio *out)
{
	const struct list la = { x, d->na, at, NULL, 0 };
	const struct list lb = { x, d->nb, NULL, at, d->na };

	ratio_lists(&la, &lb, d, out);
}

void
stats_ratio(const double *a, size_t na, const double *b, size_t nb,
    uint64_t seed, struct stats_ratio *out)
{
	struct stats_draws d;

	stats_draws_init(&d, na, nb, seed);
	stats_ratio_drawn(a, b, &d, out);
	stats_draws_free(&d);
}

void
stats_paired(const double *r, size_t n, uint64_t seed, struct stats_ratio *out)
{
	const struct list l = { r, n, NULL, NULL, 0 };
	struct stats_rng rng;
	double *boot;
	size_t i;

	out->ratio = n > 0 ? median_sorted(&l) : NAN;
	out->lo = out->hi = out->p = NAN;
	out->verdict = STATS_UNDECIDED;
	if (n < 2)
		return;
	stats_rng_seed(&rng, seed);
	boot = xmalloc(STATS_RESAMPLES * sizeof *boot);
	for (i = 0; i < STATS_RESAMPLES; i++)
		boot[i] = stats_boot_median(&rng, r, n);
	stats_interval(boot, STATS_RESAMPLES, out);
	free(boot);
	if (stats_sign_p(r, n) > 1 - STATS_LEVEL_PCT / 100.0)
		out->verdict = STATS_UNDECIDED;
}

double
stats_sign_p(const double *r, size_t n)
{
	size_t i, above = 0, below = 0, m, k;
	double tail = 0;

	for (i = 0; i < n; i++) {
		above += r[i] > 1;
		below += r[i] < 1;
	}
	m = above + below;
	/* P(X >= k) for X ~ Binomial(m, 1/2), k the larger side. */
	for (k = above > below ? above : below; k <= m && m > 0; k++)
		tail += exp(lgamma((double)m + 1) - lgamma((double)k + 1) -
		    lgamma((double)(m - k) + 1) - (double)m * log(2));
	return m == 0 || 2 * tail > 1 ? 1 : 2 * tail;
}

/*
 * U (pairs with a above b, ties a half), and whether any value is in
 * both: one merge of the two sorted lists.
 */
static double
rank_u(const double *a, size_t na, const double *b, size_t nb, int *ties)
{
	size_t i, lo = 0, hi = 0;
	double u = 0;

	*ties = 0;
	for (i = 0; i < na; i++) {
		while (lo < nb && b[lo] < a[i])
			lo++;
		if (hi < lo)
			hi = lo;
		while (hi < nb && b[hi] <= a[i])
			hi++;
		u += (double)lo + (double)(hi - lo) / 2;
		if (hi > lo)
			*ties = 1;
	}
	return u;
}

/*
 * P(U <= u) and P(U >= u) when all C(na + nb, na) orders are equally
 * likely: c[j][v] counts the orders of i values of a and j of b with
 * U = v, row by row in i (the largest value is a's, adding j, or b's).
 */
static double
rank_exact(size_t na, size_t nb, double u)
{
	size_t i, j, v, top = na * nb, w = top + 1;
	double *prev = xcalloc((nb + 1) * w, sizeof *prev);
	double *cur = xcalloc((nb + 1) * w, sizeof *cur), *t;
	double all = 0, le = 0, ge = 0;

	for (j = 0; j <= nb; j++)
		prev[j * w] = 1;		/* no a: U = 0, one order */
	for (i = 1; i <= na; i++) {
		memset(cur, 0, (nb + 1) * w * sizeof *cur);
		cur[0] = 1;			/* no b: U = 0 */
		for (j = 1; j <= nb; j++)
			for (v = 0; v <= i * j; v++)
				cur[j * w + v] = (v >= j ? prev[j * w + v - j] :
				    0) + cur[(j - 1) * w + v];
		t = prev;
		prev = cur;
		cur = t;
	}
	for (v = 0; v <= top; v++) {
		all += prev[nb * w + v];
		if ((double)v <= u)
			le += prev[nb * w + v];
		if ((double)v >= u)
			ge += prev[nb * w + v];
	}
	free(cur);
	free(prev);
	return fmin(1, 2 * fmin(le, ge) / all);
}

/*
 * sum(t^3 - t) over the runs of equal values of a and b together, in
 * ascending order: one merge of the two sorted lists, nothing sorted.
 */
static double
tie_sum(const double *a, size_t na, const double *b, size_t nb)
{
	size_t i = 0, j = 0, run = 0;
	double t = 0, v, last = 0;

	while (i < na || j < nb) {
		v = j >= nb || (i < na && a[i] <= b[j]) ? a[i++] : b[j++];
		if (run > 0 && v == last) {
			run++;
			continue;
		}
		t += (double)run * (double)run * (double)run - (double)run;
		run = 1;
		last = v;
	}
	return t + ((double)run * (double)run * (double)run - (double)run);
}

double
stats_rank_p(const double *a, size_t na, const double *b, size_t nb)
{
	double u;
	int ties;

	if (na == 0 || nb == 0)
		return NAN;
	u = rank_u(a, na, b, nb, &ties);
	return stats_rank_p_of(u, ties, tie_sum(a, na, b, nb), na, nb);
}

double
stats_rank_p_of(double u, int ties, double t, size_t na, size_t nb)
{
	double mean, var, z;
	size_t n = na + nb;

	if (na == 0 || nb == 0)
		return NAN;
	if (!ties && na * nb <= STATS_EXACT_RANKS)
		return rank_exact(na, nb, u);
	/* Ties shrink the variance by sum(t^3 - t) over runs of equal values. */
	mean = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((double)n + 1 - t /
	    ((double)n * ((double)n - 1)));
	if (var <= 0)
		return 1;
	/* With continuity correction. */
	z = fmax(0, fabs(u - mean) - 0.5) / sqrt(var);
	return fmin(1, erfc(z / sqrt(2)));
}

/* The mean and the sample variance (n - 1) of the logs of x, n >= 2. */
static void
log_moments(const double *x, size_t n, double *mean, double *var)
{
	double m = 0, q = 0, y, dy;
	size_t i;

	/* Welford's update: a cell of a million close logs loses nothing. */
	for (i = 0; i < n; i++) {
		y = log(x[i]);
		dy = y - m;
		m += dy / (double)(i + 1);
		q += dy * (y - m);
	}
	*mean = m;
	*var = q / (double)(n - 1);
}

void
stats_welch_add(struct stats_welch *w, const double *a, size_t na,
    const double *b, size_t nb)
{
	double ma, va, mb, vb, ta, tb;

	w->pairs++;
	if (na < 2 || nb < 2) {
		w->unknown = 1;
		return;
	}
	log_moments(a, na, &ma, &va);
	log_moments(b, nb, &mb, &vb);
	ta = va / (double)na;
	tb = vb / (double)nb;
	w->d += ma - mb;
	w->v += ta + tb;
	w->w += ta * ta / (double)(na - 1) + tb * tb / (double)(nb - 1);
}

double
stats_welch_p(const struct stats_welch *w)
{
	if (w->unknown || w->pairs == 0)
		return NAN;
	if (!(w->v > 0))
		return w->d == 0 ? 1 : 0;
	return stats_t_p(w->d / sqrt(w->v), w->v * w->v / w->w);
}

/*
 * The continued fraction of the incomplete beta function (modified
 * Lentz), which converges fast for x < (a + 1) / (a + b + 2).
 */
static double
beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d, h, num, delta;
	int m;

	d = 1 - (a + b) * x / (a + 1);
	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (m = 1; m <= 1000; m++) {
		/* The even step, then the odd one. */
		num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + num * d;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m +
		    1));
		d = 1 + num * d;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return h;
}

/*
 * I(x; a, b), the regularized incomplete beta function, with y = 1 - x
 * given as well, since 1 - x computed would lose what a small y holds.
 */
static double
inc_beta(double a, double b, double x, double y)
{
	double front;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
	    b * log(y));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, y) / b;
}

double
stats_t_p(double t, double df)
{
	double t2 = t * t;

	if (isinf(t))
		return 0;
	return fmin(1, inc_beta(df / 2, 0.5, df / (df + t2), t2 / (df + t2)));
}

/* NAN (no test) sorts as 1. */
static double
p_or_one(double p)
{
	return isnan(p) ? 1 : p;
}

void
stats_holm(const double *p, size_t m, double *adj)
{
	size_t *order, k, j, t;
	double run = 0;

	if (m == 0)
		return;
	order = xmalloc(m * sizeof *order);
	/* Ascending p by insertion: a family is a few dozen tests at most. */
	for (k = 0; k < m; k++) {
		for (j = k; j > 0 && p_or_one(p[order[j - 1]]) >
		    p_or_one(p[k]); j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	/* The k-th smallest is multiplied by m - k, never below the last. */
	for (k = 0; k < m; k++) {
		t = order[k];
		run = fmax(run, fmin(1, (double)(m - k) * p_or_one(p[t])));
		adj[t] = run;
	}
	free(order);
}

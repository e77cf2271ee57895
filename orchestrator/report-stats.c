/*
 * The report's statistics over a loaded run (no SQL here): each row's
 * description and clock, the best row per host, the ratios between hosts
 * and between a host's variants with their intervals and verdicts, which
 * ratios are refused, and the position bias of the alternating order.
 */
#include "report-model.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_ranked(const void *a, const void *b)
{
	const struct rhost *x = *(const struct rhost *const *)a;
	const struct rhost *y = *(const struct rhost *const *)b;

	if (x->best->median != y->best->median)
		return x->best->median < y->best->median ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The best row per host: the highest median among rows whose digests
 * agree, whatever the compiler, as SUPERCOP picks the best implementation
 * and compiler pair.  Then rank the hosts by it for the ratios.
 */
static void
rank(struct rrun *r)
{
	struct rhost *h;
	const struct rrow *w;
	size_t i, j;
	int64_t first;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		first = -1;
		for (j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if (strcmp(w->host, h->name) != 0)
				continue;
			if (first == -1)
				first = w->build_id;
			else if (w->build_id != first)
				r->several_builds = 1;
			if (w->n == 0 || w->digest != DIGEST_OK)
				continue;
			if (h->best == NULL || w->median > h->best->median)
				h->best = w;
		}
	}
	r->ranked = xcalloc(r->nhosts + 1, sizeof *r->ranked);
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best != NULL)
			r->ranked[r->nranked++] = &r->hosts[i];
	}
	if (r->nranked > 0)
		qsort(r->ranked, r->nranked, sizeof *r->ranked,
		    cmp_ranked);
}

static struct rhost *
host_of(struct rrun *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		if (strcmp(r->hosts[i].name, name) == 0)
			return &r->hosts[i];
	}
	return NULL;
}

/* The median of the positive values of x (n of them), or 0; x reordered. */
static double
positive_median(double *x, size_t n, size_t *used)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (x[i] > 0)
			x[k++] = x[i];
	}
	*used = k;
	return k == 0 ? 0 : stats_median(x, k);
}

/*
 * A row's rates described, and its clock.  The rates stay in w->rates,
 * each beside its position in w->pos, until positions() has pooled them:
 * the sorted rates are returned when they had to be copied to be sorted
 * (the caller puts them in w->rates then), NULL when w->rates itself is
 * now sorted.  The samples arrive in the index's (steps, ns) order, so a
 * row of one steps value has its rates descending: reversed in place with
 * their positions, they are sorted and stats_describe sorts nothing.
 */
static double *
describe_row(struct rrun *r, struct rrow *w)
{
	const struct rhost *h = host_of(r, w->host);
	size_t i, j, n = (size_t)w->n, used;
	double *sorted = NULL, t;
	int64_t p;

	for (i = 1; i < n && w->rates[i] <= w->rates[i - 1]; i++)
		;
	if (i >= n) {
		for (i = 0, j = n - (n > 0); i < j; i++, j--) {
			t = w->rates[i];
			w->rates[i] = w->rates[j];
			w->rates[j] = t;
			p = w->pos[i];
			w->pos[i] = w->pos[j];
			w->pos[j] = p;
		}
		stats_describe(w->rates, n, &w->desc);
	} else {
		sorted = xmalloc(n * sizeof *sorted);
		memcpy(sorted, w->rates, n * sizeof *sorted);
		stats_describe(sorted, n, &w->desc);
	}
	w->median = w->desc.median;
	w->min = w->desc.min;
	w->max = w->desc.max;

	w->clock_mhz = positive_median(w->clocks, n, &used);
	w->clock_source = used > 0 ? CLOCK_SAMPLES : CLOCK_NONE;
	if (used == 0 && w->n > 0 && h != NULL && h->calib_mhz > 0) {
		w->clock_mhz = h->calib_mhz;
		w->clock_source = CLOCK_FACTS;
	}
	/* Counted cycles decide; the clock shown is the one they imply. */
	if (w->counted > 0) {
		w->pcycles = stats_median(w->pcs, (size_t)w->counted);
		w->ipc = stats_median(w->ipcs, (size_t)w->counted);
		if (w->median > 0) {
			w->clock_mhz = w->pcycles * w->median / 1e6;
			w->clock_source = CLOCK_COUNTERS;
		}
		r->any_counted = 1;
	}
	return sorted;
}

/* Each host's clock: the median over all its valid samples' estimates. */
static void
host_clocks(struct rrun *r)
{
	struct rhost *h;
	struct rrow *w;
	double *all;
	size_t i, j, n, used;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		for (n = 0, j = 0; j < r->nrows; j++)
			n += strcmp(r->rows[j].host, h->name) == 0 ?
			    (size_t)r->rows[j].n : 0;
		all = xmalloc((n + 1) * sizeof *all);
		for (n = 0, j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if (strcmp(w->host, h->name) != 0)
				continue;
			if (w->n > 0 && w->clocks != NULL)
				memcpy(all + n, w->clocks,
				    (size_t)w->n * sizeof *all);
			n += (size_t)w->n;
		}
		h->clock_mhz = positive_median(all, n, &used);
		h->clock_n = (int64_t)used;
		h->clock_source = used > 0 ? CLOCK_SAMPLES : CLOCK_NONE;
		for (j = 0; used > 0 && j < r->nrows; j++) {
			if (r->rows[j].counted > 0 &&
			    strcmp(r->rows[j].host, h->name) == 0)
				h->clock_source = CLOCK_COUNTERS;
		}
		if (used == 0 && h->calib_mhz > 0) {
			h->clock_mhz = h->calib_mhz;
			h->clock_source = CLOCK_FACTS;
		}
		free(all);
	}
}

char *
report_incomparable(const struct rrun *ra, const struct rrow *a,
    const struct rrun *rb, const struct rrow *b)
{
	if (strcmp(ra->study, rb->study) != 0)
		return xasprintf("studies differ (%s, %s)", ra->study,
		    rb->study);
	if (a->n == 0 || b->n == 0)
		return xstrdup("no valid samples on one side");
	if (a->mixed || b->mixed)
		return xasprintf("%s on \"%s\" mixes several steps, seeds or "
		    "digests", a->mixed ? a->variant : b->variant,
		    a->mixed ? a->host : b->host);
	if (a->steps != b->steps)
		return xasprintf("steps differ (%" PRId64 ", %" PRId64 ")",
		    a->steps, b->steps);
	if (a->seed == NULL || b->seed == NULL || strcmp(a->seed, b->seed) != 0)
		return xasprintf("seeds differ (%.16s..., %.16s...)",
		    a->seed != NULL ? a->seed : "-",
		    b->seed != NULL ? b->seed : "-");
	if (a->final == NULL || b->final == NULL ||
	    strcmp(a->final, b->final) != 0)
		return xasprintf("final digests differ (%.16s..., %.16s...)",
		    a->final != NULL ? a->final : "-",
		    b->final != NULL ? b->final : "-");
	return NULL;
}

void
report_ratio(const struct rrun *ra, const struct rrow *a,
    const struct rrun *rb, const struct rrow *b, struct rratio *out)
{
	memset(out, 0, sizeof *out);
	out->a = a;
	out->b = b;
	out->refused = report_incomparable(ra, a, rb, b);
	out->s.ratio = out->s.lo = out->s.hi = NAN;
	out->s.verdict = STATS_UNDECIDED;
	if (out->refused == NULL)
		stats_ratio(a->rates, (size_t)a->n, b->rates, (size_t)b->n,
		    STATS_SEED, &out->s);
}

/*
 * The position bias headline sums up one test per position, so its
 * verdicts are the family's: each position's rank test, Holm-corrected
 * over all of them, decides; with 13 positions of 3 samples the
 * intervals alone flagged some position in most runs where nothing
 * differed (tests/unit/test_stats.c, test_holm).
 */
static void
family_verdicts(struct rrun *r)
{
	double *p = xmalloc((r->npositions + 1) * sizeof *p);
	double *adj = xmalloc((r->npositions + 1) * sizeof *adj);
	struct rposition *x;
	size_t i;

	for (i = 0; i < r->npositions; i++)
		p[i] = r->positions[i].p;
	stats_holm(p, r->npositions, adj);
	for (i = 0; i < r->npositions; i++) {
		x = &r->positions[i];
		x->p_holm = adj[i];
		x->s.verdict = STATS_UNDECIDED;
		if (x->p_holm <= 1 - STATS_LEVEL_PCT / 100.0 && x->n >= 2)
			x->s.verdict = x->s.ratio > 1 ? STATS_FASTER :
			    STATS_SLOWER;
		if (x->s.verdict != STATS_UNDECIDED)
			r->position_bias = 1;
	}
	free(adj);
	free(p);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The index of position p in the n sorted positions d (p is there). */
static size_t
position_index(const int64_t *d, size_t n, int64_t p)
{
	size_t lo = 0, hi = n, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (d[mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each position's normalized rates (a row's rates divided by the row's
 * mean, by the mean and not the median: with three samples a cell's
 * median is one of them, and a third of the pool would be exactly 1)
 * against all other positions': with alternating order every variant
 * visits every position, so a position that is decided faster or slower
 * shifts results.  The rates are put in one array by position, in
 * ascending order of positions, each position's part sorted in place and
 * the pool sorted once; the others' are the pool without one position's,
 * in one ordered pass.
 */
static void
positions(struct rrun *r)
{
	int64_t *distinct = NULL;
	size_t *at, *end, nd = 0, np = 0, i, j, k, nin, nout;
	double *by, *all, *out, *in;
	const struct rrow *w;
	struct rposition *p;

	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		for (j = 0; j < (size_t)w->n && w->desc.mean > 0; j++) {
			np++;
			for (k = 0; k < nd && distinct[k] != w->pos[j]; k++)
				;
			if (k == nd) {
				ALLOC_GROW(distinct, nd);
				distinct[nd++] = w->pos[j];
			}
		}
	}
	if (nd > 0)
		qsort(distinct, nd, sizeof *distinct, cmp_i64);
	/* at[k]: where position k's part starts; end[k]: its fill. */
	at = xcalloc(nd + 1, sizeof *at);
	end = xcalloc(nd + 1, sizeof *end);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		for (j = 0; j < (size_t)w->n && w->desc.mean > 0; j++)
			at[position_index(distinct, nd, w->pos[j]) + 1]++;
	}
	for (k = 0; k < nd; k++) {
		at[k + 1] += at[k];
		end[k] = at[k];
	}
	by = xmalloc((np + 1) * sizeof *by);
	all = xmalloc((np + 1) * sizeof *all);
	out = xmalloc((np + 1) * sizeof *out);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		for (j = 0; j < (size_t)w->n && w->desc.mean > 0; j++)
			by[end[position_index(distinct, nd, w->pos[j])]++] =
			    w->rates[j] / w->desc.mean;
	}
	for (k = 0; k < nd; k++)
		stats_sort(by + at[k], end[k] - at[k]);
	if (np > 0)
		memcpy(all, by, np * sizeof *all);
	stats_sort(all, np);
	for (k = 0; nd > 1 && k < nd; k++) {
		in = by + at[k];
		nin = end[k] - at[k];
		for (nout = 0, i = 0, j = 0; i < np; i++) {
			if (j < nin && all[i] == in[j])
				j++;
			else
				out[nout++] = all[i];
		}
		ALLOC_GROW(r->positions, r->npositions);
		p = &r->positions[r->npositions++];
		p->position = distinct[k];
		p->n = nin;
		stats_ratio(in, nin, out, nout, STATS_SEED, &p->s);
		p->p = stats_rank_p(in, nin, out, nout);
	}
	family_verdicts(r);
	free(out);
	free(all);
	free(by);
	free(end);
	free(at);
	free(distinct);
}

void
report_stats(struct rrun *r)
{
	double **sorted = xcalloc(r->nrows + 1, sizeof *sorted);
	size_t i, j;
	struct rrow *w;
	struct rhost *h;

	/*
	 * The hosts' clocks first: describe_row's positive_median compacts a
	 * row's clocks in place, which leaves copies of its positive values
	 * in the tail that a later pass over all n would count again.
	 */
	host_clocks(r);
	for (i = 0; i < r->nrows; i++) {
		sorted[i] = describe_row(r, &r->rows[i]);
		if (r->rows[i].clock_mhz > 0)
			r->any_calib = 1;
	}
	positions(r);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (sorted[i] != NULL) {
			free(w->rates);
			w->rates = sorted[i];
		}
		free(w->pos);
		free(w->clocks);
		w->pos = NULL;
		w->clocks = NULL;
	}
	free(sorted);

	rank(r);
	r->ratios = xcalloc(r->nranked * r->nranked + 1, sizeof *r->ratios);
	for (i = 0; i < r->nranked; i++) {
		for (j = i + 1; j < r->nranked; j++)
			report_ratio(r, r->ranked[i]->best, r,
			    r->ranked[j]->best, &r->ratios[r->nratios++]);
	}
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		h = host_of(r, w->host);
		w->vs_best.ratio = w->vs_best.lo = w->vs_best.hi = NAN;
		w->vs_best.verdict = STATS_UNDECIDED;
		if (h == NULL || h->best == NULL || w->n == 0 ||
		    w->digest != DIGEST_OK)
			continue;
		stats_ratio(w->rates, (size_t)w->n, h->best->rates,
		    (size_t)h->best->n, STATS_SEED, &w->vs_best);
	}
}

double
report_row_cycles(const struct rrow *w)
{
	if (w->n == 0)
		return 0;
	if (w->counted > 0 && w->pcycles > 0)
		return w->pcycles;
	if (!(w->clock_mhz > 0) || !(w->median > 0))
		return 0;
	return w->clock_mhz * 1e6 / w->median;
}

const char *
report_row_cycles_source(const struct rrow *w)
{
	if (report_row_cycles(w) <= 0)
		return NULL;
	if (w->counted > 0 && w->pcycles > 0)
		return w->csrc != NULL ? w->csrc : "pmu";
	return "calib";
}

const char *
report_clock_source(int source)
{
	switch (source) {
	case CLOCK_SAMPLES:	return "samples";
	case CLOCK_FACTS:	return "host facts";
	case CLOCK_COUNTERS:	return "counters";
	}
	return "none";
}

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

/* A rate and its position, sorted together. */
struct rate_pos {
	double	 rate;
	int64_t	 pos;
};

static int
cmp_rate_pos(const void *a, const void *b)
{
	double x = ((const struct rate_pos *)a)->rate;
	double y = ((const struct rate_pos *)b)->rate;

	return x < y ? -1 : x > y;
}

/*
 * Sort a row's rates ascending, each with its position in w->pos, which
 * positions() pools them by.  The samples arrive in the index's (steps,
 * ns) order, so a row of one steps value has its rates descending:
 * reversed in place.  Any other row (several steps values) is sorted by
 * pairs.
 */
static void
sort_row(struct rrow *w)
{
	size_t i, j, n = (size_t)w->n;
	struct rate_pos *x;
	double t;
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
		return;
	}
	x = xmalloc(n * sizeof *x);
	for (i = 0; i < n; i++) {
		x[i].rate = w->rates[i];
		x[i].pos = w->pos[i];
	}
	qsort(x, n, sizeof *x, cmp_rate_pos);
	for (i = 0; i < n; i++) {
		w->rates[i] = x[i].rate;
		w->pos[i] = x[i].pos;
	}
	free(x);
}

/* A row's rates sorted and described, and its clock. */
static void
describe_row(struct rrun *r, struct rrow *w)
{
	const struct rhost *h = host_of(r, w->host);
	size_t n = (size_t)w->n, used;

	sort_row(w);
	stats_describe(w->rates, n, &w->desc);
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
}

/*
 * Each host's clock: the median over all its valid samples' estimates,
 * copied to all (room for every sample of the run).
 */
static void
host_clocks(struct rrun *r, double *all)
{
	struct rhost *h;
	struct rrow *w;
	size_t i, j, n, used;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
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
report_draws_free(struct report_draws *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		stats_draws_free(&c->d[i]);
	c->n = c->next = 0;
}

/* stats_ratio of a and b, by draws of their sizes kept in c. */
static void
ratio_drawn(struct report_draws *c, const double *a, size_t na,
    const double *b, size_t nb, struct stats_ratio *out)
{
	struct stats_draws *d;
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->d[i].na == na && c->d[i].nb == nb)
			break;
	}
	if (i < c->n)
		d = &c->d[i];
	else {
		/* The oldest goes when all are taken. */
		if (c->n < REPORT_DRAWS_KEPT)
			d = &c->d[c->n++];
		else {
			d = &c->d[c->next];
			c->next = (c->next + 1) % REPORT_DRAWS_KEPT;
			stats_draws_free(d);
		}
		stats_draws_init(d, na, nb, STATS_SEED);
	}
	stats_ratio_drawn(a, b, d, out);
}

void
report_ratio(struct report_draws *c, const struct rrun *ra,
    const struct rrow *a, const struct rrun *rb, const struct rrow *b,
    struct rratio *out)
{
	memset(out, 0, sizeof *out);
	out->a = a;
	out->b = b;
	out->refused = report_incomparable(ra, a, rb, b);
	out->s.ratio = out->s.lo = out->s.hi = NAN;
	out->s.verdict = STATS_UNDECIDED;
	if (out->refused == NULL)
		ratio_drawn(c, a->rates, (size_t)a->n, b->rates, (size_t)b->n,
		    &out->s);
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

/* A position and its slot, to be put in order. */
struct slot_pos {
	int64_t	 pos;
	size_t	 slot;
};

/* The position slots of positions(). */
struct slots {
	int64_t		*value;	/* slot -> position, in order of discovery */
	struct slot_pos	*order;	/* ascending positions */
	size_t		 n;
};

static int
cmp_slot_pos(const void *a, const void *b)
{
	int64_t x = ((const struct slot_pos *)a)->pos;
	int64_t y = ((const struct slot_pos *)b)->pos;

	return x < y ? -1 : x > y;
}

/*
 * Each pooled sample's position (the rows with a mean are pooled)
 * replaced by its slot in w->pos, found among the slots so far: a run
 * has a handful of positions.  Returns the number of samples pooled.
 */
static size_t
slot_positions(struct rrun *r, struct slots *s)
{
	struct rrow *w;
	size_t i, j, k, last = 0, np = 0;

	memset(s, 0, sizeof *s);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		for (j = 0; j < (size_t)w->n && w->desc.mean > 0; j++) {
			np++;
			if (last < s->n && s->value[last] == w->pos[j]) {
				w->pos[j] = (int64_t)last;
				continue;
			}
			for (k = 0; k < s->n && s->value[k] != w->pos[j]; k++)
				;
			if (k == s->n) {
				ALLOC_GROW(s->value, s->n);
				s->value[s->n++] = w->pos[j];
			}
			w->pos[j] = (int64_t)k;
			last = k;
		}
	}
	s->order = xmalloc((s->n + 1) * sizeof *s->order);
	for (k = 0; k < s->n; k++)
		s->order[k] = (struct slot_pos){ s->value[k], k };
	qsort(s->order, s->n, sizeof *s->order, cmp_slot_pos);
	return np;
}

/* A pooled row's next sample in the merge: its normalized rate v. */
struct cursor {
	double		 v;
	const struct rrow *w;
	size_t		 j;
};

static void
sift_down(struct cursor *h, size_t n, size_t i)
{
	struct cursor c = h[i];
	size_t k;

	while ((k = 2 * i + 1) < n) {
		if (k + 1 < n && h[k + 1].v < h[k].v)
			k++;
		if (!(h[k].v < c.v))
			break;
		h[i] = h[k];
		i = k;
	}
	h[i] = c;
}

/*
 * The pool: every pooled sample's rate over its row's mean, ascending, and
 * its slot in lab; a merge of the rows, whose rates are sorted.
 */
static void
merge_rows(const struct rrun *r, double *pool, uint32_t *lab)
{
	struct cursor *h = xmalloc((r->nrows + 1) * sizeof *h);
	const struct rrow *w;
	size_t i, n = 0, m = 0;

	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (w->n > 0 && w->desc.mean > 0)
			h[n++] = (struct cursor){ w->rates[0] / w->desc.mean,
			    w, 0 };
	}
	for (i = n / 2; i-- > 0;)
		sift_down(h, n, i);
	while (n > 0) {
		w = h->w;
		pool[m] = h->v;
		lab[m++] = (uint32_t)w->pos[h->j];
		if (++h->j < (size_t)w->n)
			h->v = w->rates[h->j] / w->desc.mean;
		else
			*h = h[--n];
		sift_down(h, n, 0);
	}
	free(h);
}

/*
 * Each position's normalized rates (a row's rates divided by the row's
 * mean, by the mean and not the median: with three samples a cell's
 * median is one of them, and a third of the pool would be exactly 1)
 * against all other positions': with alternating order every variant
 * visits every position, so a position that is decided faster or slower
 * shifts results.  The rows are merged into one sorted pool (room for
 * every sample), each value labelled by its position; one pass over its
 * runs of equal values gives every position's rank sum (U against the
 * others), whether it ties with them, and the ties' correction, which is
 * the pool's for every position.  A position's rates and the others' are
 * then the pool split by label, both in order, for the bootstrap.
 */
static void
positions(struct rrun *r, double *pool, struct report_draws *c)
{
	struct slots s;
	size_t np = slot_positions(r, &s), nin, nout, i, j, e, k, kk;
	double tsum = 0, mid, run;
	double *out = xmalloc((np + 1) * sizeof *out), *in, *rsum;
	uint32_t *lab = xmalloc((np + 1) * sizeof *lab);
	size_t *count = xcalloc(s.n + 1, sizeof *count);
	int *ties = xcalloc(s.n + 1, sizeof *ties), mixed;
	struct rposition *p;

	rsum = xcalloc(s.n + 1, sizeof *rsum);
	merge_rows(r, pool, lab);
	for (i = 0; i < np; i = j) {
		mixed = 0;
		for (j = i + 1; j < np && pool[j] == pool[i]; j++)
			mixed |= lab[j] != lab[i];
		/* Ranks from 1: the run's i + 1 .. j share their middle. */
		mid = (double)(i + 1 + j) / 2;
		for (e = i; e < j; e++) {
			rsum[lab[e]] += mid;
			count[lab[e]]++;
			ties[lab[e]] |= mixed;
		}
		run = (double)(j - i);
		tsum += run * run * run - run;
	}
	for (k = 0, nin = 0; k < s.n; k++)
		nin = count[k] > nin ? count[k] : nin;
	in = xmalloc((nin + 1) * sizeof *in);
	for (kk = 0; s.n > 1 && kk < s.n; kk++) {
		k = s.order[kk].slot;
		for (nin = 0, nout = 0, i = 0; i < np; i++) {
			in[nin] = out[nout] = pool[i];
			nin += lab[i] == k;
			nout += lab[i] != k;
		}
		ALLOC_GROW(r->positions, r->npositions);
		p = &r->positions[r->npositions++];
		p->position = s.order[kk].pos;
		p->n = nin;
		ratio_drawn(c, in, nin, out, nout, &p->s);
		p->p = stats_rank_p_of(rsum[k] - (double)nin *
		    ((double)nin + 1) / 2, ties[k], tsum, nin, nout);
	}
	family_verdicts(r);
	free(in);
	free(rsum);
	free(ties);
	free(count);
	free(lab);
	free(out);
	free(s.order);
	free(s.value);
}

void
report_stats(struct rrun *r)
{
	struct report_draws draws = { 0 };
	size_t i, j, n;
	struct rrow *w;
	struct rhost *h;
	double *scratch;

	/*
	 * One buffer of a double per sample for the hosts' clocks, then for
	 * the positions' pool: memory a process touches first costs more
	 * than the work on it (a million samples).
	 */
	for (n = 0, i = 0; i < r->nrows; i++)
		n += (size_t)r->rows[i].n;
	scratch = xmalloc((n + 1) * sizeof *scratch);
	/*
	 * The hosts' clocks first: describe_row's positive_median compacts a
	 * row's clocks in place, which leaves copies of its positive values
	 * in the tail that a later pass over all n would count again.
	 */
	host_clocks(r, scratch);
	for (i = 0; i < r->nrows; i++) {
		describe_row(r, &r->rows[i]);
		if (r->rows[i].clock_mhz > 0)
			r->any_calib = 1;
	}
	positions(r, scratch, &draws);
	free(scratch);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		free(w->pos);
		free(w->clocks);
		w->pos = NULL;
		w->clocks = NULL;
	}

	rank(r);
	r->ratios = xcalloc(r->nranked * r->nranked + 1, sizeof *r->ratios);
	for (i = 0; i < r->nranked; i++) {
		for (j = i + 1; j < r->nranked; j++)
			report_ratio(&draws, r, r->ranked[i]->best, r,
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
		ratio_drawn(&draws, w->rates, (size_t)w->n, h->best->rates,
		    (size_t)h->best->n, &w->vs_best);
	}
	report_draws_free(&draws);
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

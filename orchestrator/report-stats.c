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

/* A rate and its position's slot, sorted together. */
struct rate_slot {
	double		 rate;
	uint32_t	 slot;
};

static int
cmp_rate_slot(const void *a, const void *b)
{
	double x = ((const struct rate_slot *)a)->rate;
	double y = ((const struct rate_slot *)b)->rate;

	return x < y ? -1 : x > y;
}

/*
 * Sort a row's rates ascending, each with its position's slot in
 * w->slot, which positions() pools them by.  The samples arrive in the
 * index's (steps, ns) order, so a row of one steps value has its rates
 * descending: reversed in place.  Any other row (several steps values) is
 * sorted by pairs.
 */
static void
sort_row(struct rrow *w)
{
	size_t i, j, n = (size_t)w->n;
	struct rate_slot *x;
	double t;
	uint32_t k;

	for (i = 1; i < n && w->rates[i] <= w->rates[i - 1]; i++)
		;
	if (i >= n) {
		for (i = 0, j = n - (n > 0); i < j; i++, j--) {
			t = w->rates[i];
			w->rates[i] = w->rates[j];
			w->rates[j] = t;
			k = w->slot[i];
			w->slot[i] = w->slot[j];
			w->slot[j] = k;
		}
		return;
	}
	x = xmalloc(n * sizeof *x);
	for (i = 0; i < n; i++) {
		x[i].rate = w->rates[i];
		x[i].slot = w->slot[i];
	}
	qsort(x, n, sizeof *x, cmp_rate_slot);
	for (i = 0; i < n; i++) {
		w->rates[i] = x[i].rate;
		w->slot[i] = x[i].slot;
	}
	free(x);
}

/* A row's rates sorted and described, and its clock. */
static void
describe_row(struct rrun *r, struct rrow *w)
{
	const struct rhost *h = host_of(r, w->host);
	size_t n = (size_t)w->n;

	sort_row(w);
	stats_describe(w->rates, n, &w->desc);
	w->median = w->desc.median;
	w->min = w->desc.min;
	w->max = w->desc.max;

	/* The samples' clock, as loaded; else the host's facts'. */
	w->clock_source = w->clock_n > 0 ? CLOCK_SAMPLES : CLOCK_NONE;
	if (w->clock_n == 0 && w->n > 0 && h != NULL && h->calib_mhz > 0) {
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
 * as loaded (rrun.clocks).
 */
static void
host_clocks(struct rrun *r)
{
	struct rhost *h;
	size_t i, j;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		for (j = 0; j < r->nclocks; j++) {
			if (strcmp(r->clocks[j].host, h->name) == 0) {
				h->clock_mhz = r->clocks[j].mhz;
				h->clock_n = r->clocks[j].n;
			}
		}
		h->clock_source = h->clock_n > 0 ? CLOCK_SAMPLES : CLOCK_NONE;
		for (j = 0; h->clock_n > 0 && j < r->nrows; j++) {
			if (r->rows[j].counted > 0 &&
			    strcmp(r->rows[j].host, h->name) == 0)
				h->clock_source = CLOCK_COUNTERS;
		}
		if (h->clock_n == 0 && h->calib_mhz > 0) {
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

/* The draws for na and nb values kept in c, made if new. */
static const struct stats_draws *
draws_for(struct report_draws *c, size_t na, size_t nb)
{
	struct stats_draws *d;
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->d[i].na == na && c->d[i].nb == nb)
			return &c->d[i];
	}
	/* The oldest goes when all are taken. */
	if (c->n < REPORT_DRAWS_KEPT)
		d = &c->d[c->n++];
	else {
		d = &c->d[c->next];
		c->next = (c->next + 1) % REPORT_DRAWS_KEPT;
		stats_draws_free(d);
	}
	stats_draws_init(d, na, nb, STATS_SEED);
	return d;
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
	out->s.ratio = out->s.lo = out->s.hi = out->s.p = NAN;
	out->s.verdict = STATS_UNDECIDED;
	if (out->refused == NULL)
		stats_ratio_drawn(a->rates, b->rates, draws_for(c,
		    (size_t)a->n, (size_t)b->n), &out->s);
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

/* The positions of positions(): the slots of the pooled samples. */
struct slots {
	size_t		*count;	/* slot -> its pooled samples */
	struct slot_pos	*order;	/* the slots with any, by position */
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
 * The samples of each slot among the pooled rows (those with a mean),
 * and the slots that have any in ascending order of position.  Returns
 * the number of samples pooled.
 */
static size_t
count_slots(const struct rrun *r, struct slots *s)
{
	const struct rrow *w;
	size_t i, j, k, np = 0;

	s->count = xcalloc(r->nslots + 1, sizeof *s->count);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		for (j = 0; j < (size_t)w->n && w->desc.mean > 0; j++)
			s->count[w->slot[j]]++;
		np += w->desc.mean > 0 ? (size_t)w->n : 0;
	}
	s->order = xmalloc((r->nslots + 1) * sizeof *s->order);
	for (s->n = 0, k = 0; k < r->nslots; k++) {
		if (s->count[k] > 0)
			s->order[s->n++] = (struct slot_pos){ r->slot_pos[k],
			    k };
	}
	qsort(s->order, s->n, sizeof *s->order, cmp_slot_pos);
	return np;
}

/*
 * The merge of the pooled rows: a tournament whose leaves are the rows
 * (their next normalized rate, INFINITY once a row is done, as a rate is
 * finite), each inner node keeping the loser of its match, so the next
 * winner takes one comparison per level (a heap takes two).
 */
struct tourney {
	size_t		  n;		/* leaves: a power of 2 */
	double		 *v;		/* per leaf: its row's next value */
	size_t		 *loser;	/* per inner node 1 .. n - 1 */
	const struct rrow **w;		/* per leaf: its row, or NULL */
	size_t		 *j;		/* per leaf: the row's next sample */
};

/* The winner of the subtree at node, its losers kept on the way. */
static size_t
tourney_play(struct tourney *t, size_t node)
{
	size_t a, b;

	if (node >= t->n)
		return node - t->n;
	a = tourney_play(t, 2 * node);
	b = tourney_play(t, 2 * node + 1);
	if (t->v[b] < t->v[a]) {
		t->loser[node] = a;
		return b;
	}
	t->loser[node] = b;
	return a;
}

/* The next winner once leaf won has taken its next value. */
static size_t
tourney_replay(struct tourney *t, size_t won)
{
	size_t node, l;

	for (node = (won + t->n) / 2; node > 0; node /= 2) {
		l = t->loser[node];
		if (t->v[l] < t->v[won]) {
			t->loser[node] = won;
			won = l;
		}
	}
	return won;
}

/*
 * The ranks of the pool, taken as its runs of equal values close: per
 * slot the sum of its values' ranks (a run's share their middle) and
 * whether it shares a value with another slot; the ties' correction
 * sum(t^3 - t) over the runs, in ascending order.
 */
struct ranks {
	double		*rsum;
	int		*ties;
	double		 tsum;
	uint32_t	*run;		/* the open run's slots */
	size_t		 nrun, cap, start;	/* start: its first index */
};

static void
run_add(struct ranks *k, uint32_t slot)
{
	if (k->nrun == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 16;
		k->run = xrealloc(k->run, k->cap * sizeof *k->run);
	}
	k->run[k->nrun++] = slot;
}

/* Close the run that ends before pool index end. */
static void
run_close(struct ranks *k, size_t end)
{
	/* Ranks from 1: the run's start + 1 .. end share their middle. */
	double mid = (double)(k->start + 1 + end) / 2, t = (double)k->nrun;
	size_t i;
	int mixed = 0;

	for (i = 1; i < k->nrun; i++)
		mixed |= k->run[i] != k->run[0];
	for (i = 0; i < k->nrun; i++) {
		k->rsum[k->run[i]] += mid;
		k->ties[k->run[i]] |= mixed;
	}
	k->tsum += t * t * t - t;
	k->nrun = 0;
	k->start = end;
}

/*
 * The pool: every pooled sample's rate over its row's mean, ascending; a
 * merge of the rows, whose rates are sorted.  idx gets each slot's pool
 * indices, ascending, from at[slot] on (at is advanced past them), and k
 * the ranks.
 */
static void
merge_rows(const struct rrun *r, double *pool, uint32_t *idx, size_t *at,
    struct ranks *k)
{
	struct tourney t;
	const struct rrow *w;
	size_t i, m, np = 0, won;
	uint32_t slot;

	for (t.n = 1; t.n < r->nrows; t.n *= 2)
		;
	t.v = xmalloc(t.n * sizeof *t.v);
	t.loser = xmalloc(t.n * sizeof *t.loser);
	t.w = xcalloc(t.n, sizeof *t.w);
	t.j = xcalloc(t.n, sizeof *t.j);
	for (i = 0; i < t.n; i++) {
		w = i < r->nrows ? &r->rows[i] : NULL;
		t.v[i] = INFINITY;
		if (w != NULL && w->n > 0 && w->desc.mean > 0) {
			t.w[i] = w;
			t.v[i] = w->rates[0] / w->desc.mean;
			np += (size_t)w->n;
		}
	}
	won = tourney_play(&t, 1);
	for (m = 0; m < np; m++) {
		w = t.w[won];
		slot = w->slot[t.j[won]];
		if (m > 0 && t.v[won] != pool[m - 1])
			run_close(k, m);
		pool[m] = t.v[won];
		idx[at[slot]++] = (uint32_t)m;
		run_add(k, slot);
		t.v[won] = ++t.j[won] < (size_t)w->n ?
		    w->rates[t.j[won]] / w->desc.mean : INFINITY;
		won = tourney_replay(&t, won);
	}
	if (m > 0)
		run_close(k, m);
	free(t.j);
	free(t.w);
	free(t.loser);
	free(t.v);
}

/*
 * Each position's normalized rates (a row's rates divided by the row's
 * mean, by the mean and not the median: with three samples a cell's
 * median is one of them, and a third of the pool would be exactly 1)
 * against all other positions': with alternating order every variant
 * visits every position, so a position that is decided faster or slower
 * shifts results.  The rows are merged into one sorted pool, and as it
 * is made, each position's rank sum (U against the others), whether it
 * ties with them, and the ties' correction, which is the pool's for every
 * position.  A position's rates are read from the pool at their indices,
 * the others' around them.
 */
static void
positions(struct rrun *r, struct report_draws *c)
{
	struct slots s;
	size_t np = count_slots(r, &s), nin, k, kk;
	size_t *at = xcalloc(r->nslots + 1, sizeof *at);
	double *pool = xmalloc((np + 1) * sizeof *pool);
	uint32_t *idx = xmalloc((np + 1) * sizeof *idx);
	struct ranks rk = { 0 };
	struct rposition *p;

	rk.rsum = xcalloc(r->nslots + 1, sizeof *rk.rsum);
	rk.ties = xcalloc(r->nslots + 1, sizeof *rk.ties);
	for (k = 0; k < r->nslots; k++)
		at[k + 1] = at[k] + s.count[k];
	merge_rows(r, pool, idx, at, &rk);
	for (kk = 0; s.n > 1 && kk < s.n; kk++) {
		k = s.order[kk].slot;
		nin = s.count[k];
		ALLOC_GROW(r->positions, r->npositions);
		p = &r->positions[r->npositions++];
		p->position = s.order[kk].pos;
		p->n = nin;
		/* at[k] is now the end of slot k's indices. */
		stats_ratio_drawn_split(pool, idx + at[k] - nin,
		    draws_for(c, nin, np - nin), &p->s);
		p->p = stats_rank_p_of(rk.rsum[k] - (double)nin *
		    ((double)nin + 1) / 2, rk.ties[k], rk.tsum, nin, np - nin);
	}
	family_verdicts(r);
	free(rk.run);
	free(rk.ties);
	free(rk.rsum);
	free(idx);
	free(pool);
	free(at);
	free(s.order);
	free(s.count);
}

void
report_stats(struct rrun *r)
{
	struct report_draws draws = { 0 };
	size_t i, j;
	struct rrow *w;
	struct rhost *h;

	host_clocks(r);
	for (i = 0; i < r->nrows; i++) {
		describe_row(r, &r->rows[i]);
		if (r->rows[i].clock_mhz > 0)
			r->any_calib = 1;
	}
	positions(r, &draws);
	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].slot);
		r->rows[i].slot = NULL;
	}
	free(r->slot_pos);
	free(r->clocks);
	r->slot_pos = NULL;
	r->clocks = NULL;
	r->nslots = r->nclocks = 0;

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
		stats_ratio_drawn(w->rates, h->best->rates, draws_for(&draws,
		    (size_t)w->n, (size_t)h->best->n), &w->vs_best);
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

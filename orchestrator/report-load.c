/*
 * The report's model of one run (report-model.h), built from what the
 * storage side returns (db-report.c, where its queries live): rows per
 * (variant, host, build) with their valid rates, labels for builds,
 * digest agreement and the hosts that only left samples.
 */
#include "db-report.h"
#include "db.h"
#include "report-model.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void *
report_grow(void *array, size_t n, size_t size)
{
	array = xrealloc(array, (n + 1) * size);
	memset((char *)array + n * size, 0, size);
	return array;
}

static char *
pair_label(const char *compiler, const char *targeting)
{
	return targeting != NULL ? xasprintf("%s, %s", compiler ? compiler : "-",
	    targeting) : xstrdup(compiler ? compiler : "-");
}

static int
pair(void *arg, const struct db_pair_row *p)
{
	struct rrun *r = arg;
	struct rpaired *x;

	r->paired = report_grow(r->paired, r->npaired, sizeof *r->paired);
	x = &r->paired[r->npaired++];
	x->host = xstrdup(p->host);
	x->variant = xstrdup(p->variant);
	x->a_id = p->a_id;
	x->b_id = p->b_id;
	x->a_label = pair_label(p->a_compiler, p->a_targeting);
	x->b_label = pair_label(p->b_compiler, p->b_targeting);
	x->baseline = p->b_baseline;
	x->n = p->n;
	stats_paired(p->ratios, p->n, STATS_SEED, &x->s);
	return 0;
}

/* The paired ratios between the builds of each host. */
static int
load_paired(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	/* One build in the run: nothing is paired, and no scan is made. */
	if (r->nbuilds < 2)
		return 0;
	return db_build_pairs(db, r->id, pair, r, err);
}

static void
free_paired(struct rrun *r)
{
	size_t i;

	for (i = 0; i < r->npaired; i++) {
		free(r->paired[i].host);
		free(r->paired[i].variant);
		free(r->paired[i].a_label);
		free(r->paired[i].b_label);
	}
	free(r->paired);
	r->paired = NULL;
	r->npaired = 0;
}

void
report_free_run(struct rrun *r)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		free(r->hosts[i].name);
		free(r->hosts[i].status);
		free(r->hosts[i].error);
		free(r->hosts[i].pin_error);
		free(r->hosts[i].governor);
		free(r->hosts[i].openssl);
		free(r->hosts[i].cpu_model);
		free(r->hosts[i].arch);
		free(r->hosts[i].os);
		free(r->hosts[i].kernel);
		free(r->hosts[i].cpu_choice);
		free(r->hosts[i].counters);
		free(r->hosts[i].counters_error);
	}
	for (i = 0; i < r->nbuilds; i++) {
		free(r->builds[i].host);
		free(r->builds[i].compiler);
		free(r->builds[i].compiler_version);
		free(r->builds[i].cflags);
		free(r->builds[i].native);
		free(r->builds[i].status);
		free(r->builds[i].target);
		free(r->builds[i].source_sha256);
		free(r->builds[i].binary_sha256);
		free(r->builds[i].openssl);
		free(r->builds[i].targeting);
	}
	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].variant);
		free(r->rows[i].host);
		free(r->rows[i].label);
		free(r->rows[i].rates);
		free(r->rows[i].ns);
		free(r->rows[i].pos);
		free(r->rows[i].clocks);
		free(r->rows[i].seed);
		free(r->rows[i].final);
		free(r->rows[i].csrc);
		free(r->rows[i].pcs);
		free(r->rows[i].ipcs);
	}
	for (i = 0; i < r->nratios; i++)
		free(r->ratios[i].refused);
	free_paired(r);
	for (i = 0; i < r->ndigests; i++)
		free(r->digests[i].digest);
	for (i = 0; i < r->ninvalid; i++) {
		free(r->invalid[i].host);
		free(r->invalid[i].variant);
		free(r->invalid[i].label);
		free(r->invalid[i].reason);
	}
	for (i = 0; i < r->nvariants; i++) {
		free(r->variants[i].host);
		free(r->variants[i].variant);
		free(r->variants[i].label);
		free(r->variants[i].status);
		free(r->variants[i].reason);
	}
	for (i = 0; i < r->nevents; i++) {
		free(r->events[i].host);
		free(r->events[i].at);
		free(r->events[i].level);
		free(r->events[i].message);
	}
	free(r->hosts);
	free(r->builds);
	free(r->rows);
	free(r->digests);
	free(r->invalid);
	free(r->variants);
	free(r->events);
	free(r->ranked);
	free(r->ratios);
	free(r->positions);
	free(r->ref_note);
	free(r->study);
	free(r->status);
	free(r->started_at);
	free(r->finished_at);
	free(r->command);
	free(r->seed);
	free(r->openssl_cap);
	memset(r, 0, sizeof *r);
}

static int
cmp_hosts(const void *a, const void *b)
{
	return strcmp(((const struct rhost *)a)->name,
	    ((const struct rhost *)b)->name);
}

/*
 * Hosts of the run: those with a run_hosts row plus any that only left
 * samples (older runs), by name.
 */
static int
load_hosts(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	struct rhost *h;
	size_t i, j;
	int ret;

	ret = db_report_hosts(db, r, err);
	for (i = 0; i < r->nrows; i++) {
		for (j = 0; j < r->nhosts; j++) {
			if (strcmp(r->hosts[j].name, r->rows[i].host) == 0)
				break;
		}
		if (j < r->nhosts)
			continue;
		r->hosts = report_grow(r->hosts, r->nhosts, sizeof *h);
		h = &r->hosts[r->nhosts++];
		h->name = xstrdup(r->rows[i].host);
		h->pinned = -1;
	}
	if (r->nhosts > 0)
		qsort(r->hosts, r->nhosts, sizeof *r->hosts, cmp_hosts);
	return ret;
}

const struct rbuild *
report_find_build(const struct rrun *r, int64_t build_id)
{
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		if (r->builds[i].id == build_id)
			return &r->builds[i];
	}
	return NULL;
}

/*
 * How a build is named in rows: its compiler; when the same host has
 * another build with that compiler, the compiler and its targeting ("cc,
 * native", "cc, default", as run names them), and "compiler#id" only when
 * the targeting does not tell them apart either.  Caller frees.
 */
static char *
build_label(const struct rrun *r, const char *host, int64_t build_id)
{
	const struct rbuild *b = report_find_build(r, build_id);
	const char *t;
	size_t i;
	int twin = 0, same = 0;

	if (b == NULL)
		return xasprintf("build#%" PRId64, build_id);
	t = b->targeting;

	for (i = 0; i < r->nbuilds; i++) {
		if (r->builds[i].id == build_id ||
		    strcmp(r->builds[i].host, host) != 0 ||
		    strcmp(r->builds[i].compiler, b->compiler) != 0)
			continue;
		twin = 1;
		same |= t == NULL || r->builds[i].targeting == NULL ||
		    strcmp(r->builds[i].targeting, t) == 0;
	}
	if (!twin)
		return xstrdup(b->compiler);
	if (!same)
		return xasprintf("%s, %s", b->compiler, t);
	return xasprintf("%s#%" PRId64, b->compiler, build_id);
}

/* The row of (variant, host, build), made if new; samples come in runs. */
static size_t
row_get(struct rrun *r, const char *variant, const char *host,
    int64_t build_id, size_t last)
{
	struct rrow *w;
	size_t i;

	for (i = last; i < r->nrows; i = (i + 1) % r->nrows) {
		w = &r->rows[i];
		if (w->build_id == build_id && strcmp(w->variant, variant) == 0 &&
		    strcmp(w->host, host) == 0)
			return i;
		if ((i + 1) % r->nrows == last)
			break;
	}
	r->rows = report_grow(r->rows, r->nrows, sizeof *w);
	w = &r->rows[r->nrows];
	w->variant = xstrdup(variant);
	w->host = xstrdup(host);
	w->build_id = build_id;
	return r->nrows++;
}

static void
row_add(struct rrow *w, int64_t steps, int64_t ns, int64_t pos, double clock)
{
	if ((size_t)w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->rates = xrealloc(w->rates, w->cap * sizeof *w->rates);
		w->ns = xrealloc(w->ns, w->cap * sizeof *w->ns);
		w->pos = xrealloc(w->pos, w->cap * sizeof *w->pos);
		w->clocks = xrealloc(w->clocks, w->cap * sizeof *w->clocks);
	}
	w->rates[w->n] = (double)steps * 1e9 / (double)ns;
	w->ns[w->n] = ns;
	w->pos[w->n] = pos;
	w->clocks[w->n++] = clock;
}

/* A sample with counted cycles: cycles per step, ipc, their source. */
static void
row_count(struct rrow *w, double pc, double ipc, const char *src)
{
	size_t n = (size_t)w->counted;

	/* Doubling room: 16, 32, 64... */
	if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
		w->pcs = xrealloc(w->pcs, (n ? 2 * n : 16) * sizeof *w->pcs);
		w->ipcs = xrealloc(w->ipcs, (n ? 2 * n : 16) *
		    sizeof *w->ipcs);
	}
	w->pcs[w->counted] = pc;
	w->ipcs[w->counted++] = ipc;
	if (src != NULL && (w->csrc == NULL || strcmp(src, w->csrc) > 0)) {
		free(w->csrc);
		w->csrc = xstrdup(src);
	}
}

static int
cmp_rows(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;
	int c;

	if ((c = strcmp(x->variant, y->variant)) != 0 ||
	    (c = strcmp(x->host, y->host)) != 0)
		return c;
	return x->build_id < y->build_id ? -1 : x->build_id > y->build_id;
}

/* Where the samples of one row arrive; they come in runs of one row. */
struct rows_arg {
	struct rrun	*r;
	size_t		 last;
};

/*
 * A valid sample: its rate, position and clock (the mean of the
 * estimates before and after; the one before alone where there is no
 * after, as from agents older than protocol 3).  A sample whose estimates
 * before and after differ by more than CLOCK_MOVED_PCT counts as moved.
 */
static void
add_valid(const struct db_valid *s, void *arg)
{
	struct rows_arg *a = arg;
	struct rrun *r = a->r;
	struct rrow *w;
	double before = s->calib_mhz, after = s->calib_after_mhz;

	a->last = row_get(r, s->variant, s->host, s->build_id, a->last);
	w = &r->rows[a->last];
	if (before > 0 && after > 0) {
		r->clocked++;
		if (fabs(after - before) * 100 > CLOCK_MOVED_PCT *
		    fmax(before, after))
			w->moved++;
	}
	if (s->cycles > 0)
		row_count(w, (double)s->cycles / (double)s->steps,
		    (double)s->instructions / (double)s->cycles,
		    s->cycles_source);
	/* A counted sample's clock is what its cycles imply. */
	row_add(w, s->steps, s->ns, s->position, s->cycles > 0 ?
	    (double)s->cycles * 1e3 / (double)s->ns :
	    !(before > 0) ? 0 : after > 0 ? (before + after) / 2 : before);
}

static void
add_invalid(const char *variant, const char *host, int64_t build_id,
    int64_t count, void *arg)
{
	struct rows_arg *a = arg;

	a->last = row_get(a->r, variant, host, build_id, a->last);
	a->r->rows[a->last].invalid = count;
}

/*
 * The rows: one per (variant, host, build) that left any sample, with
 * every valid rate, then the invalid counts, sorted, labelled.
 */
static int
load_rows(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	struct rows_arg a = { r, 0 };
	const struct rbuild *b;
	struct rrow *w;
	size_t i;
	int ret;

	if ((ret = db_report_valid(db, r, add_valid, &a, err)) != 0 ||
	    (ret = db_report_invalid_counts(db, r, add_invalid, &a,
	    err)) != 0)
		return ret;
	if (r->nrows > 0)
		qsort(r->rows, r->nrows, sizeof *r->rows, cmp_rows);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		r->moved += w->moved;
		w->label = build_label(r, w->host, w->build_id);
		if ((b = report_find_build(r, w->build_id)) != NULL)
			w->compiler = b->compiler;
	}
	return 0;
}

static void
add_group(const struct db_digest_group *g, void *arg)
{
	struct rrun *r = arg;
	struct rrow *w;

	w = &r->rows[row_get(r, g->variant, g->host, g->build_id, 0)];
	w->digest = g->nfinals == g->nsteps && g->run_finals == 1 ?
	    DIGEST_OK : DIGEST_MISMATCH;
	w->mixed = g->nkeys > 1;
	w->steps = g->steps;
	w->seed = g->seed != NULL ? xstrdup(g->seed) : NULL;
	w->final = g->digest != NULL ? xstrdup(g->digest) : NULL;
}

/*
 * Digest agreement for rows and run.  Usually every valid sample of a run
 * has the run's steps, seed and one final digest: six index probes show
 * it, and then every row with valid samples shares them.  Otherwise the
 * rows are grouped by a full query, which reads the run's samples: a
 * row's digest is ok when its valid samples end in one digest per steps
 * value and so does the whole run, so a variant that computes something
 * else shows even if its samples were wrongly marked valid.
 */
static int
load_digest_fields(sqlite3 *db, struct rrun *r, int *uniform,
    struct so_err *err)
{
	char lo[160], hi[160], seed[160], digest[160];
	struct rdigest *d;
	struct rrow *w;
	int64_t steps, total = 0;
	size_t i;
	int ret;

	*uniform = 0;
	if ((ret = db_report_range(db, r, "steps", 0, NULL, lo, hi, sizeof lo,
	    err)) != 0)
		return ret;
	if (*lo == '\0')
		return 0;		/* no valid sample at all */
	steps = strtoll(lo, NULL, 10);
	if (strcmp(lo, hi) == 0 && (ret = db_report_range(db, r, "seed", steps,
	    NULL, seed, hi, sizeof seed, err)) == 0 && strcmp(seed, hi) == 0 &&
	    (ret = db_report_range(db, r, "digest", steps, seed, digest, hi,
	    sizeof digest, err)) == 0 && strcmp(digest, hi) == 0) {
		*uniform = 1;
		for (i = 0; i < r->nrows; i++) {
			w = &r->rows[i];
			total += w->n;
			if (w->n == 0)
				continue;
			w->digest = DIGEST_OK;
			w->steps = steps;
			w->seed = xstrdup(seed);
			w->final = xstrdup(digest);
		}
		r->digests = report_grow(r->digests, r->ndigests, sizeof *d);
		d = &r->digests[r->ndigests++];
		d->steps = steps;
		d->n = total;
		d->distinct = 1;
		d->digest = xstrdup(digest);
		return 0;
	}
	if (ret != 0)
		return ret;
	return db_report_digest_groups(db, r, add_group, r, err);
}

/* Invalid samples and variants that did not run, named by build label. */
static int
load_warnings(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	size_t i;
	int ret;

	if ((ret = db_report_list(db, r, DB_REPORT_INVALID, err)) != 0 ||
	    (ret = db_report_list(db, r, DB_REPORT_VARIANTS, err)) != 0)
		return ret;
	for (i = 0; i < r->ninvalid; i++)
		r->invalid[i].label = build_label(r, r->invalid[i].host,
		    r->invalid[i].build_id);
	for (i = 0; i < r->nvariants; i++)
		r->variants[i].label = build_label(r, r->variants[i].host,
		    r->variants[i].build_id);
	return 0;
}

int
report_load_run(sqlite3 *db, int64_t id, struct rrun *r, struct so_err *err)
{
	int ret, uniform;

	memset(r, 0, sizeof *r);
	r->id = id;
	r->max_cv = REPORT_MAX_CV;
	if ((ret = db_report_begin(db, err)) != 0)
		return ret;
	if ((ret = db_report_header(db, r, err)) != 0 ||
	    (ret = db_report_list(db, r, DB_REPORT_BUILDS, err)) != 0 ||
	    (ret = load_rows(db, r, err)) != 0 ||
	    (ret = load_hosts(db, r, err)) != 0 ||
	    (ret = load_digest_fields(db, r, &uniform, err)) != 0 ||
	    (!uniform && (ret = db_report_list(db, r, DB_REPORT_DIGESTS,
	    err)) != 0) ||
	    (ret = load_warnings(db, r, err)) != 0 ||
	    (ret = db_report_list(db, r, DB_REPORT_EVENTS, err)) != 0 ||
	    (ret = load_paired(db, r, err)) != 0)
		report_free_run(r);
	db_report_end(db);
	if (ret == 0)
		report_stats(r);
	return ret;
}

/*
 * The report's model of one run (report-model.h), built from what the
 * storage side returns (db-report.c, where its queries live): rows per
 * (variant, host, build) with their valid rates, labels for builds,
 * digest agreement and the hosts that only left samples.
 */
#include "db-report.h"
#include "report-model.h"
#include "study.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *
pair_label(const char *compiler, const char *targeting)
{
	return targeting != NULL ? xasprintf("%s, %s", compiler ? compiler : "-",
	    targeting) : xstrdup(compiler ? compiler : "-");
}

static void
unpaired(struct rrun *r, const struct db_pair_row *p, size_t n, int a_later)
{
	struct runpaired *x;

	if (n == 0)
		return;
	ALLOC_GROW(r->unpaired, r->nunpaired);
	x = &r->unpaired[r->nunpaired++];
	x->host = xstrdup(p->host);
	x->variant = xstrdup(p->variant);
	x->later = a_later ? pair_label(p->a_compiler, p->a_targeting) :
	    pair_label(p->b_compiler, p->b_targeting);
	x->earlier = a_later ? pair_label(p->b_compiler, p->b_targeting) :
	    pair_label(p->a_compiler, p->a_targeting);
	x->n = n;
}

static void
pair(const struct db_pair_row *p, void *arg)
{
	struct rrun *r = arg;
	struct rpaired *x;

	unpaired(r, p, p->a_later, 1);
	unpaired(r, p, p->b_later, 0);
	if (p->n == 0)
		return;
	ALLOC_GROW(r->paired, r->npaired);
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
}

/*
 * The paired ratios between the builds of each host.  A pair is two
 * valid samples of one host and variant from two builds, so it needs two
 * rows with valid samples (sorted by variant, host, build) that differ in
 * the build alone; without them the query, an index probe per sample, is
 * not made.
 */
static int
load_paired(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	const struct rrow *w, *prev = NULL;
	size_t i;

	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (w->n == 0)
			continue;
		if (prev != NULL && strcmp(w->variant, prev->variant) == 0 &&
		    strcmp(w->host, prev->host) == 0)
			return db_report_pairs(db, r->id, pair, r, err);
		prev = w;
	}
	return 0;
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
	for (i = 0; i < r->nunpaired; i++) {
		free(r->unpaired[i].host);
		free(r->unpaired[i].variant);
		free(r->unpaired[i].later);
		free(r->unpaired[i].earlier);
	}
	free(r->unpaired);
	r->unpaired = NULL;
	r->nunpaired = 0;
}

static void
free_build_sections(struct rrun *r)
{
	size_t i;

	for (i = 0; i < r->nrates; i++) {
		free(r->rates[i].host);
		free(r->rates[i].compiler);
		free(r->rates[i].targeting);
		free(r->rates[i].variant);
	}
	for (i = 0; i < r->ntargetings; i++) {
		free(r->targetings[i].host);
		free(r->targetings[i].compiler);
		free(r->targetings[i].variant);
	}
	for (i = 0; i < r->nphases; i++) {
		free(r->phases[i].host);
		free(r->phases[i].targeting);
		free(r->phases[i].variant);
		free(r->phases[i].ns);
	}
	for (i = 0; i < r->nphase_names; i++)
		free(r->phase_names[i]);
	free(r->rates);
	free(r->targetings);
	free(r->phases);
	free(r->phase_names);
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
		free(r->hosts[i].shared_with);
		free(r->hosts[i].cpu_signature);
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
		free(r->rows[i].note);
		free(r->rows[i].rates);
		free(r->rows[i].ns);
		free(r->rows[i].slot);
		free(r->rows[i].seed);
		free(r->rows[i].final);
		free(r->rows[i].csrc);
		free(r->rows[i].pcs);
		free(r->rows[i].ipcs);
	}
	for (i = 0; i < r->nratios; i++)
		free(r->ratios[i].refused);
	free_paired(r);
	free_build_sections(r);
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
	for (i = 0; i < r->nsources; i++) {
		free(r->sources[i].name);
		free(r->sources[i].version);
		free(r->sources[i].file);
		free(r->sources[i].sha256);
	}
	free(r->sources);
	free(r->ranked);
	free(r->ratios);
	free(r->positions);
	free(r->slot_pos);
	free(r->clocks);
	free(r->ref_note);
	free(r->study);
	free(r->status);
	free(r->started_at);
	free(r->finished_at);
	free(r->command);
	free(r->seed);
	free(r->openssl_cap);
	free(r->imported_from);
	memset(r, 0, sizeof *r);
}

static int
cmp_hosts(const void *a, const void *b)
{
	return strcmp(((const struct rhost *)a)->name,
	    ((const struct rhost *)b)->name);
}

/* A copy of s, or NULL. */
static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static void
add_host(const struct db_host *d, void *arg)
{
	struct rrun *r = arg;
	struct rhost *h;

	ALLOC_GROW(r->hosts, r->nhosts);
	h = &r->hosts[r->nhosts++];
	h->name = dup_or_null(d->name);
	h->status = dup_or_null(d->status);
	h->error = dup_or_null(d->error);
	h->has_pin_cpu = d->has_pin_cpu;
	h->pin_cpu = d->pin_cpu;
	h->pinned = d->pinned;
	h->pin_error = dup_or_null(d->pin_error);
	h->governor = dup_or_null(d->governor);
	h->openssl = dup_or_null(d->openssl);
	h->calib_mhz = d->calib_mhz;
	h->cpu_model = dup_or_null(d->cpu_model);
	h->shared_with = dup_or_null(d->shared_with);
	h->drifted = d->drifted;
	h->cpu_signature = dup_or_null(d->cpu_signature);
	h->arch = dup_or_null(d->arch);
	h->os = dup_or_null(d->os);
	h->kernel = dup_or_null(d->kernel);
	h->cores = d->cores;
	h->cpu_choice = dup_or_null(d->cpu_choice);
	h->counters = dup_or_null(d->counters);
	h->counters_error = dup_or_null(d->counters_error);
	h->windows = d->windows;
	h->noisy = d->noisy;
}

/*
 * Hosts of the run: those with a run_hosts row plus any that only left
 * samples (older runs), by name.
 */
static int
load_hosts(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	const struct db_report_run run = { r->id, r->study };
	struct rhost *h;
	size_t i, j;
	int ret;

	ret = db_report_hosts(db, &run, add_host, r, err);
	for (i = 0; i < r->nrows; i++) {
		for (j = 0; j < r->nhosts; j++) {
			if (strcmp(r->hosts[j].name, r->rows[i].host) == 0)
				break;
		}
		if (j < r->nhosts)
			continue;
		ALLOC_GROW(r->hosts, r->nhosts);
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
		if (r->builds[i].id == build_id || r->builds[i].retried_as ||
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

/*
 * The compiler a version line (`cc --version`'s first) names: clang's
 * say "clang"; GCC's say "gcc" or "GCC", or are laid out as GCC prints
 * them under whatever name it was invoked by, "cc (Debian 12.2.0-14)
 * 12.2.0": that name, the package version in parentheses, the version.
 * NULL when it is neither.
 */
static const char *
version_compiler(const char *v)
{
	const char *open = strstr(v, " ("), *close;

	if (strstr(v, "clang") != NULL)
		return "clang";
	if (strstr(v, "gcc") != NULL || strstr(v, "GCC") != NULL)
		return "gcc";
	close = open != NULL ? strstr(open, ") ") : NULL;
	if (open != NULL && open > v && strcspn(v, " ") == (size_t)(open - v) &&
	    close != NULL && isdigit((unsigned char)close[2]))
		return "gcc";
	return NULL;
}

/*
 * The note of a row whose variant names the compiler its rate stands for
 * (docs/studies.md: arm-scalar is clang's, gcc 12 leaves 465 rotates and
 * spills), when build b was made by another, as its version says (named
 * as its version line names it, gcc for a gcc invoked as cc); NULL when
 * it was, or when that is not known.  Caller frees.
 */
static char *
row_note(const struct rrun *r, const struct rrow *w, const struct rbuild *b)
{
	const struct variant_entry *ve = study_variant(r->study, w->variant);
	const char *v = b != NULL ? b->compiler_version : NULL, *by;

	if (ve == NULL || ve->compiler == NULL || v == NULL ||
	    strstr(v, ve->compiler) != NULL)
		return NULL;
	if ((by = version_compiler(v)) != NULL && strcmp(by, ve->compiler) == 0)
		return NULL;
	return xasprintf("built with %s, not %s: the rate is the compiler's "
	    "baseline, not the code's", by != NULL ? by : b->compiler,
	    ve->compiler);
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
	ALLOC_GROW(r->rows, r->nrows);
	w = &r->rows[r->nrows];
	w->variant = xstrdup(variant);
	w->host = xstrdup(host);
	w->build_id = build_id;
	return r->nrows++;
}

/*
 * A row's first room: the run's samples per variant, what a cell of it
 * usually holds, so that a cell of a million samples is not copied by
 * doubling; at most ROW_ROOM_MAX, as the number is the database's word.
 */
#define ROW_ROOM_MIN 16
#define ROW_ROOM_MAX (1 << 20)

static void
row_add(struct rrow *w, int64_t room, unsigned flags, int64_t steps,
    int64_t ns, uint32_t slot)
{
	if ((size_t)w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : room < ROW_ROOM_MIN ?
		    ROW_ROOM_MIN : room > ROW_ROOM_MAX ? ROW_ROOM_MAX :
		    (size_t)room;
		w->rates = xrealloc(w->rates, w->cap * sizeof *w->rates);
		if (flags & REPORT_LOAD_NS)
			w->ns = xrealloc(w->ns, w->cap * sizeof *w->ns);
		w->slot = xrealloc(w->slot, w->cap * sizeof *w->slot);
	}
	w->rates[w->n] = (double)steps * 1e9 / (double)ns;
	if (flags & REPORT_LOAD_NS)
		w->ns[w->n] = ns;
	w->slot[w->n++] = slot;
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
	uint32_t	 slot;		/* the slot looked up last */
	unsigned	 flags;		/* REPORT_LOAD_* */
	/*
	 * The valid samples' clocks (MHz, 0 = none) of the host whose cells
	 * arrive: hosts come one after the other, so a row's clock is the
	 * median of its part when the next cell starts, and a host's of all
	 * when the next host does; a million clocks are not kept.
	 */
	double		*clocks;
	size_t		 nclocks, cap, from;	/* from: the row's first */
	const char	*host;		/* the host's, NULL before a cell */
};

/* The clock of the row whose cell ended, and of its host if it ended. */
static void
clocks_end(struct rows_arg *a, const char *next_host)
{
	struct rrow *w = &a->r->rows[a->last];
	struct rclock *c;
	size_t used;

	if (a->host == NULL)
		return;
	w->clock_mhz = stats_positive_median(a->clocks + a->from,
	    a->nclocks - a->from, &used);
	w->clock_n = (int64_t)used;
	a->from = a->nclocks;
	if (next_host != NULL && strcmp(next_host, a->host) == 0)
		return;
	ALLOC_GROW(a->r->clocks, a->r->nclocks);
	c = &a->r->clocks[a->r->nclocks++];
	c->host = a->host;
	c->mhz = stats_positive_median(a->clocks, a->nclocks, &used);
	c->n = (int64_t)used;
	a->nclocks = a->from = 0;
}

static void
clock_add(struct rows_arg *a, double mhz)
{
	if (a->nclocks == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->clocks = xrealloc(a->clocks, a->cap * sizeof *a->clocks);
	}
	a->clocks[a->nclocks++] = mhz;
}

/*
 * The slot of position p (rrun.slot_pos): a sample's position is kept as
 * a slot of 4 bytes, found among the run's few positions, not as its 8.
 */
static uint32_t
slot_of(struct rows_arg *a, int64_t p)
{
	struct rrun *r = a->r;
	size_t k;

	if (a->slot < r->nslots && r->slot_pos[a->slot] == p)
		return a->slot;
	for (k = 0; k < r->nslots && r->slot_pos[k] != p; k++)
		;
	if (k == r->nslots) {
		ALLOC_GROW(r->slot_pos, r->nslots);
		r->slot_pos[r->nslots++] = p;
	}
	a->slot = (uint32_t)k;
	return a->slot;
}

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
	struct rrow *w = &r->rows[a->last];
	double before = s->calib_mhz, after = s->calib_after_mhz;

	if (before > 0 && after > 0) {
		r->clocked++;
		if (fabs(after - before) * 100 > CLOCK_MOVED_PCT *
		    fmax(before, after))
			w->moved++;
	}
	/* A counted sample's clock is what its cycles imply. */
	row_add(w, r->samples, a->flags, s->steps, s->ns,
	    slot_of(a, s->position));
	clock_add(a, s->cycles > 0 ? (double)s->cycles * 1e3 / (double)s->ns :
	    !(before > 0) ? 0 : after > 0 ? (before + after) / 2 : before);
}

/* A counted sample of the cell whose samples came last. */
static void
add_counted(const struct db_counted *c, void *arg)
{
	struct rows_arg *a = arg;

	row_count(&a->r->rows[a->last], (double)c->cycles / (double)c->steps,
	    (double)c->instructions / (double)c->cycles, c->cycles_source);
}

/*
 * The row of the cell whose valid samples come next; its next part (steps
 * value) goes on its row.
 */
static void
add_cell(const char *variant, const char *host, int64_t build_id, void *arg)
{
	struct rows_arg *a = arg;
	size_t i = row_get(a->r, variant, host, build_id, a->last);

	if (a->host != NULL && i == a->last)
		return;
	clocks_end(a, host);
	a->last = i;
	a->host = a->r->rows[a->last].host;
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
 * every valid rate (and ns, flags saying REPORT_LOAD_NS), then the
 * invalid counts, sorted, labelled.
 */
static int
load_rows(sqlite3 *db, struct rrun *r, unsigned flags, struct so_err *err)
{
	static const struct db_valid_fns fns = { add_cell, add_valid,
	    add_counted };
	const struct db_report_run run = { r->id, r->study };
	struct rows_arg a = { .r = r, .flags = flags };
	const struct rbuild *b;
	struct rrow *w;
	size_t i;
	int ret;

	ret = db_report_valid(db, &run, &fns, &a, err);
	clocks_end(&a, NULL);
	free(a.clocks);
	if (ret != 0 ||
	    (ret = db_report_invalid_counts(db, &run, add_invalid, &a,
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
		w->note = row_note(r, w, b);
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
	const struct db_report_run run = { r->id, r->study };
	char lo[160], hi[160], seed[160], digest[160];
	struct rdigest *d;
	struct rrow *w;
	int64_t steps, total = 0;
	size_t i;
	int ret;

	*uniform = 0;
	if ((ret = db_report_range(db, &run, "steps", 0, NULL, lo, hi, sizeof lo,
	    err)) != 0)
		return ret;
	if (*lo == '\0')
		return 0;		/* no valid sample at all */
	steps = strtoll(lo, NULL, 10);
	if (strcmp(lo, hi) == 0 && (ret = db_report_range(db, &run, "seed", steps,
	    NULL, seed, hi, sizeof seed, err)) == 0 && strcmp(seed, hi) == 0 &&
	    (ret = db_report_range(db, &run, "digest", steps, seed, digest, hi,
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
		ALLOC_GROW(r->digests, r->ndigests);
		d = &r->digests[r->ndigests++];
		d->steps = steps;
		d->n = total;
		d->distinct = 1;
		d->digest = xstrdup(digest);
		return 0;
	}
	if (ret != 0)
		return ret;
	return db_report_digest_groups(db, &run, add_group, r, err);
}

static void
add_source(struct rrun *r, int64_t build_id, const char *name,
    const char *version, const char *file, char *sha256)
{
	struct rsource *s;

	ALLOC_GROW(r->sources, r->nsources);
	s = &r->sources[r->nsources++];
	s->build_id = build_id;
	s->name = xstrdup(name);
	s->version = xstrdup(version);
	s->file = xstrdup(file);
	s->sha256 = sha256;
}

/*
 * The upstream sources build build_id names in its extra (NAME.version
 * first, then NAME.tarball_sha256 and each NAME.file.PATH of that NAME).
 */
static void
add_sources(struct rrun *r, int64_t build_id, const char *extra)
{
	const char *p, *dot, *eq, *q;
	char *name, *version, *key, *h;
	size_t n;

	for (p = extra; p != NULL && *p; p = strchr(p, '\n'), p += p != NULL) {
		n = strcspn(p, "\n");
		dot = memchr(p, '.', n);
		if (dot == NULL || strncmp(dot, ".version=", 9) != 0)
			continue;
		name = xasprintf("%.*s", (int)(dot - p), p);
		version = xasprintf("%.*s", (int)(n - (dot + 9 - p)), dot + 9);
		key = xasprintf("%s.tarball_sha256", name);
		if ((h = line_value(extra, key)) != NULL)
			add_source(r, build_id, name, version,
			    "release tarball", h);
		free(key);
		key = xasprintf("%s.file.", name);
		for (q = extra; q != NULL && *q;
		    q = strchr(q, '\n'), q += q != NULL) {
			size_t m = strcspn(q, "\n"), k = strlen(key);
			char *file;

			eq = memchr(q, '=', m);
			if (eq == NULL || strncmp(q, key, k) != 0)
				continue;
			file = xasprintf("%.*s", (int)(eq - q - k), q + k);
			add_source(r, build_id, name, version, file,
			    xasprintf("%.*s", (int)(m - (eq + 1 - q)), eq + 1));
			free(file);
		}
		free(key);
		free(version);
		free(name);
	}
}

static int
same_text(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/*
 * The earlier failed builds that b builds again (a resume rebuilds a
 * failed build as a new one), the latest attempt standing for them.
 */
static void
mark_retried(struct rrun *r, const struct rbuild *b)
{
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		struct rbuild *x = &r->builds[i];

		if (x->id < b->id && x->retried_as == 0 &&
		    strcmp(x->status, "ok") != 0 &&
		    same_text(x->host, b->host) &&
		    same_text(x->compiler, b->compiler) &&
		    same_text(x->cflags, b->cflags) &&
		    same_text(x->targeting, b->targeting))
			x->retried_as = b->id;
	}
}

/* A row of one of the run's lists (db_report_list) into its array. */
static void
add_build(const union db_report_row *row, void *arg)
{
	const struct db_build *d = &row->build;
	struct rrun *r = arg;
	struct rbuild *b;

	ALLOC_GROW(r->builds, r->nbuilds);
	b = &r->builds[r->nbuilds++];
	b->id = d->id;
	b->host = dup_or_null(d->host);
	b->compiler = dup_or_null(d->compiler);
	b->compiler_version = dup_or_null(d->compiler_version);
	b->cflags = dup_or_null(d->cflags);
	b->native = dup_or_null(d->native);
	b->status = dup_or_null(d->status);
	b->target = dup_or_null(d->target);
	b->source_sha256 = dup_or_null(d->source_sha256);
	b->binary_sha256 = dup_or_null(d->binary_sha256);
	b->openssl = dup_or_null(d->openssl);
	b->targeting = dup_or_null(d->targeting);
	b->retried_as = 0;
	add_sources(r, d->id, d->extra);
	mark_retried(r, b);
}

static void
add_event(const union db_report_row *row, void *arg)
{
	const struct db_event *d = &row->event;
	struct rrun *r = arg;
	struct revent *e;

	ALLOC_GROW(r->events, r->nevents);
	e = &r->events[r->nevents++];
	e->host = dup_or_null(d->host);
	e->at = dup_or_null(d->at);
	e->level = dup_or_null(d->level);
	e->message = dup_or_null(d->message);
}

/* Invalid samples and variants are named by their build's label. */
static void
add_invalid_sample(const union db_report_row *row, void *arg)
{
	const struct db_invalid *d = &row->invalid;
	struct rrun *r = arg;
	struct rinvalid *v;

	ALLOC_GROW(r->invalid, r->ninvalid);
	v = &r->invalid[r->ninvalid++];
	v->host = dup_or_null(d->host);
	v->variant = dup_or_null(d->variant);
	v->build_id = d->build_id;
	v->index = d->index;
	v->reason = dup_or_null(d->reason);
	v->label = build_label(r, v->host, v->build_id);
}

static void
add_variant(const union db_report_row *row, void *arg)
{
	const struct db_variant *d = &row->variant;
	struct rrun *r = arg;
	const struct rbuild *b = report_find_build(r, d->build_id);
	struct rvariant *v;

	/* The build's later attempt has the variants' outcome. */
	if (b != NULL && b->retried_as != 0)
		return;
	ALLOC_GROW(r->variants, r->nvariants);
	v = &r->variants[r->nvariants++];
	v->host = dup_or_null(d->host);
	v->variant = dup_or_null(d->variant);
	v->build_id = d->build_id;
	v->status = dup_or_null(d->status);
	v->reason = dup_or_null(d->reason);
	v->label = build_label(r, v->host, v->build_id);
}

static void
add_digest(const union db_report_row *row, void *arg)
{
	const struct db_digest *d = &row->digest;
	struct rrun *r = arg;
	struct rdigest *g;

	ALLOC_GROW(r->digests, r->ndigests);
	g = &r->digests[r->ndigests++];
	g->steps = d->steps;
	g->n = d->n;
	g->distinct = d->distinct;
	g->digest = dup_or_null(d->digest);
}

/* What each list adds to the run. */
static void (*const list_add[])(const union db_report_row *, void *) = {
	[DB_REPORT_BUILDS] = add_build,
	[DB_REPORT_EVENTS] = add_event,
	[DB_REPORT_INVALID] = add_invalid_sample,
	[DB_REPORT_VARIANTS] = add_variant,
	[DB_REPORT_DIGESTS] = add_digest,
};

static int
load_list(sqlite3 *db, struct rrun *r, enum db_report_list which,
    struct so_err *err)
{
	const struct db_report_run run = { r->id, r->study };

	return db_report_list(db, &run, which, list_add[which], r, err);
}

static void
set_header(const struct db_header *h, void *arg)
{
	struct rrun *r = arg;

	r->study = dup_or_null(h->study);
	r->status = dup_or_null(h->status);
	r->started_at = dup_or_null(h->started_at);
	r->finished_at = dup_or_null(h->finished_at);
	r->command = dup_or_null(h->command);
	r->seed = dup_or_null(h->seed);
	r->steps = h->steps;
	r->samples = h->samples;
	r->msg_len = h->msg_len;
	r->exploratory = h->exploratory;
	r->gone_pid = h->gone_pid;
	r->openssl_cap = dup_or_null(h->openssl_cap);
	r->imported_from = dup_or_null(h->imported_from);
	r->origin_run = h->origin_run;
	r->imported_signed = h->imported_signed;
}

static void
add_rate(const struct db_build_rate *d, void *arg)
{
	struct rrun *r = arg;
	struct rrate *x;

	ALLOC_GROW(r->rates, r->nrates);
	x = &r->rates[r->nrates++];
	x->host = dup_or_null(d->host);
	x->compiler = dup_or_null(d->compiler);
	x->targeting = dup_or_null(d->targeting);
	x->variant = dup_or_null(d->variant);
	x->build_id = d->build_id;
	x->n = d->n;
	x->median = d->median;
	x->min = d->min;
	x->max = d->max;
}

static void
add_targeting(const struct db_targeting *d, void *arg)
{
	struct rrun *r = arg;
	struct rtargeting *x;

	ALLOC_GROW(r->targetings, r->ntargetings);
	x = &r->targetings[r->ntargetings++];
	x->host = dup_or_null(d->host);
	x->compiler = dup_or_null(d->compiler);
	x->variant = dup_or_null(d->variant);
	x->ratio = d->ratio;
	x->native_min = d->native_min;
	x->native_max = d->native_max;
	x->default_min = d->default_min;
	x->default_max = d->default_max;
	x->native = d->native_min > d->default_max ? 1 :
	    d->native_max < d->default_min ? -1 : 0;
}

/* The phase sums as they arrive, one per (host, variant, build, name). */
struct phase_sums {
	struct praw {
		char	*host, *targeting, *variant, *name;
		int64_t	 build_id, n, first;
		double	 value, ns;
	}	*v;
	size_t	 n;
};

static void
add_phase_sum(const struct db_phase_sum *d, void *arg)
{
	struct phase_sums *a = arg;
	struct praw *x;

	ALLOC_GROW(a->v, a->n);
	x = &a->v[a->n++];
	x->host = dup_or_null(d->host);
	x->targeting = dup_or_null(d->targeting);
	x->variant = dup_or_null(d->variant);
	x->name = xstrdup(d->name);
	x->build_id = d->build_id;
	x->n = d->n;
	x->first = d->first;
	x->value = d->value;
	x->ns = d->ns;
}

#define PHASE_REST "phase_other"

static int
same_group(const struct praw *a, const struct praw *b)
{
	return a->build_id == b->build_id && strcmp(a->host, b->host) == 0 &&
	    strcmp(a->variant, b->variant) == 0;
}

/*
 * The phase names, in the order of their first row ("phase_other", the
 * rest the agent adds, last), from the groups that measured phases.
 */
static void
phase_names(struct rrun *r, const struct phase_sums *a, const int *kept)
{
	int64_t *first = NULL, f;
	char *name;
	size_t i, j, k;

	for (i = 0; i < a->n; i++) {
		if (!kept[i])
			continue;
		for (j = 0; j < r->nphase_names; j++) {
			if (strcmp(r->phase_names[j], a->v[i].name) == 0)
				break;
		}
		f = strcmp(a->v[i].name, PHASE_REST) == 0 ? INT64_MAX :
		    a->v[i].first;
		if (j < r->nphase_names) {
			if (f < first[j])
				first[j] = f;
			continue;
		}
		ALLOC_GROW(r->phase_names, r->nphase_names);
		ALLOC_GROW(first, r->nphase_names);
		first[r->nphase_names] = f;
		r->phase_names[r->nphase_names++] = xstrdup(a->v[i].name);
	}
	/* Insertion sort by first row: a handful of names. */
	for (i = 1; i < r->nphase_names; i++) {
		for (k = i; k > 0 && first[k - 1] > first[k]; k--) {
			f = first[k];
			first[k] = first[k - 1];
			first[k - 1] = f;
			name = r->phase_names[k];
			r->phase_names[k] = r->phase_names[k - 1];
			r->phase_names[k - 1] = name;
		}
	}
	free(first);
}

/*
 * The phases of each (host, build, variant) whose valid samples measured
 * them (have "phase_other"): the discovered names, then a row each.
 */
static void
group_phases(struct rrun *r, const struct phase_sums *a)
{
	int *kept = xcalloc(a->n + 1, sizeof *kept);
	struct rphases *p = NULL;
	size_t i, j, k;

	for (i = 0; i < a->n; i = j) {
		int rest = 0;

		for (j = i; j < a->n && same_group(&a->v[i], &a->v[j]); j++)
			rest |= strcmp(a->v[j].name, PHASE_REST) == 0;
		for (k = i; k < j; k++)
			kept[k] = rest;
	}
	phase_names(r, a, kept);
	for (i = 0; i < a->n; i++) {
		if (!kept[i])
			continue;
		if (p == NULL || !same_group(&a->v[i], &a->v[i - 1])) {
			ALLOC_GROW(r->phases, r->nphases);
			p = &r->phases[r->nphases++];
			p->host = xstrdup(a->v[i].host);
			p->targeting = dup_or_null(a->v[i].targeting);
			p->variant = xstrdup(a->v[i].variant);
			p->build_id = a->v[i].build_id;
			p->ns = xcalloc(r->nphase_names + 1, sizeof *p->ns);
		}
		for (k = 0; k < r->nphase_names; k++) {
			if (strcmp(r->phase_names[k], a->v[i].name) == 0)
				p->ns[k] = a->v[i].value;
		}
		if (strcmp(a->v[i].name, PHASE_REST) == 0) {
			p->n = a->v[i].n;
			p->total = a->v[i].ns;
		}
	}
	/* Named without the prefix every phase metric has. */
	for (k = 0; k < r->nphase_names; k++) {
		memmove(r->phase_names[k], r->phase_names[k] + 6,
		    strlen(r->phase_names[k] + 6) + 1);
		if (strcmp(r->phase_names[k], "jit_write_protect") == 0)
			r->phase_note = "jit_write_protect (macOS: "
			    "pthread_jit_write_protect_np, a thread's switch) "
			    "and mprotect (Linux: two mprotect calls a "
			    "program) are RandomX's W^X step made by "
			    "different OS calls: their shares do not compare "
			    "across OSes";
	}
	free(kept);
}

/*
 * Rates per build and native/default ratios for a run that has a build
 * stating its targeting (or not a pass over its samples); the phases of
 * any run (its metrics alone).
 */
static int
load_build_sections(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	struct phase_sums a = { NULL, 0 };
	size_t i;
	int ret, targeted = 0;

	for (i = 0; i < r->nbuilds; i++)
		targeted |= r->builds[i].targeting != NULL;
	if (targeted && ((ret = db_report_build_rates(db, r->id, add_rate, r,
	    err)) != 0 || (ret = db_report_targeting(db, r->id,
	    add_targeting, r, err)) != 0))
		return ret;
	if ((ret = db_report_phases(db, r->id, add_phase_sum, &a, err)) == 0)
		group_phases(r, &a);
	for (i = 0; i < a.n; i++) {
		free(a.v[i].host);
		free(a.v[i].targeting);
		free(a.v[i].variant);
		free(a.v[i].name);
	}
	free(a.v);
	return ret;
}

static void
strip(char *s)
{
	if (s != NULL)
		strip_ctrl(s);
}

/* Free text (a message, an error): its line breaks and tabs as spaces. */
static void
flatten(char *s)
{
	char *p;

	for (p = s; p != NULL && *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	strip(s);
}

/*
 * Every control character of the run's text, a newline included, as '?'
 * (strip_ctrl, as every error seqorch prints; free text's line breaks and
 * tabs as spaces, as the text report showed them), once it is loaded and
 * before anything is derived from it: --db may name a database someone
 * else wrote (sqlite3, no import whose checks refuse such text), and each
 * rendering ends on a terminal or in a file that is shown on one.
 */
static void
printable(struct rrun *r)
{
	size_t i;

	strip(r->study);
	strip(r->status);
	strip(r->started_at);
	strip(r->finished_at);
	strip(r->command);
	strip(r->seed);
	strip(r->openssl_cap);
	strip(r->imported_from);
	for (i = 0; i < r->nhosts; i++) {
		strip(r->hosts[i].name);
		strip(r->hosts[i].status);
		flatten(r->hosts[i].error);
		flatten(r->hosts[i].pin_error);
		strip(r->hosts[i].governor);
		strip(r->hosts[i].openssl);
		strip(r->hosts[i].cpu_model);
		strip(r->hosts[i].cpu_signature);
		strip(r->hosts[i].arch);
		strip(r->hosts[i].os);
		strip(r->hosts[i].kernel);
		strip(r->hosts[i].cpu_choice);
		strip(r->hosts[i].counters);
		flatten(r->hosts[i].counters_error);
	}
	for (i = 0; i < r->nbuilds; i++) {
		strip(r->builds[i].host);
		strip(r->builds[i].compiler);
		strip(r->builds[i].compiler_version);
		strip(r->builds[i].target);
		strip(r->builds[i].cflags);
		strip(r->builds[i].native);
		strip(r->builds[i].status);
		strip(r->builds[i].source_sha256);
		strip(r->builds[i].binary_sha256);
		strip(r->builds[i].openssl);
		strip(r->builds[i].targeting);
	}
	for (i = 0; i < r->nrows; i++) {
		strip(r->rows[i].variant);
		strip(r->rows[i].host);
		strip(r->rows[i].label);
		strip(r->rows[i].note);
		strip(r->rows[i].csrc);
		strip(r->rows[i].seed);
		strip(r->rows[i].final);
	}
	for (i = 0; i < r->npaired; i++) {
		strip(r->paired[i].host);
		strip(r->paired[i].variant);
		strip(r->paired[i].a_label);
		strip(r->paired[i].b_label);
	}
	for (i = 0; i < r->nunpaired; i++) {
		strip(r->unpaired[i].host);
		strip(r->unpaired[i].variant);
		strip(r->unpaired[i].later);
		strip(r->unpaired[i].earlier);
	}
	for (i = 0; i < r->nrates; i++) {
		strip(r->rates[i].host);
		strip(r->rates[i].compiler);
		strip(r->rates[i].targeting);
		strip(r->rates[i].variant);
	}
	for (i = 0; i < r->ntargetings; i++) {
		strip(r->targetings[i].host);
		strip(r->targetings[i].compiler);
		strip(r->targetings[i].variant);
	}
	for (i = 0; i < r->nphases; i++) {
		strip(r->phases[i].host);
		strip(r->phases[i].targeting);
		strip(r->phases[i].variant);
	}
	for (i = 0; i < r->nphase_names; i++)
		strip(r->phase_names[i]);
	for (i = 0; i < r->ndigests; i++)
		strip(r->digests[i].digest);
	for (i = 0; i < r->ninvalid; i++) {
		strip(r->invalid[i].host);
		strip(r->invalid[i].variant);
		strip(r->invalid[i].label);
		flatten(r->invalid[i].reason);
	}
	for (i = 0; i < r->nvariants; i++) {
		strip(r->variants[i].host);
		strip(r->variants[i].variant);
		strip(r->variants[i].label);
		strip(r->variants[i].status);
		flatten(r->variants[i].reason);
	}
	for (i = 0; i < r->nsources; i++) {
		strip(r->sources[i].name);
		strip(r->sources[i].version);
		strip(r->sources[i].file);
		strip(r->sources[i].sha256);
	}
	for (i = 0; i < r->nevents; i++) {
		strip(r->events[i].host);
		strip(r->events[i].at);
		strip(r->events[i].level);
		flatten(r->events[i].message);
	}
}

int
report_load_run(sqlite3 *db, int64_t id, unsigned flags, struct rrun *r,
    struct so_err *err)
{
	int ret, uniform;

	memset(r, 0, sizeof *r);
	r->id = id;
	r->max_cv = REPORT_MAX_CV;
	if ((ret = db_report_begin(db, err)) != 0)
		return ret;
	if ((ret = db_report_header(db, id, set_header, r, err)) != 0 ||
	    (ret = load_list(db, r, DB_REPORT_BUILDS, err)) != 0 ||
	    (ret = load_rows(db, r, flags, err)) != 0 ||
	    (ret = load_hosts(db, r, err)) != 0 ||
	    (ret = load_digest_fields(db, r, &uniform, err)) != 0 ||
	    (!uniform && (ret = load_list(db, r, DB_REPORT_DIGESTS,
	    err)) != 0) ||
	    (ret = load_list(db, r, DB_REPORT_INVALID, err)) != 0 ||
	    (ret = load_list(db, r, DB_REPORT_VARIANTS, err)) != 0 ||
	    (ret = load_list(db, r, DB_REPORT_EVENTS, err)) != 0 ||
	    (ret = load_paired(db, r, err)) != 0 ||
	    (ret = load_build_sections(db, r, err)) != 0)
		report_free_run(r);
	db_report_end(db);
	if (ret == 0) {
		printable(r);
		report_stats(r);
	}
	return ret;
}
